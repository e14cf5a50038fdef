//! Java Paimon 1.4.2, the reference implementation, against Strata in both directions on one table: Java
//! writes (its writer compacting as its defaults say, deletion-vector lookups included), Strata reads, writes
//! and compacts, Java reads what Strata made and writes on, for deletion-vector and merge-on-read tables in
//! parquet and ORC. Every read, Java's and Strata's, is compared to a `BTreeMap` model of the rows each
//! writer was given, never to the other engine's read.
//!
//! Java's writers here are opened for one round and closed: a writer kept open across another engine's
//! compaction holds stale levels, the race of issue 51, which needs its own test.
//!
//! Table: id BIGINT NOT NULL (primary key), name STRING, v BIGINT; 2 buckets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use common::java::{JavaPaimon, Oracle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::spec::Datum;
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

/// A row's values besides its key: (name, v).
pub(crate) type Values = (Option<String>, Option<i64>);

/// id -> its values.
pub(crate) type Model = BTreeMap<i64, Values>;

/// Ids come from 0..KEYS, so rounds overwrite and delete each other's keys.
const KEYS: i64 = 300;

pub(crate) fn same(what: &str, got: &Model, want: &Model) {
    if got == want {
        return;
    }
    let missing: Vec<&i64> = want.keys().filter(|k| !got.contains_key(*k)).take(8).collect();
    let extra: Vec<&i64> = got.keys().filter(|k| !want.contains_key(*k)).take(8).collect();
    let differ: Vec<_> =
        want.iter().filter_map(|(k, v)| got.get(k).filter(|g| *g != v).map(|g| (k, v, g))).take(4).collect();
    panic!(
        "{what}: {} rows read, the model has {}; missing {missing:?}; extra (deleted keys back?) {extra:?}; \
         differing (key, model, read) {differ:?}",
        got.len(),
        want.len()
    );
}

/// Java's rows as the model holds them; a key read twice, or a row kind other than +I, fails.
pub(crate) fn java_rows(rows: &[Value]) -> Model {
    let mut m = Model::new();
    for r in rows {
        assert_eq!(r["_kind"], "+I", "Java read a row of kind {} in a batch read: {r}", r["_kind"]);
        let id = r["id"].as_i64().unwrap();
        let row = (r["name"].as_str().map(str::to_string), r["v"].as_i64());
        assert!(m.insert(id, row).is_none(), "Java read key {id} twice");
    }
    m
}

/// Strata's rows as the model holds them; a key read twice fails.
pub(crate) fn strata_rows(batches: &[RecordBatch]) -> Model {
    let mut m = Model::new();
    for b in batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let names = b.column_by_name("name").unwrap().as_string::<i32>();
        let vs = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let row = (names.is_valid(i).then(|| names.value(i).to_string()), vs.is_valid(i).then(|| vs.value(i)));
            assert!(m.insert(ids.value(i), row).is_none(), "Strata read key {} twice", ids.value(i));
        }
    }
    m
}

pub(crate) fn strata_read(path: &str) -> Model {
    strata_rows(&ReadBuilder::new(&open_table(path)).read().unwrap().batches)
}

/// The table at `path` on the local file system.
pub(crate) fn open_table(path: &str) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    Table::open(io, path).unwrap()
}

/// Java creates the table `db.t` in `dir` (id BIGINT NOT NULL, the primary key; name STRING; v BIGINT) with
/// `options`; its path.
pub(crate) fn java_create(java: &mut JavaPaimon, dir: &tempfile::TempDir, options: Value) -> String {
    let path = dir.path().join("db.db/t").to_str().unwrap().to_string();
    java.call(&json!({
        "op": "create", "path": path,
        "columns": [["id", "BIGINT NOT NULL"], ["name", "STRING"], ["v", "BIGINT"]],
        "primary_keys": ["id"],
        "options": options,
    }));
    path
}

/// One random operation: a delete (about one in six) or an upsert, applied to the model.
pub(crate) fn random_op(rng: &mut StdRng, round: usize, model: &mut Model) -> (i64, Option<Values>) {
    let id = rng.random_range(0..KEYS);
    if rng.random_bool(1.0 / 6.0) {
        model.remove(&id);
        return (id, None);
    }
    let name = rng.random_bool(0.9).then(|| format!("n{}-r{round}", rng.random_range(0..1000)));
    let v = rng.random_bool(0.9).then(|| rng.random_range(-1_000_000..1_000_000));
    model.insert(id, (name.clone(), v));
    (id, Some((name, v)))
}

