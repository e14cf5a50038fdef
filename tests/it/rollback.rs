//! Rollback against a model: the table reads the target's rows, later writes go on with consecutive
//! snapshot ids, exactly the files of removed snapshots and tags go, a fault at any storage operation leaves
//! a readable table that a second rollback finishes, and commits racing a rollback never leave a gap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::tag_fixtures::*;
use strata::spec::ErrorKind;
use strata::table::create_tag;
use strata::table::expire_snapshots;
use strata::table::{rollback, RollbackTarget};
use strata::{ReadBuilder, Table, TableWriter};
use strata_sim::{Fault, FaultyFileIO, OpKind};

/// Ids from the earliest to the latest snapshot, without a gap.
fn assert_consecutive(t: &Table, what: &str) -> Vec<i64> {
    let ids = t.snapshot_manager().list_ids().unwrap();
    let (first, last) = (ids[0], ids[ids.len() - 1]);
    assert_eq!(ids, (first..=last).collect::<Vec<_>>(), "{what}: a gap in the snapshot ids");
    ids
}

/// Every snapshot and tag of the table reads its model, and every file they need is there.
fn assert_all_readable(t: &Table, models: &BTreeMap<i64, Rows>, what: &str) {
    let sm = t.snapshot_manager();
    for id in sm.list_ids().unwrap() {
        for f in files_of_snapshot(t, &sm.snapshot(id).unwrap()).unwrap() {
            assert!(Path::new(&f).exists(), "{what}: snapshot {id} lost {f}");
        }
    }
    for tag in t.tag_manager().list().unwrap() {
        assert_eq!(rows_of_tag(t, &tag.name).unwrap(), models[&tag.snapshot.id], "{what}: tag {}", tag.name);
    }
    let latest = sm.latest_id().unwrap().unwrap();
    assert_eq!(rows_merged(t, None).unwrap(), models[&latest], "{what}: latest {latest}");
}

/// A table written in rounds `0..rounds` by writer "w", still open: the table, the writer, the latest model,
/// the models per snapshot id, and the snapshot of each round.
fn written(dir: &Path, dv: bool, rounds: i64) -> (Table, TableWriter, Rows, BTreeMap<i64, Rows>, Vec<i64>) {
    let t = kv_table(dir, dv);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    let at = (0..rounds).map(|r| commit_round(&t, &mut w, r, &mut model, &mut models)).collect();
    (t, w, model, models, at)
}

#[test]
fn rollback_reads_the_target_and_later_writes_go_on_from_it() {
    for dv in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (t, mut w, mut model, mut models, mut at) = written(dir.path(), dv, 5);
        w.compact(true).unwrap();
        let id = t.snapshot_manager().latest_id().unwrap().unwrap();
        models.insert(id, model.clone());
        for r in 5..10 {
            at.push(commit_round(&t, &mut w, r, &mut model, &mut models));
        }
        drop(w);
        create_tag(&t, "t3", Some(at[3]), None).unwrap();
        create_tag(&t, "t5", Some(at[5]), None).unwrap();
        create_tag(&t, "t7", Some(at[7]), None).unwrap();
        let target = at[5];
        let latest = t.snapshot_manager().latest_id().unwrap().unwrap();
        let report = rollback(&t, &RollbackTarget::Snapshot(target)).unwrap();
        assert_eq!(report.snapshots, (target + 1..=latest).rev().collect::<Vec<_>>(), "dv={dv}");
        assert_eq!(report.tags, ["t7"]);
        assert!(!report.data_files.is_empty() && !report.manifests.is_empty(), "{report:?}");
        assert_eq!(assert_consecutive(&t, "after rollback").last(), Some(&target));
        assert_eq!(rows_at(&t, None).unwrap(), models[&target], "dv={dv}");
        assert_eq!(all_files(Path::new(t.path())), needed_files(&t), "dv={dv}: files left over or missing");
        for id in t.snapshot_manager().list_ids().unwrap() {
            assert_eq!(rows_merged(&t, Some(id)).unwrap(), models[&id], "dv={dv}: snapshot {id}");
        }
        let names: Vec<String> = t.tag_manager().list().unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["t3", "t5"]);
        assert_all_readable(&t, &models, "after rollback");

        // Writes go on from the target, with the next ids.
        let mut model = models[&target].clone();
        let mut models: BTreeMap<i64, Rows> = models.into_iter().filter(|(id, _)| *id <= target).collect();
        let mut w = TableWriter::new(&t, "w2").unwrap();
        for r in 20..24 {
            commit_round(&t, &mut w, r, &mut model, &mut models);
        }
        drop(w);
        assert_eq!(assert_consecutive(&t, "after writes")[0], 1);
        assert_eq!(rows_at(&t, None).unwrap(), model, "dv={dv}");
        // Rolling back to the tag of the latest target is a no-op on snapshots.
        let now = t.snapshot_manager().latest_id().unwrap().unwrap();
        let r = rollback(&t, &RollbackTarget::Snapshot(now)).unwrap();
        assert!(r.snapshots.is_empty() && r.data_files.is_empty() && r.manifests.is_empty(), "{r:?}");
        assert_eq!(rollback(&t, &RollbackTarget::Snapshot(now + 1)).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(rollback(&t, &RollbackTarget::Tag("t7".into())).unwrap_err().kind(), ErrorKind::NotFound);
    }
}

