/*
 * Spark SQL 3.5 with Paimon's Spark connector (org.apache.paimon:paimon-spark-3.5, the version
 * tests/spark/pom.xml names) as an oracle: one long-lived JVM running one local SparkSession that takes
 * commands as JSON lines on stdin and answers each with one JSON line on stdout, so a test group pays Spark's
 * start once. Nothing here is Strata code: it is Spark SQL as a user types it.
 *
 * Requests: {"op": "ping"}; {"op": "catalog", "name": c, "warehouse": dir} registers a Paimon catalog named c
 * over a local warehouse; {"op": "sql", "sql": s} runs one statement and collects its result. Answers are
 * {"ok": true, "columns": [...], "rows": [[...], ...]} or {"ok": false, "error": "<exception>: <message>"}; an
 * error leaves the driver running. Values: numbers and booleans as JSON, DECIMAL as text, DATE and TIMESTAMP in
 * ISO-8601 (timestamps without a zone, in the session's zone UTC), BINARY as hex.
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public final class SparkDriver {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SparkSession spark;

    private SparkDriver(SparkSession spark) {
        this.spark = spark;
    }

    public static void main(String[] args) throws Exception {
        // Spark and its libraries must not write to the protocol's stream: everything else goes to stderr.
        PrintStream protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        SparkSession spark = SparkSession.builder()
                .master("local[1]")
                .appName("strata-spark-oracle")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.extensions", "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        SparkDriver driver = new SparkDriver(spark);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            try {
                answer = driver.handle(JSON.readTree(line));
                answer.put("ok", true);
            } catch (Throwable t) {
                answer = JSON.createObjectNode();
                answer.put("ok", false);
                Throwable root = t;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                answer.put("error", t + (root == t ? "" : " (caused by " + root + ")"));
                t.printStackTrace(System.err);
            }
            protocol.println(JSON.writeValueAsString(answer));
        }
        spark.stop();
    }

    private ObjectNode handle(JsonNode req) {
        String op = req.path("op").asText();
        switch (op) {
            case "ping":
                return JSON.createObjectNode();
            case "catalog": {
                String name = req.path("name").asText();
                String prefix = "spark.sql.catalog." + name;
                spark.conf().set(prefix, "org.apache.paimon.spark.SparkCatalog");
                spark.conf().set(prefix + ".warehouse", "file:" + req.path("warehouse").asText());
                return JSON.createObjectNode();
            }
            case "sql":
                return sql(req.path("sql").asText());
            default:
                throw new IllegalArgumentException("unknown op '" + op + "'");
        }
    }

    private ObjectNode sql(String statement) {
        Dataset<Row> result = spark.sql(statement);
        List<Row> rows = result.collectAsList();
        ObjectNode answer = JSON.createObjectNode();
        ArrayNode columns = answer.putArray("columns");
        for (String c : result.columns()) {
            columns.add(c);
        }
        ArrayNode out = answer.putArray("rows");
        for (Row row : rows) {
            out.add(rowJson(row));
        }
        return answer;
    }

    private static ArrayNode rowJson(Row row) {
        ArrayNode values = JSON.createArrayNode();
        for (int i = 0; i < row.length(); i++) {
            values.add(value(row.get(i)));
        }
        return values;
    }

    private static JsonNode value(Object v) {
        if (v == null) {
            return JSON.nullNode();
        } else if (v instanceof Boolean) {
            return JSON.getNodeFactory().booleanNode((Boolean) v);
        } else if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) {
            return JSON.getNodeFactory().numberNode(((Number) v).longValue());
        } else if (v instanceof Float || v instanceof Double) {
            return JSON.getNodeFactory().numberNode(((Number) v).doubleValue());
        } else if (v instanceof BigDecimal) {
            return JSON.getNodeFactory().textNode(((BigDecimal) v).toPlainString());
        } else if (v instanceof java.sql.Date) {
            return JSON.getNodeFactory().textNode(((java.sql.Date) v).toLocalDate().toString());
        } else if (v instanceof java.sql.Timestamp) {
            return JSON.getNodeFactory().textNode(((java.sql.Timestamp) v).toLocalDateTime().toString());
        } else if (v instanceof byte[]) {
            return JSON.getNodeFactory().textNode(HexFormat.of().formatHex((byte[]) v));
        } else if (v instanceof Row) {
            return rowJson((Row) v);
        }
        return JSON.getNodeFactory().textNode(String.valueOf(v));
    }
}
