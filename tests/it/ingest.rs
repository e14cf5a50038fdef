//! Ingest: a load followed by update rounds into a merge-on-read table, as `scripts/bench-load.sh` runs it, with
//! a write buffer small enough that every round spills (on spill threads) and the buffers of all buckets share
//! it. Checked against a `BTreeMap` model after every commit, and for where the load's files end up: a bucket's
//! first large write is moved out of level 0 unchanged, so later update rounds merge among themselves above it
//! instead of rewriting it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::fixtures::id_name_v_schema;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::table::commit_batch;
use strata::{Catalog, FileIO, LocalFileIO, ReadBuilder, Table, TableWrite};

type Model = BTreeMap<i64, (String, i64)>;

fn batch(rows: &[(i64, String, i64)]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("v", ArrowType::Int64, true),
    ]);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.as_str()))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
    ];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

fn scan(t: &Table) -> Model {
    let read = ReadBuilder::new(t);
    let mut out = Model::new();
    for b in read.read_plan(&read.plan().unwrap()).unwrap().batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let names = b.column_by_name("name").unwrap().as_string::<i32>();
        let vs = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            assert!(out.insert(ids.value(i), (names.value(i).to_string(), vs.value(i))).is_none(), "a key twice");
        }
    }
    out
}

/// Live data files of the latest snapshot: (name, level).
fn live(t: &Table) -> BTreeSet<(String, i32)> {
    let s = t.snapshot(None).unwrap().unwrap();
    t.live_files(&s).unwrap().into_iter().map(|e| (e.file.file_name, e.file.level)).collect()
}

/// Writes `rows` in batches of 5,000 as one commit that waits for its compactions, as `strata write` does.
fn write_round(t: &Table, rows: &[(i64, String, i64)], model: &mut Model) {
    let mut w = TableWrite::new(t).unwrap();
    for part in rows.chunks(5_000) {
        w.write_batch(&batch(part)).unwrap();
    }
    let messages = w.prepare_commit_waiting().unwrap();
    commit_batch("ingest-test", t, &mut w, messages, None).unwrap();
    for (k, name, v) in rows {
        model.insert(*k, (name.clone(), *v));
    }
}

#[test]
fn a_load_then_update_rounds_keep_every_row_and_leave_the_load_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let catalog = Catalog::new(io, dir.path().to_str().unwrap());
    catalog.create_database("db", true).unwrap();
    // 4 buckets sharing a 256 KiB buffer: the load (about 4 MiB in memory) spills many runs per bucket.
    let options = [
        ("bucket", "4"),
        ("write-buffer-size", "256 kb"),
        ("target-file-size", "64 kb"),
        ("deletion-vectors.enabled", "false"),
    ];
    let t = catalog.create_table("db", "t", id_name_v_schema(&options), false).unwrap();
    let n = 60_000i64;
    let mut model = Model::new();
    let load: Vec<(i64, String, i64)> = (0..n).map(|k| (k, format!("load-{k:08}"), k)).collect();
    write_round(&t, &load, &mut model);
    assert_eq!(scan(&t), model, "after the load");
    let after_load = live(&t);
    let max_level = 5;
    assert!(
        after_load.iter().all(|(_, level)| *level == max_level),
        "the load's files were left below the max level: {after_load:?}"
    );
    let mut rng = StdRng::seed_from_u64(7);
    for round in 1..=5 {
        // Random keys, unsorted, some written twice in the round (the later write wins).
        let rows: Vec<(i64, String, i64)> =
            (0..n / 10).map(|i| (rng.random_range(0..n), format!("r{round}-{i}"), round * 1_000_000 + i)).collect();
        write_round(&t, &rows, &mut model);
        assert_eq!(scan(&t), model, "after update round {round}");
    }
    // The update rounds compacted among themselves (five runs per bucket trigger it), above the load, whose
    // files were never rewritten.
    let now = live(&t);
    let kept = after_load.iter().filter(|f| now.contains(f)).count();
    let load_files = after_load.len();
    assert_eq!(kept, load_files, "the load's files were rewritten by the update rounds' compaction: {now:?}");
    assert!(now.iter().any(|(_, level)| (1..max_level).contains(level)), "the rounds were not compacted: {now:?}");
}
