//! Dynamic-bucket (`bucket = -1`) and postpone-bucket (`bucket = -2`) tables against a `BTreeMap` model of
//! the last write per key: Strata's writes (restarted writers, long-lived writers, overflowing buckets,
//! several assigners, a bucket cap), pypaimon 2.1.0 and Strata writing one table in turns, postponed files
//! that stay invisible until `strata compact` moves them into real buckets, and concurrent writers. Every
//! read (scan, scan --merge, get, pypaimon) equals the model, and no key is ever in two buckets: its rows
//! are in one bucket, whose hash index file lists its hash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{oracle, strata};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::format::{file_columns, DataFileRef, FileRead, KeyValueLayout};
use strata::spec::{
    hash_index_file, key_hash, CommitKind, DataType, Datum, ErrorKind, TableSchema, TypeRoot, HASH_INDEX,
};
use strata::table::{expire_snapshots, remove_orphan_files, scan, ExpireOptions, ScanOptions};
use strata::{get, FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

/// (partition, id)
type Key = (String, i64);

/// The non-key columns of a row.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    name: Option<String>,
    v: Option<i64>,
    d: Option<f64>,
    rk: Option<String>,
}

type Model = BTreeMap<Key, Row>;

/// One write: an upsert, or a delete (`rk = -D`).
#[derive(Debug, Clone)]
struct Op {
    key: Key,
    row: Row,
}

fn io() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

