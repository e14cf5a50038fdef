//! Deletion vectors (Paimon PIP-16), byte-compatible with Paimon.
//!
//! A deletion vector marks row positions of one data file as deleted. The vectors of one bucket live in one
//! DV index file (`index/index-<uuid>-N`): a version byte, then one length-prefixed, CRC-suffixed entry per
//! data file, located through [`DeletionVectorMeta`](strata_spec::DeletionVectorMeta) ranges recorded in
//! the index manifest.

mod bitmap32;
mod bitmap64;
mod index_file;
mod maintainer;
mod selection;

use std::any::Any;
use std::fmt::Debug;

pub use bitmap32::BitmapDeletionVector;
pub use bitmap64::Bitmap64DeletionVector;
pub use index_file::{decode_entry, read_all_deletion_vectors, read_deletion_vector, write_index_file, INDEX_VERSION};
pub use maintainer::{BucketedDvMaintainer, IndexFileChange};
pub use selection::{row_selection, row_selection_for_ranges};
pub use strata_spec::{Error, Result};

/// The deleted row positions of one data file (Paimon's `DeletionVector`).
pub trait DeletionVector: Send + Sync + Debug {
    /// Marks `position` deleted. Fails for a position the implementation cannot hold.
    fn delete(&mut self, position: u64) -> Result<()>;

    /// Marks `position` deleted; `Ok(true)` if it was not deleted before.
    fn checked_delete(&mut self, position: u64) -> Result<bool>;

    /// Whether `position` is deleted.
    fn is_deleted(&self, position: u64) -> bool;

    /// Whether no position is deleted.
    fn is_empty(&self) -> bool;

    /// How many positions are deleted.
    fn cardinality(&self) -> u64;

    /// Adds every position of `other`.
    fn merge(&mut self, other: &dyn DeletionVector) -> Result<()>;

    /// The deleted positions, ascending.
    fn positions(&self) -> Box<dyn Iterator<Item = u64> + '_>;

    /// The entry as stored in an index file (length, payload, CRC) and the length recorded for it in
    /// `DeletionVectorMeta` (the payload length for 32-bit vectors, the whole entry for 64-bit ones).
    fn serialize_entry(&self) -> Result<(Vec<u8>, i32)>;

    /// A copy behind a new box.
    fn boxed_clone(&self) -> Box<dyn DeletionVector>;

    /// For same-kind fast paths.
    fn as_any(&self) -> &dyn Any;
}

/// A new empty vector of the kind `deletion-vectors.bitmap64` selects.
pub fn new_deletion_vector(bitmap64: bool) -> Box<dyn DeletionVector> {
    if bitmap64 {
        Box::new(Bitmap64DeletionVector::new())
    } else {
        Box::new(BitmapDeletionVector::new())
    }
}

/// Wraps payload bytes as an entry: 4-byte big-endian `len`, the payload, 4-byte big-endian CRC32 of it.
pub(crate) fn frame_entry(payload: &[u8]) -> Result<Vec<u8>> {
    let len = i32::try_from(payload.len()).map_err(|_| {
        Error::invalid("deletion vector", format!("{} bytes exceed the 2 GB entry limit", payload.len()))
    })?;
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32fast::hash(payload).to_be_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests;
