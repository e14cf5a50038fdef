//! Data safety (issue 13): metadata cannot point Strata outside the table, maintenance deletes only what
//! Paimon's layout says Strata wrote, and a later commit is never shadowed by an earlier one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use strata::spec::{DataType, Datum, ManifestEntry, Snapshot, TableSchema};
use strata::table::{expire_snapshots, remove_orphan_files, ExpireOptions};
use strata::{get, ErrorKind, FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

fn schema(dv: bool, buckets: u32) -> TableSchema {
    let (buckets, dv) = (buckets.to_string(), dv.to_string());
    common::fixtures::kv_schema(&[("bucket", buckets.as_str()), ("deletion-vectors.enabled", dv.as_str())])
}

fn create(dir: &Path, dv: bool) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    Table::create(io, dir.to_str().unwrap(), schema(dv, 1)).unwrap()
}

fn put(w: &mut TableWriter, k: i64, v: i64) {
    w.put(vec![Some(Datum::BigInt(k)), Some(Datum::BigInt(v))]).unwrap();
}

/// Writes rows straight into the writer's bucket writers (not only its row buffer), so the bucket writer
/// takes its base snapshot now.
fn write_now(w: &mut TableWriter, rows: &[(i64, i64)]) {
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("v", arrow_schema::DataType::Int64, true),
    ]));
    let ids = arrow_array::Int64Array::from_iter_values(rows.iter().map(|r| r.0));
    let vs = arrow_array::Int64Array::from_iter_values(rows.iter().map(|r| r.1));
    w.write(&arrow_array::RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(vs)]).unwrap()).unwrap();
}

fn value_of(t: &Table, k: i64) -> Option<i64> {
    let b = get(t, &[Some(Datum::BigInt(k))], None).unwrap()?;
    let col = b.column(1).as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
    Some(col.value(b.num_rows() - 1))
}

/// A table with a few commits overwriting the same keys, so its manifests hold DELETE entries.
fn table_with_history(dir: &Path) -> Table {
    let t = create(dir, false);
    let mut w = TableWriter::new(&t, "u").unwrap();
    for round in 0..4 {
        for k in 0..50 {
            put(&mut w, k, round);
        }
        w.commit().unwrap();
    }
    w.compact(true).unwrap();
    Table::open(t.io().clone(), t.path()).unwrap()
}

/// Rewrites manifest `name` with `entries` as an attacker with write access to the metadata would: the
/// manifest lists and snapshots that record sizes are patched to match, so only the crafted content is
/// left to catch.
fn rewrite_manifest(t: &Table, name: &str, entries: &[ManifestEntry]) {
    use strata::spec::ManifestFileMeta;
    let bytes = ManifestEntry::encode_file(entries, "zstd").unwrap();
    t.io().write(&t.path_factory().manifest_path(name), &bytes).unwrap();
    let dir = t.path_factory().manifest_dir();
    for f in t.io().list(&dir).unwrap().into_iter().filter(|f| f.name().starts_with("manifest-list-")) {
        let mut metas = ManifestFileMeta::decode_file(&t.io().read(&f.path).unwrap()).unwrap();
        if metas.iter().any(|m| m.file_name == name) {
            metas.iter_mut().filter(|m| m.file_name == name).for_each(|m| m.file_size = bytes.len() as i64);
            t.io().write(&f.path, &ManifestFileMeta::encode_file(&metas, "zstd").unwrap()).unwrap();
        }
    }
    let sm = t.snapshot_manager();
    for id in sm.list_ids().unwrap() {
        let path = sm.snapshot_path(id);
        let mut json: serde_json::Value = serde_json::from_slice(&t.io().read(&path).unwrap()).unwrap();
        for (list, size) in [
            ("baseManifestList", "baseManifestListSize"),
            ("deltaManifestList", "deltaManifestListSize"),
            ("changelogManifestList", "changelogManifestListSize"),
        ] {
            if let Some(list) = json[list].as_str() {
                json[size] = (t.io().size(&t.path_factory().manifest_path(list)).unwrap() as i64).into();
            }
        }
        t.io().write(&path, json.to_string().as_bytes()).unwrap();
    }
}

