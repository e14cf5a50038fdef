//! Repeated point lookups through local lookup files (Paimon's `LocalTableQuery`, the store behind Flink's
//! lookup joins).
//!
//! [`get`](crate::get) answers one lookup from the remote files: it reads the snapshot's
//! metadata and decodes a page of every column of each candidate file, tens of milliseconds per key. A
//! [`TableQuery`] pays for a file once instead: the first lookup that lands in a data file reads it whole
//! and writes its rows to a local row file in groups of 8 rows (each row packed, each group lz4-compressed by
//! default where that pays and checked by a CRC32), keeping the file's keys (arrow-row bytes, sorted like the
//! file) and a bloom filter in memory. Later lookups in that file are a bloom probe, a binary search and one
//! group read from local disk, decoded straight into a one-row batch whose arrays share the group's buffers.
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
use std::sync::Arc;

use arrow_array::RecordBatch;
use parking_lot::Mutex;
use strata_dv::DeletionVector;
use strata_format::lookup::{KeyEncoder, LookupCacheOptions, LookupFile, LookupFileCache, LookupFileSpec, LookupStats};
use strata_format::{KeyValueLayout, MergeConfig};
use strata_io::ScratchDir;
use strata_spec::{DataFileMeta, Datum, Error, Result, Snapshot};

use crate::read::point_read::KeyRouter;
use crate::table::{DeletionFile, Table};

mod batch;
pub use batch::{FoundRow, FoundRows, PackedTableRow};

/// Each (serialized partition, bucket)'s candidate files.
type BucketFiles = HashMap<(Vec<u8>, i32), Vec<Arc<Candidate>>>;

/// The bucket count each (serialized) partition's files were written with, where they record one.
type PartitionBuckets = HashMap<Vec<u8>, i32>;

/// A data file that may hold a key, with its key range in arrow-row bytes (shared: a lookup takes the
/// candidates it touches out of the lock without copying their metadata).
struct Candidate {
    path: String,
    /// Its place among the snapshot's live files: copies of a key in several files merge in this order.
    order: usize,
    meta: DataFileMeta,
    min: Vec<u8>,
    max: Vec<u8>,
    deletion_file: Option<DeletionFile>,
}

/// How the query reads the table: fixed for one schema.
struct View {
    table: Table,
    /// The schema id the view was opened for.
    schema_id: i64,
    layout: Arc<KeyValueLayout>,
    router: KeyRouter,
    keys: KeyEncoder,
    /// Deletion-vector (or first-row) tables read levels >= 1 only, as a scan does.
    raw: bool,
    cache: LookupCacheOptions,
    spec: LookupFileSpec,
    /// The table's merge engine, for keys with copies in several files.
    merge: MergeConfig,
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
            // A query reads rows again and again: their decompressed groups stay in the memory keys leave.
            cache_groups: true,
        };
        let compression = match o.lookup_cache_spill_compression()?.as_str() {
            "zstd" => Some(arrow_ipc::CompressionType::ZSTD),
            "lz4" => Some(arrow_ipc::CompressionType::LZ4_FRAME),
            _ => None,
        };
        let spec = LookupFileSpec { with_rows: true, bloom_fpp: cache.bloom_fpp, compression };
        let merge = MergeConfig::from_schema(schema)?;
        let router = KeyRouter::new(&table, &layout)?;
        Ok(View {
            schema_id: schema.id,
            keys: KeyEncoder::new(&layout)?,
            router,
            layout,
            raw,
            cache,
            spec,
            merge,
            table,
        })
    }

    /// Each bucket's candidate files in `snapshot`, and each partition's bucket count.
    fn candidates(&self, snapshot: &Snapshot) -> Result<(BucketFiles, PartitionBuckets)> {
        let mut buckets: BucketFiles = HashMap::new();
        let mut totals: PartitionBuckets = HashMap::new();
        let mut deletion_files = self.table.deletion_files(snapshot)?;
        for (order, e) in self.table.live_files_shared(snapshot)?.iter().enumerate() {
            if self.raw && e.file.level == 0 {
                continue;
            }
            let deletion_files_key = (e.partition.clone(), e.bucket, e.file.file_name.clone());
            if e.total_buckets > 0 {
                totals.insert(e.partition.serialize(), e.total_buckets);
            }
            buckets.entry((e.partition.serialize(), e.bucket)).or_default().push(Arc::new(Candidate {
                path: self.table.data_file_path(e)?,
                order,
                min: self.keys.encode_row(&e.file.min_key)?,
                max: self.keys.encode_row(&e.file.max_key)?,
                meta: e.file.clone(),
                deletion_file: deletion_files.remove(&deletion_files_key),
            }));
        }
        Ok((buckets, totals))
    }

    /// Reads a data file whole into a lookup file in `scratch`.
    fn build(&self, scratch: &ScratchDir, c: &Candidate) -> Result<LookupFile> {
        let file = self.layout.file_ref(c.path.clone(), c.meta.clone(), None)?;
        let local = || scratch.file(&format!("{}.lookup", c.meta.file_name));
        LookupFile::build(self.table.io(), &self.layout, &self.keys, &file, local, &self.spec)
    }
}

