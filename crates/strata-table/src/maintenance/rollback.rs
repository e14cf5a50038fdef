//! Rolling a table back to a snapshot or a tag (Paimon's `Table.rollbackTo` and `RollbackHelper`).
//!
//! Snapshots newer than the target are removed newest first, so a crash leaves a consistent prefix of the
//! table's history (rolling back again finishes the job); tags on newer snapshots are removed as Paimon
//! removes them; then the data, index and manifest files that only the removed snapshots and tags referenced
//! are deleted. Rolling back to a tag whose snapshot expired first writes the tag back as `snapshot-N`
//! (create-if-absent), as Paimon does.
//!
//! Like Paimon, a rollback needs every writer of the table stopped: a commit that lands while it runs is
//! removed too if the rollback sees it (it looks again after removing the snapshots it listed), but one
//! that read the latest snapshot before the rollback and lands after it would create a snapshot past a gap
//! whose manifests are gone. Reads of it then fail (missing files, never wrong rows), and rolling back again
//! removes it. The rollback reports such a commit it sees at its end as a conflict.

use std::collections::HashMap;

use serde::Serialize;
use strata_spec::{Error, ErrorKind, FileKind, Result, Snapshot};

use crate::maintenance::references::{delete_files, references, refuse_unread_references, References};
use crate::maintenance::tag::Tag;
use crate::table::Table;

/// What to roll back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollbackTarget {
    /// Snapshot `id`; once expired, a tag holding it.
    Snapshot(i64),
    /// The snapshot a tag pins.
    Tag(String),
}

/// What a rollback did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RollbackReport {
    /// The snapshot the table is at now.
    pub snapshot_id: i64,
    /// Whether that snapshot was written back from a tag (its snapshot file had expired).
    pub restored_from_tag: Option<String>,
    /// Snapshot ids removed, newest first.
    pub snapshots: Vec<i64>,
    /// Tags removed (they pinned removed snapshots).
    pub tags: Vec<String>,
    /// Data files deleted.
    pub data_files: Vec<String>,
    /// Index files deleted.
    pub index_files: Vec<String>,
    /// Manifests, manifest lists and index manifests deleted.
    pub manifests: Vec<String>,
}

/// Rolls `table` back to `target`. Writers must be stopped (see the module documentation).
///
/// Nothing the target snapshot, an older snapshot or a remaining tag references is deleted. The target and
/// the remaining tags are read before anything changes, and their files are kept; an older snapshot needs
/// nothing more, because a file lives in one unbroken run of snapshots (names are never reused, and a
/// dropped file never comes back), so a file an older snapshot and a removed one both reference is
/// referenced by the target in between. For the same reason the files to delete are found in what the
/// removed snapshots introduced (their delta's new files, manifests and index files), not in everything they
/// held. Files of removed snapshots that cannot be read are left to orphan cleanup.
pub fn rollback(table: &Table, target: &RollbackTarget) -> Result<RollbackReport> {
    let _span = tracing::info_span!("rollback", path = table.path(), to = ?target).entered();
    crate::maintenance::references::refuse_on_branch(table, "rollback")?;
    refuse_unread_references(table)?;
    let sm = table.snapshot_manager();
    let (snapshot, from_tag) = resolve(table, target)?;
    let t = snapshot.id;
    // Everything is read before anything changes: what must stay, and what the newer snapshots introduced.
    let mut cache = HashMap::new();
    let mut protected = references(table, &snapshot, &mut cache)?;
    let mut doomed = References::default();
    let tags = table.tag_manager().list()?;
    for tag in &tags {
        if tag.snapshot.id <= t {
            protected.extend(references(table, &tag.snapshot, &mut cache)?);
        } else if let Ok(r) = references(table, &tag.snapshot, &mut cache) {
            doomed.extend(r);
        }
    }
    let mut newer = newer_than(table, t, &mut doomed, &mut cache)?;
    let mut report = RollbackReport { snapshot_id: t, ..Default::default() };
    if !sm.snapshot_exists(t)? {
        restore_snapshot(table, &snapshot)?;
        report.restored_from_tag = from_tag;
    }
    // Newest first, so that a crash leaves a prefix; then again for a commit that landed meanwhile.
    for _ in 0..10 {
        for &id in &newer {
            table.io().delete(&sm.snapshot_path(id))?;
            report.snapshots.push(id);
        }
        newer = newer_than(table, t, &mut doomed, &mut cache)?;
        if newer.is_empty() {
            break;
        }
    }
    sm.write_latest_hint(t);
    if report.restored_from_tag.is_some() {
        sm.write_earliest_hint(t);
    }
    remove_newer_tags(table, t, &tags, &mut doomed, &mut report)?;
    doomed.remove_referenced(&protected);
    (report.data_files, report.index_files, report.manifests) = doomed.into_lists();
    delete_files(table, &report.data_files, &report.index_files, &report.manifests)?;
    if let Some(late) = sm.list_ids()?.into_iter().find(|&id| id > t) {
        return Err(Error::Conflict {
            message: format!(
                "snapshot {late} was committed while rolling back to snapshot {t}; stop every writer of the table \
                 and roll back again"
            ),
        });
    }
    Ok(report)
}

