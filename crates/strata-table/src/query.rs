//! Repeated point lookups through local lookup files (Paimon's `LocalTableQuery`, the store behind Flink's
//! lookup joins).
//!
//! [`get`](crate::get) answers one lookup from the remote files: it reads the snapshot's
//! metadata and decodes a page of every column of each candidate file, tens of milliseconds per key. A
//! [`TableQuery`] pays for a file once instead: the first lookup that lands in a data file reads it whole
//! and writes it to a local Arrow IPC file in small blocks (lz4 by default), keeping the file's keys (arrow-row
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
//!
//! A query is shared across threads. Local files are built outside its lock, so lookups answered from built
//! files never wait for another thread's build. `refresh` only moves forward, and a snapshot with a newer
//! schema reopens the table (visibility and layout follow the schema). A query whose snapshot expiration
//! has removed fails with a not-found error for files it had not built yet: refresh it.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, RecordBatch};
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::FileWriter;
use parking_lot::Mutex;
use strata_dv::DeletionVector;

use strata_format::bucket_read::{file_columns, open_data_file};
use strata_format::merge::Run;
use strata_format::KeyValueLayout;
use strata_lsm::{Bloom, KeyEncoder, LookupCacheOptions};
use strata_spec::{DataFileMeta, Datum, Error, Result, Snapshot};

use crate::point_read::{in_bucket, merge_copies, route_key, RoutedKey};
use crate::table::{DeletionFile, Table};

/// Rows per block of a local lookup file: a lookup decodes one block.
const BLOCK_ROWS: usize = 256;

/// Local lookup files kept open at most (a reader holds a descriptor and the file's parsed footer).
const MAX_OPEN_READERS: usize = 64;

/// An open local lookup file.
type LocalReader = FileReader<BufReader<File>>;

/// Each (serialized partition, bucket)'s candidate files.
type BucketFiles = HashMap<(Vec<u8>, i32), Vec<Candidate>>;

/// A data file that may hold a key, with its key range in arrow-row bytes.
#[derive(Clone)]
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

/// One data file's local lookup file; dropping it removes the file.
struct LocalFile {
    keys: BinaryArray,
    bloom: Option<Bloom>,
    path: PathBuf,
    /// First row position of each block, ascending; the last entry is the row count.
    block_starts: Vec<u64>,
    disk_bytes: u64,
    last_used: u64,
    /// Kept open between lookups (up to [`MAX_OPEN_READERS`] per query), so a lookup reads one block without
    /// opening the file and parsing its footer again.
    reader: Option<LocalReader>,
}

impl LocalFile {
    fn memory_size(&self) -> u64 {
        self.keys.get_array_memory_size() as u64
            + self.bloom.as_ref().map_or(0, Bloom::memory_size)
            + (self.block_starts.len() * 8) as u64
    }
}