fn manifests(t: &Table) -> Vec<String> {
    let dir = t.path_factory().manifest_dir();
    let mut out: Vec<String> = t
        .io()
        .list(&dir)
        .unwrap()
        .into_iter()
        .map(|f| f.name().to_string())
        .filter(|n| n.starts_with("manifest-") && !n.starts_with("manifest-list-"))
        .collect();
    out.sort();
    out
}

#[test]
fn a_manifest_naming_a_file_outside_the_table_is_corrupt_and_nothing_outside_is_deleted() {
    let root = tempfile::tempdir().unwrap();
    let victim_dir = root.path().join("victim");
    std::fs::create_dir_all(&victim_dir).unwrap();
    let victim = victim_dir.join("secret.txt");
    std::fs::write(&victim, "do not delete").unwrap();
    let t = table_with_history(&root.path().join("db.db/t"));
    // Point every entry of every manifest (DELETE records included) at the victim.
    for name in manifests(&t) {
        let path = t.path_factory().manifest_path(&name);
        let entries = ManifestEntry::decode_file(&t.io().read(&path).unwrap()).unwrap();
        let crafted: Vec<ManifestEntry> = entries
            .into_iter()
            .map(|mut e| {
                e.file.file_name = "../../../victim/secret.txt".into();
                e
            })
            .collect();
        rewrite_manifest(&t, &name, &crafted);
    }
    let opts = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::ZERO, dry_run: false };
    let e = expire_snapshots(&t, &opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    assert!(e.to_string().contains("_FILE_NAME") && e.to_string().contains("manifest-"), "{e}");
    let e = remove_orphan_files(&t, Duration::ZERO, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    assert_eq!(ReadBuilder::new(&t).read().unwrap_err().kind(), ErrorKind::Corrupt);
    assert_eq!(get(&t, &[Some(Datum::BigInt(1))], None).unwrap_err().kind(), ErrorKind::Corrupt);
    let mut w = TableWriter::new(&t, "c").unwrap();
    assert_eq!(w.compact(true).unwrap_err().kind(), ErrorKind::Corrupt);
    assert!(victim.exists(), "a file outside the table was deleted");
}

#[test]
fn a_snapshot_naming_a_manifest_list_outside_the_table_is_corrupt() {
    let root = tempfile::tempdir().unwrap();
    let t = table_with_history(&root.path().join("t"));
    let sm = t.snapshot_manager();
    let id = sm.latest_id().unwrap().unwrap();
    let path = sm.snapshot_path(id);
    let mut json: serde_json::Value = serde_json::from_slice(&t.io().read(&path).unwrap()).unwrap();
    json["deltaManifestList"] = "../../elsewhere/list".into();
    t.io().write(&path, json.to_string().as_bytes()).unwrap();
    let e = Snapshot::from_json(&t.io().read(&path).unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    let e = ReadBuilder::new(&t).read().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    assert!(e.to_string().contains("deltaManifestList") && e.to_string().contains(&path), "{e}");
}

#[test]
fn an_external_path_outside_the_configured_roots_is_corrupt() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside/data-x-0.parquet");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    let t = table_with_history(&root.path().join("t"));
    // Copy a real data file outside the table and point the manifests at it by external path.
    let name = manifests(&t).pop().unwrap();
    let path = t.path_factory().manifest_path(&name);
    let entries = ManifestEntry::decode_file(&t.io().read(&path).unwrap()).unwrap();
    let crafted: Vec<ManifestEntry> = entries
        .into_iter()
        .map(|mut e| {
            e.file.external_path = Some(format!("file:{}", outside.display()));
            e
        })
        .collect();
    rewrite_manifest(&t, &name, &crafted);
    let e = ReadBuilder::new(&t).read().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    assert!(e.to_string().contains("data-file.external-paths"), "{e}");
}

#[test]
fn create_refuses_a_directory_holding_other_files() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "mine").unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let e = Table::create(io.clone(), root.path().to_str().unwrap(), schema(false, 1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
    assert!(e.to_string().contains("notes.txt"), "{e}");
    assert!(root.path().join("notes.txt").exists());
    // The CLI says the same and exits non-zero.
    let (code, _, err) =
        common::strata_create(root.path().to_str().unwrap(), "id BIGINT NOT NULL, v BIGINT", "id", &[], &[]);
    assert_ne!(code, 0);
    assert!(err.contains("not empty"), "{err}");
}

#[test]
fn orphan_cleanup_removes_only_files_of_paimons_layout() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let t = table_with_history(&dir);
    // Files a user (or another tool) put into the table directory, in every kind of place.
    let user_files = ["notes.txt", "photos/a.jpg", "bucket-0/notes.txt", "manifest/README", "index/keep.bin"];
    for f in user_files {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "user data").unwrap();
    }
    // Real orphans: files of Paimon's names that no snapshot references.
    let uuid = "0b7d6f56-5a4e-4f2c-9a57-0d0d6b1f0c11";
    let orphans = [
        format!("bucket-0/data-{uuid}-0.parquet"),
        format!("manifest/manifest-{uuid}-3"),
        format!("index/index-{uuid}-0"),
    ];
    for f in &orphans {
        std::fs::write(dir.join(f), "orphan").unwrap();
    }
    let before = ReadBuilder::new(&t).read().unwrap().num_rows();
    let report = remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    for f in user_files {
        assert!(dir.join(f).exists(), "{f} was deleted");
    }
    for f in &orphans {
        assert!(!dir.join(f).exists(), "orphan {f} was kept");
    }
    assert_eq!(report.data_files.len() + report.manifests.len() + report.index_files.len(), 3, "{report:?}");
    assert_eq!(ReadBuilder::new(&t).read().unwrap().num_rows(), before);
}

