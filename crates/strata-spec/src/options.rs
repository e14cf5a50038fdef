//! Table options: Paimon's `CoreOptions` keys and defaults.
//!
//! Options live as strings in `schema/schema-N`. Keys Strata knows are parsed and validated with Paimon's
//! names and defaults; keys it does not know (engine options, future Paimon options) are kept as they are
//! and written back unchanged.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::{Error, Result};

/// `bucket`: -1 dynamic, -2 postpone, > 0 fixed.
pub const BUCKET: &str = "bucket";
/// `bucket-key`: comma-separated bucket key columns (default: the primary key without partition fields).
pub const BUCKET_KEY: &str = "bucket-key";
/// `file.format`: parquet (default), orc, avro.
pub const FILE_FORMAT: &str = "file.format";
/// `file.compression`: zstd by default.
pub const FILE_COMPRESSION: &str = "file.compression";
/// `file.compression.per.level`: codecs of data files by level, `0:lz4,1:zstd` (others: `file.compression`).
pub const FILE_COMPRESSION_PER_LEVEL: &str = "file.compression.per.level";
/// `manifest.compression`: zstd by default.
pub const MANIFEST_COMPRESSION: &str = "manifest.compression";
/// `manifest.format`: avro.
pub const MANIFEST_FORMAT: &str = "manifest.format";
/// `manifest.target-file-size`: 8 MB.
pub const MANIFEST_TARGET_FILE_SIZE: &str = "manifest.target-file-size";
/// `target-file-size`: 128 MB for primary-key tables.
pub const TARGET_FILE_SIZE: &str = "target-file-size";
/// `read.batch-size`: rows per batch when files are read (scans, and the merges of flushes and compactions).
pub const READ_BATCH_SIZE: &str = "read.batch-size";
/// `write-buffer-size`: 256 MB.
pub const WRITE_BUFFER_SIZE: &str = "write-buffer-size";
/// Parquet row-group size (parquet-mr's `parquet.block.size`, which Paimon passes to its writer).
pub const PARQUET_BLOCK_SIZE: &str = "parquet.block.size";
/// `write-buffer-spillable`: whether a full write buffer spills sorted runs to local disk (true in Strata).
pub const WRITE_BUFFER_SPILLABLE: &str = "write-buffer-spillable";
/// `write-buffer-spill.max-disk-size`: local disk the spilled runs of one bucket writer may use (unlimited).
pub const WRITE_BUFFER_SPILL_MAX_DISK_SIZE: &str = "write-buffer-spill.max-disk-size";
/// `spill-compression`: codec of spilled runs (Strata: none; Paimon: zstd).
pub const SPILL_COMPRESSION: &str = "spill-compression";
/// `local-sort.max-num-file-handles`: spilled runs merged at once (128).
pub const LOCAL_SORT_MAX_NUM_FILE_HANDLES: &str = "local-sort.max-num-file-handles";
/// `lookup.cache-max-memory-size`: lookup indexes a bucket writer keeps in memory (256 MB).
pub const LOOKUP_CACHE_MAX_MEMORY_SIZE: &str = "lookup.cache-max-memory-size";
/// `lookup.cache-max-disk-size`: lookup indexes a bucket writer keeps on local disk (unlimited).
pub const LOOKUP_CACHE_MAX_DISK_SIZE: &str = "lookup.cache-max-disk-size";
/// `lookup.cache-spill-compression`: codec of local lookup files (Strata: lz4; Paimon: zstd).
pub const LOOKUP_CACHE_SPILL_COMPRESSION: &str = "lookup.cache-spill-compression";
/// `lookup.cache.bloom.filter.enabled`: a bloom filter per lookup index (true).
pub const LOOKUP_CACHE_BLOOM_FILTER_ENABLED: &str = "lookup.cache.bloom.filter.enabled";
/// `lookup.cache.bloom.filter.fpp`: the bloom filters' false-positive rate (0.05).
pub const LOOKUP_CACHE_BLOOM_FILTER_FPP: &str = "lookup.cache.bloom.filter.fpp";
/// `num-sorted-run.compaction-trigger`: 5.
pub const NUM_SORTED_RUN_COMPACTION_TRIGGER: &str = "num-sorted-run.compaction-trigger";
/// `num-sorted-run.stop-trigger`: compaction trigger + 3.
pub const NUM_SORTED_RUN_STOP_TRIGGER: &str = "num-sorted-run.stop-trigger";
/// `num-levels`: compaction trigger + 1.
pub const NUM_LEVELS: &str = "num-levels";
/// `compaction.max-size-amplification-percent`: 200.
pub const COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT: &str = "compaction.max-size-amplification-percent";
/// `compaction.size-ratio`: 1.
pub const COMPACTION_SIZE_RATIO: &str = "compaction.size-ratio";
/// `compaction.delete-ratio-threshold`.
pub const COMPACTION_DELETE_RATIO_THRESHOLD: &str = "compaction.delete-ratio-threshold";
/// `deletion-vectors.enabled`: false.
pub const DELETION_VECTORS_ENABLED: &str = "deletion-vectors.enabled";
/// Key-value files without the `_KEY_*` columns (the key is read from the value columns).
pub const DATA_FILE_THIN_MODE: &str = "data-file.thin-mode";
/// `deletion-vectors.bitmap64`: false.
pub const DELETION_VECTORS_BITMAP64: &str = "deletion-vectors.bitmap64";
/// `deletion-vectors.merge-on-read`: false.
pub const DELETION_VECTORS_MERGE_ON_READ: &str = "deletion-vectors.merge-on-read";
/// `deletion-vectors.modifiable`: false.
pub const DELETION_VECTORS_MODIFIABLE: &str = "deletion-vectors.modifiable";
/// `deletion-vector.index-file.target-size`: 2 MB.
pub const DELETION_VECTOR_INDEX_FILE_TARGET_SIZE: &str = "deletion-vector.index-file.target-size";
/// `changelog-producer`: none.
pub const CHANGELOG_PRODUCER: &str = "changelog-producer";
/// `merge-engine`: deduplicate.
pub const MERGE_ENGINE: &str = "merge-engine";
/// `sequence.field`.
pub const SEQUENCE_FIELD: &str = "sequence.field";
/// `rowkind.field`.
pub const ROWKIND_FIELD: &str = "rowkind.field";
/// `ignore-delete`: false.
pub const IGNORE_DELETE: &str = "ignore-delete";
/// `lookup-wait`: true.
pub const LOOKUP_WAIT: &str = "lookup-wait";
/// `lookup-compact`: radical.
pub const LOOKUP_COMPACT: &str = "lookup-compact";
/// `lookup-compact.max-interval`: 2 × compaction trigger.
pub const LOOKUP_COMPACT_MAX_INTERVAL: &str = "lookup-compact.max-interval";
/// `commit.max-retries`: 10.
pub const COMMIT_MAX_RETRIES: &str = "commit.max-retries";
/// `commit.timeout`: unbounded.
pub const COMMIT_TIMEOUT: &str = "commit.timeout";
/// `write-only`: writers skip compactions (a dedicated compaction job compacts).
pub const WRITE_ONLY: &str = "write-only";
/// Strata's own: how long a COMPACT snapshot of another engine keeps Strata from compacting the
/// deletion-vector buckets it changed (default 1 hour; `0 s` turns the check off).
pub const FOREIGN_COMPACTION_WINDOW: &str = "strata.foreign-compaction.window";
/// Strata's own: the forced level-0 compaction also takes in the next runs within `compaction.size-ratio`, as
/// Paimon's `ForceUpLevel0Compaction` does (default false: level 0 takes the free level above the next run).
pub const LOOKUP_COMPACT_SIZE_RATIO: &str = "strata.lookup-compact.size-ratio";
/// `commit.min-retry-wait`: 10 ms.
pub const COMMIT_MIN_RETRY_WAIT: &str = "commit.min-retry-wait";
/// `commit.max-retry-wait`: 10 s.
pub const COMMIT_MAX_RETRY_WAIT: &str = "commit.max-retry-wait";
/// `snapshot.num-retained.min`: 10.
pub const SNAPSHOT_NUM_RETAINED_MIN: &str = "snapshot.num-retained.min";
/// `snapshot.num-retained.max`: unbounded.
pub const SNAPSHOT_NUM_RETAINED_MAX: &str = "snapshot.num-retained.max";
/// `snapshot.time-retained`: 1 h.
pub const SNAPSHOT_TIME_RETAINED: &str = "snapshot.time-retained";
/// `source.split.target-size`: 128 MB.
pub const SOURCE_SPLIT_TARGET_SIZE: &str = "source.split.target-size";
/// `source.split.open-file-cost`: 4 MB.
pub const SOURCE_SPLIT_OPEN_FILE_COST: &str = "source.split.open-file-cost";
/// `partition.default-name`: `__DEFAULT_PARTITION__`.
pub const PARTITION_DEFAULT_NAME: &str = "partition.default-name";
/// `dynamic-bucket.target-row-num`: 2,000,000 key hashes per bucket before a new bucket opens.
pub const DYNAMIC_BUCKET_TARGET_ROW_NUM: &str = "dynamic-bucket.target-row-num";
/// `dynamic-bucket.initial-buckets`: how many buckets of a partition take new keys at once (unset: 1).
pub const DYNAMIC_BUCKET_INITIAL_BUCKETS: &str = "dynamic-bucket.initial-buckets";
/// `dynamic-bucket.max-buckets`: -1 (unlimited) or the most buckets a partition gets.
pub const DYNAMIC_BUCKET_MAX_BUCKETS: &str = "dynamic-bucket.max-buckets";
/// `postpone.default-bucket-num`: buckets of a postpone-bucket partition compacted for the first time.
pub const POSTPONE_DEFAULT_BUCKET_NUM: &str = "postpone.default-bucket-num";
/// `postpone.target-row-num-per-bucket`: without a default bucket number, rows per bucket to aim at.
pub const POSTPONE_TARGET_ROW_NUM_PER_BUCKET: &str = "postpone.target-row-num-per-bucket";
/// `postpone.target-size-per-bucket`: otherwise, postponed file bytes per bucket to aim at (1 GB).
pub const POSTPONE_TARGET_SIZE_PER_BUCKET: &str = "postpone.target-size-per-bucket";