/// A table whose snapshot of round 1 expired under tag "old", with a tag "mid" on a live snapshot and
/// "new" on the latest; its models per snapshot id.
fn table_with_expired_tag(dir: &Path) -> (Table, BTreeMap<i64, Rows>) {
    let t = kv_table(dir, true);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 0..5 {
        let id = commit_round(&t, &mut w, r, &mut model, &mut models);
        match r {
            1 => drop(create_tag(&t, "old", Some(id), None).unwrap()),
            3 => drop(create_tag(&t, "mid", Some(id), None).unwrap()),
            _ => {}
        }
    }
    drop(w);
    expire_snapshots(&t, &keep(4)).unwrap();
    create_tag(&t, "new", None, None).unwrap();
    (t, models)
}

#[test]
fn rolling_back_to_a_tag_whose_snapshot_expired_writes_it_back() {
    for by_id in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (t, models) = table_with_expired_tag(dir.path());
        let old = t.tag_manager().get_required("old").unwrap().snapshot.id;
        assert!(!t.snapshot_manager().snapshot_exists(old).unwrap());
        let target = if by_id { RollbackTarget::Snapshot(old) } else { RollbackTarget::Tag("old".into()) };
        let report = rollback(&t, &target).unwrap();
        assert_eq!(report.restored_from_tag.as_deref(), Some("old"));
        assert_eq!(t.snapshot_manager().list_ids().unwrap(), [old]);
        assert_eq!(t.snapshot_manager().earliest_id().unwrap(), Some(old));
        let mut names: Vec<String> = report.tags.clone();
        names.sort();
        assert_eq!(names, ["mid", "new"]);
        assert_eq!(rows_at(&t, None).unwrap(), models[&old]);
        assert_eq!(all_files(Path::new(t.path())), needed_files(&t), "by_id={by_id}");
        // The written-back snapshot is the plain snapshot, and writes go on after it.
        let json = std::fs::read_to_string(t.snapshot_manager().snapshot_path(old)).unwrap();
        assert!(!json.contains("tagCreateTime"));
        let (mut model, mut models) = (models[&old].clone(), models);
        let mut w = TableWriter::new(&t, "w2").unwrap();
        let id = commit_round(&t, &mut w, 30, &mut model, &mut models);
        assert!(id > old);
        assert_consecutive(&t, "after writes");
        assert_eq!(rows_at(&t, None).unwrap(), model);
        assert_eq!(rows_of_tag(&t, "old").unwrap(), models[&old]);
    }
}

/// Ids from the earliest to the latest snapshot without a gap, except below a snapshot written back from a
/// tag (`restored`): until the newer snapshots are gone, the ids jump from it to the oldest of them.
fn assert_consecutive_but_restored(t: &Table, restored: Option<i64>, what: &str) {
    let mut ids = t.snapshot_manager().list_ids().unwrap();
    if ids.len() > 1 && restored == Some(ids[0]) {
        ids.remove(0);
    }
    let (first, last) = (ids[0], ids[ids.len() - 1]);
    assert_eq!(ids, (first..=last).collect::<Vec<_>>(), "{what}: a gap in the snapshot ids");
}

