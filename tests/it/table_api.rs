//! The embedded API: `TableWriter` (put, delete, commit), `get`, and `ReadBuilder` (projection, filters,
//! limit, time travel, count), against a `BTreeMap` model in both table modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use common::fixtures::id_name_v_schema;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::spec::Datum;
use strata::{get, Catalog, CmpOp, FileIO, LocalFileIO, Predicate, ReadBuilder, Table, TableWriter};

type Model = BTreeMap<i64, (String, Option<i64>)>;

fn table(dir: &std::path::Path, name: &str, dv: bool, extra: &[(&str, &str)]) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let catalog = Catalog::new(io, dir.to_str().unwrap());
    catalog.create_database("db", true).unwrap();
    let dv = dv.to_string();
    let base = [("bucket", "3"), ("deletion-vectors.enabled", dv.as_str()), ("target-file-size", "16 kb")];
    let options: Vec<(&str, &str)> = base.into_iter().chain(extra.iter().copied()).collect();
    let schema = id_name_v_schema(&options);
    let t = catalog.create_table("db", name, schema, false).unwrap();
    assert!(catalog.list_tables("db").unwrap().contains(&name.to_string()));
    t
}

fn rows(batches: &[RecordBatch]) -> Model {
    let mut out = Model::new();
    for b in batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let names = b.column_by_name("name").unwrap().as_string::<i32>();
        let vs = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            out.insert(ids.value(i), (names.value(i).to_string(), vs.is_valid(i).then(|| vs.value(i))));
        }
    }
    out
}

fn workload(t: &Table, seed: u64, commits: usize, model: &mut Model) -> Vec<(i64, Model)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = TableWriter::new(t, "app").unwrap();
    let mut history = Vec::new();
    for c in 0..commits {
        for _ in 0..rng.random_range(1..300) {
            let id = rng.random_range(0..1000);
            if rng.random_bool(0.15) {
                w.delete(vec![Some(Datum::BigInt(id))]).unwrap();
                model.remove(&id);
            } else {
                let name = format!("n{}-{c}", rng.random_range(0..100));
                let v = rng.random_bool(0.8).then(|| rng.random_range(-500..500));
                w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String(name.clone())), v.map(Datum::BigInt)]).unwrap();
                model.insert(id, (name, v));
            }
        }
        let id = w.commit().unwrap().unwrap();
        history.push((id, model.clone()));
    }
    history
}

#[test]
fn get_equals_the_model_for_random_keys_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    for dv in [true, false] {
        let t = table(dir.path(), if dv { "dv" } else { "mor" }, dv, &[]);
        let mut model = Model::new();
        workload(&t, 11, 12, &mut model);
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..150 {
            let id = rng.random_range(0..1100);
            let got = get(&t, &[Some(Datum::BigInt(id))], None).unwrap();
            let got = got.map(|b| rows(&[b]).remove(&id).unwrap());
            assert_eq!(got, model.get(&id).cloned(), "dv={dv} key {id}");
        }
    }
}

