/*
 * Java Paimon (org.apache.paimon:paimon-bundle, the version tests/java/pom.xml names) as Strata's reference
 * oracle: one long-lived JVM that takes commands as JSON lines on stdin and answers each with one JSON line on
 * stdout, so a test group pays the JVM's start and class loading once. Nothing here is Strata code: it drives
 * Paimon's public Java API (catalog, stream writers and commits, compaction, reads) the way a Flink job would.
 *
 * Requests are objects with "op" (create, write, compact, read, snapshot, close_writer, ping) and the fields
 * the op names below; table paths are <warehouse>/<db>.db/<table>. Answers are {"ok": true, ...} or
 * {"ok": false, "error": "<exception class>: <message>", "conflict": bool}; an error leaves the driver
 * running. Rows are JSON objects by column name, with "_kind" (+I, -U, +U, -D) where a row kind matters:
 * strings as text, BYTES as hex, DECIMAL as text, DATE/TIME/TIMESTAMP in ISO-8601.
 *
 * Writers are named ("writer"): one named writer is one StreamTableWrite kept open across its commits, with
 * its own commit user, as a Flink sink keeps its LSM state between checkpoints; that state going stale under
 * another engine's compaction is what the mixed-engine tests exercise. A failed commit closes the writer (a
 * job restart); the next write to its name opens a new one that restores from the latest snapshot.
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowPartitionKeyExtractor;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

public final class PaimonDriver {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One named writer: its table (with the options it was opened with), write, commit and next id. */
    private static final class Writer {
        final FileStoreTable table;
        final StreamTableWrite write;
        final StreamTableCommit commit;
        /** Dynamic-bucket tables: the assigner Flink's writers use (it reads the table's hash index). */
        final HashBucketAssigner assigner;
        final RowPartitionKeyExtractor extractor;
        long nextIdentifier = 1;

        Writer(FileStoreTable table, String tmp) {
            this.table = table;
            String user = UUID.randomUUID().toString();
            StreamWriteBuilder builder = table.newStreamWriteBuilder().withCommitUser(user);
            this.write = (StreamTableWrite) builder.newWrite().withIOManager(IOManager.create(tmp));
            this.commit = builder.newCommit();
            if (table.bucketMode() == BucketMode.HASH_DYNAMIC) {
                this.assigner = new HashBucketAssigner(table.snapshotManager(), user,
                        table.store().newIndexFileHandler(), 1, 1, 0,
                        table.coreOptions().dynamicBucketTargetRowNum(),
                        table.coreOptions().dynamicBucketMaxBuckets());
                this.extractor = new RowPartitionKeyExtractor(table.schema());
            } else {
                this.assigner = null;
                this.extractor = null;
            }
        }

        void close() {
            try {
                write.close();
            } catch (Exception ignored) {
                // A writer closed after a failed commit may fail to close; the next one starts afresh.
            }
            try {
                commit.close();
            } catch (Exception ignored) {
                // As above.
            }
        }
    }

    private final Map<String, Writer> writers = new HashMap<>();
    private final String tmp;

    private PaimonDriver(String tmp) {
        this.tmp = tmp;
    }

    public static void main(String[] args) throws Exception {
        // Paimon and its libraries must not write to the protocol's stream: everything else goes to stderr.
        PrintStream protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        String tmp = Files.createTempDirectory("strata-java-paimon").toString();
        PaimonDriver driver = new PaimonDriver(tmp);
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
                answer.put("conflict", String.valueOf(t).contains("conflict"));
                t.printStackTrace(System.err);
            }
            protocol.println(JSON.writeValueAsString(answer));
        }
        for (Writer w : driver.writers.values()) {
            w.close();
        }
    }

    private ObjectNode handle(JsonNode req) throws Exception {
        String op = req.path("op").asText();
        switch (op) {
            case "ping":
                return JSON.createObjectNode();
            case "create":
                return create(req);
            case "write":
                return write(req);
            case "compact_unaware":
                return compactUnaware(req);
            case "compact":
                return compact(req);
            case "read":
                return read(req);
            case "snapshot":
                return snapshot(req);
            case "alter":
                return alter(req);
            case "expire":
                return expire(req);
            case "tag":
                return tag(req);
            case "close_writer":
                Writer w = writers.remove(req.path("writer").asText());
                if (w != null) {
                    w.close();
                }
                return JSON.createObjectNode();
            default:
                throw new IllegalArgumentException("unknown op '" + op + "'");
        }
    }

    /** {path, columns: [[name, type]], primary_keys, partition_keys, options}: a new table by the catalog. */
    private ObjectNode create(JsonNode req) throws Exception {
        Path table = new Path(req.path("path").asText());
        Identifier id = identifier(table);
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode c : req.path("columns")) {
            schema.column(c.get(0).asText(), type(c.get(1).asText()));
        }
        schema.primaryKey(strings(req.path("primary_keys")));
        schema.partitionKeys(strings(req.path("partition_keys")));
        req.path("options").fields().forEachRemaining(e -> schema.option(e.getKey(), e.getValue().asText()));
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(table.getParent().getParent()))) {
            catalog.createDatabase(id.getDatabaseName(), true);
            catalog.createTable(id, schema.build(), false);
        }
        return JSON.createObjectNode();
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** The table at `path`, with `options` (dynamic options such as write-only) applied when given. */
    private static FileStoreTable open(JsonNode req) {
        FileStoreTable table = FileStoreTableFactory.create(LocalFileIO.create(), new Path(req.path("path").asText()));
        Map<String, String> options = new HashMap<>();
        req.path("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        return options.isEmpty() ? table : table.copy(options);
    }

    private Writer writer(JsonNode req) {
        String name = req.path("writer").asText("default");
        Writer w = writers.get(name);
        if (w == null) {
            w = new Writer(open(req), tmp);
            writers.put(name, w);
        }
        return w;
    }

    /**
     * {path, writer, options, rows, compact: none|minor|full}: writes the rows with the named writer, then
     * (unless "commit" is false) prepares and commits them with the writer's next commit identifier. The
     * writer compacts as its options say; "compact" asks it for a compaction of every bucket it wrote.
     */
    private ObjectNode write(JsonNode req) throws Exception {
        Writer w = writer(req);
        RowType type = w.table.rowType();
        LinkedHashSet<String> touched = new LinkedHashSet<>();
        List<BinaryRow> partitions = new ArrayList<>();
        List<Integer> buckets = new ArrayList<>();
        for (JsonNode r : req.path("rows")) {
            GenericRow row = toRow(type, r);
            BinaryRow partition;
            int bucket;
            if (w.assigner != null) {
                partition = w.extractor.partition(row);
                bucket = w.assigner.assign(partition, w.extractor.trimmedPrimaryKey(row).hashCode());
            } else {
                partition = w.write.getPartition(row);
                bucket = w.write.getBucket(row);
            }
            if (touched.add(partition + "/" + bucket)) {
                partitions.add(partition.copy());
                buckets.add(bucket);
            }
            w.write.write(row, bucket);
        }
        String compact = req.path("compact").asText("none");
        if (!compact.equals("none")) {
            for (int i = 0; i < partitions.size(); i++) {
                w.write.compact(partitions.get(i), buckets.get(i), compact.equals("full"));
            }
        }
        ObjectNode out = JSON.createObjectNode();
        if (req.path("commit").asBoolean(true)) {
            out.put("snapshot", commit(req, w, !compact.equals("none")));
        }
        return out;
    }

    /** Prepares and commits what `w` holds; a failure closes the writer (the job restarts). */
    private long commit(JsonNode req, Writer w, boolean waitCompaction) throws Exception {
        long id = w.nextIdentifier++;
        try {
            List<CommitMessage> messages = w.write.prepareCommit(waitCompaction, id);
            w.commit.commit(id, messages);
            if (w.assigner != null) {
                w.assigner.prepareCommit(id);
            }
        } catch (Throwable t) {
            writers.remove(req.path("writer").asText("default"));
            w.close();
            throw t;
        }
        Snapshot latest = w.table.snapshotManager().latestSnapshot();
        return latest == null ? -1 : latest.id();
    }

    /**
     * {path, writer, options, full}: a compaction of every bucket holding files in the latest snapshot, by the
     * named writer (a dedicated compaction job when the name is its own), committed.
     */
    private ObjectNode compact(JsonNode req) throws Exception {
        Writer w = writer(req);
        // The store's scan, not the table's: a deletion-vector table's read plan skips level 0, so a bucket
        // holding only level-0 files (written with write-only) would not be found.
        LinkedHashMap<String, ManifestEntry> seen = new LinkedHashMap<>();
        for (ManifestEntry e : w.table.store().newScan().plan().files()) {
            seen.putIfAbsent(e.partition() + "/" + e.bucket(), e);
        }
        boolean full = req.path("full").asBoolean(true);
        for (ManifestEntry e : seen.values()) {
            w.write.compact(e.partition(), e.bucket(), full);
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("snapshot", commit(req, w, true));
        out.put("buckets", seen.size());
        return out;
    }

    /**
     * {path, options}: an unaware-bucket append table compacted as Paimon's dedicated compaction plans it in
     * batch mode (one AppendCompactCoordinator plan, each AppendCompactTask run), committed as one snapshot.
     */
    private ObjectNode compactUnaware(JsonNode req) throws Exception {
        FileStoreTable table = open(req);
        List<org.apache.paimon.append.AppendCompactTask> tasks;
        try {
            tasks = new org.apache.paimon.append.AppendCompactCoordinator(table, false).run();
        } catch (org.apache.paimon.table.source.EndOfScanException e) {
            tasks = new ArrayList<>();
        }
        String user = UUID.randomUUID().toString();
        List<CommitMessage> messages = new ArrayList<>();
        var write = (org.apache.paimon.operation.BaseAppendFileStoreWrite) table.store().newWrite(user);
        try {
            for (var task : tasks) {
                messages.add(task.doCompact(table, write));
            }
        } finally {
            write.close();
        }
        if (!messages.isEmpty()) {
            try (var commit = table.newBatchWriteBuilder().newCommit()) {
                commit.commit(messages);
            }
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("tasks", tasks.size());
        return out;
    }

    /**
     * {path, options}: every row of the latest snapshot (or what the options choose: scan.snapshot-id,
     * incremental-between and its scan mode), with its row kind in "_kind".
     */
    private ObjectNode read(JsonNode req) throws Exception {
        Table table = open(req);
        RowType type = table.rowType();
        ReadBuilder rb = table.newReadBuilder();
        List<InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < type.getFieldCount(); i++) {
            getters.add(InternalRow.createFieldGetter(type.getTypeAt(i), i));
        }
        ArrayNode rows = JSON.createArrayNode();
        try (var reader = rb.newRead().createReader(rb.newScan().plan())) {
            reader.forEachRemaining(row -> {
                ObjectNode o = rows.addObject();
                for (int i = 0; i < getters.size(); i++) {
                    DataField f = type.getFields().get(i);
                    putValue(o, f.name(), f.type(), getters.get(i).getFieldOrNull(row));
                }
                o.put("_kind", row.getRowKind().shortString());
            });
        }
        ObjectNode out = JSON.createObjectNode();
        out.set("rows", rows);
        return out;
    }

    /**
     * {path, changes: [["add", name, type] | ["rename", from, to] | ["type", name, type] | ["drop", name]]}:
     * one schema change through the catalog, as an engine's ALTER TABLE makes it.
     */
    private ObjectNode alter(JsonNode req) throws Exception {
        Path table = new Path(req.path("path").asText());
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode c : req.path("changes")) {
            String what = c.get(0).asText();
            switch (what) {
                case "add":
                    changes.add(SchemaChange.addColumn(c.get(1).asText(), type(c.get(2).asText())));
                    break;
                case "rename":
                    changes.add(SchemaChange.renameColumn(c.get(1).asText(), c.get(2).asText()));
                    break;
                case "type":
                    changes.add(SchemaChange.updateColumnType(c.get(1).asText(), type(c.get(2).asText())));
                    break;
                case "drop":
                    changes.add(SchemaChange.dropColumn(c.get(1).asText()));
                    break;
                default:
                    throw new IllegalArgumentException("unknown schema change " + what);
            }
        }
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(table.getParent().getParent()))) {
            catalog.alterTable(identifier(table), changes, false);
        }
        return JSON.createObjectNode();
    }

    private static DataType type(String sql) {
        return DataTypeJsonParser.parseAtomicTypeSQLString(sql);
    }

    /** The catalog identifier of the table at `table` (<warehouse>/<db>.db/<table>). */
    private static Identifier identifier(Path table) {
        String db = table.getParent().getName();
        if (!db.endsWith(".db")) {
            throw new IllegalArgumentException("a table path is <warehouse>/<db>.db/<table>: " + table);
        }
        return Identifier.create(db.substring(0, db.length() - 3), table.getName());
    }

    /** {path, name, snapshot}: tags `snapshot` (the latest when absent) as `name`. */
    private ObjectNode tag(JsonNode req) {
        FileStoreTable table = open(req);
        String name = req.path("name").asText();
        if (req.hasNonNull("snapshot")) {
            table.createTag(name, req.get("snapshot").asLong());
        } else {
            table.createTag(name);
        }
        return JSON.createObjectNode();
    }

    /** {path, retain}: expires all but the latest `retain` snapshots, whatever their age; {expired: n}. */
    private ObjectNode expire(JsonNode req) {
        FileStoreTable table = open(req);
        int retain = req.path("retain").asInt(1);
        ExpireConfig config = ExpireConfig.builder()
                .snapshotRetainMax(retain)
                .snapshotRetainMin(retain)
                .snapshotTimeRetain(java.time.Duration.ZERO)
                .build();
        ObjectNode out = JSON.createObjectNode();
        out.put("expired", table.newExpireSnapshots().config(config).expire());
        return out;
    }

    /** {path}: the latest snapshot's id and commit kind (null id when there is none). */
    private ObjectNode snapshot(JsonNode req) {
        FileStoreTable table = open(req);
        Snapshot s = table.snapshotManager().latestSnapshot();
        ObjectNode out = JSON.createObjectNode();
        if (s == null) {
            out.putNull("id");
        } else {
            out.put("id", s.id());
            out.put("kind", s.commitKind().toString());
        }
        return out;
    }

    private static GenericRow toRow(RowType type, JsonNode r) {
        GenericRow row = new GenericRow(type.getFieldCount());
        List<DataField> fields = type.getFields();
        for (int i = 0; i < fields.size(); i++) {
            JsonNode v = r.get(fields.get(i).name());
            row.setField(i, v == null || v.isNull() ? null : internal(fields.get(i).type(), v));
        }
        for (Iterator<String> it = r.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!name.equals("_kind") && type.getFieldIndex(name) < 0) {
                throw new IllegalArgumentException("no column '" + name + "' in " + type);
            }
        }
        row.setRowKind(r.has("_kind") ? RowKind.fromShortString(r.get("_kind").asText()) : RowKind.INSERT);
        return row;
    }

    /** A JSON value as Paimon's internal value of `type`. */
    private static Object internal(DataType type, JsonNode v) {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return v.asBoolean();
            case TINYINT:
                return (byte) v.asInt();
            case SMALLINT:
                return (short) v.asInt();
            case INTEGER:
                return v.asInt();
            case BIGINT:
                return v.asLong();
            case FLOAT:
                return (float) v.asDouble();
            case DOUBLE:
                return v.asDouble();
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(v.asText());
            case BINARY:
            case VARBINARY:
                return HexFormat.of().parseHex(v.asText());
            case DECIMAL:
                DecimalType d = (DecimalType) type;
                return Decimal.fromBigDecimal(new BigDecimal(v.asText()), d.getPrecision(), d.getScale());
            case DATE:
                return (int) LocalDate.parse(v.asText()).toEpochDay();
            case TIME_WITHOUT_TIME_ZONE:
                return (int) (LocalTime.parse(v.asText()).toNanoOfDay() / 1_000_000);
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return Timestamp.fromLocalDateTime(LocalDateTime.parse(v.asText()));
            default:
                throw new IllegalArgumentException("the driver does not write " + type);
        }
    }

    /** Puts Paimon's internal value `v` of `type` into `o` as JSON. */
    private static void putValue(ObjectNode o, String name, DataType type, Object v) {
        if (v == null) {
            o.putNull(name);
            return;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                o.put(name, (Boolean) v);
                return;
            case TINYINT:
                o.put(name, (Byte) v);
                return;
            case SMALLINT:
                o.put(name, (Short) v);
                return;
            case INTEGER:
                o.put(name, (Integer) v);
                return;
            case BIGINT:
                o.put(name, (Long) v);
                return;
            case FLOAT:
                o.put(name, (Float) v);
                return;
            case DOUBLE:
                o.put(name, (Double) v);
                return;
            case BINARY:
            case VARBINARY:
                o.put(name, HexFormat.of().formatHex((byte[]) v));
                return;
            case DECIMAL:
                o.put(name, ((Decimal) v).toBigDecimal().toPlainString());
                return;
            case DATE:
                o.put(name, LocalDate.ofEpochDay((Integer) v).toString());
                return;
            case TIME_WITHOUT_TIME_ZONE:
                o.put(name, LocalTime.ofNanoOfDay((Integer) v * 1_000_000L).toString());
                return;
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                o.put(name, ((Timestamp) v).toLocalDateTime().toString());
                return;
            default:
                o.put(name, v.toString());
        }
    }
}
