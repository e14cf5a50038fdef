//! A bucket writer's write buffer (Paimon's `SortBufferWriteBuffer`): rows in the key-value file layout,
//! sorted by key then sequence number when the buffer fills, and, when spillable, written as a sorted run to
//! a local temporary file so that memory stays bounded while a commit still produces one level-0 run.
//!
//! Spilled runs are Arrow IPC files in a private temporary directory; they are local scratch data, never
//! part of the table, and are removed once merged (and with the directory when the writer goes away).

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;
use arrow_row::{RowConverter, Rows, SortField};
use strata_format::{to_arrow, KeyValueLayout, Run};
use strata_spec::{Error, Result};

/// Buffered rows of one commit cycle: in memory, plus the runs spilled so far.
pub(crate) struct WriteBuffer {
    layout: Arc<KeyValueLayout>,
    batches: Vec<RecordBatch>,
    bytes: u64,
    spill: Option<SpillSettings>,
    dir: strata_io::ScratchDir,
    spilled: Vec<SpilledRun>,
    spilled_bytes: u64,
    counter: u64,
    /// The spill being written on its own thread, if any.
    pending: Option<PendingSpill>,
}

/// How and how much to spill.
#[derive(Debug, Clone)]
pub(crate) struct SpillSettings {
    /// `spill-compression`: `zstd`, `lz4` or `none`.
    pub compression: String,
    /// `write-buffer-spill.max-disk-size`.
    pub max_disk_size: u64,
    /// `local-sort.max-num-file-handles`.
    pub max_runs: usize,
}

/// A sorted run in a local IPC file.
struct SpilledRun {
    path: PathBuf,
    bytes: u64,
}

/// A spill running on its own thread, so that the writer takes more rows while it sorts and writes. It
/// holds its rows (shared with the thread, not copied) until the run is on disk; a spill that fails hands
/// them back to the buffer.
struct PendingSpill {
    batches: Vec<RecordBatch>,
    bytes: u64,
    handle: std::thread::JoinHandle<Result<SpilledRun>>,
}

impl WriteBuffer {
    /// An empty buffer; `spill` is `None` when the buffer may not spill.
    pub(crate) fn new(layout: Arc<KeyValueLayout>, spill: Option<SpillSettings>) -> Self {
        WriteBuffer {
            layout,
            batches: Vec::new(),
            bytes: 0,
            spill,
            dir: strata_io::ScratchDir::new("strata-spill-"),
            spilled: Vec::new(),
            spilled_bytes: 0,
            counter: 0,
            pending: None,
        }
    }

    /// Adds rows (in the file layout, with sequence numbers).
    pub(crate) fn push(&mut self, batch: RecordBatch) {
        self.bytes += batch_bytes(&batch);
        self.batches.push(batch);
    }

    /// Bytes held in memory and not yet being spilled.
    pub(crate) fn memory_bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether a spill is being written.
    pub(crate) fn spilling(&self) -> bool {
        self.pending.is_some()
    }

    /// Waits for the spill being written. If it failed, its rows are back in memory and its error is
    /// returned (nothing is lost: the caller may spill again or flush).
    pub(crate) fn settle(&mut self) -> Result<()> {
        let Some(p) = self.pending.take() else { return Ok(()) };
        let outcome = p.handle.join().unwrap_or_else(|panic| {
            Err(Error::invalid("spill write buffer", strata_spec::panic_message(panic.as_ref())))
        });
        match outcome {
            Ok(run) => {
                self.spilled_bytes += run.bytes;
                self.spilled.push(run);
                Ok(())
            }
            Err(e) => {
                // Back in front of what came since: `pop_last` must still take back the newest batch.
                self.bytes += p.bytes;
                let newer = std::mem::replace(&mut self.batches, p.batches);
                self.batches.extend(newer);
                Err(e)
            }
        }
    }

    /// Rows held in memory.
    pub(crate) fn memory_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// Whether nothing is buffered, in memory or spilled.
    pub(crate) fn is_empty(&self) -> bool {
        self.batches.is_empty() && self.spilled.is_empty() && self.pending.is_none()
    }

