//! Lookup levels (Paimon's `LookupLevels`): for a key, the newest live copy in the levels at or below a
//! given level: its file and row position, and the record itself when the merge engine needs the old value.
//!
//! Per-file indexes (the file's keys in arrow-row form, which are sorted like the file) are built lazily on
//! first use, with a bloom filter that answers most misses without the index. They are cached in memory up
//! to `lookup.cache-max-memory-size`; the least recently used move to a local cache directory (up to
//! `lookup.cache-max-disk-size`, then they are dropped and rebuilt from the data file when needed), and all
//! go when their file leaves the levels. Deleted rows are skipped by checking
//! the bucket's current deletion vectors at lookup time, so an index built before a deletion never returns
//! the deleted row (the failure behind Paimon issue 8204).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use strata_dv::BucketedDvMaintainer;
use strata_format::arrow_types::{array_of, to_arrow};
use strata_format::bucket_read::{file_columns, open_data_file};
use strata_format::KeyValueLayout;
use strata_io::{join, FileIO};
use strata_spec::{BinaryRow, DataFileMeta, DataType, Datum, Error, Result};

use crate::levels::Levels;

/// Name of the key-bytes column in a lookup cache file.
const KEY_BYTES: &str = "_KEY_BYTES";

/// The positions of `key` in `keys` (arrow-row bytes in ascending order, as a sorted file holds them): one
/// stretch, empty when the key is absent.
pub fn key_positions(keys: &BinaryArray, key: &[u8]) -> std::ops::Range<usize> {
    let (mut first, mut upper) = (0usize, keys.len());
    while first < upper {
        let mid = (first + upper) / 2;
        if keys.value(mid) < key {
            first = mid + 1;
        } else {
            upper = mid;
        }
    }
    let mut end = first;
    while end < keys.len() && keys.value(end) == key {
        end += 1;
    }
    first..end
}

/// A table's primary key in arrow-row bytes (the layout's key columns, in order): bytes compare like the
/// keys, so sorted files hold their keys in byte order and key ranges are byte ranges.
pub struct KeyEncoder {
    converter: RowConverter,
    key_types: Vec<DataType>,
    arity: usize,
}

impl KeyEncoder {
    /// The encoder of `layout`'s key.
    pub fn new(layout: &KeyValueLayout) -> Result<Self> {
        let fields: Vec<SortField> = layout.key_fields.iter().map(|f| SortField::new(to_arrow(&f.data_type))).collect();
        let converter = RowConverter::new(fields).map_err(|e| Error::invalid("key columns", e.to_string()))?;
        Ok(KeyEncoder {
            converter,
            key_types: layout.key_fields.iter().map(|f| f.data_type).collect(),
            arity: layout.key_arity(),
        })
    }

    /// The bytes of one key (a value per key column).
    pub fn encode(&self, key: &[Option<Datum>]) -> Result<Vec<u8>> {
        let cols = self
            .key_types
            .iter()
            .zip(key)
            .map(|(t, v)| array_of(t, std::slice::from_ref(v)))
            .collect::<Result<Vec<_>>>()?;
        let rows = self.converter.convert_columns(&cols).map_err(|e| Error::invalid("key", e.to_string()))?;
        Ok(rows.row(0).as_ref().to_vec())
    }

    /// The bytes of a key stored as a binary row (a file's min or max key).
    pub fn encode_row(&self, row: &BinaryRow) -> Result<Vec<u8>> {
        self.encode(&row.to_datums(&self.key_types)?)
    }

    /// The keys of `batch`'s rows (file layout: the key columns come first).
    pub fn rows(&self, batch: &RecordBatch) -> std::result::Result<Rows, arrow_schema::ArrowError> {
        self.converter.convert_columns(&batch.columns()[..self.arity])
    }

    /// No keys.
    pub fn empty_rows(&self) -> Rows {
        self.converter.empty_rows(0, 0)
    }
}

/// Where a key's older copy is.
#[derive(Debug, Clone)]
pub struct LookupHit {
    /// The data file.
    pub file_name: String,
    /// Row position in the file.
    pub position: u64,
    /// The record (one row, file layout) when values were asked for.
    pub record: Option<RecordBatch>,
}

/// A file's lookup index: its keys in arrow-row form (sorted like the file, so a row's index is its
/// position), and the rows themselves when values are needed.
struct FileIndex {
    keys: BinaryArray,
    batch: Option<RecordBatch>,
}

