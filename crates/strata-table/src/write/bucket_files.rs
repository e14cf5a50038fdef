//! A bucket's writer: the merge tree of a primary-key table, or an append table's writer.

use arrow_array::RecordBatch;
use strata_lsm::{AppendBucket, AppendCompaction, AppendWriter, MergeTreeWriter};
use strata_spec::{BinaryRow, CommitIncrement, DataFileMeta, Result};

use super::{Prepare, Routing, TableWrite};
use crate::bucket::mode::WritePurpose;

impl TableWrite {
    /// An append table's bucket writer, on the base snapshot's `files`.
    pub(super) fn new_append_writer(
        &self,
        partition: &BinaryRow,
        bucket: i32,
        bucket_dir: String,
        files: Vec<DataFileMeta>,
    ) -> Result<AppendWriter> {
        let schema = self.table.schema();
        let fixed = !matches!(self.routing, Routing::Unaware);
        // A writer that may compact needs the bucket's deletion vectors: a rewrite applies them.
        let compacts = self.purpose == WritePurpose::Compaction || fixed && !schema.core_options().write_only()?;
        let vectors =
            if compacts { Some(self.table.append_dv_maintainer(self.base.as_ref(), partition, bucket)?) } else { None };
        let index_dir = self.table.path_factory().index_dir();
        let at = AppendBucket { bucket, bucket_dir, index_dir, files, vectors, fixed };
        AppendWriter::new(self.table.io().clone(), schema, Some(self.table.schema_history()), at)
    }
}

/// The writer of one (partition, bucket).
pub(crate) enum BucketFiles {
    /// A primary-key table's bucket.
    MergeTree(Box<MergeTreeWriter>),
    /// An append table's bucket.
    Append(Box<AppendWriter>),
}

impl BucketFiles {
    pub(crate) fn bucket(&self) -> i32 {
        match self {
            BucketFiles::MergeTree(w) => w.bucket(),
            BucketFiles::Append(w) => w.bucket(),
        }
    }

    pub(crate) fn write(&mut self, values: &RecordBatch, kinds: &[i8]) -> Result<()> {
        match self {
            BucketFiles::MergeTree(w) => w.write(values, kinds),
            BucketFiles::Append(w) => w.write(values, kinds),
        }
    }

    /// Bytes buffered in memory.
    pub(crate) fn buffered_bytes(&self) -> u64 {
        match self {
            BucketFiles::MergeTree(w) => w.buffered_bytes(),
            BucketFiles::Append(w) => w.buffered_bytes(),
        }
    }

    /// Whether it holds rows or changes not yet handed over (an append writer; a merge tree's count as none:
    /// only an append table's deletion asks).
    pub(crate) fn has_changes(&self) -> bool {
        matches!(self, BucketFiles::Append(w) if w.has_changes())
    }

    pub(crate) fn spilling(&self) -> bool {
        matches!(self, BucketFiles::MergeTree(w) if w.spilling())
    }

    pub(crate) fn settle_spill(&mut self) {
        if let BucketFiles::MergeTree(w) = self {
            w.settle_spill();
        }
    }

    pub(crate) fn release_buffer(&mut self) -> Result<()> {
        match self {
            BucketFiles::MergeTree(w) => w.release_buffer(),
            BucketFiles::Append(w) => w.flush(),
        }
    }

    /// The increment of the commit cycle, prepared as `how` says.
    pub(crate) fn prepare(&mut self, how: Prepare, name: impl FnOnce() -> String) -> Result<CommitIncrement> {
        match self {
            BucketFiles::MergeTree(w) => match how {
                Prepare::Compaction { full, delete_ratio } => w.prepare_compaction(full, delete_ratio, name),
                Prepare::Waiting => w.prepare_commit_waiting(name),
                Prepare::Commit => w.prepare_commit(name),
            },
            BucketFiles::Append(w) => {
                let compaction = match how {
                    Prepare::Compaction { full, .. } => AppendCompaction::Asked { full },
                    Prepare::Waiting | Prepare::Commit => AppendCompaction::AfterWrite,
                };
                w.prepare_commit(compaction, name)
            }
        }
    }
}