#[test]
fn a_fault_at_any_operation_of_a_rollback_leaves_a_readable_table_that_rolling_back_again_finishes() {
    let template = tempfile::tempdir().unwrap();
    let (t, models) = table_with_expired_tag(template.path());
    let old = t.tag_manager().get_required("old").unwrap().snapshot.id;
    let mid = t.tag_manager().get_required("mid").unwrap().snapshot.id;
    let rel = Path::new(t.path()).strip_prefix(template.path()).unwrap().to_path_buf();
    let fresh = |io: Option<FaultyFileIO>| {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(template.path(), dir.path());
        let path = dir.path().join(&rel).to_str().unwrap().to_string();
        let table = match io {
            Some(f) => Table::open(Arc::new(f), &path).unwrap(),
            None => Table::open(local(), &path).unwrap(),
        };
        (dir, path, table)
    };
    let mut total = 0;
    // The earliest snapshot (an APPEND one), and a tag whose snapshot expired.
    let earliest = t.snapshot_manager().earliest_id().unwrap().unwrap();
    assert!(earliest < mid && old < earliest);
    for (target, want) in [(RollbackTarget::Snapshot(earliest), earliest), (RollbackTarget::Tag("old".into()), old)] {
        // A clean rollback's operations: mutations, reads, and the reads before the first mutation (a read
        // failing there only stops the rollback before it changed anything: two of them are enough).
        let faulty = FaultyFileIO::new(local());
        let (_dir, _, table) = fresh(Some(faulty.clone()));
        faulty.fail_at(u64::MAX, Fault::Before, None);
        rollback(&table, &target).unwrap();
        let log = faulty.log();
        let is_read =
            |l: &String| ["read ", "read_range ", "size ", "exists ", "list "].iter().any(|p| l.starts_with(p));
        let first_mutation = log.iter().position(|l| !is_read(l)).unwrap();
        let mutations: Vec<&String> = log.iter().filter(|l| !is_read(l)).collect();
        // Deleting data, index and manifest files comes after every snapshot and tag change, and a fault at
        // any of those deletions leaves the same state (the files not yet deleted are orphans): the first
        // and the last stand for all of them. Every other mutation fails before and after taking effect.
        let file = |l: &str| l.starts_with("delete ") && !l.contains("/snapshot/") && !l.contains("/tag/");
        let files: Vec<u64> = (0..mutations.len() as u64).filter(|&k| file(mutations[k as usize])).collect();
        let chosen: Vec<u64> = (0..mutations.len() as u64)
            .filter(|k| !files.contains(k) || files.first() == Some(k) || files.last() == Some(k))
            .collect();
        // A torn write differs from a failed one only for `write` (the hints).
        let writes = (0..mutations.len() as u64).filter(|&k| mutations[k as usize].starts_with("write ")).collect();
        let reads = log.iter().filter(|l| is_read(l)).count() as u64;
        let runs = [
            (Fault::Before, OpKind::Mutate, chosen.clone()),
            (Fault::After, OpKind::Mutate, chosen),
            (Fault::Torn, OpKind::Mutate, writes),
            (Fault::Before, OpKind::Read, (first_mutation.saturating_sub(2) as u64..reads).collect()),
        ];
        eprintln!(
            "{target:?}: {} mutations, {reads} reads, {first_mutation} before the first mutation",
            mutations.len()
        );
        for (fault, only, ks) in runs {
            for k in ks {
                let faulty = FaultyFileIO::new(local());
                let (_dir, path, table) = fresh(Some(faulty.clone()));
                faulty.fail_at(k, fault, Some(only));
                let result = rollback(&table, &target);

                let op = faulty.log().get(k as usize).cloned().unwrap_or_default();
                faulty.disarm();
                let what = format!("{target:?} {fault:?} {only:?}@{k} ({op}): {:?}", result.as_ref().err());
                let t = Table::open(local(), &path).unwrap();
                // Readable whatever happened: every remaining snapshot and tag has its files, the latest reads.
                assert_consecutive_but_restored(&t, Some(old), &what);
                let sm = t.snapshot_manager();
                let lost: Vec<String> = needed_files(&t).difference(&all_files(Path::new(&path))).cloned().collect();
                assert!(lost.is_empty(), "{what}: lost {lost:?}");
                let latest = sm.latest_id().unwrap().unwrap();
                assert_eq!(rows_merged(&t, None).unwrap(), models[&latest], "{what}");

                // A second rollback finishes the job; cleanup then leaves exactly what is needed.
                rollback(&t, &target).unwrap();
                assert_eq!(sm.latest_id().unwrap(), Some(want), "{what}");
                assert_consecutive(&t, &what);
                clean_orphans(&t);
                assert_eq!(all_files(Path::new(&path)), needed_files(&t), "{what}");
                total += 1;
            }
        }
        // And the end state reads the target.
        let (_dir, _, t) = fresh(None);
        rollback(&t, &target).unwrap();
        assert_eq!(rows_merged(&t, None).unwrap(), models[&want]);
    }
    eprintln!("rollback fault runs: {total}");
    assert!(total > 30, "only {total} fault runs");
}

