//! `TableWriter`: the key-value writer for programs embedding Strata (single rows and Arrow batches; each
//! `commit` an APPEND snapshot and, when it compacted, a COMPACT one), on top of [`TableWrite`].

use arrow_array::RecordBatch;
use strata_format::RowKind;
use strata_spec::{BinaryRow, Error, Result};

use crate::table::Table;
use crate::write::{placeholder, TableWrite};
use strata_spec::CommitMessage;

/// A key-value writer for programs embedding Strata: single rows (`put`, `delete`) and Arrow batches, then
/// `commit` (an APPEND and maybe a COMPACT snapshot per commit, identifiers increasing per writer so a
/// restarted writer can tell what landed).
pub struct TableWriter {
    write: TableWrite,
    commit_user: String,
    next_identifier: i64,
    rows: Vec<Vec<Option<strata_spec::Datum>>>,
    kinds: Vec<i8>,
    /// A commit that failed: its files are written and the bucket writers count them as committed, so it
    /// is committed again (under its identifier, so never twice) before anything else.
    pending: Option<crate::commit::Committable>,
}

impl TableWriter {
    /// A writer committing as `commit_user`; its identifiers continue after the user's last commit.
    pub fn new(table: &Table, commit_user: &str) -> Result<Self> {
        let committer = table.new_commit(commit_user)?;
        let next_identifier = committer.latest_identifier_of_user()?.map_or(1, |l| l.saturating_add(1));
        Ok(TableWriter {
            write: TableWrite::new(table)?,
            commit_user: commit_user.to_string(),
            next_identifier,
            rows: Vec::new(),
            pending: None,
            kinds: Vec::new(),
        })
    }

    /// The identifier the next commit gets (with the commit user, what identifies its snapshots).
    pub fn next_identifier(&self) -> i64 {
        self.next_identifier
    }

    fn push(&mut self, row: Vec<Option<strata_spec::Datum>>, kind: RowKind) -> Result<()> {
        let n = self.write.table().schema().fields.len();
        if row.len() != n {
            return Err(Error::invalid("row", format!("{} values for {n} columns", row.len())));
        }
        self.rows.push(row);
        self.kinds.push(kind.to_byte());
        if self.rows.len() >= 4096 {
            self.flush_rows()?;
        }
        Ok(())
    }

    /// Inserts or replaces a row (a value for every column, in schema order).
    pub fn put(&mut self, row: Vec<Option<strata_spec::Datum>>) -> Result<()> {
        self.push(row, RowKind::Insert)
    }

    /// Deletes the row whose primary key is `key` (values of the primary-key columns, in key order).
    pub fn delete(&mut self, key: Vec<Option<strata_spec::Datum>>) -> Result<()> {
        let schema = self.write.table().schema();
        if key.len() != schema.primary_keys.len() {
            return Err(Error::invalid(
                "key",
                format!("{} values for primary key {:?}", key.len(), schema.primary_keys),
            ));
        }
        let mut row = vec![None; schema.fields.len()];
        for (k, v) in schema.primary_keys.iter().zip(key) {
            let i = schema.fields.iter().position(|f| &f.name == k).ok_or_else(|| Error::invalid("key", k.clone()))?;
            row[i] = v;
        }
        // Non-null columns other than the key get a placeholder: a delete carries only its key.
        for (i, f) in schema.fields.iter().enumerate() {
            if row[i].is_none() && !f.data_type.nullable {
                row[i] = Some(placeholder(&f.data_type));
            }
        }
        self.push(row, RowKind::Delete)
    }

