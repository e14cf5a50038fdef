//! The merge-tree writer against a `BTreeMap` model, in deletion-vector and merge-on-read mode: after every
//! commit the scan equals the model and the LSM invariants hold.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::format::{file_columns, DataFileRef, FileRead, KeyValueLayout};
use strata::spec::{DataType, TableSchema};
use strata::table::{scan, Committable, ScanOptions, TableWrite};
use strata::{FileIO, LocalFileIO, Table};

type Model = BTreeMap<i64, (Option<i64>, Option<String>)>;

/// A row written: (id, v, s).
type Row = (i64, Option<i64>, Option<String>);

fn create(dir: &std::path::Path, name: &str, dv: bool, extra: &[(&str, &str)]) -> Table {
    let mut options = BTreeMap::from([
        ("bucket".to_string(), "2".to_string()),
        ("deletion-vectors.enabled".to_string(), dv.to_string()),
        ("num-sorted-run.compaction-trigger".to_string(), "3".to_string()),
        ("target-file-size".to_string(), "8 kb".to_string()),
    ]);
    for (k, v) in extra {
        options.insert(k.to_string(), v.to_string());
    }
    create_on(Arc::new(LocalFileIO::new()), &dir.join(name), options)
}

/// A table of (id BIGINT primary key, v BIGINT, s STRING) at `path` on `io`.
fn create_on(io: Arc<dyn FileIO>, path: &std::path::Path, options: BTreeMap<String, String>) -> Table {
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint()), ("s".into(), DataType::string())],
        vec![],
        vec!["id".into()],
        options,
        0,
    )
    .unwrap();
    Table::create(io, path.to_str().unwrap(), schema).unwrap()
}

fn batch(rows: &[Row]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("v", ArrowType::Int64, true),
        Field::new("s", ArrowType::Utf8, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(Int64Array::from(rows.iter().map(|r| r.1).collect::<Vec<_>>())),
        Arc::new(StringArray::from(rows.iter().map(|r| r.2.clone()).collect::<Vec<_>>())),
    ];
    RecordBatch::try_new(schema, cols).unwrap()
}

fn scan_rows(table: &Table, force_merge: bool) -> Model {
    let res = scan(table, &ScanOptions { force_merge, ..Default::default() }).unwrap();
    let mut out = Model::new();
    for b in &res.batches {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let vs = b.column(1).as_primitive::<Int64Type>();
        let ss = b.column(2).as_string::<i32>();
        for i in 0..b.num_rows() {
            let prev = out.insert(
                ids.value(i),
                (vs.is_valid(i).then(|| vs.value(i)), ss.is_valid(i).then(|| ss.value(i).to_string())),
            );
            assert!(prev.is_none(), "key {} read twice", ids.value(i));
        }
    }
    out
}

/// Invariants of a deletion-vector table's latest snapshot; returns the number of deletion vectors.
fn check_dv_invariants(table: &Table) -> usize {
    let Some(s) = table.snapshot(None).unwrap() else { return 0 };
    let live = table.live_files(&s).unwrap();
    let names: BTreeSet<String> = live.iter().map(|e| e.file.file_name.clone()).collect();
    let dfs = table.deletion_files(&s).unwrap();
    for ((_, _, file), df) in &dfs {
        assert!(names.contains(file), "a deletion vector names {file}, which is not in the snapshot");
        let e = live.iter().find(|e| &e.file.file_name == file).unwrap();
        let dv = df.read(table.io().as_ref()).unwrap();
        assert!(dv.positions().all(|p| (p as i64) < e.file.row_count), "DV position beyond {file}'s rows");
    }
    let layout = KeyValueLayout::new(table.schema()).unwrap();
    let mut seen: BTreeSet<(i32, i64)> = BTreeSet::new();
    for e in live.iter().filter(|e| e.file.level > 0) {
        assert_eq!(
            e.file.delete_row_count,
            Some(0),
            "{} at level {} holds retractions",
            e.file.file_name,
            e.file.level
        );
        let dv = dfs
            .get(&(e.partition.clone(), e.bucket, e.file.file_name.clone()))
            .map(|d| Arc::from(d.read(table.io().as_ref()).unwrap()));
        let r = DataFileRef::new(table.data_file_path(e).unwrap(), e.file.clone(), dv);
        for b in FileRead::new(file_columns(&layout)).batch_size(4096).open(table.io(), &r).unwrap() {
            let b = b.unwrap();
            let keys = b.column(0).as_primitive::<Int64Type>();
            for i in 0..b.num_rows() {
                assert!(
                    seen.insert((e.bucket, keys.value(i))),
                    "key {} has two live rows at levels >= 1",
                    keys.value(i)
                );
            }
        }
    }
    dfs.len()
}