/// Two writers start from the same snapshot; the one that commits second wrote fewer rows, so without the
/// sequence check its rows carry lower sequence numbers and the earlier commit shadows them.
fn later_commit_wins(dv: bool) {
    let root = tempfile::tempdir().unwrap();
    let t = create(&root.path().join("t"), dv);
    let mut seed = TableWriter::new(&t, "seed").unwrap();
    put(&mut seed, 7, 0);
    seed.commit().unwrap();
    let mut first = TableWriter::new(&t, "first").unwrap();
    let mut second = TableWriter::new(&t, "second").unwrap();
    let mut rows: Vec<(i64, i64)> = (100..200).map(|k| (k, 1)).collect();
    rows.push((7, 1));
    write_now(&mut first, &rows);
    write_now(&mut second, &[(7, 2)]);
    first.commit().unwrap();
    match second.commit() {
        // Committed: it must be what readers see.
        Ok(_) => assert_eq!(value_of(&t, 7), Some(2), "the later commit is shadowed by the earlier one"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
            assert!(e.is_retryable());
            assert_eq!(value_of(&t, 7), Some(1));
            // The conflict left no files behind, and writing again lands on top.
            assert_no_unreferenced_files(&t);
            write_now(&mut second, &[(7, 2)]);
            second.commit().unwrap();
            assert_eq!(value_of(&t, 7), Some(2));
        }
    }
    assert_no_unreferenced_files(&t);
}

fn assert_no_unreferenced_files(t: &Table) {
    let t = Table::open(t.io().clone(), t.path()).unwrap();
    let report = remove_orphan_files(&t, Duration::ZERO, true).unwrap();
    assert!(report.data_files.is_empty() && report.index_files.is_empty(), "orphans left behind: {report:?}");
}

#[test]
fn a_later_commit_is_never_shadowed_by_an_earlier_one_merge_on_read() {
    later_commit_wins(false);
}

#[test]
fn a_later_commit_is_never_shadowed_by_an_earlier_one_deletion_vectors() {
    later_commit_wins(true);
}