/// The ids of the snapshots newer than `t`, newest first, adding what they introduced to `doomed` (an
/// unreadable one adds nothing: its files are left to orphan cleanup), and all that the oldest of them
/// references when it does not follow `t` directly.
fn newer_than(
    table: &Table,
    t: i64,
    doomed: &mut References,
    cache: &mut HashMap<String, Vec<String>>,
) -> Result<Vec<i64>> {
    let sm = table.snapshot_manager();
    let newer: Vec<i64> = sm.list_ids()?.into_iter().filter(|&id| id > t).rev().collect();
    for &id in &newer {
        // After a gap (the snapshots between a tag's and the earliest one expired) a snapshot also holds
        // files the expired ones introduced: take all it references.
        let follows = id - 1 == t || newer.contains(&(id - 1));
        let r = sm.snapshot(id).and_then(|s| {
            let mut r = introduced(table, &s, cache)?;
            if !follows {
                r.extend(references(table, &s, cache)?);
            }
            Ok(r)
        });
        if let Ok(r) = r {
            doomed.extend(r);
        }
    }
    Ok(newer)
}

/// What snapshot `s` introduced or names: the data and changelog files its delta added, its manifest lists
/// and the manifests they name, its index manifest and the index files it lists.
fn introduced(table: &Table, s: &Snapshot, cache: &mut HashMap<String, Vec<String>>) -> Result<References> {
    let store = table.manifest_store()?;
    let mut r = References::default();
    r.add_manifest_lists(&store, s, cache)?;
    for m in store.read_manifest_list(&s.delta_manifest_list)? {
        for e in store.read_manifest(&m.file_name)?.into_iter().filter(|e| e.kind == FileKind::Add) {
            r.add_data_file(table, &e)?;
        }
    }
    r.add_changelog(table, s)?;
    r.add_index(table, s)?;
    Ok(r)
}

/// The target snapshot, and the tag it came from when it is read from a tag.
fn resolve(table: &Table, target: &RollbackTarget) -> Result<(Snapshot, Option<String>)> {
    let sm = table.snapshot_manager();
    let tag: Tag = match target {
        RollbackTarget::Snapshot(id) => match sm.snapshot(*id) {
            Ok(s) => return Ok((s, None)),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                table.tag_manager().list()?.into_iter().find(|tag| tag.snapshot.id == *id).ok_or_else(|| {
                    Error::NotFound { path: format!("snapshot {id} (expired or never committed, and no tag holds it)") }
                })?
            }
            Err(e) => return Err(e),
        },
        RollbackTarget::Tag(name) => table.tag_manager().get_required(name)?,
    };
    match sm.snapshot(tag.snapshot.id) {
        Ok(s) if !same_commit(&s, &tag.snapshot) => Err(Error::Conflict {
            message: format!(
                "tag '{}' pins snapshot {}, but snapshot {} now holds another commit (an interrupted rollback \
                 left the tag behind); roll back to snapshot {} first",
                tag.name, tag.snapshot.id, tag.snapshot.id, tag.snapshot.id
            ),
        }),
        Ok(_) => Ok((tag.snapshot, Some(tag.name))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok((tag.snapshot, Some(tag.name))),
        Err(e) => Err(e),
    }
}

/// Whether two snapshots of one id are the same commit (what a tag copied, or a snapshot written back).
fn same_commit(a: &Snapshot, b: &Snapshot) -> bool {
    a.id == b.id
        && a.base_manifest_list == b.base_manifest_list
        && a.delta_manifest_list == b.delta_manifest_list
        && a.index_manifest == b.index_manifest
}

/// Writes a tag's snapshot back as `snapshot-N` (its snapshot file had expired), create-if-absent; a
/// snapshot file that is already there must be the same commit (a rollback that ran before).
fn restore_snapshot(table: &Table, snapshot: &Snapshot) -> Result<()> {
    let sm = table.snapshot_manager();
    let path = sm.snapshot_path(snapshot.id);
    let created = table.io().create_if_absent(&path, snapshot.to_json()?.as_bytes());
    if let Ok(true) = created {
        return Ok(());
    }
    // Already there, or the create failed in a way that may have landed: what is there decides.
    match sm.snapshot(snapshot.id) {
        Ok(s) if same_commit(&s, snapshot) => Ok(()),
        Ok(_) => Err(Error::Conflict { message: format!("snapshot {} was written by another commit", snapshot.id) }),
        Err(e) => created.and(Err(e)),
    }
}

/// Removes the tags of snapshots newer than `t` (Paimon's `RollbackHelper.cleanTags`); what a tag that was
/// not in `known` (created meanwhile) references is added to `doomed`.
fn remove_newer_tags(
    table: &Table,
    t: i64,
    known: &[Tag],
    doomed: &mut References,
    report: &mut RollbackReport,
) -> Result<()> {
    let tm = table.tag_manager();
    let mut cache = HashMap::new();
    for tag in tm.list()?.into_iter().filter(|tag| tag.snapshot.id > t).rev() {
        if !known.contains(&tag) {
            if let Ok(r) = references(table, &tag.snapshot, &mut cache) {
                doomed.extend(r);
            }
        }
        tm.delete_listed(&tag)?;
        report.tags.push(tag.name);
    }
    Ok(())
}