    /// Number of spilled runs waiting for the next flush.
    pub(crate) fn spilled_runs(&self) -> usize {
        self.spilled.len()
    }

    /// Spills the memory part as one sorted run if spilling is allowed and within its limits; returns
    /// whether it did (if not, the caller flushes to level 0 instead). The run is sorted and written on its
    /// own thread; a spill still being written is waited for first, so at most one runs per buffer.
    pub(crate) fn try_spill(&mut self, batch_size: usize) -> Result<bool> {
        let Some(settings) = self.spill.clone() else { return Ok(false) };
        self.settle()?;
        if self.batches.is_empty() {
            return Ok(true);
        }
        if self.spilled.len() + 1 >= settings.max_runs || self.spilled_bytes >= settings.max_disk_size {
            return Ok(false);
        }
        let path = self.dir.path()?.join(format!("run-{}.arrow", self.counter));
        self.counter += 1;
        let batches = std::mem::take(&mut self.batches);
        let bytes = std::mem::take(&mut self.bytes);
        let run_batch = spill_batch_rows(&batches, bytes, batch_size);
        let (layout, rows) = (self.layout.clone(), batches.clone());
        let spawned = std::thread::Builder::new()
            .name("strata-spill".into())
            .spawn(move || write_run(&layout, &rows, run_batch, path, &settings));
        match spawned {
            Ok(handle) => {
                self.pending = Some(PendingSpill { batches, bytes, handle });
                Ok(true)
            }
            Err(e) => {
                self.batches = batches;
                self.bytes = bytes;
                Err(Error::io("spill thread", e))
            }
        }
    }

    /// Everything buffered as sorted runs (spilled runs first, then memory), each ordered by key then sequence
    /// number; runs may share keys. The buffer keeps its contents until [`clear`](Self::clear), so a flush
    /// that fails can be retried.
    #[cfg(test)]
    pub(crate) fn runs(&self, batch_size: usize) -> Result<Vec<Run>> {
        self.runs_with(self.sorted_memory(batch_size)?)
    }

    /// The memory part sorted by key then sequence number, in batches of `batch_size` (none when empty).
    pub(crate) fn sorted_memory(&self, batch_size: usize) -> Result<Vec<RecordBatch>> {
        if self.batches.is_empty() {
            return Ok(Vec::new());
        }
        self.sorted(batch_size)
    }

    /// Like [`runs`](Self::runs), with the memory part already sorted by
    /// [`sorted_memory`](Self::sorted_memory) (so a caller that reads the runs twice sorts once).
    pub(crate) fn runs_with(&self, sorted_memory: Vec<RecordBatch>) -> Result<Vec<Run>> {
        if self.pending.is_some() {
            // Its rows are in neither part yet: reading on would leave them out.
            return Err(Error::invalid("write buffer", "runs read while a spill is being written (settle first)"));
        }
        let mut runs: Vec<Run> = Vec::new();
        for run in &self.spilled {
            runs.push(Box::new(SpillReader::open(&run.path)?));
        }
        if !sorted_memory.is_empty() {
            runs.push(Box::new(sorted_memory.into_iter().map(Ok)));
        }
        Ok(runs)
    }

    /// Drops everything buffered (after a successful flush, which settled any spill first: its runs were
    /// read whole, see [`runs_with`](Self::runs_with)): memory, and the spilled files.
    pub(crate) fn clear(&mut self) {
        for run in self.spilled.drain(..) {
            // Scratch data: a failed removal leaves a file in the temporary directory, removed with it.
            let _ = std::fs::remove_file(&run.path);
        }
        self.spilled_bytes = 0;
        self.batches.clear();
        self.bytes = 0;
    }

    /// Takes the most recently pushed batch back out (a write that was not accepted).
    pub(crate) fn pop_last(&mut self) {
        if let Some(b) = self.batches.pop() {
            self.bytes = self.bytes.saturating_sub(batch_bytes(&b));
        }
    }

    /// The memory part sorted by key then sequence number, in batches of `batch_size`.
    fn sorted(&self, batch_size: usize) -> Result<Vec<RecordBatch>> {
        sort_batches(&self.layout, &self.batches, batch_size)
    }
}

