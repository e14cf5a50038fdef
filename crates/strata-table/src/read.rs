//! Reading a table: plan a snapshot into splits, read splits in parallel, count, and look keys up.
//!
//! Planning follows Paimon: in deletion-vector mode (and for first-row tables) batch reads skip level 0 unless
//! `deletion-vectors.merge-on-read`; files at levels >= 1 without retract rows are *raw* and are bin-packed
//! by size into splits across buckets, each file carrying its `DeletionFile`; everything else is read per
//! bucket with merge-on-read. Filters prune files by manifest statistics and parquet row groups by their
//! statistics, then filter rows exactly; in merge-on-read only key filters are pushed below the merge.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use parking_lot::Mutex;
use strata_format::bucket_read::{merge_read, open_data_file_pruned, DataFileRef};
use strata_format::merge_function::MergeConfig;
use strata_format::predicate::{ColumnRange, Predicate, TypedPredicate};
use strata_format::reader::DEFAULT_BATCH_SIZE;
use strata_format::KeyValueLayout;
use strata_spec::options::MergeEngine;
use strata_spec::{BinaryRow, DataFileMeta, DataType, Error, ManifestEntry, Result, SimpleStats, Snapshot};

use crate::scan::{data_file_path, ScanResult};
use crate::table::{DeletionFile, Table};

/// A unit of parallel reading.
#[derive(Debug, Clone)]
pub struct DataSplit {
    /// Partition of the files.
    pub partition: BinaryRow,
    /// Bucket of the files (raw splits may mix buckets; this is the first file's).
    pub bucket: i32,
    /// The files, with their paths.
    pub files: Vec<(String, DataFileMeta)>,
    /// Each file's deletion vector, if any (parallel to `files`).
    pub deletion_files: Vec<Option<DeletionFile>>,
    /// Read file by file without merging (deletion vectors applied), or merged.
    pub raw: bool,
}

impl DataSplit {
    /// Rows after deletion vectors, when known without reading (raw splits with recorded cardinalities).
    pub fn merged_row_count(&self) -> Option<u64> {
        if !self.raw {
            return None;
        }
        let mut n = 0u64;
        for ((_, f), df) in self.files.iter().zip(&self.deletion_files) {
            let deleted = match df {
                None => 0,
                Some(d) => u64::try_from(d.meta.cardinality?).ok()?,
            };
            n += (f.row_count.max(0) as u64).saturating_sub(deleted);
        }
        Some(n)
    }
}

/// A planned read of one snapshot.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The snapshot.
    pub snapshot: Option<i64>,
    /// The splits.
    pub splits: Vec<DataSplit>,
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

