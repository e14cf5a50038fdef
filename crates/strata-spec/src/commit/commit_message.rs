//! What a writer hands to the commit: the changes to one (partition, bucket). The body is the bucket
//! writer's [`CommitIncrement`] as it was handed over (no field is copied out and back), split as Paimon
//! splits it into the write's data increment (new files, input changelog, a dynamic bucket's hash index:
//! the APPEND snapshot) and its compaction increment (files replaced and produced, the deletion-vector index
//! change, compaction changelog: the COMPACT snapshot).

use crate::binary_row::BinaryRow;
use crate::commit::commit_increment::{CommitIncrement, DvIndexBase};
use crate::index::index_file_meta::IndexFileMeta;
use crate::manifest::data_file_meta::DataFileMeta;

/// A partition's hash index files: (bucket, file name), by bucket.
pub type HashIndexListing = Vec<(i32, String)>;

/// The changes one writer made to one (partition, bucket).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommitMessage {
    /// Partition.
    pub partition: BinaryRow,
    /// Bucket.
    pub bucket: i32,
    /// Number of buckets of the table.
    pub total_buckets: i32,
    /// What the bucket's writer handed over, with what the commit checks it against: the deletion-vector
    /// index file it started from (when set and the message compacts or replaces vectors, the commit
    /// conflicts if the latest snapshot holds a different one) and the first sequence number it gave a row
    /// (the commit conflicts when the bucket already holds a row at or above it: an earlier commit's rows
    /// would shadow this later one's).
    pub increment: CommitIncrement,
    /// Dynamic-bucket tables: when the message carries a new hash index file, the partition's hash index
    /// files (bucket, name) the writer placed its new keys by. The commit conflicts if the latest snapshot
    /// lists others: another writer assigned keys there meanwhile (the table's commit checks).
    pub expected_hash_index: Option<HashIndexListing>,
}

impl CommitMessage {
    /// A message of what the writer of (`partition`, `bucket`) handed over.
    pub fn new(partition: BinaryRow, bucket: i32, total_buckets: i32, increment: CommitIncrement) -> Self {
        CommitMessage { partition, bucket, total_buckets, increment, expected_hash_index: None }
    }

    /// Whether the message changes nothing.
    pub fn is_empty(&self) -> bool {
        self.increment.is_empty()
    }

    /// The write's half (Paimon's `DataIncrement`), committed as an APPEND snapshot.
    pub fn data_increment(&self) -> CommitMessage {
        CommitMessage {
            partition: self.partition.clone(),
            bucket: self.bucket,
            total_buckets: self.total_buckets,
            increment: CommitIncrement {
                data: self.increment.data.clone(),
                first_new_sequence: self.increment.first_new_sequence,
                // Vectors a row-level delete wrote commit with the rows, checked against the index they
                // were computed from.
                dv_index_base: if self.increment.data.changes_committed_rows() {
                    self.increment.dv_index_base.clone()
                } else {
                    DvIndexBase::Unchecked
                },
                ..Default::default()
            },
            expected_hash_index: self.expected_hash_index.clone(),
        }
    }

    /// The compaction's half (Paimon's `CompactIncrement`), committed as a COMPACT snapshot after the
    /// APPEND one.
    pub fn compact_increment(&self) -> CommitMessage {
        CommitMessage {
            partition: self.partition.clone(),
            bucket: self.bucket,
            total_buckets: self.total_buckets,
            increment: CommitIncrement {
                compact: self.increment.compact.clone(),
                dv_index_base: self.increment.dv_index_base.clone(),
                ..Default::default()
            },
            expected_hash_index: None,
        }
    }