/// The merge engine of a primary-key table (`merge-engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeEngine {
    /// Keep the last row of a key.
    Deduplicate,
    /// Merge non-null fields of rows of a key.
    PartialUpdate,
    /// Aggregate fields of rows of a key.
    Aggregation,
    /// Keep the first row of a key.
    FirstRow,
}

/// How changelog is produced (`changelog-producer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogProducer {
    /// No changelog files.
    None,
    /// The input is the changelog.
    Input,
    /// Produced by full compactions.
    FullCompaction,
    /// Produced by lookup during compaction.
    Lookup,
}

/// `lookup-compact` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupCompactMode {
    /// Force level 0 up on every compaction trigger.
    Radical,
    /// Force level 0 up only every `lookup-compact.max-interval` triggers.
    Gentle,
}

/// Parses a Paimon `MemorySize` string: "128 mb", "64kb", "1024", "2 gb".
pub fn parse_memory_size(s: &str) -> Result<u64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 =
        num.parse().map_err(|_| Error::invalid("memory size", format!("'{s}' does not start with a number")))?;
    let mult: u64 = match unit.trim() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kibibytes" => 1 << 10,
        "m" | "mb" | "mebibytes" => 1 << 20,
        "g" | "gb" | "gibibytes" => 1 << 30,
        "t" | "tb" | "tebibytes" => 1 << 40,
        other => return Err(Error::invalid("memory size", format!("unknown unit '{other}' in '{s}'"))),
    };
    n.checked_mul(mult).ok_or_else(|| Error::invalid("memory size", format!("'{s}' overflows")))
}

