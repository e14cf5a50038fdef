//! The writer of one (partition, bucket) of an append table (Paimon's `AppendOnlyWriter`).
//!
//! Rows are kept in arrival order until the commit (or until they fill `write-buffer-size`), then written
//! to data files of the table's columns, rolled at `target-file-size`; each row takes the bucket's next
//! sequence number (after the largest among the bucket's files, so readers that order a bucket's files by
//! sequence read them in the order they were appended). Inserts and updates (+U) are rows; a retraction
//! (-U, -D) is refused, or dropped under `ignore-delete`, as Paimon's writer does. A failed flush removes
//! what it wrote and keeps the rows, so a retried commit writes them again.

use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch};
use strata_format::{KeyValueLayout, RowKind};
use strata_io::FileIO;
use strata_spec::{CommitIncrement, DataFileMeta, Error, FileSource, Result, TableSchema};

use crate::files::{remove_files, FileFactory};
use crate::options::WriterOptions;

/// Writes one (partition, bucket) of an append table.
pub struct AppendWriter {
    files: FileFactory,
    opts: WriterOptions,
    bucket: i32,
    next_seq: i64,
    /// Rows not yet in files, in arrival order, as stored (the file schema).
    buffer: Vec<RecordBatch>,
    buffered_bytes: u64,
    increment: CommitIncrement,
}

impl AppendWriter {
    /// A writer after the bucket's committed `files`.
    pub fn new(
        io: Arc<dyn FileIO>,
        schema: &TableSchema,
        bucket: i32,
        bucket_dir: String,
        files: &[DataFileMeta],
    ) -> Result<Self> {
        let layout = KeyValueLayout::new(schema)?;
        if !layout.append {
            return Err(Error::invalid("append writer", "the table has a primary key"));
        }
        let opts = WriterOptions::from_schema(schema)?;
        let factory = FileFactory {
            io,
            layout: Arc::new(layout),
            bucket_dir,
            prefix: format!("{}-", uuid::Uuid::new_v4()),
            counter: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        };
        let next_seq = files.iter().map(|f| f.max_sequence_number.saturating_add(1)).max().unwrap_or(0).max(0);
        Ok(AppendWriter {
            files: factory,
            opts,
            bucket,
            next_seq,
            buffer: Vec::new(),
            buffered_bytes: 0,
            increment: CommitIncrement::default(),
        })
    }

    /// The bucket number.
    pub fn bucket(&self) -> i32 {
        self.bucket
    }

    /// Bytes of rows held for the next flush.
    pub fn buffered_bytes(&self) -> u64 {
        self.buffered_bytes
    }

    /// Appends rows (every column of the table, in table order) of kinds `kinds` (`RowKind` bytes).
    pub fn write(&mut self, values: &RecordBatch, kinds: &[i8]) -> Result<()> {
        let rows = match kinds.iter().position(|&k| RowKind::byte_is_retract(k)) {
            None => values.clone(),
            Some(_) if self.opts.merge.ignore_delete => {
                let keep: BooleanArray = kinds.iter().map(|&k| Some(!RowKind::byte_is_retract(k))).collect();
                arrow_select::filter::filter_record_batch(values, &keep)
                    .map_err(|e| Error::invalid("rows", e.to_string()))?
            }
            Some(i) => {
                let kind = RowKind::from_byte(kinds[i]).map(|k| format!("{k:?}")).unwrap_or_default();
                return Err(Error::invalid(
                    "rows",
                    format!(
                        "row {i} is a retraction ({kind}): an append table takes inserts only (its option \
                         'ignore-delete' drops retractions)"
                    ),
                ));
            }
        };
        if rows.num_rows() == 0 {
            return Ok(());
        }
        let stored = RecordBatch::try_new(self.files.layout.stored_schema.clone(), rows.columns().to_vec())
            .map_err(|e| Error::invalid("rows", e.to_string()))?;
        self.buffered_bytes += stored.get_array_memory_size() as u64;
        self.buffer.push(stored);
        if self.buffered_bytes >= self.opts.write_buffer_size {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the held rows to files of this commit cycle; on failure nothing written stays and the rows
    /// stay held.
    pub fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let _span =
            tracing::debug_span!("append_flush", dir = self.files.bucket_dir, bytes = self.buffered_bytes).entered();
        let mut w = self.files.writer(&self.opts, 0, FileSource::Append).with_first_sequence(self.next_seq);
        let written = self.buffer.iter().try_for_each(|b| w.write(b));
        let rolled = w.written_paths();
        let next_seq = w.next_sequence();
        match written.and_then(|()| w.close()) {
            Ok(files) => {
                self.next_seq = next_seq;
                self.buffer.clear();
                self.buffered_bytes = 0;
                self.increment.data.new_files.extend(files);
                Ok(())
            }
            Err(e) => {
                remove_files(&self.files.io, &rolled);
                Err(e)
            }
        }
    }

    /// Flushes and hands over the cycle's new files.
    pub fn prepare_commit(&mut self) -> Result<CommitIncrement> {
        self.flush()?;
        Ok(std::mem::take(&mut self.increment))
    }
}