fn run(seed: u64, dv: bool, commits: usize, extra: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), "t", dv, extra);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    let mut writer = TableWrite::new(&table).unwrap();
    let mut vectors_seen = 0;
    for c in 0..commits {
        if rng.random_bool(0.15) {
            // A restarted writer: state restored from the snapshot.
            writer = TableWrite::new(&table).unwrap();
        }
        let n = rng.random_range(1..120);
        let mut rows = Vec::new();
        let mut kinds = Vec::new();
        for _ in 0..n {
            let id = rng.random_range(0..300);
            if rng.random_bool(0.2) {
                rows.push((id, None, None));
                kinds.push(3i8);
                model.remove(&id);
            } else {
                let v = rng.random_bool(0.9).then(|| rng.random_range(-100..100));
                let s = rng.random_bool(0.8).then(|| format!("s{}", rng.random_range(0..50)));
                rows.push((id, v, s.clone()));
                kinds.push(0);
                model.insert(id, (v, s));
            }
        }
        // Several writes per commit, so that a small write buffer fills (and spills or flushes) mid-commit.
        let chunk = rng.random_range(5..60);
        for (r, k) in rows.chunks(chunk).zip(kinds.chunks(chunk)) {
            writer.write_with_kinds(&batch(r), k).unwrap();
        }
        let full = rng.random_bool(0.1);
        let msgs = writer.prepare_commit_with(full, None).unwrap();
        table
            .new_commit("model")
            .unwrap()
            .commit(&Committable { identifier: c as i64, messages: msgs, ..Default::default() })
            .unwrap();
        let got = scan_rows(&table, false);
        assert_eq!(got, model, "seed {seed} dv {dv}: scan differs from the model after commit {c}");
        if dv {
            vectors_seen += check_dv_invariants(&table);
            assert_eq!(scan_rows(&table, true), model, "seed {seed}: merge-on-read of the DV table differs");
            if full {
                let s = table.snapshot(None).unwrap().unwrap();
                assert!(table.deletion_files(&s).unwrap().is_empty(), "full compaction left deletion vectors");
            }
        }
    }
    assert!(!dv || vectors_seen > 0, "seed {seed}: the workload never produced a deletion vector");
}

#[test]
fn deletion_vector_tables_match_the_model() {
    for seed in 0..6 {
        run(seed, true, 25, &[]);
    }
}

#[test]
fn merge_on_read_tables_match_the_model() {
    for seed in 100..106 {
        run(seed, false, 25, &[]);
    }
}

/// A write buffer of a few kilobytes fills several times per commit: spilled to local runs (each codec) and
/// merged into one level-0 run at commit, or, when not spillable or past the spill limits, flushed to level
/// 0 and compacted mid-commit. Every path must end at the model.
#[test]
fn small_write_buffers_spill_or_flush_and_match_the_model() {
    let configs: [&[(&str, &str)]; 5] = [
        &[("write-buffer-size", "2 kb")],
        &[("write-buffer-size", "2 kb"), ("spill-compression", "zstd")],
        &[("write-buffer-size", "2 kb"), ("spill-compression", "lz4"), ("local-sort.max-num-file-handles", "3")],
        &[("write-buffer-size", "2 kb"), ("write-buffer-spill.max-disk-size", "4 kb")],
        &[("write-buffer-size", "2 kb"), ("write-buffer-spillable", "false")],
    ];
    for (i, extra) in configs.iter().enumerate() {
        run(200 + i as u64, true, 12, extra);
        run(300 + i as u64, false, 12, extra);
    }
}

