//! Repeated point lookups through local lookup files (Paimon's `LocalTableQuery`, the store behind Flink's
//! lookup joins).
//!
//! [`read::get`](crate::read::get) answers one lookup from the remote files: it reads the snapshot's
//! metadata and decodes a page of every column of each candidate file, tens of milliseconds per key. A
//! [`TableQuery`] pays for a file once instead: the first lookup that lands in a data file reads it whole
//! and writes it to a local Arrow IPC file in small uncompressed blocks, keeping the file's keys (arrow-row
//! bytes, sorted like the file) and a bloom filter in memory. Later lookups in that file are a bloom probe,
//! a binary search and one block read from local disk.
//!
//! The query reads one snapshot until [`TableQuery::refresh`] moves it to the latest: files that left the
//! table lose their local files, and deletion vectors are reloaded (they change without the data file
//! changing). Visibility is a scan's: deletion-vector tables show the compacted levels with their vectors
//! applied; otherwise every copy of the key in every level is merged with the table's merge engine.
//!
//! Memory (keys and bloom filters) is bounded by `lookup.cache-max-memory-size` and local disk by
//! `lookup.cache-max-disk-size`; past either, the least recently used files are dropped and rebuilt when
//! needed again.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use arrow_row::{RowConverter, SortField};
use parking_lot::Mutex;
use strata_dv::DeletionVector;
use strata_format::arrow_types::{array_of, to_arrow};
use strata_format::bucket_read::{file_columns, open_data_file, DataFileRef};
use strata_format::merge::Run;
use strata_format::KeyValueLayout;
use strata_lsm::{Bloom, LookupCacheOptions};
use strata_spec::{BinaryRow, DataFileMeta, DataType, Datum, Error, Result, Snapshot};

use crate::read::{merge_copies, route_key, RoutedKey};
use crate::scan::data_file_path;
use crate::table::{DeletionFile, Table};

/// Rows per block of a local lookup file: a lookup decodes one block.
const BLOCK_ROWS: usize = 256;

/// A data file that may hold a key, with its key range in arrow-row bytes.
struct Candidate {
    path: String,
    meta: DataFileMeta,
    min: Vec<u8>,
    max: Vec<u8>,
    deletion_file: Option<DeletionFile>,
}

/// What a [`TableQuery`] has done, for tests and tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Local lookup files built by reading a data file.
    pub built: u64,
    /// Local lookup files dropped to stay within the cache bounds.
    pub evicted: u64,
    /// Probes a bloom filter answered without a search.
    pub bloom_skips: u64,
    /// Blocks read from local lookup files.
    pub blocks_read: u64,
}

/// One data file's local lookup file.
struct LocalFile {
    keys: BinaryArray,
    bloom: Option<Bloom>,
    path: PathBuf,
    /// First row position of each block, ascending; the last entry is the row count.
    block_starts: Vec<u64>,
    disk_bytes: u64,
    last_used: u64,
}

impl LocalFile {
    fn memory_size(&self) -> u64 {
        self.keys.get_array_memory_size() as u64
            + self.bloom.as_ref().map_or(0, Bloom::memory_size)
            + (self.block_starts.len() * 8) as u64
    }
}

/// The state behind the lock: the snapshot's candidates per bucket, loaded deletion vectors and the local
/// files.
struct State {
    snapshot: Option<Snapshot>,
    buckets: HashMap<(Vec<u8>, i32), Vec<Candidate>>,
    vectors: HashMap<(String, i32), Arc<dyn DeletionVector>>,
    files: HashMap<String, LocalFile>,
    dir: Option<tempfile::TempDir>,
    memory: u64,
    disk: u64,
    clock: u64,
    stats: QueryStats,
}

/// Point lookups against one snapshot of a table, through local lookup files built on first use (Paimon's
/// `LocalTableQuery`). Shareable across threads; lookups take turns.
pub struct TableQuery {
    table: Table,
    layout: Arc<KeyValueLayout>,
    converter: RowConverter,
    key_types: Vec<DataType>,
    /// Deletion-vector (or first-row) tables read levels >= 1 only, as a scan does.
    raw: bool,
    cache: LookupCacheOptions,
    state: Mutex<State>,
}

