//! Strata's spec layer: Paimon's on-disk objects and their codecs, with no I/O.
//!
//! One module per on-disk object; each names the Paimon class it matches.

pub mod avro;
pub mod binary_row;
pub mod bucket;
pub mod data_file_meta;
pub mod error;
pub mod file_name;
pub mod hash_index_file;
pub mod index_file_meta;
pub mod index_manifest_entry;
pub mod manifest_entry;
pub mod manifest_file_meta;
pub mod option_rules;
pub mod options;
pub mod schema;
pub mod schema_change;
pub mod snapshot;
pub mod stats;
pub mod types;

pub use binary_row::{BinaryRow, Datum};
pub use data_file_meta::{DataFileMeta, FileSource};
pub use error::{Error, ErrorKind, Result, ResultExt};
pub use index_file_meta::{DeletionVectorMeta, IndexFileMeta};
pub use index_manifest_entry::IndexManifestEntry;
pub use manifest_entry::{FileKind, ManifestEntry};
pub use manifest_file_meta::ManifestFileMeta;
pub use options::CoreOptions;
pub use schema::{DataField, TableSchema};
pub use schema_change::{apply_schema_changes, ColumnMove, SchemaChange};
pub use snapshot::{CommitKind, Snapshot};
pub use stats::SimpleStats;
pub use types::{DataType, TypeRoot};
