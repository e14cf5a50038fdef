//! Strata's data files: Paimon's key-value layout in parquet and orc, the statistics recorded for them, and
//! the merge-on-read reader over a bucket's sorted runs.
//!
//! The modules are private and their public items re-exported here, but for [`lookup`] (local lookup files,
//! shared by compaction lookups and point queries).

mod integrity;
mod layout;
pub mod lookup;
mod merge;
mod predicate;
mod read;
#[cfg(test)]
mod test_files;
mod write;

// Paimon's key-value layout of a data file, and the conversions between Paimon types and arrow.
pub use layout::arrow_types::{array_of, datum_at, normalize, to_arrow};
pub use layout::evolution::{ColumnMapping, SchemaHistory};
pub use layout::exact_cast::{arrow_family, check_values, exact_cast, paimon_family, plain, CastRefusal, TypeFamily};
pub use layout::kv::{KeyValueLayout, RowKind, KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND};

// Writing data files.
pub use write::writer::{FileFormat, KvFileWriter, WriterConfig, DEFAULT_ROW_GROUP_BYTES};

// Reading one file: projection, predicates and row-group pruning, deletion vectors applied at decode.
pub use integrity::verify::{count_retractions, has_retraction, reject_retractions};
pub use predicate::{CmpOp, ColumnRange, Predicate, TypedPredicate};
pub use read::reader::{open_file, FileBatches, ReadRequest, DEFAULT_BATCH_SIZE};
pub use read::row_runs::{live_runs, parquet_selection};

// Reading a bucket's files: one file by its metadata, the merge of sorted runs with every merge engine.
pub use merge::function::{AggFunction, MergeConfig};
pub use merge::iterator::{LookupHook, LookupResult, MergeIterator, Run};
pub use merge::late::{keys_first_applies, merge_selection};
pub use merge::sequence_group::SequenceGroups;
pub use read::bucket::{file_columns, merge_read, run_reader, FileRead};
pub use read::file_parts::{file_parts, part_rows, parts_of};
pub use read::file_ref::DataFileRef;
pub use read::footer_cache::{FooterCache, FOOTER_CACHE_BYTES};