impl Drop for LocalFile {
    fn drop(&mut self) {
        // Local scratch: a failed removal leaves a file in the query's directory, removed with it.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// How the query reads the table: fixed for one schema.
struct View {
    table: Table,
    /// The schema id the view was opened for.
    schema_id: i64,
    layout: Arc<KeyValueLayout>,
    keys: KeyEncoder,
    /// Deletion-vector (or first-row) tables read levels >= 1 only, as a scan does.
    raw: bool,
    cache: LookupCacheOptions,
    /// Codec of the local files (`lookup.cache-spill-compression`).
    compression: Option<arrow_ipc::CompressionType>,
}

impl View {
    fn new(table: Table) -> Result<Self> {
        let schema = table.schema();
        let layout = Arc::new(table.layout()?);
        let o = schema.core_options();
        let raw = crate::read::ReadBuilder::new(&table).raw_mode()?;
        let cache = LookupCacheOptions {
            max_memory: o.lookup_cache_max_memory_size()?,
            max_disk: o.lookup_cache_max_disk_size()?,
            bloom_fpp: o.lookup_bloom_filter_fpp()?,
        };
        let compression = match o.lookup_cache_spill_compression()?.as_str() {
            "zstd" => Some(arrow_ipc::CompressionType::ZSTD),
            "lz4" => Some(arrow_ipc::CompressionType::LZ4_FRAME),
            _ => None,
        };
        Ok(View { compression, schema_id: schema.id, keys: KeyEncoder::new(&layout)?, layout, raw, cache, table })
    }

    /// Each bucket's candidate files in `snapshot`.
    fn candidates(&self, snapshot: &Snapshot) -> Result<BucketFiles> {
        let mut buckets: BucketFiles = HashMap::new();
        let mut deletion_files = self.table.deletion_files(snapshot)?;
        for e in self.table.live_files_shared(snapshot)?.iter() {
            if self.raw && e.file.level == 0 {
                continue;
            }
            let deletion_files_key = (e.partition.clone(), e.bucket, e.file.file_name.clone());
            buckets.entry((e.partition.serialize(), e.bucket)).or_default().push(Candidate {
                path: self.table.data_file_path(e)?,
                min: self.keys.encode_row(&e.file.min_key)?,
                max: self.keys.encode_row(&e.file.max_key)?,
                meta: e.file.clone(),
                deletion_file: deletion_files.remove(&deletion_files_key),
            });
        }
        Ok(buckets)
    }

    /// Reads a data file whole into the local lookup file `local`.
    fn build(&self, local: PathBuf, path: &str, meta: &DataFileMeta) -> Result<LocalFile> {
        let _span = tracing::debug_span!("query_build_lookup_file", file = meta.file_name).entered();
        let shown = local.display().to_string();
        let err = |e: arrow_schema::ArrowError| Error::invalid(format!("lookup file {shown}"), e.to_string());
        let file = self.layout.file_ref(path.to_string(), meta.clone(), None)?;
        let batches = open_data_file(self.table.io().as_ref(), &file, file_columns(&self.layout), false, BLOCK_ROWS)?;
        let out = File::create(&local).map_err(|e| Error::io(&shown, e))?;
        // From here on the file is removed again if anything fails (the drop of `LocalFile`).
        let mut built = LocalFile {
            keys: BinaryArray::from_iter_values(std::iter::empty::<&[u8]>()),
            bloom: None,
            path: local.clone(),
            block_starts: vec![0],
            disk_bytes: 0,
            last_used: 0,
            reader: None,
        };
        let options =
            arrow_ipc::writer::IpcWriteOptions::default().try_with_compression(self.compression).map_err(err)?;
        let mut w = FileWriter::try_new_with_options(std::io::BufWriter::new(out), &self.layout.file_schema, options)
            .map_err(err)?;
        let mut keys: Vec<BinaryArray> = Vec::new();
        for b in batches {
            let b = b?;
            let b = RecordBatch::try_new(self.layout.file_schema.clone(), b.columns().to_vec()).map_err(err)?;
            let mut offset = 0;
            while offset < b.num_rows() {
                let block = b.slice(offset, BLOCK_ROWS.min(b.num_rows() - offset));
                offset += block.num_rows();
                let rows = self.keys.rows(&block).map_err(|e| Error::corrupt(format!("{}: {e}", meta.file_name)))?;
                keys.push(rows.try_into_binary().map_err(|e| Error::corrupt(format!("{}: {e}", meta.file_name)))?);
                w.write(&block).map_err(err)?;
                let last = built.block_starts.last().copied().unwrap_or(0);
                built.block_starts.push(last + block.num_rows() as u64);
            }
        }
        w.finish().map_err(err)?;
        drop(w);
        if !keys.is_empty() {
            let refs: Vec<&dyn Array> = keys.iter().map(|k| k as &dyn Array).collect();
            let all = arrow_select::concat::concat(&refs).map_err(|e| Error::corrupt(e.to_string()))?;
            built.keys = all
                .as_any()
                .downcast_ref::<BinaryArray>()
                .ok_or_else(|| Error::corrupt("lookup keys are not binary"))?
                .clone();
        }
        built.disk_bytes = std::fs::metadata(&local).map_err(|e| Error::io(&shown, e))?.len();
        built.bloom = self.cache.bloom_fpp.map(|p| Bloom::new(&built.keys, p));
        Ok(built)
    }
}

/// The state behind the lock: the view, the snapshot's candidates per bucket, loaded deletion vectors and
/// the local files.
struct State {
    view: Arc<View>,
    snapshot: Option<Snapshot>,
    buckets: BucketFiles,
    vectors: HashMap<(String, i32), Arc<DeletionVector>>,
    files: HashMap<String, LocalFile>,
    memory: u64,
    disk: u64,
    clock: u64,
    /// Local files with an open reader.
    open_readers: usize,
    stats: QueryStats,
}

impl State {
    fn forget(&mut self, path: &str) {
        if let Some(f) = self.files.remove(path) {
            self.memory = self.memory.saturating_sub(f.memory_size());
            self.disk = self.disk.saturating_sub(f.disk_bytes);
            if f.reader.is_some() {
                self.open_readers -= 1;
            }
        }
    }

    /// Makes sure the local file of `path` has an open reader, closing the least recently used other reader
    /// when [`MAX_OPEN_READERS`] are open.
    fn open_reader(&mut self, path: &str) -> Result<()> {
        if self.files.get(path).is_none_or(|f| f.reader.is_some()) {
            return Ok(());
        }
        if self.open_readers >= MAX_OPEN_READERS {
            let victim = self
                .files
                .iter_mut()
                .filter(|(p, f)| p.as_str() != path && f.reader.is_some())
                .min_by_key(|(_, f)| f.last_used);
            if let Some((_, f)) = victim {
                f.reader = None;
                self.open_readers -= 1;
            }
        }
        let Some(f) = self.files.get_mut(path) else { return Ok(()) };
        let shown = f.path.display().to_string();
        let file = File::open(&f.path).map_err(|e| Error::io(&shown, e))?;
        let reader = FileReader::try_new(BufReader::new(file), None)
            .map_err(|e| Error::Corrupt { path: shown.clone(), message: e.to_string() })?;
        f.reader = Some(reader);
        self.open_readers += 1;
        Ok(())
    }

    fn insert(&mut self, path: String, mut f: LocalFile) {
        if self.files.contains_key(&path) {
            // Another lookup built it meanwhile: ours goes (its drop removes the local file).
            return;
        }
        self.clock += 1;
        f.last_used = self.clock;
        self.memory += f.memory_size();
        self.disk += f.disk_bytes;
        self.files.insert(path, f);
        self.stats.built += 1;
    }

    /// Drops least recently used local files (never those in `keep`) until memory and disk fit their bounds.
    fn evict(&mut self, keep: &HashSet<String>) {
        let (max_memory, max_disk) = (self.view.cache.max_memory, self.view.cache.max_disk);
        while self.memory > max_memory || self.disk > max_disk {
            let victim = self
                .files
                .iter()
                .filter(|(p, _)| !keep.contains(p.as_str()))
                .min_by_key(|(_, f)| f.last_used)
                .map(|(p, _)| p.clone());
            let Some(victim) = victim else { break };
            self.forget(&victim);
            self.stats.evicted += 1;
        }
    }

    /// Points the state at `snapshot`: its candidate files per bucket; local files of files that left go.
    fn load(&mut self, snapshot: Option<Snapshot>) -> Result<()> {
        let _span = tracing::debug_span!("query_load_snapshot", id = snapshot.as_ref().map(|s| s.id)).entered();
        let buckets = match &snapshot {
            Some(s) => self.view.candidates(s)?,
            None => HashMap::new(),
        };
        let live: HashSet<&str> = buckets.values().flatten().map(|c| c.path.as_str()).collect();
        let gone: Vec<String> = self.files.keys().filter(|p| !live.contains(p.as_str())).cloned().collect();
        for path in gone {
            self.forget(&path);
        }
        // Vectors are keyed by where they are stored: one that did not change is reused.
        let wanted: HashSet<(String, i32)> = buckets
            .values()
            .flatten()
            .filter_map(|c| c.deletion_file.as_ref().map(|d| (d.path.clone(), d.meta.offset)))
            .collect();
        self.vectors.retain(|k, _| wanted.contains(k));
        self.buckets = buckets;
        self.snapshot = snapshot;
        Ok(())
    }

    /// The rows of `key` in the local file of `path` (file layout), minus those `dv` deletes; `Err(None)`
    /// when there is no usable local file (never built, evicted, or damaged: then it is dropped).
    fn copies_in_file(
        &mut self,
        path: &str,
        key: &[u8],
        dv: Option<&DeletionVector>,
    ) -> std::result::Result<Option<RecordBatch>, Option<Error>> {
        self.clock += 1;
        let now = self.clock;
        let schema = self.view.layout.file_schema.clone();
        let Some(f) = self.files.get_mut(path) else { return Err(None) };
        f.last_used = now;
        if f.bloom.as_ref().is_some_and(|b| !b.may_contain(key)) {
            self.stats.bloom_skips += 1;
            return Ok(None);
        }
        let positions: Vec<u64> = strata_lsm::lookup::key_positions(&f.keys, key)
            .map(|p| p as u64)
            .filter(|&p| !dv.is_some_and(|d| d.is_deleted(p)))
            .collect();
        if positions.is_empty() {
            return Ok(None);
        }
        let read = self.open_reader(path).and_then(|()| {
            let f = self.files.get_mut(path).ok_or_else(|| Error::invalid("get", "a local lookup file vanished"))?;
            let shown = f.path.display().to_string();
            let reader = f.reader.as_mut().ok_or_else(|| Error::invalid("get", "a local lookup file is not open"))?;
            read_rows(reader, &shown, &f.block_starts, &positions, &schema)
        });
        match read {
            Ok((rows, blocks)) => {
                self.stats.blocks_read += blocks;
                Ok(Some(rows))
            }
            Err(e) => {
                tracing::warn!(file = path, error = %e, "local lookup file unreadable; rebuilding it");
                self.forget(path);
                Err(Some(e))
            }
        }
    }
}

/// Point lookups against one snapshot of a table, through local lookup files built on first use (Paimon's
/// `LocalTableQuery`). Shared across threads: lookups of different threads run side by side except for the
/// short steps that touch the shared state.
pub struct TableQuery {
    state: Mutex<State>,
    /// Where the local files are; removed with the query.
    dir: tempfile::TempDir,
    /// Names local files apart (two lookups may build the same data file at once).
    next_local: AtomicU64,
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
        let snapshot = match id {
            Some(id) => Some(
                table
                    .snapshot(Some(id))?
                    .ok_or_else(|| Error::invalid("snapshot", format!("snapshot {id} does not exist")))?,
            ),
            None => table.snapshot(None)?,
        };
        let mut slot = None;
        strata_lsm::scratch_dir(&mut slot, "strata-query-")?;
        let dir = slot.ok_or_else(|| Error::invalid("query", "no scratch directory"))?;
        let mut state = State {
            view: Arc::new(View::new(table.as_of(id)?)?),
            snapshot: None,
            buckets: HashMap::new(),
            vectors: HashMap::new(),
            files: HashMap::new(),
            memory: 0,
            disk: 0,
            clock: 0,
            open_readers: 0,
            stats: QueryStats::default(),
        };
        state.load(snapshot)?;
        Ok(TableQuery { state: Mutex::new(state), dir, next_local: AtomicU64::new(0) })
    }

    /// A fresh name for a local lookup file of `meta` (two lookups may build the same data file at once).
    fn new_local_path(&self, meta: &DataFileMeta) -> PathBuf {
        let n = self.next_local.fetch_add(1, Ordering::Relaxed);
        self.dir.path().join(format!("{n}-{}.lookup", meta.file_name))
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

    /// Moves the query to the table's latest snapshot if it is newer (never back); the snapshot it reads.
    /// Local files of data files still in the table are kept, unless the snapshot has a newer schema: then
    /// the table is reopened with it and every local file goes.
    pub fn refresh(&self) -> Result<Option<i64>> {
        let mut st = self.state.lock();
        let current = st.snapshot.as_ref().map(|s| s.id);
        let Some(latest) = st.view.table.snapshot(None)? else { return Ok(current) };
        if current.is_some_and(|c| latest.id <= c) {
            return Ok(current);
        }
        if latest.schema_id != st.view.schema_id {
            let table = &st.view.table;
            let reopened = Table::open(table.io().clone(), table.path())?;
            let view = View::new(reopened)?;
            st.view = Arc::new(view);
            let all: Vec<String> = st.files.keys().cloned().collect();
            for path in all {
                st.forget(&path);
            }
            st.vectors.clear();
        }
        let id = latest.id;
        st.load(Some(latest))?;
        Ok(Some(id))
    }

    /// The row whose primary key is `key` (values of every primary-key column, in the table's primary-key
    /// order) in the query's snapshot, as a one-row batch of all columns; `None` when absent or deleted.
    pub fn get(&self, key: &[Option<Datum>]) -> Result<Option<RecordBatch>> {
        // Bounded: a round is redone only when the query moved to another snapshot meanwhile.
        for _ in 0..8 {
            // 1. Under the lock: the files that may hold the key, and what is missing for them.
            let (view, snapshot_id, key_bytes, hits, missing, missing_vectors) = {
                let st = self.state.lock();
                let view = st.view.clone();
                let RoutedKey { partition, bucket, key } = route_key(&view.table, &view.layout, key)?;
                let key_bytes = view.keys.encode(&key)?;
                let partition = partition.serialize();
                let files: Vec<&Candidate> = match bucket {
                    Some(b) => st.buckets.get(&(partition, b)).into_iter().flatten().collect(),
                    // Dynamic and postpone buckets: every bucket of the partition may hold the key.
                    None => st
                        .buckets
                        .iter()
                        .filter(|((p, b), _)| *p == partition && in_bucket(None, *b))
                        .flat_map(|(_, files)| files.iter())
                        .collect(),
                };
                let hits: Vec<Candidate> = files
                    .into_iter()
                    .filter(|c| c.min.as_slice() <= key_bytes.as_slice() && key_bytes.as_slice() <= c.max.as_slice())
                    .cloned()
                    .collect();
                let missing: Vec<Candidate> =
                    hits.iter().filter(|c| !st.files.contains_key(&c.path)).cloned().collect();
                let missing_vectors: Vec<DeletionFile> = hits
                    .iter()
                    .filter_map(|c| c.deletion_file.clone())
                    .filter(|d| !st.vectors.contains_key(&(d.path.clone(), d.meta.offset)))
                    .collect();
                (view, st.snapshot.as_ref().map(|s| s.id), key_bytes, hits, missing, missing_vectors)
            };
            if hits.is_empty() {
                return Ok(None);
            }
            // 2. Without the lock: build local files and read deletion vectors.
            let mut built = Vec::with_capacity(missing.len());
            for c in &missing {
                built.push((c.path.clone(), view.build(self.new_local_path(&c.meta), &c.path, &c.meta)?));
            }
            let mut vectors = Vec::with_capacity(missing_vectors.len());
            for d in &missing_vectors {
                vectors.push(((d.path.clone(), d.meta.offset), Arc::new(d.read(view.table.io().as_ref())?)));
            }
            // 3. Under the lock again: keep what was built and look the key up in each file.
            let mut st = self.state.lock();
            if st.snapshot.as_ref().map(|s| s.id) != snapshot_id || !Arc::ptr_eq(&st.view, &view) {
                continue;
            }
            for (path, f) in built {
                st.insert(path, f);
            }
            st.vectors.extend(vectors);
            let keep: HashSet<String> = hits.iter().map(|c| c.path.clone()).collect();
            st.evict(&keep);
            let mut runs: Vec<Run> = Vec::new();
            let mut run_levels = Vec::new();
            for c in &hits {
                let dv = match &c.deletion_file {
                    Some(d) => st.vectors.get(&(d.path.clone(), d.meta.offset)).cloned(),
                    None => None,
                };
                let rows = match st.copies_in_file(&c.path, &key_bytes, dv.as_deref()) {
                    Ok(rows) => rows,
                    // Evicted by another lookup since, or damaged (then already dropped): build it here, under
                    // the lock, so that nothing can take it away before it is read.
                    Err(_) => {
                        let f = view.build(self.new_local_path(&c.meta), &c.path, &c.meta)?;
                        st.insert(c.path.clone(), f);
                        st.evict(&keep);
                        match st.copies_in_file(&c.path, &key_bytes, dv.as_deref()) {
                            Ok(rows) => rows,
                            Err(Some(e)) => return Err(e),
                            Err(None) => return Err(Error::invalid("get", "a local lookup file vanished")),
                        }
                    }
                };
                if let Some(rows) = rows {
                    runs.push(Box::new(std::iter::once(Ok(rows))));
                    run_levels.push(c.meta.level);
                }
            }
            drop(st);
            return merge_copies(&view.table, &view.layout, runs, run_levels);
        }
        Err(Error::invalid("get", "the query moved to another snapshot during each of 8 attempts"))
    }
}

impl std::fmt::Debug for TableQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("TableQuery")
            .field("table", &st.view.table.path())
            .field("snapshot", &st.snapshot.as_ref().map(|s| s.id))
            .finish()
    }
}

