//! A table's metadata files: where they live and how they are named, schemas, snapshots, and the
//! manifests, manifest lists and index manifests.

pub(crate) mod manifest_io;
pub(crate) mod paths;
pub(crate) mod schema_manager;
pub(crate) mod snapshot_manager;
