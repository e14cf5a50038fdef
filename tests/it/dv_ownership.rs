//! Who changes a deletion-vector bucket (issue 51). `write-only` writers leave compaction to a compactor.
//! `strata repair` on marks a stale writer's index dropped from a live file: a commit that
//! replaces a bucket's index without another writer's vector, as Java 1.4's `BucketedCombiner` lets a stale
//! writer do. Reads refuse the snapshot (a live file's vector vanished); the repair restores the marks from
//! the snapshot that had them, and a second repair finds nothing. The marks on removed files are restored in
//! `java_races`, against Java itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use strata::spec::{CommitIncrement, CommitKind, CompactIncrement, Datum, DvIndexBase};
use strata::table::{repair_deletion_vectors, CommitMessage, Committable};
use strata::{Catalog, ErrorKind, FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

use crate::common::fixtures::id_name_v_schema;

fn ids_and_v(t: &Table) -> strata::Result<BTreeMap<i64, i64>> {
    let mut out = BTreeMap::new();
    for b in ReadBuilder::new(t).read()?.batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let vs = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            assert!(out.insert(ids.value(i), vs.value(i)).is_none(), "key {} read twice", ids.value(i));
        }
    }
    Ok(out)
}

/// Table `db.t` (id, name, v; key id) in `dir` with `options`.
fn create(dir: &tempfile::TempDir, options: &[(&str, &str)]) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let catalog = Catalog::new(io, dir.path().to_str().unwrap());
    catalog.create_database("db", true).unwrap();
    catalog.create_table("db", "t", id_name_v_schema(options), false).unwrap()
}

fn put(t: &Table, ids: std::ops::Range<i64>, v: i64) {
    let mut w = TableWriter::new(t, "app").unwrap();
    for id in ids {
        w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String(format!("n{id}"))), Some(Datum::BigInt(v))]).unwrap();
    }
    w.commit().unwrap();
}

#[test]
fn marks_a_stale_index_dropped_from_a_live_file_are_restored() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(&dir, &[("bucket", "1"), ("deletion-vectors.enabled", "true")]);
    put(&t, 0..2000, 1);
    TableWriter::new(&t, "app").unwrap().compact(true).unwrap();
    put(&t, 0..10, 2);
    let want = ids_and_v(&t).unwrap();
    assert_eq!(want.len(), 2000);

    // A stale writer's index: the bucket's vectors without the marks the last write made.
    let latest = t.snapshot(None).unwrap().unwrap();
    let entry = t.live_files(&latest).unwrap().into_iter().find(|e| e.file.level > 0 && e.file.row_count == 2000);
    let big = entry.expect("the compacted file").file.file_name;
    let mut dvs = t.dv_maintainer(Some(&latest), &strata::spec::BinaryRow::empty(), 0).unwrap();
    assert!(dvs.deletion_vector_of(&big).is_some_and(|v| v.cardinality() == 10));
    dvs.remove_deletion_vector_of(&big);
    let paths = t.path_factory();
    let change =
        dvs.write_index_file(t.io().as_ref(), &paths.index_dir(), &paths.new_index_file_name()).unwrap().unwrap();
    let compact = CompactIncrement {
        new_index_files: vec![change.new_file],
        deleted_index_files: change.old_file.into_iter().collect(),
        ..Default::default()
    };
    // Unchecked, as Java's commit is: the index it replaces is not compared.
    let increment = CommitIncrement { compact, dv_index_base: DvIndexBase::Unchecked, ..Default::default() };
    let c = Committable {
        identifier: 1,
        messages: vec![CommitMessage::new(strata::spec::BinaryRow::empty(), 0, 1, increment)],
        kind: Some(CommitKind::Compact),
        properties: None,
    };
    t.new_commit("stale").unwrap().commit(&c).unwrap();
    let err = ids_and_v(&t).expect_err("a live file's vector vanished");
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");

    let report = repair_deletion_vectors(&t, "strata-repair", true).unwrap();
    assert_eq!((report.restored, report.snapshot), (10, None), "a dry run: {report:?}");
    let report = repair_deletion_vectors(&t, "strata-repair", false).unwrap();
    assert_eq!(report.restored, 10, "{report:?}");
    assert!(report.lost.iter().all(|l| l.live && l.data_file == big), "{report:?}");
    assert!(report.snapshot.is_some());
    assert_eq!(ids_and_v(&t).unwrap(), want);
    let again = repair_deletion_vectors(&t, "strata-repair", false).unwrap();
    assert_eq!((again.restored, again.snapshot), (0, None), "{again:?}");
}

#[test]
fn write_only_writers_leave_level_0_to_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(&dir, &[("bucket", "2"), ("deletion-vectors.enabled", "true"), ("write-only", "true")]);
    put(&t, 0..100, 1);
    put(&t, 50..150, 2);
    let latest = t.snapshot(None).unwrap().unwrap();
    assert!(t.live_files(&latest).unwrap().iter().all(|e| e.file.level == 0), "no compaction ran");
    assert!(latest.index_manifest.is_none(), "no deletion vector was written");
    assert_eq!(ids_and_v(&t).unwrap().len(), 0, "deletion-vector reads skip level 0");
    // An explicit compaction still runs.
    TableWriter::new(&t, "compactor").unwrap().compact(false).unwrap().expect("a compaction");
    let rows = ids_and_v(&t).unwrap();
    assert_eq!(rows.len(), 150);
    assert!(rows.iter().all(|(id, v)| *v == if *id < 50 { 1 } else { 2 }));
}
