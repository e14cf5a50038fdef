//! Cutting a large data file into row ranges read one after another (or side by side), so that a read
//! holds a bounded part of a file at a time rather than the whole of it.

use strata_spec::DataFileMeta;

use crate::{DataFileRef, FooterCache};

/// Rows a part of a file holds at least: smaller parts would cost their footer and boundary pages more than
/// the thread they add gains.
const MIN_PART_ROWS: i64 = 64 * 1024;

/// Most parts one file is read in (a 64 GiB file in 16 MiB parts).
const MAX_PARTS: i64 = 4096;

/// Into how many parts a file of `weight` bytes is read: one per `target` bytes, each of at least
/// [`MIN_PART_ROWS`] rows; parquet files only (an ORC file is read whole).
pub fn parts_of(f: &DataFileMeta, weight: i64, target: i64) -> i64 {
    if !f.file_name.ends_with(".parquet") || weight <= target {
        return 1;
    }
    // Sizes and counts come from a manifest: saturating, and never more than MAX_PARTS parts.
    let target = target.max(1);
    let by_size = weight.saturating_add(target - 1) / target;
    by_size.min(f.row_count / MIN_PART_ROWS).clamp(1, MAX_PARTS)
}

/// Rows `i * rows / parts .. (i + 1) * rows / parts` of a file of `rows` rows: part `i` of `parts`, without
/// overflow whatever a manifest says.
pub fn part_rows(rows: u64, i: u64, parts: u64) -> std::ops::Range<u64> {
    let at = |k: u64| (u128::from(rows) * u128::from(k) / u128::from(parts.max(1))) as u64;
    at(i)..at(i + 1)
}

/// `file` cut into parts of about `part_bytes` (row ranges, each fetching only its pages, its footer kept
/// in `footers` so that it is parsed once), or `file` itself when it is small or already a part.
pub fn file_parts(file: DataFileRef, part_bytes: i64, footers: &FooterCache) -> Vec<DataFileRef> {
    let parts = match file.rows {
        Some(_) => 1,
        None => parts_of(&file.meta, file.meta.file_size, part_bytes) as u64,
    };
    if parts == 1 {
        return vec![file];
    }
    let rows = file.meta.row_count.max(0) as u64;
    (0..parts)
        .map(|i| {
            let mut part = file.clone();
            part.rows = Some(part_rows(rows, i, parts));
            part.footers = Some(footers.clone());
            part
        })
        .collect()
}