/// A long-lived `TableQuery` refreshed after every commit answers like the model (both modes, partial-update
/// too, ORC files with zstd local files, and with cache bounds so small that every file is evicted and
/// rebuilt); it reuses its local lookup
/// files while the snapshot stays, and a query pinned to an old snapshot keeps answering for it after later
/// commits and a full compaction.
#[test]
fn a_table_query_equals_the_model_across_commits_and_keeps_its_snapshot() {
    use strata::TableQuery;
    let dir = tempfile::tempdir().unwrap();
    let cases: [(bool, &[(&str, &str)]); 5] = [
        (true, &[]),
        (false, &[]),
        (false, &[("merge-engine", "partial-update"), ("partial-update.remove-record-on-delete", "true")]),
        (true, &[("lookup.cache-max-memory-size", "1 b"), ("lookup.cache-max-disk-size", "1 b")]),
        (true, &[("file.format", "orc"), ("lookup.cache-spill-compression", "zstd")]),
    ];
    for (n, (dv, extra)) in cases.into_iter().enumerate() {
        let t = table(dir.path(), &format!("q{n}"), dv, extra);
        let query = TableQuery::new(&t).unwrap();
        assert_eq!(query.get(&[Some(Datum::BigInt(1))]).unwrap(), None, "an empty table has no rows");
        let mut model = Model::new();
        let mut rng = StdRng::seed_from_u64(40 + n as u64);
        let mut history = Vec::new();
        for c in 0..6 {
            history.extend(workload(&t, 100 * n as u64 + c, 1, &mut model));
            assert_eq!(query.refresh().unwrap(), Some(history.last().unwrap().0));
            // Partial-update keeps old values where a put has nulls, which the last-writer-wins model does
            // not: there a merged scan is the oracle.
            let expected = if n == 2 { rows(&ReadBuilder::new(&t).read().unwrap().batches) } else { model.clone() };
            let keys: Vec<i64> = (0..120).map(|_| rng.random_range(0..1100)).collect();
            for pass in 0..2 {
                let built = query.stats().built;
                for &id in &keys {
                    let got = query.get(&[Some(Datum::BigInt(id))]).unwrap();
                    let got = got.map(|b| rows(&[b]).remove(&id).unwrap());
                    assert_eq!(got, expected.get(&id).cloned(), "case {n} commit {c} key {id}");
                    let row = query.get_row(&[Some(Datum::BigInt(id))]).unwrap().map(|r| found_row(id, r));
                    assert_eq!(row, expected.get(&id).cloned(), "case {n} commit {c} key {id}: get_row");
                }
                assert_many_equal(&query, &keys, &expected, &format!("case {n} commit {c}"));
                if pass == 1 && n != 3 {
                    assert_eq!(query.stats().built, built, "case {n}: local files were rebuilt without a new snapshot");
                }
            }
        }
        let s = query.stats();
        assert!(s.built > 0 && s.blocks_read > 0, "case {n}: {s:?}");
        let (memory, disk) = query.cache_bytes();
        if n == 3 {
            assert!(s.evicted > 0, "case {n}: nothing was evicted under a 1-byte bound: {s:?}");
            assert_eq!(s.block_hits, 0, "case {n}: groups were kept under a 1-byte bound: {s:?}");
        } else {
            assert!(memory > 0 && disk > 0, "case {n}: local files take {memory} bytes in memory, {disk} on disk");
            // The second pass over the same keys found their row groups decompressed in memory.
            assert!(s.block_hits > 0, "case {n}: no row group was found in memory: {s:?}");
        }
        // A query pinned to the third snapshot, used only after more commits and a full compaction.
        let (old_id, old_model) = history[2].clone();
        let old_model =
            if n == 2 { rows(&ReadBuilder::new(&t).with_snapshot(old_id).read().unwrap().batches) } else { old_model };
        let pinned = TableQuery::at_snapshot(&t, old_id).unwrap();
        workload(&t, 900 + n as u64, 3, &mut model);
        TableWriter::new(&t, "compactor").unwrap().compact(true).unwrap();
        assert_eq!(pinned.snapshot_id(), Some(old_id));
        for id in 0..1000 {
            let got = pinned.get(&[Some(Datum::BigInt(id))]).unwrap().map(|b| rows(&[b]).remove(&id).unwrap());
            assert_eq!(got, old_model.get(&id).cloned(), "case {n}: snapshot {old_id} key {id}");
        }
        let err = TableQuery::at_snapshot(&t, 10_000).unwrap_err();
        assert!(err.to_string().contains("10000"), "{err}");
        let err = query.get(&[]).unwrap_err();
        assert!(err.to_string().contains("primary key"), "{err}");
    }
}

