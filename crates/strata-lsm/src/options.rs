//! How a bucket writer behaves, from the table's options (Paimon's `CoreOptions` as the merge tree reads them).

use std::collections::BTreeMap;

use strata_format::{FileFormat, MergeConfig};
use strata_spec::{Error, LookupCompactMode, MergeEngine, Result, TableSchema};

use crate::compact::{ForceUpMode, UniversalCompaction};
use crate::write_buffer::SpillSettings;
use strata_format::lookup::LookupCacheOptions;

/// How a bucket writer behaves (from the table options).
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// `num-levels`.
    pub(crate) num_levels: usize,
    /// Universal compaction parameters.
    pub(crate) universal: UniversalCompaction,
    /// `deletion-vectors.enabled`.
    pub(crate) deletion_vectors: bool,
    /// Force level 0 up after writes (deletion vectors, `changelog-producer = lookup`, first-row).
    pub(crate) force_up_level0: bool,
    /// `lookup-compact`.
    pub(crate) force_up_mode: ForceUpMode,
    /// `strata.lookup-compact.size-ratio`: the forced pick takes in runs within the size ratio, as Paimon's.
    pub(crate) force_up_size_ratio: bool,
    /// `write-buffer-size` in bytes.
    pub(crate) write_buffer_size: u64,
    /// `target-file-size`.
    pub(crate) target_file_size: u64,
    /// `parquet.block.size`, or Strata's default row group ([`strata_format::DEFAULT_ROW_GROUP_BYTES`]).
    pub(crate) row_group_bytes: usize,
    /// `file.format`.
    pub(crate) format: FileFormat,
    /// `file.compression`.
    pub(crate) compression: String,
    /// `file.compression.per.level`: the codec of files written at a level, where it names one.
    pub(crate) compression_per_level: BTreeMap<i32, String>,
    /// `compaction.delete-ratio-threshold`.
    pub(crate) delete_ratio_threshold: f64,
    /// The schema id written into file metadata.
    pub(crate) schema_id: i64,
    /// The merge engine configuration.
    pub(crate) merge: MergeConfig,
    /// Rows per batch in merges.
    pub(crate) batch_size: usize,
    /// Spilling of a full write buffer (`write-buffer-spillable`), `None` when it flushes instead.
    pub(crate) spill: Option<SpillSettings>,
    /// Bounds of the lookup index cache.
    pub(crate) lookup_cache: LookupCacheOptions,
    /// `num-sorted-run.stop-trigger`: past this many sorted runs, writes wait for compaction.
    pub(crate) stop_trigger: usize,
    /// `changelog-producer = input`: every written row also goes to changelog files.
    pub(crate) changelog_input: bool,
    /// `changelog-producer = lookup`: compactions of level 0 produce the changelog.
    pub(crate) changelog_lookup: bool,
    /// `write-only`: no compaction follows a write (explicit compactions still run), so a writer never
    /// changes files or deletion vectors other than its own level-0 files.
    pub(crate) write_only: bool,
}

impl WriterOptions {
    /// Bytes from which a file that overlaps nothing is moved up a level rather than rewritten (Paimon's
    /// `MergeTreeCompactTask`: 70% of `target-file-size`).
    pub(crate) fn min_file_size(&self) -> i64 {
        (self.target_file_size / 10 * 7) as i64
    }