#[test]
fn a_writer_dropped_after_a_failed_commit_removes_its_files() {
    let root = tempfile::tempdir().unwrap();
    let t = create(&root.path().join("t"), false);
    let mut a = TableWriter::new(&t, "a").unwrap();
    let mut b = TableWriter::new(&t, "b").unwrap();
    write_now(&mut a, &[(1, 1)]);
    write_now(&mut b, &[(1, 2)]);
    a.commit().unwrap();
    assert_eq!(b.commit().unwrap_err().kind(), ErrorKind::Conflict);
    drop(b);
    assert_no_unreferenced_files(&t);
}

#[test]
fn expiration_and_orphan_cleanup_keep_what_tags_and_consumers_need() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let t = table_with_history(&dir);
    let sm = t.snapshot_manager();
    // A tag on snapshot 2, as Paimon writes one (the snapshot's JSON under tag/), and a consumer at 4.
    std::fs::create_dir_all(dir.join("tag")).unwrap();
    std::fs::copy(sm.snapshot_path(2), dir.join("tag/tag-t1")).unwrap();
    std::fs::create_dir_all(dir.join("consumer")).unwrap();
    std::fs::write(dir.join("consumer/consumer-c1"), r#"{"nextSnapshot":4}"#).unwrap();
    let tagged = Snapshot::from_json(&std::fs::read(dir.join("tag/tag-t1")).unwrap()).unwrap();
    let tagged_files: Vec<String> =
        t.live_files(&tagged).unwrap().iter().map(|e| t.data_file_path(e).unwrap()).collect();
    assert!(!tagged_files.is_empty());
    let opts = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::ZERO, dry_run: false };
    let report = expire_snapshots(&t, &opts).unwrap();
    assert_eq!(report.snapshots, vec![1, 2, 3], "the consumer still needs snapshot 4");
    remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    for f in &tagged_files {
        assert!(Path::new(f).exists(), "{f}, which the tag references, was deleted");
    }
    // The tag still reads in full.
    assert_eq!(t.live_files(&tagged).unwrap().len(), tagged_files.len());
}

/// A file at a level >= 1 whose manifest entry counts no deletes but that holds `-D` rows (what a compactor
/// trusting pypaimon's delete counts leaves): a raw read of the deletion-vector table must not return the
/// deleted keys as rows.
#[test]
fn a_raw_read_refuses_retractions_its_manifest_does_not_count() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let t = create(&dir, false);
    let mut w = TableWriter::new(&t, "u").unwrap();
    for k in 0..20 {
        put(&mut w, k, k);
    }
    for k in 0..5 {
        w.delete(vec![Some(Datum::BigInt(k))]).unwrap();
    }
    w.commit().unwrap();
    // The file moved to the top level with its deletes uncounted, and the table switched to deletion
    // vectors, by editing the metadata as a careless compactor would have left it.
    for name in manifests(&t) {
        let path = t.path_factory().manifest_path(&name);
        let entries = ManifestEntry::decode_file(&t.io().read(&path).unwrap()).unwrap();
        let lying: Vec<ManifestEntry> = entries
            .into_iter()
            .map(|mut e| {
                e.file.level = 5;
                e.file.delete_row_count = Some(0);
                e
            })
            .collect();
        rewrite_manifest(&t, &name, &lying);
    }
    let mut schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("schema/schema-0")).unwrap()).unwrap();
    schema["options"]["deletion-vectors.enabled"] = "true".into();
    std::fs::write(dir.join("schema/schema-0"), schema.to_string()).unwrap();
    let t = Table::open(t.io().clone(), t.path()).unwrap();
    match ReadBuilder::new(&t).read() {
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
            assert!(e.to_string().contains("retraction"), "{e}");
        }
        Ok(r) => assert_eq!(r.num_rows(), 15, "deleted keys came back as rows"),
    }
}