/// Parses a Paimon duration string: "10 ms", "10s", "1 h", "30 min", "1 d", "500" (milliseconds).
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| Error::invalid("duration", format!("'{s}' does not start with a number")))?;
    let ms: u64 = match unit.trim() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        other => return Err(Error::invalid("duration", format!("unknown unit '{other}' in '{s}'"))),
    };
    n.checked_mul(ms).map(Duration::from_millis).ok_or_else(|| Error::invalid("duration", format!("'{s}' overflows")))
}

/// A table's options: typed access to Paimon's keys, everything else kept verbatim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreOptions {
    map: BTreeMap<String, String>,
}

impl CoreOptions {
    /// Wraps a raw option map. Values are checked by [`CoreOptions::validate`], not here.
    pub fn new(map: BTreeMap<String, String>) -> Self {
        CoreOptions { map }
    }

    /// The raw map, unknown keys included.
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.map
    }

    /// A raw value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(String::as_str)
    }

    /// Sets a raw value.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.map.insert(key.into(), value.into());
    }

    /// A value parsed as `T` (`None` when unset), refused naming the option.
    pub fn parsed<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<T>()
                .map(Some)
                .map_err(|_| Error::invalid(format!("option '{key}'"), format!("cannot parse '{v}'"))),
        }
    }

    /// A `true`/`false` value (`default` when unset), refused naming the option.
    pub fn bool_opt(&self, key: &str, default: bool) -> Result<bool> {
        match self.map.get(key).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(v) => Err(Error::invalid(format!("option '{key}'"), format!("'{v}' is not true or false"))),
        }
    }

    fn mem_opt(&self, key: &str, default: u64) -> Result<u64> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => parse_memory_size(v).map_err(|e| Error::invalid_from(format!("option '{key}'"), e)),
        }
    }

    fn dur_opt(&self, key: &str) -> Result<Option<Duration>> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => parse_duration(v).map(Some).map_err(|e| Error::invalid_from(format!("option '{key}'"), e)),
        }
    }

    /// `bucket` (default -1, dynamic).
    pub fn bucket(&self) -> Result<i32> {
        let b = self.parsed::<i32>(BUCKET)?.unwrap_or(-1);
        if b == 0 || b < -2 {
            return Err(Error::invalid(format!("option '{BUCKET}'"), format!("{b} is neither -1, -2 nor positive")));
        }
        Ok(b)
    }

    /// `bucket-key` columns, if set.
    pub fn bucket_key(&self) -> Option<Vec<String>> {
        self.get(BUCKET_KEY).map(|s| s.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
    }

    /// `file.format` (default parquet), lower-cased.
    pub fn file_format(&self) -> String {
        self.get(FILE_FORMAT).unwrap_or("parquet").to_ascii_lowercase()
    }

    /// `file.compression` (default zstd).
    pub fn file_compression(&self) -> String {
        self.get(FILE_COMPRESSION).unwrap_or("zstd").to_ascii_lowercase()
    }

    /// `manifest.compression` (default zstd).
    pub fn manifest_compression(&self) -> Result<String> {
        let c = self.get(MANIFEST_COMPRESSION).unwrap_or("zstd").to_ascii_lowercase();
        match c.as_str() {
            "zstd" | "snappy" | "deflate" | "null" | "none" => Ok(c),
            other => Err(Error::invalid(
                format!("option '{MANIFEST_COMPRESSION}'"),
                format!("'{other}' is not one of zstd, snappy, deflate, null"),
            )),
        }
    }

    /// `manifest.target-file-size` in bytes (default 8 MB).
    pub fn manifest_target_file_size(&self) -> Result<u64> {
        self.mem_opt(MANIFEST_TARGET_FILE_SIZE, 8 << 20)
    }

    /// `target-file-size` in bytes (default 128 MB for primary-key tables).
    pub fn target_file_size(&self) -> Result<u64> {
        self.mem_opt(TARGET_FILE_SIZE, 128 << 20)
    }

    /// `read.batch-size`: rows per batch when files are read, at least 1 (`None`: Strata's default, 8192).
    pub fn read_batch_size(&self) -> Result<Option<usize>> {
        match self.parsed::<usize>(READ_BATCH_SIZE)? {
            Some(0) => Err(Error::invalid(format!("option '{READ_BATCH_SIZE}'"), "must be at least 1")),
            n => Ok(n),
        }
    }

    /// `write-buffer-size` in bytes (default 256 MB).
    pub fn write_buffer_size(&self) -> Result<u64> {
        self.mem_opt(WRITE_BUFFER_SIZE, 256 << 20)
    }

    /// `parquet.block.size`: the encoded bytes of a parquet row group, `None` when unset (the writer's
    /// default). A writer holds a row group in memory until it is complete, so this is memory per open file.
    pub fn parquet_block_size(&self) -> Result<Option<u64>> {
        match self.map.get(PARQUET_BLOCK_SIZE) {
            None => Ok(None),
            Some(v) => match parse_memory_size(v) {
                Ok(0) => Err(Error::invalid(format!("option '{PARQUET_BLOCK_SIZE}'"), "must be more than 0 bytes")),
                Ok(n) => Ok(Some(n)),
                Err(e) => Err(Error::invalid_from(format!("option '{PARQUET_BLOCK_SIZE}'"), e)),
            },
        }
    }

    /// `write-buffer-spillable`. Paimon defaults it to true for batch writes and object stores and to false
    /// for streaming jobs; Strata's writers commit whole batches, so it defaults to true: a full buffer is
    /// sorted and spilled to a local temporary file, and a commit merges the spilled runs into one level-0 run
    /// instead of leaving many small level-0 files for compaction.
    pub fn write_buffer_spillable(&self) -> Result<bool> {
        self.bool_opt(WRITE_BUFFER_SPILLABLE, true)
    }

    /// `write-buffer-spill.max-disk-size` in bytes (default unlimited): past it, the buffer flushes to level 0.
    pub fn write_buffer_spill_max_disk_size(&self) -> Result<u64> {
        self.mem_opt(WRITE_BUFFER_SPILL_MAX_DISK_SIZE, u64::MAX)
    }

    /// `spill-compression`: `zstd`, `lz4`, `lzo` (Strata uses lz4 for it) or `none`. Paimon defaults to zstd;
    /// Strata defaults to none, because a spilled run is local scratch data read back once within the same
    /// commit, and compressing it cost a fifth to a third of single-core ingestion throughput when measured
    /// (3 M rows of 20 strings: none 280-299 K rows/s, lz4 240 K, zstd 212 K; docs/BENCHMARKS.md). Set it
    /// where local disk is scarcer than CPU.
    pub fn spill_compression(&self) -> Result<String> {
        self.local_compression(SPILL_COMPRESSION, "none")
    }

    /// `lookup.cache-spill-compression`: codec of the local lookup files of a `TableQuery` (`zstd`, `lz4`,
    /// `lzo` (Strata uses lz4 for it) or `none`). Paimon defaults to zstd; Strata defaults to lz4, because
    /// every lookup decompresses a block: on 1 M rows of 20 random ten-character strings, lookups took p50
    /// 55 us uncompressed, 62 us with lz4 and 173-176 us with zstd, and building the files 0.65, 0.84 and
    /// 2.0 s (docs/BENCHMARKS.md). Set zstd where local disk is scarcer than latency.
    pub fn lookup_cache_spill_compression(&self) -> Result<String> {
        self.local_compression(LOOKUP_CACHE_SPILL_COMPRESSION, "lz4")
    }

    fn local_compression(&self, key: &str, default: &str) -> Result<String> {
        let c = self.get(key).unwrap_or(default).trim().to_ascii_lowercase();
        match c.as_str() {
            "zstd" | "lz4" | "none" => Ok(c),
            "lzo" => Ok("lz4".to_string()),
            other => {
                Err(Error::invalid(format!("option '{key}'"), format!("'{other}' is not one of zstd, lz4, lzo, none")))
            }
        }
    }

    /// `local-sort.max-num-file-handles` (default 128, at least 2): at most this many spilled runs; one more
    /// flushes the buffer to level 0.
    pub fn local_sort_max_num_file_handles(&self) -> Result<usize> {
        let n = self.parsed::<usize>(LOCAL_SORT_MAX_NUM_FILE_HANDLES)?.unwrap_or(128);
        if n < 2 {
            return Err(Error::invalid(
                format!("option '{LOCAL_SORT_MAX_NUM_FILE_HANDLES}'"),
                format!("{n} is below 2"),
            ));
        }
        Ok(n)
    }

    /// `lookup.cache-max-memory-size` in bytes (default 256 MB), per bucket writer.
    pub fn lookup_cache_max_memory_size(&self) -> Result<u64> {
        self.mem_opt(LOOKUP_CACHE_MAX_MEMORY_SIZE, 256 << 20)
    }

    /// `lookup.cache-max-disk-size` in bytes (default unlimited), per bucket writer.
    pub fn lookup_cache_max_disk_size(&self) -> Result<u64> {
        self.mem_opt(LOOKUP_CACHE_MAX_DISK_SIZE, u64::MAX)
    }

    /// The lookup bloom filters' false-positive rate, `None` when `lookup.cache.bloom.filter.enabled` is
    /// false (defaults: enabled, 0.05).
    pub fn lookup_bloom_filter_fpp(&self) -> Result<Option<f64>> {
        if !self.bool_opt(LOOKUP_CACHE_BLOOM_FILTER_ENABLED, true)? {
            return Ok(None);
        }
        let p = self.parsed::<f64>(LOOKUP_CACHE_BLOOM_FILTER_FPP)?.unwrap_or(0.05);
        if !(p > 0.0 && p < 1.0) {
            return Err(Error::invalid(
                format!("option '{LOOKUP_CACHE_BLOOM_FILTER_FPP}'"),
                format!("{p} is not between 0 and 1"),
            ));
        }
        Ok(Some(p))
    }

    /// `num-sorted-run.compaction-trigger` (default 5).
    pub fn num_sorted_run_compaction_trigger(&self) -> Result<u32> {
        Ok(self.parsed::<u32>(NUM_SORTED_RUN_COMPACTION_TRIGGER)?.unwrap_or(5))
    }

    /// `num-sorted-run.stop-trigger` (default compaction trigger + 3).
    pub fn num_sorted_run_stop_trigger(&self) -> Result<u32> {
        let trigger = self.num_sorted_run_compaction_trigger()?;
        Ok(self.parsed::<u32>(NUM_SORTED_RUN_STOP_TRIGGER)?.unwrap_or(trigger + 3).max(trigger))
    }

    /// `num-levels` (default compaction trigger + 1).
    pub fn num_levels(&self) -> Result<u32> {
        let trigger = self.num_sorted_run_compaction_trigger()?;
        Ok(self.parsed::<u32>(NUM_LEVELS)?.unwrap_or(trigger + 1))
    }

    /// `compaction.max-size-amplification-percent` (default 200).
    pub fn max_size_amplification_percent(&self) -> Result<u32> {
        Ok(self.parsed::<u32>(COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT)?.unwrap_or(200))
    }

    /// `compaction.size-ratio` (default 1).
    pub fn size_ratio(&self) -> Result<u32> {
        Ok(self.parsed::<u32>(COMPACTION_SIZE_RATIO)?.unwrap_or(1))
    }

    /// `compaction.delete-ratio-threshold` for primary-key tables with deletion vectors.
    ///
    /// Paimon's default (0.2) is for append tables; the deletion-vector design picks files at half deleted,
    /// so Strata's default for primary-key tables is 0.5.
    pub fn delete_ratio_threshold(&self) -> Result<f64> {
        let v = self.parsed::<f64>(COMPACTION_DELETE_RATIO_THRESHOLD)?.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&v) {
            return Err(Error::invalid(
                format!("option '{COMPACTION_DELETE_RATIO_THRESHOLD}'"),
                format!("{v} is outside 0..=1"),
            ));
        }
        Ok(v)
    }

    /// `data-file.thin-mode` (default false): write key-value files without the `_KEY_*` columns.
    pub fn data_file_thin_mode(&self) -> Result<bool> {
        self.bool_opt(DATA_FILE_THIN_MODE, false)
    }

    /// `deletion-vectors.enabled` (default false).
    pub fn deletion_vectors_enabled(&self) -> Result<bool> {
        self.bool_opt(DELETION_VECTORS_ENABLED, false)
    }

    /// `deletion-vectors.bitmap64` (default false).
    pub fn deletion_vectors_bitmap64(&self) -> Result<bool> {
        self.bool_opt(DELETION_VECTORS_BITMAP64, false)
    }

    /// `deletion-vectors.merge-on-read` (default false).
    pub fn deletion_vectors_merge_on_read(&self) -> Result<bool> {
        self.bool_opt(DELETION_VECTORS_MERGE_ON_READ, false)
    }

    /// `deletion-vectors.modifiable` (default false).
    pub fn deletion_vectors_modifiable(&self) -> Result<bool> {
        self.bool_opt(DELETION_VECTORS_MODIFIABLE, false)
    }

    /// `deletion-vector.index-file.target-size` in bytes (default 2 MB).
    pub fn dv_index_file_target_size(&self) -> Result<u64> {
        self.mem_opt(DELETION_VECTOR_INDEX_FILE_TARGET_SIZE, 2 << 20)
    }

    /// `merge-engine` (default deduplicate).
    pub fn merge_engine(&self) -> Result<MergeEngine> {
        match self.get(MERGE_ENGINE).map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            None | Some("deduplicate") => Ok(MergeEngine::Deduplicate),
            Some("partial-update") => Ok(MergeEngine::PartialUpdate),
            Some("aggregation") => Ok(MergeEngine::Aggregation),
            Some("first-row") => Ok(MergeEngine::FirstRow),
            Some(other) => Err(Error::invalid(
                format!("option '{MERGE_ENGINE}'"),
                format!("'{other}' is not one of deduplicate, partial-update, aggregation, first-row"),
            )),
        }
    }

    /// `changelog-producer` (default none).
    pub fn changelog_producer(&self) -> Result<ChangelogProducer> {
        match self.get(CHANGELOG_PRODUCER).map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            None | Some("none") => Ok(ChangelogProducer::None),
            Some("input") => Ok(ChangelogProducer::Input),
            Some("full-compaction") => Ok(ChangelogProducer::FullCompaction),
            Some("lookup") => Ok(ChangelogProducer::Lookup),
            Some(other) => Err(Error::invalid(
                format!("option '{CHANGELOG_PRODUCER}'"),
                format!("'{other}' is not one of none, input, full-compaction, lookup"),
            )),
        }
    }

    /// `lookup-compact` (default radical).
    pub fn lookup_compact(&self) -> Result<LookupCompactMode> {
        match self.get(LOOKUP_COMPACT).map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            None | Some("radical") => Ok(LookupCompactMode::Radical),
            Some("gentle") => Ok(LookupCompactMode::Gentle),
            Some(other) => {
                Err(Error::invalid(format!("option '{LOOKUP_COMPACT}'"), format!("'{other}' is not radical or gentle")))
            }
        }
    }

    /// `lookup-wait` (default true; fallback key `changelog-producer.lookup-wait`).
    pub fn lookup_wait(&self) -> Result<bool> {
        if self.map.contains_key(LOOKUP_WAIT) {
            self.bool_opt(LOOKUP_WAIT, true)
        } else {
            self.bool_opt("changelog-producer.lookup-wait", true)
        }
    }

    /// `sequence.field` columns.
    pub fn sequence_field(&self) -> Vec<String> {
        self.get(SEQUENCE_FIELD)
            .map(|s| s.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
            .unwrap_or_default()
    }

    /// `rowkind.field`.
    pub fn rowkind_field(&self) -> Option<String> {
        self.get(ROWKIND_FIELD).map(|s| s.trim().to_string())
    }

    /// `ignore-delete` (default false).
    pub fn ignore_delete(&self) -> Result<bool> {
        self.bool_opt(IGNORE_DELETE, false)
    }

    /// `commit.max-retries` (default 10).
    pub fn commit_max_retries(&self) -> Result<u32> {
        Ok(self.parsed::<u32>(COMMIT_MAX_RETRIES)?.unwrap_or(10))
    }

    /// `commit.timeout` (default unbounded).
    pub fn commit_timeout(&self) -> Result<Option<Duration>> {
        self.dur_opt(COMMIT_TIMEOUT)
    }

    /// `write-only` (default false).
    pub fn write_only(&self) -> Result<bool> {
        self.bool_opt(WRITE_ONLY, false)
    }

    /// `strata.lookup-compact.size-ratio` (default false).
    pub fn lookup_compact_size_ratio(&self) -> Result<bool> {
        self.bool_opt(LOOKUP_COMPACT_SIZE_RATIO, false)
    }

    /// `strata.foreign-compaction.window` (default 1 hour).
    pub fn foreign_compaction_window(&self) -> Result<Duration> {
        Ok(self.dur_opt(FOREIGN_COMPACTION_WINDOW)?.unwrap_or(Duration::from_secs(3600)))
    }

    /// `commit.min-retry-wait` (default 10 ms).
    pub fn commit_min_retry_wait(&self) -> Result<Duration> {
        Ok(self.dur_opt(COMMIT_MIN_RETRY_WAIT)?.unwrap_or(Duration::from_millis(10)))
    }

    /// `commit.max-retry-wait` (default 10 s).
    pub fn commit_max_retry_wait(&self) -> Result<Duration> {
        Ok(self.dur_opt(COMMIT_MAX_RETRY_WAIT)?.unwrap_or(Duration::from_secs(10)))
    }

    /// `snapshot.num-retained.min` (default 10).
    pub fn snapshot_num_retained_min(&self) -> Result<u32> {
        Ok(self.parsed::<u32>(SNAPSHOT_NUM_RETAINED_MIN)?.unwrap_or(10))
    }

    /// `snapshot.num-retained.max` (default unbounded).
    pub fn snapshot_num_retained_max(&self) -> Result<u32> {
        Ok(self.parsed::<u32>(SNAPSHOT_NUM_RETAINED_MAX)?.unwrap_or(i32::MAX as u32))
    }

    /// `snapshot.time-retained` (default 1 h).
    pub fn snapshot_time_retained(&self) -> Result<Duration> {
        Ok(self.dur_opt(SNAPSHOT_TIME_RETAINED)?.unwrap_or(Duration::from_secs(3600)))
    }

    /// `source.split.target-size` (default 128 MB).
    pub fn split_target_size(&self) -> Result<u64> {
        self.mem_opt(SOURCE_SPLIT_TARGET_SIZE, 128 << 20)
    }

    /// `source.split.open-file-cost` (default 4 MB).
    pub fn split_open_file_cost(&self) -> Result<u64> {
        self.mem_opt(SOURCE_SPLIT_OPEN_FILE_COST, 4 << 20)
    }

    /// `partition.default-name` (default `__DEFAULT_PARTITION__`).
    pub fn partition_default_name(&self) -> &str {
        self.get(PARTITION_DEFAULT_NAME).unwrap_or("__DEFAULT_PARTITION__")
    }

    fn positive<T: std::str::FromStr + PartialOrd + Default + std::fmt::Display>(
        &self,
        key: &str,
    ) -> Result<Option<T>> {
        match self.parsed::<T>(key)? {
            Some(v) if v <= T::default() => {
                Err(Error::invalid(format!("option '{key}'"), format!("{v} is not positive")))
            }
            v => Ok(v),
        }
    }

    /// `dynamic-bucket.target-row-num` (default 2,000,000, Paimon's): key hashes a bucket takes before new
    /// keys go to another.
    pub fn dynamic_bucket_target_row_num(&self) -> Result<i64> {
        Ok(self.positive::<i64>(DYNAMIC_BUCKET_TARGET_ROW_NUM)?.unwrap_or(2_000_000))
    }

    /// `dynamic-bucket.initial-buckets` (unset: `None`).
    pub fn dynamic_bucket_initial_buckets(&self) -> Result<Option<i32>> {
        self.positive::<i32>(DYNAMIC_BUCKET_INITIAL_BUCKETS)
    }

    /// `dynamic-bucket.max-buckets` (default -1, unlimited; else at most 32,768, Java's `Short` bucket ids).
    pub fn dynamic_bucket_max_buckets(&self) -> Result<i32> {
        match self.parsed::<i32>(DYNAMIC_BUCKET_MAX_BUCKETS)?.unwrap_or(-1) {
            m if m == -1 || (1..=32_768).contains(&m) => Ok(m),
            m => Err(Error::invalid(
                format!("option '{DYNAMIC_BUCKET_MAX_BUCKETS}'"),
                format!("{m} is neither -1 (unlimited) nor between 1 and 32768"),
            )),
        }
    }

    /// `postpone.default-bucket-num` (unset: `None`, the bucket count is estimated).
    pub fn postpone_default_bucket_num(&self) -> Result<Option<i32>> {
        self.positive::<i32>(POSTPONE_DEFAULT_BUCKET_NUM)
    }

    /// `postpone.target-row-num-per-bucket` (unset: `None`).
    pub fn postpone_target_row_num_per_bucket(&self) -> Result<Option<i64>> {
        self.positive::<i64>(POSTPONE_TARGET_ROW_NUM_PER_BUCKET)
    }

    /// `postpone.target-size-per-bucket` (default 1 GB).
    pub fn postpone_target_size_per_bucket(&self) -> Result<u64> {
        match self.mem_opt(POSTPONE_TARGET_SIZE_PER_BUCKET, 1 << 30)? {
            0 => Err(Error::invalid(format!("option '{POSTPONE_TARGET_SIZE_PER_BUCKET}'"), "0 is not positive")),
            n => Ok(n),
        }
    }

    /// Parses every known option, so a bad value is reported when a table is created or opened,
    /// not in the middle of a write.
    pub fn validate(&self) -> Result<()> {
        self.bucket()?;
        self.manifest_compression()?;
        self.manifest_target_file_size()?;
        self.target_file_size()?;
        self.read_batch_size()?;
        self.write_buffer_size()?;
        self.parquet_block_size()?;
        self.write_buffer_spillable()?;
        self.write_buffer_spill_max_disk_size()?;
        self.spill_compression()?;
        self.local_sort_max_num_file_handles()?;
        self.lookup_cache_max_memory_size()?;
        self.lookup_cache_max_disk_size()?;
        self.lookup_cache_spill_compression()?;
        self.lookup_bloom_filter_fpp()?;
        self.num_sorted_run_stop_trigger()?;
        self.num_levels()?;
        self.max_size_amplification_percent()?;
        self.size_ratio()?;
        self.delete_ratio_threshold()?;
        self.deletion_vectors_enabled()?;
        self.data_file_thin_mode()?;
        self.deletion_vectors_bitmap64()?;
        self.deletion_vectors_merge_on_read()?;
        self.deletion_vectors_modifiable()?;
        self.dv_index_file_target_size()?;
        self.merge_engine()?;
        self.changelog_producer()?;
        self.lookup_compact()?;
        self.lookup_compact_size_ratio()?;
        self.lookup_wait()?;
        self.ignore_delete()?;
        self.commit_max_retries()?;
        self.commit_timeout()?;
        self.commit_min_retry_wait()?;
        self.commit_max_retry_wait()?;
        self.snapshot_num_retained_min()?;
        self.snapshot_num_retained_max()?;
        self.snapshot_time_retained()?;
        self.split_target_size()?;
        self.split_open_file_cost()?;
        match self.file_format().as_str() {
            "parquet" | "orc" | "avro" => {}
            other => {
                return Err(Error::invalid(
                    format!("option '{FILE_FORMAT}'"),
                    format!("'{other}' is not one of parquet, orc, avro"),
                ))
            }
        }
        if self.deletion_vectors_enabled()? {
            if self.changelog_producer()? == ChangelogProducer::FullCompaction {
                return Err(Error::invalid(
                    format!("option '{CHANGELOG_PRODUCER}'"),
                    "deletion vectors need changelog-producer none, input or lookup",
                ));
            }
            if self.merge_engine()? == MergeEngine::FirstRow {
                return Err(Error::invalid(
                    format!("option '{MERGE_ENGINE}'"),
                    "deletion vectors cannot be used with the first-row merge engine",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> CoreOptions {
        CoreOptions::new(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn defaults_are_paimons() {
        let o = CoreOptions::default();
        assert_eq!(o.bucket().ok(), Some(-1));
        assert_eq!(o.num_sorted_run_compaction_trigger().ok(), Some(5));
        assert_eq!(o.num_sorted_run_stop_trigger().ok(), Some(8));
        assert_eq!(o.num_levels().ok(), Some(6));
        assert_eq!(o.commit_max_retries().ok(), Some(10));
        assert_eq!(o.target_file_size().ok(), Some(128 << 20));
        assert_eq!(o.lookup_wait().ok(), Some(true));
        assert_eq!(o.manifest_compression().ok().as_deref(), Some("zstd"));
    }

    #[test]
    fn parses_sizes_and_durations() {
        assert_eq!(parse_memory_size("128 mb").ok(), Some(128 << 20));
        assert_eq!(parse_memory_size("64kb").ok(), Some(64 << 10));
        assert_eq!(parse_duration("10 s").ok(), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("1h").ok(), Some(Duration::from_secs(3600)));
        assert!(parse_memory_size("lots").is_err());
        assert!(parse_duration("5 fortnights").is_err());
    }

    #[test]
    fn bad_values_name_the_option_and_unknown_keys_pass() {
        let e = opts(&[("bucket", "four")]).validate().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("'bucket'"), "{e}");
        let e =
            opts(&[("deletion-vectors.enabled", "yes")]).validate().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("deletion-vectors.enabled"), "{e}");
        assert!(opts(&[("bucket", "0")]).validate().is_err());
        for bad in ["0", "-1", "many"] {
            let e = opts(&[("read.batch-size", bad)]).validate().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("'read.batch-size'"), "{bad}: {e}");
        }
        assert_eq!(opts(&[("read.batch-size", "5")]).read_batch_size().ok(), Some(Some(5)));
        assert!(opts(&[("deletion-vectors.enabled", "true"), ("merge-engine", "first-row")]).validate().is_err());
        let o = opts(&[("my.engine.option", "x"), ("bucket", "4")]);
        assert!(o.validate().is_ok());
        assert_eq!(o.get("my.engine.option"), Some("x"));
    }
}