impl TableQuery {
    /// A query on the table's latest snapshot.
    pub fn new(table: &Table) -> Result<Self> {
        Self::open(table, None)
    }

    /// A query on snapshot `id` (time travel).
    pub fn at_snapshot(table: &Table, id: i64) -> Result<Self> {
        Self::open(table, Some(id))
    }

    fn open(table: &Table, id: Option<i64>) -> Result<Self> {
        let schema = table.schema();
        let layout = Arc::new(KeyValueLayout::new(schema)?);
        let fields: Vec<SortField> = layout.key_fields.iter().map(|f| SortField::new(to_arrow(&f.data_type))).collect();
        let converter = RowConverter::new(fields).map_err(|e| Error::invalid("key columns", e.to_string()))?;
        let o = schema.core_options();
        let raw = crate::read::ReadBuilder::new(table).is_raw_mode()?;
        let cache = LookupCacheOptions {
            max_memory: o.lookup_cache_max_memory_size()?,
            max_disk: o.lookup_cache_max_disk_size()?,
            bloom_fpp: o.lookup_bloom_filter_fpp()?,
        };
        let q = TableQuery {
            table: table.clone(),
            key_types: layout.key_fields.iter().map(|f| f.data_type).collect(),
            layout,
            converter,
            raw,
            cache,
            state: Mutex::new(State {
                snapshot: None,
                buckets: HashMap::new(),
                vectors: HashMap::new(),
                files: HashMap::new(),
                dir: None,
                memory: 0,
                disk: 0,
                clock: 0,
                stats: QueryStats::default(),
            }),
        };
        let snapshot = match id {
            Some(id) => Some(
                table
                    .snapshot(Some(id))?
                    .ok_or_else(|| Error::invalid("snapshot", format!("snapshot {id} does not exist")))?,
            ),
            None => table.snapshot(None)?,
        };
        q.load(&mut q.state.lock(), snapshot)?;
        Ok(q)
    }

    /// The snapshot the query reads (`None` for a table with no snapshot yet).
    pub fn snapshot_id(&self) -> Option<i64> {
        self.state.lock().snapshot.as_ref().map(|s| s.id)
    }

    /// What the query has done so far.
    pub fn stats(&self) -> QueryStats {
        self.state.lock().stats
    }

    /// Bytes the local lookup files take: in memory (keys, bloom filters, block offsets) and on local disk.
    pub fn cache_bytes(&self) -> (u64, u64) {
        let st = self.state.lock();
        (st.memory, st.disk)
    }

    /// Moves the query to the table's latest snapshot; its id. Local files of data files still in the
    /// table are kept.
    pub fn refresh(&self) -> Result<Option<i64>> {
        let latest = self.table.snapshot(None)?;
        let mut st = self.state.lock();
        if latest.as_ref().map(|s| s.id) != st.snapshot.as_ref().map(|s| s.id) {
            self.load(&mut st, latest)?;
        }
        Ok(st.snapshot.as_ref().map(|s| s.id))
    }

    fn key_bytes(&self, key: &[Option<Datum>]) -> Result<Vec<u8>> {
        let cols = self
            .key_types
            .iter()
            .zip(key)
            .map(|(t, v)| array_of(t, std::slice::from_ref(v)))
            .collect::<Result<Vec<_>>>()?;
        let rows = self.converter.convert_columns(&cols).map_err(|e| Error::invalid("key", e.to_string()))?;
        Ok(rows.row(0).as_ref().to_vec())
    }

    fn row_bytes(&self, row: &BinaryRow) -> Result<Vec<u8>> {
        self.key_bytes(&row.to_datums(&self.key_types)?)
    }