/// The model's row of a `TableQuery::get_row` answer for key `id`: read in place from its packed form, or
/// from the decoded batch.
fn found_row(id: i64, row: strata::FoundRow) -> (String, Option<i64>) {
    use strata::format::lookup::PackedValue;
    match row {
        strata::FoundRow::Batch(b) => rows(&[b]).remove(&id).expect("the row found is the key's"),
        strata::FoundRow::Packed(p) => {
            let names: Vec<String> = p.schema().fields().iter().map(|f| f.name().clone()).collect();
            assert_eq!(names, ["id", "name", "v"]);
            let (mut name, mut v) = (None, None);
            let mut seen = Vec::new();
            p.for_each_value(&mut |i, value| {
                seen.push(i);
                match (i, value) {
                    (0, PackedValue::Int(k)) => assert_eq!(k, id),
                    (1, PackedValue::Str(s)) => name = Some(s.to_string()),
                    (2, PackedValue::Int(x)) => v = Some(x),
                    (2, PackedValue::Null) => {}
                    other => panic!("unexpected value {other:?}"),
                }
            })
            .unwrap();
            assert_eq!(seen, [0, 1, 2]);
            (name.expect("a name"), v)
        }
    }
}

/// `TableQuery::get_many` of `ids` (repeats and absent keys among them) answers like `expected`: a row per
/// key found, in the order asked, and `found` says which.
fn assert_many_equal(query: &strata::TableQuery, ids: &[i64], expected: &Model, case: &str) {
    let keys: Vec<Vec<Option<Datum>>> = ids.iter().map(|&id| vec![Some(Datum::BigInt(id))]).collect();
    let many = query.get_many(&keys).unwrap();
    assert_eq!(many.found.len(), ids.len(), "{case}");
    let mut at = 0;
    for (&id, &found) in ids.iter().zip(&many.found) {
        let got = found.then(|| {
            at += 1;
            rows(&[many.rows.slice(at - 1, 1)]).remove(&id).expect("the row found is the key's")
        });
        assert_eq!(got, expected.get(&id).cloned(), "{case}: get_many, key {id}");
    }
    assert_eq!(at, many.rows.num_rows(), "{case}: rows beyond the keys found");
}

/// One query shared by four threads, with cache bounds so small that local files are evicted and rebuilt
/// while other threads use them, answers every lookup like the model; a fifth thread refreshing it as new
/// snapshots land only ever moves it forward.
#[test]
fn a_table_query_shared_by_threads_answers_like_the_model() {
    use strata::TableQuery;
    let dir = tempfile::tempdir().unwrap();
    for (dv, bound) in [(true, "64 kb"), (false, "1 b")] {
        let t = table(dir.path(), &format!("shared-{dv}"), dv, &[("lookup.cache-max-memory-size", bound)]);
        let mut model = Model::new();
        workload(&t, 70, 6, &mut model);
        let query = TableQuery::new(&t).unwrap();
        let pinned = query.snapshot_id();
        std::thread::scope(|s| {
            for thread in 0..4u64 {
                let (query, model) = (&query, &model);
                s.spawn(move || {
                    let mut rng = StdRng::seed_from_u64(thread);
                    for _ in 0..150 {
                        let id = rng.random_range(0..1100);
                        let got = query.get(&[Some(Datum::BigInt(id))]).unwrap();
                        let got = got.map(|b| rows(&[b]).remove(&id).unwrap());
                        assert_eq!(got, model.get(&id).cloned(), "dv {dv} thread {thread} key {id}");
                    }
                    let ids: Vec<i64> = (0..300).map(|_| rng.random_range(0..1100)).collect();
                    assert_many_equal(query, &ids, model, &format!("dv {dv} thread {thread}"));
                });
            }
        });
        let s = query.stats();
        assert!(s.built > 0, "{s:?}");
        // Commits land while one thread refreshes and another reads: the snapshot never moves back.
        let mut later = model.clone();
        std::thread::scope(|s| {
            let query = &query;
            let refresher = s.spawn(move || {
                let mut seen = pinned;
                for _ in 0..40 {
                    let now = query.refresh().unwrap();
                    assert!(now >= seen, "refresh moved back from {seen:?} to {now:?}");
                    seen = now;
                }
            });
            workload(&t, 71, 3, &mut later);
            refresher.join().unwrap();
        });
        query.refresh().unwrap();
        for id in 0..1000 {
            let got = query.get(&[Some(Datum::BigInt(id))]).unwrap().map(|b| rows(&[b]).remove(&id).unwrap());
            assert_eq!(got, later.get(&id).cloned(), "dv {dv}: after the refresh, key {id}");
        }
        assert_many_equal(&query, &(0..1100).rev().collect::<Vec<_>>(), &later, &format!("dv {dv}, every key"));
        assert_many_equal(&query, &[], &later, &format!("dv {dv}, no key"));
    }
}

