//! The merge of sorted runs against a model: per key, the records ordered by sequence number, folded by
//! the merge engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use common::{batch, layout, Rec};
use proptest::prelude::*;
use strata_format::{AggFunction, MergeConfig, MergeIterator, Run};
use strata_spec::MergeEngine;

fn runs_strategy() -> impl Strategy<Value = (Vec<Vec<Rec>>, usize, usize)> {
    let rec =
        (0i64..40, 0i8..4, proptest::option::weighted(0.7, -50i64..50), proptest::option::weighted(0.7, "[a-c]{0,3}"));
    (proptest::collection::vec(proptest::collection::vec(rec, 0..60), 1..7), 1usize..9, 1usize..20).prop_map(
        |(runs, input_batch, out_batch)| {
            let mut seq = 0;
            let runs = runs
                .into_iter()
                .map(|r| {
                    let mut recs: Vec<Rec> = r
                        .into_iter()
                        .map(|(key, kind, v, s)| {
                            seq += 1;
                            Rec { key, seq, kind, v, s }
                        })
                        .collect();
                    recs.sort_by_key(|r| (r.key, r.seq));
                    recs
                })
                .collect();
            (runs, input_batch, out_batch)
        },
    )
}

/// (id, v, s) of a merged row.
type OutRow = (i64, Option<i64>, Option<String>);

fn merged(runs: &[Vec<Rec>], input_batch: usize, out_batch: usize, cfg: MergeConfig) -> Result<Vec<OutRow>, String> {
    let layout = layout();
    let runs: Vec<Run> = runs
        .iter()
        .map(|r| {
            let batches: Vec<strata_spec::Result<RecordBatch>> =
                r.chunks(input_batch).map(|c| Ok(batch(&layout, c))).collect();
            Box::new(batches.into_iter()) as Run
        })
        .collect();
    let it = MergeIterator::new(layout.clone(), runs, cfg, true, out_batch).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for b in it {
        let b = b.map_err(|e| e.to_string())?;
        assert!(b.num_rows() <= out_batch);
        let ids = b.column(3).as_primitive::<Int64Type>();
        let vs = b.column(4).as_primitive::<Int64Type>();
        let ss = b.column(5).as_string::<i32>();
        let kinds = b.column(2).as_primitive::<Int8Type>();
        for i in 0..b.num_rows() {
            assert!(kinds.value(i) == 0 || kinds.value(i) == 2, "a retraction survived with drop_delete");
            out.push((
                ids.value(i),
                vs.is_valid(i).then(|| vs.value(i)),
                ss.is_valid(i).then(|| ss.value(i).to_string()),
            ));
        }
    }
    Ok(out)
}

fn by_key(runs: &[Vec<Rec>]) -> BTreeMap<i64, Vec<Rec>> {
    let mut m: BTreeMap<i64, Vec<Rec>> = BTreeMap::new();
    for r in runs.iter().flatten() {
        m.entry(r.key).or_default().push(r.clone());
    }
    for v in m.values_mut() {
        v.sort_by_key(|r| r.seq);
    }
    m
}

