//! The dynamic-bucket hash index file: which primary-key hashes live in one (partition, bucket) of a
//! dynamic-bucket table (`bucket = -1`).
//!
//! Matches Paimon's `org.apache.paimon.index.HashIndexFile`, written through `IntFileUtils.writeInts`: the
//! hashes (`BinaryRow.hashCode()` of the trimmed primary key) as 32-bit big-endian integers, back to back,
//! with no header, count or checksum. Its `IndexFileMeta` has index type `HASH`, `rowCount` = the number of
//! hashes and no deletion-vector ranges. A bucket has one such file, rewritten whole when it gains a hash;
//! the index manifest's combiner replaces the bucket's previous file.
//!
//! The format leaves no room for a checksum (readers take every 4 bytes for a hash), so Strata puts the
//! CRC32 of a file's bytes in its name: `index-<uuid>-<n>` with a UUID of version 8 (RFC 9562's
//! vendor-specific version) whose last 8 hex digits are the CRC ([`name_with_checksum`]). Other writers name
//! these files with random (version 4) UUIDs; a file whose name carries a checksum is checked against it when
//! read ([`check_name`]), so a flipped bit cannot move a key's hash, and with it the key, to another bucket.

use crate::error::{Error, Result};
use crate::index::index_file_meta::{IndexFileMeta, HASH_INDEX};

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

/// Where the UUID of an `index-<uuid>-<n>` name lies, if it has one.
fn uuid_in(name: &str) -> Option<std::ops::Range<usize>> {
    let start = "index-".len();
    let uuid = name.strip_prefix("index-")?.get(..36)?;
    let well_formed =
        uuid.char_indices().all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() });
    (well_formed && name[start + 36..].starts_with('-')).then_some(start..start + 36)
}

/// `name` (`index-<uuid>-<n>`, from the table's path factory) made to carry the CRC32 of `bytes`, the
/// file's content: its UUID's version digit set to 8 and its last 8 hex digits to the CRC. A name of another
/// form is returned as it is.
pub fn name_with_checksum(name: &str, bytes: &[u8]) -> String {
    let Some(uuid) = uuid_in(name) else { return name.to_string() };
    let mut out = name.to_string();
    out.replace_range(uuid.start + 14..uuid.start + 15, "8");
    out.replace_range(uuid.end - 8..uuid.end, &format!("{:08x}", crc32fast::hash(bytes)));
    out
}

/// Checks a hash index file's `bytes` against the checksum its `name` carries ([`name_with_checksum`]); a
/// name without one (another writer's file) passes.
pub fn check_name(name: &str, bytes: &[u8]) -> Result<()> {
    let Some(uuid) = uuid_in(name).filter(|u| &name[u.start + 14..u.start + 15] == "8") else { return Ok(()) };
    let recorded = &name[uuid.end - 8..uuid.end];
    let got = format!("{:08x}", crc32fast::hash(bytes));
    if !recorded.eq_ignore_ascii_case(&got) {
        return Err(Error::corrupt(format!(
            "hash index file {name}: checksum {got} where its name records {recorded}"
        )));
    }
    Ok(())
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

    #[test]
    fn names_carry_the_checksum_and_every_flipped_bit_fails_it() {
        let bytes = encode(&[-7, 3, 1_000_000, i32::MAX]);
        let name = name_with_checksum("index-0b7d6f56-5a4e-4f2c-9a57-0d0d6b1f0c11-3", &bytes);
        assert_eq!(&name[..20], "index-0b7d6f56-5a4e-");
        assert_eq!(&name[20..21], "8", "version 8: {name}");
        assert_eq!(&name[34..], format!("{:08x}-3", crc32fast::hash(&bytes)));
        assert!(check_name(&name, &bytes).is_ok());
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[at] ^= 1 << bit;
                assert!(check_name(&name, &bad).is_err(), "offset {at} bit {bit}");
            }
        }
        // Other writers' names (random UUIDs) and names of other forms are not checked.
        assert!(check_name("index-0b7d6f56-5a4e-4f2c-9a57-0d0d6b1f0c11-3", &bytes).is_ok());
        assert!(check_name("index-x-0", &bytes).is_ok());
        assert_eq!(name_with_checksum("index-x-0", &bytes), "index-x-0");
    }
}
