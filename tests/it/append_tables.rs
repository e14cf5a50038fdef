//! Append tables (no primary key) that pypaimon 2.1.0, Java Paimon 1.4.2 and Spark SQL with Paimon 0.9.0
//! wrote, read by Strata: unaware and fixed buckets, partitions, parquet and ORC, Java's compactions and
//! Spark's deletion vectors; every row the writers' model holds and the oracles read, duplicates kept, in
//! append order; filters, projections, counts, time travel, incremental reads, `strata scan`, SQL, and
//! maintenance; lookups and writes refused with a clear error, and a primary-key table's files never read as
//! appended rows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{json_rows, oracle, strata};
use serde_json::{json, Value};
use strata::spec::Datum;
use strata::{CmpOp, ErrorKind, FileIO, LocalFileIO, Predicate, ReadBuilder, Table, TableQuery, TableWriter};

struct Config {
    name: &'static str,
    format: &'static str,
    buckets: i32,
    partitioned: bool,
}

const CONFIGS: [Config; 3] = [
    Config { name: "unaware", format: "parquet", buckets: -1, partitioned: false },
    Config { name: "unaware_parts", format: "orc", buckets: -1, partitioned: true },
    Config { name: "fixed", format: "parquet", buckets: 3, partitioned: true },
];

/// pypaimon writes `commits` commits of 150 rows (ids from a space of 400, so ids repeat) into a new append
/// table; its directory.
fn write_with_pypaimon(warehouse: &Path, c: &Config, commits: u32) -> std::path::PathBuf {
    let mut options = json!({});
    if c.buckets > 0 {
        options = json!({"bucket-key": "id"});
    }
    let spec = json!({
        "warehouse": warehouse.to_str().unwrap(), "table": c.name, "format": c.format, "buckets": c.buckets,
        "partitioned": c.partitioned, "commits": commits, "rows_per_commit": 150, "key_space": 400, "seed": 11,
        "append": true, "options": options,
    });
    oracle(&["write", &spec.to_string()]);
    warehouse.join("db.db").join(c.name)
}

fn open(dir: &Path) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    Table::open(io, dir.to_str().unwrap()).unwrap()
}

/// Rows as JSON objects in a canonical order (an append table's rows have no key to order them by), each
/// with its fields in name order.
fn sorted(rows: Vec<Value>) -> Vec<Value> {
    let mut rows: Vec<Value> = rows
        .into_iter()
        .map(|r| match r {
            Value::Object(m) => {
                let fields: std::collections::BTreeMap<String, Value> = m.into_iter().collect();
                Value::Object(fields.into_iter().collect())
            }
            other => other,
        })
        .collect();
    rows.sort_by_key(|r| r.to_string());
    rows
}

fn pypaimon_read(dir: &Path, options: Value) -> Vec<Value> {
    let out = oracle(&["read_options", &json!({"path": dir.to_str().unwrap(), "options": options}).to_string()]);
    out.as_array().unwrap().clone()
}

