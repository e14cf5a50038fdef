//! The writer of one (partition, bucket) of an append table (Paimon's `AppendOnlyWriter`).
//!
//! Rows are kept in arrival order until the commit (or until they fill `write-buffer-size`), then written
//! to data files of the table's columns, rolled at `target-file-size`; each row takes the bucket's next
//! sequence number (after the largest among the bucket's files, so readers that order a bucket's files by
//! sequence read them in the order they were appended). Inserts and updates (+U) are rows; a retraction
//! (-U, -D) is refused, or dropped under `ignore-delete`, as Paimon's writer does. A failed flush removes
//! what it wrote and keeps the rows, so a retried commit writes them again.
//!
//! Compaction (`crate::append_pick` picks): a fixed bucket compacts a window of small files after a write
//! unless `write-only`, as Paimon's writer does; an unaware bucket only when asked. A compaction reads its
//! files in order with their deletion vectors applied and writes their live rows into new files numbered
//! from the first input's sequence number, so a bucket's rows keep their order; the inputs' vectors go, and
//! the index files that held them are replaced.

use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch};
use strata_dv::AppendDvMaintainer;
use strata_dv::DeletionVector;
use strata_format::{run_reader, DataFileRef, KeyValueLayout, RowKind, SchemaHistory};
use strata_io::FileIO;
use strata_spec::{CommitIncrement, DataFileMeta, DvIndexBase, Error, FileSource, Result, TableSchema};

use crate::append_pick::{pack_unaware, pick_after_write, pick_full, AppendCompactOptions, FileDeletions};
use crate::files::{remove_files, FileFactory};
use crate::options::WriterOptions;

/// Where an append writer's bucket is and what it holds.
pub struct AppendBucket {
    /// The bucket number.
    pub bucket: i32,
    /// The directory of its data files.
    pub bucket_dir: String,
    /// The table's index directory (deletion-vector index files).
    pub index_dir: String,
    /// Its committed files.
    pub files: Vec<DataFileMeta>,
    /// Its deletion vectors, when the writer may compact (`None`: it never compacts).
    pub vectors: Option<AppendDvMaintainer>,
    /// A fixed bucket (rows kept in sequence order, compacted after writes), or else an unaware one.
    pub fixed: bool,
}

/// What compaction a prepare runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendCompaction {
    /// After writes: a fixed bucket's window of small files, unless `write-only`.
    AfterWrite,
    /// Asked for: a fixed bucket's full compaction (or the window), an unaware partition's packed groups.
    Asked {
        /// A full compaction.
        full: bool,
    },
}

/// Writes one (partition, bucket) of an append table.
pub struct AppendWriter {
    files: FileFactory,
    opts: WriterOptions,
    compact_opts: AppendCompactOptions,
    bucket: i32,
    fixed: bool,
    index_dir: String,
    next_seq: i64,
    /// Rows not yet in files, in arrival order, as stored (the file schema).
    buffer: Vec<RecordBatch>,
    buffered_bytes: u64,
    /// Files a compaction may take, by sequence number: committed, flushed, and small compaction outputs.
    to_compact: Vec<DataFileMeta>,
    vectors: Option<AppendDvMaintainer>,
    /// In a cycle that deletes rows: the index files the deletes started from. Such a cycle does not compact,
    /// so that its changes commit as one snapshot.
    delete_base: Option<DvIndexBase>,
    /// This cycle flushed written rows (a delete must come first: rows written after it commit with it).
    wrote_rows: bool,
    increment: CommitIncrement,
}

impl AppendWriter {
    /// A writer of `at`, reading files of older schemas through `history`.
    pub fn new(
        io: Arc<dyn FileIO>,
        schema: &TableSchema,
        history: Option<Arc<dyn SchemaHistory>>,
        at: AppendBucket,
    ) -> Result<Self> {
        let layout = KeyValueLayout::new(schema)?;
        if !layout.append {
            return Err(Error::invalid("append writer", "the table has a primary key"));
        }
        let layout = match history {
            Some(h) => layout.with_history(h),
            None => layout,
        };
        let opts = WriterOptions::from_schema(schema)?;
        let factory = FileFactory {
            io,
            layout: Arc::new(layout),
            bucket_dir: at.bucket_dir,
            prefix: format!("{}-", uuid::Uuid::new_v4()),
            counter: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        };
        let next_seq = at.files.iter().map(|f| f.max_sequence_number.saturating_add(1)).max().unwrap_or(0).max(0);
        let mut to_compact = at.files;
        to_compact.sort_by_key(|f| (f.min_sequence_number, f.max_sequence_number));
        Ok(AppendWriter {
            files: factory,
            compact_opts: AppendCompactOptions::from_schema(schema)?,
            opts,
            bucket: at.bucket,
            fixed: at.fixed,
            index_dir: at.index_dir,
            next_seq,
            buffer: Vec::new(),
            buffered_bytes: 0,
            to_compact,
            vectors: at.vectors,
            delete_base: None,
            wrote_rows: false,
            increment: CommitIncrement::default(),
        })
    }

