//! Checksums of Strata's ORC data files, so that a damaged byte is an error naming the file, not other rows.
//!
//! ORC has no checksums of its own. Strata records two entries in the footer's user metadata (ORC's
//! `UserMetadataItem`, which every ORC reader keeps and Paimon's readers ignore), appended as the footer's
//! last fields when the file is closed:
//!
//! - [`BLOCK_CRC_KEY`]: the CRC32 of every fixed-size block of the stripes, from the file's first byte to
//!   the start of its tail, in the form the parquet footers use (`crate::integrity::block_crc`);
//! - [`TAIL_CRC_KEY`]: the CRC32 (8 hex digits) of the metadata section as stored followed by the
//!   decompressed footer up to these two entries: the stripes' offsets and row counts, the types, the
//!   column names.
//!
//! ORC files are read whole, so a read checks every block before the decoder sees a byte. Only the
//! postscript (its lengths, codec and version; at most 255 bytes, which the decoder parses and bounds) is
//! outside both. Files with neither entry (other writers', and Strata's from before) read unchecked; a file
//! with one of them, or with a user metadata name one edit from either, is damaged.

use bytes::Bytes;
use prost::Message;
use strata_spec::{Error, Result};

use crate::integrity::block_crc::BlockCrcs;

/// User metadata name of the stripes' block CRCs (the name parquet footers use for the same entry).
pub(crate) const BLOCK_CRC_KEY: &str = crate::integrity::block_crc::BLOCK_CRC_KEY;

/// User metadata name of the tail's CRC.
pub(crate) const TAIL_CRC_KEY: &str = "strata.tail-crc32";

/// The user metadata items to append to a file's footer, given the metadata section as stored and the
/// encoded footer before them; `blocks` is the block CRC entry of the stripes, taken as they were written.
pub(crate) fn footer_items(metadata: &[u8], footer: &[u8], blocks: String) -> Vec<(String, Vec<u8>)> {
    vec![
        (BLOCK_CRC_KEY.to_string(), blocks.into_bytes()),
        (TAIL_CRC_KEY.to_string(), format!("{:08x}", tail_crc(metadata, footer)).into_bytes()),
    ]
}

fn tail_crc(metadata: &[u8], footer: &[u8]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(metadata);
    crc.update(footer);
    crc.finalize()
}

/// The encoded footer fields of `items`, as [`footer_items`]' entries end a footer.
fn encoded_items(items: &[(&str, &[u8])]) -> Vec<u8> {
    let metadata = items
        .iter()
        .map(|(name, value)| orc_rust::proto::UserMetadataItem {
            name: Some((*name).to_string()),
            value: Some(value.to_vec()),
        })
        .collect();
    orc_rust::proto::Footer { metadata, ..Default::default() }.encode_to_vec()
}

/// Checks the ORC file `bytes` (whole), whose footer `meta` was parsed from them, against the checksums its
/// footer records. A file without them passes unchecked.
pub(crate) fn verify(bytes: &Bytes, meta: &orc_rust::reader::metadata::FileMetadata, path: &str) -> Result<()> {
    let corrupt = |message: String| Error::corrupt_file(path.to_string(), message);
    let items = meta.user_custom_metadata();
    let (blocks, tail) = match (items.get(BLOCK_CRC_KEY), items.get(TAIL_CRC_KEY)) {
        (Some(b), Some(t)) => (b, t),
        (None, None) => {
            let damaged = items
                .keys()
                .find_map(|k| strata_spec::damaged_form_of(k, &[BLOCK_CRC_KEY, TAIL_CRC_KEY]).map(|known| (k, known)));
            return match damaged {
                Some((k, known)) => Err(corrupt(format!("footer entry {k:?} looks like a damaged {known:?}"))),
                None => Ok(()),
            };
        }
        (b, _) => {
            let missing = if b.is_some() { TAIL_CRC_KEY } else { BLOCK_CRC_KEY };
            return Err(corrupt(format!("the footer lacks its {missing} entry beside Strata's other checksum")));
        }
    };
    let raw = meta.raw_tail();
    let blocks_value = std::str::from_utf8(blocks).map_err(|_| corrupt(format!("{BLOCK_CRC_KEY} is not UTF-8")))?;
    let crcs = BlockCrcs::from_value(blocks_value, bytes.len() as u64, path)?;
    if crcs.end() != raw.metadata_offset {
        return Err(corrupt(format!(
            "the block checksums cover {} bytes, the stripes end at {}",
            crcs.end(),
            raw.metadata_offset
        )));
    }
    crcs.check(0, &bytes[..bytes.len().min(crcs.end() as usize)], path)?;
    let suffix = encoded_items(&[(BLOCK_CRC_KEY, blocks), (TAIL_CRC_KEY, tail)]);
    let Some(covered) = raw.footer.strip_suffix(suffix.as_slice()) else {
        return Err(corrupt("the footer's checksums are not its last fields".to_string()));
    };
    let got = format!("{:08x}", tail_crc(&raw.metadata, covered));
    if got.as_bytes() != tail.as_slice() {
        return Err(corrupt(format!(
            "footer: checksum {got} where it records {}",
            String::from_utf8_lossy(tail).chars().take(16).collect::<String>()
        )));
    }
    Ok(())
}