    fn flush_rows(&mut self) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let schema = self.write.table().schema().clone();
        let mut cols = Vec::with_capacity(schema.fields.len());
        for (i, f) in schema.fields.iter().enumerate() {
            let values: Vec<Option<strata_spec::Datum>> = self.rows.iter().map(|r| r[i].clone()).collect();
            cols.push(strata_format::array_of(&f.data_type, &values)?);
        }
        let batch = RecordBatch::try_new(self.write.value_schema().clone(), cols)
            .map_err(|e| Error::invalid_from("rows", e))?;
        let kinds = std::mem::take(&mut self.kinds);
        self.rows.clear();
        self.write.write_with_kinds(&batch, &kinds)
    }

    /// Writes a batch of rows (row kinds from `rowkind.field`, else inserts).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.flush_rows()?;
        self.write.write_batch(batch)
    }

    /// Writes a batch with explicit row kinds.
    pub fn write_with_kinds(&mut self, batch: &RecordBatch, kinds: &[i8]) -> Result<()> {
        self.flush_rows()?;
        self.write.write_with_kinds(batch, kinds)
    }

    /// Flushes, compacts and commits everything written since the last commit; the new snapshot's id
    /// (`None` when there was nothing to commit). When a commit fails (an I/O error, say), calling `commit`
    /// again first retries it: the failed commit's rows are not lost, and never land twice.
    ///
    /// A [`Conflict`](strata_spec::ErrorKind::Conflict) is different: another commit changed a bucket this
    /// one touches in a way no retry of the same files can fix (it added rows that would otherwise shadow
    /// these, or compacted files this commit replaces). Nothing was committed, the commit's files are
    /// removed and the writer starts again from the latest snapshot: write everything written since the
    /// last successful commit again (rows still buffered are dropped too) and commit.
    pub fn commit(&mut self) -> Result<Option<i64>> {
        let retried = self.commit_pending()?;
        self.flush_rows()?;
        let messages = self.write.prepare_commit()?;
        let c = crate::commit::Committable { identifier: self.next_identifier, messages, kind: None, properties: None };
        Ok(self.commit_or_keep(c)?.or(retried))
    }

    /// Commits `c`; on failure keeps it for the next call to retry.
    fn commit_or_keep(&mut self, c: crate::commit::Committable) -> Result<Option<i64>> {
        match self.write.table().new_commit(&self.commit_user).and_then(|committer| committer.commit(&c)) {
            Ok(outcome) => {
                if outcome.snapshot_id().is_some() {
                    self.next_identifier += 1;
                }
                if let crate::commit::CommitOutcome::CompactionDropped(id) = outcome {
                    return Ok(self.compact_again(&c).or(Some(id)));
                }
                if let crate::commit::CommitOutcome::Committed(last) = outcome {
                    self.write.note_committed(last, c.snapshot_count());
                }
                Ok(outcome.snapshot_id())
            }
            // A conflict never lands (the commit checks before it creates the snapshot, and looks for its own
            // identifier before giving up): its files are garbage, and the bucket writers' state is stale.
            Err(e) => Err(self.failed(c, e)),
        }
    }

    /// A commit of `c` failed with `e`, which it returns: a conflict abandons `c` (it never lands), any other
    /// failure keeps it for the next call to retry.
    fn failed(&mut self, c: crate::commit::Committable, e: strata_spec::Error) -> strata_spec::Error {
        if e.kind() == strata_spec::ErrorKind::Conflict {
            self.abandon(&c);
        } else {
            self.pending = Some(c);
        }
        e
    }

    /// Drops a commit that conflicted (it never lands): its files are garbage and the bucket writers' state is
    /// stale. Everything since the last successful commit goes, rows still buffered included, so that writing
    /// it all again neither loses nor doubles a row.
    fn abandon(&mut self, c: &crate::commit::Committable) {
        self.write.discard(&c.messages);
        self.rows.clear();
        self.kinds.clear();
    }

    /// After the compaction of `c` was dropped (its APPEND snapshot landed, its COMPACT half conflicted with
    /// another commit): its files are garbage and the bucket writers, which counted it as done, are stale.
    /// Discards them and compacts `c`'s buckets again from the latest snapshot, so the rows the APPEND
    /// snapshot left in level 0 reach deletion-vector readers (which skip level 0) now, not at some later
    /// commit. Best effort: the rows are committed either way, and a failed compaction is the next one's to
    /// do. Returns the new snapshot, if one was made.
    fn compact_again(&mut self, c: &crate::commit::Committable) -> Option<i64> {
        self.write.discard(&compaction_increments(c));
        let buckets: Vec<(BinaryRow, i32)> = c.messages.iter().map(|m| (m.partition.clone(), m.bucket)).collect();
        let compacted =
            self.write.open_buckets(&buckets).and_then(|()| self.write.prepare_commit_waiting()).and_then(|messages| {
                let again = crate::commit::Committable {
                    identifier: self.next_identifier,
                    messages,
                    kind: None,
                    properties: None,
                };
                self.commit_or_keep(again)
            });
        match compacted {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(error = %e, "compacting again after a dropped compaction failed; the next compaction takes the rows up");
                None
            }
        }
    }

    /// Retries a commit that failed earlier, unless it landed after all (its identifier is committed).
    fn commit_pending(&mut self) -> Result<Option<i64>> {
        let Some(c) = self.pending.take() else { return Ok(None) };
        let committer = match self.write.table().new_commit(&self.commit_user) {
            Ok(committer) => committer,
            Err(e) => {
                self.pending = Some(c);
                return Err(e);
            }
        };
        // Commits only the halves (APPEND, COMPACT) that did not land, so nothing lands twice.
        match committer.recommit(&c) {
            Ok(outcome) => {
                self.next_identifier = self.next_identifier.max(c.identifier + 1);
                match outcome {
                    // It landed although the call reported an error: nothing to do (its snapshot is not this
                    // call's).
                    crate::commit::CommitOutcome::AlreadyCommitted(_) => Ok(None),
                    crate::commit::CommitOutcome::CompactionDropped(id) => Ok(self.compact_again(&c).or(Some(id))),
                    outcome => Ok(outcome.snapshot_id()),
                }
            }
            // On a conflict neither half landed (a landed APPEND half makes a conflicting compaction
            // `CompactionDropped`).
            Err(e) => Err(self.failed(c, e)),
        }
    }

    /// A full compaction of every bucket, committed.
    pub fn compact(&mut self, full: bool) -> Result<Option<i64>> {
        self.commit_pending()?;
        self.flush_rows()?;
        self.write.open_all_buckets()?;
        let messages = self.write.prepare_commit_with(full, None)?;
        // Rows still buffered get their APPEND snapshot; the compaction its COMPACT one.
        let c = crate::commit::Committable { identifier: self.next_identifier, messages, kind: None, properties: None };
        self.commit_or_keep(c)
    }
}