/// Manifest lists and index manifests name files too: a crafted name is a corrupt file, never a path.
#[test]
fn manifest_lists_and_index_manifests_naming_paths_are_corrupt() {
    use strata::spec::{BinaryRow, DeletionVectorMeta, FileKind, IndexFileMeta, IndexManifestEntry, ManifestFileMeta};
    let list = |name: &str| ManifestFileMeta {
        file_name: name.into(),
        file_size: 1,
        num_added_files: 1,
        num_deleted_files: 0,
        partition_stats: strata::spec::SimpleStats::empty(),
        schema_id: 0,
        min_bucket: None,
        max_bucket: None,
        min_level: None,
        max_level: None,
        min_row_id: None,
        max_row_id: None,
    };
    let index = |name: &str, data_file: &str| IndexManifestEntry {
        kind: FileKind::Add,
        partition: BinaryRow::empty(),
        bucket: 0,
        index_file: IndexFileMeta {
            index_type: "DELETION_VECTORS".into(),
            file_name: name.into(),
            file_size: 10,
            row_count: 1,
            dv_ranges: Some(vec![DeletionVectorMeta {
                data_file_name: data_file.into(),
                offset: 1,
                length: 4,
                cardinality: Some(1),
            }]),
            external_path: None,
            global_index: None,
        },
    };
    let ok_list = ManifestFileMeta::encode_file(&[list("manifest-a-0")], "zstd").unwrap();
    assert!(ManifestFileMeta::decode_file(&ok_list).is_ok());
    for bad in ["../../etc/passwd", "/abs/manifest", "sub/manifest-a-0", ".."] {
        let bytes = ManifestFileMeta::encode_file(&[list(bad)], "zstd").unwrap();
        assert_eq!(ManifestFileMeta::decode_file(&bytes).unwrap_err().kind(), ErrorKind::Corrupt, "{bad}");
        let bytes = IndexManifestEntry::encode_file(&[index(bad, "data-a-0.parquet")], "zstd").unwrap();
        assert_eq!(IndexManifestEntry::decode_file(&bytes).unwrap_err().kind(), ErrorKind::Corrupt, "{bad}");
        let bytes = IndexManifestEntry::encode_file(&[index("index-a-0", bad)], "zstd").unwrap();
        assert_eq!(IndexManifestEntry::decode_file(&bytes).unwrap_err().kind(), ErrorKind::Corrupt, "{bad}");
    }
    let ok = IndexManifestEntry::encode_file(&[index("index-a-0", "data-a-0.parquet")], "zstd").unwrap();
    assert!(IndexManifestEntry::decode_file(&ok).is_ok());
}

/// Dynamic-bucket tables (`bucket = -1`, Paimon's default for primary-key tables) place keys in buckets by
/// their hash index, not by the bucket function: `get` and `TableQuery` routed every key to bucket 0 and
/// missed the keys of the other buckets.
#[test]
fn lookups_in_a_dynamic_bucket_table_search_every_bucket() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let t = Table::create(io.clone(), dir.to_str().unwrap(), schema(false, 4)).unwrap();
    let mut w = TableWriter::new(&t, "u").unwrap();
    for k in 0..40 {
        put(&mut w, k, k * 10);
    }
    w.commit().unwrap();
    drop(w);
    // The same files, as a dynamic-bucket table whose index put the keys where they are.
    let mut schema_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("schema/schema-0")).unwrap()).unwrap();
    schema_json["options"]["bucket"] = "-1".into();
    std::fs::write(dir.join("schema/schema-0"), schema_json.to_string()).unwrap();
    let t = Table::open(io, dir.to_str().unwrap()).unwrap();
    let query = strata::TableQuery::new(&t).unwrap();
    for k in 0..40 {
        assert_eq!(value_of(&t, k), Some(k * 10), "get missed key {k}");
        let row = query.get(&[Some(Datum::BigInt(k))]).unwrap();
        assert!(row.is_some(), "TableQuery missed key {k}");
    }
    assert_eq!(value_of(&t, 99), None);
}

