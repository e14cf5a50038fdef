//! Java Paimon 1.4.2 and Strata on a table partitioned by a string whose values need escaping in paths
//! (issue 52): spaces, '/', '=', '%', ':', '#', non-ASCII, the empty string. Both write
//! into the same partitions (a second writer must find the first one's directory and files, not make its
//! own), both compact, and each read is compared with a model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use serde_json::{json, Value};
use strata::spec::Datum;
use strata::{ReadBuilder, TableWriter};

use super::java_paimon::{open_after_java, open_table};
use crate::common::java::JavaPaimon;

/// (partition value, id) -> v.
pub(crate) type Rows = BTreeMap<(Option<String>, i64), i64>;

pub(crate) const PARTITIONS: &[Option<&str>] =
    &[Some("plain"), Some("a b"), Some("x/y"), Some("k=v"), Some("50%"), Some("c:d#e"), Some("ünï"), Some("")];

fn java_rows(rows: &[Value]) -> Rows {
    let mut out = Rows::new();
    for r in rows {
        let key = (r["p"].as_str().map(str::to_string), r["id"].as_i64().unwrap());
        assert!(out.insert(key.clone(), r["v"].as_i64().unwrap()).is_none(), "Java read {key:?} twice");
    }
    out
}

pub(crate) fn strata_rows(path: &str) -> Rows {
    let t = open_table(path);
    let mut out = Rows::new();
    for b in ReadBuilder::new(&t).read().unwrap().batches {
        let p = b.column_by_name("p").unwrap().as_string::<i32>();
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let vs = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let key = (p.is_valid(i).then(|| p.value(i).to_string()), ids.value(i));
            assert!(out.insert(key.clone(), vs.value(i)).is_none(), "Strata read {key:?} twice");
        }
    }
    out
}

fn check(java: &mut JavaPaimon, path: &str, what: &str, model: &Rows) {
    assert_eq!(&java_rows(&java.read(path, json!({}))), model, "{what}: Java's read");
    assert_eq!(&strata_rows(path), model, "{what}: Strata's read");
}

fn tables_partitioned_by_escaped_strings(deletion_vectors: bool) {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db/t").to_str().unwrap().to_string();
    java.call(&json!({
        "op": "create", "path": path,
        "columns": [["p", "STRING"], ["id", "BIGINT NOT NULL"], ["v", "BIGINT"]],
        "primary_keys": ["p", "id"], "partition_keys": ["p"],
        "options": {"bucket": "2", "deletion-vectors.enabled": deletion_vectors.to_string()},
    }));
    let mut model = Rows::new();
    let rows: Vec<Value> =
        PARTITIONS.iter().flat_map(|p| (0..20).map(move |id| json!({"p": p, "id": id, "v": id}))).collect();
    for (p, id) in PARTITIONS.iter().flat_map(|p| (0..20).map(move |id| (p.map(str::to_string), id))) {
        model.insert((p, id), id);
    }
    java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "minor"}));
    java.call(&json!({"op": "close_writer", "writer": "app"}));
    check(&mut java, &path, "Java's write", &model);

    let mut w = TableWriter::new(&open_after_java(&path), "strata").unwrap();
    for p in PARTITIONS {
        for id in 10..30 {
            w.put(vec![p.map(|p| Datum::String(p.to_string())), Some(Datum::BigInt(id)), Some(Datum::BigInt(id * 10))])
                .unwrap();
            model.insert((p.map(str::to_string), id), id * 10);
        }
        w.delete(vec![p.map(|p| Datum::String(p.to_string())), Some(Datum::BigInt(0))]).unwrap();
        model.remove(&(p.map(str::to_string), 0));
    }
    w.commit().unwrap();
    w.compact(true).unwrap();
    check(&mut java, &path, "Strata's write and full compaction into Java's partitions", &model);
    let partition_dirs = std::fs::read_dir(dir.path().join("db.db/t"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("p="))
        .count();
    assert_eq!(partition_dirs, PARTITIONS.len(), "one directory per partition, whoever wrote into it");

    let rows: Vec<Value> = PARTITIONS.iter().map(|p| json!({"p": p, "id": 1, "_kind": "-D"})).collect();
    for p in PARTITIONS {
        model.remove(&(p.map(str::to_string), 1));
    }
    java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "full"}));
    java.call(&json!({"op": "close_writer", "writer": "app"}));
    check(&mut java, &path, "Java's deletes and full compaction of Strata's files", &model);
}

#[test]
fn deletion_vector_tables_partitioned_by_escaped_strings_pass_between_java_and_strata() {
    tables_partitioned_by_escaped_strings(true);
}

#[test]
fn merge_on_read_tables_partitioned_by_escaped_strings_pass_between_java_and_strata() {
    tables_partitioned_by_escaped_strings(false);
}
