//! Tags and time travel against a model: tags read their snapshot after expiration and orphan cleanup,
//! deleting a tag reclaims exactly the files only it held, reads by time and by option pick the right
//! snapshot, and crafted names and damaged tag files give typed errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::tag_fixtures::*;
use strata::spec::ErrorKind;
use strata::table::{
    create_tag, delete_tag, expire_snapshots, remove_orphan_files, scan, snapshot_at_or_before, ExpireOptions,
    ScanOptions, TimeTravel, SCAN_TAG_NAME,
};
use strata::{Table, TableWriter};

fn keep(n: u32) -> ExpireOptions {
    ExpireOptions { retain_min: n, retain_max: n, time_retained: Duration::from_secs(3600), dry_run: false }
}

fn scan_with(t: &Table, options: &[(&str, &str)]) -> strata::Result<Rows> {
    let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Ok(rows_of(&scan(t, &ScanOptions { options, ..Default::default() })?.batches))
}

#[test]
fn tags_outlive_expiration_and_cleanup_and_deleting_one_reclaims_only_its_files() {
    for dv in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let t = kv_table(dir.path(), dv);
        let (mut model, mut models) = (Rows::new(), BTreeMap::new());
        let mut w = TableWriter::new(&t, "w").unwrap();
        let mut tagged: Vec<(&str, i64)> = Vec::new();
        for r in 0..12 {
            let id = commit_round(&t, &mut w, r, &mut model, &mut models);
            match r {
                2 => tagged.push(("early", id)),
                5 => tagged.extend([("mid", id), ("mid-twin", id)]),
                6 => {
                    w.compact(true).unwrap();
                    let id = t.snapshot_manager().latest_id().unwrap().unwrap();
                    models.insert(id, model.clone());
                    tagged.push(("after-full", id));
                }
                8 => tagged.push(("late", id)),
                _ => {}
            }
        }
        drop(w);
        for (name, id) in &tagged {
            let tag = create_tag(&t, name, Some(*id), None).unwrap();
            assert_eq!(tag.snapshot.id, *id);
        }
        let latest = t.snapshot_manager().latest_id().unwrap().unwrap();
        let report = expire_snapshots(&t, &keep(1)).unwrap();
        assert_eq!(report.snapshots.len() as i64, latest - 1, "dv={dv}");
        clean_orphans(&t);
        let root = Path::new(t.path());
        for (name, id) in &tagged {
            assert_eq!(rows_of_tag(&t, name).unwrap(), models[id], "dv={dv}: tag {name} (snapshot {id})");
        }
        assert_eq!(rows_at(&t, None).unwrap(), model, "dv={dv}");
        assert_eq!(all_files(root), needed_files(&t), "dv={dv}: after expiration and cleanup");

        // A tag whose snapshot another tag also pins reclaims nothing.
        let before = all_files(root);
        let d = delete_tag(&t, "mid-twin").unwrap();
        assert!(d.data_files.is_empty() && d.manifests.is_empty() && d.skipped_reclaim.is_none(), "{d:?}");
        let mut want = before.clone();
        want.remove(&format!("{}/tag/tag-mid-twin", t.path()));
        assert_eq!(all_files(root), want, "dv={dv}");
        // Each further deletion leaves exactly what the rest needs, and the rest still reads.
        let mut left: Vec<(&str, i64)> = tagged.iter().copied().filter(|(n, _)| *n != "mid-twin").collect();
        for name in ["mid", "early", "late", "after-full"] {
            let d = delete_tag(&t, name).unwrap();
            assert!(d.skipped_reclaim.is_none(), "{d:?}");
            left.retain(|(n, _)| *n != name);
            assert_eq!(all_files(root), needed_files(&t), "dv={dv}: after deleting {name}");
            for (n, id) in &left {
                assert_eq!(rows_of_tag(&t, n).unwrap(), models[id], "dv={dv}: tag {n} after deleting {name}");
            }
            assert_eq!(rows_at(&t, None).unwrap(), model);
        }
        assert!(!before.is_subset(&all_files(root)), "deleting the tags reclaimed nothing");
        assert_eq!(delete_tag(&t, "mid").unwrap_err().kind(), ErrorKind::NotFound);
    }
}

