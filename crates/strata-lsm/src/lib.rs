//! The per-bucket LSM merge tree with deletion vectors (Paimon PIP-16).

pub mod compaction;
pub mod levels;
pub mod lookup;
pub mod write_buffer;
pub mod writer;

pub use compaction::{CompactUnit, UniversalCompaction};
pub use levels::{LevelSortedRun, Levels};
pub use lookup::LookupLevels;
pub use writer::{CommitIncrement, MergeTreeWriter, WriterOptions};