/// Orphan cleanup matches data files by name, as Paimon does: a partition directory another engine named
/// differently from Strata's rendering (Java writes a DOUBLE partition `p=1.0`) held files that cleanup
/// took for orphans and deleted.
#[test]
fn orphan_cleanup_matches_data_files_by_name_not_by_computed_path() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let schema = TableSchema::new(
        vec![
            ("id".into(), DataType::bigint()),
            ("p".into(), DataType::not_null(strata::spec::TypeRoot::Double)),
            ("v".into(), DataType::bigint()),
        ],
        vec!["p".into()],
        vec!["id".into(), "p".into()],
        BTreeMap::from([("bucket".to_string(), "1".to_string())]),
        0,
    )
    .unwrap();
    let t = Table::create(io, dir.to_str().unwrap(), schema).unwrap();
    let mut w = TableWriter::new(&t, "u").unwrap();
    for k in 0..10 {
        w.put(vec![Some(Datum::BigInt(k)), Some(Datum::Double(1.0)), Some(Datum::BigInt(k))]).unwrap();
    }
    w.commit().unwrap();
    let strata_dir = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("p="))
        .unwrap();
    std::fs::rename(dir.join(&strata_dir), dir.join("p=1.0.java")).unwrap();
    remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    let left: Vec<_> = std::fs::read_dir(dir.join("p=1.0.java/bucket-0")).unwrap().collect();
    assert!(!left.is_empty(), "cleanup deleted referenced data files in a directory named unlike Strata's");
}

/// A commit's files that the latest snapshot references are never discarded, whatever the caller believes
/// about the commit (one that landed although its call failed, and whose snapshot expired since).
#[test]
fn discarding_messages_never_removes_referenced_files() {
    let root = tempfile::tempdir().unwrap();
    let t = create(&root.path().join("t"), true);
    let mut write = strata::TableWrite::new(&t).unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("v", arrow_schema::DataType::Int64, true),
    ]));
    let batch = arrow_array::RecordBatch::try_new(
        schema,
        vec![
            Arc::new(arrow_array::Int64Array::from_iter_values(0..50)),
            Arc::new(arrow_array::Int64Array::from_iter_values(0..50)),
        ],
    )
    .unwrap();
    write.write_batch(&batch).unwrap();
    let messages = write.prepare_commit_waiting().unwrap();
    let c = strata::table::Committable { identifier: 1, messages: messages.clone(), kind: None, properties: None };
    t.new_commit("u").unwrap().commit(&c).unwrap();
    write.discard(&messages);
    assert_eq!(ReadBuilder::new(&t).read().unwrap().num_rows(), 50);
    assert_no_unreferenced_files(&t);
}

/// After a conflict, everything since the last successful commit is gone, rows still buffered included,
/// so writing it again neither loses nor doubles a row. The conflict comes on the retry of a commit that
/// failed earlier, before the rows buffered since were flushed.
#[test]
fn a_conflict_drops_the_rows_still_buffered_too() {
    use strata_sim::{Fault, FaultyFileIO, OpKind};
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let t = create(&dir, false);
    let faulty = Arc::new(FaultyFileIO::new(Arc::new(LocalFileIO::new())));
    let tb = Table::open(faulty.clone(), dir.to_str().unwrap()).unwrap();
    let mut a = TableWriter::new(&t, "a").unwrap();
    let mut b = TableWriter::new(&tb, "b").unwrap();
    write_now(&mut b, &[(1, 2)]);
    faulty.fail_at_path(0, Fault::Before, Some(OpKind::Mutate), "snapshot-");
    assert_eq!(b.commit().unwrap_err().kind(), ErrorKind::Io);
    faulty.disarm();
    put(&mut b, 2, 2);
    write_now(&mut a, &[(1, 1)]);
    a.commit().unwrap();
    assert_eq!(b.commit().unwrap_err().kind(), ErrorKind::Conflict);
    assert_eq!(b.commit().unwrap(), None, "rows buffered before the conflict were committed after it");
    assert_eq!(value_of(&t, 2), None);
    assert_eq!(value_of(&t, 1), Some(1));
}

/// A branch directory with snapshots but no schema (a create that stopped, another tool's) cannot be read:
/// expiration and cleanup refuse rather than delete what it may reference.
#[test]
fn maintenance_refuses_tables_with_branches_it_cannot_read() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let t = table_with_history(&dir);
    std::fs::create_dir_all(dir.join("branch/branch-b1/snapshot")).unwrap();
    std::fs::copy(dir.join("snapshot/snapshot-1"), dir.join("branch/branch-b1/snapshot/snapshot-1")).unwrap();
    let e = remove_orphan_files(&t, Duration::ZERO, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("branch-b1"), "{e}");
    let opts = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::ZERO, dry_run: false };
    assert_eq!(expire_snapshots(&t, &opts).unwrap_err().kind(), ErrorKind::Unsupported);
}