    /// The bucket number.
    pub fn bucket(&self) -> i32 {
        self.bucket
    }

    /// Whether it holds the bucket's deletion vectors, which a compaction needs.
    pub fn may_compact(&self) -> bool {
        self.vectors.is_some()
    }

    /// Gives it the bucket's deletion vectors (as of the snapshot its files are from, or later), so that it
    /// may compact.
    pub fn set_vectors(&mut self, vectors: AppendDvMaintainer) {
        self.vectors = Some(vectors);
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
                arrow_select::filter::filter_record_batch(values, &keep).map_err(|e| Error::invalid_from("rows", e))?
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
        let stored = as_stored(&self.files.layout.stored_schema, rows)?;
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
            let handles: Vec<_> = numbered
                .iter()
                .map(|(seq, part)| {
                    s.spawn(move || write_files(files, opts, FileSource::Append, *seq, part.iter().cloned().map(Ok)))
                })
                .collect();
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
        if self.fixed && self.increment.first_new_sequence.is_none() {
            // A fixed bucket reads in sequence order: the commit refuses these rows if another writer's rows
            // took these numbers meanwhile (they would read interleaved with them).
            self.increment.first_new_sequence = Some(self.next_seq);
        }
        self.next_seq = first;
        self.buffer.clear();
        self.buffered_bytes = 0;
        self.to_compact.extend(done.iter().cloned());
        self.wrote_rows = true;
        self.increment.data.new_files.extend(done);
        Ok(())
    }

    /// Flushes, compacts as `compaction` says, and hands over the cycle's changes; a new deletion-vector index
    /// file, if the compaction replaced one, is named by `index_file_name`.
    pub fn prepare_commit(
        &mut self,
        compaction: AppendCompaction,
        index_file_name: impl FnOnce() -> String,
    ) -> Result<CommitIncrement> {
        self.flush()?;
        let deleting = self.delete_base.clone();
        let groups = if deleting.is_some() { Vec::new() } else { self.pick(compaction) };
        if !groups.is_empty() {
            let _span =
                tracing::info_span!("append_compact", dir = self.files.bucket_dir, groups = groups.len()).entered();
            // The vectors (and index files) the compaction started from: the commit refuses it if another
            // commit changed them meanwhile (a delete of rows in a file being rewritten would be lost).
            let base = self.vectors.as_ref().map(AppendDvMaintainer::base).unwrap_or_default();
            for group in groups {
                self.rewrite(group)?;
            }
            self.increment.dv_index_base = base;
        }
        if let Some(base) = deleting {
            self.increment.dv_index_base = base;
        }
        if !self.dv_mode() {
            // Without vectors anywhere there is no index to check: a rewrite's inputs must be live, and that
            // the commit checks anyway. (A checked base would also hold the rewrite to the guard against
            // engines that compact deletion-vector buckets, `strata_table::foreign_compaction`.)
            self.increment.dv_index_base = DvIndexBase::Unchecked;
        }
        if let Some(v) = self.vectors.as_mut().filter(|v| v.is_modified()) {
            let change = v.persist(self.files.io.as_ref(), &self.index_dir, index_file_name)?;
            // Vectors a delete marked commit with the write (Spark's DELETE does the same); those a rewrite
            // dropped, with the rewrite.
            let half = if self.increment.compact.compact_before.is_empty() {
                (&mut self.increment.data.new_index_files, &mut self.increment.data.deleted_index_files)
            } else {
                (&mut self.increment.compact.new_index_files, &mut self.increment.compact.deleted_index_files)
            };
            half.0.extend(change.new_files);
            half.1.extend(change.deleted_files);
        }
        self.delete_base = None;
        self.wrote_rows = false;
        Ok(std::mem::take(&mut self.increment))
    }

