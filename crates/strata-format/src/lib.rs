//! Strata's data files: Paimon's key-value layout in parquet and orc, the statistics recorded for them, and
//! the merge-on-read reader over a bucket's sorted runs.
//!
//! The modules are private and their public items re-exported here, but for [`lookup`] (local lookup files,
//! shared by compaction lookups and point queries).

mod arrow_types;
mod block_crc;
mod bucket_read;
mod checksummed_sink;
mod dictionary;
mod evolution;
mod exact_cast;
mod file_parts;
mod file_ref;
mod footer_cache;
mod kv;
mod late_merge;
pub mod lookup;
mod merge;
mod merge_function;
mod orc_crc;
mod page_prune;
mod predicate;
mod ranged;
mod reader;
mod row_runs;
mod sequence_group;
mod stats;
mod system_fields;
#[cfg(test)]
mod test_files;
mod verify;
mod writer;
mod zstd_context;
mod zstd_pages;

// Paimon's key-value layout of a data file, and the conversions between Paimon types and arrow.
pub use arrow_types::{array_of, datum_at, normalize, to_arrow};
pub use evolution::{ColumnMapping, SchemaHistory};
pub use exact_cast::{arrow_family, check_values, exact_cast, paimon_family, plain, CastRefusal, TypeFamily};
pub use kv::{KeyValueLayout, RowKind, KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND};

// Writing data files.
pub use writer::{FileFormat, KvFileWriter, WriterConfig, DEFAULT_ROW_GROUP_BYTES};

// Reading one file: projection, predicates and row-group pruning, deletion vectors applied at decode.
pub use predicate::{CmpOp, ColumnRange, Predicate, TypedPredicate};
pub use reader::{open_file, FileBatches, ReadRequest, DEFAULT_BATCH_SIZE};
pub use row_runs::{live_runs, parquet_selection};
pub use verify::{count_retractions, has_retraction, reject_retractions};

// Reading a bucket's files: one file by its metadata, the merge of sorted runs with every merge engine.
pub use bucket_read::{
    file_columns, merge_read, open_data_file, open_data_file_pruned, open_data_file_ranged, read_positions, run_reader,
};
pub use file_parts::{file_parts, part_rows, parts_of};
pub use file_ref::DataFileRef;
pub use footer_cache::{FooterCache, FOOTER_CACHE_BYTES};
pub use late_merge::{keys_first_applies, merge_selection};
pub use merge::{LookupHook, LookupResult, MergeIterator, Run};
pub use merge_function::{AggFunction, MergeConfig};
pub use sequence_group::SequenceGroups;
