//! Incremental reads across engines (issue 16): paimon-rust 0.4.0's and pypaimon 2.1.0's incremental delta
//! reads of Strata's tables (deletion vectors and merge-on-read, a partition, three buckets,
//! `num-sorted-run.compaction-trigger` 2, so that commits compact their own writes) return exactly the rows
//! of each write, for every snapshot range; Strata's incremental reads of pypaimon's tables equal pypaimon's
//! and the model of what pypaimon wrote. Every oracle is held to the model of the writes, never to Strata.
//!
//! What the oracles return for a range of several snapshots, as found by running them:
//! - paimon-rust's `new_incremental_scan(start, end, "delta")`: the ADD files of the range's APPEND snapshots,
//!   grouped per bucket and read without merging (Java's `IncrementalDeltaStartingScanner` with streaming
//!   splits): every write's rows with their row kinds, a key written twice comes twice. The order within a
//!   bucket is the files', not always the snapshots', so it is compared as a multiset.
//! - pypaimon's streaming reader plans one snapshot at a time (its delta follow-up scanner skips all but
//!   APPEND snapshots), so it is read snapshot by snapshot; a range is the concatenation by construction.
//! - pypaimon's batch read with `incremental-between-timestamp` (it has no snapshot-id form): unmerged as
//!   well, but without row kinds, and the window resolves to snapshots by commit time (the latest snapshot at
//!   or before each bound, so a COMPACT snapshot of the same millisecond stands in for its APPEND one, which
//!   reads the same deltas); compared on the range it reports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::change_model::{by_key, create_at, expected, Change, ModelWriter};
use common::{json_rows, oracle, paimon_rust};
use serde_json::{json, Value};
use strata::spec::CommitKind;
use strata::table::IncrementalMode;
use strata::{ConsumerManager, LocalFileIO, ReadBuilder, Table};

/// Rows as sorted text of `columns` (a multiset); `kind` names the row-kind field (or none).
fn multiset(rows: &[Value], kind: Option<&str>, columns: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut parts: Vec<String> = kind.map(|k| r[k].to_string()).into_iter().collect();
            parts.extend(columns.iter().map(|c| r[*c].to_string()));
            parts.join("|")
        })
        .collect();
    out.sort();
    out
}

fn as_json(changes: &[Change]) -> Vec<Value> {
    changes.iter().map(|c| json!({"rowkind": c.kind, "id": c.id, "p": c.p, "v": c.v, "s": c.s})).collect()
}

fn rows_of(v: &Value) -> Vec<Value> {
    v.as_array().expect("rows").clone()
}

