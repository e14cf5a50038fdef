//! The stored form of 32-bit deletion vectors (Paimon's `BitmapDeletionVector`, the default).
//!
//! Payload: magic 1581511376 as 4 big-endian bytes, then the bitmap in the portable RoaringBitmap format
//! (run-optimized). The recorded length is the payload length.

use roaring::RoaringBitmap;

use crate::{frame_entry, Error, Result};

/// Magic of 32-bit vectors, stored big-endian.
pub(crate) const MAGIC_NUMBER: u32 = 1_581_511_376;

/// Largest position a 32-bit vector holds (Java's `Integer.MAX_VALUE`).
pub(crate) const MAX_POSITION: u64 = i32::MAX as u64;

/// `position` as a bitmap element, or an error naming the option that holds larger files.
pub(crate) fn check(position: u64) -> Result<u32> {
    if position > MAX_POSITION {
        return Err(Error::invalid(
            "deletion vector position",
            format!("{position} is above {MAX_POSITION}: files this large need deletion-vectors.bitmap64"),
        ));
    }
    Ok(position as u32)
}

/// Decodes a payload (magic and bitmap).
pub(crate) fn decode_payload(payload: &[u8]) -> Result<RoaringBitmap> {
    let magic = payload.get(..4).map(|m| u32::from_be_bytes([m[0], m[1], m[2], m[3]]));
    if magic != Some(MAGIC_NUMBER) {
        return Err(Error::corrupt(format!("32-bit deletion vector has magic {magic:?}, expected {MAGIC_NUMBER}")));
    }
    let mut rest = &payload[4..];
    let bitmap = RoaringBitmap::deserialize_from(&mut rest)
        .map_err(|e| Error::corrupt(format!("32-bit deletion vector bitmap: {e}")))?;
    if !rest.is_empty() {
        return Err(Error::corrupt(format!("32-bit deletion vector has {} trailing bytes", rest.len())));
    }
    if let Some(max) = bitmap.max().filter(|&m| u64::from(m) > MAX_POSITION) {
        return Err(Error::corrupt(format!("32-bit deletion vector holds position {max} above {MAX_POSITION}")));
    }
    Ok(bitmap)
}

/// The entry as stored (length, payload, CRC) and the length recorded for it (the payload's).
pub(crate) fn encode_entry(bitmap: &RoaringBitmap) -> Result<(Vec<u8>, i32)> {
    let mut bitmap = bitmap.clone();
    bitmap.optimize();
    let mut payload = Vec::with_capacity(4 + bitmap.serialized_size());
    payload.extend_from_slice(&MAGIC_NUMBER.to_be_bytes());
    bitmap.serialize_into(&mut payload).map_err(|e| Error::internal_from("deletion vector", e))?;
    let len = i32::try_from(payload.len()).map_err(|_| Error::invalid("deletion vector", "entry exceeds 2 GB"))?;
    Ok((frame_entry(&payload)?, len))
}
