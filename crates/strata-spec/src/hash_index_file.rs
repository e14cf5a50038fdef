//! The dynamic-bucket hash index file: which primary-key hashes live in one (partition, bucket) of a
//! dynamic-bucket table (`bucket = -1`).
//!
//! Matches Paimon's `org.apache.paimon.index.HashIndexFile`, written through `IntFileUtils.writeInts`: the
//! hashes (`BinaryRow.hashCode()` of the trimmed primary key) as 32-bit big-endian integers, back to back,
//! with no header, count or checksum. Its `IndexFileMeta` has index type `HASH`, `rowCount` = the number of
//! hashes and no deletion-vector ranges. A bucket has one such file, rewritten whole when it gains a hash;
//! the index manifest's combiner replaces the bucket's previous file.

use crate::error::{Error, Result};
use crate::index_file_meta::{IndexFileMeta, HASH_INDEX};

/// Bytes per hash.
const HASH_BYTES: usize = 4;

/// The file's bytes for `hashes` (in the order given; Strata passes them sorted so files are reproducible).
pub fn encode(hashes: &[i32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hashes.len() * HASH_BYTES);
    for h in hashes {
        out.extend_from_slice(&h.to_be_bytes());
    }
    out
}

/// The hashes in a file's bytes. A length that is not a whole number of hashes is a torn or damaged file.
pub fn decode(bytes: &[u8]) -> Result<Vec<i32>> {
    if !bytes.len().is_multiple_of(HASH_BYTES) {
        return Err(Error::corrupt(format!("a hash index file holds 4-byte hashes, but it has {} bytes", bytes.len())));
    }
    Ok(bytes.chunks_exact(HASH_BYTES).map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// The `IndexFileMeta` of a hash index file named `file_name` holding `hash_count` hashes.
pub fn index_file_meta(file_name: String, hash_count: usize) -> IndexFileMeta {
    IndexFileMeta {
        index_type: HASH_INDEX.to_string(),
        file_name,
        file_size: (hash_count * HASH_BYTES) as i64,
        row_count: hash_count as i64,
        dv_ranges: None,
        external_path: None,
        global_index: None,
    }
}

/// Checks decoded `hashes` against the file's metadata: the size and the count it records. Names of index
/// files differ only in a counter, so a damaged manifest entry could name another valid file; the recorded
/// size and count catch that, as they do for deletion-vector files.
pub fn check_against_meta(meta: &IndexFileMeta, hashes: &[i32]) -> Result<()> {
    if meta.index_type != HASH_INDEX {
        return Err(Error::corrupt(format!(
            "index file {} is of type {}, not {HASH_INDEX}",
            meta.file_name, meta.index_type
        )));
    }
    let size = (hashes.len() * HASH_BYTES) as i64;
    if meta.row_count != hashes.len() as i64 || meta.file_size != size {
        return Err(Error::corrupt(format!(
            "hash index file {} holds {} hashes ({size} bytes) where its index manifest entry records {} hashes ({} bytes)",
            meta.file_name,
            hashes.len(),
            meta.row_count,
            meta.file_size
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_big_endian_like_java() {
        let hashes = [0, 1, -1, i32::MIN, i32::MAX, 0x0102_0304];
        let bytes = encode(&hashes);
        // Java's IntFileUtils.writeInt writes the high byte first.
        assert_eq!(&bytes[20..24], &[1, 2, 3, 4]);
        assert_eq!(&bytes[8..12], &[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(decode(&bytes).ok(), Some(hashes.to_vec()));
        let meta = index_file_meta("index-x-0".into(), hashes.len());
        assert_eq!((meta.index_type.as_str(), meta.row_count, meta.file_size), ("HASH", 6, 24));
        assert!(check_against_meta(&meta, &hashes).is_ok());
    }

    #[test]
    fn torn_files_and_mismatched_metadata_are_corrupt() {
        assert!(decode(&[0, 0, 0]).is_err());
        assert_eq!(decode(&[]).ok(), Some(vec![]));
        let meta = index_file_meta("index-x-0".into(), 2);
        assert!(check_against_meta(&meta, &[1]).is_err());
        let mut dv = meta.clone();
        dv.index_type = "DELETION_VECTORS".into();
        assert!(check_against_meta(&dv, &[1, 2]).is_err());
    }
}
