//! Writes and compactions spread over many processes or machines and committed once, as Paimon's Flink and
//! Spark topologies run writer operators feeding one committer operator.
//!
//! The unit of work is one (partition, bucket) (a whole partition for rows of a dynamic-bucket table): a
//! worker opens the table, writes rows routed to its units ([`TableWrite::units_of`] says which) or
//! compacts them ([`compact_units`]), and hands back its commit messages, serialized by
//! [`strata_spec::encode_commit_messages`]. One committer decodes every worker's messages and commits them in
//! one commit ([`commit_foreign_messages`]), which the commit protocol arbitrates against any other committer
//! as usual. Before committing, messages made elsewhere are checked for what a commit of one process never
//! produces: two messages for one unit (two writers numbered rows of one bucket from the same base, and one
//! would shadow the other), buckets outside the table's, and files that are not there. A job that gives
//! up hands its messages to [`abort_messages`], which removes the files they added.

use std::collections::HashSet;

use strata_spec::{BinaryRow, CommitMessage, DataFileMeta, Error, Result};

use crate::bucket::mode::{BucketMode, POSTPONE_BUCKET};
use crate::commit::batch::BatchSnapshots;
use crate::table::Table;
use crate::write::TableWrite;

/// A (partition, bucket) holding live files: a unit of compaction work.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketUnit {
    /// The partition.
    pub partition: BinaryRow,
    /// The bucket.
    pub bucket: i32,
    /// Live data files in it.
    pub files: usize,
    /// Their bytes.
    pub bytes: i64,
}

/// The buckets with live files at snapshot `snapshot` (the latest when `None`), in partition and bucket
/// order. A postpone-bucket table's postponed rows are replayed per partition in commit order by one
/// compaction, so its units cannot be spread: that is an unsupported error (compact it in one process).
pub fn bucket_units(table: &Table, snapshot: Option<i64>) -> Result<Vec<BucketUnit>> {
    let Some(s) = table.snapshot(snapshot)? else { return Ok(Vec::new()) };
    let mut units: std::collections::BTreeMap<(Vec<u8>, i32), BucketUnit> = std::collections::BTreeMap::new();
    for e in table.live_files(&s)? {
        if e.bucket == POSTPONE_BUCKET {
            return Err(Error::unsupported(
                "spreading the compaction of a postpone-bucket table with postponed rows (compact it in one process)",
            ));
        }
        let u = units.entry((e.partition.serialize(), e.bucket)).or_insert_with(|| BucketUnit {
            partition: e.partition.clone(),
            bucket: e.bucket,
            files: 0,
            bytes: 0,
        });
        u.files += 1;
        u.bytes += e.file.file_size;
    }
    Ok(units.into_values().collect())
}

/// Compacts the buckets `units` of the table's latest snapshot (all levels into one run with `full`, else
/// what the table's compaction strategy picks) and returns the messages to commit; nothing is committed.
pub fn compact_units(table: &Table, units: &[(BinaryRow, i32)], full: bool) -> Result<Vec<CommitMessage>> {
    let _span = tracing::info_span!("compact_units", units = units.len(), full).entered();
    if let Some((_, b)) = units.iter().find(|(_, b)| *b < 0) {
        return Err(Error::invalid("compaction unit", format!("bucket {b} is not a real bucket")));
    }
    let mut write = TableWrite::for_compaction(table)?;
    write.open_buckets(units)?;
    write.prepare_commit_with(full, None)
}

/// How [`commit_foreign_messages`] identifies its commit.
#[derive(Debug, Clone, Default)]
pub struct ForeignCommit {
    /// The commit user (default: a fresh `distributed-<uuid>`).
    pub commit_user: Option<String>,
    /// The commit identifier (default: Paimon's batch identifier, `i64::MAX`). With a commit user, a
    /// committer that lost the outcome of a call can call again with the same user, identifier and messages:
    /// halves that landed are not committed twice.
    pub identifier: Option<i64>,
}