    /// Options of `schema`.
    pub fn from_schema(schema: &TableSchema) -> Result<Self> {
        let o = schema.core_options();
        let dv = o.deletion_vectors_enabled()?;
        let engine = o.merge_engine()?;
        let lookup =
            dv || o.changelog_producer()? == strata_spec::ChangelogProducer::Lookup || engine == MergeEngine::FirstRow;
        let trigger = o.num_sorted_run_compaction_trigger()?;
        let mode = match o.lookup_compact()? {
            LookupCompactMode::Radical => ForceUpMode::Radical,
            LookupCompactMode::Gentle => {
                let interval = match o.get(strata_spec::options::LOOKUP_COMPACT_MAX_INTERVAL) {
                    Some(v) => v.trim().parse::<u32>().map_err(|_| {
                        Error::invalid("option 'lookup-compact.max-interval'", format!("cannot parse '{v}'"))
                    })?,
                    None => trigger * 2,
                };
                ForceUpMode::Gentle { max_interval: interval.max(trigger) }
            }
        };
        Ok(WriterOptions {
            num_levels: o.num_levels()? as usize,
            universal: UniversalCompaction {
                max_size_amp: o.max_size_amplification_percent()?,
                size_ratio: o.size_ratio()?,
                num_run_compaction_trigger: trigger as usize,
            },
            deletion_vectors: dv,
            force_up_level0: lookup,
            force_up_mode: mode,
            force_up_size_ratio: o.lookup_compact_size_ratio()?,
            write_buffer_size: o.write_buffer_size()?,
            target_file_size: if schema.primary_keys.is_empty() {
                crate::append_pick::append_target_file_size(schema)?
            } else {
                o.target_file_size()?
            },
            row_group_bytes: o
                .parquet_block_size()?
                .map_or(strata_format::DEFAULT_ROW_GROUP_BYTES, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            format: FileFormat::from_option(&o.file_format())?,
            compression: o.file_compression(),
            compression_per_level: compression_per_level(o.get(strata_spec::options::FILE_COMPRESSION_PER_LEVEL))?,
            delete_ratio_threshold: o.delete_ratio_threshold()?,
            schema_id: schema.id,
            merge: MergeConfig::from_schema(schema)?,
            batch_size: o.read_batch_size()?.unwrap_or(strata_format::DEFAULT_BATCH_SIZE),
            spill: if o.write_buffer_spillable()? {
                Some(SpillSettings {
                    compression: o.spill_compression()?,
                    max_disk_size: o.write_buffer_spill_max_disk_size()?,
                    max_runs: o.local_sort_max_num_file_handles()?,
                })
            } else {
                None
            },
            stop_trigger: o.num_sorted_run_stop_trigger()? as usize,
            changelog_input: o.changelog_producer()? == strata_spec::ChangelogProducer::Input,
            changelog_lookup: o.changelog_producer()? == strata_spec::ChangelogProducer::Lookup,
            write_only: o.write_only()?,
            lookup_cache: LookupCacheOptions {
                max_memory: o.lookup_cache_max_memory_size()?,
                max_disk: o.lookup_cache_max_disk_size()?,
                bloom_fpp: o.lookup_bloom_filter_fpp()?,
                cache_groups: false,
            },
        })
    }
}

impl WriterOptions {
    /// Whether a level-0 file may leave level 0 unmerged in deletion-vector mode: with the deduplicate engine
    /// (no sequence field, deletes honoured) a key's newest row is its merged result, so a file whose keys
    /// are found nowhere else in the compaction moves up as it is once the older copies of its keys are
    /// marked deleted, and a file of retractions only goes, as a rewrite would drop its rows. The lookup
    /// changelog needs every level-0 row merged.
    pub(crate) fn moves_level0_unmerged(&self) -> bool {
        self.deletion_vectors
            && self.merge.engine == MergeEngine::Deduplicate
            && self.merge.sequence_fields.is_empty()
            && !self.merge.ignore_delete
            && !self.changelog_lookup
    }

    /// Whether flushes write retractions to files of their own ([`crate::flush`]): when level 0 may leave
    /// unmerged and is forced up after every flush (a level 0 left for later compactions would only hold
    /// more files).
    pub(crate) fn splits_retractions(&self) -> bool {
        self.moves_level0_unmerged()
            && self.force_up_level0
            && self.force_up_mode == ForceUpMode::Radical
            && !self.write_only
    }

    /// The codec of data files written at `level`.
    pub(crate) fn compression_at(&self, level: i32) -> String {
        self.compression_per_level.get(&level).unwrap_or(&self.compression).clone()
    }
}

/// The codecs Strata writes data files with (`file.compression` and `file.compression.per.level`).
const CODECS: &[&str] = &["zstd", "snappy", "lz4", "gzip", "zlib", "none", "uncompressed"];

/// Parses `file.compression.per.level` (Paimon's map syntax, `0:lz4,1:zstd`; levels and codecs as Paimon's
/// `CoreOptions.fileCompressionPerLevel` takes them), each codec one Strata writes.
fn compression_per_level(value: Option<&str>) -> Result<BTreeMap<i32, String>> {
    let what = || format!("option '{}'", strata_spec::options::FILE_COMPRESSION_PER_LEVEL);
    let mut out = BTreeMap::new();
    for entry in value.unwrap_or("").split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((level, codec)) = entry.split_once(':') else {
            return Err(Error::invalid(what(), format!("'{entry}' is not LEVEL:CODEC (e.g. 0:lz4,1:zstd)")));
        };
        let level = level
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|l| *l >= 0)
            .ok_or_else(|| Error::invalid(what(), format!("'{level}' in '{entry}' is not a level")))?;
        let codec = codec.trim().to_ascii_lowercase();
        if !CODECS.contains(&codec.as_str()) {
            return Err(Error::invalid(what(), format!("'{entry}': the codec is not one of {}", CODECS.join(", "))));
        }
        if out.insert(level, codec).is_some() {
            return Err(Error::invalid(what(), format!("level {level} is given twice")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::compression_per_level;

    #[test]
    fn compression_per_level_parses_paimon_maps_and_refuses_the_rest() {
        let m = compression_per_level(Some("0:LZ4, 1:zstd ,5:none")).unwrap();
        assert_eq!(m.get(&0).map(String::as_str), Some("lz4"));
        assert_eq!(m.get(&1).map(String::as_str), Some("zstd"));
        assert_eq!(m.get(&5).map(String::as_str), Some("none"));
        assert!(compression_per_level(None).unwrap().is_empty());
        assert!(compression_per_level(Some("")).unwrap().is_empty());
        for bad in ["0", "x:lz4", "-1:lz4", "0:", "0:brotli", "0:lz4,0:zstd", "0=lz4"] {
            assert!(compression_per_level(Some(bad)).is_err(), "{bad}");
        }
    }
}
