//! The whole-file checksum of the Avro container files Strata writes (manifests, manifest lists, index
//! manifests, serialized commit messages).
//!
//! Avro containers have no checksum of their own (a zstd or deflate block decodes damaged bytes into other
//! values; only snappy blocks carry a CRC), and a manifest entry whose damaged field still decodes is read as
//! a fact: a bucket's deletion vectors gone, a file's key range moved. So Strata records, in the header's
//! metadata map that every Avro reader keeps and skips (Java's `DataFileReader`, fastavro, apache-avro),
//! the CRC32 of the whole file under [`CRC_KEY`]: 8 lower-case hex digits, computed over the file's bytes
//! with those 8 digits read as [`PLACEHOLDER`]. Every byte is covered, the header's schema and codec
//! included.
//!
//! A file without the entry is another writer's (or Strata's from before), read as it is, unless it carries
//! Strata's mark: the first 8 bytes of Strata's sync markers are [`MARKER_MAGIC`] (the other 8 random), so a
//! damaged name or length inside the header cannot pass the file off as unchecked; and a metadata name one
//! edit from [`CRC_KEY`] is damage too.

use std::hash::BuildHasher;
use std::ops::Range;

use crate::error::{Error, Result};

/// Header metadata name of the checksum.
pub(crate) const CRC_KEY: &str = "strata.crc32";

/// The checksum's value while the checksum is computed.
pub(crate) const PLACEHOLDER: &[u8; 8] = b"00000000";

/// The first half of the sync marker of every container Strata writes.
const MARKER_MAGIC: [u8; 8] = *b"strata\x00\x01";

/// The Avro container magic.
const AVRO_MAGIC: &[u8; 4] = b"Obj\x01";

/// A sync marker: [`MARKER_MAGIC`], then 8 bytes that differ from file to file (Avro asks for random
/// markers so that a marker is not mistaken for data when a reader resynchronises).
pub(crate) fn marker() -> [u8; 16] {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let random = std::collections::hash_map::RandomState::new().hash_one(nanos);
    let mut m = [0u8; 16];
    m[..8].copy_from_slice(&MARKER_MAGIC);
    m[8..].copy_from_slice(&random.to_le_bytes());
    m
}

/// The parts of a container's header a check needs.
struct Header {
    /// Each metadata entry's name (as bytes) and where its value lies in the file.
    entries: Vec<(Vec<u8>, Range<usize>)>,
    /// Where the sync marker lies.
    marker: Range<usize>,
}

/// An Avro `long` (zig-zag varint) at `*at`.
fn read_long(bytes: &[u8], at: &mut usize) -> Option<i64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(((value >> 1) as i64) ^ -((value & 1) as i64));
        }
    }
    None
}

/// An Avro `bytes` value at `*at`: where it lies.
fn read_bytes(bytes: &[u8], at: &mut usize) -> Option<Range<usize>> {
    let len = usize::try_from(read_long(bytes, at)?).ok()?;
    let range = *at..at.checked_add(len)?;
    (range.end <= bytes.len()).then(|| {
        *at = range.end;
        range
    })
}

/// The header of container `bytes` (the magic, the metadata map in blocks, the sync marker); `None` where
/// it does not parse.
fn parse_header(bytes: &[u8]) -> Option<Header> {
    if !bytes.starts_with(AVRO_MAGIC) {
        return None;
    }
    let mut at = AVRO_MAGIC.len();
    let mut entries = Vec::new();
    loop {
        let mut count = read_long(bytes, &mut at)?;
        if count == 0 {
            break;
        }
        if count < 0 {
            // A block of -count entries, preceded by its size in bytes.
            count = count.checked_neg()?;
            read_long(bytes, &mut at)?;
        }
        // Every entry takes at least two bytes: a damaged count ends at the file's end, not after 2^63 turns.
        for _ in 0..count {
            let name = read_bytes(bytes, &mut at)?;
            let value = read_bytes(bytes, &mut at)?;
            entries.push((bytes[name].to_vec(), value));
        }
    }
    let marker = at..at.checked_add(16)?;
    (marker.end <= bytes.len()).then_some(Header { entries, marker })
}

/// The CRC32 of `bytes` with `value` read as [`PLACEHOLDER`].
fn crc_with_placeholder(bytes: &[u8], value: &Range<usize>) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[..value.start]);
    crc.update(PLACEHOLDER);
    crc.update(&bytes[value.end..]);
    crc.finalize()
}

fn checksum_value(header: &Header) -> Option<&Range<usize>> {
    header.entries.iter().find(|(name, _)| name == CRC_KEY.as_bytes()).map(|(_, v)| v)
}

