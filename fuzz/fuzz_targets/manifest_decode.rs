//! Decoding manifests, manifest lists, index manifests, snapshots and schemas from arbitrary bytes must
//! return errors, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_spec::{IndexManifestEntry, ManifestEntry, ManifestFileMeta, Snapshot, TableSchema};

/// libfuzzer-sys aborts in its panic hook, before `catch_unwind` can run: a panic Strata contains at a
/// decoder boundary would count as a crash. A silent hook lets containment work; a panic that escapes
/// still reaches libfuzzer-sys's own `catch_unwind` around the target, which reports it.
fn contain_panics_like_strata() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

fuzz_target!(|data: &[u8]| {
    contain_panics_like_strata();
    let _ = ManifestEntry::decode_file(data);
    let _ = ManifestFileMeta::decode_file(data);
    let _ = IndexManifestEntry::decode_file(data);
    let _ = Snapshot::from_json(data);
    let _ = TableSchema::from_json(data);
});