#[test]
fn deleting_a_tag_of_a_live_snapshot_leaves_its_files_to_expiration() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    let first = commit_round(&t, &mut w, 0, &mut model, &mut models);
    create_tag(&t, "t", Some(first), None).unwrap();
    for r in 1..6 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
    }
    drop(w);
    let before = all_files(Path::new(t.path()));
    let d = delete_tag(&t, "t").unwrap();
    assert!(d.data_files.is_empty() && d.index_files.is_empty() && d.manifests.is_empty(), "{d:?}");
    assert_eq!(before.len() - 1, all_files(Path::new(t.path())).len());
    // Expiration now deletes what only the old snapshots held, tag or no tag.
    expire_snapshots(&t, &keep(1)).unwrap();
    assert_eq!(all_files(Path::new(t.path())), needed_files(&t));
    assert_eq!(rows_at(&t, None).unwrap(), model);
}

#[test]
fn a_tag_created_while_expiration_runs_keeps_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 0..8 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
    }
    w.compact(true).unwrap();
    drop(w);
    let latest = t.snapshot_manager().latest_id().unwrap().unwrap();
    // The last round's COMPACT snapshot, which the full compaction's snapshot follows: a deletion-vector
    // table's APPEND snapshot reads as the one before it (its rows are in level 0, which readers skip).
    let compact = |id: &i64| t.snapshot(Some(*id)).unwrap().unwrap().commit_kind == strata::spec::CommitKind::Compact;
    let target = *models.keys().rev().find(|id| **id < latest && compact(id)).unwrap();
    // When expiration deletes its first snapshot file, another process tags a snapshot it is expiring.
    let plain = t.clone();
    let io = HookIO::new(move |op, path| {
        if op == "delete" && path.contains("/snapshot/snapshot-") && !plain.tag_manager().list().unwrap().is_empty() {
            return;
        }
        if op == "delete" && path.contains("/snapshot/snapshot-") {
            create_tag(&plain, "racer", Some(target), None).unwrap();
        }
    });
    let hooked = Table::open(io, t.path()).unwrap();
    expire_snapshots(&hooked, &keep(1)).unwrap();
    assert!(!t.snapshot_manager().snapshot_exists(target).unwrap());
    assert_eq!(rows_of_tag(&t, "racer").unwrap(), models[&target]);
    for f in files_of_snapshot(&t, &t.tag_manager().get_required("racer").unwrap().snapshot).unwrap() {
        assert!(Path::new(&f).exists(), "{f}, which the tag needs, was deleted");
    }
    // Tagging a snapshot that is gone is refused.
    assert_eq!(create_tag(&t, "late", Some(target), None).unwrap_err().kind(), ErrorKind::NotFound);

    // The other order: the snapshot expires after the creator read it, before the tag file lands. The
    // expiration did not see the tag, so the creator must give up and leave no tag behind.
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 8..11 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
    }
    drop(w);
    let doomed = t.snapshot_manager().latest_id().unwrap().unwrap() - 1;
    let plain = t.clone();
    let io = HookIO::new(move |op, path| {
        if op == "create_if_absent" && path.ends_with("/tag/tag-slow") {
            expire_snapshots(&plain, &keep(1)).unwrap();
        }
    });
    let hooked = Table::open(io, t.path()).unwrap();
    let e = create_tag(&hooked, "slow", Some(doomed), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(t.tag_manager().get("slow").unwrap().is_none(), "a tag of an expired snapshot was left behind");
    assert_eq!(rows_of_tag(&t, "racer").unwrap(), models[&target]);
}

