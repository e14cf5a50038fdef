//! What a writer hands to the commit: the changes to one (partition, bucket), split as Paimon splits them
//! into the write's data increment (new files, input changelog: the APPEND snapshot) and its compaction
//! increment (files replaced and produced, index changes, compaction changelog: the COMPACT snapshot).

use strata_spec::index_file_meta::HASH_INDEX;
use strata_spec::{BinaryRow, DataFileMeta, IndexFileMeta};

/// The changes one writer made to one (partition, bucket).
#[derive(Debug, Clone, Default)]
pub struct CommitMessage {
    /// Partition.
    pub partition: BinaryRow,
    /// Bucket.
    pub bucket: i32,
    /// Number of buckets of the table.
    pub total_buckets: i32,
    /// New files from writes (ADD).
    pub new_files: Vec<DataFileMeta>,
    /// Files a compaction replaced (DELETE).
    pub compact_before: Vec<DataFileMeta>,
    /// Files a compaction produced (ADD).
    pub compact_after: Vec<DataFileMeta>,
    /// New index files; a DV index file replaces the bucket's previous one.
    pub new_index_files: Vec<IndexFileMeta>,
    /// Index files removed without a replacement.
    pub deleted_index_files: Vec<IndexFileMeta>,
    /// Changelog files of the write (`changelog-producer = input`): listed in the APPEND snapshot's
    /// changelog manifest list, for streaming readers; batch reads never see them.
    pub changelog_files: Vec<DataFileMeta>,
    /// Changelog files of the compaction (`changelog-producer = lookup`): listed in the COMPACT snapshot's
    /// changelog manifest list (Paimon's `CompactIncrement.changelogFiles`).
    pub compact_changelog_files: Vec<DataFileMeta>,
    /// The bucket's deletion-vector index file the writer worked from (`Some(None)`: it had none). When set
    /// and the message compacts or replaces vectors, the commit conflicts if the latest snapshot holds a
    /// different one: another writer changed the bucket's deletion vectors, and committing would drop them
    /// (the failure behind Paimon issue 4588).
    pub expected_dv_index: Option<Option<String>>,
    /// The first sequence number the writer gave a row of this message (`None`: the message holds no new
    /// rows, only compactions). The commit is a conflict when the bucket already holds a row at or above it:
    /// another writer committed rows there since this writer began, and this later commit's rows would sort
    /// below them and be shadowed, so an acknowledged write would silently lose.
    pub first_new_sequence: Option<i64>,
    /// Dynamic-bucket tables: when the message carries a new hash index file, the partition's hash index
    /// files (bucket, name) the writer placed its new keys by. The commit conflicts if the latest snapshot
    /// lists others: another writer assigned keys there meanwhile (`crate::dynamic_bucket::check_unchanged`).
    pub expected_hash_index: Option<crate::dynamic_bucket::HashIndexListing>,
}

impl CommitMessage {
    /// Whether the message changes nothing.
    pub fn is_empty(&self) -> bool {
        self.new_files.is_empty()
            && self.compact_before.is_empty()
            && self.compact_after.is_empty()
            && self.new_index_files.is_empty()
            && self.deleted_index_files.is_empty()
            && self.changelog_files.is_empty()
            && self.compact_changelog_files.is_empty()
    }

    /// The write's half (Paimon's `DataIncrement`): new level-0 files as flushed and the input changelog,
    /// committed as an APPEND snapshot. Files the same commit compacts away are in it too: streaming
    /// readers follow APPEND snapshots' delta files, and would otherwise never see the write.
    pub fn data_increment(&self) -> CommitMessage {
        CommitMessage {
            partition: self.partition.clone(),
            bucket: self.bucket,
            total_buckets: self.total_buckets,
            new_files: self.new_files.clone(),
            changelog_files: self.changelog_files.clone(),
            first_new_sequence: self.first_new_sequence,
            // A dynamic bucket's hash index lists the keys its rows hold: it lands with the rows (Paimon's
            // `DataIncrement` carries it), or a snapshot would show rows no index places.
            new_index_files: self.new_index_files.iter().filter(|f| f.index_type == HASH_INDEX).cloned().collect(),
            deleted_index_files: self
                .deleted_index_files
                .iter()
                .filter(|f| f.index_type == HASH_INDEX)
                .cloned()
                .collect(),
            expected_hash_index: self.expected_hash_index.clone(),
            ..Default::default()
        }
    }