impl FileIndex {
    fn memory_size(&self) -> u64 {
        (self.keys.get_array_memory_size() + self.batch.as_ref().map_or(0, RecordBatch::get_array_memory_size)) as u64
    }
}

/// Bounds of the lookup cache (Paimon's `lookup.cache-max-memory-size`, `lookup.cache-max-disk-size`,
/// `lookup.cache.bloom.filter.*`), per bucket writer.
#[derive(Debug, Clone)]
pub struct LookupCacheOptions {
    /// Bytes of indexes kept in memory; least recently used ones beyond it move to local disk.
    pub max_memory: u64,
    /// Bytes of indexes kept on local disk; beyond it, evicted indexes are dropped and rebuilt when needed.
    pub max_disk: u64,
    /// False-positive rate of the per-file bloom filters, `None` without bloom filters.
    pub bloom_fpp: Option<f64>,
}

impl Default for LookupCacheOptions {
    fn default() -> Self {
        LookupCacheOptions { max_memory: 256 << 20, max_disk: u64::MAX, bloom_fpp: Some(0.05) }
    }
}

/// A bloom filter over a file's keys: a miss answers a lookup without loading the file's index.
pub struct Bloom {
    bits: Vec<u64>,
    hashes: u32,
}

impl Bloom {
    /// Bytes the filter holds.
    pub fn memory_size(&self) -> u64 {
        (self.bits.len() * 8) as u64
    }

    /// A filter over `keys` (arrow-row bytes) with false-positive rate `fpp` (clamped to 1e-6..0.5).
    pub fn new(keys: &BinaryArray, fpp: f64) -> Self {
        let n = keys.len().max(1) as f64;
        let fpp = fpp.clamp(1e-6, 0.5);
        let m = (-(n * fpp.ln()) / (std::f64::consts::LN_2 * std::f64::consts::LN_2)).ceil().max(64.0) as usize;
        let hashes = ((m as f64 / n) * std::f64::consts::LN_2).round().clamp(1.0, 16.0) as u32;
        let mut b = Bloom { bits: vec![0; m.div_ceil(64)], hashes };
        for k in keys.iter().flatten() {
            b.insert(k);
        }
        b
    }

    /// Two hashes of the key (FNV-1a, then a SplitMix64 finalizer of it), combined as h1 + i * h2
    /// (Kirsch and Mitzenmacher).
    fn hashes(key: &[u8]) -> (u64, u64) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in key {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (h, (z ^ (z >> 31)) | 1)
    }

    fn insert(&mut self, key: &[u8]) {
        let (h1, h2) = Self::hashes(key);
        let m = (self.bits.len() * 64) as u64;
        for i in 0..u64::from(self.hashes) {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % m;
            self.bits[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }

    /// False when `key` is certainly not among the keys.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let (h1, h2) = Self::hashes(key);
        let m = (self.bits.len() * 64) as u64;
        (0..u64::from(self.hashes)).all(|i| {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % m;
            self.bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0
        })
    }
}

/// Where a file's index is.
enum Cached {
    Memory(Arc<FileIndex>),
    /// In a local IPC file: a `_KEY_BYTES` column, then the record columns when values are kept.
    Disk {
        path: PathBuf,
        bytes: u64,
    },
    /// Evicted with no disk room: rebuilt from the data file when needed again.
    Dropped,
}

struct CacheEntry {
    index: Cached,
    bloom: Option<Bloom>,
    last_used: u64,
}

/// Lazily built, cached per-file key indexes of one bucket.
pub struct LookupLevels {
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    bucket_dir: String,
    need_values: bool,
    keys: KeyEncoder,
    options: LookupCacheOptions,
    entries: HashMap<String, CacheEntry>,
    ranges: HashMap<String, (Vec<u8>, Vec<u8>)>,
    memory: u64,
    disk: u64,
    clock: u64,
    dir: Option<tempfile::TempDir>,
    stats: LookupStats,
}

/// Counters of a bucket's lookups, for tests and tracing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookupStats {
    /// Indexes built by reading a data file.
    pub built: u64,
    /// Indexes moved from memory to local disk.
    pub spilled: u64,
    /// Indexes loaded back from local disk.
    pub reloaded: u64,
    /// Lookups a bloom filter answered without an index.
    pub bloom_skips: u64,
}