#[test]
fn creating_a_tag_refuses_taken_names_and_missing_snapshots_and_one_racer_wins() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), false);
    assert_eq!(create_tag(&t, "a", None, None).unwrap_err().kind(), ErrorKind::Invalid, "no snapshot yet");
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 0..4 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
    }
    let latest = t.snapshot_manager().latest_id().unwrap().unwrap();
    let a = create_tag(&t, "a", None, Some(Duration::from_secs(7200))).unwrap();
    assert_eq!((a.snapshot.id, a.time_retained), (latest, Some(Duration::from_secs(7200))));
    assert!(a.create_time.is_some());
    let file = format!("{}/tag/tag-a", t.path());
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(create_tag(&t, "a", Some(1), None).unwrap_err().kind(), ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "a refused create changed the tag");
    assert_eq!(create_tag(&t, "b", Some(latest + 5), None).unwrap_err().kind(), ErrorKind::NotFound);
    expire_snapshots(&t, &keep(1)).unwrap();
    assert_eq!(create_tag(&t, "b", Some(1), None).unwrap_err().kind(), ErrorKind::NotFound, "expired");
    assert_eq!(t.tag_manager().get_required("a").unwrap(), a, "the tag reads back as written");

    // Racing creators of one name: exactly one wins, and the tag is the winner's.
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), false);
    let mut w = TableWriter::new(&t, "w").unwrap();
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    for r in 0..4 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
    }
    let ids = t.snapshot_manager().list_ids().unwrap();
    let t = Arc::new(t);
    let handles: Vec<_> = ids
        .iter()
        .map(|&id| {
            let t = t.clone();
            std::thread::spawn(move || create_tag(&t, "race", Some(id), None).map(|tag| tag.snapshot.id))
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<i64> = results.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert!(results.iter().filter_map(|r| r.as_ref().err()).all(|e| e.kind() == ErrorKind::AlreadyExists));
    assert_eq!(t.tag_manager().get_required("race").unwrap().snapshot.id, winners[0]);
}

#[test]
fn reads_by_time_pick_the_latest_snapshot_committed_at_or_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), false);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 0..8 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
        std::thread::sleep(Duration::from_millis(3));
    }
    let sm = t.snapshot_manager();
    let snaps: Vec<_> = sm.list_ids().unwrap().into_iter().map(|id| sm.snapshot(id).unwrap()).collect();
    let want_at = |ms: i64| snaps.iter().rev().find(|s| s.time_millis <= ms).map(|s| s.id);
    for s in &snaps {
        for ms in [s.time_millis - 1, s.time_millis, s.time_millis + 1] {
            let Some(want) = want_at(ms) else {
                let e = scan_with(&t, &[("scan.timestamp-millis", &ms.to_string())]).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
                assert!(e.to_string().contains("earliest, snapshot 1"), "{e}");
                continue;
            };
            assert_eq!(snapshot_at_or_before(&t, ms).unwrap().map(|s| s.id), Some(want), "at {ms}");
            assert_eq!(scan_with(&t, &[("scan.timestamp-millis", &ms.to_string())]).unwrap(), models[&want], "{ms}");
        }
    }
    // After expiration, a time before the new earliest snapshot is an error, not the earliest snapshot.
    expire_snapshots(&t, &keep(2)).unwrap();
    let e = TimeTravel::TimestampMillis(snaps[2].time_millis).resolve(&t).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let last = snaps.last().unwrap();
    assert_eq!(TimeTravel::TimestampMillis(i64::MAX).resolve(&t).unwrap().id, last.id);
}

#[test]
fn scan_options_choose_the_snapshot_and_conflicting_ones_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    let mut ids = Vec::new();
    for r in 0..5 {
        ids.push(commit_round(&t, &mut w, r, &mut model, &mut models));
    }
    drop(w);
    create_tag(&t, "v1", Some(ids[1]), None).unwrap();
    create_tag(&t, "42", Some(ids[2]), None).unwrap();
    let id3 = ids[3].to_string();
    assert_eq!(scan_with(&t, &[("scan.tag-name", "v1")]).unwrap(), models[&ids[1]]);
    assert_eq!(scan_with(&t, &[("scan.snapshot-id", &id3)]).unwrap(), models[&ids[3]]);
    assert_eq!(scan_with(&t, &[("scan.version", "v1")]).unwrap(), models[&ids[1]]);
    // scan.version names a tag before a snapshot id, as in Paimon.
    assert_eq!(scan_with(&t, &[("scan.version", "42")]).unwrap(), models[&ids[2]]);
    assert_eq!(scan_with(&t, &[("scan.version", &id3)]).unwrap(), models[&ids[3]]);
    assert_eq!(scan_with(&t, &[]).unwrap(), model);
    for (options, kind) in [
        (vec![("scan.tag-name", "v1"), ("scan.snapshot-id", "1")], ErrorKind::Invalid),
        (vec![("scan.tag-name", "nope")], ErrorKind::NotFound),
        (vec![("scan.tag-name", "../v1")], ErrorKind::Invalid),
        (vec![("scan.snapshot-id", "x")], ErrorKind::Invalid),
        (vec![("scan.version", "nope")], ErrorKind::NotFound),
        (vec![("scan.watermark", "5")], ErrorKind::Unsupported),
    ] {
        let e = scan_with(&t, &options).unwrap_err();
        assert_eq!(e.kind(), kind, "{options:?}: {e}");
    }
    // A table option travels every scan; a read's own conflicting option is an error, as in Paimon.
    let set = BTreeMap::from([(SCAN_TAG_NAME.to_string(), "v1".to_string())]);
    let pinned = t.alter_options(&set, &[], false).unwrap();
    assert_eq!(scan_with(&pinned, &[]).unwrap(), models[&ids[1]]);
    assert_eq!(scan_with(&pinned, &[("scan.snapshot-id", &id3)]).unwrap_err().kind(), ErrorKind::Invalid);
    assert_eq!(scan_with(&pinned, &[("scan.tag-name", "42")]).unwrap(), models[&ids[2]], "the read's own wins");
}

