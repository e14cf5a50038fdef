//! The cache of local lookup files, bounded in memory and on local disk, least recently used first out
//! (Paimon's lookup file cache, `lookup.cache-max-memory-size` and `lookup.cache-max-disk-size`). Both
//! compaction lookups (`LookupLevels`) and point lookups (`TableQuery`) keep their files here.
//!
//! Past the memory bound a file's keys move to a local key file (written the first time) and come back
//! on its next probe; past the disk bound, or when nothing can be written, the file goes and is rebuilt from
//! its data file when needed again. A local file that cannot be read is dropped the same way.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use strata_io::ScratchDir;
use strata_spec::{Error, Result};

use super::file::LookupFile;
use super::groups::GroupCache;
use super::packed::PackedRow;
use super::rows::GROUP_ROWS;

/// Local row files kept open at most (a reader holds a descriptor).
pub const MAX_OPEN_READERS: usize = 64;

/// Bounds of a lookup file cache (Paimon's `lookup.cache-max-memory-size`, `lookup.cache-max-disk-size`,
/// `lookup.cache.bloom.filter.*`).
#[derive(Debug, Clone)]
pub struct LookupCacheOptions {
    /// Bytes kept in memory (keys, bloom filters, where row groups lie); past it, least recently used keys move to
    /// local disk.
    pub max_memory: u64,
    /// Bytes of local files; past it, least recently used files are dropped and rebuilt when needed.
    pub max_disk: u64,
    /// False-positive rate of the per-file bloom filters, `None` without bloom filters.
    pub bloom_fpp: Option<f64>,
    /// Keep decompressed row groups in the memory the keys leave (point lookups, which read rows again and
    /// again); compaction lookups read each row about once and do not.
    pub cache_groups: bool,
}

impl Default for LookupCacheOptions {
    fn default() -> Self {
        LookupCacheOptions { max_memory: 256 << 20, max_disk: u64::MAX, bloom_fpp: Some(0.05), cache_groups: false }
    }
}

/// What a cache has done, for tests and tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookupStats {
    /// Lookup files built by reading a data file.
    pub built: u64,
    /// Keys moved from memory to local disk.
    pub spilled: u64,
    /// Keys read back from local disk.
    pub reloaded: u64,
    /// Lookup files dropped to stay within the bounds (or because they could not be read).
    pub evicted: u64,
    /// Probes a bloom filter answered without a search.
    pub bloom_skips: u64,
    /// Groups of rows (a few rows each) read from local row files.
    pub blocks_read: u64,
    /// Groups of rows found decompressed in memory.
    pub block_hits: u64,
}

/// What a probe of the cache found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// No usable lookup file: build one.
    NotCached,
    /// The key's positions in the file (empty: the key is not there).
    Positions(Range<usize>),
}

/// Lookup files by a name of the owner's choosing (a data file's name or path).
pub struct LookupFileCache {
    options: LookupCacheOptions,
    scratch: Arc<ScratchDir>,
    files: HashMap<String, LookupFile>,
    /// Decompressed row groups, in the memory the files leave.
    groups: GroupCache,
    /// The id the next file inserted gets.
    next_id: u64,
    /// Memory the files take (keys, bloom filters, where groups lie); the groups' is theirs.
    memory: u64,
    disk: u64,
    clock: u64,
    open_readers: usize,
    stats: LookupStats,
}

impl LookupFileCache {
    /// An empty cache whose local files go to `scratch`.
    pub fn new(options: LookupCacheOptions, scratch: Arc<ScratchDir>) -> Self {
        LookupFileCache {
            options,
            scratch,
            files: HashMap::new(),
            groups: GroupCache::default(),
            next_id: 1,
            memory: 0,
            disk: 0,
            clock: 0,
            open_readers: 0,
            stats: LookupStats::default(),
        }
    }

    /// The bounds.
    pub fn options(&self) -> &LookupCacheOptions {
        &self.options
    }

    /// Where local files go (to build files outside the owner's lock).
    pub fn scratch(&self) -> &Arc<ScratchDir> {
        &self.scratch
    }

    /// What the cache has done so far.
    pub fn stats(&self) -> LookupStats {
        self.stats
    }

    /// Bytes in memory (decompressed row groups included) and on local disk.
    pub fn bytes(&self) -> (u64, u64) {
        (self.memory + self.groups.bytes(), self.disk)
    }

    /// Number of cached files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is cached.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Number of local files open for row reads.
    pub fn open_readers(&self) -> usize {
        self.open_readers
    }

