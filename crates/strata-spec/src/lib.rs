//! Strata's spec layer: Paimon's on-disk objects and their codecs, with no I/O.
//!
//! One module per on-disk object, each named after the Paimon class it matches; the objects are re-exported
//! here. Three modules are namespaces of their own: [`options`] (Paimon's option keys and value parsers),
//! [`option_rules`] (the create and alter rules for options) and [`hash_index_file`] (the dynamic-bucket hash
//! index codec).

mod avro;
mod binary_row;
mod bucket;
mod commit;
mod damage;
mod error;
mod index;
mod manifest;
pub mod option_rules;
pub mod options;
mod schema;
mod snapshot;

// Errors: one error type for all of Strata, and the containment of panics at decoder boundaries.
pub use error::{
    catch_contained, contain_panic, panic_is_contained, panic_message, Cause, Error, ErrorKind, Result, ResultExt,
};

// Names one edit from a known one are damage, not a newer writer's.
pub use damage::{damaged_form_of, one_edit_apart};

// Data types, rows and schemas.
pub use binary_row::{compare_rows, BinaryRow, Datum};
pub use schema::schema_change::{apply_schema_changes, options_after_renames, ColumnMove, SchemaChange};
pub use schema::types::{DataType, TypeRoot, MAX_LENGTH};
pub use schema::{parse_columns, DataField, TableSchema};

// Table options (the keys are in `options`, the create and alter rules in `option_rules`).
pub use option_rules::OptionPolicy;
pub use options::{ChangelogProducer, CoreOptions, LookupCompactMode, MergeEngine};

// Buckets: the fixed-bucket function and the key hash (the dynamic-bucket index file is `hash_index_file`).
pub use bucket::{bucket_of, bucket_of_hash, key_hash};
pub use index::hash_index_file;

// Snapshots, manifests and the metadata of data and index files.
pub use index::index_file_meta::{
    DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta, DELETION_VECTORS_INDEX, HASH_INDEX,
};
pub use index::index_manifest_entry::IndexManifestEntry;
pub use manifest::data_file_meta::{DataFileMeta, FileSource};
pub use manifest::file_name::{check_file_name, external_path_within};
pub use manifest::manifest_entry::{FileIdentifier, FileKind, ManifestEntry};
pub use manifest::manifest_file_meta::ManifestFileMeta;
pub use snapshot::{now_millis, CommitKind, Snapshot, SNAPSHOT_VERSION};

// What writers hand to the commit (Paimon's `CommitMessageImpl`), and its serialized form for committing
// messages made in other processes (Paimon's `CommitMessageSerializer`).
pub use commit::commit_increment::{CommitIncrement, CompactIncrement, DataIncrement, DvIndexBase};
pub use commit::commit_message::{AbsorbedFiles, CommitMessage, HashIndexListing};
pub use commit::commit_message_codec::{decode_commit_messages, encode_commit_messages, COMMIT_MESSAGES_VERSION};
pub use manifest::stats::SimpleStats;