impl LookupLevels {
    /// Lookups into files of `bucket_dir`; `need_values` keeps records for partial-update and aggregation.
    pub fn new(
        io: Arc<dyn FileIO>,
        layout: Arc<KeyValueLayout>,
        bucket_dir: String,
        need_values: bool,
        options: LookupCacheOptions,
    ) -> Result<Self> {
        Ok(LookupLevels {
            keys: KeyEncoder::new(&layout)?,
            io,
            layout,
            bucket_dir,
            need_values,
            options,
            entries: HashMap::new(),
            ranges: HashMap::new(),
            memory: 0,
            disk: 0,
            clock: 0,
            dir: None,
            stats: LookupStats::default(),
        })
    }

    /// Forgets a file that left the levels (its index, on disk too).
    pub fn drop_file(&mut self, name: &str) {
        if let Some(e) = self.entries.remove(name) {
            self.forget(e.index);
        }
        self.ranges.remove(name);
    }

    fn forget(&mut self, index: Cached) {
        match index {
            Cached::Memory(ix) => self.memory = self.memory.saturating_sub(ix.memory_size()),
            Cached::Disk { path, bytes } => {
                self.disk = self.disk.saturating_sub(bytes);
                // Local scratch: a failed removal leaves a file in the cache directory, removed with it.
                let _ = std::fs::remove_file(path);
            }
            Cached::Dropped => {}
        }
    }

    /// Number of cached file indexes (in memory or on disk).
    pub fn cached(&self) -> usize {
        self.entries.values().filter(|e| !matches!(e.index, Cached::Dropped)).count()
    }

    /// Bytes of indexes in memory.
    pub fn memory_bytes(&self) -> u64 {
        self.memory
    }

    /// What the cache has done so far.
    pub fn stats(&self) -> LookupStats {
        self.stats
    }

    fn range(&mut self, f: &DataFileMeta) -> Result<&(Vec<u8>, Vec<u8>)> {
        if !self.ranges.contains_key(&f.file_name) {
            let r = (self.keys.encode_row(&f.min_key)?, self.keys.encode_row(&f.max_key)?);
            self.ranges.insert(f.file_name.clone(), r);
        }
        self.ranges.get(&f.file_name).ok_or_else(|| Error::corrupt("lookup range vanished"))
    }

    /// Reads a data file into an index (and its bloom filter).
    fn build(&mut self, f: &DataFileMeta) -> Result<(FileIndex, Option<Bloom>)> {
        let _span = tracing::debug_span!("build_lookup_index", file = f.file_name).entered();
        self.stats.built += 1;
        let file = self.layout.file_ref(join(&self.bucket_dir, &f.file_name), f.clone(), None)?;
        let mut columns = file_columns(&self.layout);
        if !self.need_values {
            columns.truncate(self.layout.key_arity() + 2);
        }
        let batches: Vec<RecordBatch> =
            open_data_file(self.io.as_ref(), &file, columns, false, 64 * 1024)?.collect::<Result<_>>()?;
        let batch = match batches.first() {
            None => None,
            Some(first) => Some(
                arrow_select::concat::concat_batches(&first.schema(), &batches)
                    .map_err(|e| Error::corrupt(format!("{}: {e}", f.file_name)))?,
            ),
        };
        let rows = match &batch {
            Some(b) => self.keys.rows(b).map_err(|e| Error::corrupt(format!("{}: {e}", f.file_name)))?,
            None => self.keys.empty_rows(),
        };
        let keys = rows
            .try_into_binary()
            .map_err(|e| Error::invalid(format!("lookup index of {}", f.file_name), e.to_string()))?;
        let bloom = self.options.bloom_fpp.map(|p| Bloom::new(&keys, p));
        Ok((FileIndex { keys, batch: if self.need_values { batch } else { None } }, bloom))
    }

