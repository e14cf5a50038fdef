//! The default deletion vector: a 32-bit RoaringBitmap (Paimon's `BitmapDeletionVector`).
//!
//! Payload: magic 1581511376 as 4 big-endian bytes, then the bitmap in the portable RoaringBitmap format
//! (run-optimized). The recorded length is the payload length.

use std::any::Any;

use roaring::RoaringBitmap;

use crate::{frame_entry, DeletionVector, Error, Result};

/// Magic of 32-bit vectors, stored big-endian.
pub const MAGIC_NUMBER: u32 = 1_581_511_376;

/// Largest position a 32-bit vector holds (Java's `Integer.MAX_VALUE`).
pub const MAX_POSITION: u64 = i32::MAX as u64;

/// A deletion vector over a 32-bit RoaringBitmap.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BitmapDeletionVector {
    bitmap: RoaringBitmap,
}

impl BitmapDeletionVector {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wraps a bitmap (positions must be at most `i32::MAX`).
    pub fn from_bitmap(bitmap: RoaringBitmap) -> Result<Self> {
        if bitmap.max().is_some_and(|m| u64::from(m) > MAX_POSITION) {
            return Err(Error::corrupt(format!(
                "32-bit deletion vector holds position {} above {MAX_POSITION}",
                bitmap.max().unwrap_or_default()
            )));
        }
        Ok(BitmapDeletionVector { bitmap })
    }

    /// The bitmap.
    pub fn bitmap(&self) -> &RoaringBitmap {
        &self.bitmap
    }

    fn check(position: u64) -> Result<u32> {
        if position > MAX_POSITION {
            return Err(Error::invalid(
                "deletion vector position",
                format!("{position} is above {MAX_POSITION}: files this large need deletion-vectors.bitmap64"),
            ));
        }
        Ok(position as u32)
    }

    /// Decodes a payload (magic and bitmap).
    pub fn deserialize_payload(payload: &[u8]) -> Result<Self> {
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
        Self::from_bitmap(bitmap)
    }
}

impl DeletionVector for BitmapDeletionVector {
    fn delete(&mut self, position: u64) -> Result<()> {
        self.bitmap.insert(Self::check(position)?);
        Ok(())
    }

    fn checked_delete(&mut self, position: u64) -> Result<bool> {
        Ok(self.bitmap.insert(Self::check(position)?))
    }

    fn is_deleted(&self, position: u64) -> bool {
        position <= MAX_POSITION && self.bitmap.contains(position as u32)
    }

    fn is_empty(&self) -> bool {
        self.bitmap.is_empty()
    }

    fn cardinality(&self) -> u64 {
        self.bitmap.len()
    }

    fn merge(&mut self, other: &dyn DeletionVector) -> Result<()> {
        if let Some(o) = other.as_any().downcast_ref::<BitmapDeletionVector>() {
            self.bitmap |= &o.bitmap;
            return Ok(());
        }
        for p in other.positions() {
            self.delete(p)?;
        }
        Ok(())
    }

    fn positions(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        Box::new(self.bitmap.iter().map(u64::from))
    }

    fn serialize_entry(&self) -> Result<(Vec<u8>, i32)> {
        let mut bitmap = self.bitmap.clone();
        bitmap.optimize();
        let mut payload = Vec::with_capacity(4 + bitmap.serialized_size());
        payload.extend_from_slice(&MAGIC_NUMBER.to_be_bytes());
        bitmap.serialize_into(&mut payload).map_err(|e| Error::invalid("deletion vector", e.to_string()))?;
        let len = payload.len() as i32;
        Ok((frame_entry(&payload)?, len))
    }

    fn boxed_clone(&self) -> Box<dyn DeletionVector> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
