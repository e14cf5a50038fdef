//! The per-bucket LSM merge tree with deletion vectors (Paimon PIP-16).

pub mod compaction;
pub mod levels;
pub mod lookup;
pub mod write_buffer;
pub mod writer;

pub use compaction::{CompactUnit, UniversalCompaction};
pub use levels::{LevelSortedRun, Levels};
pub use lookup::{Bloom, LookupCacheOptions, LookupLevels};
pub use writer::{CommitIncrement, MergeTreeWriter, WriterOptions};

/// The path of a private local temporary directory (spilled runs, lookup caches), created in `slot` on first
/// use under the system's temporary directory and removed with it.
pub fn scratch_dir(slot: &mut Option<tempfile::TempDir>, prefix: &str) -> strata_spec::Result<std::path::PathBuf> {
    if let Some(d) = slot {
        return Ok(d.path().to_path_buf());
    }
    let d = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| strata_spec::Error::io(std::env::temp_dir().display().to_string(), e))?;
    let path = d.path().to_path_buf();
    *slot = Some(d);
    Ok(path)
}