/// The column layout pypaimon's oracle workload writes too: id BIGINT, p STRING, name STRING, v BIGINT,
/// d DOUBLE, rk STRING (the row kind), primary key (id, p), partitioned by p.
fn create(dir: &Path, name: &str, options: &[(&str, &str)]) -> Table {
    let mut map = BTreeMap::from([("bucket".to_string(), "-1".to_string()), ("rowkind.field".into(), "rk".into())]);
    map.extend(options.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let schema = TableSchema::new(
        vec![
            ("id".into(), DataType::bigint()),
            ("p".into(), DataType::string()),
            ("name".into(), DataType::string()),
            ("v".into(), DataType::bigint()),
            ("d".into(), DataType::nullable(TypeRoot::Double)),
            ("rk".into(), DataType::string()),
        ],
        vec!["p".into()],
        vec!["id".into(), "p".into()],
        map,
        0,
    )
    .unwrap();
    Table::create(io(), dir.join("wh/db.db").join(name).to_str().unwrap(), schema).unwrap()
}

fn random_ops(rng: &mut StdRng, n: usize, key_space: i64, partitions: &[&str], delete_ratio: f64) -> Vec<Op> {
    (0..n)
        .map(|_| {
            let key = (partitions[rng.random_range(0..partitions.len())].to_string(), rng.random_range(0..key_space));
            let delete = rng.random_bool(delete_ratio);
            let row = Row {
                name: rng.random_bool(0.9).then(|| format!("n{}", rng.random_range(0..1000))),
                v: rng.random_bool(0.9).then(|| rng.random_range(-1000..1000)),
                d: rng.random_bool(0.9).then(|| f64::from(rng.random_range(-1000..1000)) / 64.0),
                rk: Some(if delete { "-D" } else { "+I" }.to_string()),
            };
            Op { key, row }
        })
        .collect()
}

fn apply(model: &mut Model, ops: &[Op]) {
    for op in ops {
        if op.row.rk.as_deref() == Some("-D") {
            model.remove(&op.key);
        } else {
            model.insert(op.key.clone(), op.row.clone());
        }
    }
}

fn batch(ops: &[Op]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("p", ArrowType::Utf8, false),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("v", ArrowType::Int64, true),
        Field::new("d", ArrowType::Float64, true),
        Field::new("rk", ArrowType::Utf8, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(ops.iter().map(|o| o.key.1))),
        Arc::new(StringArray::from_iter_values(ops.iter().map(|o| o.key.0.clone()))),
        Arc::new(StringArray::from(ops.iter().map(|o| o.row.name.clone()).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(ops.iter().map(|o| o.row.v).collect::<Vec<_>>())),
        Arc::new(Float64Array::from(ops.iter().map(|o| o.row.d).collect::<Vec<_>>())),
        Arc::new(StringArray::from(ops.iter().map(|o| o.row.rk.clone()).collect::<Vec<_>>())),
    ];
    RecordBatch::try_new(schema, cols).unwrap()
}

/// The rows a batch holds, by key; a key read twice fails the test.
fn rows_of(batches: &[RecordBatch]) -> Model {
    let mut out = Model::new();
    for b in batches {
        let col = |name: &str| b.column_by_name(name).unwrap().clone();
        let (id, p, name, v, d, rk) = (col("id"), col("p"), col("name"), col("v"), col("d"), col("rk"));
        let (id, p, name) = (id.as_primitive::<Int64Type>(), p.as_string::<i32>(), name.as_string::<i32>());
        let (v, d, rk) = (v.as_primitive::<Int64Type>(), d.as_primitive::<Float64Type>(), rk.as_string::<i32>());
        for i in 0..b.num_rows() {
            let row = Row {
                name: name.is_valid(i).then(|| name.value(i).to_string()),
                v: v.is_valid(i).then(|| v.value(i)),
                d: d.is_valid(i).then(|| d.value(i)),
                rk: rk.is_valid(i).then(|| rk.value(i).to_string()),
            };
            let key = (p.value(i).to_string(), id.value(i));
            assert!(out.insert(key.clone(), row).is_none(), "key {key:?} read twice");
        }
    }
    out
}

/// Fails with the keys on which `got` and `want` differ (whole models are too long to read).
fn assert_same(got: &Model, want: &Model, what: &str) {
    if got == want {
        return;
    }
    let keys: BTreeSet<&Key> = got.keys().chain(want.keys()).collect();
    let diff: Vec<String> = keys
        .into_iter()
        .filter(|k| got.get(*k) != want.get(*k))
        .take(8)
        .map(|k| format!("{k:?}: got {:?}, want {:?}", got.get(k), want.get(k)))
        .collect();
    panic!("{what}: {} rows read, {} in the model; first differences:\n{}", got.len(), want.len(), diff.join("\n"));
}

fn scan_model(table: &Table, force_merge: bool) -> Model {
    let t = Table::open(table.io().clone(), table.path()).unwrap();
    rows_of(&scan(&t, &ScanOptions { force_merge, ..Default::default() }).unwrap().batches)
}

/// What pypaimon reads. pypaimon 2.1.0 records no deletes for its own level-0 files holding `-D` rows and
/// then reads a bucket holding just such a file without merging, returning the retraction as a row (a
/// dynamic bucket opened for a delete of a key never written is one): with `skip_own_retractions`, rows
/// whose `rk` says `-D` are skipped (only for tables pypaimon wrote data files into).
fn pypaimon_model(table: &Table, skip_own_retractions: bool) -> Model {
    let rows = oracle(&["read", table.path()]);
    let mut out = Model::new();
    for r in rows.as_array().unwrap().iter().filter(|r| !(skip_own_retractions && r["rk"] == "-D")) {
        let s = |k: &str| r[k].as_str().map(str::to_string);
        let row = Row { name: s("name"), v: r["v"].as_i64(), d: r["d"].as_f64(), rk: s("rk") };
        let key = (s("p").unwrap(), r["id"].as_i64().unwrap());
        assert!(out.insert(key.clone(), row).is_none(), "pypaimon read key {key:?} twice");
    }
    out
}

fn ops_from_oracle(path: &Path) -> Vec<Op> {
    let commits: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut ops = Vec::new();
    for commit in commits.as_array().unwrap() {
        for r in commit.as_array().unwrap() {
            let s = |k: &str| r[k].as_str().map(str::to_string);
            let row = Row { name: s("name"), v: r["v"].as_i64(), d: r["d"].as_f64(), rk: s("rk") };
            ops.push(Op { key: (s("p").unwrap(), r["id"].as_i64().unwrap()), row });
        }
    }
    ops
}

/// Every read Strata offers equals `model`: scans with and without merging, and `get` of some keys.
fn check_reads(table: &Table, model: &Model, rng: &mut StdRng, what: &str) {
    assert_same(&scan_model(table, false), model, &format!("{what}: scan"));
    assert_same(&scan_model(table, true), model, &format!("{what}: scan --merge"));
    let t = Table::open(table.io().clone(), table.path()).unwrap();
    for _ in 0..12 {
        let key = match model.keys().nth(rng.random_range(0..model.len().max(1))) {
            Some(k) if rng.random_bool(0.7) => k.clone(),
            _ => (["a", "b", "c"][rng.random_range(0..3)].to_string(), rng.random_range(0..400)),
        };
        let found = get(&t, &[Some(Datum::BigInt(key.1)), Some(Datum::String(key.0.clone()))], None).unwrap();
        let got = found.map(|b| rows_of(&[b]).remove(&key).unwrap());
        assert_eq!(got.as_ref(), model.get(&key), "{what}: get {key:?}");
    }
}

/// No key in two buckets: each key's rows lie in one bucket of its partition, every bucket with data has a
/// hash index file listing the hashes of its keys, and no hash is in two files of a partition. Returns the
/// hash counts of each partition's buckets.
fn check_one_bucket_per_key(table: &Table) -> BTreeMap<Vec<u8>, BTreeMap<i32, usize>> {
    let t = Table::open(table.io().clone(), table.path()).unwrap();
    let s = t.snapshot(None).unwrap().unwrap();
    let layout = KeyValueLayout::new(t.schema()).unwrap();
    let key_type = layout.key_fields[0].data_type;
    let mut bucket_of: HashMap<(Vec<u8>, i64), i32> = HashMap::new();
    for e in t.live_files(&s).unwrap() {
        assert!(e.bucket >= 0, "a postponed file outside a postpone-bucket table");
        let file = DataFileRef::new(t.data_file_path(&e).unwrap(), e.file.clone(), None);
        for b in FileRead::new(file_columns(&layout)).batch_size(4096).open(t.io(), &file).unwrap() {
            let b = b.unwrap();
            for &id in b.column(0).as_primitive::<Int64Type>().values() {
                let before = bucket_of.insert((e.partition.serialize(), id), e.bucket);
                assert!(before.is_none_or(|b| b == e.bucket), "key {id} in buckets {before:?} and {}", e.bucket);
            }
        }
    }
    let mut index: BTreeMap<Vec<u8>, BTreeMap<i32, BTreeSet<i32>>> = BTreeMap::new();
    for ie in t.index_files(&s).unwrap().into_iter().filter(|e| e.index_file.index_type == HASH_INDEX) {
        let bytes = std::fs::read(t.index_file_path(&ie.index_file).unwrap()).unwrap();
        let hashes = hash_index_file::decode(&bytes).unwrap();
        assert_eq!(hashes.len() as i64, ie.index_file.row_count);
        let partition = index.entry(ie.partition.serialize()).or_default();
        assert!(partition.insert(ie.bucket, hashes.into_iter().collect()).is_none(), "two hash files of a bucket");
    }
    for ((partition, id), bucket) in &bucket_of {
        let h = key_hash(&[Some(Datum::BigInt(*id))], &[key_type]).unwrap();
        let buckets = &index[partition];
        assert!(buckets.get(bucket).is_some_and(|s| s.contains(&h)), "key {id}: bucket {bucket}'s index lacks it");
        let listed: Vec<i32> = buckets.iter().filter(|(_, s)| s.contains(&h)).map(|(b, _)| *b).collect();
        assert_eq!(listed, vec![*bucket], "key {id}'s hash is indexed in buckets {listed:?}");
    }
    index.into_iter().map(|(p, buckets)| (p, buckets.into_iter().map(|(b, s)| (b, s.len())).collect())).collect()
}

/// Strata alone, with buckets that overflow: 8 commits of upserts and deletes over three partitions, the
/// first four each by a new writer (restarts keep assignments), the last four by one long-lived writer.
#[test]
fn strata_writes_dynamic_buckets_that_match_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let variants: [(&str, &[(&str, &str)]); 3] = [
        ("plain", &[("dynamic-bucket.target-row-num", "20")]),
        (
            "assigners-dv",
            &[
                ("dynamic-bucket.target-row-num", "20"),
                ("dynamic-bucket.initial-buckets", "3"),
                ("deletion-vectors.enabled", "true"),
            ],
        ),
        ("capped", &[("dynamic-bucket.target-row-num", "10"), ("dynamic-bucket.max-buckets", "3")]),
    ];
    for (n, (name, options)) in variants.into_iter().enumerate() {
        let t = create(dir.path(), name, options);
        let mut rng = StdRng::seed_from_u64(40 + n as u64);
        let mut model = Model::new();
        let mut long_lived: Option<TableWriter> = None;
        for commit in 0..8 {
            let ops = random_ops(&mut rng, 150, 120, &["a", "b", "c"], 0.15);
            let writer = if commit < 4 {
                long_lived.insert(TableWriter::new(&t, "w").unwrap())
            } else {
                long_lived.get_or_insert_with(|| TableWriter::new(&t, "w").unwrap())
            };
            writer.write(&batch(&ops)).unwrap();
            writer.commit().unwrap();
            if commit < 4 {
                long_lived = None;
            }
            apply(&mut model, &ops);
            check_reads(&t, &model, &mut rng, &format!("{name} commit {commit}"));
            check_one_bucket_per_key(&t);
        }
        let buckets = check_one_bucket_per_key(&t);
        for counts in buckets.values() {
            let hashes: usize = counts.values().sum();
            match name {
                // One assigner fills buckets in order: all full but the last.
                "plain" => {
                    assert_eq!(counts.len(), hashes.div_ceil(20), "{counts:?}");
                    assert!(counts.values().rev().skip(1).all(|c| *c == 20), "{counts:?}");
                }
                // Three assigners fill three buckets at once, none past the target.
                "assigners-dv" => {
                    assert!(counts.len() >= 3 && counts.values().all(|c| *c <= 20), "{counts:?}");
                }
                _ => assert_eq!(counts.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2], "{counts:?}"),
            }
        }
        assert_same(&pypaimon_model(&t, false), &model, &format!("{name}: pypaimon reads what Strata wrote"));
        let (code, _, err) = strata(&["compact", t.path(), "--full"]);
        assert_eq!(code, 0, "{err}");
        check_reads(&t, &model, &mut rng, &format!("{name} after a full compaction"));
        let inspected = common::strata_inspect(Path::new(t.path()));
        let hashes: i64 = inspected["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["hashIndexFile"]["keyHashes"].as_i64().expect("every dynamic bucket has a hash index"))
            .sum();
        let indexed: usize = buckets.values().flat_map(|c| c.values()).sum();
        assert_eq!(hashes, indexed as i64, "{name}: strata inspect");
        check_one_bucket_per_key(&t);
    }
}

