//! Append-table compaction (issue 54), as Paimon's: a fixed bucket compacts a window of small files after its
//! writes (`compaction.min.file-num`), keeping its rows' order; `strata compact` packs an unaware table's small
//! files per partition (Paimon's `AppendCompactCoordinator`) and fully compacts fixed buckets. Every row stays
//! once: Strata, pypaimon 2.1.0, paimon-rust 0.4.0 and Java Paimon 1.4.2 read the model's rows after Strata's
//! compactions, Strata after Java's, and two compactions of the same files never both land.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{json_rows, oracle, strata};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::spec::{CommitKind, ErrorKind};
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableWrite, TableWriter};

fn open(path: &str) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    Table::open(io, path).unwrap()
}

fn sorted(rows: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            let m: BTreeMap<String, Value> =
                r.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            serde_json::to_string(&m).unwrap()
        })
        .collect();
    out.sort();
    out
}

/// Rows `{n, id, p}`: `n` numbers them in arrival order.
pub(crate) fn batch(rows: &[Value]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", ArrowType::Int64, true),
        Field::new("id", ArrowType::Int64, true),
        Field::new("p", ArrowType::Utf8, true),
    ]));
    let col = |k: &str| Arc::new(Int64Array::from(rows.iter().map(|r| r[k].as_i64()).collect::<Vec<_>>()));
    RecordBatch::try_new(
        schema,
        vec![
            col("n"),
            col("id"),
            Arc::new(StringArray::from(rows.iter().map(|r| r["p"].as_str().map(str::to_string)).collect::<Vec<_>>())),
        ],
    )
    .unwrap()
}

/// Random rows appended to a table, and the model of all of them.
pub(crate) struct Appends {
    rng: rand::rngs::StdRng,
    next: i64,
    pub(crate) model: Vec<Value>,
}

impl Appends {
    pub(crate) fn new(seed: u64) -> Self {
        Appends { rng: rand::rngs::StdRng::seed_from_u64(seed), next: 0, model: Vec::new() }
    }

    pub(crate) fn rows(&mut self, count: usize) -> Vec<Value> {
        let rows: Vec<Value> = (0..count)
            .map(|_| {
                self.next += 1;
                let p = ["a", "b"][self.rng.random_range(0..2)];
                json!({"n": self.next, "id": self.rng.random_range(0..30), "p": p})
            })
            .collect();
        self.model.extend(rows.iter().cloned());
        rows
    }

    /// `commits` commits of `count` rows each, by Strata.
    pub(crate) fn commit(&mut self, path: &str, commits: usize, count: usize) {
        let t = open(path);
        for _ in 0..commits {
            let rows = self.rows(count);
            let mut w = TableWriter::new(&t, "app").unwrap();
            w.write(&batch(&rows)).unwrap();
            w.commit().unwrap();
        }
    }
}

pub(crate) fn create(path: &str, options: &[&str]) {
    let mut args = vec!["create", path, "--schema", "n BIGINT, id BIGINT, p STRING", "--partition-keys", "p"];
    for o in options {
        args.extend(["--option", o]);
    }
    let (code, _, err) = strata(&args);
    assert_eq!(code, 0, "{err}");
}

/// Live data files per (partition, bucket).
pub(crate) fn files_per_bucket(t: &Table) -> BTreeMap<(Vec<u8>, i32), usize> {
    let s = t.snapshot(None).unwrap().unwrap();
    let mut out = BTreeMap::new();
    for e in t.live_files(&s).unwrap() {
        *out.entry((e.partition.serialize(), e.bucket)).or_default() += 1;
    }
    out
}

pub(crate) fn compact_snapshots(t: &Table) -> usize {
    let latest = t.snapshot(None).unwrap().unwrap().id;
    (1..=latest).filter(|&id| t.snapshot(Some(id)).unwrap().unwrap().commit_kind == CommitKind::Compact).count()
}

/// Every row of the model, read by Strata, pypaimon, paimon-rust and Java; rows of one key (one bucket) in
/// arrival order in Strata's read where `ordered`.
pub(crate) fn check_reads(java: &mut common::java::JavaPaimon, path: &str, model: &[Value], ordered: bool, what: &str) {
    let t = open(path);
    let got = json_rows(&ReadBuilder::new(&t).read().unwrap().batches);
    assert_eq!(sorted(&got), sorted(model), "{what}: Strata's read");
    if ordered {
        let mut last: BTreeMap<(String, i64), i64> = BTreeMap::new();
        for r in &got {
            let key = (r["p"].as_str().unwrap().to_string(), r["id"].as_i64().unwrap());
            let n = r["n"].as_i64().unwrap();
            assert!(last.insert(key.clone(), n).is_none_or(|before| before < n), "{what}: {key:?} out of order");
        }
    }
    let pypaimon = oracle(&["read_options", &json!({"path": path, "options": {}}).to_string()]);
    assert_eq!(sorted(pypaimon.as_array().unwrap()), sorted(model), "{what}: pypaimon's read");
    let rust = common::paimon_rust("read", &json!({"path": path}));
    assert_eq!(sorted(rust["rows"].as_array().unwrap()), sorted(model), "{what}: paimon-rust's read");
    let theirs: Vec<Value> = java
        .read(path, json!({}))
        .into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("_kind");
            r
        })
        .collect();
    assert_eq!(sorted(&theirs), sorted(model), "{what}: Java's read");
}

