//! The per-bucket LSM merge tree with deletion vectors (Paimon PIP-16).

mod bucket_lookup;
pub mod compact;
mod files;
mod increment;
pub mod levels;
pub mod lookup;
mod options;
pub mod write_buffer;
mod writer;

pub use compact::{CompactUnit, UniversalCompaction};
pub use increment::{CommitIncrement, CompactIncrement, DataIncrement, DvIndexBase};
pub use levels::{LevelSortedRun, Levels};
pub use lookup::{Bloom, KeyEncoder, LookupCacheOptions, LookupLevels};
pub use options::WriterOptions;
pub use writer::MergeTreeWriter;

/// Prefixes of the local scratch directories Strata makes; each is followed by the owning process id.
pub const SCRATCH_PREFIXES: [&str; 3] = ["strata-spill-", "strata-lookup-", "strata-query-"];

/// The path of a private local temporary directory (spilled runs, lookup caches), created in `slot` on first
/// use under the system's temporary directory and removed with it (so on every exit path but a killed
/// process). Its name carries the process id, so the first scratch directory a later process makes also
/// removes those of processes that died ([`remove_stale_scratch_dirs`]).
pub fn scratch_dir(slot: &mut Option<tempfile::TempDir>, prefix: &str) -> strata_spec::Result<std::path::PathBuf> {
    if let Some(d) = slot {
        return Ok(d.path().to_path_buf());
    }
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        remove_stale_scratch_dirs(&std::env::temp_dir());
    });
    let d = tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir()
        .map_err(|e| strata_spec::Error::io(std::env::temp_dir().display().to_string(), e))?;
    let path = d.path().to_path_buf();
    *slot = Some(d);
    Ok(path)
}

/// Removes the scratch directories under `tmp` whose owning process is gone (a writer killed with
/// `kill -9` leaves its spilled runs behind); returns how many. Only on systems with `/proc`, where a
/// process id can be checked; a directory whose owner is alive, or whose name does not carry an id, is
/// left alone.
pub fn remove_stale_scratch_dirs(tmp: &std::path::Path) -> usize {
    let proc_fs = std::path::Path::new("/proc");
    if !proc_fs.join("self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(tmp) else { return 0 };
    let own = std::process::id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = SCRATCH_PREFIXES
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != own && !proc_fs.join(pid.to_string()).exists() && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Fixtures for the crate's unit tests.
#[cfg(test)]
pub(crate) mod test_util {
    use strata_spec::{BinaryRow, DataFileMeta, DataType, SimpleStats, TableSchema};

    /// A table of `id BIGINT` (the primary key) and one `value` column named `name`, default options.
    pub(crate) fn schema(name: &str, value: DataType) -> TableSchema {
        TableSchema::new(
            vec![("id".into(), DataType::bigint()), (name.into(), value)],
            vec![],
            vec!["id".into()],
            Default::default(),
            0,
        )
        .unwrap()
    }

    /// A data file's metadata: `size` bytes, ten rows, keys from `min` to `max`.
    pub(crate) fn file_meta(name: &str, level: i32, size: i64, min: BinaryRow, max: BinaryRow) -> DataFileMeta {
        DataFileMeta {
            file_name: name.to_string(),
            file_size: size,
            row_count: 10,
            min_key: min,
            max_key: max,
            key_stats: SimpleStats::empty(),
            value_stats: SimpleStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 9,
            schema_id: 0,
            level,
            extra_files: vec![],
            creation_time: None,
            delete_row_count: Some(0),
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod scratch_tests {
    /// A writer killed mid-spill leaves `strata-spill-<pid>-*`; the next process removes it, and never a
    /// live process's directory or anything else.
    #[test]
    fn stale_scratch_dirs_of_dead_processes_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dead = tmp.path().join(format!("strata-spill-{}-abc", u32::MAX - 7));
        let live = tmp.path().join(format!("strata-lookup-{}-abc", std::process::id()));
        let other = tmp.path().join("strata-spill-notapid");
        for d in [&dead, &live, &other] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("run-0.arrow"), b"x").unwrap();
        }
        assert_eq!(super::remove_stale_scratch_dirs(tmp.path()), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
    }
}
