//! Reading a table: plan a snapshot into splits, read splits in parallel, count, and look keys up.
//!
//! Planning follows Paimon: in deletion-vector mode (and for first-row tables) batch reads skip level 0 unless
//! `deletion-vectors.merge-on-read`; files at levels >= 1 without retract rows are *raw* and are bin-packed
//! by size into splits across buckets, each file carrying its `DeletionFile`; everything else is read per
//! bucket with merge-on-read. Filters prune buckets (a filter pinning the whole bucket key, in fixed-bucket
//! tables), files by manifest statistics and parquet row groups by their statistics, then filter rows
//! exactly; in merge-on-read only key filters are pushed below the merge.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use strata_format::{KeyValueLayout, Predicate, DEFAULT_BATCH_SIZE};
use strata_spec::{Error, MergeEngine, Result, Snapshot};

use crate::table::Table;

mod bucket_filter;
pub(crate) mod orphan_vectors;
mod plan;
pub(crate) mod point_read;
mod prefetch;
pub(crate) mod query;
pub(crate) mod scan;
mod split_reader;
pub(crate) mod time_travel;

pub use plan::{DataSplit, Plan};
pub use split_reader::BatchStream;

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

/// Builds reads of a table.
#[derive(Debug, Clone)]
pub struct ReadBuilder {
    table: Table,
    snapshot: Option<i64>,
    /// A snapshot given by value (a tag's, whose `snapshot-N` may have expired); wins over `snapshot`.
    pinned: Option<Arc<Snapshot>>,
    projection: Option<Vec<String>>,
    filter: Option<Predicate>,
    limit: Option<usize>,
    force_merge: bool,
    /// Leave level 0 out whatever the mode (a streaming reader's first read of a `lookup` changelog table:
    /// level-0 rows reach it through the changelog of the compaction that takes them up).
    skip_level0: bool,
    batch_size: usize,
}

impl ReadBuilder {
    /// A read of the latest snapshot, every column, no filter.
    pub fn new(table: &Table) -> Self {
        ReadBuilder {
            table: table.clone(),
            snapshot: None,
            pinned: None,
            projection: None,
            filter: None,
            limit: None,
            force_merge: false,
            skip_level0: false,
            // `read.batch-size` was validated when the table was created or altered; a value another engine
            // wrote that does not parse falls back to the default rather than failing every read.
            batch_size: table.schema().core_options().read_batch_size().ok().flatten().unwrap_or(DEFAULT_BATCH_SIZE),
        }
    }

    /// Reads snapshot `id` (time travel).
    pub fn with_snapshot(mut self, id: i64) -> Self {
        self.snapshot = Some(id);
        self.pinned = None;
        self
    }

    /// Reads `snapshot` as given, without looking it up in `snapshot/` (time travel to a tag, see
    /// `time_travel::read_builder`); build the reader on `table.as_of_snapshot(&snapshot)` to read with the
    /// schema it was written under.
    pub fn with_snapshot_value(mut self, snapshot: Snapshot) -> Self {
        self.snapshot = Some(snapshot.id);
        self.pinned = Some(Arc::new(snapshot));
        self
    }

    /// Returns only these columns, in this order.
    pub fn with_projection(mut self, columns: &[&str]) -> Self {
        self.projection = Some(columns.iter().map(|c| c.to_string()).collect());
        self
    }

    /// Returns only rows matching `filter` (pushed to file and row-group statistics).
    pub fn with_filter(mut self, filter: Predicate) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Stops after `n` rows.
    pub fn with_limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Merge-on-read even where deletion vectors allow raw reads (and read level 0 then).
    pub fn merge_on_read(mut self, yes: bool) -> Self {
        self.force_merge = yes;
        self
    }

    /// Rows per batch.
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// Leaves level 0 out of the read in every mode.
    pub(crate) fn skipping_level0(mut self, yes: bool) -> Self {
        self.skip_level0 = yes;
        self
    }

    /// The table read.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The columns returned, when projected.
    pub fn projection(&self) -> Option<&[String]> {
        self.projection.as_deref()
    }

    /// The row filter, if any.
    pub fn filter(&self) -> Option<&Predicate> {
        self.filter.as_ref()
    }