    /// Points the state at `snapshot`: its candidate files per bucket; local files of files that left go.
    fn load(&self, st: &mut State, snapshot: Option<Snapshot>) -> Result<()> {
        let _span = tracing::debug_span!("query_load_snapshot", id = snapshot.as_ref().map(|s| s.id)).entered();
        let mut buckets: HashMap<(Vec<u8>, i32), Vec<Candidate>> = HashMap::new();
        if let Some(s) = &snapshot {
            let mut deletion_files = self.table.deletion_files(s)?;
            for e in self.table.live_files_shared(s)?.iter() {
                if self.raw && e.file.level == 0 {
                    continue;
                }
                let deletion_files_key = (e.partition.clone(), e.bucket, e.file.file_name.clone());
                buckets.entry((e.partition.serialize(), e.bucket)).or_default().push(Candidate {
                    path: data_file_path(&self.table, e)?,
                    min: self.row_bytes(&e.file.min_key)?,
                    max: self.row_bytes(&e.file.max_key)?,
                    meta: e.file.clone(),
                    deletion_file: deletion_files.remove(&deletion_files_key),
                });
            }
        }
        let live: std::collections::HashSet<&str> = buckets.values().flatten().map(|c| c.path.as_str()).collect();
        let gone: Vec<String> = st.files.keys().filter(|p| !live.contains(p.as_str())).cloned().collect();
        for path in gone {
            Self::forget(st, &path);
        }
        st.buckets = buckets;
        // Vectors are keyed by where they are stored: one that did not change is reused.
        let wanted: std::collections::HashSet<(String, i32)> = st
            .buckets
            .values()
            .flatten()
            .filter_map(|c| c.deletion_file.as_ref().map(|d| (d.path.clone(), d.meta.offset)))
            .collect();
        st.vectors.retain(|k, _| wanted.contains(k));
        st.snapshot = snapshot;
        Ok(())
    }

    fn forget(st: &mut State, path: &str) {
        if let Some(f) = st.files.remove(path) {
            st.memory = st.memory.saturating_sub(f.memory_size());
            st.disk = st.disk.saturating_sub(f.disk_bytes);
            // Local scratch: a failed removal leaves a file in the query's directory, removed with it.
            let _ = std::fs::remove_file(&f.path);
        }
    }