#[test]
fn both_modes_scan_the_same_rows_for_the_same_workload() {
    let dir = tempfile::tempdir().unwrap();
    let dv = create(dir.path(), "dv", true, &[]);
    let mor = create(dir.path(), "mor", false, &[]);
    let mut rng = StdRng::seed_from_u64(42);
    let (mut wdv, mut wmor) = (TableWrite::new(&dv).unwrap(), TableWrite::new(&mor).unwrap());
    for c in 0..30 {
        let rows: Vec<_> = (0..rng.random_range(1..200))
            .map(|_| (rng.random_range(0..500), Some(rng.random_range(0..9)), None))
            .collect();
        let kinds: Vec<i8> = rows.iter().map(|_| if rng.random_bool(0.15) { 3 } else { 0 }).collect();
        for (t, w) in [(&dv, &mut wdv), (&mor, &mut wmor)] {
            w.write_with_kinds(&batch(&rows), &kinds).unwrap();
            let msgs = w.prepare_commit().unwrap();
            t.new_commit("w")
                .unwrap()
                .commit(&Committable { identifier: c, messages: msgs, ..Default::default() })
                .unwrap();
        }
        assert_eq!(scan_rows(&dv, false), scan_rows(&mor, false), "modes differ after commit {c}");
    }
}

/// Sequential keys (time-ordered ingestion): each commit's level-0 file overlaps nothing, so compaction moves
/// files up a level without rewriting them (Paimon's `MergeTreeCompactTask` upgrade), in both modes.
#[test]
fn compaction_upgrades_files_that_overlap_nothing() {
    for dv in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let table = create(dir.path(), "t", dv, &[("target-file-size", "4 kb")]);
        let mut writer = TableWrite::new(&table).unwrap();
        let mut model = Model::new();
        for c in 0..8i64 {
            // 400 rows of distinct 40-character strings: one file of well over 70% of the target size.
            let rows: Vec<_> = (c * 1000..c * 1000 + 400).map(|id| (id, Some(id), Some(format!("{id:040}")))).collect();
            for r in &rows {
                model.insert(r.0, (r.1, r.2.clone()));
            }
            writer.write_with_kinds(&batch(&rows), &vec![0; rows.len()]).unwrap();
            let msgs = writer.prepare_commit().unwrap();
            table
                .new_commit("seq")
                .unwrap()
                .commit(&Committable { identifier: c, messages: msgs, ..Default::default() })
                .unwrap();
            assert_eq!(scan_rows(&table, false), model, "dv {dv}: scan differs after commit {c}");
        }
        let s = table.snapshot(None).unwrap().unwrap();
        let files = table.live_files(&s).unwrap();
        assert!(files.iter().any(|e| e.file.level > 0), "dv {dv}: nothing was compacted");
        for e in &files {
            assert_eq!(e.file.file_source, Some(0), "dv {dv}: {} was rewritten by a compaction", e.file.file_name);
        }
    }
}

