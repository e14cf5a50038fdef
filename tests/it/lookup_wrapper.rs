//! Named scenarios of the deletion-vector write path (PIP-16 "Write"): a key rewritten in level 0 marks its
//! older copy in the deeper level's deletion vector; a delete becomes a bit, never a row at level >= 1; a full
//! compaction leaves no vectors; a file past the delete-ratio threshold is rewritten.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use common::fixtures::{create_table, kv_batch, kv_pairs};
use strata::table::Committable;
use strata::table::TableWrite;
use strata::table::{scan, ScanOptions};
use strata::{FileIO, MemoryFileIO, Table};

fn table(extra: &[(&str, &str)]) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let options: Vec<(&str, &str)> =
        [("deletion-vectors.enabled", "true")].into_iter().chain(extra.iter().copied()).collect();
    create_table(io, "/wh/db.db/t", 1, &options)
}

fn commit(t: &Table, w: &mut TableWrite, id: i64, rows: &[(i64, i64)], kinds: &[i8], full: bool) {
    w.write_with_kinds(&kv_batch(rows), kinds).unwrap();
    let messages = w.prepare_commit_with(full, None).unwrap();
    t.new_commit("w").unwrap().commit(&Committable { identifier: id, messages, ..Default::default() }).unwrap();
}

/// (file name, level, deleted positions) of every file with a vector.
fn vectors(t: &Table) -> Vec<(String, i32, Vec<u64>)> {
    let s = t.snapshot(None).unwrap().unwrap();
    let live = t.live_files(&s).unwrap();
    let mut out: Vec<_> = t
        .deletion_files(&s)
        .unwrap()
        .into_iter()
        .map(|((_, _, name), df)| {
            let level = live.iter().find(|e| e.file.file_name == name).unwrap().file.level;
            (name, level, df.read(t.io().as_ref()).unwrap().positions().collect())
        })
        .collect();
    out.sort();
    out
}

/// The rows of snapshot `snapshot` (the latest when `None`), sorted.
fn rows_at(t: &Table, snapshot: Option<i64>) -> Vec<(i64, i64)> {
    let mut out = kv_pairs(&scan(t, &ScanOptions { snapshot, ..Default::default() }).unwrap().batches);
    out.sort();
    out
}

fn rows(t: &Table) -> Vec<(i64, i64)> {
    rows_at(t, None)
}

#[test]
fn an_update_in_level_0_marks_the_older_row_in_the_deeper_level() {
    let t = table(&[]);
    let mut w = TableWrite::new(&t).unwrap();
    commit(&t, &mut w, 1, &[(1, 10), (2, 20), (3, 30)], &[0, 0, 0], false);
    // The first commit goes to the max level, with no vectors.
    assert!(vectors(&t).is_empty());
    let s = t.snapshot(None).unwrap().unwrap();
    assert!(t.live_files(&s).unwrap().iter().all(|e| e.file.level == 5));
    commit(&t, &mut w, 2, &[(2, 21)], &[0], false);
    // Key 2 was only in level 0: looked up in level 5, its row (position 1) marked deleted; the new row is at
    // level 4. Committed as Paimon commits it: an APPEND snapshot with the level-0 file (which deletion-vector
    // readers skip, so it still reads the old rows), then a COMPACT snapshot with the level-4 file and the
    // vector together.
    let v = vectors(&t);
    assert_eq!(v.len(), 1);
    assert_eq!((v[0].1, v[0].2.clone()), (5, vec![1]));
    assert_eq!(rows(&t), vec![(1, 10), (2, 21), (3, 30)]);
    let s = t.snapshot(None).unwrap().unwrap();
    // (The first commit made snapshots 1 and 2 the same way.)
    assert_eq!((s.id, s.commit_kind), (4, strata::spec::CommitKind::Compact));
    let append = t.snapshot(Some(3)).unwrap().unwrap();
    assert_eq!(append.commit_kind, strata::spec::CommitKind::Append);
    assert!(t.deletion_files(&append).unwrap().is_empty(), "the APPEND snapshot carries vectors");
    let old_rows = rows_at(&t, Some(3));
    assert_eq!(old_rows, vec![(1, 10), (2, 20), (3, 30)], "the APPEND snapshot shows rows without their vectors");
    assert!(t.live_files(&s).unwrap().iter().all(|e| e.file.level > 0), "level 0 left behind");
}

