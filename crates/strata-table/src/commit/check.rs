//! The checks a commit makes against the latest snapshot before it writes anything (Paimon's
//! `FileStoreCommitImpl` conflict checks, plus Strata's own: commit order and index bases). Each refuses with
//! a retryable [`Error::Conflict`]; nothing has been written then.

use std::collections::HashSet;
use strata_lsm::DvIndexBase;

use strata_spec::{
    BinaryRow, Error, FileKind, IndexManifestEntry, ManifestEntry, Result, DELETION_VECTORS_INDEX, HASH_INDEX,
};

use crate::meta::manifest_io::LiveFiles;
use strata_spec::{CommitMessage, HashIndexListing};

/// Commit order is the order readers see: a message's new rows must sort above every row its bucket holds.
/// A writer numbers rows from the bucket's largest sequence number when it began; if another writer
/// committed rows to the bucket since, their numbers can be as high or higher, and a reader merging by
/// sequence number would let the earlier commit shadow this later one. Nothing but a rewrite of this
/// writer's files could fix that, so it is a conflict: the caller discards the message's files and writes
/// again on the new snapshot.
pub(crate) fn sequence_order(live: &LiveFiles, messages: &[CommitMessage]) -> Result<()> {
    if messages.iter().all(|m| m.increment.first_new_sequence.is_none()) {
        return Ok(());
    }
    // One pass over the live files, not one per message.
    let mut bucket_max: std::collections::HashMap<(&BinaryRow, i32), i64> = std::collections::HashMap::new();
    for e in live.values() {
        let max = bucket_max.entry((&e.partition, e.bucket)).or_insert(i64::MIN);
        *max = (*max).max(e.file.max_sequence_number);
    }
    for m in messages {
        let Some(first) = m.increment.first_new_sequence else { continue };
        if let Some(&max) = bucket_max.get(&(&m.partition, m.bucket)).filter(|&&max| max >= first) {
            return Err(Error::Conflict {
                message: format!(
                    "bucket {} received rows from another writer (sequence numbers up to {max}) since this writer began numbering its rows at {first}; committing would let those earlier rows shadow these, so nothing was committed: write again on the latest snapshot",
                    m.bucket
                ),
            });
        }
    }
    Ok(())
}

/// Whether the commit must read the latest index manifest to check `m`.
pub(crate) fn checks_index(m: &CommitMessage) -> bool {
    checks_dv_index(m) || deletes_index_files(m) || m.expected_hash_index.is_some()
}

/// A message that compacts or replaces vectors was computed against its bucket's deletion-vector index.
pub(crate) fn checks_dv_index(m: &CommitMessage) -> bool {
    let (data, compact) = (&m.increment.data, &m.increment.compact);
    m.increment.dv_index_base != DvIndexBase::Unchecked
        && (!compact.compact_before.is_empty()
            || !compact.new_index_files.is_empty()
            || data.new_index_files.iter().any(|f| f.index_type == DELETION_VECTORS_INDEX))
}

fn deletes_index_files(m: &CommitMessage) -> bool {
    !m.increment.compact.deleted_index_files.is_empty() || !m.increment.data.deleted_index_files.is_empty()
}

/// Index files: a writer's deletion-vector index must still be the one it worked from, and every index
/// file a message deletes must still be listed (otherwise another commit replaced it, and this one's
/// change was computed against a state that is gone).
pub(crate) fn index_unchanged(entries: &[IndexManifestEntry], messages: &[CommitMessage]) -> Result<()> {
    for m in messages.iter().filter(|m| checks_dv_index(m) || deletes_index_files(m)) {
        let in_bucket = |e: &&IndexManifestEntry| e.partition == m.partition && e.bucket == m.bucket;
        let current: Vec<&str> = entries
            .iter()
            .filter(in_bucket)
            .filter(|e| e.index_file.index_type == DELETION_VECTORS_INDEX)
            .map(|e| e.index_file.file_name.as_str())
            .collect();
        if !m.increment.dv_index_base.matches(&current) {
            return Err(Error::Conflict {
                message: format!(
                    "the deletion vectors of bucket {} changed concurrently (index {}, this writer started from {}); reopen the writer and retry",
                    m.bucket,
                    if current.is_empty() { "none".to_string() } else { current.join(", ") },
                    match &m.increment.dv_index_base {
                        DvIndexBase::File(name) => name.clone(),
                        DvIndexBase::Files(names) => names.join(", "),
                        _ => "none".to_string(),
                    }
                ),
            });
        }
        let deleted = m.increment.data.deleted_index_files.iter().chain(&m.increment.compact.deleted_index_files);
        for f in deleted {
            if !entries.iter().filter(in_bucket).any(|e| e.index_file.file_name == f.file_name) {
                return Err(Error::Conflict {
                    message: format!(
                        "index file {} of bucket {} is no longer in the table (another commit replaced it); reopen the writer and retry",
                        f.file_name, m.bucket
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Refuses a commit whose new hash index files were computed from hash index files of their partition that
/// the latest snapshot (`entries`: its index manifest) no longer lists: another writer assigned keys there
/// since, and committing could put a key in two buckets or drop that writer's hashes.
pub(crate) fn hash_index_unchanged(entries: &[IndexManifestEntry], messages: &[CommitMessage]) -> Result<()> {
    for m in messages {
        let Some(expected) = &m.expected_hash_index else { continue };
        let mut current: HashIndexListing = entries
            .iter()
            .filter(|e| e.partition == m.partition && e.index_file.index_type == HASH_INDEX)
            .map(|e| (e.bucket, e.index_file.file_name.clone()))
            .collect();
        current.sort();
        if &current != expected {
            return Err(Error::Conflict {
                message: format!(
                    "another writer assigned keys to dynamic buckets of this partition since this writer began (hash index files {current:?}, this writer's new keys were placed by {expected:?}); nothing was committed: write again on the latest snapshot"
                ),
            });
        }
    }
    Ok(())
}

/// Refuses a commit whose new deletion-vector index files hold a vector for a data file that is not live once
/// the commit applies (`live` plus the commit's `delta`): readers would skip it and the rows it deletes would
/// read again. The base-index check above catches a stale writer first; this holds whatever the cause.
pub(crate) fn vectors_name_live_files(
    live: &LiveFiles,
    delta: &[ManifestEntry],
    messages: &[CommitMessage],
) -> Result<()> {
    let named: Vec<(&CommitMessage, &str)> = messages
        .iter()
        .flat_map(|m| {
            let new = m.increment.data.new_index_files.iter().chain(&m.increment.compact.new_index_files);
            new.filter(|f| f.index_type == DELETION_VECTORS_INDEX)
                .flat_map(|f| f.dv_ranges.iter().flatten())
                .map(move |r| (m, r.data_file_name.as_str()))
        })
        .collect();
    if named.is_empty() {
        return Ok(());
    }
    let mut files: HashSet<(&BinaryRow, i32, &str)> =
        live.values().map(|e| (&e.partition, e.bucket, e.file.file_name.as_str())).collect();
    for e in delta {
        let key = (&e.partition, e.bucket, e.file.file_name.as_str());
        match e.kind {
            FileKind::Add => files.insert(key),
            FileKind::Delete => files.remove(&key),
        };
    }
    for (m, name) in named {
        if !files.contains(&(&m.partition, m.bucket, name)) {
            return Err(Error::Conflict {
                message: format!(
                    "this commit's deletion vectors of bucket {} name {name}, which is not live once it applies \
                     (another commit removed it); nothing was committed: reopen the writer and retry",
                    m.bucket
                ),
            });
        }
    }
    Ok(())
}
