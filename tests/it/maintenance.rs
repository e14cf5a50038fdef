//! Snapshot expiration and orphan-file cleanup: nothing a retained snapshot references is ever deleted,
//! readers of retained snapshots never miss a file, and regressions for Paimon issues 7710 and 8778.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::tag_fixtures::{all_files, files_of_snapshot, keep, kv_table, read_rows, round_rows_over, Rows};
use strata::table::{expire_snapshots, remove_orphan_files, ExpireOptions};
use strata::{ReadBuilder, Table, TableWriter};

fn round(w: &mut TableWriter, r: i64, model: &mut Rows) {
    round_rows_over(w, r, 120, model);
    w.commit().unwrap();
}

fn rows(t: &Table, snapshot: Option<i64>) -> strata::Result<Rows> {
    read_rows(ReadBuilder::new(t), snapshot)
}

/// Every file snapshot `id` needs, by full path.
fn files_of(t: &Table, id: i64) -> BTreeSet<String> {
    let mut out = files_of_snapshot(t, &t.snapshot_manager().snapshot(id).unwrap()).unwrap();
    out.insert(t.snapshot_manager().snapshot_path(id));
    out
}

#[test]
fn expiring_to_one_snapshot_leaves_exactly_its_files() {
    for dv in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let t = kv_table(dir.path(), dv);
        let mut model = BTreeMap::new();
        let mut w = TableWriter::new(&t, "w").unwrap();
        for r in 0..12 {
            round(&mut w, r, &mut model);
        }
        w.compact(false).unwrap();
        round(&mut w, 12, &mut model);
        // A closed writer leaves no file of a compaction it had running.
        drop(w);
        let latest = t.snapshot_manager().latest_id().unwrap().unwrap();
        let dry = expire_snapshots(&t, &ExpireOptions { dry_run: true, ..keep(1) }).unwrap();
        assert_eq!(dry.snapshots.len() as i64, latest - 1);
        assert_eq!(t.snapshot_manager().list_ids().unwrap().len() as i64, latest, "a dry run deleted snapshots");
        let report = expire_snapshots(&t, &keep(1)).unwrap();
        assert_eq!(report.snapshots, (1..latest).collect::<Vec<_>>());
        assert!(!report.data_files.is_empty() && !report.manifests.is_empty());
        let mut want = files_of(&t, latest);
        let root = t.path().to_string();
        want.insert(format!("{root}/schema/schema-0"));
        want.insert(format!("{root}/snapshot/LATEST"));
        want.insert(format!("{root}/snapshot/EARLIEST"));
        assert_eq!(all_files(std::path::Path::new(&root)), want, "dv={dv}");
        assert_eq!(rows(&t, None).unwrap(), model);
        assert_eq!(t.snapshot_manager().earliest_id().unwrap(), Some(latest));
    }
}

#[test]
fn readers_of_retained_snapshots_never_miss_a_file_while_writers_and_expiration_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let stop = AtomicBool::new(false);
    let mut model = BTreeMap::new();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut w = TableWriter::new(&t, "w").unwrap();
            for r in 0..40 {
                round(&mut w, r, &mut model);
            }
            stop.store(true, Ordering::SeqCst);
        });
        s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                expire_snapshots(&t, &keep(3)).unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        s.spawn(|| {
            let mut reads = 0;
            while !stop.load(Ordering::SeqCst) {
                let Some(id) = t.snapshot_manager().latest_id().unwrap() else { continue };
                match rows(&t, Some(id)) {
                    Ok(_) => reads += 1,
                    Err(e) => {
                        // Only a snapshot that expiration removed meanwhile may lose files.
                        let still_retained = t.snapshot_manager().snapshot_exists(id).unwrap();
                        assert!(!still_retained, "reading retained snapshot {id} failed: {e}");
                    }
                }
            }
            assert!(reads > 0);
        });
        writer.join().unwrap();
    });
    expire_snapshots(&t, &keep(3)).unwrap();
    let ids = t.snapshot_manager().list_ids().unwrap();
    assert_eq!(ids.len(), 3);
    for id in ids {
        for f in files_of(&t, id) {
            assert!(std::path::Path::new(&f).exists(), "retained snapshot {id} lost {f}");
        }
    }
    assert_eq!(rows(&t, None).unwrap(), model);
}

/// A writer id of Paimon's form (`<uuid>`), for files no commit references.
const DEAD: &str = "0d0d6b1f-5a4e-4f2c-9a57-0b7d6f560c11";

/// Paimon issue 7710: orphan cleanup racing snapshot expiration deleted live files.
#[test]
fn orphan_cleanup_racing_expiration_keeps_every_referenced_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let mut model = BTreeMap::new();
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 0..25 {
        round(&mut w, r, &mut model);
    }
    // Leftovers of a failed commit (names of Paimon's form: cleanup takes no other names): the orphans.
    let junk_manifest = t.path_factory().manifest_path(&format!("manifest-{DEAD}-0"));
    std::fs::write(&junk_manifest, b"junk").unwrap();
    let junk_data = format!("{}/bucket-0/data-{DEAD}-0.parquet", t.path());
    std::fs::write(&junk_data, b"junk").unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for n in [20u32, 15, 10, 5, 2] {
                expire_snapshots(&t, &keep(n)).unwrap();
            }
        });
        s.spawn(|| {
            for _ in 0..5 {
                remove_orphan_files(&t, Duration::ZERO, false).unwrap();
            }
        });
    });
    remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    for id in t.snapshot_manager().list_ids().unwrap() {
        for f in files_of(&t, id) {
            assert!(std::path::Path::new(&f).exists(), "snapshot {id} lost {f}");
        }
    }
    assert!(!std::path::Path::new(&junk_manifest).exists() && !std::path::Path::new(&junk_data).exists());
    assert_eq!(rows(&t, None).unwrap(), model);
}