#[test]
fn read_builder_projects_filters_limits_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    for dv in [true, false] {
        let t = table(dir.path(), if dv { "dv" } else { "mor" }, dv, &[]);
        let mut model = Model::new();
        workload(&t, 21, 10, &mut model);
        assert_eq!(rows(&ReadBuilder::new(&t).read().unwrap().batches), model);
        assert_eq!(ReadBuilder::new(&t).count().unwrap(), model.len() as u64, "dv={dv}");

        let f = Predicate::And(vec![
            Predicate::cmp("id", CmpOp::GtEq, Datum::BigInt(200)),
            Predicate::cmp("v", CmpOp::Lt, Datum::BigInt(0)),
        ]);
        let want: Model = model
            .iter()
            .filter(|(k, (_, v))| **k >= 200 && v.is_some_and(|v| v < 0))
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        let got = ReadBuilder::new(&t).with_filter(f.clone()).read().unwrap();
        assert_eq!(rows(&got.batches), want, "dv={dv}");
        assert_eq!(ReadBuilder::new(&t).with_filter(f).count().unwrap(), want.len() as u64);

        let f = Predicate::eq("name", Datum::String("n7-3".into()));
        let want: Model = model.iter().filter(|(_, (n, _))| n == "n7-3").map(|(k, v)| (*k, v.clone())).collect();
        assert_eq!(rows(&ReadBuilder::new(&t).with_filter(f).read().unwrap().batches), want);

        let proj = ReadBuilder::new(&t).with_projection(&["v", "id"]).with_limit(17).read().unwrap();
        assert_eq!(proj.num_rows(), 17.min(model.len()));
        assert_eq!(proj.schema.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), vec!["v", "id"]);
        for b in &proj.batches {
            let ids = b.column(1).as_primitive::<Int64Type>();
            let vs = b.column(0).as_primitive::<Int64Type>();
            for i in 0..b.num_rows() {
                assert_eq!(vs.is_valid(i).then(|| vs.value(i)), model[&ids.value(i)].1);
            }
        }
        let none =
            ReadBuilder::new(&t).with_filter(Predicate::cmp("id", CmpOp::Gt, Datum::BigInt(5000))).plan().unwrap();
        assert!(none.splits.iter().all(|s| s.files.is_empty()) || none.splits.is_empty(), "files not pruned by stats");
    }
}

/// Streaming hands out the same rows as a materialized read, each once, in both modes and with a filter and
/// projection; a limit cuts the stream exactly; a stream dropped half-way stops its threads.
#[test]
fn streamed_reads_equal_materialized_reads() {
    let dir = tempfile::tempdir().unwrap();
    for dv in [true, false] {
        let t = table(dir.path(), if dv { "sdv" } else { "smor" }, dv, &[("target-file-size", "4 kb")]);
        let mut model = Model::new();
        workload(&t, 41, 8, &mut model);
        let mut stream = ReadBuilder::new(&t).stream().unwrap();
        assert_eq!(stream.snapshot(), t.snapshot(None).unwrap().map(|s| s.id));
        let schema = stream.schema();
        let batches: Vec<RecordBatch> = stream.by_ref().map(|b| b.unwrap()).collect();
        assert!(stream.next().is_none(), "a finished stream yielded again");
        assert!(batches.iter().all(|b| b.schema() == schema));
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), model.len(), "dv={dv}: rows repeated");
        assert_eq!(rows(&batches), model, "dv={dv}");

        let f = Predicate::cmp("v", CmpOp::GtEq, Datum::BigInt(100));
        let want: Model =
            model.iter().filter(|(_, (_, v))| v.is_some_and(|v| v >= 100)).map(|(k, v)| (*k, v.clone())).collect();
        let got: Vec<RecordBatch> = ReadBuilder::new(&t).with_filter(f).stream().unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(rows(&got), want, "dv={dv}: filtered stream");

        let limited: usize = ReadBuilder::new(&t)
            .with_projection(&["id"])
            .with_limit(33)
            .stream()
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(limited, 33.min(model.len()));

        let mut partial = ReadBuilder::new(&t).with_batch_size(7).stream().unwrap();
        assert!(partial.next().unwrap().unwrap().num_rows() > 0);
        drop(partial);
    }
}

