//! Decoding manifests, manifest lists, index manifests, snapshots and schemas from arbitrary bytes must
//! return errors, never panic.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use strata_spec::{IndexManifestEntry, ManifestEntry, ManifestFileMeta, Snapshot, TableSchema};

fuzz_target!(|data: &[u8]| {
    common::contain_panics_like_strata();
    let _ = ManifestEntry::decode_file(data);
    let _ = ManifestFileMeta::decode_file(data);
    let _ = IndexManifestEntry::decode_file(data);
    let _ = Snapshot::from_json(data);
    let _ = TableSchema::from_json(data);
});