#[test]
fn a_delete_becomes_a_bit_and_never_a_row_at_deeper_levels() {
    let t = table(&[]);
    let mut w = TableWrite::new(&t).unwrap();
    commit(&t, &mut w, 1, &[(1, 10), (2, 20), (3, 30)], &[0, 0, 0], false);
    commit(&t, &mut w, 2, &[(3, 0)], &[3], false);
    assert_eq!(rows(&t), vec![(1, 10), (2, 20)]);
    let s = t.snapshot(None).unwrap().unwrap();
    for e in t.live_files(&s).unwrap() {
        assert_eq!(e.file.delete_row_count, Some(0), "{} holds a -D row", e.file.file_name);
    }
    assert_eq!(vectors(&t).iter().map(|v| v.2.clone()).collect::<Vec<_>>(), vec![vec![2]]);
}

#[test]
fn repeated_updates_move_the_deletion_to_the_newest_copy_and_full_compaction_clears_vectors() {
    let t = table(&[]);
    let mut w = TableWrite::new(&t).unwrap();
    commit(&t, &mut w, 1, &[(1, 1), (2, 2)], &[0, 0], false);
    commit(&t, &mut w, 2, &[(1, 11)], &[0], false);
    commit(&t, &mut w, 3, &[(1, 111)], &[0], false);
    assert_eq!(rows(&t), vec![(1, 111), (2, 2)]);
    // Every superseded copy is marked: physical rows minus marked rows is exactly the live keys.
    let marked: usize = vectors(&t).iter().map(|v| v.2.len()).sum();
    let s = t.snapshot(None).unwrap().unwrap();
    let physical: i64 = t.live_files(&s).unwrap().iter().map(|e| e.file.row_count).sum();
    assert_eq!(physical as usize - marked, 2, "physical {physical}, marked {marked}");
    commit(&t, &mut w, 4, &[], &[], true);
    assert!(vectors(&t).is_empty(), "a full compaction left vectors");
    assert_eq!(rows(&t), vec![(1, 111), (2, 2)]);
}

#[test]
fn a_restarted_writer_restores_vectors_and_sequence_numbers() {
    let t = table(&[]);
    let mut w = TableWrite::new(&t).unwrap();
    commit(&t, &mut w, 1, &[(1, 1), (2, 2), (3, 3)], &[0, 0, 0], false);
    commit(&t, &mut w, 2, &[(1, 10)], &[0], false);
    drop(w);
    let mut w = TableWrite::new(&t).unwrap();
    commit(&t, &mut w, 3, &[(1, 100), (3, 300)], &[0, 0], false);
    assert_eq!(rows(&t), vec![(1, 100), (2, 2), (3, 300)]);
    let s = t.snapshot(None).unwrap().unwrap();
    let live = t.live_files(&s).unwrap();
    let max_seq = live.iter().map(|e| e.file.max_sequence_number).max().unwrap();
    assert!(max_seq >= 5, "sequence numbers restarted: {max_seq}");
}

#[test]
fn files_past_the_delete_ratio_threshold_are_rewritten() {
    let t = table(&[("compaction.delete-ratio-threshold", "0.5")]);
    let mut w = TableWrite::new(&t).unwrap();
    let base: Vec<(i64, i64)> = (0..10).map(|i| (i, i)).collect();
    commit(&t, &mut w, 1, &base, &[0; 10], false);
    // Delete 6 of the 10 rows: the level-5 file is 60% deleted.
    let dels: Vec<(i64, i64)> = (0..6).map(|i| (i, 0)).collect();
    commit(&t, &mut w, 2, &dels, &[3; 6], false);
    let messages = {
        let mut w2 = TableWrite::new(&t).unwrap();
        w2.open_all_buckets().unwrap();
        w2.prepare_commit_with(false, Some(0.5)).unwrap()
    };
    t.new_commit("m").unwrap().commit(&Committable { identifier: 1, messages, ..Default::default() }).unwrap();
    assert!(vectors(&t).is_empty(), "the 60%-deleted file kept its vector: {:?}", vectors(&t));
    assert_eq!(rows(&t), (6..10).map(|i| (i, i)).collect::<Vec<_>>());
}
