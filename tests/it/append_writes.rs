//! Append tables Strata writes (issue 54): `strata create` without a primary key, `strata write` and the
//! Rust API append rows in arrival order; pypaimon 2.1.0, paimon-rust 0.4.0 and Java Paimon 1.4.2 read every
//! row, Java in Strata's order per partition; Java appends after Strata and Strata reads Java's rows after its
//! own. Retractions, and fixed buckets without a bucket key, are refused as Paimon refuses them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{json_rows, oracle, strata};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::spec::{DataType, ErrorKind, TableSchema};
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

pub(crate) fn open(path: &str) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    Table::open(io, path).unwrap()
}

/// Rows in a canonical order, fields in name order.
pub(crate) fn sorted(rows: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            let m: std::collections::BTreeMap<String, Value> =
                r.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            serde_json::to_string(&m).unwrap()
        })
        .collect();
    out.sort();
    out
}

fn of_partition(rows: &[Value], p: &str) -> Vec<Value> {
    rows.iter().filter(|r| r["p"] == p).cloned().collect()
}

fn rows_batch(rows: &[Value]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, true),
        Field::new("p", ArrowType::Utf8, true),
        Field::new("v", ArrowType::Int64, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(rows.iter().map(|r| r["id"].as_i64()).collect::<Vec<_>>())),
            Arc::new(StringArray::from(rows.iter().map(|r| r["p"].as_str().map(str::to_string)).collect::<Vec<_>>())),
            Arc::new(Int64Array::from(rows.iter().map(|r| r["v"].as_i64()).collect::<Vec<_>>())),
        ],
    )
    .unwrap()
}

fn random_rows(rng: &mut rand::rngs::StdRng, n: usize) -> Vec<Value> {
    (0..n)
        .map(|_| {
            let v = if rng.random_bool(0.1) { Value::Null } else { json!(rng.random_range(-999..999)) };
            let p = ["a", "b", "c"][rng.random_range(0..3)];
            json!({"id": rng.random_range(0..40), "p": p, "v": v})
        })
        .collect()
}

#[test]
fn strata_writes_append_tables_that_pypaimon_paimon_rust_and_java_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut java = common::java::JavaPaimon::start();
    let mut rng = rand::rngs::StdRng::seed_from_u64(54);
    for (name, options) in [
        ("unaware", vec!["file.format=parquet"]),
        ("unaware_orc", vec!["file.format=orc", "target-file-size=2 kb"]),
        ("fixed", vec!["bucket=3", "bucket-key=id"]),
    ] {
        let path = dir.path().join("db.db").join(name).to_str().unwrap().to_string();
        let mut create = vec!["create", &path, "--schema", "id BIGINT, p STRING, v BIGINT", "--partition-keys", "p"];
        for o in &options {
            create.extend(["--option", o]);
        }
        let (code, _, err) = strata(&create);
        assert_eq!(code, 0, "{name}: {err}");
        let t = open(&path);
        assert!(t.schema().primary_keys.is_empty());
        let mut model: Vec<Value> = Vec::new();
        // Two commits through `strata write`, two through the Rust API.
        for round in 0..4 {
            let rows = random_rows(&mut rng, 120);
            if round < 2 {
                let input = dir.path().join(format!("{name}-{round}.jsonl"));
                std::fs::write(&input, rows.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
                let (code, _, err) = strata(&["write", &path, "--input", input.to_str().unwrap()]);
                assert_eq!(code, 0, "{name}: {err}");
            } else {
                let mut w = TableWriter::new(&t, "api").unwrap();
                w.write(&rows_batch(&rows)).unwrap();
                w.commit().unwrap();
            }
            model.extend(rows);
        }
        let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
        assert_eq!(sorted(&got), sorted(&model), "{name}: Strata's read");
        if !name.starts_with("fixed") {
            for p in ["a", "b", "c"] {
                assert_eq!(of_partition(&got, p), of_partition(&model, p), "{name}: partition {p} in arrival order");
            }
        }
        assert_eq!(ReadBuilder::new(&t).count().unwrap(), model.len() as u64, "{name}: count");

        let pypaimon = oracle(&["read_options", &json!({"path": path, "options": {}}).to_string()]);
        assert_eq!(sorted(pypaimon.as_array().unwrap()), sorted(&model), "{name}: pypaimon's read");
        let rust = common::paimon_rust("read", &json!({"path": path}));
        assert_eq!(sorted(rust["rows"].as_array().unwrap()), sorted(&model), "{name}: paimon-rust's read");
        let theirs = java_rows(&mut java, &path);
        assert_eq!(sorted(&theirs), sorted(&model), "{name}: Java's read");
        if !name.starts_with("fixed") {
            for p in ["a", "b", "c"] {
                assert_eq!(of_partition(&theirs, p), of_partition(&model, p), "{name}: Java's order in {p}");
            }
        }

        // Java appends to the table Strata wrote; Strata reads Java's rows after its own.
        let more = random_rows(&mut rng, 60);
        java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": more, "compact": "none"}));
        java.call(&json!({"op": "close_writer", "writer": "app"}));
        model.extend(more);
        let t = open(&path);
        let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
        assert_eq!(sorted(&got), sorted(&model), "{name}: Strata's read after Java's append");
        if !name.starts_with("fixed") {
            // Both read a bucket's files by sequence number, so both put Java's rows where its numbers say.
            let theirs = java_rows(&mut java, &path);
            for p in ["a", "b", "c"] {
                assert_eq!(of_partition(&got, p), of_partition(&theirs, p), "{name}: {p} after Java's append");
            }
        }
        // And Strata appends after Java.
        let last = random_rows(&mut rng, 30);
        let mut w = TableWriter::new(&t, "api").unwrap();
        w.write(&rows_batch(&last)).unwrap();
        w.commit().unwrap();
        model.extend(last);
        assert_eq!(sorted(&java_rows(&mut java, &path)), sorted(&model), "{name}: Java after Strata's last append");
    }
}