    /// Folds `later`, a newer message of the same (partition, bucket) from the same writer, into this one,
    /// so that committing the result equals committing both in order. A new file `later` compacts away stays
    /// new and becomes a compaction input too (the APPEND snapshot adds it, the COMPACT one deletes it); a
    /// compaction output `later` compacts again cancels out (no snapshot would ever name it). A newer index
    /// file of a type replaces this message's one, and the base deletion-vector index stays this message's:
    /// that is the one the snapshot holds.
    ///
    /// Returns what nothing references any more: names of compaction outputs compacted again, and index
    /// files that were replaced. They were never committed; the caller removes them.
    pub fn absorb(&mut self, later: CommitMessage) -> AbsorbedFiles {
        let mut dropped = AbsorbedFiles::default();
        let CommitIncrement { data, compact, dv_index_base, first_new_sequence } = later.increment;
        let (mine_data, mine_compact) = (&mut self.increment.data, &mut self.increment.compact);
        let same = |a: &DataFileMeta, b: &DataFileMeta| a.file_name == b.file_name && a.level == b.level;
        for f in compact.compact_before {
            if mine_data.new_files.iter().any(|x| same(x, &f)) {
                // A new file compacted away: the APPEND snapshot adds it, the COMPACT snapshot deletes it.
                mine_compact.compact_before.push(f);
            } else if let Some(i) = mine_compact.compact_after.iter().position(|x| same(x, &f)) {
                let moved = mine_compact.compact_after.remove(i);
                // A compaction output is this writer's own; a committed file moved up a level (an upgrade:
                // its old level is in `compact_before`) is still in the snapshot and stays on disk.
                if !mine_compact.compact_before.iter().any(|x| x.file_name == moved.file_name) {
                    dropped.data_files.push(moved.file_name);
                }
            } else {
                mine_compact.compact_before.push(f);
            }
        }
        for f in data.deleted_files {
            match mine_data.new_files.iter().position(|x| same(x, &f)) {
                // A new file a later row-level change replaced: never committed, so it neither lands nor stays.
                Some(i) => dropped.data_files.push(mine_data.new_files.remove(i).file_name),
                None => mine_data.deleted_files.push(f),
            }
        }
        mine_data.new_files.extend(data.new_files);
        mine_compact.compact_after.extend(compact.compact_after);
        // An upgrade keeps the file under a new level: while anything names it, it stays.
        dropped.data_files.retain(|name| {
            !mine_data
                .new_files
                .iter()
                .chain(&mine_compact.compact_after)
                .chain(&mine_compact.compact_before)
                .any(|x| &x.file_name == name)
        });
        absorb_index_files(
            (&mut mine_data.new_index_files, &mut mine_data.deleted_index_files),
            (data.new_index_files, data.deleted_index_files),
            &mut dropped,
        );
        absorb_index_files(
            (&mut mine_compact.new_index_files, &mut mine_compact.deleted_index_files),
            (compact.new_index_files, compact.deleted_index_files),
            &mut dropped,
        );
        mine_data.changelog_files.extend(data.changelog_files);
        mine_compact.changelog_files.extend(compact.changelog_files);
        if self.increment.dv_index_base == Default::default() {
            self.increment.dv_index_base = dv_index_base;
        }
        if self.expected_hash_index.is_none() {
            self.expected_hash_index = later.expected_hash_index;
        }
        self.increment.first_new_sequence = match (self.increment.first_new_sequence, first_new_sequence) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        dropped
    }
}

/// One half's index files: a newer file of a type replaces this message's file of the type (never
/// committed, so it is dropped), and a deletion of such a file is no deletion at all; the committed file
/// this message deletes stays deleted.
fn absorb_index_files(
    (new, deleted): (&mut Vec<IndexFileMeta>, &mut Vec<IndexFileMeta>),
    (later_new, later_deleted): (Vec<IndexFileMeta>, Vec<IndexFileMeta>),
    dropped: &mut AbsorbedFiles,
) {
    let mut replaced: Vec<String> = Vec::new();
    for f in later_new {
        replaced.extend(new.iter().filter(|x| x.index_type == f.index_type).map(|x| x.file_name.clone()));
        new.retain(|x| x.index_type != f.index_type);
        new.push(f);
    }
    deleted.extend(later_deleted.into_iter().filter(|f| !replaced.contains(&f.file_name)));
    dropped.index_files.extend(replaced);
}

/// Files that [`CommitMessage::absorb`] left unreferenced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AbsorbedFiles {
    /// Data files (in the message's bucket directory) added and compacted away before any commit.
    pub data_files: Vec<String>,
    /// Index files (in the table's index directory) replaced before any commit.
    pub index_files: Vec<String>,
}