/// A deletion-vector write leaves level 0 without a rewrite: its flush puts the rows and the retractions in
/// files of their own; the force-up moves the rows' file up unchanged and drops the retractions' file, once
/// the older copies of every key it names are marked deleted. The write's APPEND snapshot still holds both,
/// so streaming readers see its deletes.
#[test]
fn a_deletion_vector_write_moves_its_rows_up_and_drops_its_retractions_without_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), "t", true, &[("bucket", "1")]);
    let mut writer = TableWrite::new(&table).unwrap();
    let mut model = Model::new();
    let mut commit = |rows: Vec<Row>, kinds: Vec<i8>, id: i64, model: &mut Model| {
        for (r, k) in rows.iter().zip(&kinds) {
            if *k == 3 {
                model.remove(&r.0);
            } else {
                model.insert(r.0, (r.1, r.2.clone()));
            }
        }
        writer.write_with_kinds(&batch(&rows), &kinds).unwrap();
        let messages = writer.prepare_commit().unwrap();
        table
            .new_commit("moves")
            .unwrap()
            .commit(&Committable { identifier: id, messages, ..Default::default() })
            .unwrap();
    };
    commit((0..200).map(|id| (id, Some(id), Some(format!("a{id}")))).collect(), vec![0; 200], 0, &mut model);
    let mut rows: Vec<Row> = (0..50).step_by(2).map(|id| (id, Some(-id), Some(format!("b{id}")))).collect();
    let mut kinds = vec![0i8; rows.len()];
    rows.extend((100..120).map(|id| (id, None, None)));
    kinds.resize(rows.len(), 3);
    commit(rows, kinds, 1, &mut model);

    let latest = table.snapshot(None).unwrap().unwrap();
    let append = table.snapshot(Some(latest.id - 1)).unwrap().unwrap();
    let flushed: Vec<_> = table.live_files(&append).unwrap().into_iter().filter(|e| e.file.level == 0).collect();
    assert_eq!(flushed.len(), 2, "the write's rows and retractions in files of their own: {flushed:?}");
    let retractions = flushed.iter().find(|e| e.file.delete_row_count == Some(e.file.row_count)).unwrap();
    let upserts = flushed.iter().find(|e| e.file.delete_row_count == Some(0)).unwrap();
    assert_eq!((retractions.file.row_count, upserts.file.row_count), (20, 25));
    let live = table.live_files(&latest).unwrap();
    let moved = live.iter().find(|e| e.file.file_name == upserts.file.file_name).expect("the rows' file moved up");
    assert!(moved.file.level > 0);
    assert!(live.iter().all(|e| e.file.file_name != retractions.file.file_name), "the retractions' file stayed");
    assert!(live.iter().all(|e| e.file.level > 0 && e.file.file_source == Some(0)), "a file was rewritten: {live:?}");
    assert!(check_dv_invariants(&table) > 0);
    assert_eq!(scan_rows(&table, false), model);
    assert_eq!(scan_rows(&table, true), model);
}

/// Lookup indexes squeezed out of memory (to local disk, or dropped and rebuilt) and without bloom filters:
/// deletion vectors still land on the right rows.
#[test]
fn tiny_lookup_caches_match_the_model() {
    let configs: [&[(&str, &str)]; 3] = [
        &[("lookup.cache-max-memory-size", "1 b")],
        &[("lookup.cache-max-memory-size", "1 b"), ("lookup.cache-max-disk-size", "1 b")],
        &[("lookup.cache.bloom.filter.enabled", "false"), ("lookup.cache.bloom.filter.fpp", "0.5")],
    ];
    for (i, extra) in configs.iter().enumerate() {
        run(400 + i as u64, true, 15, extra);
    }
}

/// Merge-on-read writers compact on background threads: commits do not wait for compaction, yet scans always
/// equal the model, no bucket ever holds more than `num-sorted-run.stop-trigger` sorted runs after a commit
/// (writes wait for compaction past it), and a dropped writer leaves no file of a compaction it had running.
#[test]
fn background_compaction_keeps_runs_bounded_and_leaves_no_stray_files() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(
        dir.path(),
        "bg",
        false,
        &[
            ("num-sorted-run.compaction-trigger", "2"),
            ("num-sorted-run.stop-trigger", "3"),
            ("write-buffer-size", "4 kb"),
            ("write-buffer-spillable", "false"),
        ],
    );
    let mut rng = StdRng::seed_from_u64(77);
    let mut model = Model::new();
    let mut writer = TableWrite::new(&table).unwrap();
    for c in 0..30 {
        for _ in 0..rng.random_range(1..6) {
            let rows: Vec<_> = (0..rng.random_range(10..80))
                .map(|_| (rng.random_range(0..400), Some(rng.random_range(0..1000)), Some(format!("s{c}"))))
                .collect();
            for r in &rows {
                model.insert(r.0, (r.1, r.2.clone()));
            }
            writer.write_with_kinds(&batch(&rows), &vec![0; rows.len()]).unwrap();
        }
        let msgs = writer.prepare_commit().unwrap();
        table
            .new_commit("bg")
            .unwrap()
            .commit(&Committable { identifier: c, messages: msgs, ..Default::default() })
            .unwrap();
        assert_eq!(scan_rows(&table, false), model, "scan differs after commit {c}");
        let s = table.snapshot(None).unwrap().unwrap();
        let mut runs: BTreeMap<i32, (usize, BTreeSet<i32>)> = BTreeMap::new();
        for e in table.live_files(&s).unwrap() {
            let b = runs.entry(e.bucket).or_default();
            if e.file.level == 0 {
                b.0 += 1;
            } else {
                b.1.insert(e.file.level);
            }
        }
        for (bucket, (l0, deeper)) in runs {
            assert!(l0 + deeper.len() <= 3, "commit {c}: bucket {bucket} has {} sorted runs", l0 + deeper.len());
        }
    }
    drop(writer);
    assert_no_stray_files(&table, "after background compaction");
}

