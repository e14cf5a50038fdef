//! Deletion vectors (Paimon PIP-16), byte-compatible with Paimon.
//!
//! A deletion vector marks row positions of one data file as deleted. The vectors of one bucket live in one
//! DV index file (`index/index-<uuid>-N`): a version byte, then one length-prefixed, CRC-suffixed entry per
//! data file, located through [`DeletionVectorMeta`](strata_spec::DeletionVectorMeta) ranges recorded in
//! the index manifest.

mod append_maintainer;
mod bitmap32;
mod bitmap64;
mod index_file;
mod maintainer;
mod vector;

// A deletion vector, and one bucket's vectors as they change.
pub use append_maintainer::{AppendDvMaintainer, AppendIndexChange};
pub use maintainer::{BucketedDvMaintainer, IndexFileChange};
pub use vector::{DeletionVector, Positions};

// DV index files: one entry, one vector at its recorded range, all of a file's vectors, a new file.
pub use index_file::{decode_entry, read_all_deletion_vectors, read_deletion_vector, write_index_file};

use strata_spec::{Error, Result};

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
