//! Incremental reads against a model of the writes: random upserts, updates and deletes (several buckets, a
//! partition, a small `num-sorted-run.compaction-trigger`, a rename and an added column half-way) into
//! deletion-vector and merge-on-read tables, then every snapshot range `(a, b]` read in delta mode must return
//! exactly the rows each write in it wrote, with their row kinds, a key's changes in commit order; and a
//! `changelog-producer = lookup` table's changelog must be the model's (+I for a new key, -U/+U for an update,
//! -D for a delete of a present key). The model is what the test wrote, never what Strata read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::change_model::{by_key, changes_of, create, expected, Change, Commit, ModelWriter};
use strata::format::{CmpOp, Predicate};
use strata::spec::{CommitKind, Datum};
use strata::table::IncrementalMode;
use strata::{ReadBuilder, Table};

/// `commits` random commits (the rename and the new column before the fifth).
fn write_random(table: Table, seed: u64, commits: usize) -> (Table, Vec<Commit>) {
    let mut w = ModelWriter::new(table, seed, Some(4));
    for _ in 0..commits {
        w.commit_random();
    }
    (w.table, w.commits)
}

/// Every range `(a, b]` (`every`; else a few) read in `mode` equals the model's deltas, or its changelog
/// when `changelog`.
fn check_ranges(table: &Table, commits: &[Commit], mode: IncrementalMode, changelog: bool, every: bool) {
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    let rb = ReadBuilder::new(table);
    let ranges: Vec<(i64, i64)> = if every {
        (0..=latest).flat_map(|a| (a..=latest).map(move |b| (a, b))).collect()
    } else {
        vec![(0, latest), (1, latest - 1), (latest / 2, latest)]
    };
    {
        for (a, b) in ranges {
            let got = changes_of(&rb.incremental_between(a, b).with_mode(mode).read().unwrap().batches);
            let want = expected(commits, a, b, changelog);
            assert_eq!(by_key(&got), by_key(&want), "{mode:?} range ({a}, {b}]");
        }
    }
}

fn delta_reads_of_every_range(dv: bool, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let (table, commits) = write_random(create(dir.path(), dv, &[]), seed, 7);
    // The trigger of 2 sorted runs makes merge-on-read commits compact their own writes too; deletion-vector
    // commits always do.
    assert!(commits.iter().filter(|c| c.snapshots.len() >= 2).count() >= 3, "too few commits compacted");
    check_ranges(&table, &commits, IncrementalMode::Delta, false, true);
    check_ranges(&table, &commits, IncrementalMode::Auto, false, false);
    check_filters(&table, &commits);
}

#[test]
fn delta_reads_of_every_range_are_the_writes_deletion_vectors() {
    delta_reads_of_every_range(true, 1);
}

#[test]
fn delta_reads_of_every_range_are_the_writes_merge_on_read() {
    delta_reads_of_every_range(false, 2);
}

#[test]
fn changelog_reads_of_every_range_are_the_model_changelog() {
    for dv in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let table = create(dir.path(), dv, &[("changelog-producer", "lookup")]);
        let (table, commits) = write_random(table, 3 + u64::from(dv), 6);
        for c in &commits {
            let kinds: Vec<CommitKind> = c.snapshots.iter().map(|(_, k)| *k).collect();
            assert_eq!(kinds[..2], [CommitKind::Append, CommitKind::Compact], "a lookup commit's snapshots");
        }
        check_ranges(&table, &commits, IncrementalMode::Changelog, true, true);
        check_ranges(&table, &commits, IncrementalMode::Auto, true, false);
        // Deltas of a changelog table: what was written.
        check_ranges(&table, &commits, IncrementalMode::Delta, false, false);
    }
}

