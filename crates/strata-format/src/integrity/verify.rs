//! Checks that a data file holds what was written: the CRC32 of each parquet column chunk that Strata records in
//! the footer's key-value metadata, and decoded rows against the statistics the manifest keeps for the file.
//!
//! Parquet's own page CRCs are verified by the parquet crate (feature `crc`) for files whose writer recorded
//! them (Paimon's Java writer does); the crate cannot write them, hence the footer entry for Strata's files.
//! ORC files carry Strata's checksums in their footer's user metadata (`crate::integrity::orc_crc`).

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::ChunkReader;
use strata_spec::{compare_rows, DataFileMeta, DataType, Datum, Error, Result};

use crate::layout::arrow_types::datum_at;
use crate::layout::system_fields::{KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND};

/// Footer key-value metadata key holding the column chunk CRC32s: row groups separated by `;`, each the
/// lower-case hex CRC32s of its column chunks (in column order) separated by `,`. Other Paimon readers ignore
/// footer keys they do not know.
pub(crate) const CHUNK_CRC_KEY: &str = "strata.column-chunk-crc32";

fn corrupt(path: &str, message: impl Into<String>) -> Error {
    Error::corrupt_file(path.to_string(), message.into())
}

/// The [`CHUNK_CRC_KEY`] value for the row groups of a file whose bytes so far are `bytes` (the writer takes
/// them as the bytes pass, [`crate::write::checksummed_sink`]; tests check it against this).
#[cfg(test)]
pub(crate) fn chunk_crcs(bytes: &[u8], row_groups: &[parquet::file::metadata::RowGroupMetaData]) -> Result<String> {
    let mut groups = Vec::with_capacity(row_groups.len());
    for rg in row_groups {
        let mut cols = Vec::with_capacity(rg.num_columns());
        for c in rg.columns() {
            let (start, len) = c.byte_range();
            let chunk = usize::try_from(start)
                .ok()
                .zip(usize::try_from(start + len).ok())
                .and_then(|(s, e)| bytes.get(s..e))
                .ok_or_else(|| Error::invalid("parquet writer", "column chunk outside the bytes written"))?;
            cols.push(format!("{:08x}", crc32fast::hash(chunk)));
        }
        groups.push(cols.join(","));
    }
    Ok(groups.join(";"))
}

/// The value of footer key-value entry `key` in `meta` (an entry without a value reads as empty).
pub(crate) fn footer_value<'m>(meta: &'m ParquetMetaData, key: &str) -> Option<&'m str> {
    let kv = meta.file_metadata().key_value_metadata()?.iter().find(|k| k.key == key)?;
    Some(kv.value.as_deref().unwrap_or(""))
}

/// Whether `meta`'s footer records column-chunk CRC32s.
pub(crate) fn has_chunk_crcs(meta: &ParquetMetaData) -> bool {
    footer_value(meta, CHUNK_CRC_KEY).is_some()
}