/// Commits messages made by other processes (each worker's [`TableWrite`] or [`compact_units`]) in one
/// commit: an APPEND snapshot with the rows, then a COMPACT snapshot with the compactions. Refused before
/// anything is written when two messages name one unit, a bucket is not one of the table's, or a file a
/// message adds is missing. When the commit fails without landing, the files the messages added are
/// removed; when only the compaction half conflicts, the rows stay committed and their buckets are
/// compacted again here (best effort), like a one-process `strata write`.
pub fn commit_foreign_messages(
    table: &Table,
    messages: Vec<CommitMessage>,
    how: &ForeignCommit,
) -> Result<Option<BatchSnapshots>> {
    let _span = tracing::info_span!("commit_foreign_messages", messages = messages.len()).entered();
    check_foreign_messages(table, &messages)?;
    let user = how.commit_user.clone().unwrap_or_else(|| format!("distributed-{}", uuid::Uuid::new_v4()));
    let resume = how.commit_user.is_some() && how.identifier.is_some();
    let c =
        crate::Committable { identifier: how.identifier.unwrap_or(i64::MAX), messages, kind: None, properties: None };
    let mut write = TableWrite::for_compaction(table)?;
    crate::commit::batch::commit_as("distributed", &user, table, &mut write, c, resume)
}

/// Throws away messages that will not be committed: removes the data, changelog and index files they added
/// that no snapshot references (best effort: what cannot be removed is an orphan `strata clean` finds).
pub fn abort_messages(table: &Table, messages: &[CommitMessage]) -> Result<()> {
    let mut write = TableWrite::for_compaction(table)?;
    write.discard(messages);
    Ok(())
}

/// The checks of [`commit_foreign_messages`].
fn check_foreign_messages(table: &Table, messages: &[CommitMessage]) -> Result<()> {
    let mode = BucketMode::of(table.schema())?;
    let mut units = HashSet::new();
    for m in messages.iter().filter(|m| !m.is_empty()) {
        let fits = match mode {
            BucketMode::Fixed(n) => (0..n).contains(&m.bucket),
            BucketMode::Dynamic => m.bucket >= 0,
            _ => false,
        };
        if !fits {
            return Err(Error::invalid(
                "commit message",
                format!("bucket {} is not a bucket of this table ({mode:?})", m.bucket),
            ));
        }
        if !units.insert((m.partition.serialize(), m.bucket)) {
            return Err(Error::invalid(
                "commit messages",
                format!(
                    "two messages for bucket {} of one partition: each bucket must be written or compacted by one writer per commit (route rows by TableWrite::units_of)",
                    m.bucket
                ),
            ));
        }
        check_files_exist(table, m)?;
    }
    Ok(())
}

/// Every data, changelog and index file `m` adds is there. A file moved up a level is named both as
/// compacted away and as produced (an upgrade) and was checked when it was committed.
fn check_files_exist(table: &Table, m: &CommitMessage) -> Result<()> {
    let (data, compact) = (&m.increment.data, &m.increment.compact);
    let upgraded = |f: &&DataFileMeta| compact.compact_before.iter().any(|b| b.file_name == f.file_name);
    let files = data
        .new_files
        .iter()
        .chain(&data.changelog_files)
        .chain(&compact.changelog_files)
        .chain(compact.compact_after.iter().filter(|f| !upgraded(f)));
    let mut paths: Vec<String> = Vec::new();
    for f in files {
        // Resolved as a scan resolves it: an external path only under the table's roots.
        paths.push(table.data_file_path(&strata_spec::ManifestEntry {
            kind: strata_spec::FileKind::Add,
            partition: m.partition.clone(),
            bucket: m.bucket,
            total_buckets: m.total_buckets,
            file: f.clone(),
        })?);
    }
    for f in data.new_index_files.iter().chain(&compact.new_index_files) {
        paths.push(table.index_file_path(f)?);
    }
    for path in paths {
        if !table.io().file_exists(&path)? {
            return Err(Error::invalid(
                "commit message",
                format!("it adds {path}, which does not exist (a message of another table, or of a writer whose files were removed)"),
            ));
        }
    }
    Ok(())
}