#[test]
fn a_plan_keeps_reading_its_snapshot_while_commits_land() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path(), "tt", true, &[]);
    let mut model = Model::new();
    let history = workload(&t, 31, 5, &mut model);
    let (snap, at_snap) = history[2].clone();
    let rb = ReadBuilder::new(&t).with_snapshot(snap);
    let plan = rb.plan().unwrap();
    // More commits and a full compaction land after the plan.
    workload(&t, 32, 4, &mut model);
    TableWriter::new(&t, "compactor").unwrap().compact(true).unwrap();
    assert_eq!(rows(&rb.read_plan(&plan).unwrap().batches), at_snap);
    let streamed: Vec<RecordBatch> = rb.stream_plan(&plan).unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(rows(&streamed), at_snap, "a streamed plan left its snapshot");
    // Time travel to every earlier snapshot reads what the model held then.
    for (id, m) in &history {
        assert_eq!(&rows(&ReadBuilder::new(&t).with_snapshot(*id).read().unwrap().batches), m, "snapshot {id}");
    }
}

#[test]
fn raw_splits_pack_files_across_buckets_and_carry_their_deletion_files() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(
        dir.path(),
        "split",
        true,
        &[("source.split.target-size", "20 kb"), ("source.split.open-file-cost", "1 kb")],
    );
    let mut model = Model::new();
    workload(&t, 41, 8, &mut model);
    let plan = ReadBuilder::new(&t).plan().unwrap();
    assert!(plan.splits.iter().all(|s| s.raw));
    assert!(plan.splits.len() > 1, "expected several splits");
    // No split of several files passes the target, nor a quarter of an even share per core (so that the
    // work queue balances files of different sizes whatever the target); and files are packed across
    // buckets: a split ends only where the next file would not fit in it, not at a bucket's end.
    let weight = |s: &strata::table::DataSplit| -> i64 { s.files.iter().map(|(_, f)| f.file_size.max(1024)).sum() };
    let total: i64 = plan.splits.iter().map(weight).sum();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as i64;
    let bound = (20 * 1024).min((total + 4 * cores - 1) / (4 * cores));
    for s in plan.splits.iter().filter(|s| s.files.len() > 1) {
        assert!(weight(s) <= bound, "a split of {} bytes in {} files; bound {bound}", weight(s), s.files.len());
    }
    for pair in plan.splits.windows(2) {
        let next = pair[1].files[0].1.file_size.max(1024);
        assert!(
            weight(&pair[0]) + next > bound,
            "a split of {} bytes ended before a {next}-byte file",
            weight(&pair[0])
        );
    }
    let with_dv = plan.splits.iter().flat_map(|s| s.deletion_files.iter()).filter(|d| d.is_some()).count();
    assert!(with_dv > 0, "no deletion files attached");
    let counted: u64 = plan.splits.iter().map(|s| s.merged_row_count().unwrap()).sum();
    assert_eq!(counted, model.len() as u64);
}