    /// Whether `name` has a lookup file.
    pub fn contains(&self, name: &str) -> bool {
        self.files.contains_key(name)
    }

    /// Names of the cached files.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Adds a file built for `name`, unless one is there already (another thread built it meanwhile: then
    /// `file` goes, with its local file).
    pub fn insert(&mut self, name: String, mut file: LookupFile) {
        if self.files.contains_key(&name) {
            return;
        }
        self.clock += 1;
        file.last_used = self.clock;
        file.id = self.next_id;
        self.next_id += 1;
        self.memory += file.memory_size();
        self.disk += file.disk_size();
        self.files.insert(name, file);
        self.stats.built += 1;
    }

    /// Drops `name`'s file (and its local file).
    pub fn forget(&mut self, name: &str) {
        if let Some(f) = self.files.remove(name) {
            self.groups.drop_file(f.id);
            self.memory = self.memory.saturating_sub(f.memory_size());
            self.disk = self.disk.saturating_sub(f.disk_size());
            if f.reader_open() {
                self.open_readers -= 1;
            }
        }
    }

    /// Keeps only the files whose names `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        let gone: Vec<String> = self.files.keys().filter(|n| !keep(n)).cloned().collect();
        for name in gone {
            self.forget(&name);
        }
    }

    /// The positions of `key` (arrow-row bytes) in `name`'s file, marking it most recently used; keys moved
    /// to local disk are read back first (and other files' keys make room for them).
    pub fn probe(&mut self, name: &str, key: &[u8]) -> Probe {
        let Some(f) = self.touch(name) else { return Probe::NotCached };
        if !f.may_contain(key) {
            self.stats.bloom_skips += 1;
            return Probe::Positions(0..0);
        }
        let Some(reloaded) = self.keys_in_memory(name) else { return Probe::NotCached };
        let positions = self.files.get(name).and_then(|f| f.positions(key));
        if reloaded {
            self.evict(&HashSet::from([name]));
        }
        positions.map_or(Probe::NotCached, Probe::Positions)
    }

    /// The positions of each of `sorted` (keys in ascending order, as arrow-row bytes) in `name`'s file, as
    /// [`LookupFileCache::probe`] finds them one at a time; `None` when there is no usable lookup file.
    pub fn probe_sorted(&mut self, name: &str, sorted: &[&[u8]]) -> Option<Vec<Range<usize>>> {
        self.touch(name)?;
        let reloaded = self.keys_in_memory(name)?;
        let found = self.files.get(name)?.positions_sorted(sorted, &mut self.stats.bloom_skips);
        if reloaded {
            self.evict(&HashSet::from([name]));
        }
        found
    }

    /// `name`'s file, marked most recently used.
    fn touch(&mut self, name: &str) -> Option<&LookupFile> {
        self.clock += 1;
        let f = self.files.get_mut(name)?;
        f.last_used = self.clock;
        Some(f)
    }

    /// Reads `name`'s keys back from local disk if they were moved there: whether they were (the caller then
    /// makes room for them), `None` when there is no file or it cannot be read (then it is dropped).
    fn keys_in_memory(&mut self, name: &str) -> Option<bool> {
        let f = self.files.get_mut(name)?;
        if f.keys_resident() {
            return Some(false);
        }
        let before = f.memory_size();
        if let Err(e) = f.reload_keys() {
            tracing::warn!(file = name, error = %e, "local lookup file unreadable; rebuilding it");
            self.forget(name);
            self.stats.evicted += 1;
            return None;
        }
        self.memory += f.memory_size().saturating_sub(before);
        self.stats.reloaded += 1;
        Some(true)
    }

    /// The rows at `positions` (ascending) of `name`'s file, as batches of `schema` (the file layout). A
    /// file that cannot be read is dropped and the error returned: build it again.
    pub fn read_rows(&mut self, name: &str, positions: &[u64], schema: &SchemaRef) -> Result<RecordBatch> {
        let groups = positions.chunk_by(|a, b| a / GROUP_ROWS as u64 == b / GROUP_ROWS as u64).count() as u64;
        self.with_reader(name, |f, cached| {
            f.read_rows(positions, schema, cached).map(|(rows, read)| (rows, read, groups))
        })
    }

    /// Row `position` of `name`'s file in packed form, not decoded; `None` when its rows have no packed form
    /// (nested types). A file that cannot be read is dropped and the error returned, as for `read_rows`.
    pub fn packed_row(&mut self, name: &str, position: u64) -> Result<Option<PackedRow>> {
        self.with_reader(name, |f, cached| {
            f.packed_row(position, cached).map(|(row, read)| {
                let touched = u64::from(row.is_some());
                (row, read, touched)
            })
        })
    }

    /// `read` on `name`'s file, opened, with the group cache; `read` gives what it read, how many groups it
    /// read from the local file and how many it touched.
    fn with_reader<T>(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut LookupFile, &mut GroupCache) -> Result<(T, u64, u64)>,
    ) -> Result<T> {
        self.groups.set_limit(self.group_room());
        let read = self.open_reader(name).and_then(|()| {
            let f = self.files.get_mut(name).ok_or_else(|| Error::invalid("lookup", "a lookup file vanished"))?;
            read(f, &mut self.groups)
        });
        match read {
            Ok((rows, blocks, touched)) => {
                self.stats.blocks_read += blocks;
                self.stats.block_hits += touched.saturating_sub(blocks);
                Ok(rows)
            }
            Err(e) => {
                tracing::warn!(file = name, error = %e, "local lookup file unreadable; rebuilding it");
                self.forget(name);
                self.stats.evicted += 1;
                Err(e)
            }
        }
    }

    /// The memory decompressed groups may take: what the files leave (none unless the options cache them).
    fn group_room(&self) -> u64 {
        if self.options.cache_groups {
            self.options.max_memory.saturating_sub(self.memory)
        } else {
            0
        }
    }

    /// Opens `name`'s local file, closing the least recently used other one when [`MAX_OPEN_READERS`] are
    /// open.
    fn open_reader(&mut self, name: &str) -> Result<()> {
        match self.files.get(name) {
            None => return Err(Error::invalid("lookup", "a lookup file vanished")),
            Some(f) if f.reader_open() => return Ok(()),
            Some(_) => {}
        }
        if self.open_readers >= MAX_OPEN_READERS {
            let victim = self
                .files
                .iter_mut()
                .filter(|(n, f)| n.as_str() != name && f.reader_open())
                .min_by_key(|(_, f)| f.last_used);
            if let Some((_, f)) = victim {
                f.close_reader();
                self.open_readers -= 1;
            }
        }
        let f = self.files.get_mut(name).ok_or_else(|| Error::invalid("lookup", "a lookup file vanished"))?;
        f.open_reader()?;
        self.open_readers += 1;
        Ok(())
    }

    /// Brings memory and local disk within their bounds, least recently used first, never touching the
    /// files in `keep`.
    pub fn evict(&mut self, keep: &HashSet<&str>) {
        // Cached groups give way to keys first.
        self.groups.set_limit(self.group_room());
        while self.memory > self.options.max_memory {
            let victim = self
                .files
                .iter()
                .filter(|(n, f)| !keep.contains(n.as_str()) && f.keys_resident())
                .min_by_key(|(_, f)| f.last_used)
                .map(|(n, _)| n.clone());
            let Some(victim) = victim else { break };
            self.spill_or_drop(&victim);
        }
        while self.disk > self.options.max_disk {
            let victim = self
                .files
                .iter()
                .filter(|(n, f)| !keep.contains(n.as_str()) && f.disk_size() > 0)
                .min_by_key(|(_, f)| f.last_used)
                .map(|(n, _)| n.clone());
            let Some(victim) = victim else { break };
            self.forget(&victim);
            self.stats.evicted += 1;
        }
    }

    /// Moves `name`'s keys to local disk if the disk bound leaves room for them, else drops the file.
    fn spill_or_drop(&mut self, name: &str) {
        let room = self.disk < self.options.max_disk;
        let scratch = self.scratch.clone();
        let Some(f) = self.files.get_mut(name) else { return };
        // Keys not yet on local disk need room there; without it the file goes (rebuilt when needed).
        if !f.keys_on_disk() && !room {
            self.forget(name);
            self.stats.evicted += 1;
            return;
        }
        let before = f.memory_size();
        let base = name.rsplit('/').next().unwrap_or(name);
        match f.spill(|| scratch.file(&format!("{base}.keys"))) {
            Ok(written) => {
                self.memory = self.memory.saturating_sub(before - f.memory_size());
                self.disk += written;
                self.stats.spilled += 1;
            }
            // Local disk trouble only costs a rebuild from the data file later.
            Err(e) => {
                tracing::warn!(file = name, error = %e, "cannot write a local lookup file; dropping it");
                self.forget(name);
                self.stats.evicted += 1;
            }
        }
    }
}
