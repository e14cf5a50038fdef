//! The level-0 files of one flush.
//!
//! A flush writes one sorted run: the write buffer merged, one row a key. In deletion-vector mode with the
//! deduplicate engine, that run's retractions (-U and -D rows) go to files of their own, so that the force-up
//! that follows can take the run out of level 0 without rewriting it: a file without retractions moves up a
//! level unchanged, and a file of retractions only is dropped (a deletion-vector compaction drops retractions
//! anyway), once the older copies of its keys are marked deleted ([`crate::compact::job`]). Both files stay
//! the write's level-0 files in its APPEND snapshot, so streaming readers see its deletes as before. Split or
//! not, the files of one flush hold each key once: they are the run's parts, disjoint by key.

use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_array::{BooleanArray, RecordBatch};
use strata_format::{KvFileWriter, RowKind};
use strata_spec::{DataFileMeta, Error, FileSource, Result};

use crate::files::{remove_files, FileFactory};
use crate::options::WriterOptions;

/// Writes a flush's run as level-0 files: rows, and with `split`, retractions apart.
pub(crate) struct FlushWriter {
    factory: FileFactory,
    opts: WriterOptions,
    rows: KvFileWriter,
    /// Opened at the first retraction, when retractions go apart.
    retractions: Option<KvFileWriter>,
    split: bool,
}

impl FlushWriter {
    pub(crate) fn new(factory: FileFactory, opts: &WriterOptions) -> Self {
        let rows = factory.writer(opts, 0, FileSource::Append);
        let split = opts.splits_retractions();
        FlushWriter { factory, opts: opts.clone(), rows, retractions: None, split }
    }

    /// Writes a batch of the run (in key order, as the run's batches come).
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if !self.split {
            return self.rows.write(batch);
        }
        let kind = self.factory.layout.kind_index();
        let kinds = batch
            .column(kind)
            .as_primitive_opt::<Int8Type>()
            .ok_or_else(|| Error::invalid("flush", "_VALUE_KIND is not TINYINT"))?;
        let retracts = kinds.values().iter().filter(|&&k| RowKind::byte_is_retract(k)).count();
        if retracts == 0 {
            return self.rows.write(batch);
        }
        if retracts < batch.num_rows() {
            let keep: BooleanArray = kinds.values().iter().map(|&k| Some(!RowKind::byte_is_retract(k))).collect();
            let rows = arrow_select::filter::filter_record_batch(batch, &keep)
                .map_err(|e| Error::internal_from("flush", e))?;
            self.rows.write(&rows)?;
        }
        let retractions = if retracts == batch.num_rows() {
            batch.clone()
        } else {
            let take: BooleanArray = kinds.values().iter().map(|&k| Some(RowKind::byte_is_retract(k))).collect();
            arrow_select::filter::filter_record_batch(batch, &take).map_err(|e| Error::internal_from("flush", e))?
        };
        let (factory, opts) = (&self.factory, &self.opts);
        self.retractions.get_or_insert_with(|| factory.writer(opts, 0, FileSource::Append)).write(&retractions)
    }

    /// The files written so far (rolled ones), for removal when the flush fails.
    pub(crate) fn written_paths(&self) -> Vec<String> {
        let mut paths = self.rows.written_paths();
        paths.extend(self.retractions.as_ref().map(KvFileWriter::written_paths).unwrap_or_default());
        paths
    }

    /// Closes the writers: the run's files (rows first, then retractions). On failure nothing written stays
    /// (files a writer rolled before it failed included).
    pub(crate) fn close(self) -> Result<Vec<DataFileMeta>> {
        let FlushWriter { factory, rows, retractions, .. } = self;
        let mut rolled = rows.written_paths();
        rolled.extend(retractions.as_ref().map(KvFileWriter::written_paths).unwrap_or_default());
        let closed = rows.close().and_then(|mut files| {
            if let Some(r) = retractions {
                match r.close() {
                    Ok(more) => files.extend(more),
                    Err(e) => {
                        rolled.extend(files.iter().map(|f| factory.path(f)));
                        return Err(e);
                    }
                }
            }
            Ok(files)
        });
        if closed.is_err() {
            remove_files(&factory.io, &rolled);
        }
        closed
    }
}
