//! The PIP-16 write walk-through, as a named test: section 3.1 "Example" of the design page
//! (`../shared/reference/seed-pip16.txt`), replayed through Strata's real writer and commit, with each stated
//! change checked in the commit form Paimon uses (an APPEND snapshot with the write's level-0 file, then a
//! COMPACT snapshot with the compaction and its deletion-vector index file).
//!
//! The page's figures are not included, only its text, so the initial state is built from what the text
//! says: four levels; level 3 holds f1 (with key 1) and more files; level 2 holds f5 and f6 (with keys 2 and
//! 9), and the index file holds a bitmap for f6; level 1 is empty (a compaction picking level 0 and level 2
//! must skip nothing in between). Then f7 = {1, 2, 9} lands in level 0 and the compaction picks level 0 and
//! level 2:
//! - key 1 is only in level 0: it is looked up in the other levels, found in f1, and f1's bitmap gains it;
//! - keys 2 and 9 are in level 0 and level 2: merged, no bitmap changes;
//! - f6's bitmap is dropped (f6 is compacted);
//! - f5, f6, f7 and the old index file are removed; f8, f9 and the new index file are added.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use strata::lsm::DvIndexBase;

use common::fixtures::{create_table, kv_batch, unique_kv};
use strata::spec::{CommitKind, DataFileMeta, DataType, Datum, FileKind, ManifestEntry, Snapshot};
use strata::table::TableWrite;
use strata::table::{scan, ScanOptions};
use strata::table::{CommitMessage, Committable};
use strata::{FileIO, MemoryFileIO, Table};

const INSERT: i8 = 0;
const DELETE: i8 = 3;
const ADD: &str = "ADD";
const REMOVE: &str = "REMOVE";

fn create() -> Table {
    let options = [
        ("deletion-vectors.enabled", "true"),
        // The page's LSM has four levels (0 to 3).
        ("num-levels", "4"),
        // Every written batch closes its file, so a compaction's output rolls where the test says (below).
        ("target-file-size", "1 b"),
        // The page's compactions are Paimon's: the forced level-0 pick takes in the runs within the size ratio
        // (Strata's default gives level 0 the free level instead).
        ("strata.lookup-compact.size-ratio", "true"),
    ];
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    create_table(io, "/wh/db.db/pip16", 1, &options)
}

/// One write (a fresh writer, so option changes apply), prepared but not committed.
fn prepare(t: &Table, rows: &[(i64, i64)], kind: i8) -> Vec<CommitMessage> {
    let mut w = TableWrite::new(t).unwrap();
    w.write_with_kinds(&kv_batch(rows), &vec![kind; rows.len()]).unwrap();
    w.prepare_commit_with(false, None).unwrap()
}

fn commit(t: &Table, identifier: i64, messages: Vec<CommitMessage>) {
    t.new_commit("walkthrough").unwrap().commit(&Committable { identifier, messages, ..Default::default() }).unwrap();
}

fn write(t: &Table, identifier: i64, rows: &[(i64, i64)], kind: i8) {
    commit(t, identifier, prepare(t, rows, kind));
}

fn latest(t: &Table) -> Snapshot {
    t.snapshot(None).unwrap().unwrap()
}

fn keys_of(f: &DataFileMeta) -> (i64, i64) {
    let key = |row: &strata::spec::BinaryRow| match row.to_datums(&[DataType::bigint()]).unwrap()[0] {
        Some(Datum::BigInt(k)) => k,
        ref other => panic!("key {other:?}"),
    };
    (key(&f.min_key), key(&f.max_key))
}

/// Live files by level: (level, min key, max key, row count, name), sorted.
fn levels(t: &Table, s: &Snapshot) -> Vec<(i32, i64, i64, i64, String)> {
    let mut out: Vec<_> = t
        .live_files(s)
        .unwrap()
        .into_iter()
        .map(|e| {
            let (min, max) = keys_of(&e.file);
            (e.file.level, min, max, e.file.row_count, e.file.file_name)
        })
        .collect();
    out.sort();
    out
}

/// File name -> deleted positions, for every vector the snapshot holds.
fn vectors(t: &Table, s: &Snapshot) -> BTreeMap<String, Vec<u64>> {
    t.deletion_files(s)
        .unwrap()
        .into_iter()
        .map(|((_, _, name), df)| (name, df.read(t.io().as_ref()).unwrap().positions().collect()))
        .collect()
}

