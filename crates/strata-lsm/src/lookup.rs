//! Lookup levels (Paimon's `LookupLevels`): for a key, the newest live copy in the levels at or below a
//! given level: its file and row position, and the record itself when the merge engine needs the old value.
//!
//! Each deeper file's keys come from its local lookup file (`strata_format::lookup`, the same files and
//! cache point lookups use), built lazily on first use with a bloom filter that answers most misses without
//! a search, bounded by `lookup.cache-max-memory-size` and `lookup.cache-max-disk-size`; a file's lookup
//! file goes when the file leaves the levels. Deleted rows are skipped by checking the bucket's current
//! deletion vectors at lookup time, so a lookup file built before a deletion never returns the deleted row
//! (the failure behind Paimon issue 8204).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::RecordBatch;
use strata_dv::BucketedDvMaintainer;
use strata_format::lookup::{KeyEncoder, LookupCacheOptions, LookupFile, LookupFileCache, LookupFileSpec, Probe};
use strata_format::KeyValueLayout;
use strata_io::{join, FileIO, ScratchDir};
use strata_spec::{DataFileMeta, Error, Result};

use crate::levels::Levels;

/// Where a key's older copy is.
#[derive(Debug, Clone)]
pub(crate) struct LookupHit {
    /// The data file.
    pub file_name: String,
    /// Row position in the file.
    pub position: u64,
    /// The record (one row, file layout) when values were asked for.
    pub record: Option<RecordBatch>,
}

/// The local lookup files of one bucket's deeper levels.
pub(crate) struct LookupLevels {
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    bucket_dir: String,
    keys: KeyEncoder,
    spec: LookupFileSpec,
    cache: LookupFileCache,
    ranges: HashMap<String, (Vec<u8>, Vec<u8>)>,
}

impl LookupLevels {
    /// Lookups into files of `bucket_dir`; `need_values` keeps records for partial-update and aggregation.
    pub(crate) fn new(
        io: Arc<dyn FileIO>,
        layout: Arc<KeyValueLayout>,
        bucket_dir: String,
        need_values: bool,
        options: LookupCacheOptions,
    ) -> Result<Self> {
        let spec = LookupFileSpec { with_rows: need_values, bloom_fpp: options.bloom_fpp, compression: None };
        Ok(LookupLevels {
            keys: KeyEncoder::new(&layout)?,
            io,
            layout,
            bucket_dir,
            spec,
            cache: LookupFileCache::new(options, Arc::new(ScratchDir::new("strata-lookup-"))),
            ranges: HashMap::new(),
        })
    }

    /// Forgets a file that left the levels (its lookup file, on disk too).
    pub(crate) fn drop_file(&mut self, name: &str) {
        self.cache.forget(name);
        self.ranges.remove(name);
    }

    /// Number of cached lookup files.
    #[cfg(test)]
    pub(crate) fn cached(&self) -> usize {
        self.cache.len()
    }

    /// Bytes of lookup files in memory.
    #[cfg(test)]
    pub(crate) fn memory_bytes(&self) -> u64 {
        self.cache.bytes().0
    }

    /// What the cache has done so far.
    #[cfg(test)]
    pub(crate) fn stats(&self) -> strata_format::lookup::LookupStats {
        self.cache.stats()
    }

    fn range(&mut self, f: &DataFileMeta) -> Result<&(Vec<u8>, Vec<u8>)> {
        if !self.ranges.contains_key(&f.file_name) {
            let r = (self.keys.encode_row(&f.min_key)?, self.keys.encode_row(&f.max_key)?);
            self.ranges.insert(f.file_name.clone(), r);
        }
        self.ranges.get(&f.file_name).ok_or_else(|| Error::corrupt("lookup range vanished"))
    }

    /// Builds `f`'s lookup file and adds it to the cache (then within its bounds, `f` kept).
    fn build(&mut self, f: &DataFileMeta) -> Result<()> {
        let file = self.layout.file_ref(join(&self.bucket_dir, &f.file_name), f.clone(), None)?;
        let scratch = self.cache.scratch().clone();
        let built = LookupFile::build(
            &self.io,
            &self.layout,
            &self.keys,
            &file,
            || scratch.file(&format!("{}.lookup", f.file_name)),
            &self.spec,
        )?;
        self.cache.insert(f.file_name.clone(), built);
        self.cache.evict(&HashSet::from([f.file_name.as_str()]));
        Ok(())
    }

    /// The positions of `key` in `f`, building its lookup file when the cache has none.
    fn positions(&mut self, f: &DataFileMeta, key: &[u8]) -> Result<std::ops::Range<usize>> {
        for _ in 0..2 {
            match self.cache.probe(&f.file_name, key) {
                Probe::Positions(p) => return Ok(p),
                Probe::NotCached => self.build(f)?,
            }
        }
        Err(Error::invalid("lookup", format!("the lookup file of {} could not be kept", f.file_name)))
    }

    /// The record at `position` of `f` (file layout), from its lookup file, rebuilt once if unreadable.
    fn record(&mut self, f: &DataFileMeta, key: &[u8], position: u64) -> Result<RecordBatch> {
        let schema = self.layout.file_schema.clone();
        match self.cache.read_rows(&f.file_name, &[position], &schema) {
            Ok(r) => Ok(r),
            Err(_) => {
                self.positions(f, key)?;
                self.cache.read_rows(&f.file_name, &[position], &schema)
            }
        }
    }

