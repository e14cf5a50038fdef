//! What the retained snapshots say of each data file's deletion vector: the marks listed while the file was
//! live, those listed after its removal, and the commit that removed it.

use std::collections::{HashMap, HashSet};

use strata_dv::{read_all_deletion_vectors, DeletionVector};
use strata_spec::{CommitKind, DataFileMeta, ErrorKind, FileKind, Result, Snapshot, DELETION_VECTORS_INDEX};

use crate::table::Table;

/// A data file of a bucket: (serialized partition, bucket, file name).
pub(super) type FileKey = (Vec<u8>, i32, String);

/// The commit that removed a file: its snapshot, its kind, and the file's manifest entry.
pub(super) struct Removal {
    pub(super) snapshot: i64,
    pub(super) kind: CommitKind,
    pub(super) meta: DataFileMeta,
}

/// One file's vector over the retained snapshots.
#[derive(Default)]
pub(super) struct VectorHistory {
    /// The union of what index files listed while the file was live (for a live file: all of them).
    pub(super) while_live: Option<DeletionVector>,
    /// The union of what index files committed at or after its removal listed (orphans).
    pub(super) after_removal: Option<DeletionVector>,
}

/// The retained history of a table's vectors.
pub(super) struct History {
    /// The commit that removed each file removed within the retained history.
    pub(super) removals: HashMap<FileKey, Removal>,
    /// Each file's vector, for live files and files removed within the retained history by a compaction.
    pub(super) vectors: HashMap<FileKey, VectorHistory>,
}

/// Reads every retained snapshot's delta (for removals) and every deletion-vector index file once (at the
/// snapshot that first lists it: its commit), up to `latest`, whose live files are `live`.
pub(super) fn read(table: &Table, latest: &Snapshot, live: &HashSet<FileKey>) -> Result<History> {
    let sm = table.snapshot_manager();
    let earliest = sm.earliest_id()?.unwrap_or(latest.id);
    let manifests = table.manifest_store()?;
    let mut removals: HashMap<FileKey, Removal> = HashMap::new();
    let mut first_listed: Vec<(i64, strata_spec::IndexManifestEntry)> = Vec::new();
    let mut seen = HashSet::new();
    for id in earliest..=latest.id {
        let Some(s) = sm.try_snapshot(id)? else { continue };
        for meta in manifests.read_manifest_list_sized(&s.delta_manifest_list, s.delta_manifest_list_size)? {
            for e in manifests.read_manifest_of(&meta)? {
                if e.kind == FileKind::Delete {
                    let key = (e.partition.serialize(), e.bucket, e.file.file_name.clone());
                    removals.insert(key, Removal { snapshot: id, kind: s.commit_kind, meta: e.file });
                }
            }
        }
        for e in manifests.index_entries(&s)? {
            if e.index_file.index_type == DELETION_VECTORS_INDEX && seen.insert(e.index_file.file_name.clone()) {
                first_listed.push((id, e));
            }
        }
    }
    let mut vectors: HashMap<FileKey, VectorHistory> = HashMap::new();
    for (listed, e) in first_listed {
        let p = e.partition.serialize();
        // Which side of the file's removal this index file was committed on (`None`: not known, skipped).
        let side = |name: &str| -> Option<bool> {
            let key = (p.clone(), e.bucket, name.to_string());
            if live.contains(&key) {
                return Some(false);
            }
            let r = removals.get(&key)?;
            // An index file first listed by the earliest snapshot may predate it; an overwrite's files are
            // replaced, not compacted, so their rows have no copies to look for.
            (r.snapshot > earliest && r.kind != CommitKind::Overwrite).then_some(listed >= r.snapshot)
        };
        let ranges: Vec<_> =
            e.index_file.dv_ranges.iter().flatten().filter(|m| side(&m.data_file_name).is_some()).cloned().collect();
        if ranges.is_empty() {
            continue;
        }
        let path = table.index_file_path(&e.index_file)?;
        let read = match read_all_deletion_vectors(table.io().as_ref(), &path, &ranges) {
            Ok(v) => v,
            // Removed by an expiration since its snapshot was read: its snapshot is gone with it.
            Err(err) if err.kind() == ErrorKind::NotFound => continue,
            Err(err) => return Err(err),
        };
        for (name, dv) in read {
            let after = side(&name) == Some(true);
            let h = vectors.entry((p.clone(), e.bucket, name)).or_default();
            let slot = if after { &mut h.after_removal } else { &mut h.while_live };
            match slot {
                Some(v) => v.merge(&dv)?,
                None => *slot = Some(dv),
            }
        }
    }
    Ok(History { removals, vectors })
}

/// The marks of `after` that `before` lacks.
pub(super) fn added(after: &DeletionVector, before: Option<&DeletionVector>) -> Vec<u64> {
    after.positions().filter(|&p| !before.is_some_and(|b| b.is_deleted(p))).collect()
}