    /// The index of `f`, from memory, local disk or the data file, marked most recently used.
    fn index(&mut self, f: &DataFileMeta) -> Result<Arc<FileIndex>> {
        self.clock += 1;
        let now = self.clock;
        let loaded = match self.entries.get_mut(&f.file_name) {
            Some(e) => {
                e.last_used = now;
                match &e.index {
                    Cached::Memory(ix) => return Ok(ix.clone()),
                    Cached::Disk { path, bytes } => Some((path.clone(), *bytes)),
                    Cached::Dropped => None,
                }
            }
            None => None,
        };
        let ix = match loaded.map(|(path, bytes)| (self.load(&path), path, bytes)) {
            Some((Ok(ix), path, bytes)) => {
                self.stats.reloaded += 1;
                self.forget(Cached::Disk { path, bytes });
                if let Some(e) = self.entries.get_mut(&f.file_name) {
                    e.index = Cached::Dropped;
                }
                ix
            }
            other => {
                if let Some((Err(e), path, bytes)) = other {
                    // A damaged cache file is scratch data: rebuild from the data file.
                    tracing::warn!(file = f.file_name, error = %e, "lookup cache file unreadable; rebuilding");
                    self.forget(Cached::Disk { path, bytes });
                    if let Some(e) = self.entries.get_mut(&f.file_name) {
                        e.index = Cached::Dropped;
                    }
                }
                let (ix, bloom) = self.build(f)?;
                let bloom = match self.entries.get_mut(&f.file_name) {
                    Some(e) if e.bloom.is_some() => e.bloom.take(),
                    _ => bloom,
                };
                self.entries.insert(f.file_name.clone(), CacheEntry { index: Cached::Dropped, bloom, last_used: now });
                ix
            }
        };
        let ix = Arc::new(ix);
        self.memory += ix.memory_size();
        if let Some(e) = self.entries.get_mut(&f.file_name) {
            e.index = Cached::Memory(ix.clone());
        }
        self.evict(&f.file_name)?;
        Ok(ix)
    }

