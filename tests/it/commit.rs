//! The atomic commit: racing committers, conflicts, idempotence, and faults at every operation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use common::fixtures::{append, create_table, file, message};
use common::place::{Backend, Place};
use strata::lsm::DvIndexBase;
use strata::spec::{CommitKind, DataFileMeta, FileKind};
use strata::table::{CommitMessage, CommitOutcome, Committable};
use strata::{ErrorKind, FileIO, LocalFileIO, Table};
use strata_sim::{Fault, FaultyFileIO, OpKind};

fn local() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

#[test]
fn eight_threads_race_200_commits_without_gaps_or_losses() {
    eight_committers_race(Backend::Local, 25);
}

/// The same race on S3: each committer has its own client, as separate processes would, and the store's
/// conditional create alone decides every race.
#[test]
fn eight_committers_race_on_s3_without_gaps_or_losses() {
    eight_committers_race(Backend::S3, 8);
}

fn eight_committers_race(backend: Backend, per_thread: i64) {
    let place = Place::new(backend);
    let path = place.path("t");
    let opts = [("commit.max-retries", "1000"), ("commit.min-retry-wait", "1 ms"), ("commit.max-retry-wait", "20 ms")];
    create_table(place.io.clone(), &path, 8, &opts);
    const THREADS: i64 = 8;
    let acknowledged: Vec<Vec<(i64, i64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let path = path.clone();
                let io = place.reopen_io();
                s.spawn(move || {
                    let table = Table::open(io, &path).unwrap();
                    let commit = table.new_commit(&format!("writer-{t}")).unwrap();
                    (1..=per_thread)
                        .map(|i| {
                            let f = file(&format!("data-w{t}-{i}.parquet"), 0, i, i, 1 + t);
                            match commit.commit(&append(i, t as i32, 8, vec![f])).unwrap() {
                                CommitOutcome::Committed(id) => (i, id),
                                other => panic!("unexpected {other:?}"),
                            }
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let table = Table::open(place.reopen_io(), &path).unwrap();
    let sm = table.snapshot_manager();
    let ids = sm.list_ids().unwrap();
    assert_eq!(ids, (1..=THREADS * per_thread).collect::<Vec<_>>());
    assert_eq!(sm.latest_id().unwrap(), Some(THREADS * per_thread));
    // Every acknowledged commit is in exactly the snapshot it was acknowledged with, and only there.
    let mut by_snapshot = BTreeMap::new();
    for id in &ids {
        let s = sm.snapshot(*id).unwrap();
        assert!(by_snapshot.insert(*id, (s.commit_user.clone(), s.commit_identifier)).is_none());
    }
    let distinct: BTreeSet<_> = by_snapshot.values().cloned().collect();
    assert_eq!(distinct.len(), ids.len(), "a commit landed twice");
    for (t, acks) in acknowledged.iter().enumerate() {
        for (identifier, snapshot) in acks {
            assert_eq!(by_snapshot[snapshot], (format!("writer-{t}"), *identifier));
        }
    }
    // Nothing lost: the latest snapshot holds all 200 files and their rows.
    let latest = table.snapshot(None).unwrap().unwrap();
    let live = table.live_files(&latest).unwrap();
    assert_eq!(live.len() as i64, THREADS * per_thread);
    let rows: i64 = (0..THREADS).map(|t| (1 + t) * per_thread).sum();
    assert_eq!(latest.total_record_count, Some(rows));
    // No manifest of a lost attempt is left behind.
    let referenced = referenced_manifests(&table);
    let present = place.names_in(&format!("{path}/manifest"));
    assert!(
        present.is_subset(&referenced_by_any(&table)),
        "orphan manifests: {:?}",
        present.difference(&referenced).collect::<Vec<_>>()
    );
}

/// Manifest files (lists, manifests, index manifests) referenced by the latest snapshot.
fn referenced_manifests(table: &Table) -> BTreeSet<String> {
    let s = table.snapshot(None).unwrap().unwrap();
    manifests_of(table, &s)
}

fn manifests_of(table: &Table, s: &strata::spec::Snapshot) -> BTreeSet<String> {
    let store = table.manifest_store().unwrap();
    let mut out = BTreeSet::from([s.base_manifest_list.clone(), s.delta_manifest_list.clone()]);
    out.extend(s.index_manifest.clone());
    for m in store.data_manifests(s).unwrap() {
        out.insert(m.file_name);
    }
    out
}

fn referenced_by_any(table: &Table) -> BTreeSet<String> {
    let sm = table.snapshot_manager();
    sm.list_ids().unwrap().into_iter().flat_map(|id| manifests_of(table, &sm.snapshot(id).unwrap())).collect()
}

#[test]
fn deleting_a_file_another_commit_removed_is_a_conflict_that_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t").to_str().unwrap().to_string();
    let table = create_table(local(), &path, 1, &[]);
    let c = table.new_commit("a").unwrap();
    let l0 = file("data-0.parquet", 0, 1, 10, 10);
    c.commit(&append(1, 0, 1, vec![l0.clone()])).unwrap();
    let compact = |id, out: &str| Committable {
        identifier: id,
        messages: vec![message(0, 1, vec![], vec![l0.clone()], vec![file(out, 5, 1, 10, 10)])],
        ..Default::default()
    };
    assert_eq!(
        table.new_commit("b").unwrap().commit(&compact(1, "data-b.parquet")).unwrap(),
        CommitOutcome::Committed(2)
    );
    let before = std::fs::read_dir(format!("{path}/manifest")).unwrap().count();
    let err = table.new_commit("c").unwrap().commit(&compact(1, "data-c.parquet")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(err.to_string().contains("data-0.parquet"), "{err}");
    assert_eq!(table.snapshot_manager().latest_id().unwrap(), Some(2));
    assert_eq!(std::fs::read_dir(format!("{path}/manifest")).unwrap().count(), before);
}

#[test]
fn overlapping_key_ranges_at_one_level_are_an_lsm_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t").to_str().unwrap().to_string();
    let table = create_table(local(), &path, 1, &[]);
    let c = table.new_commit("a").unwrap();
    let at_level = |id, name: &str, min, max| Committable {
        identifier: id,
        messages: vec![message(0, 1, vec![], vec![], vec![file(name, 3, min, max, 5)])],
        ..Default::default()
    };
    c.commit(&at_level(1, "data-1.parquet", 1, 10)).unwrap();
    c.commit(&at_level(2, "data-2.parquet", 11, 20)).unwrap();
    let err = c.commit(&at_level(3, "data-3.parquet", 20, 30)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert!(err.to_string().contains("LSM conflict"), "{err}");
    // Level 0 may overlap freely.
    c.commit(&append(4, 0, 1, vec![file("data-4.parquet", 0, 1, 30, 5)])).unwrap();
    assert_eq!(table.snapshot_manager().latest_id().unwrap(), Some(3));
}

#[test]
fn a_fault_at_any_operation_of_a_commit_leaves_the_previous_or_the_new_snapshot() {
    fault_at_any_operation_of_a_commit(Backend::Local);
}

#[test]
fn a_fault_at_any_operation_of_a_commit_leaves_the_previous_or_the_new_snapshot_on_s3() {
    fault_at_any_operation_of_a_commit(Backend::S3);
}

fn fault_at_any_operation_of_a_commit(backend: Backend) {
    let faults = [Fault::Before, Fault::After, Fault::Torn];
    // Count the operations of one clean commit on the same kind of table.
    let ops = {
        let place = Place::new(backend);
        let path = place.path("t");
        create_table(place.reopen_io(), &path, 2, &[]);
        let faulty = FaultyFileIO::new(place.reopen_io());
        let table = Table::open(Arc::new(faulty.clone()), &path).unwrap();
        table.new_commit("w").unwrap().commit(&append(1, 0, 2, vec![file("data-1.parquet", 0, 1, 5, 5)])).unwrap();
        faulty.fail_at(u64::MAX, Fault::Before, None);
        table.new_commit("w").unwrap().commit(&append(2, 1, 2, vec![file("data-2.parquet", 0, 1, 5, 7)])).unwrap();
        faulty.count()
    };
    assert!(ops >= 8, "a commit took only {ops} operations");
    let mut outcomes = BTreeMap::new();
    for fault in faults {
        for k in 0..ops {
            let place = Place::new(backend);
            let path = place.path("t");
            let plain = create_table(place.reopen_io(), &path, 2, &[]);
            plain.new_commit("w").unwrap().commit(&append(1, 0, 2, vec![file("data-1.parquet", 0, 1, 5, 5)])).unwrap();

            let faulty = FaultyFileIO::new(place.reopen_io());
            let table = Table::open(Arc::new(faulty.clone()), &path).unwrap();
            let commit = table.new_commit("w").unwrap();
            faulty.fail_at(k, fault, None);
            let second = append(2, 1, 2, vec![file("data-2.parquet", 0, 1, 5, 7)]);
            let result = commit.commit(&second);
            let failed_op = faulty.log().get(k as usize).cloned().unwrap_or_default();
            faulty.disarm();

            // Reopen with plain I/O: the table is at snapshot 1 or 2, and whichever it is reads fully.
            let reopened = Table::open(place.reopen_io(), &path).unwrap();
            let latest = reopened.snapshot(None).unwrap().unwrap();
            assert!(latest.id == 1 || latest.id == 2, "{fault:?}@{k} ({failed_op}): latest {}", latest.id);
            let live: BTreeSet<String> =
                reopened.live_files(&latest).unwrap().into_iter().map(|e| e.file.file_name).collect();
            let want: BTreeSet<String> = if latest.id == 2 {
                ["data-1.parquet", "data-2.parquet"].map(String::from).into()
            } else {
                ["data-1.parquet"].map(String::from).into()
            };
            assert_eq!(live, want, "{fault:?}@{k} ({failed_op})");
            if result.is_ok() {
                assert_eq!(latest.id, 2, "{fault:?}@{k} ({failed_op}): acknowledged but not visible");
            }
            // A failure that is not a delete or the snapshot's own creation leaves no orphan manifest.
            if result.is_err() && fault == Fault::Before && !failed_op.starts_with("delete") {
                let present: BTreeSet<String> = place.names_in(&format!("{path}/manifest"));
                let referenced = referenced_by_any(&reopened);
                assert!(
                    present.is_subset(&referenced),
                    "{fault:?}@{k} ({failed_op}): orphans {:?}",
                    present.difference(&referenced).collect::<Vec<_>>()
                );
            }
            // The writer retries what is not committed yet, and the table ends with exactly one copy.
            let retry = reopened.new_commit("w").unwrap();
            if !retry.filter_committed(&[2]).unwrap().is_empty() {
                retry.commit(&second).unwrap();
            }
            let sm = reopened.snapshot_manager();
            assert_eq!(sm.list_ids().unwrap(), vec![1, 2], "{fault:?}@{k} ({failed_op})");
            let s2 = sm.snapshot(2).unwrap();
            assert_eq!((s2.commit_user.as_str(), s2.commit_identifier), ("w", 2));
            // And the next commit succeeds.
            retry.commit(&append(3, 0, 2, vec![file("data-3.parquet", 0, 6, 9, 3)])).unwrap();
            *outcomes.entry((format!("{fault:?}"), result.is_ok(), latest.id)).or_insert(0) += 1;
        }
    }
    eprintln!("commit operations: {ops}; outcomes: {outcomes:?}");
    // Both endings happened: some faults lost the commit, some (After on the snapshot) kept it.
    assert!(outcomes.keys().any(|(_, _, id)| *id == 1), "{outcomes:?}");
    assert!(outcomes.keys().any(|(_, _, id)| *id == 2), "{outcomes:?}");
}

#[test]
fn empty_commits_make_no_snapshot_and_only_reads_are_counted_as_reads() {
    let io = Arc::new(strata::MemoryFileIO::new());
    let faulty = FaultyFileIO::new(io);
    let table = create_table(Arc::new(faulty.clone()), "/mem/t", 1, &[]);
    faulty.fail_at(0, Fault::Before, Some(OpKind::Mutate));
    assert_eq!(table.new_commit("w").unwrap().commit(&Committable::default()).unwrap(), CommitOutcome::Empty);
    assert_eq!(faulty.count(), 0, "an empty commit wrote something");
}

/// Folding a bucket's later message into an earlier one (`CommitMessage::absorb`) commits what committing
/// both in order commits: a file added and compacted away cancels out (and is reported for removal), an
/// upgraded file stays under its new level, a committed file upgraded and then compacted is not reported
/// (the snapshot still holds it), and a newer index file replaces the earlier one while the expected base
/// index stays the earlier message's.
#[test]
fn an_absorbed_message_commits_what_the_two_messages_commit_in_order() {
    use strata::spec::IndexFileMeta;
    let msg = |new: Vec<_>, before: Vec<_>, after: Vec<_>| message(0, 1, new, before, after);
    let base = file("data-base.parquet", 2, 0, 5, 6);
    let x = file("data-x.parquet", 0, 1, 4, 4);
    let y = file("data-y.parquet", 0, 10, 12, 3);
    let y_up = file("data-y.parquet", 3, 10, 12, 3);
    let w = file("data-w.parquet", 0, 20, 22, 3);
    let z = file("data-z.parquet", 2, 0, 5, 7);
    let first = msg(vec![x.clone(), y.clone()], vec![], vec![]);
    // Compacts x with the committed base into z, moves y up a level without rewriting it, adds w.
    let second = msg(vec![w], vec![base.clone(), x, y], vec![z, y_up]);

    let live = |table: &Table| -> BTreeSet<(String, i32)> {
        let s = table.snapshot(None).unwrap().unwrap();
        table.live_files(&s).unwrap().into_iter().map(|e| (e.file.file_name, e.file.level)).collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let in_order = create_table(local(), dir.path().join("a").to_str().unwrap(), 1, &[]);
    let folded = create_table(local(), dir.path().join("b").to_str().unwrap(), 1, &[]);
    for t in [&in_order, &folded] {
        t.new_commit("w").unwrap().commit(&append(1, 0, 1, vec![base.clone()])).unwrap();
    }
    let commit = |t: &Table, id: i64, m: CommitMessage| {
        t.new_commit("w").unwrap().commit(&Committable { identifier: id, messages: vec![m], ..Default::default() })
    };
    commit(&in_order, 2, first.clone()).unwrap();
    commit(&in_order, 3, second.clone()).unwrap();

    // Committed on its own, the second message deletes a file no snapshot holds.
    let mut alone = second.clone();
    alone.increment.data.new_files.clear();
    let alone = commit(&folded, 2, alone).unwrap_err();
    assert_eq!(alone.kind(), ErrorKind::Conflict, "{alone}");
    let mut one = first;
    let dropped = one.absorb(second);
    // x stays a new file (the APPEND snapshot adds it) and becomes a compaction input (the COMPACT one
    // deletes it): nothing is left unreferenced.
    assert!(dropped.data_files.is_empty(), "{dropped:?}");
    assert!(dropped.index_files.is_empty());
    commit(&folded, 2, one).unwrap();
    assert_eq!(live(&folded), live(&in_order));
    assert_eq!(
        live(&in_order),
        BTreeSet::from([
            ("data-w.parquet".to_string(), 0),
            ("data-y.parquet".to_string(), 3),
            ("data-z.parquet".to_string(), 2)
        ])
    );

    // A committed file moved up a level (an upgrade) in the carried message, then compacted away by the
    // later one: the snapshot still holds it at its old level, so it must stay on disk.
    let dir2 = tempfile::tempdir().unwrap();
    let in_order = create_table(local(), dir2.path().join("a").to_str().unwrap(), 1, &[]);
    let folded = create_table(local(), dir2.path().join("b").to_str().unwrap(), 1, &[]);
    let c0 = file("data-c.parquet", 0, 0, 5, 6);
    let c3 = file("data-c.parquet", 3, 0, 5, 6);
    let d3 = file("data-d.parquet", 3, 0, 9, 8);
    let e0 = file("data-e.parquet", 0, 6, 9, 2);
    for t in [&in_order, &folded] {
        t.new_commit("w").unwrap().commit(&append(1, 0, 1, vec![c0.clone()])).unwrap();
    }
    let upgrade = msg(vec![e0.clone()], vec![c0.clone()], vec![c3.clone()]);
    let rewrite = msg(vec![], vec![c3, e0], vec![d3]);
    commit(&in_order, 2, upgrade.clone()).unwrap();
    commit(&in_order, 3, rewrite.clone()).unwrap();
    let mut one = upgrade;
    let dropped = one.absorb(rewrite);
    assert!(dropped.data_files.is_empty(), "the APPEND snapshot holds e, the snapshots c: {dropped:?}");
    commit(&folded, 2, one).unwrap();
    assert_eq!(live(&folded), live(&in_order));
    assert_eq!(live(&folded), BTreeSet::from([("data-d.parquet".to_string(), 3)]));

    // Deletion-vector index files: the newer replaces the earlier; the base stays the first message's.
    let index = |name: &str| IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: name.into(),
        file_size: 1,
        row_count: 1,
        dv_ranges: None,
        external_path: None,
        global_index: None,
    };
    let replacing = |new: &str, old: &str| {
        let mut m = message(0, 1, vec![], vec![], vec![]);
        m.increment.compact.new_index_files = vec![index(new)];
        m.increment.compact.deleted_index_files = vec![index(old)];
        m.increment.dv_index_base = DvIndexBase::File(old.into());
        m
    };
    let mut a = replacing("index-a", "index-0");
    let dropped = a.absorb(replacing("index-b", "index-a"));
    assert_eq!(dropped.index_files, vec!["index-a".to_string()]);
    // The folded message replaces the committed index-0 by index-b; index-a was never committed.
    assert_eq!(a.increment.compact.new_index_files, vec![index("index-b")]);
    assert_eq!(a.increment.compact.deleted_index_files, vec![index("index-0")]);
    assert_eq!(a.increment.dv_index_base, DvIndexBase::File("index-0".into()));
}

/// A commit of a write whose files its own compaction replaced, deletion-vector style: a committed file at
/// level 5, a new level-0 file compacted with it into one level-5 file, and the bucket's new vectors.
fn write_and_compaction() -> (Committable, DataFileMeta) {
    let base = file("data-base.parquet", 5, 0, 9, 10);
    let new0 = file("data-new.parquet", 0, 5, 12, 4);
    let merged = file("data-merged.parquet", 5, 0, 12, 13);
    let index = strata::spec::IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-1".into(),
        file_size: 1,
        row_count: 1,
        dv_ranges: None,
        external_path: None,
        global_index: None,
    };
    let mut m = message(0, 1, vec![new0.clone()], vec![new0, base.clone()], vec![merged]);
    m.increment.compact.new_index_files = vec![index];
    m.increment.dv_index_base = DvIndexBase::NoFile;
    m.increment.first_new_sequence = Some(100);
    (Committable { identifier: 2, messages: vec![m], ..Default::default() }, base)
}

fn live_names(table: &Table, id: i64) -> BTreeSet<(String, i32)> {
    let s = table.snapshot(Some(id)).unwrap().unwrap();
    table.live_files(&s).unwrap().into_iter().map(|e| (e.file.file_name, e.file.level)).collect()
}

/// No snapshot shows the compaction's output (rows whose replaced versions the new vectors delete) without
/// those vectors, nor the vectors without it.
fn assert_vectors_travel_with_the_compaction(table: &Table, context: &str) {
    for id in table.snapshot_manager().list_ids().unwrap() {
        let s = table.snapshot(Some(id)).unwrap().unwrap();
        let merged = live_names(table, id).contains(&("data-merged.parquet".to_string(), 5));
        let index = table.index_files(&s).unwrap().iter().any(|e| e.index_file.file_name == "index-1");
        assert_eq!(merged, index, "{context}: snapshot {id} has the compaction output {merged}, its vectors {index}");
    }
}

/// Like Paimon's `FileStoreCommitImpl.commit`: a write and its compaction make an APPEND snapshot adding the
/// new level-0 file (so incremental readers see the write) and a COMPACT snapshot deleting it again, under
/// the same user and identifier. A write alone, or a compaction alone, makes one snapshot.
#[test]
fn a_write_and_its_compaction_commit_as_an_append_then_a_compact_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let table = create_table(local(), dir.path().join("t").to_str().unwrap(), 1, &[]);
    let (c, base) = write_and_compaction();
    let commit = table.new_commit("w").unwrap();
    commit.commit(&append(1, 0, 1, vec![base])).unwrap();
    assert_eq!(commit.commit(&c).unwrap(), CommitOutcome::Committed(3));
    let sm = table.snapshot_manager();
    let (s2, s3) = (sm.snapshot(2).unwrap(), sm.snapshot(3).unwrap());
    assert_eq!((s2.commit_kind, s2.commit_user.as_str(), s2.commit_identifier), (CommitKind::Append, "w", 2));
    assert_eq!((s3.commit_kind, s3.commit_user.as_str(), s3.commit_identifier), (CommitKind::Compact, "w", 2));
    let delta = |s: &strata::spec::Snapshot| -> Vec<(FileKind, String)> {
        let store = table.manifest_store().unwrap();
        let mut out = Vec::new();
        for m in store.read_manifest_list(&s.delta_manifest_list).unwrap() {
            out.extend(store.read_manifest_of(&m).unwrap().into_iter().map(|e| (e.kind, e.file.file_name)));
        }
        out.sort_by(|a, b| a.1.cmp(&b.1));
        out
    };
    assert_eq!(delta(&s2), vec![(FileKind::Add, "data-new.parquet".to_string())]);
    assert_eq!(
        delta(&s3),
        vec![
            (FileKind::Delete, "data-base.parquet".to_string()),
            (FileKind::Add, "data-merged.parquet".to_string()),
            (FileKind::Delete, "data-new.parquet".to_string()),
        ]
    );
    assert_eq!((s2.delta_record_count, s3.delta_record_count), (Some(4), Some(-1)));
    assert_eq!(s3.total_record_count, Some(13));
    assert_vectors_travel_with_the_compaction(&table, "clean commit");
    // Committed again (a retry), nothing lands twice.
    assert_eq!(commit.recommit(&c).unwrap(), CommitOutcome::AlreadyCommitted(3));
    // A write alone: one APPEND snapshot; a compaction alone: one COMPACT snapshot.
    assert_eq!(
        commit.commit(&append(3, 0, 1, vec![file("data-x.parquet", 0, 20, 21, 2)])).unwrap(),
        CommitOutcome::Committed(4)
    );
    let only_compaction = Committable {
        identifier: 4,
        messages: vec![message(
            0,
            1,
            vec![],
            vec![file("data-x.parquet", 0, 20, 21, 2)],
            vec![file("data-x2.parquet", 5, 20, 21, 2)],
        )],
        ..Default::default()
    };
    assert_eq!(commit.commit(&only_compaction).unwrap(), CommitOutcome::Committed(5));
    assert_eq!(sm.snapshot(4).unwrap().commit_kind, CommitKind::Append);
    assert_eq!(sm.snapshot(5).unwrap().commit_kind, CommitKind::Compact);
    assert_eq!(sm.list_ids().unwrap(), vec![1, 2, 3, 4, 5]);
}

/// Fails each storage operation of a two-snapshot commit in turn (before it, after it, torn), then retries
/// the commit as a restarted writer would (`recommit`): the write is never lost, nothing lands twice, and no
/// snapshot ever shows the compaction's output without its deletion vectors. A fault between the two
/// snapshots leaves a valid APPEND snapshot, which the retry completes with the COMPACT one.
#[test]
fn a_fault_at_any_operation_of_a_two_snapshot_commit_loses_nothing_and_commits_nothing_twice() {
    fault_at_any_operation_of_a_two_snapshot_commit(Backend::Local);
}

#[test]
fn a_fault_at_any_operation_of_a_two_snapshot_commit_loses_nothing_and_commits_nothing_twice_on_s3() {
    fault_at_any_operation_of_a_two_snapshot_commit(Backend::S3);
}

fn fault_at_any_operation_of_a_two_snapshot_commit(backend: Backend) {
    let (c, base) = write_and_compaction();
    // A table holding `base`, opened through a faulty storage, in `dir`.
    let with_base = |place: &Place| {
        let path = place.path("t");
        create_table(place.reopen_io(), &path, 1, &[])
            .new_commit("w")
            .unwrap()
            .commit(&append(1, 0, 1, vec![base.clone()]))
            .unwrap();
        let faulty = FaultyFileIO::new(place.reopen_io());
        let table = Table::open(Arc::new(faulty.clone()), &path).unwrap();
        (path, faulty, table)
    };
    let ops = {
        let place = Place::new(backend);
        let (_, faulty, table) = with_base(&place);
        faulty.fail_at(u64::MAX, Fault::Before, None);
        table.new_commit("w").unwrap().commit(&c).unwrap();
        faulty.count()
    };
    let mut outcomes: BTreeMap<(String, String, Option<i64>), usize> = BTreeMap::new();
    for fault in [Fault::Before, Fault::After, Fault::Torn] {
        for k in 0..ops {
            let place = Place::new(backend);
            let (path, faulty, table) = with_base(&place);
            faulty.fail_at(k, fault, None);
            let result = table.new_commit("w").unwrap().commit(&c);
            let failed_op = faulty.log().get(k as usize).cloned().unwrap_or_default();
            faulty.disarm();
            let context = format!("{fault:?}@{k} ({failed_op})");

            let reopened = Table::open(place.reopen_io(), &path).unwrap();
            let sm = reopened.snapshot_manager();
            let latest = sm.latest_id().unwrap();
            if result.is_ok() {
                assert_eq!(latest, Some(3), "{context}: acknowledged but not whole");
            }
            assert_vectors_travel_with_the_compaction(&reopened, &context);
            // The write, once in a snapshot, stays in every later one until the compaction replaces it.
            for id in sm.list_ids().unwrap() {
                let live = live_names(&reopened, id);
                let has_write = live.contains(&("data-new.parquet".to_string(), 0))
                    || live.contains(&("data-merged.parquet".to_string(), 5));
                assert_eq!(has_write, id >= 2, "{context}: snapshot {id}: {live:?}");
            }
            let retry = reopened.new_commit("w").unwrap();
            let retried = retry.recommit(&c).unwrap();
            assert_eq!(sm.list_ids().unwrap(), vec![1, 2, 3], "{context}: {retried:?}");
            for (id, kind) in [(2, CommitKind::Append), (3, CommitKind::Compact)] {
                let s = sm.snapshot(id).unwrap();
                assert_eq!((s.commit_kind, s.commit_user.as_str(), s.commit_identifier), (kind, "w", 2), "{context}");
            }
            assert_eq!(live_names(&reopened, 3), BTreeSet::from([("data-merged.parquet".to_string(), 5)]), "{context}");
            assert_vectors_travel_with_the_compaction(&reopened, &context);
            let ending = match result {
                Ok(_) => "ok".to_string(),
                Err(e) => format!("{:?}", e.kind()),
            };
            *outcomes.entry((format!("{fault:?}"), ending, latest)).or_insert(0) += 1;
        }
    }
    eprintln!("two-snapshot commit operations: {ops}; outcomes (fault, result, latest before the retry): {outcomes:?}");
    // Faults left the table before the commit, between its two snapshots, and after it.
    for latest in [Some(1), Some(2), Some(3)] {
        assert!(outcomes.keys().any(|(_, _, l)| *l == latest), "no fault left latest {latest:?}: {outcomes:?}");
    }
}

/// A retried commit whose APPEND half landed, and whose compaction another commit made stale meanwhile (it
/// compacted the same file away): the write stays committed, the compaction is dropped, not retried forever
/// nor reported as a lost write.
#[test]
fn a_retried_commit_whose_compaction_went_stale_keeps_its_write_and_drops_its_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let table = create_table(local(), dir.path().join("t").to_str().unwrap(), 1, &[]);
    let (c, base) = write_and_compaction();
    let commit = table.new_commit("w").unwrap();
    commit.commit(&append(1, 0, 1, vec![base.clone()])).unwrap();
    // Only the APPEND half lands (a crash before the COMPACT one).
    let data = Committable { messages: c.messages.iter().map(CommitMessage::data_increment).collect(), ..c.clone() };
    assert_eq!(commit.commit(&data).unwrap(), CommitOutcome::Committed(2));
    assert_eq!(commit.filter_committed(&[2]).unwrap(), Vec::<i64>::new(), "Paimon's filter counts either half");
    // Another writer compacts the base file away.
    let other = Committable {
        identifier: 1,
        messages: vec![message(0, 1, vec![], vec![base], vec![file("data-other.parquet", 5, 0, 9, 10)])],
        ..Default::default()
    };
    table.new_commit("other").unwrap().commit(&other).unwrap();
    assert_eq!(commit.landed(2).unwrap(), strata::table::Landed { append: Some(2), compact: None });
    assert_eq!(commit.recommit(&c).unwrap(), CommitOutcome::CompactionDropped(2));
    assert_eq!(table.snapshot_manager().list_ids().unwrap(), vec![1, 2, 3]);
    assert_eq!(
        live_names(&table, 3),
        BTreeSet::from([("data-new.parquet".to_string(), 0), ("data-other.parquet".to_string(), 5)])
    );
}

/// The index change a message carries is applied as carried: its deleted index file leaves the listing,
/// and a deleted file the latest snapshot no longer lists is a conflict (another commit replaced it, so the
/// message's vectors were computed from a state that is gone), with nothing committed.
#[test]
fn a_carried_index_deletion_applies_exactly_or_conflicts() {
    use strata::spec::IndexFileMeta;
    let index = |name: &str| IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: name.into(),
        file_size: 1,
        row_count: 0,
        dv_ranges: Some(vec![]),
        external_path: None,
        global_index: None,
    };
    let replacing = |new: &str, old: Option<&str>| {
        let mut m = message(0, 1, vec![], vec![], vec![]);
        m.increment.compact.new_index_files = vec![index(new)];
        m.increment.compact.deleted_index_files = old.map(index).into_iter().collect();
        m
    };
    let dir = tempfile::tempdir().unwrap();
    let table = create_table(local(), dir.path().join("t").to_str().unwrap(), 1, &[]);
    let commit = table.new_commit("w").unwrap();
    let names = |table: &Table| -> BTreeSet<String> {
        let s = table.snapshot(None).unwrap().unwrap();
        table.index_files(&s).unwrap().into_iter().map(|e| e.index_file.file_name).collect()
    };
    let committable = |identifier, m| Committable { identifier, messages: vec![m], ..Default::default() };
    commit.commit(&committable(1, replacing("index-0", None))).unwrap();
    commit.commit(&committable(2, replacing("index-1", Some("index-0")))).unwrap();
    assert_eq!(names(&table), BTreeSet::from(["index-1".to_string()]));
    let err = commit.commit(&committable(3, replacing("index-2", Some("index-0")))).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains("index-0"), "{err}");
    assert_eq!(table.snapshot_manager().latest_id().unwrap(), Some(2));
    assert_eq!(names(&table), BTreeSet::from(["index-1".to_string()]));
}
