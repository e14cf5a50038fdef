//! What one bucket's writer hands over at the end of a commit cycle.

use strata_spec::{DataFileMeta, IndexFileMeta};

/// What one bucket contributes to a commit.
#[derive(Debug, Clone, Default)]
pub struct CommitIncrement {
    /// New level-0 files still live.
    pub new_files: Vec<DataFileMeta>,
    /// Committed files compacted away.
    pub compact_before: Vec<DataFileMeta>,
    /// Files compactions produced that are live.
    pub compact_after: Vec<DataFileMeta>,
    /// The bucket's new deletion-vector index file.
    pub new_index_files: Vec<IndexFileMeta>,
    /// Changelog files of this cycle's flushes (`changelog-producer = input`): part of the APPEND snapshot.
    pub changelog_files: Vec<DataFileMeta>,
    /// Changelog files of this cycle's compactions (`changelog-producer = lookup`): part of the COMPACT
    /// snapshot, like Paimon's `CompactIncrement.changelogFiles`.
    pub compact_changelog_files: Vec<DataFileMeta>,
    /// In deletion-vector mode: the bucket's DV index file this cycle started from (`None` inside when the
    /// bucket had none). The commit refuses to go ahead if another commit replaced it meanwhile, since this
    /// writer's compactions and vectors were computed against it.
    pub dv_index_base: Option<Option<String>>,
    /// The first sequence number this cycle gave a written row (`None` when the cycle wrote none). The
    /// commit refuses the increment when the bucket holds a row from another writer at or above it: this
    /// writer's rows would then sort below rows that committed earlier, and be shadowed by them.
    pub first_new_sequence: Option<i64>,
}

impl CommitIncrement {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.new_files.is_empty()
            && self.compact_before.is_empty()
            && self.compact_after.is_empty()
            && self.new_index_files.is_empty()
            && self.changelog_files.is_empty()
            && self.compact_changelog_files.is_empty()
    }
}