/// Manifest names differ only in a counter, so one damaged digit can name another valid manifest list:
/// the size the snapshot records for it tells them apart.
#[test]
fn a_snapshot_naming_another_valid_manifest_list_is_corrupt() {
    let root = tempfile::tempdir().unwrap();
    let t = table_with_history(&root.path().join("t"));
    let sm = t.snapshot_manager();
    let path = sm.snapshot_path(sm.latest_id().unwrap().unwrap());
    let mut json: serde_json::Value = serde_json::from_slice(&t.io().read(&path).unwrap()).unwrap();
    let recorded = json["deltaManifestListSize"].as_i64().unwrap();
    let other = t
        .io()
        .list(&t.path_factory().manifest_dir())
        .unwrap()
        .into_iter()
        .find(|f| f.name().starts_with("manifest-list-") && f.size as i64 != recorded)
        .unwrap();
    json["deltaManifestList"] = other.name().into();
    t.io().write(&path, json.to_string().as_bytes()).unwrap();
    let e = ReadBuilder::new(&t).read().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    assert!(e.to_string().contains("records"), "{e}");
}

/// A damaged field name in an index manifest's header reads as an absent `_DELETIONS_VECTORS_RANGES`: the
/// bucket's vectors vanished and deleted rows came back (found by the soak's byte flips).
#[test]
fn a_deletion_vector_index_entry_without_ranges_is_corrupt() {
    use strata::spec::IndexManifestEntry;
    let root = tempfile::tempdir().unwrap();
    let t = create(&root.path().join("t"), true);
    let mut w = TableWriter::new(&t, "u").unwrap();
    for k in 0..3000 {
        put(&mut w, k, 0);
    }
    w.commit().unwrap();
    for k in (0..3000).step_by(7) {
        put(&mut w, k, 1);
    }
    w.commit().unwrap();
    let s = t.snapshot(None).unwrap().unwrap();
    let name = s.index_manifest.clone().expect("the second write made deletion vectors");
    let path = t.path_factory().manifest_path(&name);
    let mut entries = IndexManifestEntry::decode_file(&t.io().read(&path).unwrap()).unwrap();
    assert!(entries.iter().any(|e| e.index_file.dv_ranges.as_ref().is_some_and(|r| !r.is_empty())));
    entries.iter_mut().for_each(|e| e.index_file.dv_ranges = None);
    t.io().write(&path, &IndexManifestEntry::encode_file(&entries, "zstd").unwrap()).unwrap();
    let e = ReadBuilder::new(&t).read().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    let mut w = TableWriter::new(&t, "v").unwrap();
    put(&mut w, 1, 2);
    assert_eq!(w.commit().unwrap_err().kind(), ErrorKind::Corrupt, "a write restored a bucket without its vectors");
}

/// One bit of a parquet footer turns a column's physical type INT64 into BOOLEAN: the page bytes then
/// decode as other values, which a cast to the table's type hid (found by the soak's byte flips).
#[test]
fn a_parquet_footer_that_changed_a_columns_type_is_corrupt() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t");
    let t = create(&dir, false);
    let mut w = TableWriter::new(&t, "u").unwrap();
    for k in 0..100 {
        put(&mut w, k, k * 3);
    }
    w.commit().unwrap();
    let file = std::fs::read_dir(dir.join("bucket-0")).unwrap().next().unwrap().unwrap().path();
    let mut bytes = std::fs::read(&file).unwrap();
    // The footer's schema element of `v`: type INT64 (zigzag 4), repetition OPTIONAL, name "v".
    let at = bytes.windows(7).rposition(|w| w == b"\x15\x04%\x02\x18\x01v").unwrap();
    bytes[at + 1] = 0x00;
    std::fs::write(&file, bytes).unwrap();
    let e = ReadBuilder::new(&t).read().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
}
