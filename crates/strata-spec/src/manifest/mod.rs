//! Manifests and what they list: manifest entries and the manifest files of a manifest list, the metadata
//! of data files with their column statistics, and the names data files may have.

pub(crate) mod data_file_meta;
pub(crate) mod file_name;
pub(crate) mod manifest_entry;
pub(crate) mod manifest_file_meta;
pub(crate) mod stats;