fn java_rows(java: &mut common::java::JavaPaimon, path: &str) -> Vec<Value> {
    java.read(path, json!({}))
        .into_iter()
        .map(|mut r| {
            assert_eq!(r["_kind"], "+I");
            r.as_object_mut().unwrap().remove("_kind");
            r
        })
        .collect()
}

/// What Paimon refuses, Strata refuses: a retraction written to an append table (unless `ignore-delete`
/// drops it), and fixed buckets without a bucket key.
#[test]
fn retractions_and_fixed_buckets_without_a_bucket_key_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let schema = |options: &[(&str, &str)]| {
        TableSchema::new(
            vec![("id".into(), DataType::bigint()), ("p".into(), DataType::string()), ("v".into(), DataType::bigint())],
            vec![],
            vec![],
            options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            0,
        )
        .unwrap()
    };
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let err = Table::create(io.clone(), &at("fixed"), schema(&[("bucket", "2")])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("bucket-key"), "{err}");

    let rows = vec![json!({"id": 1, "p": "a", "v": 1}), json!({"id": 2, "p": "a", "v": 2})];
    let t = Table::create(io.clone(), &at("plain"), schema(&[("bucket", "-1")])).unwrap();
    let mut w = strata::table::TableWrite::new(&t).unwrap();
    let err = w.write_with_kinds(&rows_batch(&rows), &[0, 3]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("inserts only"), "{err}");
    // Nothing was written: the next commit holds no rows.
    assert!(w.prepare_commit().unwrap().is_empty());

    let t = Table::create(io, &at("ignoring"), schema(&[("bucket", "-1"), ("ignore-delete", "true")])).unwrap();
    let mut w = TableWriter::new(&t, "w").unwrap();
    w.write(&rows_batch(&rows)).unwrap();
    w.commit().unwrap();
    let mut w = strata::table::TableWrite::new(&t).unwrap();
    w.write_with_kinds(&rows_batch(&rows), &[3, 0]).unwrap();
    let messages = w.prepare_commit().unwrap();
    t.new_commit("w")
        .unwrap()
        .commit(&strata::table::Committable { identifier: 1, messages, ..Default::default() })
        .unwrap();
    let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
    assert_eq!(got.len(), 3, "the retraction dropped, the rest appended: {got:?}");
}

/// SQL `INSERT INTO` appends to an append table, duplicates kept; `DELETE` removes the matching rows and
/// keeps the others' order.
#[test]
fn sql_inserts_append_and_deletes_remove_the_matching_rows() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let path = wh.join("db.db/events");
    let (code, _, err) = strata(&["create", path.to_str().unwrap(), "--schema", "id BIGINT, kind STRING"]);
    assert_eq!(code, 0, "{err}");
    let w = wh.to_str().unwrap();
    for _ in 0..2 {
        let (code, _, err) =
            strata(&["sql", "--warehouse", w, "INSERT INTO db.events VALUES (1, 'click'), (2, 'view')"]);
        assert_eq!(code, 0, "{err}");
    }
    let got = json_rows(&ReadBuilder::new(&open(path.to_str().unwrap())).read().unwrap().batches);
    let want = [json!({"id": 1, "kind": "click"}), json!({"id": 2, "kind": "view"})];
    assert_eq!(got, [want.clone(), want.clone()].concat());
    let (code, _, err) = strata(&["sql", "--warehouse", w, "DELETE FROM db.events WHERE id = 1"]);
    assert_eq!(code, 0, "{err}");
    let got = json_rows(&ReadBuilder::new(&open(path.to_str().unwrap())).read().unwrap().batches);
    assert_eq!(got, [want[1].clone(), want[1].clone()]);
}

/// A large append is written as several files on parallel threads: one file per part, numbered in order,
/// so the rows read back as they arrived.
#[test]
fn a_large_append_written_in_parallel_reads_back_in_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big").to_str().unwrap().to_string();
    let (code, _, err) = strata(&["create", &path, "--schema", "id BIGINT, p STRING, v BIGINT"]);
    assert_eq!(code, 0, "{err}");
    let t = open(&path);
    let n = 400_000i64;
    let batch = RecordBatch::try_new(
        rows_batch(&[]).schema(),
        vec![
            Arc::new(Int64Array::from_iter_values((0..n).rev())),
            Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("part-{}", i % 7)))),
            Arc::new(Int64Array::from_iter_values(0..n)),
        ],
    )
    .unwrap();
    let mut w = TableWriter::new(&t, "w").unwrap();
    w.write(&batch).unwrap();
    w.commit().unwrap();
    let s = t.snapshot(None).unwrap().unwrap();
    let mut files: Vec<_> = t.live_files(&s).unwrap().into_iter().map(|e| e.file).collect();
    files.sort_by_key(|f| f.min_sequence_number);
    if strata::io::cores() > 1 {
        assert!(files.len() > 1, "one file for {n} rows");
    }
    for pair in files.windows(2) {
        assert_eq!(pair[0].max_sequence_number + 1, pair[1].min_sequence_number, "{files:?}");
    }
    let ids: Vec<i64> = ReadBuilder::new(&t)
        .read()
        .unwrap()
        .batches
        .iter()
        .flat_map(|b| b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec())
        .collect();
    assert_eq!(ids, (0..n).rev().collect::<Vec<_>>());
}