    /// The newest live copy of `key` (arrow-row bytes) at levels `start_level..`, skipping rows the bucket's
    /// deletion vectors already delete.
    pub(crate) fn lookup(
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
            // Without deletion vectors a file at a level >= 1 may hold a key twice (a reset retraction, then
            // the result, from remove-record-on-delete): the newest copy is the last.
            let Some(a) = self.positions(f, key)?.last() else { continue };
            let position = a as u64;
            if dvs.and_then(|d| d.deletion_vector_of(&f.file_name)).is_some_and(|dv| dv.is_deleted(position)) {
                // Already superseded; an older copy below would be too, but keep looking in case the levels
                // hold a stale duplicate (a table switched into deletion-vector mode).
                continue;
            }
            let record = if self.spec.with_rows { Some(self.record(f, key, position)?) } else { None };
            return Ok(Some(LookupHit { file_name: f.file_name.clone(), position, record }));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::ArrayRef;
    use arrow_array::{Int64Array, Int8Array};
    use strata_format::{FileFormat, KvFileWriter, WriterConfig};
    use strata_io::MemoryFileIO;
    use strata_spec::DataType;
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
        let tiny = LookupCacheOptions { max_memory: 1, max_disk: u64::MAX, bloom_fpp: Some(0.01), cache_groups: false };
        let mut ll = LookupLevels::new(io.clone(), layout.clone(), "/b".into(), true, tiny).unwrap();
        assert_eq!(answers(&mut ll, &levels), want);
        let s = ll.stats();
        assert_eq!(s.built, 6, "{s:?}");
        assert!(s.spilled > 0 && s.reloaded > 0, "{s:?}");
        // Only the file in use keeps its keys in memory.
        let (tiny_memory, all_memory) = (ll.memory_bytes(), unbounded.memory_bytes());
        assert!(tiny_memory * 3 < all_memory, "keys stayed in memory: {tiny_memory} of {all_memory} bytes");
        let dir = ll.cache.scratch().path().unwrap();
        // Per data file, its rows; and its keys, once they were moved out of memory.
        let names: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        let key_files = names.iter().filter(|n| n.ends_with(".keys")).count();
        assert_eq!(names.len() - key_files, 6, "one row file per data file: {names:?}");
        assert!(key_files > 0 && key_files <= 6, "{names:?}");
        for f in levels.level(1) {
            ll.drop_file(&f.file_name);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "dropped files left local files behind");
        assert_eq!((ll.cached(), ll.memory_bytes()), (0, 0));

        // No disk either: evicted indexes are rebuilt from the data files; no bloom filters.
        let none = LookupCacheOptions { max_memory: 1, max_disk: 0, bloom_fpp: None, cache_groups: false };
        let mut ll = LookupLevels::new(io, layout, "/b".into(), true, none).unwrap();
        assert_eq!(answers(&mut ll, &levels), want);
        let s = ll.stats();
        assert!(s.built > 6 && s.bloom_skips == 0 && s.reloaded == 0, "{s:?}");
    }

    #[test]
    fn a_damaged_cache_file_is_rebuilt_from_the_data_file() {
        let (io, layout, levels) = setup();
        let tiny = LookupCacheOptions { max_memory: 1, max_disk: u64::MAX, bloom_fpp: None, cache_groups: false };
        let mut ll = LookupLevels::new(io.clone(), layout.clone(), "/b".into(), false, tiny).unwrap();
        let k0 = key(&ll, 0);
        let k1 = key(&ll, 150);
        assert!(ll.lookup(&levels, 1, &k0, None).unwrap().is_some());
        assert!(ll.lookup(&levels, 1, &k1, None).unwrap().is_some());
        let dir = ll.cache.scratch().path().unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            std::fs::write(e.unwrap().path(), b"not an arrow file").unwrap();
        }
        let hit = ll.lookup(&levels, 1, &k0, None).unwrap().unwrap();
        assert_eq!((hit.file_name.as_str(), hit.position), ("f0.parquet", 0));
        assert_eq!(ll.stats().built, 3);
    }

    /// A lookup file whose rows cannot be read any more (damaged local disk) is rebuilt from the data file:
    /// the old value a partial-update merge needs is never lost or taken from the wrong row.
    #[test]
    fn a_damaged_row_file_is_rebuilt_and_returns_the_right_record() {
        let (io, layout, levels) = setup();
        let mut ll = LookupLevels::new(io, layout, "/b".into(), true, LookupCacheOptions::default()).unwrap();
        let k = key(&ll, 242);
        let hit = ll.lookup(&levels, 1, &k, None).unwrap().unwrap();
        assert_eq!(hit.record.unwrap().column(4).as_primitive::<Int64Type>().value(0), 2420);
        let dir = ll.cache.scratch().path().unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let mut bytes = std::fs::read(&p).unwrap();
            let n = bytes.len();
            bytes.truncate(n / 2);
            std::fs::write(p, bytes).unwrap();
        }
        // The reader opened by the first lookup reads the damaged file now.
        let k = key(&ll, 250);
        let hit = ll.lookup(&levels, 1, &k, None).unwrap().unwrap();
        assert_eq!((hit.file_name.as_str(), hit.position), ("f2.parquet", 25));
        assert_eq!(hit.record.unwrap().column(4).as_primitive::<Int64Type>().value(0), 2500);
        let s = ll.stats();
        assert_eq!((s.built, s.evicted), (2, 1), "{s:?}");
    }
}
