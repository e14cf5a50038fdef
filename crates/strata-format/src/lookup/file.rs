//! One data file's local lookup file (Paimon's `LookupFile`): the file's keys in arrow-row form (sorted like
//! the file, so a key's index is its row position), a bloom filter over them, and, when rows are asked for,
//! the rows themselves in a local Arrow IPC file of small blocks, so that reading a row decodes one block.
//!
//! The keys live in memory while the file is in use; the cache may move them out ([`LookupFile::spill`]),
//! writing them to the local file when it has none, and read them back on the next probe. Everything local
//! is scratch data: a damaged or missing local file is an error the cache answers by rebuilding from the
//! data file, never a wrong row.

use std::fs::File;
use std::io::BufReader;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, UInt32Array};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use strata_io::FileIO;
use strata_spec::{Error, Result};

use super::bloom::Bloom;
use super::key::{key_positions, KeyEncoder};
use crate::bucket_read::{file_columns, open_data_file};
use crate::file_ref::DataFileRef;
use crate::kv::KeyValueLayout;

/// Name of the key-bytes column, the first of a local lookup file.
const KEY_BYTES: &str = "_KEY_BYTES";

/// Rows per block of a local lookup file holding rows: reading a row decodes one block.
pub(crate) const BLOCK_ROWS: usize = 256;

/// Rows per block of a local file that holds keys only (read back whole).
const KEY_BLOCK_ROWS: usize = 64 * 1024;

/// An open local lookup file, projected to the row columns.
type LocalReader = FileReader<BufReader<File>>;

/// How to build lookup files.
#[derive(Debug, Clone)]
pub struct LookupFileSpec {
    /// Keep every row (file layout) beside the keys: partial-update and aggregation merge with the old
    /// value, and point lookups return it. Without rows only the key, sequence and kind columns are read.
    pub with_rows: bool,
    /// False-positive rate of the bloom filter, `None` for none.
    pub bloom_fpp: Option<f64>,
    /// Codec of the local file (`lookup.cache-spill-compression`).
    pub compression: Option<arrow_ipc::CompressionType>,
}

/// The local part of a lookup file.
struct Local {
    path: PathBuf,
    /// First row position of each block, ascending; the last entry is the row count.
    block_starts: Vec<u64>,
    bytes: u64,
    /// Whether the blocks hold rows beside the key bytes.
    with_rows: bool,
    /// Columns of the file (the key bytes first).
    columns: usize,
}

/// A data file's lookup file; dropping it removes its local file.
pub struct LookupFile {
    keys: Option<BinaryArray>,
    bloom: Option<Bloom>,
    rows: u64,
    local: Option<Local>,
    /// Kept open between reads (the cache bounds how many), so a read does not parse the footer again.
    reader: Option<LocalReader>,
    compression: Option<arrow_ipc::CompressionType>,
    pub(super) last_used: u64,
}

impl Drop for LookupFile {
    fn drop(&mut self) {
        if let Some(l) = &self.local {
            // Local scratch: a failed removal leaves a file in the scratch directory, removed with it.
            let _ = std::fs::remove_file(&l.path);
        }
    }
}

fn ipc_error(path: &std::path::Path) -> impl Fn(arrow_schema::ArrowError) -> Error + '_ {
    move |e| Error::invalid(format!("lookup file {}", path.display()), e.to_string())
}

