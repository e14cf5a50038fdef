//! One data file's local lookup file (Paimon's `LookupFile`): the file's keys in arrow-row form (sorted like
//! the file, so a key's index is its row position), a bloom filter over them, and, when rows are asked for,
//! the rows themselves in a local row file of small groups (`rows`), so that reading a row decodes one group.
//!
//! The keys live in memory while the file is in use; the cache may move them out ([`LookupFile::spill`]),
//! writing them to a local key file (Arrow IPC), and read them back on the next probe. Everything local
//! is scratch data: a damaged or missing local file is an error the cache answers by rebuilding from the
//! data file, never a wrong row.

use std::fs::File;
use std::io::BufReader;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use strata_io::FileIO;
use strata_spec::{Error, Result};

use super::bloom::Bloom;
use super::groups::GroupCache;
use super::key::{key_positions, key_positions_from, KeyEncoder};
use super::packed::PackedRow;
use super::rows::{RowCodec, RowFile, RowFileWriter, RowForm};
use crate::layout::kv::KeyValueLayout;
use crate::read::bucket::{file_columns, FileRead};
use crate::read::file_ref::DataFileRef;

/// Keys of one lookup at most this many rows apart, on average, are searched by stepping from the previous one.
const DENSE_GAP: usize = 256;

/// Name of the key-bytes column of a local key file.
const KEY_BYTES: &str = "_KEY_BYTES";

/// Rows per block of a local key file (read back whole).
const KEY_BLOCK_ROWS: usize = 64 * 1024;

/// How to build lookup files.
#[derive(Debug, Clone)]
pub struct LookupFileSpec {
    /// Keep every row (file layout) beside the keys: partial-update and aggregation merge with the old
    /// value, and point lookups return it. Without rows only the key, sequence and kind columns are read.
    pub with_rows: bool,
    /// False-positive rate of the bloom filter, `None` for none.
    pub bloom_fpp: Option<f64>,
    /// Codec of the local files (`lookup.cache-spill-compression`).
    pub compression: Option<arrow_ipc::CompressionType>,
}

/// A local file holding the keys, written when the cache moves them out of memory.
struct KeyFile {
    path: PathBuf,
    bytes: u64,
}

/// A data file's lookup file; dropping it removes its local files.
pub struct LookupFile {
    keys: Option<BinaryArray>,
    bloom: Option<Bloom>,
    rows: u64,
    /// The rows, when the spec asked for them, with the form they are written in.
    row_file: Option<(RowFile, RowForm)>,
    key_file: Option<KeyFile>,
    /// The row file kept open between reads (the cache bounds how many are open).
    reader: Option<File>,
    compression: Option<arrow_ipc::CompressionType>,
    pub(super) last_used: u64,
    /// Its id in the cache holding it (its groups are cached under it; a rebuilt file gets a new one).
    pub(super) id: u64,
}

impl Drop for LookupFile {
    fn drop(&mut self) {
        // Local scratch: a failed removal leaves a file in the scratch directory, removed with it.
        if let Some((r, _)) = &self.row_file {
            let _ = std::fs::remove_file(&r.path);
        }
        if let Some(k) = &self.key_file {
            let _ = std::fs::remove_file(&k.path);
        }
    }
}

fn ipc_error(path: &std::path::Path) -> impl Fn(arrow_schema::ArrowError) -> Error + '_ {
    move |e| Error::invalid(format!("lookup file {}", path.display()), e.to_string())
}

impl LookupFile {
    /// Reads `file` (with its mapping, without its deletion vector: positions are the file's) into a lookup
    /// file. With rows they go to `local`, in groups of a few rows; keys only, nothing is written until
    /// the cache spills the keys (`local` is asked for a path only with rows).
    pub fn build(
        io: &Arc<dyn FileIO>,
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
        let mut file_ref = file.clone();
        file_ref.dv = None;
        let batch_rows = if spec.with_rows { 8 * 1024 } else { 64 * 1024 };
        let batches = FileRead::new(columns).batch_size(batch_rows).open(io, &file_ref)?;
        let mut built = LookupFile {
            keys: None,
            bloom: None,
            rows: 0,
            row_file: None,
            key_file: None,
            reader: None,
            compression: spec.compression,
            last_used: 0,
            id: 0,
        };
        let mut writer = match spec.with_rows {
            true => {
                let form = RowForm::of(&layout.file_schema)?;
                // A build that fails (or panics) from here on removes the partial file: the writer's drop.
                Some((RowFileWriter::create(local()?, RowCodec::of(spec.compression))?, form))
            }
            false => None,
        };
        let mut keys: Vec<BinaryArray> = Vec::new();
        let written = (|| -> Result<()> {
            for b in batches {
                let b = b?;
                let block_keys = encoder.rows(&b).map_err(corrupt)?.try_into_binary().map_err(corrupt)?;
                if let Some((w, form)) = writer.as_mut() {
                    w.append(form, b.columns())?;
                }
                built.rows += block_keys.len() as u64;
                keys.push(block_keys);
            }
            Ok(())
        })();
        written?;
        if let Some((w, form)) = writer {
            built.row_file = Some((w.finish()?, form));
        }
        let keys = concat_keys(&keys)?;
        built.bloom = spec.bloom_fpp.map(|p| Bloom::new(&keys, p));
        built.keys = Some(keys);
        Ok(built)
    }

