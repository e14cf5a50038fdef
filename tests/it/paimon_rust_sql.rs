//! SQL side by side with paimon-rust 0.4.0's DataFusion integration (its Python wheel `pypaimon-rust`, through
//! tests/py/paimon_rust_oracle.py `sql_many`): random tables written by Strata, deletion-vector and
//! merge-on-read, queried through `strata-datafusion` and through paimon-rust's `SQLContext`; the rows of
//! each query, sorted, must be the same. Queries: full scans, filters on keys, partitions and values,
//! aggregates, `COUNT(*)`, a join of two tables, time travel by snapshot id and system tables. The full scan
//! is also checked against the model of the rows written, so that two engines agreeing on a wrong answer
//! still fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
// The random tables and their model, shared with strata-datafusion's own SQL tests.
#[path = "../../crates/strata-datafusion/tests/it/common/mod.rs"]
mod sql;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::{json, Value};
use sql::{column, random_commit, runtime, Model, Warehouse};
use strata_datafusion::StrataSession;

/// A row as text, column by column (`None` for NULL; numbers as Rust prints them).
type Row = Vec<Option<String>>;

/// The queries, with `{db}` for the database (`db` in Strata's session, `p.db` in paimon-rust's, whose
/// warehouse is catalog `p`), and whether paimon-rust 0.4.0 answers them.
fn queries(snapshots: &[i64]) -> Vec<(String, bool)> {
    let all = "SELECT id, p, name, v, d FROM {db}.t";
    let mut q: Vec<(String, bool)> = [
        all.to_string(),
        format!("{all} WHERE id = 17"),
        format!("{all} WHERE id BETWEEN 20 AND 60 AND p = 'b'"),
        format!("{all} WHERE p IN ('a', 'c') AND id >= 100"),
        format!("{all} WHERE v > 500"),
        format!("{all} WHERE name IS NULL OR d < -100"),
        format!("{all} WHERE name LIKE 'n1%'"),
        "SELECT p, count(*) AS n, sum(v) AS s, min(d) AS lo, max(d) AS hi, count(name) AS names, \
         round(avg(v), 3) AS mean FROM {db}.t GROUP BY p"
            .to_string(),
        "SELECT count(*) AS n FROM {db}.t".to_string(),
        "SELECT count(*) AS n FROM {db}.u".to_string(),
        "SELECT count(*) AS n FROM {db}.t WHERE p = 'a'".to_string(),
        "SELECT t.id AS id, t.p AS p, t.v AS tv, u.v AS uv, u.name AS un FROM {db}.t t JOIN {db}.u u \
         ON t.id = u.id AND t.p = u.p WHERE u.v > 0"
            .to_string(),
        "SELECT t.p AS p, count(*) AS n FROM {db}.t t LEFT JOIN {db}.u u ON t.id = u.id AND t.p = u.p \
         WHERE u.id IS NULL GROUP BY t.p"
            .to_string(),
        "SELECT id, p FROM {db}.t ORDER BY v DESC NULLS LAST, id, p LIMIT 10".to_string(),
        "SELECT snapshot_id, schema_id, commit_kind, total_record_count FROM {db}.\"t$snapshots\"".to_string(),
        "SELECT key, value FROM {db}.\"t$options\"".to_string(),
    ]
    .into_iter()
    .map(|s| (s, true))
    .collect();
    for s in snapshots {
        q.push((format!("SELECT id, p, name, v, d FROM {{db}}.t VERSION AS OF {s}"), true));
    }
    // paimon-rust 0.4.0's SQL parser has no FOR SYSTEM_TIME AS OF ("Expected: one of UPDATE or SHARE") and
    // no `t$snapshot=N` table names; VERSION AS OF above is the time travel both engines read.
    q.push(("SELECT count(*) AS n FROM {db}.t FOR SYSTEM_TIME AS OF TIMESTAMP '2100-01-01 00:00:00'".into(), false));
    q
}

/// The rows of `batches`, sorted.
fn strata_rows(batches: &[arrow_array::RecordBatch]) -> Vec<Row> {
    let Some(first) = batches.first() else { return Vec::new() };
    let columns: Vec<Vec<Option<String>>> = first.schema().fields().iter().map(|f| column(batches, f.name())).collect();
    let mut rows: Vec<Row> = (0..columns[0].len()).map(|i| columns.iter().map(|c| c[i].clone()).collect()).collect();
    rows.sort();
    rows
}

/// The rows the oracle returned for one query, sorted, in the order of its columns.
fn oracle_rows(result: &Value) -> Vec<Row> {
    let text = |v: &Value| match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::Number(n) => Some(n.as_f64().unwrap().to_string()),
        other => panic!("value {other}"),
    };
    let columns: Vec<&str> = result["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let mut rows: Vec<Row> =
        result["rows"].as_array().unwrap().iter().map(|r| columns.iter().map(|c| text(&r[*c])).collect()).collect();
    rows.sort();
    rows
}

fn compare(dv: bool, seed: u64) {
    let rt = runtime();
    let mut rng = StdRng::seed_from_u64(seed);
    let wh = Warehouse::new();
    let dv_opt = dv.to_string();
    let t = wh.create(
        "t",
        true,
        &[("bucket", "2"), ("deletion-vectors.enabled", dv_opt.as_str()), ("target-file-size", "16kb")],
    );
    let u = wh.create("u", false, &[("bucket", "1"), ("deletion-vectors.enabled", dv_opt.as_str())]);
    let (mut model, mut model_u) = (Model::new(), Model::new());
    let mut snapshots = Vec::new();
    for _ in 0..4 {
        snapshots.push(random_commit(&t, &mut model, &mut rng, 300, 200));
        random_commit(&u, &mut model_u, &mut rng, 100, 200);
    }
    let what = format!("dv={dv} seed={seed}");
    let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();
    let all = rt.block_on(session.query("SELECT id, p, name, v, d FROM db.t")).unwrap();
    sql::same(&format!("{what}: Strata's full scan"), &sql::keyed(&what, &all), &model);

    let queries = queries(&snapshots);
    let oracle_sql: Vec<String> = queries.iter().map(|(q, _)| q.replace("{db}", "p.db")).collect();
    let answers = common::paimon_rust("sql_many", &json!({"warehouse": wh.path(), "queries": oracle_sql}));
    let answers = answers.as_array().unwrap();
    assert_eq!(answers.len(), queries.len());
    for ((query, supported), answer) in queries.iter().zip(answers) {
        let sql = query.replace("{db}", "db");
        let got = strata_rows(&rt.block_on(session.query(&sql)).unwrap_or_else(|e| panic!("{what}: {sql}: {e}")));
        match (supported, answer.get("error")) {
            (true, None) => assert_eq!(got, oracle_rows(answer), "{what}: {sql}"),
            (true, Some(e)) => panic!("{what}: paimon-rust refused {query}: {e}"),
            // Strata answers it; paimon-rust still refuses it (when it stops refusing, mark it supported).
            (false, Some(_)) => assert!(!got.is_empty(), "{what}: {sql}"),
            (false, None) => panic!("{what}: paimon-rust now answers {query}: compare it"),
        }
    }
}

#[test]
fn deletion_vector_tables_answer_as_paimon_rust_does() {
    compare(true, 18);
}

#[test]
fn merge_on_read_tables_answer_as_paimon_rust_does() {
    compare(false, 1818);
}