/// Reads the rows at `positions` (ascending) through an open local lookup file whose blocks start at
/// `starts`; the rows and the number of blocks read.
fn read_rows(
    reader: &mut LocalReader,
    shown: &str,
    starts: &[u64],
    positions: &[u64],
    schema: &arrow_schema::SchemaRef,
) -> Result<(RecordBatch, u64)> {
    let bad = |m: String| Error::Corrupt { path: shown.to_string(), message: m };
    let block_of = |p: u64| starts.partition_point(|&s| s <= p).saturating_sub(1);
    let (Some(&first), Some(&last)) = (positions.first(), positions.last()) else {
        return Ok((RecordBatch::new_empty(schema.clone()), 0));
    };
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
        pieces.push(arrow_select::take::take_record_batch(&batch, &idx).map_err(|e| bad(e.to_string()))?);
    }
    let rows = arrow_select::concat::concat_batches(schema, &pieces).map_err(|e| bad(e.to_string()))?;
    Ok((rows, pieces.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table_writer::TableWriter;
    use strata_io::{FileIO, LocalFileIO};
    use strata_spec::{DataType, TableSchema};

    /// More data files than readers may stay open: every key is still found, and never more than
    /// `MAX_OPEN_READERS` local files are open at once.
    #[test]
    fn open_readers_stay_bounded_across_many_files() {
        let dir = tempfile::tempdir().unwrap();
        let options =
            [("bucket", "1"), ("num-sorted-run.compaction-trigger", "1000"), ("num-sorted-run.stop-trigger", "1000")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let schema = TableSchema::new(
            vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint())],
            vec![],
            vec!["id".into()],
            options,
            0,
        )
        .unwrap();
        let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
        let table = Table::create(io, dir.path().join("t").to_str().unwrap(), schema).unwrap();
        let mut w = TableWriter::new(&table, "w").unwrap();
        let files = MAX_OPEN_READERS as i64 + 16;
        // One level-0 file per commit, each holding its own key.
        for k in 0..files {
            w.put(vec![Some(Datum::BigInt(k)), Some(Datum::BigInt(k * 10))]).unwrap();
            w.commit().unwrap();
        }
        let query = TableQuery::new(&table).unwrap();
        for round in 0..2 {
            for k in 0..files {
                let row = query.get(&[Some(Datum::BigInt(k))]).unwrap().unwrap();
                let v = row.column(1).as_any().downcast_ref::<arrow_array::Int64Array>().unwrap().value(0);
                assert_eq!(v, k * 10, "round {round} key {k}");
                let st = query.state.lock();
                let open = st.files.values().filter(|f| f.reader.is_some()).count();
                assert_eq!(open, st.open_readers);
                assert!(open <= MAX_OPEN_READERS, "{open} readers open");
            }
        }
        assert_eq!(query.stats().built, files as u64, "local files were rebuilt");
        assert_eq!(query.state.lock().open_readers, MAX_OPEN_READERS);
    }
}