impl Drop for TableWriter {
    /// A commit that failed and was never retried: if it did not land, remove its files (best effort), so
    /// that a writer giving up after a failure (a full disk, say) does not leave the disk full of orphans.
    fn drop(&mut self) {
        let Some(c) = self.pending.take() else { return };
        let landed =
            self.write.table().new_commit(&self.commit_user).and_then(|committer| committer.landed(c.identifier));
        // When it cannot be told what landed, nothing is removed (orphans at worst).
        if let Ok(landed) = landed {
            self.write.discard(&uncommitted_messages(&c, landed));
        }
    }
}

/// The compaction halves of `c`'s messages (what a dropped compaction leaves as garbage).
pub fn compaction_increments(c: &crate::commit::Committable) -> Vec<CommitMessage> {
    c.messages.iter().map(CommitMessage::compact_increment).collect()
}

/// The parts of `c` no snapshot holds, given which halves `landed`: what a commit given up on leaves to
/// remove.
pub fn uncommitted_messages(c: &crate::commit::Committable, landed: crate::commit::Landed) -> Vec<CommitMessage> {
    match c.kind {
        Some(kind) if landed.of(kind).is_some() => Vec::new(),
        Some(_) => c.messages.clone(),
        None => {
            let mut out = Vec::new();
            if landed.append.is_none() {
                out.extend(c.messages.iter().map(CommitMessage::data_increment));
            }
            if landed.compact.is_none() {
                out.extend(compaction_increments(c));
            }
            out
        }
    }
}

impl std::fmt::Debug for TableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("write", &self.write)
            .field("commit_user", &self.commit_user)
            .field("next_identifier", &self.next_identifier)
            .field("pending_rows", &self.rows.len())
            .finish()
    }
}
