//! Spark SQL 3.5.2 with Paimon's Spark connector 0.9.0 (paimon-spark-3.5, the only version this machine's
//! Maven mirror serves) as an oracle: tests/spark/SparkDriver.java, one local SparkSession per [`SparkSql`] in a long-lived
//! JVM, taking statements as JSON lines. Each table a test makes is reached through a Paimon catalog over its
//! warehouse directory, registered with [`SparkSql::catalog`].
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};

use super::java::{JavaPaimon, Oracle};

/// One Spark session in its JVM; dropped, it stops.
pub(crate) struct SparkSql(JavaPaimon);

impl SparkSql {
    pub(crate) fn start() -> SparkSql {
        let mut driver = JavaPaimon::start_oracle(Oracle::Spark);
        driver.call(&json!({"op": "ping"}));
        SparkSql(driver)
    }

    /// Registers the catalog `name` over the local warehouse `warehouse`: its tables are `name.db.table`.
    pub(crate) fn catalog(&mut self, name: &str, warehouse: &str) {
        self.0.call(&json!({"op": "catalog", "name": name, "warehouse": warehouse}));
    }

    /// Runs one statement; its rows (each an array of values: DECIMAL as text, DATE and TIMESTAMP in
    /// ISO-8601, BINARY as hex) or Spark's error.
    pub(crate) fn try_sql(&mut self, sql: &str) -> Result<Vec<Value>, String> {
        self.0.try_call(&json!({"op": "sql", "sql": sql})).map(|v| v["rows"].as_array().unwrap().clone())
    }

    /// [`try_sql`](Self::try_sql) that fails the test on an error.
    pub(crate) fn sql(&mut self, sql: &str) -> Vec<Value> {
        self.0.call(&json!({"op": "sql", "sql": sql}))["rows"].as_array().unwrap().clone()
    }
}
