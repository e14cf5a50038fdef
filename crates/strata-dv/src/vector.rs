//! The deletion vector (Paimon's `DeletionVector`): the deleted row positions of one data file, in either of
//! the two kinds Paimon stores. It knows nothing of file formats: each reader builds its own selection from
//! [`DeletionVector::positions`] (as iceberg-rust's readers do from its delete vectors).

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::{bitmap32, bitmap64, Result};

/// The deleted row positions of one data file.
#[derive(Debug, Clone, PartialEq)]
pub enum DeletionVector {
    /// A 32-bit RoaringBitmap (Paimon's `BitmapDeletionVector`, the default): positions up to `i32::MAX`.
    Bitmap32(RoaringBitmap),
    /// A 64-bit Roaring bitmap (Paimon's `Bitmap64DeletionVector`, `deletion-vectors.bitmap64`).
    Bitmap64(RoaringTreemap),
}

impl DeletionVector {
    /// A new empty vector of the kind `deletion-vectors.bitmap64` selects.
    pub fn new(bitmap64: bool) -> Self {
        if bitmap64 {
            DeletionVector::Bitmap64(RoaringTreemap::new())
        } else {
            DeletionVector::Bitmap32(RoaringBitmap::new())
        }
    }

    /// Marks `position` deleted. Fails for a position the vector's kind cannot hold.
    pub fn delete(&mut self, position: u64) -> Result<()> {
        self.checked_delete(position).map(|_| ())
    }

    /// Marks `position` deleted; `Ok(true)` if it was not deleted before.
    pub fn checked_delete(&mut self, position: u64) -> Result<bool> {
        Ok(match self {
            DeletionVector::Bitmap32(b) => b.insert(bitmap32::check(position)?),
            DeletionVector::Bitmap64(b) => b.insert(bitmap64::check(position)?),
        })
    }

    /// Whether `position` is deleted.
    pub fn is_deleted(&self, position: u64) -> bool {
        match self {
            DeletionVector::Bitmap32(b) => u32::try_from(position).is_ok_and(|p| b.contains(p)),
            DeletionVector::Bitmap64(b) => b.contains(position),
        }
    }

    /// Whether no position is deleted.
    pub fn is_empty(&self) -> bool {
        match self {
            DeletionVector::Bitmap32(b) => b.is_empty(),
            DeletionVector::Bitmap64(b) => b.is_empty(),
        }
    }

    /// How many positions are deleted.
    pub fn cardinality(&self) -> u64 {
        match self {
            DeletionVector::Bitmap32(b) => b.len(),
            DeletionVector::Bitmap64(b) => b.len(),
        }
    }

    /// Adds every position of `other` (of either kind).
    pub fn merge(&mut self, other: &DeletionVector) -> Result<()> {
        match (self, other) {
            (DeletionVector::Bitmap32(a), DeletionVector::Bitmap32(b)) => *a |= b,
            (DeletionVector::Bitmap64(a), DeletionVector::Bitmap64(b)) => *a |= b,
            (this, other) => {
                for p in other.positions() {
                    this.delete(p)?;
                }
            }
        }
        Ok(())
    }

    /// The deleted positions, ascending.
    pub fn positions(&self) -> Positions<'_> {
        match self {
            DeletionVector::Bitmap32(b) => Positions::Bitmap32(b.iter()),
            DeletionVector::Bitmap64(b) => Positions::Bitmap64(Box::new(b.iter())),
        }
    }

    /// The deleted positions from `start` on, ascending: found by the bitmaps' index, not by iterating the
    /// positions before `start` (a point lookup reads a few pages of a file that may hold many deletions).
    pub fn positions_from(&self, start: u64) -> Positions<'_> {
        match self {
            DeletionVector::Bitmap32(b) => match u32::try_from(start) {
                Ok(s) => Positions::Bitmap32(b.range(s..)),
                // No 32-bit position reaches that far.
                Err(_) => Positions::Bitmap32(b.range(0..0)),
            },
            DeletionVector::Bitmap64(b) => {
                let mut it = b.iter();
                it.advance_to(start);
                Positions::Bitmap64(Box::new(it))
            }
        }
    }

    /// The entry as stored in an index file (length, payload, CRC) and the length recorded for it in
    /// `DeletionVectorMeta` (the payload length for 32-bit vectors, the whole entry for 64-bit ones).
    pub fn serialize_entry(&self) -> Result<(Vec<u8>, i32)> {
        match self {
            DeletionVector::Bitmap32(b) => bitmap32::encode_entry(b),
            DeletionVector::Bitmap64(b) => bitmap64::encode_entry(b),
        }
    }
}

/// The deleted positions of a [`DeletionVector`], ascending.
pub enum Positions<'a> {
    /// Of a 32-bit vector.
    Bitmap32(roaring::bitmap::Iter<'a>),
    /// Of a 64-bit vector (boxed: its iterator is several times the size of the 32-bit one).
    Bitmap64(Box<roaring::treemap::Iter<'a>>),
}

impl Iterator for Positions<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        match self {
            Positions::Bitmap32(i) => i.next().map(u64::from),
            Positions::Bitmap64(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Positions::Bitmap32(i) => i.size_hint(),
            Positions::Bitmap64(i) => i.size_hint(),
        }
    }
}