/// Every data file in a bucket directory and every index file is referenced by some snapshot (an
/// unpartitioned table, no changelog).
fn assert_no_stray_files(table: &Table, context: &str) {
    let mut live = BTreeSet::new();
    let mut live_index = BTreeSet::new();
    for id in table.snapshot_manager().list_ids().unwrap() {
        let s = table.snapshot(Some(id)).unwrap().unwrap();
        live.extend(table.live_files(&s).unwrap().iter().map(|e| table.data_file_path(e).unwrap()));
        live_index.extend(table.index_files(&s).unwrap().into_iter().map(|e| e.index_file.file_name));
    }
    let mut on_disk = BTreeSet::new();
    let mut index_on_disk = BTreeSet::new();
    for b in std::fs::read_dir(table.path()).unwrap() {
        let b = b.unwrap();
        let name = b.file_name().to_string_lossy().to_string();
        if name.starts_with("bucket-") {
            for f in std::fs::read_dir(b.path()).unwrap() {
                on_disk.insert(f.unwrap().path().to_string_lossy().to_string());
            }
        } else if name == "index" {
            for f in std::fs::read_dir(b.path()).unwrap() {
                index_on_disk.insert(f.unwrap().file_name().to_string_lossy().to_string());
            }
        }
    }
    assert_eq!(on_disk, live, "{context}: data files on disk that no snapshot references");
    assert_eq!(index_on_disk, live_index, "{context}: index files on disk that no snapshot references");
}

/// One bucket hands its changes over while the other fails, so they wait for the next commit; meanwhile
/// the first bucket compacts away the level-0 file it handed over (merge-on-read) or writes a newer
/// deletion-vector index (deletion vectors). The next commit must land both buckets' rows once, without a
/// conflict over a file no snapshot ever held, and leave no file behind that no snapshot references.
#[test]
fn a_bucket_that_prepared_while_another_failed_folds_its_later_changes_into_one_commit() {
    use strata::TableWriter;
    use strata_sim::{Fault, FaultyFileIO, OpKind};
    for dv in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let faulty = FaultyFileIO::new(Arc::new(LocalFileIO::new()));
        let io: Arc<dyn FileIO> = Arc::new(faulty.clone());
        let options = BTreeMap::from([
            ("bucket".to_string(), "2".to_string()),
            ("deletion-vectors.enabled".to_string(), dv.to_string()),
            ("num-sorted-run.compaction-trigger".to_string(), "2".to_string()),
        ]);
        let table = create_on(io, &dir.path().join("t"), options);
        let mut w = TableWriter::new(&table, "fold").unwrap();
        let mut model = Model::new();
        let mut write = |w: &mut TableWriter, round: i64| {
            let rows: Vec<_> = (0..200i64).map(|id| (id, Some(round * 1000 + id), Some(format!("r{round}")))).collect();
            for r in &rows {
                model.insert(r.0, (r.1, r.2.clone()));
            }
            w.write(&batch(&rows)).unwrap();
        };
        write(&mut w, 0);
        w.commit().unwrap();
        write(&mut w, 1);
        // Bucket 1's flush fails; bucket 0 flushes (and, with deletion vectors, writes its index file).
        faulty.fail_at_path(0, Fault::Before, Some(OpKind::Mutate), "bucket-1/");
        let failed = w.commit();
        faulty.disarm();
        assert!(failed.is_err(), "dv {dv}: the injected fault did not fail the commit");
        write(&mut w, 2);
        // Waits for compaction: bucket 0 now compacts its level-0 files, the one handed over included.
        w.compact(false).unwrap_or_else(|e| panic!("dv {dv}: the commit after the failure failed: {e}"));
        assert_eq!(scan_rows(&table, false), model, "dv {dv}: rows after the retried commit");
        assert_eq!(scan_rows(&table, true), model, "dv {dv}: merged rows after the retried commit");
        if dv {
            check_dv_invariants(&table);
        }
        drop(w);
        assert_no_stray_files(&table, &format!("dv {dv}"));
    }
}