/// The state behind the lock: the view, the snapshot's candidates per bucket, loaded deletion vectors and
/// the lookup files (keyed by data-file path).
struct State {
    view: Arc<View>,
    snapshot: Option<Snapshot>,
    buckets: BucketFiles,
    partition_buckets: PartitionBuckets,
    vectors: HashMap<(String, i32), Arc<DeletionVector>>,
    cache: LookupFileCache,
}

impl State {
    /// Points the state at `snapshot`: its candidate files per bucket; lookup files of files that left go.
    fn load(&mut self, snapshot: Option<Snapshot>) -> Result<()> {
        let _span = tracing::debug_span!("query_load_snapshot", id = snapshot.as_ref().map(|s| s.id)).entered();
        let (buckets, partition_buckets) = match &snapshot {
            Some(s) => self.view.candidates(s)?,
            None => (HashMap::new(), HashMap::new()),
        };
        let live: HashSet<&str> = buckets.values().flatten().map(|c| c.path.as_str()).collect();
        self.cache.retain(|p| live.contains(p));
        // Vectors are keyed by where they are stored: one that did not change is reused.
        let wanted: HashSet<(String, i32)> = buckets
            .values()
            .flatten()
            .filter_map(|c| c.deletion_file.as_ref().map(|d| (d.path.clone(), d.meta.offset)))
            .collect();
        self.vectors.retain(|k, _| wanted.contains(k));
        self.buckets = buckets;
        self.partition_buckets = partition_buckets;
        self.snapshot = snapshot;
        Ok(())
    }
}

/// The lookup files eviction must keep while one lookup reads them: those of every file it looks in.
fn keep_all(hits: &[Arc<Candidate>]) -> HashSet<&str> {
    hits.iter().map(|c| c.path.as_str()).collect()
}

/// Point lookups against one snapshot of a table, through local lookup files built on first use (Paimon's
/// `LocalTableQuery`). Shared across threads: lookups of different threads run side by side except for the
/// short steps that touch the shared state.
pub struct TableQuery {
    state: Mutex<State>,
    /// Where the local files are; removed with the query.
    scratch: Arc<ScratchDir>,
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
        let scratch = Arc::new(ScratchDir::new("strata-query-"));
        let view = View::new(table.as_of(id)?)?;
        let cache = LookupFileCache::new(view.cache.clone(), scratch.clone());
        let mut state = State {
            view: Arc::new(view),
            snapshot: None,
            buckets: HashMap::new(),
            partition_buckets: HashMap::new(),
            vectors: HashMap::new(),
            cache,
        };
        state.load(snapshot)?;
        Ok(TableQuery { state: Mutex::new(state), scratch })
    }

    /// The snapshot the query reads (`None` for a table with no snapshot yet).
    pub fn snapshot_id(&self) -> Option<i64> {
        self.state.lock().snapshot.as_ref().map(|s| s.id)
    }

    /// What the query has done so far.
    pub fn stats(&self) -> LookupStats {
        self.state.lock().cache.stats()
    }

    /// Bytes the local lookup files take: in memory (keys, bloom filters, row-group offsets) and on local disk.
    pub fn cache_bytes(&self) -> (u64, u64) {
        self.state.lock().cache.bytes()
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
            let reopened = table.reopen()?;
            let view = View::new(reopened)?;
            let stats_before = st.cache.stats();
            st.cache = LookupFileCache::new(view.cache.clone(), self.scratch.clone());
            tracing::debug!(?stats_before, "lookup files dropped for a new schema");
            st.view = Arc::new(view);
            st.vectors.clear();
        }
        let id = latest.id;
        st.load(Some(latest))?;
        Ok(Some(id))
    }

    /// The row whose primary key is `key` (values of every primary-key column, in the table's primary-key
    /// order) in the query's snapshot, as a one-row batch of all columns; `None` when absent or deleted.
    pub fn get(&self, key: &[Option<Datum>]) -> Result<Option<RecordBatch>> {
        let found = self.get_many(std::slice::from_ref(&key.to_vec()))?;
        Ok(found.found.first().copied().unwrap_or(false).then_some(found.rows))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::table_writer::TableWriter;
    use strata_format::lookup::MAX_OPEN_READERS;
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
                let open = query.state.lock().cache.open_readers();
                assert!(open <= MAX_OPEN_READERS, "{open} readers open");
            }
        }
        assert_eq!(query.stats().built, files as u64, "local files were rebuilt");
        assert_eq!(query.state.lock().cache.open_readers(), MAX_OPEN_READERS);
    }
}