#[test]
fn append_tables_written_by_pypaimon_read_as_pypaimon_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    for c in &CONFIGS {
        let path = write_with_pypaimon(dir.path(), c, 4);
        let t = open(&path);
        let expected = pypaimon_read(&path, json!({}));
        assert_eq!(expected.len(), 600, "{}: pypaimon keeps every appended row", c.name);
        let read = ReadBuilder::new(&t).read().unwrap();
        let got = json_rows(&read.batches);
        assert_eq!(sorted(got.clone()), sorted(expected.clone()), "{}: rows", c.name);
        let rust = common::paimon_rust("read", &json!({"path": path.to_str().unwrap()}));
        let rust = rust["rows"].as_array().unwrap().clone();
        assert_eq!(sorted(rust), sorted(got.clone()), "{}: paimon-rust's rows", c.name);
        assert_eq!(ReadBuilder::new(&t).count().unwrap(), 600, "{}: count", c.name);

        // Filters (on value and partition columns) and projections, against pypaimon's rows.
        let filter = Predicate::And(vec![
            Predicate::cmp("v", CmpOp::GtEq, Datum::BigInt(0)),
            Predicate::cmp("id", CmpOp::Lt, Datum::BigInt(150)),
        ]);
        let want: Vec<Value> = expected
            .iter()
            .filter(|r| r["v"].as_i64().unwrap() >= 0 && r["id"].as_i64().unwrap() < 150)
            .map(|r| json!({"v": r["v"], "id": r["id"]}))
            .collect();
        let got = ReadBuilder::new(&t).with_filter(filter.clone()).with_projection(&["v", "id"]).read().unwrap();
        assert_eq!(sorted(json_rows(&got.batches)), sorted(want.clone()), "{}: filtered", c.name);
        assert_eq!(ReadBuilder::new(&t).with_filter(filter).count().unwrap(), want.len() as u64, "{}", c.name);
        if c.partitioned {
            let only_a = ReadBuilder::new(&t).with_filter(Predicate::cmp("p", CmpOp::Eq, Datum::String("a".into())));
            let want: Vec<Value> = expected.iter().filter(|r| r["p"] == "a").cloned().collect();
            assert_eq!(sorted(json_rows(&only_a.read().unwrap().batches)), sorted(want), "{}: partition", c.name);
        }

        // Time travel: the second snapshot holds the first two commits' rows, as pypaimon reads it there.
        let old = ReadBuilder::new(&t).with_snapshot(2).read().unwrap();
        let want = pypaimon_read(&path, json!({"scan.snapshot-id": "2"}));
        assert_eq!(want.len(), 300);
        assert_eq!(sorted(json_rows(&old.batches)), sorted(want), "{}: snapshot 2", c.name);

        // `strata scan` prints the same rows.
        let (code, out, err) = strata(&["scan", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {err}", c.name);
        let printed: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(sorted(printed), sorted(expected), "{}: strata scan", c.name);
    }
}

/// An append table's rows come out in the order they were appended: file by file in commit order, each file
/// in its rows' order. (pypaimon reads an unaware-bucket table's files in an order of its own, so each file's
/// rows are taken from pypaimon's read of the snapshot that added it: the 150-row block not read before.)
#[test]
fn rows_read_in_the_order_they_were_appended() {
    let dir = tempfile::tempdir().unwrap();
    let c = &CONFIGS[0];
    let path = write_with_pypaimon(dir.path(), c, 3);
    let t = open(&path);
    let ids = |rows: Vec<Value>| -> Vec<i64> { rows.iter().map(|r| r["id"].as_i64().unwrap()).collect() };
    let mut expected: Vec<i64> = Vec::new();
    for snapshot in 1..=3 {
        let read = ids(pypaimon_read(&path, json!({"scan.snapshot-id": snapshot.to_string()})));
        let blocks: Vec<&[i64]> = read.chunks(150).collect();
        assert_eq!(blocks.len(), snapshot, "one 150-row file per commit");
        let seen: Vec<&[i64]> = expected.chunks(150).collect();
        let new: Vec<&&[i64]> = blocks.iter().filter(|b| !seen.contains(b)).collect();
        assert_eq!(new.len(), 1, "snapshot {snapshot} adds one file");
        expected.extend_from_slice(new[0]);
    }
    let got: Vec<i64> = ReadBuilder::new(&t)
        .read()
        .unwrap()
        .batches
        .iter()
        .flat_map(|b| {
            let ids = b.column_by_name("id").unwrap().as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
            ids.values().to_vec()
        })
        .collect();
    assert_eq!(got, expected);
}

/// Lookups by key are refused with an error that names the reason, never a panic or a wrong
/// answer.
#[test]
fn lookups_by_key_on_an_append_table_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_with_pypaimon(dir.path(), &CONFIGS[0], 1);
    let t = open(&path);
    let key = [Some(Datum::BigInt(1))];
    for err in [strata::get(&t, &key, None).unwrap_err(), TableQuery::new(&t).unwrap_err()] {
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
        assert!(err.to_string().contains("append"), "{err}");
    }
}