    /// Moves least recently used in-memory indexes (never `keep`) to local disk, or drops them when the disk
    /// budget is spent, until memory fits the budget.
    fn evict(&mut self, keep: &str) -> Result<()> {
        while self.memory > self.options.max_memory {
            let victim = self
                .entries
                .iter()
                .filter(|(name, e)| name.as_str() != keep && matches!(e.index, Cached::Memory(_)))
                .min_by_key(|(_, e)| e.last_used)
                .map(|(name, _)| name.clone());
            let Some(victim) = victim else { break };
            let Some(entry) = self.entries.get_mut(&victim) else { break };
            let Cached::Memory(ix) = std::mem::replace(&mut entry.index, Cached::Dropped) else { continue };
            self.memory = self.memory.saturating_sub(ix.memory_size());
            if self.disk < self.options.max_disk {
                match self.store(&victim, &ix) {
                    Ok((path, bytes)) => {
                        self.disk += bytes;
                        self.stats.spilled += 1;
                        if let Some(e) = self.entries.get_mut(&victim) {
                            e.index = Cached::Disk { path, bytes };
                        }
                    }
                    // Local disk trouble only costs a rebuild from the data file later.
                    Err(e) => {
                        tracing::warn!(file = victim, error = %e, "cannot write a lookup cache file; dropping the index")
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes an index to the local cache directory.
    fn store(&mut self, name: &str, ix: &FileIndex) -> Result<(PathBuf, u64)> {
        let path = crate::scratch_dir(&mut self.dir, "strata-lookup-")?.join(format!("{name}.lookup"));
        let shown = path.display().to_string();
        let err = |e: arrow_schema::ArrowError| Error::invalid(format!("lookup cache file {shown}"), e.to_string());
        let mut fields = vec![Field::new(KEY_BYTES, ArrowType::Binary, false)];
        let mut cols: Vec<ArrayRef> = vec![Arc::new(ix.keys.clone())];
        if let Some(b) = &ix.batch {
            fields.extend(b.schema().fields().iter().map(|f| f.as_ref().clone()));
            cols.extend(b.columns().iter().cloned());
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(err)?;
        let file = std::fs::File::create(&path).map_err(|e| Error::io(&shown, e))?;
        let mut w = FileWriter::try_new(std::io::BufWriter::new(file), &batch.schema()).map_err(err)?;
        w.write(&batch).map_err(err)?;
        w.finish().map_err(err)?;
        let bytes = std::fs::metadata(&path).map_err(|e| Error::io(&shown, e))?.len();
        Ok((path, bytes))
    }

    /// Reads an index back from the local cache directory.
    fn load(&self, path: &std::path::Path) -> Result<FileIndex> {
        let shown = path.display().to_string();
        let bad = |m: String| Error::Corrupt { path: shown.clone(), message: m };
        let file = std::fs::File::open(path).map_err(|e| Error::io(&shown, e))?;
        let reader = FileReader::try_new(std::io::BufReader::new(file), None).map_err(|e| bad(e.to_string()))?;
        let schema = reader.schema();
        let batches: Vec<RecordBatch> =
            reader.collect::<std::result::Result<_, _>>().map_err(|e| bad(e.to_string()))?;
        let batch = arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| bad(e.to_string()))?;
        let keys = batch
            .column(0)
            .as_any()
            .downcast_ref::<BinaryArray>()
            .ok_or_else(|| bad("first column is not the key bytes".into()))?
            .clone();
        let values = if self.need_values {
            let n = batch.num_columns();
            Some(batch.project(&(1..n).collect::<Vec<_>>()).map_err(|e| bad(e.to_string()))?)
        } else {
            None
        };
        Ok(FileIndex { keys, batch: values })
    }

    /// The newest live copy of `key` (arrow-row bytes) at levels `start_level..`, skipping rows the bucket's
    /// deletion vectors already delete.
    pub fn lookup(
        &mut self,
        levels: &Levels,
        start_level: i32,
        key: &[u8],
        dvs: Option<&BucketedDvMaintainer>,
    ) -> Result<Option<LookupHit>> {
        for level in start_level.max(1)..=levels.max_level() {
            let files = levels.level(level);
            // Files of a level are ordered and disjoint: the first whose max key is >= key is the candidate.
            let mut lo = 0;
            let mut hi = files.len();
            while lo < hi {
                let mid = (lo + hi) / 2;
                if self.range(&files[mid])?.1.as_slice() < key {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let Some(f) = files.get(lo) else { continue };
            if self.range(f)?.0.as_slice() > key {
                continue;
            }
            if self.entries.get(&f.file_name).and_then(|e| e.bloom.as_ref()).is_some_and(|b| !b.may_contain(key)) {
                self.stats.bloom_skips += 1;
                continue;
            }
            let ix = self.index(f)?;
            // Without deletion vectors a file at a level >= 1 may hold a key twice (a reset retraction, then
            // the result, from remove-record-on-delete): the newest copy is the last.
            let Some(a) = key_positions(&ix.keys, key).last() else { continue };
            let position = a as u64;
            if dvs.and_then(|d| d.deletion_vector_of(&f.file_name)).is_some_and(|dv| dv.is_deleted(position)) {
                // Already superseded; an older copy below would be too, but keep looking in case the levels
                // hold a stale duplicate (a table switched into deletion-vector mode).
                continue;
            }
            return Ok(Some(LookupHit {
                file_name: f.file_name.clone(),
                position,
                record: ix.batch.as_ref().map(|b| b.slice(a, 1)),
            }));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::{Int64Array, Int8Array};
    use strata_format::{FileFormat, KvFileWriter, WriterConfig};
    use strata_io::MemoryFileIO;
    use strata_spec::{Datum, FileSource};

    /// Six level-1 files of even keys: [0, 100), [100, 200), ... (odd keys are absent).
    fn setup() -> (Arc<dyn FileIO>, Arc<KeyValueLayout>, Levels) {
        let schema = crate::test_util::schema("v", DataType::bigint());
        let layout = Arc::new(KeyValueLayout::new(&schema).unwrap());
        let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
        let mut files = Vec::new();
        for f in 0..6i64 {
            let ids: Vec<i64> = (f * 100..f * 100 + 100).step_by(2).collect();
            let n = ids.len();
            let cols: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Int64Array::from_iter_values(0..n as i64)),
                Arc::new(Int8Array::from(vec![0i8; n])),
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Int64Array::from_iter_values(ids.iter().map(|i| i * 10))),
            ];
            let batch = RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap();
            let mut w = KvFileWriter::new(
                io.clone(),
                "/b".into(),
                Box::new(move || format!("f{f}.parquet")),
                layout.clone(),
                WriterConfig {
                    format: FileFormat::Parquet,
                    compression: "zstd".into(),
                    target_file_size: 1 << 30,
                    schema_id: 0,
                    level: 1,
                    file_source: FileSource::Compact,
                },
            );
            w.write(&batch).unwrap();
            files.extend(w.close().unwrap());
        }
        let levels = Levels::new(vec![DataType::bigint()], files, 6).unwrap();
        (io, layout, levels)
    }

    fn key(ll: &LookupLevels, k: i64) -> Vec<u8> {
        ll.keys.encode(&[Some(Datum::BigInt(k))]).unwrap()
    }

    /// (file, position, value) of every key 0..600 in a scattered order that revisits files.
    fn answers(ll: &mut LookupLevels, levels: &Levels) -> Vec<Option<(String, u64, i64)>> {
        (0..600i64)
            .map(|i| (i * 7919) % 600)
            .map(|k| {
                let kb = key(ll, k);
                ll.lookup(levels, 1, &kb, None).unwrap().map(|h| {
                    let v = h.record.unwrap().column(4).as_primitive::<Int64Type>().value(0);
                    (h.file_name, h.position, v)
                })
            })
            .collect()
    }

    #[test]
    fn a_tiny_cache_spills_reloads_and_answers_like_an_unbounded_one() {
        let (io, layout, levels) = setup();
        let mut unbounded =
            LookupLevels::new(io.clone(), layout.clone(), "/b".into(), true, LookupCacheOptions::default()).unwrap();
        let want = answers(&mut unbounded, &levels);
        assert_eq!(want.iter().filter(|a| a.is_some()).count(), 300);
        for (k, a) in want.iter().enumerate() {
            let k = ((k as i64) * 7919) % 600;
            if let Some((file, pos, v)) = a {
                assert_eq!(
                    (file.as_str(), *pos as i64, *v),
                    (format!("f{}.parquet", k / 100).as_str(), (k % 100) / 2, k * 10)
                );
            }
        }
        assert_eq!(unbounded.stats().spilled, 0);
        assert_eq!(unbounded.stats().built, 6);
        assert!(unbounded.stats().bloom_skips > 250, "bloom filters skipped only {:?}", unbounded.stats());

        // One index in memory at a time: the rest go to disk and come back.
        let tiny = LookupCacheOptions { max_memory: 1, max_disk: u64::MAX, bloom_fpp: Some(0.01) };
        let mut ll = LookupLevels::new(io.clone(), layout.clone(), "/b".into(), true, tiny).unwrap();
        assert_eq!(answers(&mut ll, &levels), want);
        let s = ll.stats();
        assert_eq!(s.built, 6, "{s:?}");
        assert!(s.spilled > 0 && s.reloaded > 0, "{s:?}");
        assert_eq!(ll.entries.values().filter(|e| matches!(e.index, Cached::Memory(_))).count(), 1);
        let dir = ll.dir.as_ref().unwrap().path().to_path_buf();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 5);
        for f in levels.level(1) {
            ll.drop_file(&f.file_name);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "dropped files left cache files behind");
        assert_eq!((ll.cached(), ll.memory_bytes()), (0, 0));

        // No disk either: evicted indexes are rebuilt from the data files; no bloom filters.
        let none = LookupCacheOptions { max_memory: 1, max_disk: 0, bloom_fpp: None };
        let mut ll = LookupLevels::new(io, layout, "/b".into(), true, none).unwrap();
        assert_eq!(answers(&mut ll, &levels), want);
        let s = ll.stats();
        assert!(s.built > 6 && s.spilled == 0 && s.bloom_skips == 0, "{s:?}");
    }

    #[test]
    fn a_damaged_cache_file_is_rebuilt_from_the_data_file() {
        let (io, layout, levels) = setup();
        let tiny = LookupCacheOptions { max_memory: 1, max_disk: u64::MAX, bloom_fpp: None };
        let mut ll = LookupLevels::new(io.clone(), layout.clone(), "/b".into(), false, tiny).unwrap();
        let k0 = key(&ll, 0);
        let k1 = key(&ll, 150);
        assert!(ll.lookup(&levels, 1, &k0, None).unwrap().is_some());
        assert!(ll.lookup(&levels, 1, &k1, None).unwrap().is_some());
        let dir = ll.dir.as_ref().unwrap().path().to_path_buf();
        for e in std::fs::read_dir(&dir).unwrap() {
            std::fs::write(e.unwrap().path(), b"not an arrow file").unwrap();
        }
        let hit = ll.lookup(&levels, 1, &k0, None).unwrap().unwrap();
        assert_eq!((hit.file_name.as_str(), hit.position), ("f0.parquet", 0));
        assert_eq!(ll.stats().built, 3);
    }
}