impl Drop for WriteBuffer {
    fn drop(&mut self) {
        // The spill thread writes into the scratch directory, which goes with the buffer.
        let _ = self.settle();
    }
}

/// The memory part sorted by key then sequence number, in batches of `batch_size`. Measured: concatenating
/// first and gathering with `take` beats gathering across the buffered batches with `interleave`, whose
/// per-row source lookup dominated ingestion profiles.
fn sort_batches(layout: &KeyValueLayout, batches: &[RecordBatch], batch_size: usize) -> Result<Vec<RecordBatch>> {
    let k = layout.key_arity();
    let sort_err = |e: arrow_schema::ArrowError| Error::internal_from("sort write buffer", e);
    let batch = arrow_select::concat::concat_batches(&layout.file_schema, batches).map_err(sort_err)?;
    let mut fields: Vec<SortField> = layout.key_fields.iter().map(|f| SortField::new(to_arrow(&f.data_type))).collect();
    fields.push(SortField::new(arrow_schema::DataType::Int64));
    let converter = RowConverter::new(fields).map_err(sort_err)?;
    let mut cols: Vec<ArrayRef> = batch.columns()[..k].to_vec();
    cols.push(batch.column(layout.seq_index()).clone());
    let rows: Rows = converter.convert_columns(&cols).map_err(sort_err)?;
    let step = batch_size.max(1);
    let slices = |b: &RecordBatch| -> Vec<RecordBatch> {
        (0..b.num_rows()).step_by(step).map(|o| b.slice(o, step.min(b.num_rows() - o))).collect()
    };
    if (1..rows.num_rows()).all(|i| rows.row(i - 1) <= rows.row(i)) {
        // Rows written in key order (time-ordered keys, a sorted load) need no gather.
        return Ok(slices(&batch));
    }
    let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
    order.sort_unstable_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
    let indices = arrow_array::UInt32Array::from(order);
    let sorted = arrow_select::take::take_record_batch(&batch, &indices).map_err(sort_err)?;
    Ok(slices(&sorted))
}

/// Bytes of rows a spilled run's batch holds at most: a flush merges every spilled run at once, holding a
/// batch of each (up to `local-sort.max-num-file-handles` of them, 128 by default). With batches of the
/// read's `batch_size` rows (8,192 rows of issue 21's table, some 2 MB) that was 230 MB at a 4M-row load's
/// flush, a term set by the number of runs rather than by `write-buffer-size`.
const SPILL_BATCH_BYTES: u64 = 256 << 10;

/// Rows per batch of a spilled run: [`SPILL_BATCH_BYTES`] of the rows being spilled (`bytes` in all), at most
/// `batch_size`, at least 64.
fn spill_batch_rows(batches: &[RecordBatch], bytes: u64, batch_size: usize) -> usize {
    let rows = batches.iter().map(RecordBatch::num_rows).sum::<usize>().max(1) as u64;
    let row_bytes = (bytes / rows).max(1);
    usize::try_from(SPILL_BATCH_BYTES / row_bytes).unwrap_or(usize::MAX).clamp(64, batch_size.max(64))
}

/// Writes `batches` sorted, as one run in an IPC file at `path` (removed again if that fails).
fn write_run(
    layout: &KeyValueLayout,
    batches: &[RecordBatch],
    batch_size: usize,
    path: PathBuf,
    settings: &SpillSettings,
) -> Result<SpilledRun> {
    let _span =
        tracing::debug_span!("spill_write_buffer", rows = batches.iter().map(RecordBatch::num_rows).sum::<usize>())
            .entered();
    let written = write_ipc(layout, &sort_batches(layout, batches, batch_size)?, &path, settings);
    match written {
        Ok(bytes) => Ok(SpilledRun { path, bytes }),
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            Err(e)
        }
    }
}