    /// Bytes held in memory: the keys while resident, the bloom filter and where the row groups lie.
    pub fn memory_size(&self) -> u64 {
        self.keys.as_ref().map_or(0, |k| k.get_array_memory_size() as u64)
            + self.bloom.as_ref().map_or(0, Bloom::memory_size)
            + self.row_file.as_ref().map_or(0, |(r, _)| r.memory_size())
    }

    /// Bytes of the local files (0 without one).
    pub fn disk_size(&self) -> u64 {
        self.row_file.as_ref().map_or(0, |(r, _)| r.bytes) + self.key_file.as_ref().map_or(0, |k| k.bytes)
    }

    /// Whether a local key file holds the keys (moving them out of memory then writes nothing).
    pub(super) fn keys_on_disk(&self) -> bool {
        self.key_file.is_some()
    }

    /// Whether the keys are in memory.
    pub fn keys_resident(&self) -> bool {
        self.keys.is_some()
    }

    /// Whether the local row file is open.
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

    /// The positions of each of `sorted` (keys in ascending order), each search starting where the previous
    /// key's stretch began; `None` while the keys are not resident. Keys the bloom filter rules out get an
    /// empty range, and `bloom_skips` counts them.
    pub(super) fn positions_sorted(&self, sorted: &[&[u8]], bloom_skips: &mut u64) -> Option<Vec<Range<usize>>> {
        let keys = self.keys.as_ref()?;
        // Stepping from the previous key pays where keys lie close together (many keys in one file); far
        // apart, a search of what is left of the file costs fewer comparisons (each one a cache miss).
        let dense = keys.len() / sorted.len().max(1) <= DENSE_GAP;
        let mut from = 0;
        Some(
            sorted
                .iter()
                .map(|key| {
                    if !self.may_contain(key) {
                        *bloom_skips += 1;
                        return from..from;
                    }
                    let found = if dense { key_positions_from(keys, key, from) } else { key_positions(keys, key) };
                    from = found.start;
                    found
                })
                .collect(),
        )
    }

    /// Moves the keys out of memory, first writing them to `path` when no local key file holds them; the
    /// bytes written (0 when one already did).
    pub(super) fn spill(&mut self, path: impl FnOnce() -> Result<PathBuf>) -> Result<u64> {
        let Some(keys) = self.keys.as_ref() else { return Ok(0) };
        if self.key_file.is_some() {
            self.keys = None;
            return Ok(0);
        }
        let path = path()?;
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
            }
            w.finish().map_err(&err)?;
            drop(w);
            std::fs::metadata(&path).map_err(|e| Error::io(path.display().to_string(), e)).map(|m| m.len())
        })();
        match written {
            Ok(bytes) => {
                self.key_file = Some(KeyFile { path: path.clone(), bytes });
                self.keys = None;
                Ok(bytes)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(e)
            }
        }
    }

    /// Reads the keys back from the local key file.
    pub(super) fn reload_keys(&mut self) -> Result<()> {
        if self.keys.is_some() {
            return Ok(());
        }
        let local =
            self.key_file.as_ref().ok_or_else(|| Error::invalid("lookup file", "keys neither in memory nor local"))?;
        let shown = local.path.display().to_string();
        let bad = |m: String| Error::corrupt_file(shown.clone(), m);
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

    /// Opens the local row file for row reads (a no-op when open).
    pub(super) fn open_reader(&mut self) -> Result<()> {
        if self.reader.is_some() {
            return Ok(());
        }
        let (rows, _) = self.row_file.as_ref().ok_or_else(|| Error::invalid("lookup file", "holds no rows"))?;
        let file = File::open(&rows.path).map_err(|e| Error::io(rows.path.display().to_string(), e))?;
        self.reader = Some(file);
        Ok(())
    }

    /// The rows at `positions` (ascending) as a batch of `schema` (the file layout), through the open
    /// reader or from `groups`; the rows and the number of row groups read from the local file.
    pub(super) fn read_rows(
        &mut self,
        positions: &[u64],
        schema: &SchemaRef,
        groups: &mut GroupCache,
    ) -> Result<(RecordBatch, u64)> {
        let (Some((rows, form)), Some(file)) = (self.row_file.as_ref(), self.reader.as_ref()) else {
            return Err(Error::invalid("lookup file", "not open for row reads"));
        };
        if positions.is_empty() {
            return Ok((RecordBatch::new_empty(schema.clone()), 0));
        }
        rows.read(file, positions, form, schema, Some((groups, self.id)))
    }

    /// Row `position` in packed form (`None` when the rows are not packed), through the open reader or from
    /// `groups`; and how many groups were read from the local file.
    pub(super) fn packed_row(&mut self, position: u64, groups: &mut GroupCache) -> Result<(Option<PackedRow>, u64)> {
        let (Some((rows, form)), Some(file)) = (self.row_file.as_ref(), self.reader.as_ref()) else {
            return Err(Error::invalid("lookup file", "not open for row reads"));
        };
        let (row, read) = rows.packed_row(file, position, form, Some((groups, self.id)))?;
        Ok((row, u64::from(read)))
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