/// A commit that fails on any storage operation (before or after it takes effect) is retried by the next
/// `commit` call of the same writer: every row lands exactly once, in both modes, with spilled write
/// buffers and level-0 flushes alike.
#[test]
fn a_failed_commit_is_retried_by_the_next_commit_without_losing_rows() {
    use strata::TableWriter;
    use strata_sim::{Fault, FaultyFileIO, OpKind};
    // One bucket: every storage operation of the commit, in a fixed order. Two buckets: the buckets prepare
    // in parallel, so one may fail while the other has handed its files over.
    for (buckets, step) in [(1, 2), (2, 5)] {
        for dv in [true, false] {
            for fault in [Fault::Before, Fault::After] {
                for k in (0..60).step_by(step) {
                    let dir = tempfile::tempdir().unwrap();
                    let faulty = FaultyFileIO::new(Arc::new(LocalFileIO::new()));
                    let io: Arc<dyn FileIO> = Arc::new(faulty.clone());
                    let mut options = BTreeMap::from([
                        ("bucket".to_string(), buckets.to_string()),
                        ("deletion-vectors.enabled".to_string(), dv.to_string()),
                        ("write-buffer-size".to_string(), "2 kb".to_string()),
                        ("num-sorted-run.compaction-trigger".to_string(), "2".to_string()),
                    ]);
                    options.insert("target-file-size".to_string(), "8 kb".to_string());
                    let table = create_on(io, &dir.path().join("t"), options);
                    let mut w = TableWriter::new(&table, "retry").unwrap();
                    let mut model = Model::new();
                    for c in 0..3i64 {
                        for chunk in 0..6i64 {
                            let rows: Vec<_> = (0..40i64)
                                .map(|i| {
                                    let id = (i * 7 + chunk * 13 + c * 5) % 150;
                                    (id, Some(c * 1000 + chunk), Some(format!("c{c}-{chunk}")))
                                })
                                .collect();
                            for r in &rows {
                                model.insert(r.0, (r.1, r.2.clone()));
                            }
                            w.write(&batch(&rows)).unwrap();
                        }
                        if c == 1 {
                            faulty.fail_at(k, fault, Some(OpKind::Mutate));
                        }
                        let first = w.commit();
                        faulty.disarm();
                        if first.is_err() {
                            w.commit().unwrap_or_else(|e| panic!("dv {dv} {fault:?} k {k}: retry failed: {e}"));
                        }
                        assert_eq!(scan_rows(&table, false), model, "dv {dv} {fault:?} k {k}: rows after commit {c}");
                    }
                }
            }
        }
    }
}

/// A changelog row: its kind ("+I", "-U", "+U", "-D"), key, v and s.
type ChangelogRow = (String, i64, Option<i64>, Option<String>);

/// The options of a changelog test table: `producer`, a small write buffer, `engine` (removing the record on a
/// delete, and summing `v` under aggregation).
fn changelog_options<'a>(producer: &'a str, engine: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut options = vec![("changelog-producer", producer), ("write-buffer-size", "2 kb"), ("merge-engine", engine)];
    match engine {
        "partial-update" => options.push(("partial-update.remove-record-on-delete", "true")),
        "aggregation" => {
            options.push(("aggregation.remove-record-on-delete", "true"));
            options.push(("fields.v.aggregate-function", "sum"));
        }
        _ => {}
    }
    options
}

/// Random puts (v and s set, s naming commit `c`) and deletes of keys below 200, with their row kinds.
fn random_changes(rng: &mut StdRng, c: i64) -> (Vec<Row>, Vec<i8>) {
    let mut rows = Vec::new();
    let mut kinds = Vec::new();
    for _ in 0..rng.random_range(20..150) {
        let id = rng.random_range(0..200);
        if rng.random_bool(0.2) {
            rows.push((id, None, None));
            kinds.push(3i8);
        } else {
            rows.push((id, Some(rng.random_range(0..100)), Some(format!("c{c}"))));
            kinds.push(0);
        }
    }
    (rows, kinds)
}

