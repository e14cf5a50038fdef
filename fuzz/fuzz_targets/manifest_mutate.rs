//! Structure-aware: valid manifest, manifest-list and index-manifest containers (header included) with
//! bytes overwritten at positions the input chooses. Random bytes rarely get past the Avro magic; this
//! reaches the header's schema JSON and the record blocks, where apache-avro can panic (contained by
//! the Avro container reader of `strata_spec`). Decoding must return, never panic or abort.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use strata_spec::{IndexManifestEntry, ManifestEntry, ManifestFileMeta, SimpleStats};

fn containers() -> Vec<Vec<u8>> {
    let list = ManifestFileMeta {
        file_name: "manifest-0b7d6f56-5a4e-4f2c-9a57-0d0d6b1f0c11-0".into(),
        file_size: 10,
        num_added_files: 1,
        num_deleted_files: 0,
        partition_stats: SimpleStats::empty(),
        schema_id: 0,
        min_bucket: Some(0),
        max_bucket: Some(0),
        min_level: Some(0),
        max_level: Some(0),
        min_row_id: None,
        max_row_id: None,
    };
    [
        ManifestEntry::encode_file(&[], "null"),
        ManifestFileMeta::encode_file(&[list], "null"),
        IndexManifestEntry::encode_file(&[], "null"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fuzz_target!(|data: &[u8]| {
    common::contain_panics_like_strata();
    let Some((&which, edits)) = data.split_first() else { return };
    let all = containers();
    let mut bytes = all[which as usize % all.len()].clone();
    // Each edit is (position high, position low, value).
    for e in edits.chunks_exact(3) {
        let at = (usize::from(e[0]) << 8 | usize::from(e[1])) % bytes.len().max(1);
        if let Some(b) = bytes.get_mut(at) {
            *b = e[2];
        }
    }
    let _ = ManifestEntry::decode_file(&bytes);
    let _ = ManifestFileMeta::decode_file(&bytes);
    let _ = IndexManifestEntry::decode_file(&bytes);
});
