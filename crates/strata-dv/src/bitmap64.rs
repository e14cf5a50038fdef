//! The stored form of 64-bit deletion vectors (Paimon's `Bitmap64DeletionVector`, option
//! `deletion-vectors.bitmap64`).
//!
//! Payload: magic 1681511377 as 4 **little-endian** bytes (Iceberg's deletion-vector-v1 blob magic), then a
//! 64-bit Roaring bitmap in the portable format (8-byte LE count of 32-bit bitmaps, then per bitmap a 4-byte
//! LE key and its portable RoaringBitmap bytes), run-optimized. The recorded length is the whole entry:
//! 4 + payload + 4.

use roaring::RoaringTreemap;

use crate::{frame_entry, Error, Result};

/// Magic of 64-bit vectors, stored little-endian.
pub(crate) const MAGIC_NUMBER: u32 = 1_681_511_377;

/// Largest position: Iceberg's vectors hold positions below 2^63.
pub(crate) const MAX_POSITION: u64 = i64::MAX as u64;

/// `position`, checked to be one a 64-bit vector holds.
pub(crate) fn check(position: u64) -> Result<u64> {
    if position > MAX_POSITION {
        return Err(Error::invalid("deletion vector position", format!("{position} is above {MAX_POSITION}")));
    }
    Ok(position)
}

/// Decodes a payload (magic and bitmap).
pub(crate) fn decode_payload(payload: &[u8]) -> Result<RoaringTreemap> {
    let magic = payload.get(..4).map(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]));
    if magic != Some(MAGIC_NUMBER) {
        return Err(Error::corrupt(format!("64-bit deletion vector has magic {magic:?}, expected {MAGIC_NUMBER}")));
    }
    let mut rest = &payload[4..];
    let bitmap = RoaringTreemap::deserialize_from(&mut rest)
        .map_err(|e| Error::corrupt(format!("64-bit deletion vector bitmap: {e}")))?;
    if !rest.is_empty() {
        return Err(Error::corrupt(format!("64-bit deletion vector has {} trailing bytes", rest.len())));
    }
    if bitmap.max().is_some_and(|m| m > MAX_POSITION) {
        return Err(Error::corrupt("64-bit deletion vector holds a position at or above 2^63"));
    }
    Ok(bitmap)
}

/// The entry as stored (length, payload, CRC) and the length recorded for it (the whole entry's).
pub(crate) fn encode_entry(bitmap: &RoaringTreemap) -> Result<(Vec<u8>, i32)> {
    let mut bitmap = bitmap.clone();
    bitmap.optimize();
    let mut payload = Vec::with_capacity(4 + bitmap.serialized_size());
    payload.extend_from_slice(&MAGIC_NUMBER.to_le_bytes());
    bitmap.serialize_into(&mut payload).map_err(|e| Error::internal_from("deletion vector", e))?;
    let entry = frame_entry(&payload)?;
    let len = i32::try_from(entry.len()).map_err(|_| Error::invalid("deletion vector", "entry exceeds 2 GB"))?;
    Ok((entry, len))
}