/// A fixed-bucket append table Strata writes compacts each bucket's small files once three of them gather
/// (as Java's writer does), and a bucket's rows keep their order; Java then appends and compacts the table
/// fully, and Strata reads every row after it, and compacts after Java.
#[test]
fn fixed_buckets_compact_small_files_after_writes_keeping_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db").join("fixed").to_str().unwrap().to_string();
    create(&path, &["bucket=2", "bucket-key=id", "compaction.min.file-num=3"]);
    let mut java = common::java::JavaPaimon::start();
    let mut a = Appends::new(541);
    a.commit(&path, 7, 40);
    let t = open(&path);
    assert!(compact_snapshots(&t) >= 2, "compactions after writes");
    for (bucket, n) in files_per_bucket(&t) {
        assert!(n < 3, "{bucket:?}: {n} files left after the compactions");
    }
    check_reads(&mut java, &path, &a.model, true, "after Strata's compactions");

    let more = a.rows(50);
    java.call(&json!({"op": "write", "path": path, "writer": "j", "rows": more, "compact": "full"}));
    java.call(&json!({"op": "close_writer", "writer": "j"}));
    check_reads(&mut java, &path, &a.model, true, "after Java's append and full compaction");

    a.commit(&path, 3, 20);
    let (code, out, err) = strata(&["compact", &path, "--full"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("compacted") || out.contains("nothing"), "{out}");
    check_reads(&mut java, &path, &a.model, true, "after Strata's full compaction");
}

/// `strata compact` packs an unaware table's small files per partition, as Java's dedicated compaction does,
/// and each reads what the other compacted; a partition with too few small files is left alone.
#[test]
fn strata_compact_packs_an_unaware_tables_small_files_as_java_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db").join("events").to_str().unwrap().to_string();
    create(&path, &["compaction.min.file-num=4"]);
    let mut java = common::java::JavaPaimon::start();
    let mut a = Appends::new(542);
    a.commit(&path, 3, 30);
    let (code, out, err) = strata(&["compact", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing to compact"), "three files per partition are fewer than four: {out}");
    a.commit(&path, 3, 30);
    let (code, out, err) = strata(&["compact", &path]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("12 files replaced by 2"), "{out}");
    assert!(files_per_bucket(&open(&path)).values().all(|&n| n == 1));
    check_reads(&mut java, &path, &a.model, false, "after Strata's compaction");

    // Java's coordinator compacts what Strata appended next, and Strata reads it.
    a.commit(&path, 4, 25);
    let planned = java.call(&json!({"op": "compact_unaware", "path": path}));
    assert_eq!(planned["tasks"], 2, "one task per partition: {planned}");
    assert!(files_per_bucket(&open(&path)).values().all(|&n| n == 1));
    check_reads(&mut java, &path, &a.model, false, "after Java's compaction");
}

/// Two compactions of the same files prepared at once: the first lands, the second is refused as a conflict
/// (landing both would double the rows), and the table keeps each row once.
#[test]
fn two_compactions_of_the_same_append_files_never_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db").join("events").to_str().unwrap().to_string();
    create(&path, &["compaction.min.file-num=2"]);
    let mut a = Appends::new(543);
    a.commit(&path, 3, 30);
    let t = open(&path);
    let prepare = || {
        let mut w = TableWrite::for_compaction(&t).unwrap();
        w.open_all_buckets().unwrap();
        w.prepare_commit_with(false, None).unwrap()
    };
    let (first, second) = (prepare(), prepare());
    assert!(!first.is_empty() && !second.is_empty());
    let commit = |messages, id| {
        t.new_commit("compactor").unwrap().commit(&strata::table::Committable {
            identifier: id,
            messages,
            ..Default::default()
        })
    };
    commit(first, 1).unwrap();
    let err = commit(second, 2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
    assert_eq!(sorted(&got), sorted(&a.model));
}

/// A bucket writer whose option makes no sense is refused with the option named.
#[test]
fn a_nonsensical_compaction_option_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db").join("events").to_str().unwrap().to_string();
    create(&path, &["bucket=1", "bucket-key=id", "compaction.min.file-num=0"]);
    let t = open(&path);
    let mut w = TableWriter::new(&t, "app").unwrap();
    let err = w.write(&batch(&[json!({"n": 1, "id": 1, "p": "a"})])).and_then(|_| w.commit()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("compaction.min.file-num"), "{err}");
}
