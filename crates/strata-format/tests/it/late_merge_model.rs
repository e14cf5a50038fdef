//! Merging by keys first (`merge_selection`, then the files read without merging) against the model and
//! against the whole-record merge (`merge_read`): random sorted runs of inserts and retractions, at level 0
//! and in a deeper level split over two files, some rows already deleted by deletion vectors, for the
//! engines that keep one stored record per key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::{Array, RecordBatch};
use common::{batch, layout, writer_config, Rec};
use proptest::prelude::*;
use strata_dv::DeletionVector;
use strata_format::{
    file_columns, keys_first_applies, merge_read, merge_selection, DataFileRef, FileRead, KeyValueLayout, KvFileWriter,
    MergeConfig,
};
use strata_io::{FileIO, MemoryFileIO};
use strata_spec::MergeEngine;

/// (v, s) of a key's surviving row.
type Row = (Option<i64>, Option<String>);

/// One file holding `recs` (sorted) at `level`, named `name`, its rows at `deleted` removed by a deletion
/// vector.
fn write_file(io: &Arc<dyn FileIO>, layout: &Arc<KeyValueLayout>, name: &str, recs: &[Rec], level: i32) -> DataFileRef {
    let cfg = writer_config(level);
    let file_name = name.to_string();
    let mut w = KvFileWriter::new(io.clone(), "/b".into(), Box::new(move || file_name.clone()), layout.clone(), cfg);
    w.write(&batch(layout, recs)).unwrap();
    let meta = w.close().unwrap().remove(0);
    DataFileRef::new(format!("/b/{name}"), meta, None)
}

/// The key -> row map of reading `files` without merging (their deletion vectors applied).
fn read_raw(io: &Arc<dyn FileIO>, layout: &KeyValueLayout, files: &[DataFileRef]) -> BTreeMap<i64, Row> {
    let mut out = BTreeMap::new();
    for f in files {
        for b in FileRead::new(file_columns(layout)).batch_size(7).open(io, f).unwrap() {
            collect(&b.unwrap(), &mut out);
        }
    }
    out
}

fn collect(b: &RecordBatch, out: &mut BTreeMap<i64, Row>) {
    let kinds = b.column(2).as_primitive::<Int8Type>();
    let (ids, vs, ss) = (
        b.column(3).as_primitive::<Int64Type>(),
        b.column(4).as_primitive::<Int64Type>(),
        b.column(5).as_string::<i32>(),
    );
    for i in 0..b.num_rows() {
        assert!(kinds.value(i) == 0 || kinds.value(i) == 2, "a retraction was selected");
        let row = (vs.is_valid(i).then(|| vs.value(i)), ss.is_valid(i).then(|| ss.value(i).to_string()));
        assert!(out.insert(ids.value(i), row).is_none(), "key {} read twice", ids.value(i));
    }
}

fn retract(k: i8) -> bool {
    k == 1 || k == 3
}

/// What the merge must keep of each key's live records.
fn model(recs: &[Rec], cfg: &MergeConfig) -> BTreeMap<i64, Row> {
    let mut by_key: BTreeMap<i64, Vec<&Rec>> = BTreeMap::new();
    for r in recs {
        by_key.entry(r.key).or_default().push(r);
    }
    let mut out = BTreeMap::new();
    for (k, mut rs) in by_key {
        rs.sort_by_key(|r| r.seq);
        let kept = match cfg.engine {
            MergeEngine::FirstRow => rs.iter().find(|r| !retract(r.kind)),
            _ if cfg.ignore_delete => rs.iter().rev().find(|r| !retract(r.kind)),
            _ => rs.last().filter(|r| !retract(r.kind)),
        };
        if let Some(r) = kept {
            out.insert(k, (r.v, r.s.clone()));
        }
    }
    out
}

type Case = (Vec<Vec<(i64, i8, Option<i64>, Option<String>, bool)>>, bool, usize, u8);