/// SQL over a warehouse holding a pypaimon append table and a Strata primary-key table: a join of the two
/// equals the join of pypaimon's rows with the rows written.
#[test]
fn sql_joins_an_append_table_with_a_primary_key_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_with_pypaimon(dir.path(), &CONFIGS[1], 3);
    let events = pypaimon_read(&path, json!({}));
    let dim = dir.path().join("db.db").join("dim");
    let (code, _, err) =
        common::strata_create(dim.to_str().unwrap(), "id BIGINT NOT NULL, label STRING", "id", &[], &[]);
    assert_eq!(code, 0, "{err}");
    let t = open(&dim);
    let mut w = TableWriter::new(&t, "w").unwrap();
    for id in (0..400).step_by(3) {
        w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String(format!("l{}", id % 7)))]).unwrap();
    }
    w.commit().unwrap();
    // The model: per label, how many events have an id in `dim` and their sum of v.
    let mut want: std::collections::BTreeMap<String, (i64, i64)> = Default::default();
    for e in &events {
        let id = e["id"].as_i64().unwrap();
        if id % 3 == 0 {
            let slot = want.entry(format!("l{}", id % 7)).or_default();
            slot.0 += 1;
            slot.1 += e["v"].as_i64().unwrap();
        }
    }
    let want: Vec<Value> = want.into_iter().map(|(l, (n, s))| json!({"label": l, "n": n, "s": s})).collect();
    let query = "SELECT d.label AS label, count(*) AS n, sum(e.v) AS s FROM db.unaware_parts e \
                 JOIN db.dim d ON e.id = d.id GROUP BY d.label ORDER BY d.label";
    let (code, out, err) = strata(&["sql", "--warehouse", dir.path().to_str().unwrap(), "--format", "jsonl", query]);
    assert_eq!(code, 0, "{err}");
    let got: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(got, want);
}

/// Incremental reads of an append table: the rows the snapshots in (1, 3] appended, each an insert, as
/// pypaimon's streaming reader reads them; a filter keeps the matching rows.
#[test]
fn incremental_reads_give_the_appended_rows_as_inserts() {
    let dir = tempfile::tempdir().unwrap();
    for c in &CONFIGS {
        let path = write_with_pypaimon(dir.path(), c, 3);
        let t = open(&path);
        let got = ReadBuilder::new(&t).incremental_between(1, 3).read().unwrap();
        let got = json_rows(&got.batches);
        assert_eq!(got.len(), 300, "{}", c.name);
        assert!(got.iter().all(|r| r["rowkind"] == "+I"), "{}", c.name);
        let theirs = oracle(&["delta", path.to_str().unwrap(), "1", "3"]);
        let theirs: Vec<Value> = theirs["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let kind = r.as_object_mut().unwrap().remove("_row_kind").unwrap();
                r["rowkind"] = kind;
                r
            })
            .collect();
        assert_eq!(sorted(got.clone()), sorted(theirs), "{}: pypaimon's delta read", c.name);
        let filtered = ReadBuilder::new(&t)
            .with_filter(Predicate::cmp("v", CmpOp::Lt, Datum::BigInt(0)))
            .incremental_between(1, 3)
            .read()
            .unwrap();
        let want: Vec<Value> = got.into_iter().filter(|r| r["v"].as_i64().unwrap() < 0).collect();
        assert_eq!(sorted(json_rows(&filtered.batches)), sorted(want), "{}: filtered", c.name);
    }
}