/// A random number (from `rows`) of random operations as the Java driver's rows, applied to the model.
pub(crate) fn random_java_rows(rng: &mut StdRng, round: usize, rows: Range<usize>, model: &mut Model) -> Vec<Value> {
    (0..rng.random_range(rows))
        .map(|_| match random_op(rng, round, model) {
            (id, None) => json!({"id": id, "_kind": "-D"}),
            (id, Some((name, v))) => json!({"id": id, "name": name, "v": v}),
        })
        .collect()
}

/// A random number (from `rows`) of random operations put or deleted through `w`, applied to the model.
pub(crate) fn random_strata_ops(
    w: &mut TableWriter,
    rng: &mut StdRng,
    round: usize,
    rows: Range<usize>,
    model: &mut Model,
) {
    for _ in 0..rng.random_range(rows) {
        match random_op(rng, round, model) {
            (id, None) => w.delete(vec![Some(Datum::BigInt(id))]).unwrap(),
            (id, Some((name, v))) => {
                w.put(vec![Some(Datum::BigInt(id)), name.map(Datum::String), v.map(Datum::BigInt)]).unwrap()
            }
        }
    }
}

/// The table at `path`, opened to write and compact after Java's writers have stopped: they are closed
/// between rounds, so Strata may compact the buckets they compacted a moment ago (java_races has what
/// happens beside one still running).
pub(crate) fn open_after_java(path: &str) -> Table {
    let mut t = open_table(path);
    t.set_foreign_compaction_window(std::time::Duration::ZERO);
    t
}

/// Java's writer "app" commits a random number (from `rows`) of random operations with its compaction,
/// then is closed.
pub(crate) fn java_random_commit(
    java: &mut JavaPaimon,
    path: &str,
    rng: &mut StdRng,
    round: usize,
    rows: Range<usize>,
    model: &mut Model,
) {
    let rows = random_java_rows(rng, round, rows, model);
    java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "minor"}));
    java.call(&json!({"op": "close_writer", "writer": "app"}));
}

/// Strata commits a random number (from `rows`) of random operations.
pub(crate) fn strata_random_commit(path: &str, rng: &mut StdRng, round: usize, rows: Range<usize>, model: &mut Model) {
    let mut w = TableWriter::new(&open_after_java(path), "strata").unwrap();
    random_strata_ops(&mut w, rng, round, rows, model);
    w.commit().unwrap();
}

/// Java's writer `writer` commits `commits` commits of random operations, waiting for the compaction each
/// write starts (deletion-vector tables show level 0 only once compacted).
fn java_writes(java: &mut JavaPaimon, path: &str, rng: &mut StdRng, round: usize, commits: usize, model: &mut Model) {
    for _ in 0..commits {
        let rows = random_java_rows(rng, round, 20..120, model);
        java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "minor"}));
    }
    java.call(&json!({"op": "close_writer", "writer": "app"}));
}

/// Strata commits `commits` commits of random operations, then compacts (fully when `full`).
fn strata_writes(path: &str, rng: &mut StdRng, round: usize, commits: usize, full: bool, model: &mut Model) {
    let mut w = TableWriter::new(&open_after_java(path), "strata").unwrap();
    for _ in 0..commits {
        random_strata_ops(&mut w, rng, round, 20..120, model);
        w.commit().unwrap();
    }
    w.compact(full).unwrap();
}

/// Rounds of Java writes and Strata writes and compactions on one table, every read checked by both.
fn both_directions(format: &str, deletion_vectors: bool, seed: u64) {
    both_directions_with(format, deletion_vectors, seed, json!({}));
}

/// [`both_directions`] on a table with the `extra` options too.
fn both_directions_with(format: &str, deletion_vectors: bool, seed: u64, extra: Value) {
    both_directions_on(Oracle::Paimon, format, deletion_vectors, seed, extra);
}

