//! Index files: their metadata (deletion-vector ranges, global indexes), the entries of an index manifest,
//! and the dynamic-bucket hash index codec.

pub mod hash_index_file;
pub(crate) mod index_file_meta;
pub(crate) mod index_manifest_entry;