/// The changelog files of snapshots `first..=last` with their snapshot ids, each snapshot's changelog record
/// count checked against its files.
fn changelog_entries(table: &Table, first: i64, last: i64) -> Vec<(i64, strata::spec::ManifestEntry)> {
    let mut entries = Vec::new();
    for id in first..=last {
        let s = table.snapshot(Some(id)).unwrap().unwrap();
        let of_snapshot = table.changelog_files(&s).unwrap();
        let rows_of_snapshot = of_snapshot.iter().map(|e| e.file.row_count).sum::<i64>();
        assert_eq!(s.changelog_record_count, (!of_snapshot.is_empty()).then_some(rows_of_snapshot));
        entries.extend(of_snapshot.into_iter().map(|e| (id, e)));
    }
    entries
}

/// The rows of changelog file `e`, in file order.
fn changelog_rows(
    table: &Table,
    layout: &KeyValueLayout,
    path: String,
    e: &strata::spec::ManifestEntry,
) -> Vec<ChangelogRow> {
    use arrow_array::types::Int8Type;
    let mut out = Vec::new();
    let r = DataFileRef::new(path, e.file.clone(), None);
    for b in FileRead::new(file_columns(layout)).batch_size(1024).open(table.io(), &r).unwrap() {
        let b = b.unwrap();
        let kind = b.column(layout.kind_index()).as_primitive::<Int8Type>();
        let ids = b.column(layout.value_index(0)).as_primitive::<Int64Type>();
        let vs = b.column(layout.value_index(1)).as_primitive::<Int64Type>();
        let ss = b.column(layout.value_index(2)).as_string::<i32>();
        for i in 0..b.num_rows() {
            let kind_name = ["+I", "-U", "+U", "-D"][kind.value(i) as usize];
            out.push((
                kind_name.to_string(),
                ids.value(i),
                vs.is_valid(i).then(|| vs.value(i)),
                ss.is_valid(i).then(|| ss.value(i).to_string()),
            ));
        }
    }
    out
}

/// Folds changelog `rows` into `folded`; with the lookup producer every -U or -D must carry the key's current
/// row and every +I a new key (`what` names the case).
fn fold_changelog(folded: &mut Model, rows: &[ChangelogRow], lookup: bool, what: &str) {
    for (kind, id, v, s) in rows {
        let row = (*v, s.clone());
        if lookup && matches!(kind.as_str(), "-U" | "-D") {
            assert_eq!(folded.get(id), Some(&row), "{what}: a retraction of key {id} that is not its current row");
        }
        if lookup && kind == "+I" {
            assert!(!folded.contains_key(id), "+I of existing key {id}");
        }
        match kind.as_str() {
            "+I" | "+U" => {
                folded.insert(*id, row);
            }
            "-D" => {
                folded.remove(id);
            }
            _ => {}
        }
    }
}

/// pypaimon's streaming reader reads `ours` (in any order) as the changelog of snapshots `first..=last` (a
/// follow-up plan of each snapshot).
fn assert_pypaimon_reads_the_changelog(table: &Table, first: i64, last: i64, mut ours: Vec<ChangelogRow>, what: &str) {
    let got: Vec<serde_json::Value> = (first..=last)
        .flat_map(|id| common::oracle(&["changelog", table.path(), &id.to_string()]).as_array().unwrap().clone())
        .collect();
    let mut theirs: Vec<ChangelogRow> = got
        .iter()
        .map(|r| {
            (
                r["_row_kind"].as_str().unwrap().to_string(),
                r["id"].as_i64().unwrap(),
                r["v"].as_i64(),
                r["s"].as_str().map(str::to_string),
            )
        })
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "{what}: pypaimon reads another changelog for snapshots {first}..={last}");
}

