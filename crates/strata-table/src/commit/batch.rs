//! The one-off batch commit (Paimon's `BatchTableCommit`): a fresh commit user and the batch identifier,
//! shared by `strata write`, `strata compact` and SQL statements.

use strata_spec::{ErrorKind, Result};

use crate::table::Table;
use crate::write::TableWrite;
use strata_spec::CommitMessage;

/// The snapshots a one-off batch commit made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSnapshots {
    /// The APPEND snapshot with the written rows (`None`: the commit wrote no rows, only compacted).
    pub append: Option<i64>,
    /// The last snapshot the commit made.
    pub last: i64,
}

/// Commits `messages` of `write` as a one-off batch job (a fresh commit user `<job>-<uuid>`, Paimon's batch
/// identifier),
/// as `strata write`, `strata compact` and SQL statements do: the snapshots it made, `None` when there was
/// nothing to commit. When the compaction half conflicts after the rows landed, the buckets are compacted
/// again from the latest snapshot (best effort: the rows are committed either way). When the commit fails
/// and did not land, the files the messages added are removed (best effort), so a failed write or
/// compaction (a conflict, a full disk) leaves no orphans behind.
pub fn commit_batch(
    job: &str,
    table: &Table,
    write: &mut TableWrite,
    messages: Vec<CommitMessage>,
    kind: Option<strata_spec::CommitKind>,
) -> Result<Option<BatchSnapshots>> {
    let c = crate::Committable { identifier: i64::MAX, messages, kind, properties: None };
    commit_as(job, &format!("{job}-{}", uuid::Uuid::new_v4()), table, write, c, false)
}

/// What [`compact_table`] did: the files its compaction replaced and wrote, and the snapshots it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableCompaction {
    /// Data files the compaction removed.
    pub files_removed: usize,
    /// Data files it added.
    pub files_added: usize,
    /// Its snapshots (`None`: nothing to compact).
    pub snapshots: Option<BatchSnapshots>,
}

/// Compacts every bucket of `table` and commits once as a one-off batch job, as `strata compact` and the
/// Python package's `compact` do: `full` merges all levels of each bucket into one run,
/// `delete_ratio_threshold` also rewrites files whose deleted share (vector / rows) reaches it. In a
/// postpone-bucket table the postponed rows move into real buckets too. `prepared` runs between the
/// compaction and its commit (a progress line ends there).
pub fn compact_table(
    job: &str,
    table: &Table,
    full: bool,
    delete_ratio_threshold: Option<f64>,
    prepared: impl FnOnce(),
) -> Result<TableCompaction> {
    let mut write = TableWrite::for_compaction(table)?;
    write.open_all_buckets()?;
    let messages = write.prepare_commit_with(full, delete_ratio_threshold)?;
    prepared();
    let files_removed = messages.iter().map(|m| m.increment.compact.compact_before.len()).sum();
    let files_added = messages.iter().map(|m| m.increment.compact.compact_after.len()).sum();
    // A compaction is one COMPACT snapshot, postponed rows moved into real buckets included (they were in
    // an APPEND snapshot already, when the postponed files were written).
    let snapshots = commit_batch(job, table, &mut write, messages, None)?;
    Ok(TableCompaction { files_removed, files_added, snapshots })
}

/// [`commit_batch`] of `c` as `user`. With `resume`, the halves of `c` that already landed (found by the
/// user and `c.identifier`: an earlier call whose outcome was lost) are not committed again.
pub(crate) fn commit_as(
    job: &str,
    user: &str,
    table: &Table,
    write: &mut TableWrite,
    c: crate::Committable,
    resume: bool,
) -> Result<Option<BatchSnapshots>> {
    let committer = table.new_commit(user)?;
    let outcome = if resume { committer.recommit(&c) } else { committer.commit(&c) };
    match outcome {
        Ok(crate::CommitOutcome::CompactionDropped(id)) => {
            // The write landed; its compaction conflicted and is garbage. Compact its buckets again from the
            // latest snapshot, so deletion-vector readers (which skip level 0) see the rows now; best effort,
            // since the rows are committed either way and the next compaction takes them up.
            write.discard(&crate::compaction_increments(&c));
            let buckets: Vec<_> = c.messages.iter().map(|m| (m.partition.clone(), m.bucket)).collect();
            // A compaction-only commit: it has no APPEND half, so it cannot end here again.
            let again = write.open_buckets(&buckets).and_then(|()| write.prepare_commit_waiting());
            let again = again.and_then(|messages| commit_batch(job, table, write, messages, None));
            let last = match again {
                Ok(compacted) => compacted.map_or(id, |s| s.last),
                Err(e) => {
                    tracing::warn!(error = %e, "compacting again after a dropped compaction failed; the next compaction takes the rows up");
                    id
                }
            };
            Ok(Some(BatchSnapshots { append: Some(id), last }))
        }
        Ok(outcome) => {
            let Some(last) = outcome.snapshot_id() else { return Ok(None) };
            // Which of the two snapshots holds the rows, by this one-off user's identifier.
            let append = committer.landed(c.identifier)?.append;
            Ok(Some(BatchSnapshots { append, last }))
        }
        Err(e) => {
            // Remove what no snapshot holds: both halves after a conflict (a conflict never lands), else
            // what the snapshots show did not land. When that cannot be told, nothing (orphans at worst).
            let left = if e.kind() == ErrorKind::Conflict {
                Some(c.messages.clone())
            } else {
                committer.landed(c.identifier).ok().map(|l| crate::uncommitted_messages(&c, l))
            };
            if let Some(left) = left {
                write.discard(&left);
            }
            Err(e)
        }
    }
}
