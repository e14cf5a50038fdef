//! Batch scans of a snapshot: raw reads of deletion-vector tables (no merging; each file with its vector
//! applied) and merge-on-read for the rest.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use parking_lot::Mutex;
use strata_format::bucket_read::{merge_read, open_data_file, DataFileRef};
use strata_format::merge_function::MergeConfig;
use strata_format::reader::DEFAULT_BATCH_SIZE;
use strata_format::KeyValueLayout;
use strata_io::join;
use strata_spec::{BinaryRow, DataType, Error, ManifestEntry, Result};

use crate::paths::partition_path;
use crate::table::{DeletionFile, Table};

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

/// One bucket's work.
struct BucketTask {
    files: Vec<DataFileRef>,
}

/// The data file path of a manifest entry.
pub fn data_file_path(table: &Table, e: &ManifestEntry) -> Result<String> {
    if let Some(p) = &e.file.external_path {
        return Ok(p.clone());
    }
    let fields = table.schema().partition_fields()?;
    let part = partition_path(&e.partition, &fields, table.schema().core_options().partition_default_name())?;
    Ok(join(&table.path_factory().bucket_dir(&part, e.bucket), &e.file.file_name))
}

/// The batch's columns under the table's schema (names, nullability, field ids).
fn conform(schema: &SchemaRef, b: &RecordBatch) -> Result<RecordBatch> {
    RecordBatch::try_new(schema.clone(), b.columns().to_vec()).map_err(|e| Error::invalid("scan", e.to_string()))
}

/// Scans a snapshot into Arrow batches.
pub fn scan(table: &Table, opts: &ScanOptions) -> Result<ScanResult> {
    let _span = tracing::info_span!("scan", path = table.path()).entered();
    let schema = table.schema();
    let layout = Arc::new(KeyValueLayout::new(schema)?);
    let projection: Vec<usize> = match &opts.columns {
        None => (0..layout.value_fields.len()).collect(),
        Some(cols) => cols.iter().map(|c| layout.value_position(c)).collect::<Result<_>>()?,
    };
    let out_schema: SchemaRef =
        Arc::new(Schema::new(projection.iter().map(|&i| layout.value_schema.field(i).clone()).collect::<Vec<_>>()));
    let Some(snapshot) = table.snapshot(opts.snapshot)? else {
        return Ok(ScanResult { snapshot: None, schema: out_schema, batches: Vec::new() });
    };
    let options = schema.core_options();
    // Paimon's `batchScanSkipLevel0`: deletion-vector tables (unless `deletion-vectors.merge-on-read`) and
    // first-row tables read only compacted levels, without merging.
    let first_row = options.merge_engine()? == strata_spec::options::MergeEngine::FirstRow;
    let raw = (options.deletion_vectors_enabled()? && !options.deletion_vectors_merge_on_read()? || first_row)
        && !opts.force_merge;
    let deletion_files: std::collections::HashMap<(BinaryRow, i32, String), DeletionFile> =
        table.deletion_files(&snapshot)?;
    let mut buckets: BTreeMap<(Vec<u8>, i32), BucketTask> = BTreeMap::new();
    for e in table.live_files(&snapshot)? {
        if raw && e.file.level == 0 {
            // Deletion-vector tables show level 0 only once compacted (Paimon's batch-scan rule).
            continue;
        }
        let path = data_file_path(table, &e)?;
        let dv = deletion_files.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone()));
        let dv = match dv {
            Some(df) => Some(Arc::from(df.read(table.io().as_ref())?)),
            None => None,
        };
        buckets
            .entry((e.partition.serialize(), e.bucket))
            .or_insert_with(|| BucketTask { files: Vec::new() })
            .files
            .push(DataFileRef { path, meta: e.file, dv });
    }
    let tasks: Vec<BucketTask> = buckets.into_values().collect();
    let batch_size = opts.batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
    let merge_cfg = MergeConfig::from_schema(schema)?;
    let value_columns: Vec<(String, DataType)> =
        projection.iter().map(|&i| (layout.value_fields[i].name.clone(), layout.value_fields[i].data_type)).collect();
    let results: Mutex<Vec<(usize, Vec<RecordBatch>)>> = Mutex::new(Vec::new());
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(tasks.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = tasks.get(i) else { break };
                if first_error.lock().is_some() {
                    break;
                }
                let read = || -> Result<Vec<RecordBatch>> {
                    let mut out = Vec::new();
                    if raw {
                        for f in &task.files {
                            for b in open_data_file(table.io().as_ref(), f, value_columns.clone(), false, batch_size)? {
                                let b = b?;
                                out.push(conform(&out_schema, &b)?);
                            }
                        }
                    } else {
                        let merged = merge_read(
                            table.io().clone(),
                            layout.clone(),
                            task.files.clone(),
                            merge_cfg.clone(),
                            true,
                            batch_size,
                        )?;
                        let cols: Vec<usize> = projection.iter().map(|&i| layout.value_index(i)).collect();
                        for b in merged {
                            let b = b?.project(&cols).map_err(|e| Error::invalid("scan", e.to_string()))?;
                            out.push(conform(&out_schema, &b)?);
                        }
                    }
                    Ok(out)
                };
                match read() {
                    Ok(batches) => results.lock().push((i, batches)),
                    Err(e) => {
                        first_error.lock().get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner() {
        return Err(e);
    }
    let mut results = results.into_inner();
    results.sort_by_key(|(i, _)| *i);
    Ok(ScanResult {
        snapshot: Some(snapshot.id),
        schema: out_schema,
        batches: results.into_iter().flat_map(|(_, b)| b).collect(),
    })
}