/// Filters and projections: a retraction in a delta holds only what its writer gave, so a filter on values
/// must not drop it (only conditions on primary-key columns apply to it); upserts are filtered exactly.
fn check_filters(table: &Table, commits: &[Commit]) {
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    let on_v = Predicate::cmp("v", CmpOp::Gt, Datum::BigInt(0));
    let on_p = Predicate::eq("p", Datum::String("a".into()));
    let either = Predicate::Or(vec![on_v.clone(), Predicate::cmp("id", CmpOp::Lt, Datum::BigInt(10))]);
    // (filter, which upserts it keeps, which retractions it keeps: those its key conditions hold for).
    type RowTest = fn(&Change) -> bool;
    let cases: Vec<(Predicate, RowTest, RowTest)> = vec![
        (on_v.clone(), |c| c.v.is_some_and(|v| v > 0), |_| true),
        (Predicate::And(vec![on_v.clone(), on_p]), |c| c.v.is_some_and(|v| v > 0) && c.p == "a", |c| c.p == "a"),
        (either, |c| c.v.is_some_and(|v| v > 0) || c.id < 10, |_| true),
    ];
    let mut kept_retractions = 0;
    for (filter, keep, key_keep) in cases {
        for (a, b) in [(0, latest), (2, latest - 1), (latest / 2, latest)] {
            let rb = ReadBuilder::new(table).with_projection(&["v", "id", "p"]).with_filter(filter.clone());
            let got = rb.incremental_between(a, b).with_mode(IncrementalMode::Delta).read().unwrap();
            let names: Vec<String> = got.schema.fields().iter().map(|f| f.name().clone()).collect();
            assert_eq!(names, ["rowkind", "v", "id", "p"], "{filter:?}");
            let got: Vec<Change> = changes_of(&got.batches);
            let want: Vec<Change> = expected(commits, a, b, false)
                .into_iter()
                .filter(|c| if c.kind == "-D" || c.kind == "-U" { key_keep(c) } else { keep(c) })
                .map(|c| Change { s: None, extra: None, ..c })
                .collect();
            kept_retractions += want.iter().filter(|c| c.kind == "-D" && !keep(c)).count();
            assert_eq!(by_key(&got), by_key(&want), "filter {filter:?} on ({a}, {b}]");
        }
    }
    assert!(kept_retractions > 0, "no retraction that the filter on values would have dropped");
}

/// Ranges Paimon refuses are typed errors naming the problem: a start after the end, an end past the latest
/// snapshot, a negative start, a start whose next snapshot expired (`SnapshotExpired`, also when expiration
/// removes a planned snapshot before its files are read), a changelog read of a table without changelog.
#[test]
fn ranges_that_cannot_be_read_are_typed_errors() {
    use strata::spec::{Error, ErrorKind};
    use strata::table::{expire_snapshots, ExpireOptions};
    let dir = tempfile::tempdir().unwrap();
    let (table, commits) = write_random(create(dir.path(), true, &[]), 7, 4);
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    let rb = ReadBuilder::new(&table);
    let kind = |a: i64, b: i64, mode: IncrementalMode| {
        rb.incremental_between(a, b).with_mode(mode).read().err().map(|e| (e.kind(), e.to_string()))
    };
    let (k, msg) = kind(3, 2, IncrementalMode::Delta).unwrap();
    assert_eq!(k, ErrorKind::Invalid);
    assert!(msg.contains("before the start snapshot 3"), "{msg}");
    let (k, msg) = kind(0, latest + 1, IncrementalMode::Delta).unwrap();
    assert_eq!(k, ErrorKind::Invalid);
    assert!(msg.contains(&format!("the latest is {latest}")), "{msg}");
    assert_eq!(kind(-1, 1, IncrementalMode::Delta).map(|e| e.0), Some(ErrorKind::Invalid));
    let (k, msg) = kind(0, latest, IncrementalMode::Changelog).unwrap();
    assert_eq!(k, ErrorKind::Invalid);
    assert!(msg.contains("changelog-producer none"), "{msg}");
    // An empty range is empty.
    assert_eq!(rb.incremental_between(2, 2).read().unwrap().num_rows(), 0);

    // Planned before expiration, read after it: the first snapshots' files are gone.
    let plan = rb.incremental_between(0, latest).with_mode(IncrementalMode::Delta).plan().unwrap();
    let opts = ExpireOptions {
        retain_min: 1,
        retain_max: 3,
        time_retained: std::time::Duration::from_secs(3600),
        dry_run: false,
    };
    expire_snapshots(&table, &opts).unwrap();
    let earliest = table.snapshot_manager().earliest_id().unwrap().unwrap();
    assert_eq!(earliest, latest - 2);
    let read = rb.incremental_between(0, latest).with_mode(IncrementalMode::Delta).read_plan(&plan);
    assert!(matches!(read, Err(Error::SnapshotExpired { snapshot: 1, .. })), "{read:?}");
    let e = rb.incremental_between(earliest - 2, latest).read().unwrap_err();
    match &e {
        Error::SnapshotExpired { snapshot, earliest: Some(first), .. } => {
            assert_eq!((*snapshot, *first), (earliest - 1, earliest));
            assert_eq!(e.kind(), ErrorKind::NotFound);
            assert!(e.to_string().contains("has expired"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // From the earliest snapshot on, everything still reads.
    let got = changes_of(&rb.incremental_between(earliest - 1, latest).read().unwrap().batches);
    assert_eq!(by_key(&got), by_key(&expected(&commits, earliest - 1, latest, false)));
}