#[test]
fn a_tag_reads_with_the_schema_its_snapshot_was_written_under() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), false);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    let id = commit_round(&t, &mut w, 0, &mut model, &mut models);
    drop(w);
    create_tag(&t, "old", Some(id), None).unwrap();
    let change = strata::spec::SchemaChange::add_column("w", strata::spec::DataType::bigint());
    let t2 = t.alter_columns(&[change]).unwrap();
    let mut w = TableWriter::new(&t2, "w").unwrap();
    w.put(vec![Some(strata::spec::Datum::BigInt(1)), Some(strata::spec::Datum::BigInt(2)), None]).unwrap();
    w.commit().unwrap();
    expire_snapshots(&t2, &keep(1)).unwrap();
    let options = BTreeMap::from([(SCAN_TAG_NAME.to_string(), "old".to_string())]);
    let read = strata::table::read_builder(&t2, &options).unwrap().read().unwrap();
    let names: Vec<String> = read.schema.fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["id", "v"]);
    assert_eq!(rows_of(&read.batches), models[&id]);
}

#[test]
fn crafted_tag_names_and_damaged_tag_files_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    for r in 0..3 {
        commit_round(&t, &mut w, r, &mut model, &mut models);
    }
    drop(w);
    let outside = dir.path().join("db.db");
    let before: BTreeSet<String> = all_files(&outside);
    for name in ["", " ", "../evil", "..", "a/b", "..\\x", "x\0y", "x\ny", &"n".repeat(300), "/abs", " x", ".x"] {
        let e = create_tag(&t, name, None, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "create {name:?}: {e}");
        assert_eq!(
            delete_tag(&t, name).map(|_| ()).unwrap_err().kind(),
            match name {
                " x" | ".x" => ErrorKind::NotFound,
                _ => ErrorKind::Invalid,
            }
        );
        assert!(scan_with(&t, &[("scan.tag-name", name)]).is_err());
    }
    assert_eq!(all_files(&outside), before, "a crafted name wrote or removed a file");

    // Damaged tag files: corrupt errors naming the file, for the tag and for maintenance, which must not
    // guess what a tag it cannot read references.
    let good = std::fs::read_to_string(t.snapshot_manager().snapshot_path(2)).unwrap();
    let tag_dir = Path::new(t.path()).join("tag");
    std::fs::create_dir_all(&tag_dir).unwrap();
    let damaged = [
        ("garbage", "\u{0}\u{1}not json".to_string(), ErrorKind::Corrupt),
        ("truncated", good[..good.len() / 2].to_string(), ErrorKind::Corrupt),
        ("escape", good.replacen("\"manifest-list-", "\"../../../../etc/manifest-list-", 1), ErrorKind::Corrupt),
        ("zero-id", good.replacen("\"id\": 2", "\"id\": 0", 1), ErrorKind::Corrupt),
        ("future", good.replacen("\"version\": 3", "\"version\": 99", 1), ErrorKind::Unsupported),
        ("bad-time", good.replacen("{", "{\"tagCreateTime\": [2024, 2, 30, 0, 0],", 1), ErrorKind::Corrupt),
        ("bad-ttl", good.replacen("{", "{\"tagTimeRetained\": -5,", 1), ErrorKind::Corrupt),
    ];
    for (name, content, kind) in &damaged {
        assert_ne!(&good, content, "{name}: the damage did not apply");
        std::fs::write(tag_dir.join(format!("tag-{name}")), content).unwrap();
        let e = t.tag_manager().get(name).unwrap_err();
        assert_eq!(e.kind(), *kind, "{name}: {e}");
        assert!(e.to_string().contains(&format!("tag-{name}")), "{name}: {e}");
        assert_eq!(scan_with(&t, &[("scan.tag-name", name)]).unwrap_err().kind(), *kind);
        assert_eq!(t.tag_manager().list().unwrap_err().kind(), *kind);
        let files = all_files(Path::new(t.path()));
        assert_eq!(expire_snapshots(&t, &keep(1)).unwrap_err().kind(), *kind, "{name}");
        assert_eq!(remove_orphan_files(&t, Duration::ZERO, false).unwrap_err().kind(), *kind, "{name}");
        assert_eq!(all_files(Path::new(t.path())), files, "{name}: maintenance deleted files");
        // A damaged tag can still be deleted (its files are left to orphan cleanup).
        let d = delete_tag(&t, name).unwrap();
        assert!(d.skipped_reclaim.is_some(), "{name}");
        assert!(t.tag_manager().list().unwrap().is_empty());
    }
    // A tag naming manifests that are not there reads as not found, never as an empty table.
    std::fs::write(tag_dir.join("tag-missing"), good.replace("manifest-list-", "manifest-list-0")).unwrap();
    assert_eq!(scan_with(&t, &[("scan.tag-name", "missing")]).unwrap_err().kind(), ErrorKind::NotFound);
    std::fs::remove_file(tag_dir.join("tag-missing")).unwrap();
    // A temporary file of a create in progress is not a tag.
    std::fs::write(tag_dir.join("tag-x.0b5d9d36-8cf3-4b1a-9d6c-3b43f7c1f2aa.tmp"), "{").unwrap();
    assert!(t.tag_manager().list().unwrap().is_empty());
    expire_snapshots(&t, &keep(1)).unwrap();
    assert_eq!(rows_at(&t, None).unwrap(), model);
}