/// pypaimon and Strata write one dynamic-bucket table in turns (pypaimon creates it); each continues the
/// other's assignment, so no key lands in a second bucket. Orphan cleanup and expiration keep the hash
/// index files the table needs, and pypaimon writes again afterwards.
#[test]
fn strata_and_pypaimon_take_turns_on_a_dynamic_table() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let ops_file = dir.path().join("ops.json");
    let path = warehouse.join("db.db/turns");
    let pypaimon_writes = |seed: u64, create: bool, model: &mut Model| {
        oracle(&[
            "workload",
            &json!({"warehouse": warehouse, "table": "turns", "format": "parquet", "buckets": -1,
                "partitioned": true, "commits": 2, "ops_per_commit": 70, "key_space": 120, "delete_ratio": 0.15,
                "seed": seed, "create": create, "ops_out": ops_file,
                "options": {"dynamic-bucket.target-row-num": "15"}})
            .to_string(),
        ]);
        apply(model, &ops_from_oracle(&ops_file));
    };
    let mut model = Model::new();
    let mut rng = StdRng::seed_from_u64(7);
    pypaimon_writes(1, true, &mut model);
    let t = Table::open(io(), path.to_str().unwrap()).unwrap();
    check_reads(&t, &model, &mut rng, "pypaimon's writes");
    check_one_bucket_per_key(&t);
    for turn in 0..2 {
        for _ in 0..2 {
            let ops = random_ops(&mut rng, 90, 160, &["a", "b", "c"], 0.15);
            let mut w = TableWriter::new(&t, "strata").unwrap();
            w.write(&batch(&ops)).unwrap();
            w.commit().unwrap();
            apply(&mut model, &ops);
        }
        check_reads(&t, &model, &mut rng, &format!("turn {turn}: Strata after pypaimon"));
        check_one_bucket_per_key(&t);
        pypaimon_writes(10 + turn, false, &mut model);
        check_reads(&t, &model, &mut rng, &format!("turn {turn}: pypaimon after Strata"));
        check_one_bucket_per_key(&t);
    }
    assert_same(&pypaimon_model(&t, true), &model, "pypaimon at the end");

    // A stray index file goes; the referenced hash index files stay, through expiration too.
    let stray = path.join("index/index-0b5d9d36-8cf3-4b1a-9d6c-3b43f7c1f2aa-0");
    std::fs::write(&stray, b"\0\0\0\x01").unwrap();
    // Zero-age cleanup removes files strictly older than now (in milliseconds): let the stray's millisecond pass.
    std::thread::sleep(Duration::from_millis(5));
    let report = remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    assert_eq!(report.index_files, vec![stray.to_str().unwrap().to_string()]);
    let opts = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::ZERO, dry_run: false };
    let expired = expire_snapshots(&t, &opts).unwrap();
    assert!(!expired.index_files.is_empty(), "replaced hash index files expire with their snapshots");
    remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    check_one_bucket_per_key(&t);
    pypaimon_writes(20, false, &mut model);
    check_reads(&t, &model, &mut rng, "pypaimon after expiration and cleanup");
    check_one_bucket_per_key(&t);
}