fn retract(k: i8) -> bool {
    k == 1 || k == 3
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn deduplicate_keeps_the_newest_record((runs, ib, ob) in runs_strategy()) {
        let want: Vec<_> = by_key(&runs)
            .into_iter()
            .filter_map(|(k, recs)| {
                let last = recs.last().unwrap();
                (!retract(last.kind)).then(|| (k, last.v, last.s.clone()))
            })
            .collect();
        prop_assert_eq!(merged(&runs, ib, ob, MergeConfig::deduplicate(3)).unwrap(), want);
    }

    #[test]
    fn deduplicate_with_ignore_delete_skips_retractions((runs, ib, ob) in runs_strategy()) {
        let want: Vec<_> = by_key(&runs)
            .into_iter()
            .filter_map(|(k, recs)| recs.iter().rev().find(|r| !retract(r.kind)).map(|r| (k, r.v, r.s.clone())))
            .collect();
        let cfg = MergeConfig { ignore_delete: true, ..MergeConfig::deduplicate(3) };
        prop_assert_eq!(merged(&runs, ib, ob, cfg).unwrap(), want);
    }

    #[test]
    fn first_row_keeps_the_oldest_insert((runs, ib, ob) in runs_strategy()) {
        let want: Vec<_> = by_key(&runs)
            .into_iter()
            .filter_map(|(k, recs)| recs.iter().find(|r| !retract(r.kind)).map(|r| (k, r.v, r.s.clone())))
            .collect();
        let cfg = MergeConfig { engine: MergeEngine::FirstRow, ..MergeConfig::deduplicate(3) };
        prop_assert_eq!(merged(&runs, ib, ob, cfg).unwrap(), want);
    }

    #[test]
    fn partial_update_merges_non_null_fields((runs, ib, ob) in runs_strategy()) {
        let want: Vec<_> = by_key(&runs)
            .into_iter()
            .filter_map(|(k, recs)| {
                let (mut v, mut s, mut live) = (None, None, false);
                for r in &recs {
                    if r.kind == 3 {
                        v = None;
                        s = None;
                        live = false;
                    } else if r.kind == 1 {
                        continue;
                    } else {
                        live = true;
                        if r.v.is_some() { v = r.v; }
                        if r.s.is_some() { s = r.s.clone(); }
                    }
                }
                live.then_some((k, v, s))
            })
            .collect();
        let cfg = MergeConfig {
            engine: MergeEngine::PartialUpdate,
            remove_record_on_delete: true,
            ..MergeConfig::deduplicate(3)
        };
        // -U records are refused unless ignored: drop them from the input for this engine.
        let runs: Vec<Vec<Rec>> = runs.into_iter().map(|r| r.into_iter().filter(|x| x.kind != 1).collect()).collect();
        prop_assert_eq!(merged(&runs, ib, ob, cfg).unwrap(), want);
    }

    #[test]
    fn aggregation_sums_and_retracts((runs, ib, ob) in runs_strategy()) {
        let want: Vec<_> = by_key(&runs)
            .into_iter()
            .filter_map(|(k, recs)| {
                let (mut v, mut s, mut live) = (None::<i64>, None, false);
                for r in &recs {
                    if retract(r.kind) {
                        if let Some(x) = r.v { v = Some(v.unwrap_or(0) - x); }
                        live = true;
                    } else {
                        live = true;
                        if let Some(x) = r.v { v = Some(v.unwrap_or(0) + x); }
                        if r.s.is_some() { s = r.s.clone(); }
                    }
                }
                live.then_some((k, v, s))
            })
            .collect();
        let cfg = MergeConfig {
            engine: MergeEngine::Aggregation,
            aggregators: vec![AggFunction::PrimaryKey, AggFunction::Sum, AggFunction::LastNonNullValue],
            ignore_retract: vec![false, false, true],
            ..MergeConfig::deduplicate(3)
        };
        prop_assert_eq!(merged(&runs, ib, ob, cfg).unwrap(), want);
    }
}

#[test]
fn partial_update_refuses_retractions_unless_told() {
    let runs = vec![vec![Rec { key: 1, seq: 1, kind: 3, v: None, s: None }]];
    let cfg = MergeConfig { engine: MergeEngine::PartialUpdate, ..MergeConfig::deduplicate(3) };
    let e = merged(&runs, 1, 1, cfg).unwrap_err();
    assert!(e.contains("remove-record-on-delete"), "{e}");
}

/// Counts lookups, answering "no older copy".
struct CountingHook(Arc<std::sync::atomic::AtomicUsize>, Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

impl strata_format::LookupHook for CountingHook {
    fn lookup(&mut self, key: &[u8]) -> strata_spec::Result<Option<strata_format::LookupResult>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.1.lock().unwrap().push(key.to_vec());
        Ok(None)
    }
}

/// The lookup merge wrapper's three cases: (a) no level-0 record: no lookup; (b) level 0 and a deeper input:
/// no lookup (that file is rewritten); (c) level 0 only: one lookup.
#[test]
fn lookup_wrapper_looks_up_exactly_the_keys_only_in_level_0() {
    let layout = layout();
    let rec = |key, seq| Rec { key, seq, kind: 0, v: Some(1), s: None };
    // Run 0 is level 0, run 1 is level 3.
    let level0 = vec![rec(1, 10), rec(2, 11)];
    let level3 = vec![rec(2, 1), rec(3, 2)];
    let runs: Vec<Run> =
        [level0, level3].iter().map(|r| Box::new(vec![Ok(batch(&layout, r))].into_iter()) as Run).collect();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let keys = Arc::new(std::sync::Mutex::new(Vec::new()));
    let it = MergeIterator::new(layout.clone(), runs, MergeConfig::deduplicate(3), true, 16)
        .unwrap()
        .with_lookup(vec![0, 3], Box::new(CountingHook(calls.clone(), keys.clone())));
    let rows: usize = it.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 3);
    // Only key 1 (level 0 alone) was looked up; key 2 is in both, key 3 only deeper.
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let converter =
        arrow_row::RowConverter::new(vec![arrow_row::SortField::new(arrow_schema::DataType::Int64)]).unwrap();
    let one = converter.convert_columns(&[Arc::new(Int64Array::from(vec![1i64])) as ArrayRef]).unwrap();
    assert_eq!(keys.lock().unwrap()[0], one.row(0).as_ref().to_vec());
}

