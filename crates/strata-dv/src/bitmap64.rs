//! The 64-bit deletion vector (Paimon's `Bitmap64DeletionVector`, option `deletion-vectors.bitmap64`).
//!
//! Payload: magic 1681511377 as 4 **little-endian** bytes (Iceberg's deletion-vector-v1 blob magic), then a
//! 64-bit Roaring bitmap in the portable format (8-byte LE count of 32-bit bitmaps, then per bitmap a 4-byte
//! LE key and its portable RoaringBitmap bytes), run-optimized. The recorded length is the whole entry:
//! 4 + payload + 4.

use std::any::Any;

use roaring::RoaringTreemap;

use crate::{frame_entry, DeletionVector, Error, Result};

/// Magic of 64-bit vectors, stored little-endian.
pub const MAGIC_NUMBER: u32 = 1_681_511_377;

/// Largest position: Iceberg's vectors hold positions below 2^63.
pub const MAX_POSITION: u64 = i64::MAX as u64;

/// A deletion vector over a 64-bit Roaring bitmap.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bitmap64DeletionVector {
    bitmap: RoaringTreemap,
}

impl Bitmap64DeletionVector {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bitmap.
    pub fn bitmap(&self) -> &RoaringTreemap {
        &self.bitmap
    }

    fn check(position: u64) -> Result<u64> {
        if position > MAX_POSITION {
            return Err(Error::invalid("deletion vector position", format!("{position} is above {MAX_POSITION}")));
        }
        Ok(position)
    }

    /// Decodes a payload (magic and bitmap).
    pub fn deserialize_payload(payload: &[u8]) -> Result<Self> {
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
        Ok(Bitmap64DeletionVector { bitmap })
    }
}

impl DeletionVector for Bitmap64DeletionVector {
    fn delete(&mut self, position: u64) -> Result<()> {
        self.bitmap.insert(Self::check(position)?);
        Ok(())
    }

    fn checked_delete(&mut self, position: u64) -> Result<bool> {
        Ok(self.bitmap.insert(Self::check(position)?))
    }

    fn is_deleted(&self, position: u64) -> bool {
        self.bitmap.contains(position)
    }

    fn is_empty(&self) -> bool {
        self.bitmap.is_empty()
    }

    fn cardinality(&self) -> u64 {
        self.bitmap.len()
    }

    fn merge(&mut self, other: &dyn DeletionVector) -> Result<()> {
        if let Some(o) = other.as_any().downcast_ref::<Bitmap64DeletionVector>() {
            self.bitmap |= &o.bitmap;
            return Ok(());
        }
        for p in other.positions() {
            self.delete(p)?;
        }
        Ok(())
    }

    fn positions(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        Box::new(self.bitmap.iter())
    }

    fn serialize_entry(&self) -> Result<(Vec<u8>, i32)> {
        let mut bitmap = self.bitmap.clone();
        bitmap.optimize();
        let mut payload = Vec::with_capacity(4 + bitmap.serialized_size());
        payload.extend_from_slice(&MAGIC_NUMBER.to_le_bytes());
        bitmap.serialize_into(&mut payload).map_err(|e| Error::invalid("deletion vector", e.to_string()))?;
        let entry = frame_entry(&payload)?;
        let len = i32::try_from(entry.len()).map_err(|_| Error::invalid("deletion vector", "entry exceeds 2 GB"))?;
        Ok((entry, len))
    }

    fn boxed_clone(&self) -> Box<dyn DeletionVector> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