/// A writer whose assignment is stale (another writer added keys to the partition since it loaded the hash
/// indexes) would drop that writer's hashes from the bucket it rewrites: the commit refuses it as a
/// conflict, and writing again on the latest snapshot places the key correctly.
#[test]
fn a_writer_with_a_stale_assignment_conflicts_instead_of_losing_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "race", &[("dynamic-bucket.target-row-num", "2")]);
    let op = |id: i64, v: i64| Op {
        key: ("a".into(), id),
        row: Row { name: None, v: Some(v), d: None, rk: Some("+I".into()) },
    };
    let mut model = Model::new();
    let mut setup = TableWriter::new(&t, "setup").unwrap();
    let ops = [op(1, 1), op(2, 2), op(3, 3)];
    setup.write(&batch(&ops)).unwrap();
    setup.commit().unwrap();
    apply(&mut model, &ops);
    // Bucket 0 holds keys 1 and 2 (full), bucket 1 key 3.
    assert_eq!(check_one_bucket_per_key(&t).values().next().unwrap(), &BTreeMap::from([(0, 2), (1, 1)]));

    let mut stale = TableWriter::new(&t, "stale").unwrap();
    stale.write(&batch(&[op(1, 10)])).unwrap();
    let mut other = TableWriter::new(&t, "other").unwrap();
    other.write(&batch(&[op(4, 4)])).unwrap();
    other.commit().unwrap();
    apply(&mut model, &[op(4, 4)]);
    // The stale writer still sees room in bucket 1 and puts key 5 there; its bucket-1 writer opens after
    // the other commit, so no sequence check catches it.
    stale.write(&batch(&[op(5, 5)])).unwrap();
    let err = stale.commit().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains("assigned keys"), "{err}");
    check_one_bucket_per_key(&t);
    let again = [op(1, 10), op(5, 5)];
    stale.write(&batch(&again)).unwrap();
    stale.commit().unwrap();
    apply(&mut model, &again);
    assert_eq!(check_one_bucket_per_key(&t).values().next().unwrap(), &BTreeMap::from([(0, 2), (1, 2), (2, 1)]));
    check_reads(&t, &model, &mut StdRng::seed_from_u64(1), "after the retry");
}

