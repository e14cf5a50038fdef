//! SQL `DELETE` on append tables (issue 54): the rows a condition matches go, by position, marked in
//! deletion vectors when the table has them (as Spark's DELETE writes) or by rewriting the files they are in;
//! the rows left match a model in Strata, pypaimon 2.1.0, paimon-rust 0.4.0 and Java Paimon 1.4.2, through
//! Strata's and Java's compactions; a delete and a compaction of the same file never both land.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::append_compaction::{check_reads, create, Appends};
use crate::append_writes::{open, sorted};
use crate::common;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::BooleanArray;
use common::{json_rows, strata};
use serde_json::{json, Value};
use strata::spec::{CommitKind, ErrorKind};
use strata::{ReadBuilder, TableWrite};

fn sql(warehouse: &str, statement: &str) -> String {
    let (code, out, err) = strata(&["sql", "--warehouse", warehouse, statement]);
    assert_eq!(code, 0, "{statement}: {err}");
    out
}

/// Whether the model's row goes.
type RowTest = Box<dyn Fn(&Value) -> bool>;

/// A delete condition, as SQL and as the model's test.
fn condition(round: i64) -> (String, RowTest) {
    let (k, r) = (2 + round % 3, round % 2);
    let low = round * 30;
    (
        format!("id % {k} = {r} AND n > {low} AND n <= {}", low + 60),
        Box::new(move |row: &Value| {
            let (id, n) = (row["id"].as_i64().unwrap(), row["n"].as_i64().unwrap());
            id % k == r && n > low && n <= low + 60
        }),
    )
}

/// The append tables row-level changes run on (name, `strata create` options): unaware and fixed buckets,
/// with and without deletion vectors, compacting once three small files gather.
pub(crate) fn table_kinds() -> [(&'static str, Vec<&'static str>); 4] {
    [
        ("unaware_dv", vec!["deletion-vectors.enabled=true", "compaction.min.file-num=3"]),
        ("unaware", vec!["compaction.min.file-num=3"]),
        ("fixed_dv", vec!["bucket=2", "bucket-key=id", "deletion-vectors.enabled=true", "compaction.min.file-num=3"]),
        ("fixed", vec!["bucket=2", "bucket-key=id", "compaction.min.file-num=3"]),
    ]
}

/// Rounds of appends, deletes and compactions on unaware and fixed-bucket tables, with and without deletion
/// vectors: after each round Strata reads the model's rows (a key's rows in arrival order in a fixed
/// bucket), and at the end every engine does, before and after Java compacts the table.
#[test]
fn sql_deletes_on_append_tables_leave_the_models_rows_in_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let warehouse = wh.to_str().unwrap();
    let mut java = common::java::JavaPaimon::start();
    for (seed, (name, options)) in table_kinds().into_iter().enumerate() {
        let path = wh.join("db.db").join(name).to_str().unwrap().to_string();
        create(&path, &options);
        let dv = name.ends_with("_dv");
        let fixed = name.starts_with("fixed");
        let mut a = Appends::new(560 + seed as u64);
        for round in 0..6 {
            a.commit(&path, 1, 40);
            let (cond, goes) = condition(round);
            let last = open(&path).snapshot(None).unwrap().unwrap().id;
            let out = sql(warehouse, &format!("DELETE FROM db.{name} WHERE {cond}"));
            let before = a.model.len();
            a.model.retain(|r| !goes(r));
            assert!(out.contains(&(before - a.model.len()).to_string()), "{name}: the count deleted: {out}");
            // One OVERWRITE snapshot, as Paimon commits a row-level change (streaming readers skip it).
            let s = open(&path).snapshot(None).unwrap().unwrap();
            assert_eq!((s.id, s.commit_kind), (last + 1, CommitKind::Overwrite), "{name}: round {round}");
            if round % 3 == 2 {
                let (code, _, err) = strata(&["compact", &path]);
                assert_eq!(code, 0, "{name}: {err}");
            }
            let t = open(&path);
            let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
            assert_eq!(sorted(&got), sorted(&a.model), "{name}: round {round}");
            let s = t.snapshot(None).unwrap().unwrap();
            if !dv {
                assert!(t.deletion_files(&s).unwrap().is_empty(), "{name}: vectors without deletion-vectors.enabled");
            }
        }
        check_reads(&mut java, &path, &a.model, fixed, &format!("{name} after Strata's deletes"));
        if fixed {
            let more = a.rows(30);
            java.call(&json!({"op": "write", "path": path, "writer": name, "rows": more, "compact": "full"}));
            java.call(&json!({"op": "close_writer", "writer": name}));
        } else {
            java.call(&json!({"op": "compact_unaware", "path": path}));
        }
        check_reads(&mut java, &path, &a.model, fixed, &format!("{name} after Java's compaction"));
        // Strata deletes again over what Java wrote. Vectors in a fixed bucket that Java's writer just
        // compacted are refused (that writer would commit its vectors over them); once it is known to have
        // stopped, the window goes to zero and the delete lands.
        let (cond, goes) = condition(1);
        let delete = format!("DELETE FROM db.{name} WHERE {cond} OR n % 7 = 0");
        if fixed && dv {
            let (code, _, err) = strata(&["sql", "--warehouse", warehouse, &delete]);
            assert!(code != 0 && err.contains("compacted by another engine"), "{name}: {err}");
            let (code, _, err) = strata(&["alter", &path, "--set", "strata.foreign-compaction.window=0s"]);
            assert_eq!(code, 0, "{err}");
        }
        sql(warehouse, &delete);
        a.model.retain(|r| !(goes(r) || r["n"].as_i64().unwrap() % 7 == 0));
        check_reads(&mut java, &path, &a.model, fixed, &format!("{name} after Strata's delete over Java's files"));
    }
}

