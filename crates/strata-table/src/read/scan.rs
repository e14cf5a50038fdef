//! Batch scans of a snapshot: raw reads of deletion-vector tables (no merging; each file with its vector
//! applied) and merge-on-read for the rest.

use std::collections::BTreeMap;

use strata_spec::Result;

use crate::read::time_travel::SCAN_SNAPSHOT_ID;
pub(crate) use crate::read::ScanResult;
use crate::table::Table;

/// What to scan.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// The snapshot (latest when `None`).
    pub snapshot: Option<i64>,
    /// Columns to return (all when `None`).
    pub columns: Option<Vec<String>>,
    /// Merge-on-read even where deletion vectors allow raw reads (and read level 0 then).
    pub force_merge: bool,
    /// Rows per batch.
    pub batch_size: Option<usize>,
    /// The read's own options over the table's (Paimon's dynamic options): `scan.tag-name`,
    /// `scan.timestamp-millis` and the other time-travel keys of [`TimeTravel`](crate::TimeTravel).
    pub options: BTreeMap<String, String>,
}

/// Scans a snapshot into Arrow batches (a [`ReadBuilder`](crate::read::ReadBuilder) without filter or
/// limit): `opts.snapshot`, or the snapshot the time-travel options of the table and of `opts.options`
/// choose, or the latest.
pub fn scan(table: &Table, opts: &ScanOptions) -> Result<ScanResult> {
    let mut options = opts.options.clone();
    if let Some(id) = opts.snapshot {
        options.insert(SCAN_SNAPSHOT_ID.to_string(), id.to_string());
    }
    let mut rb = crate::read::time_travel::read_builder(table, &options)?.merge_on_read(opts.force_merge);
    if let Some(cols) = &opts.columns {
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        rb = rb.with_projection(&cols);
    }
    if let Some(n) = opts.batch_size {
        rb = rb.with_batch_size(n);
    }
    rb.read()
}