impl LookupFile {
    /// Reads `file` (with its mapping, without its deletion vector: positions are the file's) into a lookup
    /// file. With rows they go to `local` in blocks of 256 rows; keys only, nothing is written until
    /// the cache spills the keys (`local` is asked for a path only with rows).
    pub fn build(
        io: &dyn FileIO,
        layout: &KeyValueLayout,
        encoder: &KeyEncoder,
        file: &DataFileRef,
        local: impl FnOnce() -> Result<PathBuf>,
        spec: &LookupFileSpec,
    ) -> Result<Self> {
        let _span =
            tracing::debug_span!("build_lookup_file", file = file.meta.file_name, rows = spec.with_rows).entered();
        let name = &file.meta.file_name;
        let corrupt = |e: arrow_schema::ArrowError| Error::corrupt(format!("{name}: {e}"));
        let mut columns = file_columns(layout);
        if !spec.with_rows {
            columns.truncate(layout.key_arity() + 2);
        }
        let batch_rows = if spec.with_rows { BLOCK_ROWS } else { 64 * 1024 };
        let mut file_ref = file.clone();
        file_ref.dv = None;
        let batches = open_data_file(io, &file_ref, columns, false, batch_rows)?;
        let mut built = LookupFile {
            keys: None,
            bloom: None,
            rows: 0,
            local: None,
            reader: None,
            compression: spec.compression,
            last_used: 0,
        };
        let mut keys: Vec<BinaryArray> = Vec::new();
        let mut writer: Option<(FileWriter<std::io::BufWriter<File>>, Vec<u64>)> = None;
        let local = if spec.with_rows { local()? } else { PathBuf::new() };
        if spec.with_rows {
            let out = File::create(&local).map_err(|e| Error::io(local.display().to_string(), e))?;
            // From here on the file is removed again if anything fails (the drop of `LookupFile`).
            let columns = layout.file_schema.fields().len() + 1;
            built.local =
                Some(Local { path: local.clone(), block_starts: vec![0], bytes: 0, with_rows: true, columns });
            let schema = local_schema(Some(&layout.file_schema));
            let options =
                IpcWriteOptions::default().try_with_compression(spec.compression).map_err(ipc_error(&local))?;
            let w = FileWriter::try_new_with_options(std::io::BufWriter::new(out), &schema, options)
                .map_err(ipc_error(&local))?;
            writer = Some((w, vec![0]));
        }
        for b in batches {
            let b = b?;
            let block_keys = encoder.rows(&b).map_err(corrupt)?.try_into_binary().map_err(corrupt)?;
            if let Some((w, starts)) = writer.as_mut() {
                let rows = RecordBatch::try_new(layout.file_schema.clone(), b.columns().to_vec()).map_err(corrupt)?;
                let mut cols: Vec<ArrayRef> = vec![Arc::new(block_keys.clone())];
                cols.extend(rows.columns().iter().cloned());
                let block = RecordBatch::try_new(local_schema(Some(&layout.file_schema)), cols).map_err(corrupt)?;
                w.write(&block).map_err(ipc_error(&local))?;
                let last = starts.last().copied().unwrap_or(0);
                starts.push(last + block.num_rows() as u64);
            }
            built.rows += block_keys.len() as u64;
            keys.push(block_keys);
        }
        if let Some((mut w, starts)) = writer {
            w.finish().map_err(ipc_error(&local))?;
            drop(w);
            let bytes = std::fs::metadata(&local).map_err(|e| Error::io(local.display().to_string(), e))?.len();
            let columns = layout.file_schema.fields().len() + 1;
            built.local = Some(Local { path: local, block_starts: starts, bytes, with_rows: true, columns });
        }
        let keys = concat_keys(&keys)?;
        built.bloom = spec.bloom_fpp.map(|p| Bloom::new(&keys, p));
        built.keys = Some(keys);
        Ok(built)
    }

    /// Bytes held in memory: the keys while resident, the bloom filter and the block offsets.
    pub fn memory_size(&self) -> u64 {
        self.keys.as_ref().map_or(0, |k| k.get_array_memory_size() as u64)
            + self.bloom.as_ref().map_or(0, Bloom::memory_size)
            + self.local.as_ref().map_or(0, |l| (l.block_starts.len() * 8) as u64)
    }

    /// Bytes of the local file (0 without one).
    pub fn disk_size(&self) -> u64 {
        self.local.as_ref().map_or(0, |l| l.bytes)
    }

    /// Whether the keys are in memory.
    pub fn keys_resident(&self) -> bool {
        self.keys.is_some()
    }

    /// Whether the local file is open.
    pub(super) fn reader_open(&self) -> bool {
        self.reader.is_some()
    }

    pub(super) fn close_reader(&mut self) {
        self.reader = None;
    }