/// [`both_directions_with`] against the Java Paimon of `oracle`.
pub(crate) fn both_directions_on(oracle: Oracle, format: &str, deletion_vectors: bool, seed: u64, extra: Value) {
    let dir = tempfile::tempdir().unwrap();
    let what = format!("{format}, deletion-vectors {deletion_vectors}, {extra}");
    let mut java = JavaPaimon::start_oracle(oracle);
    let mut options =
        json!({"bucket": "2", "file.format": format, "deletion-vectors.enabled": deletion_vectors.to_string()});
    for (k, v) in extra.as_object().unwrap() {
        options[k] = v.clone();
    }
    let path = java_create(&mut java, &dir, options);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    for round in 0..3 {
        java_writes(&mut java, &path, &mut rng, round, 3, &mut model);
        same(&format!("{what}: round {round}, Strata reads Java's writes"), &strata_read(&path), &model);
        same(
            &format!("{what}: round {round}, Java reads its writes"),
            &java_rows(&java.read(&path, json!({}))),
            &model,
        );
        strata_writes(&path, &mut rng, round, 3, round == 1, &mut model);
        same(&format!("{what}: round {round}, Strata reads its writes"), &strata_read(&path), &model);
        let java_read = java_rows(&java.read(&path, json!({})));
        same(&format!("{what}: round {round}, Java reads Strata's writes and compaction"), &java_read, &model);
    }
    // Java's own full compaction of what both wrote, then both read it.
    java.call(&json!({"op": "compact", "path": path, "writer": "compactor", "full": true}));
    same(&format!("{what}: after Java's full compaction, Strata"), &strata_read(&path), &model);
    same(&format!("{what}: after Java's full compaction, Java"), &java_rows(&java.read(&path, json!({}))), &model);
}

#[test]
fn deletion_vector_parquet_tables_pass_between_java_and_strata() {
    both_directions("parquet", true, 1);
}

#[test]
fn deletion_vector_orc_tables_pass_between_java_and_strata() {
    both_directions("orc", true, 2);
}

#[test]
fn merge_on_read_tables_pass_between_java_and_strata() {
    both_directions("parquet", false, 3);
}

#[test]
fn sixty_four_bit_deletion_vector_tables_pass_between_java_and_strata() {
    both_directions_with("parquet", true, 4, json!({"deletion-vectors.bitmap64": "true"}));
}

#[test]
fn dynamic_bucket_tables_pass_between_java_and_strata() {
    let dynamic = json!({"bucket": "-1", "dynamic-bucket.target-row-num": "40"});
    both_directions_with("parquet", true, 5, dynamic.clone());
    both_directions_with("parquet", false, 6, dynamic);
}

/// The codec of every column chunk of the data files at `level` of the table at `path`, by file.
fn codecs_at_level(path: &str, level: i32) -> Vec<String> {
    let t = open_after_java(path);
    let s = t.snapshot(None).unwrap().unwrap();
    let mut out = Vec::new();
    for e in t.live_files(&s).unwrap().iter().filter(|e| e.file.level == level) {
        let file = std::fs::File::open(t.data_file_path(e).unwrap()).unwrap();
        let meta = parquet::file::reader::SerializedFileReader::new(file).unwrap();
        let meta = parquet::file::reader::FileReader::metadata(&meta);
        let mut codecs: Vec<String> = meta
            .row_groups()
            .iter()
            .flat_map(|g| g.columns().iter().map(|c| format!("{:?}", c.compression())))
            .collect();
        codecs.dedup();
        out.push(codecs.join(","));
    }
    out
}

/// `file.compression.per.level` (Paimon's option) is honoured: level-0 files in the codec it names, the
/// rest in `file.compression`; Java Paimon reads both.
#[test]
fn per_level_compression_is_honoured_and_java_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut java = JavaPaimon::start();
    let path = java_create(
        &mut java,
        &dir,
        json!({"bucket": "2", "file.compression.per.level": "0:lz4", "write-only": "true"}),
    );
    let mut rng = StdRng::seed_from_u64(50);
    let mut model = Model::new();
    for round in 0..2 {
        strata_random_commit(&path, &mut rng, round, 50..100, &mut model);
    }
    let level0 = codecs_at_level(&path, 0);
    assert!(!level0.is_empty() && level0.iter().all(|c| c == "LZ4_RAW"), "level-0 files: {level0:?}");
    same("Java reads Strata's lz4 level-0 files", &java_rows(&java.read(&path, json!({}))), &model);
    TableWriter::new(&open_after_java(&path), "strata").unwrap().compact(true).unwrap();
    let top = codecs_at_level(&path, 5);
    assert!(!top.is_empty() && top.iter().all(|c| c.starts_with("ZSTD")), "max-level files: {top:?}");
    same("Java reads after Strata's full compaction", &java_rows(&java.read(&path, json!({}))), &model);
    same("Strata reads after its full compaction", &strata_read(&path), &model);
}