/// A bucket compacted into one large file is read in parts (row ranges) by several threads, not by one: the
/// parts cover the file once, each counts its live rows without a read, and scans, filtered scans, streams
/// and counts over them return the model's rows.
#[test]
fn a_large_file_is_read_in_parts_with_its_deletion_vector() {
    use arrow_array::{Int64Array, StringArray};
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path(), "parts", true, &[("bucket", "1"), ("target-file-size", "256 mb")]);
    let n = 300_000i64;
    let mut model = Model::new();
    let batch = |ids: Vec<i64>, round: i64, model: &mut Model| {
        let names: Vec<String> = ids.iter().map(|i| format!("n{}", i * 7 + round)).collect();
        let vs: Vec<Option<i64>> = ids.iter().map(|i| (i % 5 != 0).then_some(i * round)).collect();
        for ((id, name), v) in ids.iter().zip(&names).zip(&vs) {
            model.insert(*id, (name.clone(), *v));
        }
        let fields = vec![
            arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
            arrow_schema::Field::new("name", arrow_schema::DataType::Utf8, true),
            arrow_schema::Field::new("v", arrow_schema::DataType::Int64, true),
        ];
        RecordBatch::try_new(
            Arc::new(arrow_schema::Schema::new(fields)),
            vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(names)), Arc::new(Int64Array::from(vs))],
        )
        .unwrap()
    };
    let mut w = TableWriter::new(&t, "app").unwrap();
    w.write(&batch((0..n).collect(), 1, &mut model)).unwrap();
    w.commit().unwrap();
    w.compact(true).unwrap();
    // Updates and deletes spread over the file: its deletion vector marks their old rows.
    w.write(&batch((0..n).step_by(97).collect(), 2, &mut model)).unwrap();
    for id in (5..n).step_by(1013) {
        w.delete(vec![Some(Datum::BigInt(id))]).unwrap();
        model.remove(&id);
    }
    w.commit().unwrap();
    let plan = ReadBuilder::new(&t).plan().unwrap();
    let parts: Vec<_> = plan.splits.iter().filter(|s| s.rows.is_some()).collect();
    assert!(parts.len() >= 2, "the large file was not read in parts: {} splits", plan.splits.len());
    let (file, meta) = &parts[0].files[0];
    let mut covered: Vec<std::ops::Range<u64>> =
        parts.iter().filter(|s| &s.files[0].0 == file).map(|s| s.rows.clone().unwrap()).collect();
    covered.sort_by_key(|r| r.start);
    assert_eq!(covered.first().unwrap().start, 0);
    assert_eq!(covered.last().unwrap().end, meta.row_count as u64);
    assert!(covered.windows(2).all(|w| w[0].end == w[1].start), "parts overlap or leave a gap: {covered:?}");
    assert!(parts.iter().any(|s| s.deletion_files[0].is_some()), "the parts carry no deletion vector");
    let counted: u64 = plan.splits.iter().map(|s| s.merged_row_count().unwrap()).sum();
    assert_eq!(counted, model.len() as u64, "live rows counted by the plan");
    assert_eq!(ReadBuilder::new(&t).count().unwrap(), model.len() as u64);
    // Each row once: a row read by two parts would be hidden by the model's map.
    let read = ReadBuilder::new(&t).read().unwrap();
    assert_eq!(read.num_rows(), model.len());
    assert_eq!(rows(&read.batches), model);
    let streamed: Vec<RecordBatch> = ReadBuilder::new(&t).stream().unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(streamed.iter().map(RecordBatch::num_rows).sum::<usize>(), model.len());
    assert_eq!(rows(&streamed), model);
    let f = Predicate::And(vec![
        Predicate::cmp("id", CmpOp::GtEq, Datum::BigInt(100_000)),
        Predicate::cmp("id", CmpOp::Lt, Datum::BigInt(170_000)),
    ]);
    let want: Model = model.range(100_000..170_000).map(|(k, v)| (*k, v.clone())).collect();
    assert_eq!(rows(&ReadBuilder::new(&t).with_filter(f.clone()).read().unwrap().batches), want);
    assert_eq!(ReadBuilder::new(&t).with_filter(f).count().unwrap(), want.len() as u64);
}