/// Append tables with deletion vectors, written by Spark SQL 3.5.2 with Paimon 0.9.0 (INSERT, then DELETE,
/// which marks the deleted rows in deletion vectors instead of rewriting files): Strata reads exactly the rows
/// a model of the statements keeps, as Spark does, for unaware and fixed buckets.
#[test]
fn append_tables_with_deletion_vectors_written_by_spark() {
    use crate::common::spark::SparkSql;
    use rand::{Rng, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().to_str().unwrap().to_string();
    let mut spark = SparkSql::start();
    spark.catalog("s", &wh);
    spark.sql("CREATE DATABASE IF NOT EXISTS s.db");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for (name, props) in [
        ("events", "'deletion-vectors.enabled' = 'true'"),
        ("bucketed", "'deletion-vectors.enabled' = 'true', 'bucket' = '2', 'bucket-key' = 'id'"),
    ] {
        spark.sql(&format!(
            "CREATE TABLE s.db.{name} (id BIGINT, p STRING, v BIGINT) PARTITIONED BY (p) TBLPROPERTIES ({props})"
        ));
        // The model: every row appended, in a multiset (ids repeat).
        let mut model: Vec<(i64, String, i64)> = Vec::new();
        for _ in 0..3 {
            let rows: Vec<(i64, String, i64)> = (0..60)
                .map(|_| {
                    (
                        rng.random_range(0..100),
                        ["a", "b"][rng.random_range(0..2)].to_string(),
                        rng.random_range(-50..50),
                    )
                })
                .collect();
            let values: Vec<String> = rows.iter().map(|(i, p, v)| format!("({i}, '{p}', {v})")).collect();
            spark.sql(&format!("INSERT INTO s.db.{name} VALUES {}", values.join(", ")));
            model.extend(rows);
        }
        spark.sql(&format!("DELETE FROM s.db.{name} WHERE v < 0 AND id % 3 = 0"));
        model.retain(|(i, _, v)| !(*v < 0 && i % 3 == 0));
        let path = dir.path().join("db.db").join(name);
        let t = open(&path);
        let s = t.snapshot(None).unwrap().unwrap();
        assert!(!t.deletion_files(&s).unwrap().is_empty(), "{name}: Spark's DELETE wrote no deletion vector");
        let row = |id: i64, p: &str, v: i64| json!({"id": id, "p": p, "v": v});
        let want: Vec<Value> = model.iter().map(|(i, p, v)| row(*i, p, *v)).collect();
        let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
        assert_eq!(sorted(got), sorted(want.clone()), "{name}: Strata's read");
        assert_eq!(ReadBuilder::new(&t).count().unwrap(), want.len() as u64, "{name}: count");
        let theirs: Vec<Value> = spark
            .sql(&format!("SELECT id, p, v FROM s.db.{name}"))
            .iter()
            .map(|r| row(r[0].as_i64().unwrap(), r[1].as_str().unwrap(), r[2].as_i64().unwrap()))
            .collect();
        assert_eq!(sorted(theirs), sorted(want.clone()), "{name}: Spark's read");

        // Strata compacts the files Spark's DELETE marked: the rewrite drops the deleted rows and their vectors
        // go; Spark reads the same rows after, and deletes again over Strata's index files.
        let args: &[&str] = if name == "events" { &["compact"] } else { &["compact", "--full"] };
        let (code, out, err) = common::strata(&[args, &[path.to_str().unwrap()]].concat());
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("compacted"), "{name}: {out}");
        let t = open(&path);
        let s = t.snapshot(None).unwrap().unwrap();
        assert!(t.deletion_files(&s).unwrap().is_empty(), "{name}: vectors left after the compaction");
        let spark_rows = |spark: &mut SparkSql| -> Vec<Value> {
            spark
                .sql(&format!("SELECT id, p, v FROM s.db.{name}"))
                .iter()
                .map(|r| row(r[0].as_i64().unwrap(), r[1].as_str().unwrap(), r[2].as_i64().unwrap()))
                .collect()
        };
        let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
        assert_eq!(sorted(got), sorted(want.clone()), "{name}: Strata's read after its compaction");
        assert_eq!(sorted(spark_rows(&mut spark)), sorted(want), "{name}: Spark's read after Strata's compaction");
        spark.sql(&format!("DELETE FROM s.db.{name} WHERE v > 40"));
        model.retain(|(_, _, v)| *v <= 40);
        let want: Vec<Value> = model.iter().map(|(i, p, v)| row(*i, p, *v)).collect();
        let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
        assert_eq!(sorted(got), sorted(want.clone()), "{name}: Strata's read after Spark's second delete");
        assert_eq!(sorted(spark_rows(&mut spark)), sorted(want), "{name}: Spark's read after its second delete");
    }
}

