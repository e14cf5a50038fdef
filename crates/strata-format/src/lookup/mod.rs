//! Local lookup files: one data file's keys (and rows) on local disk, built on first use and cached, so a
//! key's copies are found without reading the remote file again. Compaction lookups (the lookup merge
//! wrapper finding a key's older copy) and point lookups (`TableQuery`) share this one implementation, as
//! Paimon's `LookupLevels` and `LocalTableQuery` share its `LookupFile`.

mod bloom;
mod cache;
mod file;
mod groups;
mod key;
mod packed;
mod rows;

pub use cache::{LookupCacheOptions, LookupFileCache, LookupStats, Probe, MAX_OPEN_READERS};
pub use file::{LookupFile, LookupFileSpec};
pub use key::KeyEncoder;
pub use packed::{PackedRow, PackedValue};