/// Writes the checksum of the container `bytes`, written with [`PLACEHOLDER`] under [`CRC_KEY`], in place.
pub(crate) fn seal(bytes: &mut [u8]) -> Result<()> {
    let value = parse_header(bytes)
        .as_ref()
        .and_then(checksum_value)
        .filter(|v| bytes[(*v).clone()] == PLACEHOLDER[..])
        .cloned()
        .ok_or_else(|| Error::invalid("avro container", "the checksum's placeholder is not in the header"))?;
    let crc = format!("{:08x}", crc_with_placeholder(bytes, &value));
    bytes[value].copy_from_slice(crc.as_bytes());
    Ok(())
}

/// Checks container `bytes` against the checksum its header records. A container without one passes
/// unless it is marked as Strata's or names an entry like a damaged [`CRC_KEY`]; one whose header does
/// not parse is left to the decoder, which reports it.
pub(crate) fn verify(bytes: &[u8]) -> Result<()> {
    let Some(header) = parse_header(bytes) else { return Ok(()) };
    let Some(value) = checksum_value(&header) else {
        if bytes[header.marker.clone()].starts_with(&MARKER_MAGIC) {
            return Err(Error::corrupt("avro container: written by Strata, but its header has no checksum"));
        }
        if let Some(name) = header
            .entries
            .iter()
            .filter_map(|(name, _)| std::str::from_utf8(name).ok())
            .find(|name| crate::damage::one_edit_apart(name, CRC_KEY))
        {
            return Err(Error::corrupt(format!(
                "avro container: header entry {name:?} looks like a damaged {CRC_KEY:?}"
            )));
        }
        return Ok(());
    };
    let recorded = &bytes[value.clone()];
    let got = format!("{:08x}", crc_with_placeholder(bytes, value));
    if got.as_bytes() != recorded {
        return Err(Error::corrupt(format!(
            "avro container: checksum {got} where its header records {:?}",
            String::from_utf8_lossy(recorded).chars().take(16).collect::<String>()
        )));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{ErrorKind, IndexManifestEntry, ManifestFileMeta};

    fn file() -> Vec<u8> {
        let meta = ManifestFileMeta {
            file_name: "manifest-0b7d6f56-5a4e-4f2c-9a57-0d0d6b1f0c11-0".into(),
            file_size: 10,
            num_added_files: 1,
            num_deleted_files: 0,
            partition_stats: crate::SimpleStats::empty(),
            schema_id: 0,
            min_bucket: Some(0),
            max_bucket: Some(0),
            min_level: Some(0),
            max_level: Some(0),
            min_row_id: None,
            max_row_id: None,
        };
        ManifestFileMeta::encode_file(&[meta.clone(), meta], "zstd").unwrap()
    }

    #[test]
    fn every_flipped_bit_is_a_corrupt_error() {
        let bytes = file();
        assert!(ManifestFileMeta::decode_file(&bytes).is_ok());
        let header = parse_header(&bytes).unwrap();
        assert!(bytes[header.marker.clone()].starts_with(&MARKER_MAGIC));
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[at] ^= 1 << bit;
                let e = ManifestFileMeta::decode_file(&bad).expect_err("a flip decoded");
                assert_eq!(e.kind(), ErrorKind::Corrupt, "offset {at} bit {bit}: {e}");
            }
        }
    }

    #[test]
    fn files_of_other_writers_read_unchecked_unless_they_look_like_strata_damage() {
        // A container as another writer makes it: apache-avro's own writer, a random marker, no checksum.
        let schema = apache_avro::Schema::parse_str(&crate::avro::index_manifest_entry_schema_json()).unwrap();
        let other = apache_avro::Writer::new(&schema, Vec::new()).into_inner().unwrap();
        assert!(verify(&other).is_ok());
        assert!(IndexManifestEntry::decode_file(&other).unwrap().is_empty());
        // Strata's own file with its checksum's name damaged: the marker still says whose it is.
        let mut renamed = IndexManifestEntry::encode_file(&[], "null").unwrap();
        let at = renamed.windows(CRC_KEY.len()).position(|w| w == CRC_KEY.as_bytes()).unwrap();
        renamed[at + 3] ^= 0x20;
        let e = verify(&renamed).unwrap_err();
        assert!(e.to_string().contains("no checksum"), "{e}");
        // Without Strata's marker, a name one edit from the checksum's is damage too.
        let header = parse_header(&renamed).unwrap();
        renamed[header.marker.start] ^= 0xff;
        let e = verify(&renamed).unwrap_err();
        assert!(e.to_string().contains("looks like a damaged"), "{e}");
    }

    #[test]
    fn header_blocks_with_negative_counts_parse() {
        // The metadata map as one block of -1 entries with its byte size: name "a", value "b".
        let mut bytes = AVRO_MAGIC.to_vec();
        bytes.extend_from_slice(&[0x01, 0x08, 0x02, b'a', 0x02, b'b', 0x00]);
        bytes.extend_from_slice(&[7u8; 16]);
        let header = parse_header(&bytes).unwrap();
        assert_eq!(header.entries, vec![(b"a".to_vec(), 9..10)]);
        assert_eq!(header.marker, 11..27);
        assert!(parse_header(&bytes[..26]).is_none(), "a marker cut short");
    }
}