/// Verifies the CRC32 of the column chunks the read will decode (row groups `groups`, the leaves in `mask`)
/// against the file's [`CHUNK_CRC_KEY`] entry. Files without the entry (other writers') pass unchecked.
pub(crate) fn verify_chunks<R: ChunkReader>(
    reader: &R,
    meta: &ParquetMetaData,
    groups: &[usize],
    mask: &ProjectionMask,
    path: &str,
) -> Result<()> {
    let Some(value) = footer_value(meta, CHUNK_CRC_KEY) else {
        return Ok(());
    };
    let expected: Vec<Vec<&str>> = value.split(';').map(|g| g.split(',').collect()).collect();
    if expected.len() != meta.num_row_groups() {
        return Err(corrupt(
            path,
            format!(
                "footer records checksums of {} row groups, the file has {}",
                expected.len(),
                meta.num_row_groups()
            ),
        ));
    }
    for &g in groups {
        let rg = meta.row_group(g);
        if expected[g].len() != rg.num_columns() {
            return Err(corrupt(path, format!("row group {g}: checksum count differs from the column count")));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            if !mask.leaf_included(c) {
                continue;
            }
            let (start, len) = col.byte_range();
            let bytes = usize::try_from(len)
                .map_err(|_| corrupt(path, format!("row group {g} column {c}: chunk length {len}")))
                .and_then(|n| reader.get_bytes(start, n).map_err(|e| corrupt(path, e.to_string())))?;
            let got = format!("{:08x}", crc32fast::hash(&bytes));
            if got != expected[g][c] {
                return Err(corrupt(
                    path,
                    format!(
                        "row group {g} column '{}': checksum {got} where the footer records {}",
                        col.column_path().string(),
                        expected[g][c]
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A key as datums.
type KeyDatums = Vec<Option<Datum>>;

/// Decoded rows checked against the file's manifest statistics: keys within `[min_key, max_key]` (first and
/// last row of each batch, the file being sorted), sequence numbers within the recorded range, row kinds
/// known. What the manifest says cannot change without the manifest's own checks noticing, so a row that
/// contradicts it is a corrupt data file, whoever wrote it.
#[derive(Debug, Clone)]
pub(crate) struct RowCheck {
    /// The key columns' positions in the batch, and the manifest's min and max key.
    keys: Option<(Vec<usize>, KeyDatums, KeyDatums)>,
    seq: Option<(usize, i64, i64)>,
    kind: Option<usize>,
}

impl RowCheck {
    /// The check of reads of `columns` (request order) from the file `meta` describes; `None` for an empty file.
    pub(crate) fn for_file(meta: &DataFileMeta, columns: &[(String, DataType)]) -> Option<RowCheck> {
        if meta.row_count <= 0 {
            return None;
        }
        let key_cols: Vec<(usize, DataType)> = columns
            .iter()
            .enumerate()
            .filter(|(_, (n, _))| n.starts_with(KEY_PREFIX))
            .map(|(i, (_, t))| (i, *t))
            .collect();
        let types: Vec<DataType> = key_cols.iter().map(|(_, t)| *t).collect();
        // Only when the read has every key column (a projection may have none), and the manifest key decodes.
        let keys = (!key_cols.is_empty())
            .then(|| Some((meta.min_key.to_datums(&types).ok()?, meta.max_key.to_datums(&types).ok()?)))
            .flatten()
            .map(|(lo, hi)| (key_cols.iter().map(|(i, _)| *i).collect(), lo, hi));
        let position = |name: &str| columns.iter().position(|(n, _)| n == name);
        Some(RowCheck {
            keys,
            seq: position(SEQUENCE_NUMBER).map(|i| (i, meta.min_sequence_number, meta.max_sequence_number)),
            kind: position(VALUE_KIND),
        })
    }

    /// Checks one decoded batch (columns in request order).
    pub(crate) fn check(&self, batch: &RecordBatch, path: &str) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if let Some((i, lo, hi)) = self.seq {
            if let Some(seq) = batch.column(i).as_primitive_opt::<Int64Type>() {
                let (min, max) = (arrow_arith::aggregate::min(seq), arrow_arith::aggregate::max(seq));
                if min.is_some_and(|m| m < lo) || max.is_some_and(|m| m > hi) || seq.null_count() > 0 {
                    return Err(corrupt(
                        path,
                        format!("sequence numbers {min:?}..{max:?} outside the manifest's {lo}..{hi}"),
                    ));
                }
            }
        }
        if let Some(i) = self.kind {
            if let Some(kind) = batch.column(i).as_primitive_opt::<Int8Type>() {
                if kind.null_count() > 0 || kind.values().iter().any(|k| !(0..=3).contains(k)) {
                    return Err(corrupt(path, "a row kind outside 0..=3"));
                }
            }
        }
        if let Some((cols, lo, hi)) = &self.keys {
            for row in [0, batch.num_rows() - 1] {
                let key = cols.iter().map(|&c| datum_at(batch.column(c).as_ref(), row)).collect::<Result<Vec<_>>>()?;
                if compare_rows(&key, lo).is_lt() || compare_rows(&key, hi).is_gt() {
                    return Err(corrupt(path, format!("key {key:?} outside the manifest's {lo:?}..{hi:?}")));
                }
            }
        }
        Ok(())
    }
}

/// Fails a read that takes every row as live (a raw read of a deletion-vector table) when the batch holds
/// a retraction row (its `_VALUE_KIND` at column `kind`). The planner chose the raw read because the
/// manifest counts no deletes in the file, a statistic other writers get wrong (pypaimon 2.1.0 records 0),
/// so the file's own row kinds have the last word.
pub fn reject_retractions(batch: &RecordBatch, kind: usize, path: &str, meta: &DataFileMeta) -> Result<()> {
    if has_retraction(batch, kind, path)? {
        return Err(corrupt(
            path,
            format!(
                "holds retraction rows at level {} although its manifest entry records {:?} deletes, so a read \
                 without merging would return them as rows; read with merging (`--merge`) or compact the bucket \
                 fully",
                meta.level, meta.delete_row_count
            ),
        ));
    }
    Ok(())
}

/// How many retraction rows (-U or -D) `batch` holds in its `_VALUE_KIND` column `kind`.
pub fn count_retractions(batch: &RecordBatch, kind: usize, path: &str) -> Result<usize> {
    let kinds =
        batch.column(kind).as_primitive_opt::<Int8Type>().ok_or_else(|| corrupt(path, "_VALUE_KIND is not TINYINT"))?;
    Ok(kinds.values().iter().filter(|k| crate::layout::kv::RowKind::byte_is_retract(**k)).count())
}

/// Whether `batch` holds a retraction row (-U or -D) in its `_VALUE_KIND` column `kind`.
pub fn has_retraction(batch: &RecordBatch, kind: usize, path: &str) -> Result<bool> {
    let kinds =
        batch.column(kind).as_primitive_opt::<Int8Type>().ok_or_else(|| corrupt(path, "_VALUE_KIND is not TINYINT"))?;
    Ok(kinds.values().iter().any(|k| crate::layout::kv::RowKind::byte_is_retract(*k)))
}