/// Regression: `TableWrite` cast each column to the table's type with arrow's `cast`, which truncates a
/// fraction and makes an overflowing value NULL, so a nullable BIGINT column stored 1 for 1.5 and NULL for
/// u64::MAX without a word. Values are now taken exactly or the write is refused, and nothing is committed.
#[test]
fn batches_whose_values_would_change_are_refused_not_stored_changed() {
    use arrow_array::{Float64Array, Int64Array, StringArray, UInt64Array};
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path(), "exact", true, &[]);
    let batch = |v: Arc<dyn Array>| {
        let fields = vec![
            arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
            arrow_schema::Field::new("name", arrow_schema::DataType::Utf8, true),
            arrow_schema::Field::new("v", v.data_type().clone(), true),
        ];
        let ids = Arc::new(Int64Array::from(vec![1, 2]));
        let names = Arc::new(StringArray::from(vec!["a", "b"]));
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), vec![ids, names, v]).unwrap()
    };
    for v in [
        Arc::new(Float64Array::from(vec![1.0, 1.5])) as Arc<dyn Array>,
        Arc::new(UInt64Array::from(vec![1, u64::MAX])) as Arc<dyn Array>,
    ] {
        let mut w = TableWriter::new(&t, "app").unwrap();
        let e = w.write(&batch(v)).unwrap_err();
        assert_eq!(e.kind(), strata::ErrorKind::Invalid, "{e}");
        assert!(e.to_string().contains("column 'v'") && e.to_string().contains("row 1"), "{e}");
        assert_eq!(w.commit().unwrap(), None);
    }
    assert!(t.snapshot(None).unwrap().is_none());
    // Values that fit are taken whatever their Arrow type.
    let mut w = TableWriter::new(&t, "app").unwrap();
    w.write(&batch(Arc::new(Float64Array::from(vec![1.0, -7.0])))).unwrap();
    w.commit().unwrap();
    let read = ReadBuilder::new(&t).read().unwrap();
    assert_eq!(
        rows(&read.batches).into_iter().map(|(k, (_, v))| (k, v)).collect::<Vec<_>>(),
        vec![(1, Some(1)), (2, Some(-7))]
    );
}

/// `get_many` answers like the model (and like one `get` per key) for a random mix of present, absent,
/// deleted and repeated keys, in both modes, and in key order of the request.
#[test]
fn get_many_equals_the_model_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    for dv in [true, false] {
        let t = table(dir.path(), if dv { "dv" } else { "mor" }, dv, &[]);
        let mut model = Model::new();
        workload(&t, 23, 12, &mut model);
        let mut rng = StdRng::seed_from_u64(9);
        for n in [1usize, 7, 40, 600] {
            let ids: Vec<i64> = (0..n).map(|_| rng.random_range(0..1100)).collect();
            let keys: Vec<Vec<Option<Datum>>> = ids.iter().map(|&id| vec![Some(Datum::BigInt(id))]).collect();
            let got = strata::table::get_many(&t, &keys, None).unwrap();
            assert_eq!(got.len(), ids.len());
            for (id, row) in ids.iter().zip(got) {
                let row = row.map(|b| rows(&[b]).remove(id).unwrap());
                assert_eq!(row, model.get(id).cloned(), "dv={dv} n={n} key {id}");
            }
        }
        // Time travel: an older snapshot answers as `get` does there.
        let old = t.snapshot(None).unwrap().unwrap().id - 3;
        let keys: Vec<Vec<Option<Datum>>> = (0..1100).step_by(13).map(|id| vec![Some(Datum::BigInt(id))]).collect();
        let many = strata::table::get_many(&t, &keys, Some(old)).unwrap();
        for (k, row) in keys.iter().zip(many) {
            assert_eq!(row, get(&t, k, Some(old)).unwrap(), "dv={dv} snapshot {old} key {k:?}");
        }
    }
}
