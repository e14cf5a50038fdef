//! Decoding serialized commit messages (what a committer receives from other processes) from arbitrary
//! bytes must return errors, never panic: the bytes as given, and the same bytes behind a valid header
//! (magic, version, matching CRC-32), so the fuzzer reaches the Avro records past the checksum.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use strata_spec::{decode_commit_messages, COMMIT_MESSAGES_VERSION};

fuzz_target!(|data: &[u8]| {
    common::contain_panics_like_strata();
    let _ = decode_commit_messages(data);
    let mut framed = b"STRATACM".to_vec();
    framed.extend_from_slice(&COMMIT_MESSAGES_VERSION.to_le_bytes());
    framed.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    framed.extend_from_slice(data);
    let _ = decode_commit_messages(&framed);
});