/// Orphan cleanup keeps every changelog file; expiring all but the latest snapshot removes all others'.
fn assert_changelog_files_live_and_die_with_their_snapshots(
    table: &Table,
    changelog_paths: &BTreeMap<i64, Vec<String>>,
) {
    use strata::table::{expire_snapshots, remove_orphan_files, ExpireOptions};
    let all: Vec<&String> = changelog_paths.values().flatten().collect();
    let cleaned = remove_orphan_files(table, std::time::Duration::ZERO, false).unwrap();
    assert!(
        all.iter().all(|p| std::path::Path::new(p).exists()),
        "orphan cleanup removed changelog files: {cleaned:?}"
    );
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    let opts = ExpireOptions {
        retain_min: 1,
        retain_max: 1,
        time_retained: std::time::Duration::from_secs(3600),
        dry_run: false,
    };
    expire_snapshots(table, &opts).unwrap();
    for (id, paths) in changelog_paths {
        for p in paths {
            assert_eq!(std::path::Path::new(p).exists(), *id == latest, "snapshot {id}: {p}");
        }
    }
}

/// `changelog-producer = input`: each commit's changelog files hold exactly the rows written in it, kinds
/// included; `lookup`: compactions of level 0 emit +I for new keys, -U/+U for updates and -D for deletes, and
/// every -U or -D carries exactly the row it replaces. Either way, folding a commit's changelog into the
/// previous state gives the new one, in both modes, and pypaimon's streaming reader reads the same changelog.
/// Expiring a snapshot removes its changelog files; orphan cleanup keeps those of retained snapshots.
#[test]
fn changelog_folds_into_every_snapshot() {
    let cases = [
        ("input", false, "deduplicate"),
        ("input", true, "deduplicate"),
        ("lookup", false, "deduplicate"),
        ("lookup", true, "deduplicate"),
        ("lookup", false, "partial-update"),
        ("lookup", true, "partial-update"),
        ("lookup", false, "aggregation"),
        ("lookup", true, "aggregation"),
    ];
    for (producer, dv, engine) in cases {
        let dir = tempfile::tempdir().unwrap();
        let table = create(dir.path(), "db.db/cl", dv, &changelog_options(producer, engine));
        let layout = KeyValueLayout::new(table.schema()).unwrap();
        let mut writer = TableWrite::new(&table).unwrap();
        let mut rng = StdRng::seed_from_u64(if dv { 5 } else { 6 });
        let mut folded = Model::new();
        let mut changelog_paths: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for c in 0..10 {
            let (rows, kinds) = random_changes(&mut rng, c);
            for (r, k) in rows.chunks(17).zip(kinds.chunks(17)) {
                writer.write_with_kinds(&batch(r), k).unwrap();
            }
            let messages = writer.prepare_commit().unwrap();
            let before = table.snapshot_manager().latest_id().unwrap().unwrap_or(0);
            table
                .new_commit("cl")
                .unwrap()
                .commit(&Committable { identifier: c, messages, ..Default::default() })
                .unwrap();
            // The commit's snapshots: APPEND (input changelog) and, when it compacted, COMPACT (lookup
            // changelog), in order.
            let latest = table.snapshot_manager().latest_id().unwrap().unwrap_or(0);
            let entries = changelog_entries(&table, before + 1, latest);
            let changelog_rows_count = entries.iter().map(|(_, e)| e.file.row_count).sum::<i64>();
            if producer == "input" {
                assert_eq!(changelog_rows_count, rows.len() as i64, "commit {c}");
            }
            let what = format!("{producer} {engine} dv {dv} commit {c}");
            let mut ours: Vec<ChangelogRow> = Vec::new();
            for (id, e) in &entries {
                let path = table.data_file_path(e).unwrap();
                assert!(e.file.file_name.starts_with("changelog-"), "{}", e.file.file_name);
                changelog_paths.entry(*id).or_default().push(path.clone());
                let rows = changelog_rows(&table, &layout, path, e);
                fold_changelog(&mut folded, &rows, producer == "lookup", &what);
                ours.extend(rows);
            }
            assert_eq!(
                folded,
                scan_rows(&table, false),
                "{producer} {engine} dv {dv}: changelog of commit {c} does not fold into it"
            );
            // pypaimon refuses the remove-record-on-delete flags the other engines need here.
            if c >= 8 && engine == "deduplicate" {
                assert_pypaimon_reads_the_changelog(
                    &table,
                    before + 1,
                    latest,
                    ours,
                    &format!("{producer} {engine} dv {dv}"),
                );
            }
        }
        assert_changelog_files_live_and_die_with_their_snapshots(&table, &changelog_paths);
    }
}