    /// Whether it holds rows or changes not yet handed over.
    pub fn has_changes(&self) -> bool {
        !self.buffer.is_empty() || !self.increment.is_empty() || self.vectors.as_ref().is_some_and(|v| v.is_modified())
    }

    /// `file`'s deletion vector, if it has one (`None` too when the writer holds no vectors).
    pub fn vector_of(&self, file: &str) -> Option<Arc<DeletionVector>> {
        self.vectors.as_ref().and_then(|v| v.vector_of(file))
    }

    /// Deletes the rows at `positions` of `file`, one of the bucket's committed files: with
    /// `deletion-vectors.enabled` they join its deletion vector (the index file is written at the prepare);
    /// otherwise the file is rewritten now without them, numbered as it was, so the bucket's rows keep their
    /// order. Either way the change commits as the write's half, an OVERWRITE snapshot. Refused once the
    /// writer has written rows this cycle: rows written after a delete (an UPDATE's new values) commit with
    /// it, but a delete never joins an insert's snapshot, which streaming readers would then skip.
    pub fn delete_positions(&mut self, file: &DataFileMeta, positions: &[u64]) -> Result<()> {
        if positions.is_empty() {
            return Ok(());
        }
        self.begin_row_change(file)?;
        let Some(vectors) = self.vectors.as_mut() else { return Err(no_vectors()) };
        let dv = vectors.vector_with(&file.file_name, positions)?;
        if self.opts.deletion_vectors {
            vectors.set(&file.file_name, dv);
            return Ok(());
        }
        let refs = vec![self.files.layout.file_ref(self.files.path(file), file.clone(), Some(Arc::new(dv)))?];
        let rows = self.live_rows(refs);
        self.replace(file, rows)
    }

    /// Replaces `file`, one of the bucket's committed files, by `rows` (every column of the table, in table
    /// order): its live rows, some of them changed (an UPDATE's rows that stay in the bucket), numbered as it
    /// was, so the bucket's rows keep their order. Like [`Self::delete_positions`] without vectors, the
    /// change commits as the write's half; the same refusals apply.
    pub fn replace_file(
        &mut self,
        file: &DataFileMeta,
        rows: impl IntoIterator<Item = Result<RecordBatch>>,
    ) -> Result<()> {
        self.begin_row_change(file)?;
        let stored = self.files.layout.stored_schema.clone();
        self.replace(file, rows.into_iter().map(move |b| as_stored(&stored, b?)))
    }

    /// Checks that a row-level change of `file` may start, and records the vectors it starts from.
    fn begin_row_change(&mut self, file: &DataFileMeta) -> Result<()> {
        if !self.buffer.is_empty() || self.wrote_rows {
            return Err(Error::invalid("delete", "the writer holds rows it has not committed: commit them first"));
        }
        if self.increment.data.deleted_files.iter().any(|f| f.file_name == file.file_name) {
            return Err(Error::invalid("delete", format!("{} was rewritten by this cycle already", file.file_name)));
        }
        let Some(vectors) = self.vectors.as_ref() else { return Err(no_vectors()) };
        if self.delete_base.is_none() {
            self.delete_base = Some(vectors.base());
        }
        Ok(())
    }

    /// Writes `rows` (as stored) in place of `file`, numbered as it was, in the write's half: the data half
    /// replaces the file (Paimon's DELETE and UPDATE without deletion vectors do the same), so the change
    /// commits in one OVERWRITE snapshot. The file's vector, if it had one, goes.
    fn replace(&mut self, file: &DataFileMeta, rows: impl IntoIterator<Item = Result<RecordBatch>>) -> Result<()> {
        let after = write_files(&self.files, &self.opts, FileSource::Append, file.min_sequence_number, rows)?;
        if let Some(v) = self.vectors.as_mut() {
            v.remove(&file.file_name);
        }
        let at = self.to_compact.iter().position(|f| f.file_name == file.file_name);
        if let Some(at) = at {
            self.to_compact.splice(at..=at, after.iter().cloned());
        }
        self.increment.data.deleted_files.push(file.clone());
        self.increment.data.new_files.extend(after);
        Ok(())
    }