    /// Rows per batch.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    fn layout(&self) -> Result<Arc<KeyValueLayout>> {
        Ok(Arc::new(self.table.layout()?))
    }

    /// Whether this read skips level 0 and reads files without merging (deletion-vector or first-row tables).
    pub(crate) fn raw_mode(&self) -> Result<bool> {
        let o = self.table.schema().core_options();
        let first_row = o.merge_engine()? == MergeEngine::FirstRow;
        Ok((o.deletion_vectors_enabled()? && !o.deletion_vectors_merge_on_read()? || first_row) && !self.force_merge)
    }

    /// The part of the filter that only reads key columns (safe to push below a merge).
    fn key_filter(&self) -> Option<Predicate> {
        let keys: Vec<String> = self.table.schema().primary_keys.clone();
        let conj: Vec<Predicate> = match &self.filter {
            None => return None,
            Some(Predicate::And(ps)) => ps.clone(),
            Some(p) => vec![p.clone()],
        };
        let kept: Vec<Predicate> = conj.into_iter().filter(|p| p.columns().iter().all(|c| keys.contains(c))).collect();
        match kept.len() {
            0 => None,
            1 => kept.into_iter().next(),
            _ => Some(Predicate::And(kept)),
        }
    }

    /// The schema of what [`read`](Self::read) returns.
    pub fn output_schema(&self) -> Result<SchemaRef> {
        let layout = self.layout()?;
        Ok(Arc::new(Schema::new(
            self.projection_indices(&layout)?.iter().map(|&i| layout.value_schema.field(i).clone()).collect::<Vec<_>>(),
        )))
    }

    pub(crate) fn projection_indices(&self, layout: &KeyValueLayout) -> Result<Vec<usize>> {
        match &self.projection {
            None => Ok((0..layout.value_fields.len()).collect()),
            Some(cols) => cols.iter().map(|c| layout.value_position(c)).collect(),
        }
    }

    /// The value columns a read decodes, as positions in `layout`'s value fields: the projection's, then
    /// those the filter needs besides.
    pub(crate) fn read_indices(&self, layout: &KeyValueLayout) -> Result<Vec<usize>> {
        let mut read_idx = self.projection_indices(layout)?;
        if let Some(f) = &self.filter {
            for c in f.columns() {
                let i = layout.value_position(&c)?;
                if !read_idx.contains(&i) {
                    read_idx.push(i);
                }
            }
        }
        Ok(read_idx)
    }

    /// Plans and reads.
    pub fn read(&self) -> Result<ScanResult> {
        let plan = self.plan()?;
        self.read_plan(&plan)
    }

    /// Plans and streams: see [`stream_plan`](Self::stream_plan).
    pub fn stream(&self) -> Result<BatchStream> {
        let plan = self.plan()?;
        self.stream_plan(&plan)
    }

    /// `COUNT(*)`: from row counts minus deletion-vector cardinalities where splits are raw and unfiltered,
    /// reading only what must be merged or filtered.
    pub fn count(&self) -> Result<u64> {
        let plan = self.plan()?;
        let mut total = 0u64;
        let mut to_read = Vec::new();
        for s in plan.splits {
            match (self.filter.is_none(), s.merged_row_count()) {
                (true, Some(n)) => total += n,
                _ => to_read.push(s),
            }
        }
        if !to_read.is_empty() {
            let layout = self.layout()?;
            // One narrow column to count rows by: a key column, or an append table's first column.
            let narrow = layout.key_fields.first().or(layout.value_fields.first());
            let narrow = narrow.ok_or_else(|| Error::invalid("count", "a table without columns"))?.name.clone();
            let rb = ReadBuilder { projection: Some(vec![narrow]), limit: None, ..self.clone() };
            total += rb.read_plan(&Plan { snapshot: plan.snapshot, splits: to_read })?.num_rows() as u64;
        }
        Ok(total)
    }
}

/// Runs `read` over `tasks` on worker threads (one per core, at most one per task), each taking the next task
/// until the tasks run out, one failed, or `stop` says so; the first error, or the non-empty batches in task
/// order.
pub(crate) fn read_in_parallel<T: Sync>(
    tasks: &[T],
    stop: impl Fn() -> bool + Sync,
    read: impl Fn(&T) -> Result<Vec<RecordBatch>> + Sync,
) -> Result<Vec<RecordBatch>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let results: parking_lot::Mutex<Vec<(usize, Vec<RecordBatch>)>> = parking_lot::Mutex::new(Vec::new());
    let first_error: parking_lot::Mutex<Option<strata_spec::Error>> = parking_lot::Mutex::new(None);
    let next = AtomicUsize::new(0);
    let threads = strata_io::cores().min(tasks.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = tasks.get(i) else { break };
                if first_error.lock().is_some() || stop() {
                    break;
                }
                match read(task) {
                    Ok(b) => results.lock().push((i, b)),
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
    Ok(results.into_iter().flat_map(|(_, b)| b).filter(|b| b.num_rows() > 0).collect())
}

/// The (name, type) of the value fields of `layout` at `positions`.
pub(crate) fn value_columns(layout: &KeyValueLayout, positions: &[usize]) -> Vec<(String, strata_spec::DataType)> {
    positions.iter().map(|&i| (layout.value_fields[i].name.clone(), layout.value_fields[i].data_type)).collect()
}
