//! DELETE on an append table (Paimon's DELETE on a table without a primary key): every live file is read
//! with its deletion vector and the positions of its rows, the caller's filter says which rows go, and the
//! file's bucket writer removes them: with `deletion-vectors.enabled` their positions join the file's
//! vector (one new index file per bucket, as Spark's DELETE writes), otherwise the file is rewritten without
//! them, numbered as it was. The prepare after it commits them as one OVERWRITE snapshot (Paimon commits
//! row-level changes so: streaming readers skip them). UPDATE (`super::update`) starts the same way.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, BooleanArray, RecordBatch};
use strata_dv::DeletionVector;
use strata_format::{file_columns, FileRead, KeyValueLayout, Predicate, DEFAULT_BATCH_SIZE};
use strata_io::FileIO;
use strata_spec::{BinaryRow, DataType, Error, ManifestEntry, Result};

use super::{BucketFiles, TableWrite};
use crate::bucket::mode::WritePurpose;

/// A live file some of whose rows a row-level change takes.
pub(super) struct TouchedFile {
    pub(super) entry: ManifestEntry,
    /// Its deletion vector when the rows were matched.
    pub(super) vector: Option<Arc<DeletionVector>>,
    /// The positions of the matched rows, ascending.
    pub(super) positions: Vec<u64>,
}

/// Reads an append table's files as batches of the table's columns with each row's position in its file.
pub(super) struct FileRows {
    io: Arc<dyn FileIO>,
    layout: KeyValueLayout,
    columns: Vec<(String, DataType)>,
    batch_size: usize,
    value_schema: arrow_schema::SchemaRef,
}

impl FileRows {
    /// The live rows of `entry` (the rows `vector` marks are skipped), with their positions.
    pub(super) fn open(
        &self,
        path: String,
        entry: &ManifestEntry,
        vector: Option<Arc<DeletionVector>>,
    ) -> Result<impl Iterator<Item = Result<(RecordBatch, Vec<u64>)>> + use<>> {
        let file = self.layout.file_ref(path, entry.file.clone(), vector)?;
        let batches =
            FileRead::new(self.columns.clone()).with_positions().batch_size(self.batch_size).open(&self.io, &file)?;
        let value_schema = self.value_schema.clone();
        Ok(batches.filter_map(move |batch| {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            let last = batch.num_columns().checked_sub(1)?;
            let values = RecordBatch::try_new(value_schema.clone(), batch.columns()[..last].to_vec())
                .map_err(|err| Error::invalid_from("rows", err));
            let at = batch.column(last).as_primitive::<Int64Type>();
            let positions = at.values().iter().map(|&p| u64::try_from(p).unwrap_or(0)).collect();
            Some(values.map(|v| (v, positions)))
        }))
    }
}

impl TableWrite {
    /// With `filter`, a predicate that every row a delete or update takes satisfies (one implied by its
    /// condition: the condition's conjuncts that translate): files whose statistics or partition rule it out
    /// are not read. The condition itself still decides each row.
    pub fn with_row_filter(mut self, filter: Predicate) -> Self {
        self.row_filter = Some(filter);
        self
    }

    /// Deletes every row of an append table that `matches` says goes (it gets batches of the table's columns
    /// and answers per row; NULL keeps the row), as of the latest snapshot, and returns how many rows that
    /// is. The next prepare commits the deletion. Refused on a primary-key table (delete its keys), and on a
    /// writer holding rows it has not committed: a deletion commits alone.
    pub fn delete_matching(&mut self, matches: &mut dyn FnMut(&RecordBatch) -> Result<BooleanArray>) -> Result<u64> {
        self.begin_row_change("delete")?;
        let touched = self.files_matching(matches)?;
        let mut deleted = 0u64;
        for t in touched {
            deleted += t.positions.len() as u64;
            self.append_writer_with_vectors(&t.entry.partition, t.entry.bucket)?
                .delete_positions(&t.entry.file, &t.positions)?;
        }
        Ok(deleted)
    }

    /// Checks that a row-level change (`what`) may start on this writer, and drops writers opened on an older
    /// snapshot.
    pub(super) fn begin_row_change(&mut self, what: &str) -> Result<()> {
        if !self.table.schema().primary_keys.is_empty() {
            return Err(Error::unsupported(format!(
                "a row-level {what} by a filter on a primary-key table (write or delete its keys)"
            )));
        }
        if self.purpose == WritePurpose::Compaction {
            return Err(Error::invalid(what, "this writer was opened for compaction only"));
        }
        if !self.carried.is_empty() || self.writers.values().any(|w| w.writer.has_changes()) {
            return Err(Error::invalid(what, "this writer holds rows it has not committed: commit them first"));
        }
        self.drop_stale_append_writers()
    }

    /// A reader of the table's files as its writers see them (files of older schemas through the mapping).
    pub(super) fn file_rows(&self) -> Result<FileRows> {
        let schema = self.table.schema();
        let layout = KeyValueLayout::new(schema)?.with_history(self.table.schema_history());
        Ok(FileRows {
            io: self.table.io().clone(),
            columns: file_columns(&layout),
            layout,
            batch_size: schema.core_options().read_batch_size()?.unwrap_or(DEFAULT_BATCH_SIZE),
            value_schema: self.value_schema.clone(),
        })
    }

    /// Every live file with rows `matches` takes, as of the latest snapshot, with those rows' positions.
    pub(super) fn files_matching(
        &mut self,
        matches: &mut dyn FnMut(&RecordBatch) -> Result<BooleanArray>,
    ) -> Result<Vec<TouchedFile>> {
        let mut entries: Vec<ManifestEntry> = self.live()?.values().flatten().cloned().collect();
        // A bucket's files in the order their rows were appended: rows an update writes anew keep that order.
        entries.sort_by_cached_key(|e| (e.partition.serialize(), e.bucket, e.file.min_sequence_number));
        if let Some(filter) = &self.row_filter {
            let (rb, layout) = (crate::ReadBuilder::new(&self.table), self.table.layout()?);
            entries.retain(|e| rb.file_may_match(filter, e, &layout));
        }
        let rows = self.file_rows()?;
        let _span = tracing::info_span!("files_matching", files = entries.len()).entered();
        let mut touched = Vec::new();
        for entry in entries {
            let path = self.table.data_file_path(&entry)?;
            let vector =
                self.append_writer_with_vectors(&entry.partition, entry.bucket)?.vector_of(&entry.file.file_name);
            let mut positions = Vec::new();
            for batch in rows.open(path, &entry, vector.clone())? {
                let (values, at) = batch?;
                let goes = matches(&values)?;
                if goes.len() != values.num_rows() {
                    return Err(Error::invalid("filter", "it answered for another number of rows"));
                }
                positions
                    .extend(at.iter().enumerate().filter(|&(i, _)| goes.is_valid(i) && goes.value(i)).map(|(_, &p)| p));
            }
            if !positions.is_empty() {
                touched.push(TouchedFile { entry, vector, positions });
            }
        }
        Ok(touched)
    }

    /// The append writer of (partition, bucket), holding the bucket's deletion vectors.
    pub(super) fn append_writer_with_vectors(
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