    /// False when the bloom filter rules `key` out.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.bloom.as_ref().is_none_or(|b| b.may_contain(key))
    }

    /// The positions of `key`, `None` while the keys are not resident.
    pub fn positions(&self, key: &[u8]) -> Option<Range<usize>> {
        self.keys.as_ref().map(|k| key_positions(k, key))
    }

    /// Moves the keys out of memory, first writing them to `path` when there is no local file; the bytes
    /// written (0 when the local file already held them).
    pub(super) fn spill(&mut self, path: impl FnOnce() -> Result<PathBuf>) -> Result<u64> {
        let Some(keys) = self.keys.as_ref() else { return Ok(0) };
        if self.local.is_some() {
            self.keys = None;
            return Ok(0);
        }
        let path = path()?;
        let mut local = Local { path: path.clone(), block_starts: vec![0], bytes: 0, with_rows: false, columns: 1 };
        let schema = local_schema(None);
        let err = ipc_error(&path);
        let written = (|| {
            let out = File::create(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
            let options = IpcWriteOptions::default().try_with_compression(self.compression).map_err(&err)?;
            let mut w =
                FileWriter::try_new_with_options(std::io::BufWriter::new(out), &schema, options).map_err(&err)?;
            let mut offset = 0;
            while offset < keys.len() {
                let n = KEY_BLOCK_ROWS.min(keys.len() - offset);
                let block = RecordBatch::try_new(schema.clone(), vec![Arc::new(keys.slice(offset, n)) as ArrayRef])
                    .map_err(&err)?;
                w.write(&block).map_err(&err)?;
                offset += n;
                local.block_starts.push(offset as u64);
            }
            w.finish().map_err(&err)?;
            drop(w);
            std::fs::metadata(&path).map_err(|e| Error::io(path.display().to_string(), e)).map(|m| m.len())
        })();
        match written {
            Ok(bytes) => {
                local.bytes = bytes;
                self.local = Some(local);
                self.keys = None;
                Ok(bytes)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(e)
            }
        }
    }

    /// Reads the keys back from the local file.
    pub(super) fn reload_keys(&mut self) -> Result<()> {
        if self.keys.is_some() {
            return Ok(());
        }
        let local =
            self.local.as_ref().ok_or_else(|| Error::invalid("lookup file", "keys neither in memory nor local"))?;
        let shown = local.path.display().to_string();
        let bad = |m: String| Error::Corrupt { path: shown.clone(), message: m };
        let file = File::open(&local.path).map_err(|e| Error::io(&shown, e))?;
        let reader = FileReader::try_new(BufReader::new(file), Some(vec![0])).map_err(|e| bad(e.to_string()))?;
        let mut pieces = Vec::new();
        for b in reader {
            let b = b.map_err(|e| bad(e.to_string()))?;
            let keys = b
                .column(0)
                .as_any()
                .downcast_ref::<BinaryArray>()
                .ok_or_else(|| bad("key bytes are not binary".into()))?;
            pieces.push(keys.clone());
        }
        let keys = concat_keys(&pieces)?;
        if keys.len() as u64 != self.rows {
            return Err(bad(format!("holds {} keys, not {}", keys.len(), self.rows)));
        }
        self.keys = Some(keys);
        Ok(())
    }

    /// Opens the local file for row reads (a no-op when open).
    pub(super) fn open_reader(&mut self) -> Result<()> {
        if self.reader.is_some() {
            return Ok(());
        }
        let local = self
            .local
            .as_ref()
            .filter(|l| l.with_rows)
            .ok_or_else(|| Error::invalid("lookup file", "holds no rows"))?;
        let shown = local.path.display().to_string();
        let file = File::open(&local.path).map_err(|e| Error::io(&shown, e))?;
        let reader = FileReader::try_new(BufReader::new(file), Some((1..local.columns).collect()))
            .map_err(|e| Error::Corrupt { path: shown, message: e.to_string() })?;
        self.reader = Some(reader);
        Ok(())
    }

    /// The rows at `positions` (ascending) as batches of `schema` (the file layout), through the open
    /// reader; the rows and the number of blocks read.
    pub(super) fn read_rows(&mut self, positions: &[u64], schema: &SchemaRef) -> Result<(RecordBatch, u64)> {
        let (Some(local), Some(reader)) = (self.local.as_ref(), self.reader.as_mut()) else {
            return Err(Error::invalid("lookup file", "not open for row reads"));
        };
        let shown = local.path.display().to_string();
        let bad = |m: String| Error::Corrupt { path: shown.clone(), message: m };
        let starts = &local.block_starts;
        let block_of = |p: u64| starts.partition_point(|&s| s <= p).saturating_sub(1);
        let (Some(&first), Some(&last)) = (positions.first(), positions.last()) else {
            return Ok((RecordBatch::new_empty(schema.clone()), 0));
        };
        let mut pieces = Vec::new();
        for block in block_of(first)..=block_of(last) {
            let (Some(&start), Some(&end)) = (starts.get(block), starts.get(block + 1)) else {
                return Err(bad(format!(
                    "position {last} is past the file's {} blocks",
                    starts.len().saturating_sub(1)
                )));
            };
            reader.set_index(block).map_err(|e| bad(e.to_string()))?;
            let batch = reader
                .next()
                .ok_or_else(|| bad(format!("block {block} is missing")))?
                .map_err(|e| bad(e.to_string()))?;
            if batch.num_rows() as u64 != end - start {
                return Err(bad(format!("block {block} holds {} rows, not {}", batch.num_rows(), end - start)));
            }
            let idx: Vec<u32> =
                positions.iter().filter(|&&p| p >= start && p < end).map(|&p| (p - start) as u32).collect();
            let taken = arrow_select::take::take_record_batch(&batch, &UInt32Array::from(idx))
                .map_err(|e| bad(e.to_string()))?;
            pieces
                .push(RecordBatch::try_new(schema.clone(), taken.columns().to_vec()).map_err(|e| bad(e.to_string()))?);
        }
        let rows = arrow_select::concat::concat_batches(schema, &pieces).map_err(|e| bad(e.to_string()))?;
        Ok((rows, pieces.len() as u64))
    }
}

/// The schema of a local file: the key bytes, then the row columns when it holds rows.
fn local_schema(rows: Option<&SchemaRef>) -> SchemaRef {
    let mut fields = vec![Field::new(KEY_BYTES, ArrowType::Binary, false)];
    if let Some(rows) = rows {
        fields.extend(rows.fields().iter().map(|f| f.as_ref().clone()));
    }
    Arc::new(Schema::new(fields))
}

/// The keys of `pieces` in one array of its own: arrays read from an IPC file share their block's buffer,
/// which must not stay in memory with them.
fn concat_keys(pieces: &[BinaryArray]) -> Result<BinaryArray> {
    let rows = pieces.iter().map(Array::len).sum();
    let bytes = pieces.iter().map(|p| p.value_data().len()).sum();
    let mut out = arrow_array::builder::BinaryBuilder::with_capacity(rows, bytes);
    for p in pieces {
        if p.null_count() > 0 {
            return Err(Error::corrupt("lookup keys hold a null"));
        }
        for v in p.iter().flatten() {
            out.append_value(v);
        }
    }
    Ok(out.finish())
}
