//! DELETE on an append table (Paimon's DELETE on a table without a primary key): every live file is read
//! with its deletion vector and the positions of its rows, the caller's filter says which rows go, and the
//! file's bucket writer removes them: with `deletion-vectors.enabled` their positions join the file's
//! vector (one new index file per bucket, as Spark's DELETE writes), otherwise the file is rewritten without
//! them, numbered as it was. The prepare after it commits them as one snapshot.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, BooleanArray, RecordBatch};
use strata_format::{file_columns, open_data_file, KeyValueLayout, DEFAULT_BATCH_SIZE};
use strata_spec::{BinaryRow, Error, ManifestEntry, Result};

use super::{BucketFiles, TableWrite};
use crate::bucket_mode::WritePurpose;

impl TableWrite {
    /// Deletes every row of an append table that `matches` says goes (it gets batches of the table's columns
    /// and answers per row; NULL keeps the row), as of the latest snapshot, and returns how many rows that
    /// is. The next prepare commits the deletion. Refused on a primary-key table (delete its keys), and on a
    /// writer holding rows it has not committed: a deletion commits alone.
    pub fn delete_matching(&mut self, matches: &mut dyn FnMut(&RecordBatch) -> Result<BooleanArray>) -> Result<u64> {
        let schema = self.table.schema().clone();
        if !schema.primary_keys.is_empty() {
            return Err(Error::unsupported("deleting rows by a filter from a primary-key table (delete their keys)"));
        }
        if self.purpose == WritePurpose::Compaction {
            return Err(Error::invalid("delete", "this writer was opened for compaction only"));
        }
        if !self.carried.is_empty() || self.writers.values().any(|w| w.writer.has_changes()) {
            return Err(Error::invalid("delete", "this writer holds rows it has not committed: commit them first"));
        }
        self.drop_stale_append_writers()?;
        let entries: Vec<ManifestEntry> = self.live()?.values().flatten().cloned().collect();
        let layout = KeyValueLayout::new(&schema)?.with_history(self.table.schema_history());
        let columns = file_columns(&layout);
        let batch_size = schema.core_options().read_batch_size()?.unwrap_or(DEFAULT_BATCH_SIZE);
        let io = self.table.io().clone();
        let value_schema = self.value_schema.clone();
        let _span = tracing::info_span!("delete_matching", files = entries.len()).entered();
        let mut deleted = 0u64;
        for e in entries {
            let path = self.table.data_file_path(&e)?;
            let writer = self.append_writer_with_vectors(&e.partition, e.bucket)?;
            let file = layout.file_ref(path, e.file.clone(), writer.vector_of(&e.file.file_name))?;
            let mut positions = Vec::new();
            for batch in open_data_file(io.as_ref(), &file, columns.clone(), true, batch_size)? {
                let batch = batch?;
                let Some(last) = batch.num_columns().checked_sub(1) else { continue };
                let values = RecordBatch::try_new(value_schema.clone(), batch.columns()[..last].to_vec())
                    .map_err(|err| Error::invalid("delete", err.to_string()))?;
                let goes = matches(&values)?;
                if goes.len() != batch.num_rows() {
                    return Err(Error::invalid("delete", "the filter answered for another number of rows"));
                }
                let at = batch.column(last).as_primitive::<Int64Type>();
                positions.extend(
                    (0..batch.num_rows())
                        .filter(|&i| goes.is_valid(i) && goes.value(i))
                        .map(|i| u64::try_from(at.value(i)).unwrap_or(0)),
                );
            }
            deleted += positions.len() as u64;
            writer.delete_positions(&e.file, &positions)?;
        }
        Ok(deleted)
    }

    /// The append writer of (partition, bucket), holding the bucket's deletion vectors.
    fn append_writer_with_vectors(
        &mut self,
        partition: &BinaryRow,
        bucket: i32,
    ) -> Result<&mut strata_lsm::AppendWriter> {
        let base = self.base.clone();
        let table = self.table.clone();
        match self.writer(partition, bucket)? {
            BucketFiles::Append(w) => {
                if !w.may_compact() {
                    w.set_vectors(table.append_dv_maintainer(base.as_ref(), partition, bucket)?);
                }
                Ok(w)
            }
            BucketFiles::MergeTree(_) => Err(Error::invalid("delete", "a primary-key bucket in an append table")),
        }
    }
}
