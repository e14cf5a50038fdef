//! Decoding one deletion-vector entry from arbitrary bytes must return an error or a vector, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let recorded = i32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let entry = &data[4..];
    if let Ok(dv) = strata_dv::decode_entry(entry, recorded) {
        // Whatever decodes re-encodes to an entry that decodes to the same positions.
        let (bytes, len) = dv.serialize_entry().expect("re-encode");
        let back = strata_dv::decode_entry(&bytes, len).expect("decode re-encoded");
        assert!(back.positions().eq(dv.positions()));
    }
    // The same bytes taken as a whole entry with its own prefix as the recorded length.
    if entry.len() >= 4 {
        let own = i32::from_be_bytes([entry[0], entry[1], entry[2], entry[3]]);
        let _ = strata_dv::decode_entry(entry, own);
        let _ = strata_dv::decode_entry(entry, own.wrapping_add(8));
    }
});
