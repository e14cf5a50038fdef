//! Issues 51 and 52: Java Paimon 1.4.2's incremental changelog reads of tables Strata writes, against its reads
//! of a twin table Java writes with the same commits: `changelog-producer = lookup` on a deletion-vector table
//! and `input` on a merge-on-read one. Strata's changelog read of each Java commit equals Java's too. Java before 2.0 skips level-0 files in those reads of deletion-vector tables (Paimon #8712), and its
//! compactions record the changelog files they produce at their output level: Strata's must be found the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use strata::spec::Datum;
use strata::{IncrementalMode, ReadBuilder, TableWriter};

use super::java_paimon::open_table;
use crate::common::java::JavaPaimon;

/// One commit: upserts (id, v) and deletes (id).
struct Commit {
    upserts: Vec<(i64, i64)>,
    deletes: Vec<i64>,
}

fn commits() -> Vec<Commit> {
    vec![
        Commit { upserts: (0..40).map(|id| (id, id)).collect(), deletes: vec![] },
        Commit { upserts: (30..60).map(|id| (id, id * 10)).collect(), deletes: vec![] },
        Commit { upserts: vec![(5, -5), (70, 70)], deletes: (0..5).chain(50..55).collect() },
        Commit { upserts: (0..3).map(|id| (id, 1)).collect(), deletes: vec![6, 7, 99] },
    ]
}

fn create(java: &mut JavaPaimon, path: &str, options: &Value) {
    java.call(&json!({
        "op": "create", "path": path,
        "columns": [["id", "BIGINT NOT NULL"], ["v", "BIGINT"]],
        "primary_keys": ["id"],
        "options": options,
    }));
}

fn latest(java: &mut JavaPaimon, path: &str) -> i64 {
    java.call(&json!({"op": "snapshot", "path": path}))["id"].as_i64().unwrap()
}

/// Java's changelog rows between two snapshots, as sorted JSON strings.
fn changelog(java: &mut JavaPaimon, path: &str, from: i64, to: i64) -> Vec<String> {
    let options = json!({"incremental-between": format!("{from},{to}"), "incremental-between-scan-mode": "changelog"});
    let mut rows: Vec<String> = java.read(path, options).iter().map(Value::to_string).collect();
    rows.sort();
    rows
}

/// Strata's incremental changelog read of `(from, to]`, as the sorted JSON strings Java's read gives.
fn strata_changelog(path: &str, from: i64, to: i64) -> Vec<String> {
    let table = open_table(path);
    let read = ReadBuilder::new(&table).incremental_between(from, to).with_mode(IncrementalMode::Changelog);
    let mut rows: Vec<String> = crate::common::json_rows(&read.read().unwrap().batches)
        .into_iter()
        .map(|mut r| {
            let kind = r.as_object_mut().unwrap().remove("rowkind").unwrap();
            json!({"id": r["id"], "v": r["v"], "_kind": kind}).to_string()
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn java_reads_the_lookup_changelog_of_strata_writes_as_of_its_own() {
    twins(json!({"bucket": "2", "deletion-vectors.enabled": "true", "changelog-producer": "lookup"}));
}

#[test]
fn java_reads_the_input_changelog_of_strata_writes_as_of_its_own() {
    twins(json!({"bucket": "2", "changelog-producer": "input"}));
}

/// The same commits into a table Strata writes and its twin Java writes, both with `options`; Java's
/// incremental changelog read of each commit compared.
fn twins(options: Value) {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let (strata_path, java_path) = (
        dir.path().join("db.db/by_strata").to_str().unwrap().to_string(),
        dir.path().join("db.db/by_java").to_str().unwrap().to_string(),
    );
    create(&mut java, &strata_path, &options);
    create(&mut java, &java_path, &options);
    let table = open_table(&strata_path);
    let mut writer = TableWriter::new(&table, "strata").unwrap();
    let (mut strata_from, mut java_from) = (0, 0);
    for (n, c) in commits().iter().enumerate() {
        for &(id, v) in &c.upserts {
            writer.put(vec![Some(Datum::BigInt(id)), Some(Datum::BigInt(v))]).unwrap();
        }
        for &id in &c.deletes {
            writer.delete(vec![Some(Datum::BigInt(id))]).unwrap();
        }
        writer.commit().unwrap();
        let mut rows: Vec<Value> = c.upserts.iter().map(|&(id, v)| json!({"id": id, "v": v})).collect();
        rows.extend(c.deletes.iter().map(|&id| json!({"id": id, "_kind": "-D"})));
        java.call(&json!({"op": "write", "path": java_path, "writer": "app", "rows": rows, "compact": "minor"}));
        let (strata_to, java_to) = (latest(&mut java, &strata_path), latest(&mut java, &java_path));
        let want = changelog(&mut java, &java_path, java_from, java_to);
        assert!(!want.is_empty(), "commit {n}: Java's own table has a changelog");
        let got = changelog(&mut java, &strata_path, strata_from, strata_to);
        assert_eq!(
            got, want,
            "{options}, commit {n}: Java's changelog read of Strata's write ({strata_from}, {strata_to}]"
        );
        let strata = strata_changelog(&java_path, java_from, java_to);
        assert_eq!(
            strata, want,
            "{options}, commit {n}: Strata's changelog read of Java's write ({java_from}, {java_to}]"
        );
        (strata_from, java_from) = (strata_to, java_to);
    }
    java.call(&json!({"op": "close_writer", "writer": "app"}));
}