/// A merge-on-read table written in rounds `0..6` (the writer closed), its models and round 2's snapshot, and
/// the table opened again on storage that runs `race` (given the table and that snapshot) once, at the first
/// `op` on a snapshot file.
fn table_with_a_race(
    dir: &Path,
    op: &'static str,
    race: impl FnOnce(&Table, i64) + Send + 'static,
) -> (Table, Table, BTreeMap<i64, Rows>, i64) {
    let (t, w, _, models, at) = written(dir, false, 6);
    drop(w);
    let target = at[2];
    let plain = t.clone();
    let mut race = Some(race);
    let io = HookIO::new(move |o, path| {
        if o == op && path.contains("/snapshot/snapshot-") {
            if let Some(race) = race.take() {
                race(&plain, target);
            }
        }
    });
    let hooked = Table::open(io, t.path()).unwrap();
    (t, hooked, models, target)
}

#[test]
fn a_commit_landing_during_a_rollback_is_rolled_back_too_and_leaves_no_gap() {
    let dir = tempfile::tempdir().unwrap();
    // Another process commits when the rollback deletes its first snapshot file.
    let (t, hooked, models, target) = table_with_a_race(dir.path(), "delete", |plain, _| {
        let mut w = TableWriter::new(plain, "racer").unwrap();
        let mut m = Rows::new();
        round_rows(&mut w, 50, &mut m);
        w.commit().unwrap();
    });
    let report = rollback(&hooked, &RollbackTarget::Snapshot(target)).unwrap();
    assert_eq!(t.snapshot_manager().list_ids().unwrap(), (1..=target).collect::<Vec<_>>(), "{report:?}");
    assert_eq!(rows_at(&t, None).unwrap(), models[&target]);
    assert_eq!(all_files(Path::new(t.path())), needed_files(&t), "the racing commit's files were left");
}

#[test]
fn a_commit_that_read_the_table_before_a_rollback_fails_loudly_and_rolling_back_again_repairs_it() {
    let dir = tempfile::tempdir().unwrap();
    // The writer has read the latest snapshot and written its manifests when the rollback runs; then it
    // creates the next snapshot (what Paimon forbids: writers must be stopped).
    let (t, stale, models, target) = table_with_a_race(dir.path(), "create_if_absent", |plain, target| {
        rollback(plain, &RollbackTarget::Snapshot(target)).unwrap();
    });
    let mut w = TableWriter::new(&stale, "stale").unwrap();
    let mut m = Rows::new();
    round_rows(&mut w, 60, &mut m);
    let committed = w.commit();
    drop(w);
    let ids = t.snapshot_manager().list_ids().unwrap();
    if ids.last() != Some(&target) {
        // A snapshot past a gap, naming manifests the rollback deleted: reads fail, never return rows.
        assert!(ids.windows(2).any(|p| p[1] != p[0] + 1), "{ids:?} ({committed:?})");
        let e = ReadBuilder::new(&t).read().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    }
    let again = rollback(&t, &RollbackTarget::Snapshot(target)).unwrap();
    assert_eq!(t.snapshot_manager().list_ids().unwrap(), (1..=target).collect::<Vec<_>>(), "{again:?}");
    assert_eq!(rows_at(&t, None).unwrap(), models[&target]);
    clean_orphans(&t);
    assert_eq!(all_files(Path::new(t.path())), needed_files(&t));
}

#[test]
fn a_writer_opened_before_a_rollback_commits_consistently_after_it() {
    for dv in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (t, mut w, _, mut models, at) = written(dir.path(), dv, 6);
        let target = at[2];
        rollback(&t, &RollbackTarget::Snapshot(target)).unwrap();
        // The old writer still holds the removed snapshots' files in its levels.
        let mut after = models[&target].clone();
        round_rows(&mut w, 70, &mut after);
        let result = w.commit();
        drop(w);
        assert_consecutive(&t, &format!("dv={dv}: {result:?}"));
        let landed = t.snapshot_manager().latest_id().unwrap() != Some(target);
        let want = if landed { after } else { models[&target].clone() };
        // Merge-on-read sees level 0 too, where a commit whose compaction was dropped leaves its rows.
        let got = rows_of(&ReadBuilder::new(&t).merge_on_read(true).read().unwrap().batches);
        assert_eq!(got, want, "dv={dv}: {result:?}");
        // A new writer goes on from there.
        let mut model = want;
        let mut w = TableWriter::new(&t, "w2").unwrap();
        commit_round(&t, &mut w, 80, &mut model, &mut models);
        assert_eq!(rows_at(&t, None).unwrap(), model, "dv={dv}");
        assert_consecutive(&t, "after a new writer");
    }
}