fn stats_range(stats: &SimpleStats, types: &[DataType], i: usize, rows: i64) -> Option<ColumnRange> {
    let t = types.get(i)?.with_nullable(true);
    let nullable: Vec<DataType> = types.iter().map(|t| t.with_nullable(true)).collect();
    if stats.min_values.arity() != types.len() || stats.max_values.arity() != types.len() {
        return None;
    }
    let _ = t;
    Some(ColumnRange {
        min: stats.min_values.get(i, &nullable[i]).ok().flatten(),
        max: stats.max_values.get(i, &nullable[i]).ok().flatten(),
        null_count: stats.null_counts.as_ref().and_then(|n| n.get(i).copied().flatten()),
        row_count: rows,
    })
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

    /// Whether a file's manifest statistics allow a match of `pred`.
    pub(crate) fn file_may_match(&self, pred: &Predicate, e: &ManifestEntry, layout: &KeyValueLayout) -> bool {
        let f = &e.file;
        // Value statistics are the columns of the schema the file was written with: a column is found there
        // by field id, and only compared when stored as the type read (a widened column's old statistics
        // are of another type). Without that schema, nothing is pruned.
        let Ok(data) = layout.data_schema(f.schema_id) else { return true };
        let key_types: Vec<DataType> = layout.key_fields.iter().map(|k| k.data_type).collect();
        let value_cols: Vec<String> = match &f.value_stats_cols {
            None => data.fields.iter().map(|v| v.name.clone()).collect(),
            Some(c) => c.clone(),
        };
        let value_types: Vec<DataType> = value_cols
            .iter()
            .map(|c| data.fields.iter().find(|v| &v.name == c).map_or(DataType::bigint(), |v| v.data_type))
            .collect();
        let partition_fields = self.table.schema().partition_fields().unwrap_or_default();
        let partition_types: Vec<DataType> = partition_fields.iter().map(|p| p.data_type).collect();
        let partition_values = e.partition.to_datums(&partition_types).ok();
        pred.may_match(&|name: &str| {
            if let Some(i) = partition_fields.iter().position(|p| p.name == name) {
                let v = partition_values.as_ref()?.get(i)?.clone();
                return Some(ColumnRange {
                    min: v.clone(),
                    max: v.clone(),
                    null_count: Some(if v.is_none() { f.row_count } else { 0 }),
                    row_count: f.row_count,
                });
            }
            if let Some(i) = layout.key_fields.iter().position(|k| k.name == name) {
                return stats_range(&f.key_stats, &key_types, i, f.row_count);
            }
            let read = layout.value_fields.iter().find(|v| v.name == name)?;
            let stored = data.fields.iter().find(|d| d.id == read.id)?;
            if stored.data_type.root != read.data_type.root {
                return None;
            }
            let i = value_cols.iter().position(|c| *c == stored.name)?;
            stats_range(&f.value_stats, &value_types, i, f.row_count)
        })
    }

    /// Plans the read: which files, grouped how, with which deletion vectors.
    pub fn plan(&self) -> Result<Plan> {
        if let Some(s) = &self.pinned {
            return self.plan_snapshot(s);
        }
        let Some(snapshot) = self.table.snapshot(self.snapshot)? else {
            return Ok(Plan { snapshot: None, splits: Vec::new() });
        };
        self.plan_snapshot(&snapshot)
    }

    fn plan_snapshot(&self, snapshot: &Snapshot) -> Result<Plan> {
        let _span = tracing::info_span!("plan", snapshot = snapshot.id).entered();
        let layout = self.layout()?;
        let raw_mode = self.raw_mode()?;
        let options = self.table.schema().core_options();
        let deletion_files: HashMap<(BinaryRow, i32, String), DeletionFile> = self.table.deletion_files(snapshot)?;
        let mut buckets: BTreeMap<(Vec<u8>, i32), Vec<ManifestEntry>> = BTreeMap::new();
        // Postponed files (bucket -2) stay unread until a compaction moves them into real buckets (Paimon's
        // batch scans of postpone-bucket tables read only real buckets).
        let postpone = options.bucket()? == -2;
        for e in self.table.live_files(snapshot)? {
            if (raw_mode || self.skip_level0) && e.file.level == 0 || postpone && e.bucket < 0 {
                continue;
            }
            buckets.entry((e.partition.serialize(), e.bucket)).or_default().push(e);
        }
        let key_filter = self.key_filter();
        let mut raw_files: Vec<(ManifestEntry, Option<DeletionFile>)> = Vec::new();
        let mut splits = Vec::new();
        for (_, entries) in buckets {
            let raw_bucket = raw_mode && entries.iter().all(|e| e.file.level > 0 && e.file.delete_row_count == Some(0));
            if raw_bucket {
                for e in entries {
                    if let Some(p) = &self.filter {
                        if !self.file_may_match(p, &e, &layout) {
                            continue;
                        }
                    }
                    let df = deletion_files.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone())).cloned();
                    raw_files.push((e, df));
                }
            } else {
                let kept: Vec<ManifestEntry> = match &key_filter {
                    None => entries,
                    Some(p) => entries.into_iter().filter(|e| self.file_may_match(p, e, &layout)).collect(),
                };
                if kept.is_empty() {
                    continue;
                }
                let mut files = Vec::new();
                let mut dfs = Vec::new();
                for e in &kept {
                    files.push((data_file_path(&self.table, e)?, e.file.clone()));
                    dfs.push(deletion_files.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone())).cloned());
                }
                splits.push(DataSplit {
                    partition: kept[0].partition.clone(),
                    bucket: kept[0].bucket,
                    files,
                    deletion_files: dfs,
                    raw: false,
                });
            }
        }
        // Raw files: bin-packed by size across buckets (`source.split.target-size`, `open-file-cost`), with
        // splits no larger than an even share per core so that small tables still read in parallel.
        let open_cost = options.split_open_file_cost()? as i64;
        let total: i64 = raw_files.iter().map(|(e, _)| e.file.file_size.max(open_cost)).sum();
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as i64;
        // When everything would fit one split, cut four per core instead, so small tables still read in
        // parallel and the work queue balances files of very different sizes.
        let configured = options.split_target_size()? as i64;
        let target = if configured >= total { ((total + 4 * cores - 1) / (4 * cores)).max(1) } else { configured };
        let mut current: Option<DataSplit> = None;
        let mut weight = 0i64;
        for (e, df) in raw_files {
            let w = e.file.file_size.max(open_cost);
            if current.as_ref().is_some_and(|_| weight + w > target) {
                splits.extend(current.take());
                weight = 0;
            }
            let path = data_file_path(&self.table, &e)?;
            let split = current.get_or_insert_with(|| DataSplit {
                partition: e.partition.clone(),
                bucket: e.bucket,
                files: Vec::new(),
                deletion_files: Vec::new(),
                raw: true,
            });
            split.files.push((path, e.file));
            split.deletion_files.push(df);
            weight += w;
        }
        splits.extend(current);
        Ok(Plan { snapshot: Some(snapshot.id), splits })
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

    /// Plans and reads.
    pub fn read(&self) -> Result<ScanResult> {
        let plan = self.plan()?;
        self.read_plan(&plan)
    }

    /// Reads a plan made earlier (it reads the planned snapshot even if commits landed since). Every batch is
    /// held in memory; [`stream_plan`](Self::stream_plan) hands them out as they are decoded instead.
    pub fn read_plan(&self, plan: &Plan) -> Result<ScanResult> {
        let reader = self.split_reader()?;
        let produced = AtomicUsize::new(0);
        let results: Mutex<Vec<(usize, Vec<RecordBatch>)>> = Mutex::new(Vec::new());
        let first_error: Mutex<Option<Error>> = Mutex::new(None);
        let next = AtomicUsize::new(0);
        let splits = &plan.splits;
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(splits.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(split) = splits.get(i) else { break };
                    if first_error.lock().is_some() || self.limit.is_some_and(|l| produced.load(Ordering::Relaxed) >= l)
                    {
                        break;
                    }
                    let mut out = Vec::new();
                    let r = reader.read_split(split, &mut |b| {
                        produced.fetch_add(b.num_rows(), Ordering::Relaxed);
                        out.push(b);
                        true
                    });
                    match r {
                        Ok(()) => results.lock().push((i, out)),
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
        let mut batches: Vec<RecordBatch> =
            results.into_iter().flat_map(|(_, b)| b).filter(|b| b.num_rows() > 0).collect();
        if let Some(limit) = self.limit {
            let mut left = limit;
            batches = batches
                .into_iter()
                .filter_map(|b| {
                    if left == 0 {
                        return None;
                    }
                    let n = b.num_rows().min(left);
                    left -= n;
                    Some(b.slice(0, n))
                })
                .collect();
        }
        Ok(ScanResult { snapshot: plan.snapshot, schema: reader.out_schema.clone(), batches })
    }

    /// Plans and streams: see [`stream_plan`](Self::stream_plan).
    pub fn stream(&self) -> Result<BatchStream> {
        let plan = self.plan()?;
        self.stream_plan(&plan)
    }

    /// Reads a plan on background threads (one per core), handing batches out as they are decoded, so memory
    /// stays bounded by a few batches per thread whatever the table's size. Batches of different splits
    /// interleave in completion order (within a split they keep file order). The first error ends the stream;
    /// dropping the stream stops the threads.
    pub fn stream_plan(&self, plan: &Plan) -> Result<BatchStream> {
        let reader = Arc::new(self.split_reader()?);
        let splits: Arc<Vec<DataSplit>> = Arc::new(plan.splits.clone());
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(splits.len().max(1));
        let (tx, rx) = crossbeam::channel::bounded::<Result<RecordBatch>>(2 * threads);
        let stop = Arc::new(AtomicBool::new(false));
        let next = Arc::new(AtomicUsize::new(0));
        let mut workers = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (reader, splits, tx, stop, next) =
                (reader.clone(), splits.clone(), tx.clone(), stop.clone(), next.clone());
            workers.push(std::thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(split) = splits.get(i) else { break };
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // A send fails only when the stream was dropped: stop reading then. A panic in a decoder is
                // an error of the stream, never a silent end of it.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    reader.read_split(split, &mut |b| {
                        !stop.load(Ordering::Relaxed) && (b.num_rows() == 0 || tx.send(Ok(b)).is_ok())
                    })
                }))
                .unwrap_or_else(|p| {
                    let msg = strata_format::reader::panic_message(p.as_ref());
                    Err(Error::invalid("read", format!("a read thread panicked: {msg}")))
                });
                if let Err(e) = r {
                    stop.store(true, Ordering::Relaxed);
                    let _ = tx.send(Err(e));
                    break;
                }
            }));
        }
        Ok(BatchStream {
            schema: reader.out_schema.clone(),
            snapshot: plan.snapshot,
            rx: Some(rx),
            stop,
            workers,
            left: self.limit,
            done: false,
        })
    }

    /// What every split read of this builder shares: the columns read, the filter, the output schema.
    fn split_reader(&self) -> Result<SplitReader> {
        let layout = self.layout()?;
        let projection = self.projection_indices(&layout)?;
        let out_schema = self.output_schema()?;
        let schema = self.table.schema();
        // Columns read: the projection plus whatever the filter needs.
        let mut read_idx = projection.clone();
        if let Some(f) = &self.filter {
            for c in f.columns() {
                let i = layout.value_position(&c)?;
                if !read_idx.contains(&i) {
                    read_idx.push(i);
                }
            }
        }
        let read_cols: Vec<(String, DataType)> =
            read_idx.iter().map(|&i| (layout.value_fields[i].name.clone(), layout.value_fields[i].data_type)).collect();
        let prune: Option<TypedPredicate> = self.filter.as_ref().map(|p| {
            Arc::new((p.clone(), schema.fields.iter().map(|f| (f.name.clone(), f.data_type)).collect::<Vec<_>>()))
        });
        Ok(SplitReader {
            merged_cols: read_idx.iter().map(|&i| layout.value_index(i)).collect(),
            out_positions: (0..projection.len()).collect(),
            merge_cfg: MergeConfig::from_schema(schema)?,
            column_types: schema.fields.iter().map(|f| (f.name.clone(), f.data_type)).collect(),
            io: self.table.io().clone(),
            filter: self.filter.clone(),
            batch_size: self.batch_size,
            layout,
            read_cols,
            out_schema,
            prune,
        })
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
            let key = layout.key_fields[0].name.clone();
            let rb = ReadBuilder { projection: Some(vec![key]), limit: None, ..self.clone() };
            total += rb.read_plan(&Plan { snapshot: plan.snapshot, splits: to_read })?.num_rows() as u64;
        }
        Ok(total)
    }
}