/// A lookup table (compacted with lookups, e.g. `changelog-producer = lookup` without deletion vectors, as
/// Flink writes it): each key's record at the shallowest level >= 1 already holds everything older, so a
/// deeper copy must not be aggregated again; level-0 records still are. Without the lookup semantics the
/// same runs sum every copy.
#[test]
fn lookup_tables_merge_only_the_shallowest_high_level_record() {
    let layout = layout();
    let rec = |key, seq, v| Rec { key, seq, kind: 0, v: Some(v), s: None };
    // Key 1: level 0 (+5), level 1 (the merged 100), level 3 (a stale 90). Key 2: only deep copies.
    let runs = [vec![rec(1, 10, 5)], vec![rec(1, 8, 100), rec(2, 7, 40)], vec![rec(1, 3, 90), rec(2, 2, 30)]];
    let levels = vec![0, 1, 3];
    let run = |lookup_levels: bool| {
        let cfg = MergeConfig {
            engine: MergeEngine::Aggregation,
            aggregators: vec![AggFunction::PrimaryKey, AggFunction::Sum, AggFunction::LastNonNullValue],
            lookup_levels,
            ..MergeConfig::deduplicate(3)
        };
        let inputs: Vec<Run> = runs.iter().map(|r| Box::new(vec![Ok(batch(&layout, r))].into_iter()) as Run).collect();
        let mut out = Vec::new();
        for b in MergeIterator::new(layout.clone(), inputs, cfg, true, 16).unwrap().with_run_levels(levels.clone()) {
            let b = b.unwrap();
            let ids = b.column(3).as_primitive::<Int64Type>();
            let vs = b.column(4).as_primitive::<Int64Type>();
            out.extend((0..b.num_rows()).map(|i| (ids.value(i), vs.value(i))));
        }
        out
    };
    assert_eq!(run(true), vec![(1, 105), (2, 40)]);
    assert_eq!(run(false), vec![(1, 195), (2, 70)]);
}

/// Partial-update with a sequence group (`fields.v.sequence-group = s`): an older `v` changes nothing, a
/// newer retraction clears the group, a key that received only a retraction is gone, a lone record is handed
/// on as written (merging on read), and records without a sequence leave the group empty.
#[test]
fn partial_update_sequence_groups_merge_as_paimons() {
    let rec = |key, seq, kind, v: Option<i64>, s: Option<&str>| Rec { key, seq, kind, v, s: s.map(str::to_string) };
    let runs = vec![vec![
        rec(1, 1, 0, Some(5), Some("a")),
        rec(1, 2, 0, Some(3), Some("b")),
        rec(1, 3, 1, Some(6), None),
        rec(2, 4, 0, None, Some("x")),
        rec(3, 5, 3, Some(1), Some("gone")),
        rec(4, 6, 0, None, Some("q")),
        rec(4, 7, 0, None, Some("r")),
    ]];
    let options = [("fields.v.sequence-group".to_string(), "s".to_string())].into_iter().collect();
    let names: Vec<String> = ["id", "v", "s"].iter().map(|n| n.to_string()).collect();
    let cfg = MergeConfig {
        engine: MergeEngine::PartialUpdate,
        sequence_groups: strata_format::SequenceGroups::from_options(&options, &names, &["id".to_string()]).unwrap(),
        ..MergeConfig::deduplicate(3)
    };
    let want = vec![(1, Some(6), None), (2, None, Some("x".to_string())), (4, None, None)];
    assert_eq!(merged(&runs, 2, 4, cfg).unwrap(), want);
}