/// Writes sorted batches as an IPC file; its size.
fn write_ipc(
    layout: &KeyValueLayout,
    sorted: &[RecordBatch],
    path: &std::path::Path,
    settings: &SpillSettings,
) -> Result<u64> {
    let shown = path.display().to_string();
    let file = File::create(path).map_err(|e| Error::io(&shown, e))?;
    let compression = match settings.compression.as_str() {
        "zstd" => Some(CompressionType::ZSTD),
        "lz4" => Some(CompressionType::LZ4_FRAME),
        _ => None,
    };
    let ipc_err = |e: arrow_schema::ArrowError| Error::invalid_from(format!("spill file {shown}"), e);
    let options = IpcWriteOptions::default().try_with_compression(compression).map_err(ipc_err)?;
    let mut w =
        FileWriter::try_new_with_options(BufWriter::new(file), &layout.file_schema, options).map_err(ipc_err)?;
    for b in sorted {
        w.write(b).map_err(ipc_err)?;
    }
    w.finish().map_err(ipc_err)?;
    Ok(std::fs::metadata(path).map_err(|e| Error::io(&shown, e))?.len())
}

/// Reads a spilled run back batch by batch.
struct SpillReader {
    path: String,
    reader: FileReader<BufReader<File>>,
}

impl SpillReader {
    fn open(path: &std::path::Path) -> Result<Self> {
        let shown = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::io(&shown, e))?;
        let reader = FileReader::try_new(BufReader::new(file), None)
            .map_err(|e| Error::corrupt_file(shown.clone(), e.to_string()))?;
        Ok(SpillReader { path: shown, reader })
    }
}

impl Iterator for SpillReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let path = &self.path;
        self.reader.next().map(|r| r.map_err(|e| Error::corrupt_file(path.clone(), e.to_string())))
    }
}