/// Everything one read shares across its splits.
struct SplitReader {
    layout: Arc<KeyValueLayout>,
    /// Value columns read from raw files: the projection, then the filter's extra columns.
    read_cols: Vec<(String, DataType)>,
    /// The same columns' positions in a merged key-value batch.
    merged_cols: Vec<usize>,
    /// Positions (in `read_cols`) of the projected columns.
    out_positions: Vec<usize>,
    out_schema: SchemaRef,
    prune: Option<TypedPredicate>,
    filter: Option<Predicate>,
    column_types: Vec<(String, DataType)>,
    merge_cfg: MergeConfig,
    io: Arc<dyn strata_io::FileIO>,
    batch_size: usize,
}

impl SplitReader {
    /// Filters exactly and projects to the output schema.
    fn finish(&self, b: RecordBatch) -> Result<RecordBatch> {
        let types_of = |name: &str| self.column_types.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        let b = match &self.filter {
            Some(f) => f.filter(&b, &types_of)?,
            None => b,
        };
        let b = b.project(&self.out_positions).map_err(|e| Error::invalid("read", e.to_string()))?;
        RecordBatch::try_new(self.out_schema.clone(), b.columns().to_vec())
            .map_err(|e| Error::invalid("read", e.to_string()))
    }

    /// Reads one split, handing each batch to `emit` until it returns false.
    fn read_split(&self, split: &DataSplit, emit: &mut dyn FnMut(RecordBatch) -> bool) -> Result<()> {
        let _span = tracing::debug_span!("read_split", files = split.files.len(), raw = split.raw).entered();
        let refs: Vec<DataFileRef> = split
            .files
            .iter()
            .zip(&split.deletion_files)
            .map(|((path, meta), df)| {
                let dv = match df {
                    Some(d) => Some(Arc::from(d.read(self.io.as_ref())?)),
                    None => None,
                };
                self.layout.file_ref(path.clone(), meta.clone(), dv)
            })
            .collect::<Result<_>>()?;
        if split.raw {
            // A raw read takes every row as live, which is right only if the file holds no retraction: the
            // planner trusted the manifest's delete count for that, a statistic other writers get wrong
            // (pypaimon 2.1.0 records 0), so the file's own `_VALUE_KIND` is read along and checked.
            let mut cols = self.read_cols.clone();
            cols.push((strata_format::kv::VALUE_KIND.to_string(), DataType::not_null(strata_spec::TypeRoot::TinyInt)));
            let values: Vec<usize> = (0..self.read_cols.len()).collect();
            for f in &refs {
                let batches = open_data_file_pruned(
                    self.io.as_ref(),
                    f,
                    cols.clone(),
                    false,
                    self.batch_size,
                    self.prune.clone(),
                )?;
                for b in batches {
                    let b = b?;
                    strata_format::verify::reject_retractions(&b, values.len(), &f.path, &f.meta)?;
                    let b = b.project(&values).map_err(|e| Error::invalid("read", e.to_string()))?;
                    if !emit(self.finish(b)?) {
                        return Ok(());
                    }
                }
            }
        } else {
            let merged =
                merge_read(self.io.clone(), self.layout.clone(), refs, self.merge_cfg.clone(), true, self.batch_size)?;
            for b in merged {
                let b = b?.project(&self.merged_cols).map_err(|e| Error::invalid("read", e.to_string()))?;
                if !emit(self.finish(b)?) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// Batches of a read as they are decoded (see [`ReadBuilder::stream_plan`]).
pub struct BatchStream {
    schema: SchemaRef,
    snapshot: Option<i64>,
    rx: Option<crossbeam::channel::Receiver<Result<RecordBatch>>>,
    stop: Arc<AtomicBool>,
    workers: Vec<std::thread::JoinHandle<()>>,
    left: Option<usize>,
    done: bool,
}

impl std::fmt::Debug for BatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStream").field("snapshot", &self.snapshot).field("done", &self.done).finish()
    }
}

impl BatchStream {
    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The snapshot read (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<i64> {
        self.snapshot
    }

    fn shut_down(&mut self) {
        self.done = true;
        self.stop.store(true, Ordering::Relaxed);
        // Dropping the receiver fails every pending send, so the workers leave their loops.
        self.rx = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Iterator for BatchStream {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.left == Some(0) {
            self.shut_down();
            return None;
        }
        let received = self.rx.as_ref().and_then(|rx| rx.recv().ok());
        match received {
            None => {
                self.shut_down();
                None
            }
            Some(Err(e)) => {
                self.shut_down();
                Some(Err(e))
            }
            Some(Ok(b)) => {
                let b = match &mut self.left {
                    None => b,
                    Some(left) => {
                        let n = b.num_rows().min(*left);
                        *left -= n;
                        b.slice(0, n)
                    }
                };
                Some(Ok(b))
            }
        }
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        self.shut_down();
    }
}

pub use crate::point_read::get;
pub(crate) use crate::point_read::{in_bucket, merge_copies, route_key, RoutedKey};