/// A delete prepared while a compaction of the same files lands (and the other way round) is refused as a
/// conflict, with and without deletion vectors: landing both would bring the deleted rows back (the
/// compaction rewrote them) or drop the delete's vectors with the files they mark.
#[test]
fn a_delete_and_a_compaction_of_the_same_files_never_both_land() {
    for options in
        [vec!["deletion-vectors.enabled=true", "compaction.min.file-num=2"], vec!["compaction.min.file-num=2"]]
    {
        for delete_first in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("db.db").join("events").to_str().unwrap().to_string();
            create(&path, &options);
            let mut a = Appends::new(570);
            a.commit(&path, 3, 30);
            let t = open(&path);
            let mut compaction = TableWrite::for_compaction(&t).unwrap();
            compaction.open_all_buckets().unwrap();
            let compacted = compaction.prepare_commit_with(false, None).unwrap();
            let mut delete = TableWrite::new(&t).unwrap();
            let mut even = |b: &arrow_array::RecordBatch| -> strata::Result<BooleanArray> {
                let n = b.column_by_name("n").unwrap().as_primitive::<Int64Type>();
                Ok(n.iter().map(|v| v.map(|v| v % 2 == 0)).collect())
            };
            let deleted = delete.delete_matching(&mut even).unwrap();
            assert_eq!(deleted, 45);
            let deletion = delete.prepare_commit().unwrap();
            let commit = |messages, id| {
                t.new_commit("test").unwrap().commit(&strata::table::Committable {
                    identifier: id,
                    messages,
                    ..Default::default()
                })
            };
            let (first, second) = if delete_first { (deletion, compacted) } else { (compacted, deletion) };
            commit(first, 1).unwrap();
            let err = commit(second, 2).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{options:?}, delete first: {delete_first}: {err}");
            let want: Vec<Value> = if delete_first {
                a.model.iter().filter(|r| r["n"].as_i64().unwrap() % 2 != 0).cloned().collect()
            } else {
                a.model.clone()
            };
            let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
            assert_eq!(sorted(&got), sorted(&want), "{options:?}, delete first: {delete_first}");
        }
    }
}

/// Deleting by a filter is for append tables: a primary-key table's rows go by key.
#[test]
fn deleting_by_a_filter_from_a_primary_key_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db").join("t");
    let (code, _, err) = common::strata_create(path.to_str().unwrap(), "id BIGINT NOT NULL, v BIGINT", "id", &[], &[]);
    assert_eq!(code, 0, "{err}");
    let mut w = TableWrite::new(&open(path.to_str().unwrap())).unwrap();
    let err = w.delete_matching(&mut |b| Ok(BooleanArray::from(vec![true; b.num_rows()]))).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
}

/// A writer that keeps running beside a delete (its bucket writers opened before the delete changed the
/// files and vectors) compacts afterwards without a conflict: writers holding nothing uncommitted start again
/// from the latest snapshot. (The append soak found the conflict.)
#[test]
fn a_writer_opened_before_a_delete_compacts_after_it() {
    for options in
        [vec!["deletion-vectors.enabled=true", "compaction.min.file-num=2"], vec!["compaction.min.file-num=2"]]
    {
        let dir = tempfile::tempdir().unwrap();
        let wh = dir.path().join("wh");
        let path = wh.join("db.db").join("events").to_str().unwrap().to_string();
        create(&path, &options);
        let mut a = Appends::new(580);
        let t = open(&path);
        let mut w = strata::TableWriter::new(&t, "long-lived").unwrap();
        for _ in 0..3 {
            let rows = a.rows(20);
            w.write(&crate::append_compaction::batch(&rows)).unwrap();
            w.commit().unwrap();
        }
        sql(wh.to_str().unwrap(), "DELETE FROM db.events WHERE n % 3 = 0");
        a.model.retain(|r| r["n"].as_i64().unwrap() % 3 != 0);
        w.compact(true).unwrap();
        let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
        assert_eq!(sorted(&got), sorted(&a.model), "{options:?}");
    }
}

/// Files written before a column was added are compacted and deleted from with the column read as null:
/// the rewrite reads every file through its schema's mapping (Java reads the same rows).
#[test]
fn compactions_and_deletes_read_files_of_older_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let path = wh.join("db.db").join("events").to_str().unwrap().to_string();
    create(&path, &["bucket=1", "bucket-key=id", "compaction.min.file-num=3", "deletion-vectors.enabled=true"]);
    let mut a = Appends::new(590);
    a.commit(&path, 2, 20);
    let (code, _, err) = strata(&["alter", &path, "--add-column", "note STRING"]);
    assert_eq!(code, 0, "{err}");
    a.commit(&path, 1, 20);
    sql(wh.to_str().unwrap(), "DELETE FROM db.events WHERE n % 4 = 0 AND note IS NULL");
    a.model.retain(|r| r["n"].as_i64().unwrap() % 4 != 0);
    let (code, _, err) = strata(&["compact", &path, "--full"]);
    assert_eq!(code, 0, "{err}");
    let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
    let want: Vec<Value> = a
        .model
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["note"] = Value::Null;
            r
        })
        .collect();
    assert_eq!(sorted(&got), sorted(&want));
    let files = crate::append_compaction::files_per_bucket(&open(&path));
    assert!(files.values().all(|&n| n == 1), "one file per bucket after the full compaction: {files:?}");
    let mut java = common::java::JavaPaimon::start();
    let theirs: Vec<Value> = java
        .read(&path, json!({}))
        .into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("_kind");
            r
        })
        .collect();
    assert_eq!(sorted(&theirs), sorted(&want), "Java's read");
}