fn case() -> impl Strategy<Value = Case> {
    let rec = (
        0i64..40,
        prop_oneof![3 => Just(0i8), 1 => Just(1i8), 2 => Just(2i8), 1 => Just(3i8)],
        proptest::option::weighted(0.7, -50i64..50),
        proptest::option::weighted(0.7, "[a-c]{0,3}"),
        proptest::bool::weighted(0.1),
    );
    (proptest::collection::vec(proptest::collection::vec(rec, 0..50), 1..6), any::<bool>(), 1usize..20, 0u8..3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Runs (the first at level 2 in two files when `deep`, the rest level-0 files), some rows deleted up
    /// front: the keys-first read returns the model's rows, as the whole-record merge does.
    #[test]
    fn keys_first_reads_what_the_merge_returns((runs, deep, batch_size, engine) in case()) {
        let layout = layout();
        let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
        let mut cfg = MergeConfig::from_schema(&layout.schema).unwrap();
        match engine {
            0 => {}
            1 => cfg.ignore_delete = true,
            _ => cfg.engine = MergeEngine::FirstRow,
        }
        let mut seq = 0;
        let mut files = Vec::new();
        let mut live = Vec::new();
        for (i, run) in runs.into_iter().enumerate() {
            let mut recs: Vec<(Rec, bool)> = run
                .into_iter()
                .map(|(key, kind, v, s, deleted)| {
                    seq += 1;
                    (Rec { key, seq, kind, v, s }, deleted)
                })
                .collect();
            recs.sort_by_key(|(r, _)| (r.key, r.seq));
            if recs.is_empty() {
                continue;
            }
            let deep_run = deep && i == 0;
            // A deeper level is one run over files of disjoint key ranges.
            let parts: Vec<Vec<(Rec, bool)>> = if deep_run {
                let split = recs[recs.len() / 2].0.key;
                let (a, b): (Vec<_>, Vec<_>) = recs.into_iter().partition(|(r, _)| r.key < split);
                vec![a, b].into_iter().filter(|p| !p.is_empty()).collect()
            } else {
                vec![recs]
            };
            for (j, part) in parts.into_iter().enumerate() {
                let plain: Vec<Rec> = part.iter().map(|(r, _)| r.clone()).collect();
                let mut f = write_file(&io, &layout, &format!("f{i}-{j}.parquet"), &plain, if deep_run { 2 } else { 0 });
                let mut dv = DeletionVector::new(false);
                for (pos, (r, deleted)) in part.iter().enumerate() {
                    if *deleted {
                        dv.delete(pos as u64).unwrap();
                    } else {
                        live.push(r.clone());
                    }
                }
                if !dv.is_empty() {
                    f.dv = Some(Arc::new(dv));
                }
                files.push(f);
            }
        }
        prop_assert!(keys_first_applies(&cfg, &files));
        let want = model(&live, &cfg);
        let mut merged = BTreeMap::new();
        for b in merge_read(io.clone(), layout.clone(), files.clone(), cfg.clone(), true, batch_size).unwrap() {
            collect(&b.unwrap(), &mut merged);
        }
        prop_assert_eq!(&merged, &want, "the whole-record merge");
        let selected = merge_selection(&io, &layout, files.clone(), cfg, batch_size).unwrap();
        prop_assert!(selected.len() <= files.len());
        prop_assert_eq!(read_raw(&io, &layout, &selected), want, "keys first");
    }
}

/// Engines that build a key's result from several records, and `sequence.field`, keep the whole-record
/// merge: `merge_selection` refuses them rather than returning one record of each key.
#[test]
fn keys_first_refuses_engines_that_combine_records() {
    let layout = layout();
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let rec = |key, seq| Rec { key, seq, kind: 0, v: Some(1), s: None };
    let files = vec![
        write_file(&io, &layout, "a.parquet", &[rec(1, 1)], 0),
        write_file(&io, &layout, "b.parquet", &[rec(1, 2)], 0),
    ];
    let base = MergeConfig::from_schema(&layout.schema).unwrap();
    for (what, cfg) in [
        ("partial-update", MergeConfig { engine: MergeEngine::PartialUpdate, ..base.clone() }),
        ("aggregation", MergeConfig { engine: MergeEngine::Aggregation, ..base.clone() }),
        ("sequence.field", MergeConfig { sequence_fields: vec![1], ..base.clone() }),
    ] {
        assert!(!keys_first_applies(&cfg, &files), "{what}");
        assert!(merge_selection(&io, &layout, files.clone(), cfg, 16).is_err(), "{what}");
    }
    assert!(keys_first_applies(&base, &files));
}