/// A primary-key table whose schema file is made to name no primary key (crafted, or damaged past what the
/// parser catches) is refused, not read as an append table: that would show every stored version of every
/// row.
#[test]
fn a_primary_key_table_whose_schema_lost_its_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db").join("t");
    let (code, _, err) = common::strata_create(path.to_str().unwrap(), "id BIGINT NOT NULL, v BIGINT", "id", &[], &[]);
    assert_eq!(code, 0, "{err}");
    let t = open(&path);
    let mut w = TableWriter::new(&t, "w").unwrap();
    for round in 0..2 {
        w.put(vec![Some(Datum::BigInt(1)), Some(Datum::BigInt(round))]).unwrap();
        w.commit().unwrap();
    }
    let schema = path.join("schema").join("schema-0");
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&schema).unwrap()).unwrap();
    assert_eq!(json["primaryKeys"], json!(["id"]));
    json["primaryKeys"] = json!([]);
    std::fs::write(&schema, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let t = open(&path);
    for err in
        [ReadBuilder::new(&t).read().unwrap_err(), ReadBuilder::new(&t).incremental_between(0, 2).read().unwrap_err()]
    {
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
        assert!(err.to_string().contains("no primary key"), "{err}");
    }
}

/// Maintenance on an append table pypaimon wrote: a tag keeps its snapshot's rows through expiration, a
/// rollback to it leaves exactly those rows (pypaimon reads the same), and orphan cleaning removes nothing
/// that is read.
#[test]
fn tags_expiration_rollback_and_cleaning_keep_an_append_tables_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_with_pypaimon(dir.path(), &CONFIGS[1], 5);
    let t = path.to_str().unwrap();
    let rows_at_2 = sorted(pypaimon_read(&path, json!({"scan.snapshot-id": "2"})));
    let cli = |args: &[&str]| {
        let (code, out, err) = strata(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    let scan = |args: &[&str]| -> Vec<Value> {
        let mut all = vec!["scan", t];
        all.extend_from_slice(args);
        cli(&all).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    cli(&["tag", "create", t, "two", "--snapshot", "2"]);
    cli(&["expire", t, "--retain-max", "1", "--retain-min", "1", "--older-than", "0 s"]);
    assert_eq!(scan(&[]).len(), 750);
    assert_eq!(sorted(scan(&["--tag", "two"])), rows_at_2, "the tag's rows after expiration");
    cli(&["rollback", t, "--to-tag", "two"]);
    cli(&["clean", t, "--older-than", "0 s"]);
    assert_eq!(sorted(scan(&[])), rows_at_2, "rolled back");
    assert_eq!(sorted(pypaimon_read(&path, json!({}))), rows_at_2, "pypaimon after the rollback");
}

/// Append tables Java Paimon 1.4.2 wrote (its writer numbers rows by sequence, and compacts a fixed-bucket
/// append table's small files on its own): Strata reads every row a model of the writes holds, as Java reads
/// them, and a bucket's rows in Java's order.
#[test]
fn append_tables_written_by_java_read_as_java_reads_them() {
    use rand::{Rng, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let mut java = crate::common::java::JavaPaimon::start();
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for (name, options, compact) in [
        ("unaware", json!({"bucket": "-1"}), "none"),
        // Java compacts a bucket once it holds three small files (a minor compaction asked for at the end).
        ("fixed", json!({"bucket": "2", "bucket-key": "id", "compaction.min.file-num": "3"}), "minor"),
    ] {
        let path = dir.path().join("db.db").join(name).to_str().unwrap().to_string();
        java.call(&json!({
            "op": "create", "path": path,
            "columns": [["id", "BIGINT"], ["p", "STRING"], ["v", "BIGINT"]],
            "primary_keys": [], "partition_keys": ["p"], "options": options,
        }));
        let mut model: Vec<Value> = Vec::new();
        for round in 0..4 {
            let rows: Vec<Value> = (0..50)
                .map(|_| {
                    let p = ["a", "b"][rng.random_range(0..2)];
                    json!({"id": rng.random_range(0..60), "p": p, "v": rng.random_range(-99..99)})
                })
                .collect();
            let compact = if round == 3 { compact } else { "none" };
            java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": compact}));
            model.extend(rows);
        }
        java.call(&json!({"op": "close_writer", "writer": "app"}));
        let t = open(std::path::Path::new(&path));
        let latest = t.snapshot(None).unwrap().unwrap().id;
        let kinds: Vec<_> = (1..=latest).map(|id| t.snapshot(Some(id)).unwrap().unwrap().commit_kind).collect();
        let compacted = kinds.contains(&strata::spec::CommitKind::Compact);
        assert_eq!(compacted, name == "fixed", "{name}: Java's compactions: {kinds:?}");
        let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
        assert_eq!(sorted(got.clone()), sorted(model.clone()), "{name}: Strata's read against the model");
        let theirs: Vec<Value> = java
            .read(&path, json!({}))
            .into_iter()
            .map(|mut r| {
                assert_eq!(r["_kind"], "+I");
                r.as_object_mut().unwrap().remove("_kind");
                r
            })
            .collect();
        assert_eq!(sorted(theirs.clone()), sorted(got.clone()), "{name}: Java's read");
        // Per partition, the rows in Java's order (Java reads a bucket's files by sequence number).
        if name == "unaware" {
            for p in ["a", "b"] {
                let of = |rows: &[Value]| -> Vec<Value> { rows.iter().filter(|r| r["p"] == p).cloned().collect() };
                assert_eq!(of(&got), of(&theirs), "{name}: partition {p} in Java's order");
            }
        }
    }
}

/// Data-evolution tables of pypaimon 2.1.0 (`row-tracking.enabled`, `data-evolution.enabled`): rows deleted
/// by row id (deletion vectors) read as pypaimon reads them. Once rows are updated by row id (a file that
/// re-covers them, which a reader must merge), Strata refuses the read rather than give those rows twice;
/// incremental reads and Strata's writes (it does not number rows) are refused throughout, and pypaimon
/// still reads the table.
#[test]
fn data_evolution_tables_read_until_rows_are_updated_by_row_id() {
    let dir = tempfile::tempdir().unwrap();
    let spec = json!({
        "warehouse": dir.path().to_str().unwrap(), "table": "evo", "format": "parquet", "buckets": -1,
        "partitioned": false, "commits": 2, "rows_per_commit": 50, "key_space": 400, "seed": 12, "append": true,
        "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "deletion-vectors.enabled": "true"},
    });
    oracle(&["write", &spec.to_string()]);
    let path = dir.path().join("db.db").join("evo");
    oracle(&["row_ids", &json!({"path": path.to_str().unwrap(), "delete": [0, 1, 2, 60]}).to_string()]);
    let t = open(&path);
    let ours = sorted(json_rows(&ReadBuilder::new(&t).read().unwrap().batches));
    assert_eq!(ours.len(), 96);
    assert_eq!(ours, sorted(pypaimon_read(&path, json!({}))), "after pypaimon's delete by row id");

    let refused = |e: strata::Error, says: &str| {
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    };
    refused(TableWriter::new(&t, "app").map(|_| ()).unwrap_err(), "row tracking");
    refused(ReadBuilder::new(&t).incremental_between(1, 3).read().map(|_| ()).unwrap_err(), "data-evolution");
    let (code, _, err) =
        strata(&["sql", "--warehouse", dir.path().to_str().unwrap(), "INSERT INTO db.evo VALUES (1, 'x', 2)"]);
    assert!(code != 0 && err.contains("row tracking"), "{err}");

    oracle(&["row_ids", &json!({"path": path.to_str().unwrap(), "update_v": [[3, 70], [-3, -70]]}).to_string()]);
    refused(ReadBuilder::new(&open(&path)).read().map(|_| ()).unwrap_err(), "updated by row id");
    assert_eq!(pypaimon_read(&path, json!({})).len(), 96, "pypaimon reads the table after Strata's refusals");
}