/// The (kind, file name) records of a snapshot's delta manifest list.
fn delta(t: &Table, s: &Snapshot) -> BTreeSet<(&'static str, String)> {
    let store = t.manifest_store().unwrap();
    let mut out = BTreeSet::new();
    for m in store.read_manifest_list(&s.delta_manifest_list).unwrap() {
        let entries: Vec<ManifestEntry> = store.read_manifest_of(&m).unwrap();
        out.extend(entries.into_iter().map(|e| (kind(e.kind), e.file.file_name)));
    }
    out
}

fn kind(k: FileKind) -> &'static str {
    match k {
        FileKind::Add => ADD,
        FileKind::Delete => REMOVE,
    }
}

fn index_file_names(t: &Table, s: &Snapshot) -> BTreeSet<String> {
    t.index_files(s).unwrap().into_iter().map(|e| e.index_file.file_name).collect()
}

fn rows(t: &Table, snapshot: Option<i64>) -> BTreeMap<i64, i64> {
    unique_kv(&scan(t, &ScanOptions { snapshot, ..Default::default() }).unwrap().batches)
}

fn alter(t: &Table, key: &str, value: &str) -> Table {
    t.alter_options(&BTreeMap::from([(key.to_string(), value.to_string())]), &[], false).unwrap()
}

/// Builds the page's initial state; returns the table and the model of its rows.
fn initial_state() -> (Table, BTreeMap<i64, i64>) {
    let t = create();
    let mut model = BTreeMap::new();
    // Level 3, f1..f4: key 1 and keys from 100 up, four batches of the default batch size (8192 rows), so
    // four files. The first write of an empty table goes to the last level.
    let deep: Vec<(i64, i64)> = std::iter::once(1).chain(100..100 + 4 * 8192 - 1).map(|k| (k, k * 10)).collect();
    write(&t, 1, &deep, INSERT);
    model.extend(deep.iter().copied());
    // Level 2, f5 = {2..5}: level 0 weighs far less than level 3, so the force-up-level-0 compaction writes
    // it one level above level 3.
    let f5: Vec<(i64, i64)> = (2..=5).map(|k| (k, k * 10)).collect();
    write(&t, 2, &f5, INSERT);
    model.extend(f5.iter().copied());
    // Level 2, f6 = {9..13}: this level-0 file weighs at least f5 (size ratio 1%), so the compaction takes
    // level 2 along and writes level 2 again; the two files overlap no key, so each moves unchanged.
    let f6: Vec<(i64, i64)> = (9..=13).map(|k| (k, k * 10)).collect();
    write(&t, 3, &f6, INSERT);
    model.extend(f6.iter().copied());
    // f6's bitmap: deleting key 10 (f6's position 1) in level 0; level 0 weighs less than level 2, so the
    // compaction writes level 1, where a delete is a bit in the older file's vector and never a row: level 1
    // stays empty.
    write(&t, 4, &[(10, 0)], DELETE);
    model.remove(&10);
    (t, model)
}

