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
    /// stay held. Rows of a large flush are cut into consecutive parts written as files on parallel threads
    /// (one per core, each part at least [`PARALLEL_PART_BYTES`]), numbered in order, so the files read back
    /// in arrival order.
    pub fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let _span =
            tracing::debug_span!("append_flush", dir = self.files.bucket_dir, bytes = self.buffered_bytes).entered();
        let by_size = usize::try_from(self.buffered_bytes / PARALLEL_PART_BYTES).unwrap_or(usize::MAX);
        let parts = split_rows(&self.buffer, strata_io::cores().min(by_size).max(1));
        let (files, opts) = (&self.files, &self.opts);
        let mut first = self.next_seq;
        let numbered: Vec<(i64, Vec<RecordBatch>)> = parts
            .into_iter()
            .map(|p| {
                let seq = first;
                first += p.iter().map(|b| b.num_rows() as i64).sum::<i64>();
                (seq, p)
            })
            .collect();
        let written: Vec<Result<Vec<DataFileMeta>>> = std::thread::scope(|s| {
            let handles: Vec<_> =
                numbered.iter().map(|(seq, part)| s.spawn(move || write_part(files, opts, *seq, part))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::invalid("append writer", "a file writer panicked"))))
                .collect()
        });
        let mut done = Vec::new();
        let mut failed = None;
        for r in written {
            match r {
                Ok(f) => done.extend(f),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            remove_files(&self.files.io, &done.iter().map(|f| self.files.path(f)).collect::<Vec<_>>());
            return Err(e);
        }
        self.next_seq = first;
        self.buffer.clear();
        self.buffered_bytes = 0;
        self.increment.data.new_files.extend(done);
        Ok(())
    }

    /// Flushes and hands over the cycle's new files.
    pub fn prepare_commit(&mut self) -> Result<CommitIncrement> {
        self.flush()?;
        Ok(std::mem::take(&mut self.increment))
    }
}

/// A flush writes on more threads once each of them gets at least this many bytes of rows.
const PARALLEL_PART_BYTES: u64 = 4 << 20;

/// `batches` cut into `parts` consecutive runs of about equal rows (slices, no copies).
fn split_rows(batches: &[RecordBatch], parts: usize) -> Vec<Vec<RecordBatch>> {
    let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let per = total.div_ceil(parts.max(1)).max(1);
    let mut out: Vec<Vec<RecordBatch>> = vec![Vec::new()];
    let mut room = per;
    for b in batches {
        let mut offset = 0;
        while offset < b.num_rows() {
            if room == 0 {
                out.push(Vec::new());
                room = per;
            }
            let take = room.min(b.num_rows() - offset);
            if let Some(part) = out.last_mut() {
                part.push(b.slice(offset, take));
            }
            offset += take;
            room -= take;
        }
    }
    out
}

/// Writes one part's rows, numbered from `first_seq`, as files; on failure removes what it wrote.
fn write_part(
    files: &FileFactory,
    opts: &WriterOptions,
    first_seq: i64,
    part: &[RecordBatch],
) -> Result<Vec<DataFileMeta>> {
    let mut w = files.writer(opts, 0, FileSource::Append).with_first_sequence(first_seq);
    let written = part.iter().try_for_each(|b| w.write(b));
    let rolled = w.written_paths();
    let closed = written.and_then(|()| w.close());
    if closed.is_err() {
        remove_files(&files.io, &rolled);
    }
    closed
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parts_keep_every_row_once_in_order(sizes in proptest::collection::vec(0usize..50, 0..8), parts in 1usize..5) {
            let mut next = 0i64;
            let batches: Vec<RecordBatch> = sizes
                .iter()
                .map(|&n| {
                    let ids: Vec<i64> = (next..next + n as i64).collect();
                    next += n as i64;
                    RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(ids)) as arrow_array::ArrayRef)]).unwrap()
                })
                .collect();
            let split = split_rows(&batches, parts);
            prop_assert!(split.len() <= parts.max(1));
            let ids: Vec<i64> = split
                .iter()
                .flatten()
                .flat_map(|b| b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec())
                .collect();
            prop_assert_eq!(ids, (0..next).collect::<Vec<_>>());
        }
    }
}
