//! Strata's data files: Paimon's key-value layout in parquet and orc, the statistics recorded for them, and
//! the merge-on-read reader over a bucket's sorted runs.

pub mod arrow_types;
pub mod bucket_read;
pub mod evolution;
pub mod kv;
pub mod lookup;
pub mod merge;
pub mod merge_function;
pub mod predicate;
mod ranged;
pub mod reader;
pub mod row_runs;
pub mod stats;
pub mod verify;
pub mod writer;

pub use kv::{KeyValueLayout, RowKind};
pub use reader::{open_file, FileBatches, ReadRequest};
pub use writer::{FileFormat, KvFileWriter, WriterConfig};
