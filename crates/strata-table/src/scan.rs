//! Batch scans of a snapshot: raw reads of deletion-vector tables (no merging; each file with its vector
//! applied) and merge-on-read for the rest.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use strata_io::join;
use strata_spec::file_name::external_path_within;
use strata_spec::{ManifestEntry, Result};

use crate::paths::partition_path;
use crate::table::Table;
use crate::time_travel::SCAN_SNAPSHOT_ID;

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
    /// `scan.timestamp-millis` and the other time-travel keys of [`crate::time_travel`].
    pub options: BTreeMap<String, String>,
}

/// A scan's output.
#[derive(Debug, Clone)]
pub struct ScanResult {
    /// The snapshot read (`None` for a table without snapshots).
    pub snapshot: Option<i64>,
    /// Schema of the batches.
    pub schema: SchemaRef,
    /// The rows.
    pub batches: Vec<RecordBatch>,
}

impl ScanResult {
    /// Rows in all batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// The data file path of a manifest entry: under the bucket directory by its name (checked to be a plain
/// name when the manifest was decoded), or at its external path when that lies under one of the roots of
/// `data-file.external-paths`. Scans, lookups, compactions, expiration and orphan cleanup all resolve data
/// files here, so no metadata can make any of them read or delete a file outside the table's roots.
pub fn data_file_path(table: &Table, e: &ManifestEntry) -> Result<String> {
    if let Some(p) = &e.file.external_path {
        return external_path_within(p, table.external_path_roots(), "data file _EXTERNAL_PATH")
            .map_err(|err| err.in_file(&format!("manifest entry of {}", e.file.file_name)));
    }
    let fields = table.schema().partition_fields()?;
    let part = partition_path(&e.partition, &fields, table.schema().core_options().partition_default_name())?;
    Ok(join(&table.path_factory().bucket_dir(&part, e.bucket), &e.file.file_name))
}

/// Scans a snapshot into Arrow batches (a [`ReadBuilder`](crate::read::ReadBuilder) without filter or
/// limit): `opts.snapshot`, or the snapshot the time-travel options of the table and of `opts.options`
/// choose, or the latest.
pub fn scan(table: &Table, opts: &ScanOptions) -> Result<ScanResult> {
    let mut options = opts.options.clone();
    if let Some(id) = opts.snapshot {
        options.insert(SCAN_SNAPSHOT_ID.to_string(), id.to_string());
    }
    let mut rb = crate::time_travel::read_builder(table, &options)?.merge_on_read(opts.force_merge);
    if let Some(cols) = &opts.columns {
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        rb = rb.with_projection(&cols);
    }
    if let Some(n) = opts.batch_size {
        rb = rb.with_batch_size(n);
    }
    rb.read()
}