fn strata_tables_read_by_the_oracles(dv: bool, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wh/db.db/t");
    let mut w = ModelWriter::new(create_at(&path, dv, &[]), seed, None);
    for _ in 0..6 {
        w.commit_random();
        // Distinct commit times, so that pypaimon's time windows resolve to the writes' snapshots.
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    assert!(w.commits.iter().filter(|c| c.snapshots.len() >= 2).count() >= 2, "too few commits compacted");
    let path = w.table.path().to_string();
    let latest = w.table.snapshot_manager().latest_id().unwrap().unwrap();
    let ranges: Vec<(i64, i64)> = (0..latest).flat_map(|a| (a + 1..=latest).map(move |b| (a, b))).collect();
    let columns = ["id", "p", "v", "s"];
    let what = if dv { "deletion-vector table" } else { "merge-on-read table" };

    let theirs = paimon_rust("incremental_ranges", &json!({"path": path, "ranges": ranges}));
    for (i, &(a, b)) in ranges.iter().enumerate() {
        let want = as_json(&expected(&w.commits, a, b, false));
        assert_eq!(
            multiset(&rows_of(&theirs[i]["rows"]), Some("rowkind"), &columns),
            multiset(&want, Some("rowkind"), &columns),
            "paimon-rust's delta scan of ({a}, {b}] of Strata's {what}"
        );
    }

    let ids: Vec<i64> = (1..=latest).collect();
    let theirs = oracle(&["delta_snapshots", &path, &json!(ids).to_string()]);
    for (i, id) in ids.iter().enumerate() {
        let want = as_json(&expected(&w.commits, id - 1, *id, false));
        let kinds = &theirs[i]["kinds"];
        assert_eq!(
            multiset(&rows_of(&theirs[i]["rows"]), Some("_row_kind"), &columns),
            multiset(&want, Some("rowkind"), &columns),
            "pypaimon's streaming read of snapshot {id} ({kinds}) of Strata's {what}"
        );
    }

    let theirs = oracle(&["between", &path, &json!(ranges).to_string()]);
    let mut exact = 0;
    for (i, &(a, b)) in ranges.iter().enumerate() {
        let resolved = &theirs[i]["resolved"];
        let (ra, rb) = (resolved[0].as_i64().unwrap(), resolved[1].as_i64().unwrap());
        exact += usize::from((ra, rb) == (a, b));
        let want = as_json(&expected(&w.commits, ra, rb, false));
        assert_eq!(
            multiset(&rows_of(&theirs[i]["rows"]), None, &columns),
            multiset(&want, None, &columns),
            "pypaimon's incremental-between-timestamp read of ({a}, {b}] (resolved ({ra}, {rb}]) of Strata's {what}"
        );
    }
    assert!(exact * 2 > ranges.len(), "pypaimon resolved only {exact} of {} windows to their snapshots", ranges.len());
}

#[test]
fn paimon_rust_and_pypaimon_read_every_range_of_a_strata_deletion_vector_table() {
    strata_tables_read_by_the_oracles(true, 71);
}

#[test]
fn paimon_rust_and_pypaimon_read_every_range_of_a_strata_merge_on_read_table() {
    strata_tables_read_by_the_oracles(false, 72);
}

/// A pypaimon-written table (a partition, two buckets, deletes through `rowkind.field`): Strata's delta read
/// of every range equals the model of pypaimon's writes (a key's changes in commit order), paimon-rust's
/// delta scan of it, and pypaimon's own streaming read snapshot by snapshot.
#[test]
fn strata_reads_every_range_of_a_pypaimon_table_as_pypaimon_does() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    let ops = dir.path().join("ops.json");
    let spec = json!({"warehouse": warehouse, "table": "t", "format": "parquet", "buckets": 2, "partitioned": true,
                      "commits": 6, "ops_per_commit": 30, "key_space": 25, "delete_ratio": 0.25, "seed": 81,
                      "ops_out": ops});
    oracle(&["workload", &spec.to_string()]);
    let written: Vec<Vec<Value>> = serde_json::from_str(&std::fs::read_to_string(&ops).unwrap()).unwrap();
    let path = warehouse.join("db.db/t").to_str().unwrap().to_string();
    let table = Table::open(std::sync::Arc::new(LocalFileIO::new()), &path).unwrap();
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    assert_eq!(latest, written.len() as i64, "pypaimon commits one snapshot per write");
    // pypaimon merges a commit's rows per key before writing (the last wins), as Strata's writer does.
    let deltas: Vec<Vec<Value>> = written
        .iter()
        .map(|rows| {
            let mut last: std::collections::BTreeMap<(i64, String), Value> = Default::default();
            for r in rows {
                let mut r = r.clone();
                r["rowkind"] = r["rk"].clone();
                last.insert((r["id"].as_i64().unwrap(), r["p"].as_str().unwrap().to_string()), r);
            }
            last.into_values().collect()
        })
        .collect();
    let columns = ["id", "p", "name", "v", "d", "rk"];
    let key = |r: &Value| (r["id"].as_i64().unwrap(), r["p"].as_str().unwrap().to_string());
    let per_key = |rows: &[Value]| {
        let mut m: std::collections::BTreeMap<(i64, String), Vec<String>> = Default::default();
        for r in rows {
            m.entry(key(r)).or_default().push(multiset(std::slice::from_ref(r), Some("rowkind"), &columns).remove(0));
        }
        m
    };
    let ranges: Vec<(i64, i64)> = (0..latest).flat_map(|a| (a + 1..=latest).map(move |b| (a, b))).collect();
    let rust = paimon_rust("incremental_ranges", &json!({"path": path, "ranges": ranges}));
    let rb = ReadBuilder::new(&table);
    for (i, &(a, b)) in ranges.iter().enumerate() {
        let want: Vec<Value> = deltas[a as usize..b as usize].concat();
        let ours = rb.incremental_between(a, b).with_mode(IncrementalMode::Delta).read().unwrap();
        let ours = json_rows(&ours.batches);
        assert_eq!(per_key(&ours), per_key(&want), "Strata's delta read of ({a}, {b}] of pypaimon's table");
        assert_eq!(
            multiset(&rows_of(&rust[i]["rows"]), Some("rowkind"), &columns),
            multiset(&want, Some("rowkind"), &columns),
            "paimon-rust's delta scan of ({a}, {b}] of pypaimon's table"
        );
    }
    let ids: Vec<i64> = (1..=latest).collect();
    let theirs = oracle(&["delta_snapshots", &path, &json!(ids).to_string()]);
    for (i, id) in ids.iter().enumerate() {
        let ours = json_rows(&rb.incremental_between(id - 1, *id).read().unwrap().batches);
        assert_eq!(
            multiset(&ours, Some("rowkind"), &columns),
            multiset(&rows_of(&theirs[i]["rows"]), Some("_row_kind"), &columns),
            "snapshot {id}: Strata's delta read against pypaimon's streaming read"
        );
    }
}

/// Consumer files are Paimon's: pypaimon reads the progress a Strata follower records, and Strata's
/// expiration keeps what a consumer pypaimon recorded still needs.
#[test]
fn consumers_are_shared_with_pypaimon() {
    use strata::table::{expire_snapshots, ExpireOptions, FollowOptions, StartFrom, StreamScan};
    let dir = tempfile::tempdir().unwrap();
    let mut w = ModelWriter::new(create_at(&dir.path().join("wh/db.db/t"), true, &[]), 91, None);
    for _ in 0..3 {
        w.commit_random();
    }
    let path = w.table.path().to_string();
    let opts = FollowOptions { start: StartFrom::After(0), consumer_id: Some("strata".into()), ..Default::default() };
    let mut scan = StreamScan::new(&ReadBuilder::new(&w.table), &opts).unwrap();
    let first = scan.read_next().unwrap().unwrap();
    assert_eq!(first.commit_kind, CommitKind::Append);
    scan.record_progress().unwrap();
    assert_eq!(oracle(&["consumer", &path, "strata"]), json!(first.snapshot + 1), "pypaimon reads Strata's consumer");
    assert_eq!(by_key(&common::change_model::changes_of(&first.batches)), by_key(&w.commits[0].written));

    // pypaimon's consumer at snapshot 2 and Strata's (at 2 too) keep snapshots 2.. through an expiration.
    oracle(&["set_consumer", &path, "py", "2"]);
    assert_eq!(ConsumerManager::of(&w.table).consumer("py").unwrap().map(|c| c.next_snapshot), Some(2));
    let opts = ExpireOptions {
        retain_min: 1,
        retain_max: 1,
        time_retained: std::time::Duration::from_secs(3600),
        dry_run: false,
    };
    assert_eq!(expire_snapshots(&w.table, &opts).unwrap().snapshots, vec![1]);
}