    /// Whether the bucket has deletion vectors, or may get them (`deletion-vectors.enabled`).
    fn dv_mode(&self) -> bool {
        self.opts.deletion_vectors || self.vectors.as_ref().is_some_and(|v| !v.is_empty() || v.is_modified())
    }

    /// The groups of files to compact now, each in the order its rows are written.
    fn pick(&self, compaction: AppendCompaction) -> Vec<Vec<DataFileMeta>> {
        let Some(vectors) = &self.vectors else { return Vec::new() };
        let (files, o) = (&self.to_compact, &self.compact_opts);
        let dv_mode = self.dv_mode();
        let window = |r: Option<std::ops::Range<usize>>| r.map(|r| vec![files[r].to_vec()]).unwrap_or_default();
        match compaction {
            AppendCompaction::AfterWrite if self.fixed && !self.opts.write_only => window(pick_after_write(files, o)),
            AppendCompaction::AfterWrite => Vec::new(),
            AppendCompaction::Asked { full: false } if self.fixed => window(pick_after_write(files, o)),
            AppendCompaction::Asked { full: true } if self.fixed => {
                window(pick_full(files, o, dv_mode, |f| vectors.vector_of(&f.file_name).is_some()))
            }
            AppendCompaction::Asked { .. } => pack_unaware(files, o, dv_mode, |f| {
                let dv = vectors.vector_of(&f.file_name)?;
                Some(FileDeletions {
                    index_file: vectors.index_file_of(&f.file_name).unwrap_or_default().to_string(),
                    cardinality: Some(dv.cardinality()),
                })
            }),
        }
    }

    /// The live rows of `files`, in order, as stored (the file schema).
    fn live_rows(&self, files: Vec<DataFileRef>) -> impl Iterator<Item = Result<RecordBatch>> + use<> {
        let stored = self.files.layout.stored_schema.clone();
        run_reader(self.files.io.clone(), &self.files.layout, files, self.opts.batch_size)
            .map(move |batch| as_stored(&stored, batch?))
    }

    /// Rewrites `group`'s live rows, in order, into new files numbered from its first file's sequence number.
    fn rewrite(&mut self, group: Vec<DataFileMeta>) -> Result<()> {
        let (Some(first), Some(vectors)) = (group.first(), self.vectors.as_ref()) else { return Ok(()) };
        let refs = group
            .iter()
            .map(|f| self.files.layout.file_ref(self.files.path(f), f.clone(), vectors.vector_of(&f.file_name)))
            .collect::<Result<Vec<_>>>()?;
        let rows = self.live_rows(refs);
        let after = write_files(&self.files, &self.opts, FileSource::Compact, first.min_sequence_number, rows)?;
        if let Some(v) = self.vectors.as_mut() {
            group.iter().for_each(|f| v.remove(&f.file_name));
        }
        self.to_compact.retain(|f| group.iter().all(|g| g.file_name != f.file_name));
        // A fixed bucket's last output, if still small, may join the next window (Paimon does the same).
        if let Some(last) =
            after.last().filter(|l| self.fixed && (l.file_size.max(0) as u64) < self.compact_opts.compaction_file_size)
        {
            let at = self.to_compact.partition_point(|f| f.min_sequence_number < last.min_sequence_number);
            self.to_compact.insert(at, last.clone());
        }
        self.increment.compact.compact_before.extend(group);
        self.increment.compact.compact_after.extend(after);
        Ok(())
    }
}

/// `batch`'s columns (the table's, in table order) under the stored schema.
fn as_stored(stored: &arrow_schema::SchemaRef, batch: RecordBatch) -> Result<RecordBatch> {
    RecordBatch::try_new(stored.clone(), batch.columns().to_vec()).map_err(|e| Error::invalid_from("rows", e))
}

fn no_vectors() -> Error {
    Error::invalid("delete", "the bucket's writer was opened without its deletion vectors")
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

/// Writes `batches` as level-0 files of `source`, rows numbered from `first_seq`; on failure removes what it
/// wrote.
fn write_files(
    files: &FileFactory,
    opts: &WriterOptions,
    source: FileSource,
    first_seq: i64,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
) -> Result<Vec<DataFileMeta>> {
    let mut w = files.writer(opts, 0, source).with_first_sequence(first_seq);
    let written = batches.into_iter().try_for_each(|b| w.write(&b?));
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