    /// The row whose primary key is `key` (values of every primary-key column, in the table's primary-key
    /// order) in the query's snapshot, as a one-row batch of all columns; `None` when absent or deleted.
    pub fn get(&self, key: &[Option<Datum>]) -> Result<Option<RecordBatch>> {
        let RoutedKey { partition, bucket, key } = route_key(&self.table, &self.layout, key)?;
        let key_bytes = self.key_bytes(&key)?;
        let mut st = self.state.lock();
        let st = &mut *st;
        let Some(candidates) = st.buckets.get(&(partition.serialize(), bucket)) else { return Ok(None) };
        let hits: Vec<usize> = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.min.as_slice() <= key_bytes.as_slice() && key_bytes.as_slice() <= c.max.as_slice())
            .map(|(i, _)| i)
            .collect();
        let mut runs: Vec<Run> = Vec::new();
        let mut run_levels = Vec::new();
        for i in hits {
            let Some(c) = st.buckets.get(&(partition.serialize(), bucket)).and_then(|v| v.get(i)) else { continue };
            let (path, meta, deletion_file) = (c.path.clone(), c.meta.clone(), c.deletion_file.clone());
            let dv = match &deletion_file {
                None => None,
                Some(d) => {
                    let k = (d.path.clone(), d.meta.offset);
                    match st.vectors.get(&k) {
                        Some(v) => Some(v.clone()),
                        None => {
                            let v: Arc<dyn DeletionVector> = Arc::from(d.read(self.table.io().as_ref())?);
                            st.vectors.insert(k, v.clone());
                            Some(v)
                        }
                    }
                }
            };
            if let Some(rows) = self.copies_in_file(st, &path, &meta, &key_bytes, dv.as_deref())? {
                runs.push(Box::new(std::iter::once(Ok(rows))));
                run_levels.push(meta.level);
            }
        }
        merge_copies(&self.table, &self.layout, runs, run_levels)
    }

    /// The rows of `key` in one data file (file layout), minus those its deletion vector deletes. A local
    /// file that cannot be read back (scratch data someone damaged) is rebuilt from the data file once.
    fn copies_in_file(
        &self,
        st: &mut State,
        path: &str,
        meta: &DataFileMeta,
        key: &[u8],
        dv: Option<&dyn DeletionVector>,
    ) -> Result<Option<RecordBatch>> {
        let mut attempt = 0;
        loop {
            st.clock += 1;
            let now = st.clock;
            if !st.files.contains_key(path) {
                let f = self.build(st, path, meta)?;
                st.memory += f.memory_size();
                st.disk += f.disk_bytes;
                st.files.insert(path.to_string(), f);
                st.stats.built += 1;
                self.evict(st, path);
            }
            let Some(f) = st.files.get_mut(path) else { return Ok(None) };
            f.last_used = now;
            if f.bloom.as_ref().is_some_and(|b| !b.may_contain(key)) {
                st.stats.bloom_skips += 1;
                return Ok(None);
            }
            // Keys are sorted like the file: the key's copies are one stretch of positions.
            let (mut first, mut upper) = (0usize, f.keys.len());
            while first < upper {
                let mid = (first + upper) / 2;
                if f.keys.value(mid) < key {
                    first = mid + 1;
                } else {
                    upper = mid;
                }
            }
            let mut end = first;
            while end < f.keys.len() && f.keys.value(end) == key {
                end += 1;
            }
            let positions: Vec<u64> =
                (first as u64..end as u64).filter(|&p| !dv.is_some_and(|d| d.is_deleted(p))).collect();
            if positions.is_empty() {
                return Ok(None);
            }
            match read_rows(&f.path, &f.block_starts, &positions, &self.layout.file_schema) {
                Ok((rows, blocks)) => {
                    st.stats.blocks_read += blocks;
                    return Ok(Some(rows));
                }
                Err(e) if attempt == 0 => {
                    tracing::warn!(file = meta.file_name, error = %e, "local lookup file unreadable; rebuilding it");
                    Self::forget(st, path);
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads a data file whole into a local lookup file.
    fn build(&self, st: &mut State, path: &str, meta: &DataFileMeta) -> Result<LocalFile> {
        let _span = tracing::debug_span!("query_build_lookup_file", file = meta.file_name).entered();
        let dir = strata_lsm::scratch_dir(&mut st.dir, "strata-query-")?;
        let local = dir.join(format!("{}-{}.lookup", meta.level, meta.file_name));
        let shown = local.display().to_string();
        let err = |e: arrow_schema::ArrowError| Error::invalid(format!("lookup file {shown}"), e.to_string());
        let file = DataFileRef { path: path.to_string(), meta: meta.clone(), dv: None };
        let batches = open_data_file(self.table.io().as_ref(), &file, file_columns(&self.layout), false, BLOCK_ROWS)?;
        let out = File::create(&local).map_err(|e| Error::io(&shown, e))?;
        let mut w = FileWriter::try_new(std::io::BufWriter::new(out), &self.layout.file_schema).map_err(err)?;
        let mut keys: Vec<BinaryArray> = Vec::new();
        let mut block_starts = vec![0u64];
        let written = (|| -> Result<()> {
            for b in batches {
                let b = b?;
                let b = RecordBatch::try_new(self.layout.file_schema.clone(), b.columns().to_vec()).map_err(err)?;
                let mut offset = 0;
                while offset < b.num_rows() {
                    let block = b.slice(offset, BLOCK_ROWS.min(b.num_rows() - offset));
                    offset += block.num_rows();
                    let rows = self
                        .converter
                        .convert_columns(&block.columns()[..self.layout.key_arity()])
                        .map_err(|e| Error::corrupt(format!("{}: {e}", meta.file_name)))?;
                    keys.push(rows.try_into_binary().map_err(|e| Error::corrupt(format!("{}: {e}", meta.file_name)))?);
                    w.write(&block).map_err(err)?;
                    let last = block_starts.last().copied().unwrap_or(0);
                    block_starts.push(last + block.num_rows() as u64);
                }
            }
            w.finish().map_err(err)
        })();
        if let Err(e) = written {
            drop(w);
            let _ = std::fs::remove_file(&local);
            return Err(e);
        }
        let key_refs: Vec<&dyn Array> = keys.iter().map(|k| k as &dyn Array).collect();
        let keys = if key_refs.is_empty() {
            BinaryArray::from_iter_values(std::iter::empty::<&[u8]>())
        } else {
            let all = arrow_select::concat::concat(&key_refs).map_err(|e| Error::corrupt(e.to_string()))?;
            all.as_any()
                .downcast_ref::<BinaryArray>()
                .ok_or_else(|| Error::corrupt("lookup keys are not binary"))?
                .clone()
        };
        let disk_bytes = std::fs::metadata(&local).map_err(|e| Error::io(&shown, e))?.len();
        let bloom = self.cache.bloom_fpp.map(|p| Bloom::new(&keys, p));
        Ok(LocalFile { keys, bloom, path: local, block_starts, disk_bytes, last_used: st.clock })
    }

    /// Drops least recently used local files (never `keep`) until memory and disk fit their bounds.
    fn evict(&self, st: &mut State, keep: &str) {
        while st.memory > self.cache.max_memory || st.disk > self.cache.max_disk {
            let victim = st
                .files
                .iter()
                .filter(|(p, _)| p.as_str() != keep)
                .min_by_key(|(_, f)| f.last_used)
                .map(|(p, _)| p.clone());
            let Some(victim) = victim else { break };
            Self::forget(st, &victim);
            st.stats.evicted += 1;
        }
    }
}

impl std::fmt::Debug for TableQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableQuery").field("table", &self.table.path()).field("snapshot", &self.snapshot_id()).finish()
    }
}

/// Reads the rows at `positions` (ascending) from a local lookup file whose blocks start at `starts`; the
/// rows and the number of blocks read.
fn read_rows(
    local: &std::path::Path,
    starts: &[u64],
    positions: &[u64],
    schema: &arrow_schema::SchemaRef,
) -> Result<(RecordBatch, u64)> {
    let shown = local.display().to_string();
    let bad = |m: String| Error::Corrupt { path: shown.clone(), message: m };
    let block_of = |p: u64| starts.partition_point(|&s| s <= p).saturating_sub(1);
    let (Some(&first), Some(&last)) = (positions.first(), positions.last()) else {
        return Ok((RecordBatch::new_empty(schema.clone()), 0));
    };
    let file = File::open(local).map_err(|e| Error::io(&shown, e))?;
    let mut reader = FileReader::try_new(BufReader::new(file), None).map_err(|e| bad(e.to_string()))?;
    let mut pieces = Vec::new();
    for block in block_of(first)..=block_of(last) {
        let (Some(&start), Some(&end)) = (starts.get(block), starts.get(block + 1)) else {
            return Err(bad(format!("position {last} is past the file's {} blocks", starts.len().saturating_sub(1))));
        };
        reader.set_index(block).map_err(|e| bad(e.to_string()))?;
        let batch =
            reader.next().ok_or_else(|| bad(format!("block {block} is missing")))?.map_err(|e| bad(e.to_string()))?;
        if batch.num_rows() as u64 != end - start {
            return Err(bad(format!("block {block} holds {} rows, not {}", batch.num_rows(), end - start)));
        }
        let idx: Vec<u32> = positions.iter().filter(|&&p| p >= start && p < end).map(|&p| (p - start) as u32).collect();
        let idx = arrow_array::UInt32Array::from(idx);
        let cols = batch
            .columns()
            .iter()
            .map(|c| arrow_select::take::take(c.as_ref(), &idx, None))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| bad(e.to_string()))?;
        pieces.push(RecordBatch::try_new(schema.clone(), cols).map_err(|e| bad(e.to_string()))?);
    }
    let rows = arrow_select::concat::concat_batches(schema, &pieces).map_err(|e| bad(e.to_string()))?;
    Ok((rows, pieces.len() as u64))
}
