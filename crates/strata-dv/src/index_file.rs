//! DV index files (Paimon's `DeletionVectorsIndexFile`, `DeletionFileWriter`, `DeletionVector.read`).
//!
//! Layout: one version byte (1), then entries back to back. Strata verifies on read what Paimon skips: the
//! version, that the length prefix agrees with the recorded length, the CRC, that the bitmap fills its
//! payload exactly, and the cardinality when it was recorded.

use strata_io::FileIO;
use strata_spec::{DeletionVectorMeta, Error, Result, ResultExt};

use crate::{bitmap32, bitmap64, DeletionVector};

/// The version byte at offset 0 of every DV index file.
pub(crate) const INDEX_VERSION: u8 = 1;

/// The number of bytes an entry occupies, from its 8-byte header (length prefix and magic), checked against
/// the recorded length.
fn entry_size(header: &[u8], recorded_length: i32) -> Result<(usize, bool)> {
    let h: [u8; 8] = header
        .get(..8)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| Error::corrupt(format!("deletion vector entry truncated: {} header bytes", header.len())))?;
    let len = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let magic = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
    if len < 4 {
        return Err(Error::corrupt(format!("deletion vector entry has length {len}")));
    }
    let is64 = if magic == bitmap32::MAGIC_NUMBER {
        if len != recorded_length {
            return Err(Error::corrupt(format!(
                "32-bit deletion vector: length prefix {len} differs from the recorded length {recorded_length}"
            )));
        }
        false
    } else if magic.swap_bytes() == bitmap64::MAGIC_NUMBER {
        if i64::from(len) != i64::from(recorded_length) - 8 {
            return Err(Error::corrupt(format!(
                "64-bit deletion vector: length prefix {len} differs from the recorded length {recorded_length} - 8"
            )));
        }
        true
    } else {
        return Err(Error::corrupt(format!("invalid deletion vector magic number {magic}")));
    };
    Ok((len as usize + 8, is64))
}

/// Decodes the entry at the start of `bytes` (which may run on past it), checking it against the length
/// recorded for it.
pub fn decode_entry(bytes: &[u8], recorded_length: i32) -> Result<DeletionVector> {
    let (size, is64) = entry_size(bytes, recorded_length)?;
    let entry = bytes
        .get(..size)
        .ok_or_else(|| Error::corrupt(format!("deletion vector entry of {size} bytes truncated at {}", bytes.len())))?;
    let payload = &entry[4..size - 4];
    let stored = u32::from_be_bytes([entry[size - 4], entry[size - 3], entry[size - 2], entry[size - 1]]);
    let actual = crc32fast::hash(payload);
    if stored != actual {
        return Err(Error::corrupt(format!(
            "deletion vector CRC mismatch: stored {stored:#010x}, computed {actual:#010x}"
        )));
    }
    Ok(if is64 {
        DeletionVector::Bitmap64(bitmap64::decode_payload(payload)?)
    } else {
        DeletionVector::Bitmap32(bitmap32::decode_payload(payload)?)
    })
}

fn check_cardinality(dv: &DeletionVector, meta: &DeletionVectorMeta) -> Result<()> {
    if let Some(c) = meta.cardinality {
        if u64::try_from(c).ok() != Some(dv.cardinality()) {
            return Err(Error::corrupt(format!(
                "deletion vector of {} holds {} positions, the index manifest says {c}",
                meta.data_file_name,
                dv.cardinality()
            )));
        }
    }
    Ok(())
}

/// Reads one data file's vector by its range, without reading the rest of the index file.
pub fn read_deletion_vector(io: &dyn FileIO, path: &str, meta: &DeletionVectorMeta) -> Result<DeletionVector> {
    let _span = tracing::trace_span!("read_deletion_vector", path, file = meta.data_file_name).entered();
    let offset = u64::try_from(meta.offset).map_err(|_| Error::corrupt(format!("negative offset {}", meta.offset)))?;
    let header = io.read_range(path, offset, 8)?;
    let (size, _) = entry_size(&header, meta.length).in_file(path)?;
    let entry = io.read_range(path, offset, size as u64)?;
    let dv = decode_entry(&entry, meta.length).in_file(path)?;
    check_cardinality(&dv, meta).in_file(path)?;
    Ok(dv)
}

/// Reads every vector of an index file (one read of the whole file), in the order of `metas`.
pub fn read_all_deletion_vectors(
    io: &dyn FileIO,
    path: &str,
    metas: &[DeletionVectorMeta],
) -> Result<Vec<(String, DeletionVector)>> {
    let _span = tracing::debug_span!("read_dv_index_file", path, entries = metas.len()).entered();
    let bytes = io.read(path)?;
    let decode = || -> Result<Vec<(String, DeletionVector)>> {
        match bytes.first() {
            Some(&INDEX_VERSION) => {}
            other => return Err(Error::corrupt(format!("DV index file version {other:?}, expected {INDEX_VERSION}"))),
        }
        metas
            .iter()
            .map(|m| {
                let start = usize::try_from(m.offset).ok().filter(|&o| o >= 1 && o < bytes.len()).ok_or_else(|| {
                    Error::corrupt(format!("offset {} of {} is outside the file", m.offset, m.data_file_name))
                })?;
                let dv = decode_entry(&bytes[start..], m.length)?;
                check_cardinality(&dv, m)?;
                Ok((m.data_file_name.clone(), dv))
            })
            .collect()
    };
    decode().in_file(path)
}

/// Writes an index file holding `vectors` in order; returns its size and each vector's range.
pub fn write_index_file<'a>(
    io: &dyn FileIO,
    path: &str,
    vectors: impl IntoIterator<Item = (&'a str, &'a DeletionVector)>,
) -> Result<(i64, Vec<DeletionVectorMeta>)> {
    let _span = tracing::debug_span!("write_dv_index_file", path).entered();
    let mut bytes = vec![INDEX_VERSION];
    let mut metas = Vec::new();
    for (file, dv) in vectors {
        let (entry, length) = dv.serialize_entry()?;
        let offset = i32::try_from(bytes.len())
            .map_err(|_| Error::invalid("DV index file", "exceeds 2 GB (offsets are 32-bit in Paimon's format)"))?;
        metas.push(DeletionVectorMeta {
            data_file_name: file.to_string(),
            offset,
            length,
            cardinality: Some(dv.cardinality() as i64),
        });
        bytes.extend_from_slice(&entry);
    }
    io.write(path, &bytes)?;
    Ok((bytes.len() as i64, metas))
}