/// pypaimon writes postponed files (`bucket = -2`): no batch read sees them, Strata's or pypaimon's, until
/// `strata compact` replays them, in commit order, into `postpone.default-bucket-num` real buckets of a new
/// partition, or as many as a partition already has.
#[test]
fn postponed_rows_appear_only_after_strata_compacts_them() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let ops_file = dir.path().join("ops.json");
    let path = warehouse.join("db.db/pp");
    let pypaimon_writes = |seed: u64, create: bool, partitions: &[&str]| {
        oracle(&[
            "workload",
            &json!({"warehouse": warehouse, "table": "pp", "format": "parquet", "buckets": -2,
                "partitioned": true, "partitions": partitions, "commits": 3, "ops_per_commit": 60,
                "key_space": 60, "delete_ratio": 0.2, "seed": seed, "create": create, "ops_out": ops_file,
                "options": {"postpone.default-bucket-num": "3", "deletion-vectors.enabled": "true"}})
            .to_string(),
        ]);
        ops_from_oracle(&ops_file)
    };
    let mut rng = StdRng::seed_from_u64(3);
    let mut model = Model::new();
    let ops = pypaimon_writes(5, true, &["a", "b"]);
    let t = Table::open(io(), path.to_str().unwrap()).unwrap();
    check_reads(&t, &Model::new(), &mut rng, "postponed only");
    assert_same(&pypaimon_model(&t, false), &Model::new(), "pypaimon hides postponed rows too");
    let err = TableWriter::new(&t, "w").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");

    let written = t.snapshot(None).unwrap().unwrap().id;
    let everything = ReadBuilder::new(&t).incremental_between(0, written).read().unwrap().num_rows();
    let (code, _, err) = strata(&["compact", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Paimon's postpone compaction makes COMPACT snapshots only (its PostponeBucketCommittableRewriter moves
    // the files the moved rows were written to into the compaction's results): the rows reached incremental
    // readers in the APPEND snapshots that added the postponed files, and must not reach them twice.
    let latest = t.snapshot(None).unwrap().unwrap().id;
    for id in written + 1..=latest {
        let kind = t.snapshot(Some(id)).unwrap().unwrap().commit_kind;
        assert_eq!(kind, CommitKind::Compact, "snapshot {id} of the postpone compaction");
    }
    let delta = ReadBuilder::new(&t).incremental_between(written, latest).read().unwrap();
    assert_eq!(delta.num_rows(), 0, "the postpone compaction's snapshots hold new rows for delta readers");
    let again = ReadBuilder::new(&t).incremental_between(0, latest).read().unwrap().num_rows();
    assert!(everything > 0);
    assert_eq!(again, everything, "the rows written reach delta readers once, before and after the compaction");
    apply(&mut model, &ops);
    check_reads(&t, &model, &mut rng, "after the first compaction");
    assert_same(&pypaimon_model(&t, false), &model, "pypaimon reads the compacted rows");
    assert_eq!(bucket_counts(&t), BTreeMap::from([("a".into(), 3), ("b".into(), 3)]));

    // New partitions take the new default; partitions with real buckets keep theirs.
    let t = t.alter_options(&BTreeMap::from([("postpone.default-bucket-num".into(), "2".into())]), &[], false).unwrap();
    let ops = pypaimon_writes(6, false, &["b", "c"]);
    check_reads(&t, &model, &mut rng, "new postponed rows are not visible");
    // Cleanup keeps the postponed files (referenced) and removes a stray one in their directory.
    let stray = path.join("p=b/bucket-postpone/data--u-x-s-1-w-0b5d9d36-8cf3-4b1a-9d6c-3b43f7c1f2aa-0.parquet");
    std::fs::write(&stray, b"x").unwrap();
    // Zero-age cleanup removes files strictly older than now (in milliseconds): let the stray's millisecond pass.
    std::thread::sleep(Duration::from_millis(5));
    let report = remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    assert_eq!(report.data_files, vec![stray.to_str().unwrap().to_string()]);
    let (code, _, err) = strata(&["compact", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    apply(&mut model, &ops);
    check_reads(&t, &model, &mut rng, "after the second compaction");
    assert_same(&pypaimon_model(&t, false), &model, "pypaimon after the second compaction");
    assert_eq!(bucket_counts(&t), BTreeMap::from([("a".into(), 3), ("b".into(), 3), ("c".into(), 2)]));
}

/// Each partition's `_TOTAL_BUCKETS`, after checking that no postponed file is left.
fn bucket_counts(table: &Table) -> BTreeMap<String, i32> {
    let s = table.snapshot(None).unwrap().unwrap();
    let mut out = BTreeMap::new();
    for e in table.live_files(&s).unwrap() {
        assert!(e.bucket >= 0 && e.bucket < e.total_buckets, "bucket {} of {}", e.bucket, e.total_buckets);
        let p = e.partition.to_datums(&[DataType::string()]).unwrap();
        let Some(Datum::String(p)) = &p[0] else { panic!("partition {p:?}") };
        assert_eq!(*out.entry(p.clone()).or_insert(e.total_buckets), e.total_buckets);
    }
    out
}

/// `create` refuses what no write could then write, with an unsupported (or invalid) error that says why.
#[test]
fn create_refuses_tables_strata_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    /// (table, partition keys, primary key, options, what the error says)
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 6] = [
        ("append", &[], &[], &[("bucket", "2")], "bucket-key"),
        ("cross", &["p"], &["id"], &[("bucket", "-1")], "cross-partition"),
        ("postpone", &[], &["id"], &[("bucket", "-2")], "postpone"),
        ("avro", &[], &["id"], &[("bucket", "2"), ("file.format", "avro")], "avro"),
        ("bucket-key", &[], &["id"], &[("bucket", "-1"), ("bucket-key", "id")], "bucket-key"),
        ("index-dir", &[], &["id"], &[("index-file-in-data-file-dir", "true")], "index-file-in-data-file-dir"),
    ];
    for (name, partition, pk, options, says) in cases {
        let schema = TableSchema::new(
            vec![("id".into(), DataType::bigint()), ("p".into(), DataType::string())],
            partition.iter().map(|s| s.to_string()).collect(),
            pk.iter().map(|s| s.to_string()).collect(),
            options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            0,
        );
        let err = schema.and_then(|s| Table::create(io(), dir.path().join(name).to_str().unwrap(), s)).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Unsupported | ErrorKind::Invalid), "{name}: {err}");
        assert!(err.to_string().contains(says), "{name}: {err}");
        assert!(!dir.path().join(name).exists(), "{name}: nothing is left behind");
    }
    // Without a primary key, an unaware-bucket append table (Paimon's default for one).
    let t = dir.path().join("cli-append");
    let (code, _, err) = strata(&["create", t.to_str().unwrap(), "--schema", "id BIGINT, v BIGINT"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(Table::open(io(), t.to_str().unwrap()).unwrap().schema().core_options().bucket().unwrap(), -1);
    // Paimon's default bucket mode is dynamic, and Strata writes it.
    let t = dir.path().join("cli-dynamic");
    let t = t.to_str().unwrap();
    let (code, _, err) =
        strata(&["create", t, "--schema", "id BIGINT, v BIGINT", "--primary-key", "id", "--option", "bucket=-1"]);
    assert_eq!(code, 0, "{err}");
}