/// Bytes a batch holds, counting only the part of shared buffers it uses (a slice of a large batch must
/// not count as the whole batch, or every write would look like a full buffer).
fn batch_bytes(b: &RecordBatch) -> u64 {
    b.columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap_or_else(|_| c.get_array_memory_size()) as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::{Int64Array, Int8Array, StringArray};
    use strata_spec::DataType;

    fn layout() -> Arc<KeyValueLayout> {
        let schema = crate::test_util::schema("s", DataType::string());
        Arc::new(KeyValueLayout::new(&schema).unwrap())
    }

    /// Rows (key, seq) in the file layout: key, sequence, kind, then the value columns.
    fn batch(layout: &KeyValueLayout, rows: &[(i64, i64)]) -> RecordBatch {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(Int8Array::from(vec![0i8; rows.len()])),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| format!("v{}", r.1)))),
        ];
        RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap()
    }

    /// A spilled run's batches hold about [`SPILL_BATCH_BYTES`] whatever the rows' width, within
    /// 64..=batch_size rows: a flush merging many runs holds one such batch of each.
    #[test]
    fn spilled_batches_are_bounded_by_bytes() {
        let layout = layout();
        let rows: Vec<(i64, i64)> = (0..10_000).map(|i| (i, i)).collect();
        let b = batch(&layout, &rows);
        let bytes = batch_bytes(&b);
        let per_row = bytes / 10_000;
        let n = spill_batch_rows(std::slice::from_ref(&b), bytes, 1 << 20);
        assert!((n as u64 * per_row).abs_diff(SPILL_BATCH_BYTES) <= per_row, "{n} rows of {per_row} bytes");
        assert_eq!(spill_batch_rows(std::slice::from_ref(&b), bytes, 100), 100, "never above the batch size");
        assert_eq!(spill_batch_rows(std::slice::from_ref(&b), 1 << 40, 8192), 64, "never below 64 rows");
        assert_eq!(spill_batch_rows(&[], 0, 8192), 8192, "nothing to spill: the batch size");
    }

    fn keys_and_seqs(run: Run) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for b in run {
            let b = b.unwrap();
            let k = b.column(0).as_primitive::<Int64Type>();
            let s = b.column(1).as_primitive::<Int64Type>();
            out.extend((0..b.num_rows()).map(|i| (k.value(i), s.value(i))));
        }
        out
    }

    #[test]
    fn spilled_and_memory_runs_are_sorted_and_keep_every_row() {
        for codec in ["none", "lz4", "zstd"] {
            let l = layout();
            let settings = SpillSettings { compression: codec.into(), max_disk_size: u64::MAX, max_runs: 128 };
            let mut buf = WriteBuffer::new(l.clone(), Some(settings));
            let mut all = Vec::new();
            let mut seq = 0i64;
            for round in 0..4 {
                for _ in 0..3 {
                    let rows: Vec<(i64, i64)> = (0..50)
                        .map(|i| {
                            seq += 1;
                            ((i * 37 + round * 11) % 60, seq)
                        })
                        .collect();
                    all.extend(rows.iter().copied());
                    buf.push(batch(&l, &rows));
                }
                if round < 3 {
                    assert!(buf.try_spill(16).unwrap());
                }
            }
            assert!(buf.runs(16).is_err(), "{codec}: runs read past a spill still being written");
            buf.settle().unwrap();
            assert_eq!(buf.spilled_runs(), 3);
            let dir = buf.dir.path().unwrap();
            let runs = buf.runs(16).unwrap();
            assert_eq!(runs.len(), 4, "three spilled runs and the memory run");
            let mut got = Vec::new();
            for run in runs {
                let rows = keys_and_seqs(run);
                assert!(rows.windows(2).all(|w| w[0] < w[1]), "{codec}: a run is not sorted by key, sequence");
                got.extend(rows);
            }
            got.sort_unstable();
            all.sort_unstable();
            assert_eq!(got, all, "{codec}: rows lost or duplicated");
            // Reading the runs keeps them (a failed flush is retried): the same rows come back again.
            let again: usize = buf.runs(16).unwrap().into_iter().map(|r| keys_and_seqs(r).len()).sum();
            assert_eq!(again, all.len(), "{codec}: runs did not survive being read");
            buf.clear();
            assert!(buf.is_empty());
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{codec}: spilled files left after clearing");
            drop(buf);
            assert!(!dir.exists(), "the spill directory outlived its buffer");
        }
    }

    #[test]
    fn a_failed_spill_hands_its_rows_back_in_order() {
        let l = layout();
        let settings = SpillSettings { compression: "none".into(), max_disk_size: u64::MAX, max_runs: 128 };
        let mut buf = WriteBuffer::new(l.clone(), Some(settings));
        let first: Vec<(i64, i64)> = (0..50).map(|i| (i, i)).collect();
        buf.push(batch(&l, &first));
        // A directory where the spill file goes: the spill thread cannot create it.
        std::fs::create_dir_all(buf.dir.path().unwrap().join("run-0.arrow")).unwrap();
        assert!(buf.try_spill(16).unwrap(), "the spill did not start");
        let second: Vec<(i64, i64)> = (50..60).map(|i| (i, i)).collect();
        buf.push(batch(&l, &second));
        assert!(buf.settle().is_err(), "the failed spill was not reported");
        assert_eq!(buf.memory_rows(), 60, "the failed spill's rows did not come back");
        // A write that is not accepted takes back its own batch, not the rows of the failed spill.
        buf.pop_last();
        let rows: Vec<(i64, i64)> = buf.runs(16).unwrap().into_iter().flat_map(keys_and_seqs).collect();
        assert_eq!(rows, first);
    }

    #[test]
    fn spilling_stops_at_its_limits() {
        let l = layout();
        let rows: Vec<(i64, i64)> = (0..100).map(|i| (i, i)).collect();
        let mut buf = WriteBuffer::new(l.clone(), None);
        buf.push(batch(&l, &rows));
        assert!(!buf.try_spill(16).unwrap(), "not spillable");
        let settings = SpillSettings { compression: "none".into(), max_disk_size: 1, max_runs: 128 };
        let mut buf = WriteBuffer::new(l.clone(), Some(settings));
        buf.push(batch(&l, &rows));
        assert!(buf.try_spill(16).unwrap());
        buf.push(batch(&l, &rows));
        assert!(!buf.try_spill(16).unwrap(), "past max disk size");
        let settings = SpillSettings { compression: "none".into(), max_disk_size: u64::MAX, max_runs: 2 };
        let mut buf = WriteBuffer::new(l.clone(), Some(settings));
        buf.push(batch(&l, &rows));
        assert!(buf.try_spill(16).unwrap());
        buf.push(batch(&l, &rows));
        assert!(!buf.try_spill(16).unwrap(), "past max runs");
    }
}
