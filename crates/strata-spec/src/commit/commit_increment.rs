//! What one bucket's writer hands over at the end of a commit cycle: the one commit-message body that goes,
//! unchanged, from the writer through the table's commit message into the commit (Paimon's
//! `CommitMessageImpl` with its `DataIncrement` and `CompactIncrement`).

use crate::index::index_file_meta::IndexFileMeta;
use crate::manifest::data_file_meta::DataFileMeta;

/// The write's half (Paimon's `DataIncrement`): what the APPEND snapshot commits, or an OVERWRITE one when
/// it changes rows already committed (see [`DataIncrement::changes_committed_rows`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataIncrement {
    /// New level-0 files as flushed (ADD). Files the same cycle compacted away are here too, and in
    /// [`CompactIncrement::compact_before`]: streaming readers follow APPEND snapshots' delta files.
    pub new_files: Vec<DataFileMeta>,
    /// Changelog files of the flushes (`changelog-producer = input`).
    pub changelog_files: Vec<DataFileMeta>,
    /// Index files that land with the rows (a dynamic bucket's hash index).
    pub new_index_files: Vec<IndexFileMeta>,
    /// Index files the new ones supersede.
    pub deleted_index_files: Vec<IndexFileMeta>,
    /// Committed files a row-level change replaced (DELETE): a DELETE or UPDATE of an append table without
    /// deletion vectors rewrites the files holding its rows, and their rewrites are among `new_files`.
    pub deleted_files: Vec<DataFileMeta>,
}

impl DataIncrement {
    /// Whether the write changed nothing.
    pub fn is_empty(&self) -> bool {
        self.new_files.is_empty()
            && self.changelog_files.is_empty()
            && self.new_index_files.is_empty()
            && self.deleted_index_files.is_empty()
            && self.deleted_files.is_empty()
    }

    /// Whether it changes rows already committed: it deletes files or writes deletion vectors (a row-level
    /// DELETE or UPDATE). Such a write commits as an OVERWRITE snapshot, which streaming readers do not
    /// take for new rows (Paimon's `ConflictDetection.shouldBeOverwriteCommit`).
    pub fn changes_committed_rows(&self) -> bool {
        let is_dv = |f: &IndexFileMeta| f.index_type == crate::index::index_file_meta::DELETION_VECTORS_INDEX;
        !self.deleted_files.is_empty()
            || self.new_index_files.iter().any(is_dv)
            || self.deleted_index_files.iter().any(is_dv)
    }
}

/// The compaction's half (Paimon's `CompactIncrement`): what the COMPACT snapshot commits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactIncrement {
    /// Files compacted away (DELETE).
    pub compact_before: Vec<DataFileMeta>,
    /// Files compactions produced that are live (ADD).
    pub compact_after: Vec<DataFileMeta>,
    /// Changelog files of the compactions (`changelog-producer = lookup`).
    pub changelog_files: Vec<DataFileMeta>,
    /// The bucket's new deletion-vector index file.
    pub new_index_files: Vec<IndexFileMeta>,
    /// The index file it replaces, as the deletion-vector maintainer wrote it down: the commit removes
    /// exactly this file from the index manifest.
    pub deleted_index_files: Vec<IndexFileMeta>,
}

impl CompactIncrement {
    /// Whether no compaction changed anything.
    pub fn is_empty(&self) -> bool {
        self.compact_before.is_empty()
            && self.compact_after.is_empty()
            && self.changelog_files.is_empty()
            && self.new_index_files.is_empty()
            && self.deleted_index_files.is_empty()
    }
}

/// The deletion-vector index file(s) a writer's cycle started from. Its compactions and vectors were computed
/// against them, so the commit refuses to go ahead when another commit replaced one meanwhile (the failure
/// behind Paimon issue 4588: committing would drop that commit's vectors).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DvIndexBase {
    /// Not a deletion-vector writer, or nothing to check.
    #[default]
    Unchecked,
    /// The bucket had no deletion-vector index file.
    NoFile,
    /// The bucket's index file of this name.
    File(String),
    /// The bucket's index files of these names, sorted (an unaware-bucket append table's partition holds one
    /// per delete that wrote vectors, Paimon's `AppendDeleteFileMaintainer`); at least two.
    Files(Vec<String>),
}

impl DvIndexBase {
    /// The base from the bucket's current index file name.
    pub fn of(current: Option<&str>) -> Self {
        match current {
            Some(name) => DvIndexBase::File(name.to_string()),
            None => DvIndexBase::NoFile,
        }
    }

    /// The base from the names of all of the bucket's current index files.
    pub fn of_files<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut names: Vec<String> = names.into_iter().map(str::to_string).collect();
        names.sort();
        names.dedup();
        match names.len() {
            0 => DvIndexBase::NoFile,
            1 => DvIndexBase::File(names.remove(0)),
            _ => DvIndexBase::Files(names),
        }
    }

    /// Whether the bucket's index files (`current`: the names of all of them, any order) are this base
    /// (always true when unchecked).
    pub fn matches(&self, current: &[&str]) -> bool {
        match self {
            DvIndexBase::Unchecked => true,
            DvIndexBase::NoFile => current.is_empty(),
            DvIndexBase::File(name) => current == [name.as_str()],
            DvIndexBase::Files(names) => {
                let mut now: Vec<&str> = current.to_vec();
                now.sort_unstable();
                now.dedup();
                now.len() == names.len() && now.iter().zip(names).all(|(a, b)| *a == b.as_str())
            }
        }
    }
}

/// What one bucket contributes to a commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommitIncrement {
    /// The write's half: the APPEND snapshot.
    pub data: DataIncrement,
    /// The compaction's half: the COMPACT snapshot.
    pub compact: CompactIncrement,
    /// In deletion-vector mode: the bucket's index file this cycle started from.
    pub dv_index_base: DvIndexBase,
    /// The first sequence number this cycle gave a written row (`None` when the cycle wrote none). The
    /// commit refuses the increment when the bucket holds a row from another writer at or above it: this
    /// writer's rows would then sort below rows that committed earlier, and be shadowed by them.
    pub first_new_sequence: Option<i64>,
}

impl CommitIncrement {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.compact.is_empty()
    }
}

/// The increment of new files only (messages built by hand: tools, tests).
impl From<DataIncrement> for CommitIncrement {
    fn from(data: DataIncrement) -> Self {
        CommitIncrement { data, ..Default::default() }
    }
}

/// The increment of a compaction only (messages built by hand: tools, tests).
impl From<CompactIncrement> for CommitIncrement {
    fn from(compact: CompactIncrement) -> Self {
        CommitIncrement { compact, ..Default::default() }
    }
}