#[test]
fn the_cli_creates_lists_reads_and_deletes_tags() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), false);
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    let mut ids = Vec::new();
    for r in 0..3 {
        ids.push(commit_round(&t, &mut w, r, &mut model, &mut models));
        std::thread::sleep(Duration::from_millis(3));
    }
    drop(w);
    let p = t.path();
    let first = ids[0].to_string();
    let (code, out, err) = common::strata(&["tag", "create", p, "first", "--snapshot", &first, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["snapshotId"], ids[0]);
    let (code, out, _) = common::strata(&["tag", "create", p, "now", "--time-retained", "1 d"]);
    assert_eq!((code, out.trim()), (0, format!("created tag now on snapshot {}", ids[2]).as_str()));
    assert_eq!(common::strata(&["tag", "create", p, "now"]).0, 4, "already exists");
    assert_eq!(common::strata(&["tag", "create", p, "../x"]).0, 2, "invalid");
    let (code, out, _) = common::strata(&["tag", "list", p, "--json"]);
    assert_eq!(code, 0);
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list[0]["name"], "first");
    assert_eq!(list[1]["timeRetainedSeconds"], 86400.0);
    assert!(list[1]["createTime"].is_string() && list[0]["createTime"].is_null());
    let scan_rows = |args: &[&str]| -> Rows {
        let (code, out, err) = common::strata(&[&["scan", p], args].concat());
        assert_eq!(code, 0, "{args:?}: {err}");
        out.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| (v["id"].as_i64().unwrap(), v["v"].as_i64().unwrap()))
            .collect()
    };
    assert_eq!(scan_rows(&["--tag", "first"]), models[&ids[0]]);
    let s2 = t.snapshot_manager().snapshot(ids[1]).unwrap();
    let iso = strata::table::format_millis(s2.time_millis);
    assert_eq!(scan_rows(&["--timestamp", &iso]), models[&ids[1]]);
    assert_eq!(scan_rows(&["--timestamp", &s2.time_millis.to_string()]), models[&ids[1]]);
    assert_eq!(common::strata(&["scan", p, "--timestamp", "1999-01-01"]).0, 3);
    assert_eq!(common::strata(&["scan", p, "--tag", "first", "--snapshot", "1"]).0, 2);
    let (code, out, _) = common::strata(&["tag", "delete", p, "first"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("deleted tag first"), "{out}");
    assert_eq!(common::strata(&["tag", "delete", p, "first"]).0, 3);
}