#[test]
fn orphan_cleanup_honours_age_and_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), false);
    let mut model = BTreeMap::new();
    let mut w = TableWriter::new(&t, "w").unwrap();
    round(&mut w, 0, &mut model);
    let junk = t.path_factory().manifest_path(&format!("manifest-{DEAD}-0"));
    std::fs::write(&junk, b"junk").unwrap();
    // Young files are in-flight as far as cleanup knows.
    let r = remove_orphan_files(&t, Duration::from_secs(3600), false).unwrap();
    assert!(r.manifests.is_empty() && std::path::Path::new(&junk).exists());
    let r = remove_orphan_files(&t, Duration::ZERO, true).unwrap();
    assert_eq!(r.manifests, vec![junk.clone()]);
    assert!(std::path::Path::new(&junk).exists(), "a dry run deleted");
    let r = remove_orphan_files(&t, Duration::ZERO, false).unwrap();
    assert_eq!(r.manifests, vec![junk.clone()]);
    assert!(!std::path::Path::new(&junk).exists());
    assert_eq!(rows(&t, None).unwrap(), model);
}

/// Paimon issue 8778: a full compaction that only rewrites max-level files with vectors left orphan
/// deletion-vector entries.
#[test]
fn full_compaction_of_max_level_files_leaves_no_vector_entries() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let mut model = BTreeMap::new();
    let mut w = TableWriter::new(&t, "w").unwrap();
    round(&mut w, 0, &mut model);
    w.compact(true).unwrap();
    // Only max-level files now. Give one of them a deletion vector (as a delete routed elsewhere would),
    // committed on its own, so the full compaction must take the rewrite-files-with-vectors path.
    let s = t.snapshot(None).unwrap().unwrap();
    let e = t.live_files(&s).unwrap().into_iter().find(|e| e.file.row_count > 1).unwrap();
    assert_eq!(e.file.level as u32, t.schema().core_options().num_levels().unwrap() - 1);
    let key = {
        let r = strata::format::DataFileRef::new(t.data_file_path(&e).unwrap(), e.file.clone(), None);
        let layout = strata::format::KeyValueLayout::new(t.schema()).unwrap();
        let cols = strata::format::file_columns(&layout);
        let b = strata::format::FileRead::new(cols).batch_size(16).open(t.io(), &r).unwrap().next().unwrap().unwrap();
        b.column(0).as_any().downcast_ref::<arrow_array::Int64Array>().unwrap().value(0)
    };
    let mut m = t.dv_maintainer(Some(&s), &e.partition, e.bucket).unwrap();
    m.notify_new_deletion(&e.file.file_name, 0).unwrap();
    model.remove(&key);
    let name = t.path_factory().new_index_file_name();
    let change = m.write_index_file(t.io().as_ref(), &t.path_factory().index_dir(), &name).unwrap().unwrap();
    t.new_commit("dv")
        .unwrap()
        .commit(&strata::table::Committable {
            identifier: 1,
            messages: vec![strata::table::CommitMessage::new(
                e.partition.clone(),
                e.bucket,
                2,
                strata::lsm::CompactIncrement { new_index_files: vec![change.new_file], ..Default::default() }.into(),
            )],
            ..Default::default()
        })
        .unwrap();
    let s = t.snapshot(None).unwrap().unwrap();
    assert_eq!(t.deletion_files(&s).unwrap().len(), 1);
    assert_eq!(rows(&t, None).unwrap(), model);
    let mut w = TableWriter::new(&t, "w").unwrap();
    w.compact(true).unwrap();
    let s = t.snapshot(None).unwrap().unwrap();
    assert!(t.deletion_files(&s).unwrap().is_empty(), "orphan deletion-vector entries after a full compaction");
    let live: BTreeSet<String> = t.live_files(&s).unwrap().into_iter().map(|e| e.file.file_name).collect();
    for e in t.index_files(&s).unwrap() {
        for m in e.index_file.dv_ranges.unwrap_or_default() {
            assert!(live.contains(&m.data_file_name), "vector for {} outside the snapshot", m.data_file_name);
        }
    }
    assert_eq!(rows(&t, None).unwrap(), model);
    // Expiring down to this snapshot removes the superseded index files too.
    let report = expire_snapshots(&t, &keep(1)).unwrap();
    assert!(!report.index_files.is_empty());
    assert!(std::fs::read_dir(format!("{}/index", t.path())).map_or(0, |d| d.count()) <= 1);
}

#[test]
fn expiring_pypaimon_snapshots_leaves_a_table_pypaimon_reads() {
    let dir = tempfile::tempdir().unwrap();
    let spec = serde_json::json!({"warehouse": dir.path().to_str().unwrap(), "table": "t", "format": "parquet",
        "buckets": 2, "partitioned": true, "commits": 8, "ops_per_commit": 300, "key_space": 400,
        "delete_ratio": 0.1, "seed": 3});
    common::oracle(&["workload", &spec.to_string()]);
    let path = dir.path().join("db.db/t");
    let p = path.to_str().unwrap();
    let before = common::oracle(&["read", p]);
    let (code, out, err) = common::strata(&["expire", p, "--retain-max", "2", "--retain-min", "1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["snapshots"].as_array().unwrap().len(), 6);
    let after = common::oracle(&["read", p]);
    let sorted = |v: serde_json::Value| {
        let mut rows: Vec<String> = v.as_array().unwrap().iter().map(|r| r.to_string()).collect();
        rows.sort();
        rows
    };
    assert_eq!(sorted(before), sorted(after));
    let meta = common::oracle(&["meta", p]);
    assert_eq!(meta["snapshots"].as_array().unwrap().len(), 2);
}