#[test]
fn pip16_section_3_1_example_f7_compacted_with_level_2() {
    let (t, mut model) = initial_state();
    let before = latest(&t);
    let lv = levels(&t, &before);
    let at = |level: i32| lv.iter().filter(|f| f.0 == level).cloned().collect::<Vec<_>>();
    assert!(at(0).is_empty() && at(1).is_empty(), "levels 0 and 1 must be empty: {lv:?}");
    let l2 = at(2);
    assert_eq!(l2.iter().map(|f| (f.1, f.2)).collect::<Vec<_>>(), vec![(2, 5), (9, 13)], "level 2: {lv:?}");
    let (f5, f6) = (l2[0].4.clone(), l2[1].4.clone());
    let l3 = at(3);
    assert_eq!(l3.len(), 4, "level 3 holds f1..f4: {lv:?}");
    let f1 = l3.iter().find(|f| f.1 == 1).expect("f1 holds key 1").4.clone();
    let old_vectors = vectors(&t, &before);
    assert_eq!(old_vectors, BTreeMap::from([(f6.clone(), vec![1])]), "the index file holds f6's bitmap");
    let old_index = index_file_names(&t, &before);
    assert_eq!(old_index.len(), 1, "one deletion-vector index file for the bucket");
    assert_eq!(rows(&t, None), model);

    // f7 = {1, 2, 9} in level 0. For the compaction to pick level 0 and level 2 (not level 3), f7 must weigh
    // at least the level-2 run within the size ratio: 300% says so, while level 3 stays far heavier. Outputs
    // roll every 5 rows, so the 9 merged rows (1, 2, 3, 4, 5, 9, 11, 12, 13; key 10 is deleted) make f8 and f9.
    let t = alter(&alter(&t, "compaction.size-ratio", "300"), "read.batch-size", "5");
    let f7_rows = [(1, 11), (2, 21), (9, 91)];
    let messages = prepare(&t, &f7_rows, INSERT);
    model.extend(f7_rows);

    // The commit message: f7 is the write's new file, and the compaction's input with f5 and f6.
    assert_eq!(messages.len(), 1);
    let (data, compaction) = (&messages[0].increment.data, &messages[0].increment.compact);
    assert_eq!(data.new_files.len(), 1, "f7");
    let f7 = data.new_files[0].file_name.clone();
    assert_eq!((data.new_files[0].level, keys_of(&data.new_files[0]), data.new_files[0].row_count), (0, (1, 9), 3));
    let before_names: BTreeSet<String> = compaction.compact_before.iter().map(|f| f.file_name.clone()).collect();
    assert_eq!(before_names, BTreeSet::from([f5.clone(), f6.clone(), f7.clone()]), "f5, f6 and f7 are compacted");
    let mut after: Vec<(i32, (i64, i64), i64)> =
        compaction.compact_after.iter().map(|f| (f.level, keys_of(f), f.row_count)).collect();
    after.sort();
    assert_eq!(after, vec![(2, (1, 5), 5), (2, (9, 13), 4)], "f8 and f9 at level 2");
    let (f8, f9) = (compaction.compact_after[0].file_name.clone(), compaction.compact_after[1].file_name.clone());
    // The new index file replaces the bucket's old one: the message carries both (the commit removes exactly
    // the old one), and names the old one as the file it worked from (the commit conflicts if another writer
    // replaced it meanwhile).
    assert_eq!(compaction.new_index_files.len(), 1, "the new index file");
    let deleted: BTreeSet<String> = compaction.deleted_index_files.iter().map(|f| f.file_name.clone()).collect();
    assert_eq!(deleted, old_index, "the old index file REMOVE");
    let base = old_index.iter().next().map(|n| DvIndexBase::File(n.clone()));
    assert_eq!(Some(messages[0].increment.dv_index_base.clone()), base);
    assert!(
        data.new_index_files.is_empty() && data.deleted_index_files.is_empty(),
        "index changes are the compaction's"
    );
    let new_index = compaction.new_index_files[0].file_name.clone();
    assert!(!old_index.contains(&new_index));

    commit(&t, 5, messages);

    // The APPEND snapshot: f7 added at level 0, nothing else; the old index file still stands, and readers
    // (which skip level 0) see the rows as before, each with its vector.
    let compact = latest(&t);
    let append = t.snapshot(Some(compact.id - 1)).unwrap().unwrap();
    assert_eq!((append.commit_kind, append.id), (CommitKind::Append, before.id + 1));
    assert_eq!(delta(&t, &append), BTreeSet::from([(ADD, f7.clone())]));
    assert_eq!(index_file_names(&t, &append), old_index);
    assert_eq!(vectors(&t, &append), old_vectors);
    assert_eq!(rows(&t, Some(append.id)), rows(&t, Some(before.id)));

    // The COMPACT snapshot: f5, f6, f7 removed, f8 and f9 added; the old index file replaced by the new one.
    assert_eq!(compact.commit_kind, CommitKind::Compact);
    assert_eq!(compact.commit_identifier, append.commit_identifier);
    assert_eq!(compact.commit_user, append.commit_user);
    assert_eq!(
        delta(&t, &compact),
        BTreeSet::from([(REMOVE, f5), (REMOVE, f6.clone()), (REMOVE, f7), (ADD, f8), (ADD, f9),])
    );
    assert_eq!(index_file_names(&t, &compact), BTreeSet::from([new_index]));
    // Key 1 was only in level 0: found in f1 (position 0), which gains it. Keys 2 and 9 were in level 0 and
    // level 2: merged, marking nothing. f6's bitmap is gone with f6.
    assert_eq!(vectors(&t, &compact), BTreeMap::from([(f1, vec![0])]));
    assert!(levels(&t, &compact).iter().all(|f| f.0 >= 2), "nothing left in levels 0 and 1");
    assert_eq!(rows(&t, None), model);
}