    /// The compaction's half (Paimon's `CompactIncrement`): files replaced and produced, deletion-vector
    /// index changes and compaction changelog, committed as a COMPACT snapshot after the APPEND one.
    pub fn compact_increment(&self) -> CommitMessage {
        CommitMessage {
            partition: self.partition.clone(),
            bucket: self.bucket,
            total_buckets: self.total_buckets,
            compact_before: self.compact_before.clone(),
            compact_after: self.compact_after.clone(),
            new_index_files: self.new_index_files.iter().filter(|f| f.index_type != HASH_INDEX).cloned().collect(),
            deleted_index_files: self
                .deleted_index_files
                .iter()
                .filter(|f| f.index_type != HASH_INDEX)
                .cloned()
                .collect(),
            compact_changelog_files: self.compact_changelog_files.clone(),
            expected_dv_index: self.expected_dv_index.clone(),
            ..Default::default()
        }
    }

    /// Folds `later`, a newer message of the same (partition, bucket) from the same writer, into this one,
    /// so that committing the result equals committing both in order. A new file `later` compacts away stays
    /// new and becomes a compaction input too (the APPEND snapshot adds it, the COMPACT one deletes it); a
    /// compaction output `later` compacts again cancels out (no snapshot would ever name it). A newer index file of a type
    /// replaces this message's one, and the base deletion-vector index stays this message's: that is the
    /// one the snapshot holds.
    ///
    /// Returns what nothing references any more: names of compaction outputs compacted again, and index
    /// files that were replaced. They were never committed; the caller removes them.
    pub fn absorb(&mut self, later: CommitMessage) -> AbsorbedFiles {
        let mut dropped = AbsorbedFiles::default();
        let same = |a: &DataFileMeta, b: &DataFileMeta| a.file_name == b.file_name && a.level == b.level;
        for f in later.compact_before {
            if self.new_files.iter().any(|x| same(x, &f)) {
                // A new file compacted away: the APPEND snapshot adds it, the COMPACT snapshot deletes it.
                self.compact_before.push(f);
            } else if let Some(i) = self.compact_after.iter().position(|x| same(x, &f)) {
                let moved = self.compact_after.remove(i);
                // A compaction output is this writer's own; a committed file moved up a level (an upgrade:
                // its old level is in `compact_before`) is still in the snapshot and stays on disk.
                if !self.compact_before.iter().any(|x| x.file_name == moved.file_name) {
                    dropped.data_files.push(moved.file_name);
                }
            } else {
                self.compact_before.push(f);
            }
        }
        self.new_files.extend(later.new_files);
        self.compact_after.extend(later.compact_after);
        // An upgrade keeps the file under a new level: while anything names it, it stays.
        dropped.data_files.retain(|name| {
            !self.new_files.iter().chain(&self.compact_after).chain(&self.compact_before).any(|x| &x.file_name == name)
        });
        for f in later.new_index_files {
            let replaced: Vec<IndexFileMeta> =
                self.new_index_files.iter().filter(|x| x.index_type == f.index_type).cloned().collect();
            self.new_index_files.retain(|x| x.index_type != f.index_type);
            dropped.index_files.extend(replaced.into_iter().map(|x| x.file_name));
            self.new_index_files.push(f);
        }
        self.deleted_index_files.extend(later.deleted_index_files);
        self.changelog_files.extend(later.changelog_files);
        self.compact_changelog_files.extend(later.compact_changelog_files);
        if self.expected_dv_index.is_none() {
            self.expected_dv_index = later.expected_dv_index;
        }
        if self.expected_hash_index.is_none() {
            self.expected_hash_index = later.expected_hash_index;
        }
        self.first_new_sequence = match (self.first_new_sequence, later.first_new_sequence) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        dropped
    }
}

/// Files that [`CommitMessage::absorb`] left unreferenced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AbsorbedFiles {
    /// Data files (in the message's bucket directory) added and compacted away before any commit.
    pub data_files: Vec<String>,
    /// Index files (in the table's index directory) replaced before any commit.
    pub index_files: Vec<String>,
}
