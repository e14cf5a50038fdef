//! The scan operator: a planned Strata read whose splits are DataFusion's partitions.
//!
//! Planning happens before the operator exists (the provider plans on a blocking thread), so the operator
//! knows its files: their number is what `EXPLAIN` shows and what [`StrataScanExec::file_count`] returns, and
//! the row count it reports is exact when Strata knows it from metadata (raw deletion-vector splits with
//! recorded cardinalities and no filter), which lets DataFusion answer `COUNT(*)` without reading. Each
//! partition reads its splits on a blocking thread (Strata's I/O and decoding are synchronous) and hands
//! batches to the async stream through a small channel, so no tokio worker waits on storage; dropping the
//! stream stops the reader at its next batch.

use std::fmt;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties, ReplaceChildrenOptions,
    SendableRecordBatchStream, Statistics, StatisticsArgs,
};
use strata_table::{DataSplit, Plan, ReadBuilder};

use crate::error::to_df;

/// Reads a planned Strata scan, one DataFusion partition per group of splits.
#[derive(Debug)]
pub struct StrataScanExec {
    table: String,
    read: ReadBuilder,
    snapshot: Option<i64>,
    partitions: Vec<Vec<DataSplit>>,
    /// The operator's output; no columns at all when DataFusion only counts rows.
    schema: SchemaRef,
    limit: Option<usize>,
    /// The pushed filter, for display.
    filter: Option<String>,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
}

impl StrataScanExec {
    /// An operator reading `plan` with `read` (projection and filter already set), its splits spread over at
    /// most `target_partitions` partitions. When `schema` has no columns, `read` reads one column and the
    /// operator hands out its row counts only.
    pub(crate) fn new(
        table: String,
        read: ReadBuilder,
        plan: Plan,
        schema: SchemaRef,
        limit: Option<usize>,
        target_partitions: usize,
    ) -> Self {
        let partitions = spread(plan.splits, target_partitions.max(1));
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        let filter = read.filter().map(|f| format!("{f:?}"));
        StrataScanExec {
            table,
            read,
            snapshot: plan.snapshot,
            partitions,
            schema,
            limit,
            filter,
            metrics: ExecutionPlanMetricsSet::new(),
            properties: Arc::new(properties),
        }
    }

    /// The snapshot read (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<i64> {
        self.snapshot
    }

    /// Data files the scan reads: those of the planned splits, after pruning by partition, key range and
    /// value statistics.
    pub fn file_count(&self) -> usize {
        self.partitions.iter().flatten().map(|s| s.files.len()).sum()
    }

    /// Splits read, and how many of them are raw (deletion vectors applied, no merge).
    pub fn split_counts(&self) -> (usize, usize) {
        let splits = self.partitions.iter().flatten();
        let (all, raw) = splits.fold((0, 0), |(a, r), s| (a + 1, r + usize::from(s.raw)));
        (all, raw)
    }

    /// The rows the splits of `partition` (all when `None`) hold, and whether that is exact.
    fn rows(&self, partition: Option<usize>) -> Precision<usize> {
        let splits: Vec<&DataSplit> = match partition {
            None => self.partitions.iter().flatten().collect(),
            Some(p) => self.partitions.get(p).map(|s| s.iter().collect()).unwrap_or_default(),
        };
        let upper: usize = splits.iter().flat_map(|s| &s.files).map(|(_, f)| f.row_count.max(0) as usize).sum();
        let exact: Option<u64> = splits.iter().map(|s| s.merged_row_count()).sum();
        let rows = match (self.read.filter(), exact) {
            (None, Some(n)) => Precision::Exact(usize::try_from(n).unwrap_or(usize::MAX)),
            // Merge splits hold at most their files' rows; a filter keeps at most what was planned.
            _ => Precision::Inexact(upper),
        };
        match self.limit {
            Some(l) => rows.min(&Precision::Exact(l)),
            None => rows,
        }
    }
}

/// Splits spread over at most `n` groups, largest first onto the lightest group, so partitions are even.
fn spread(mut splits: Vec<DataSplit>, n: usize) -> Vec<Vec<DataSplit>> {
    let weight = |s: &DataSplit| s.weight();
    splits.sort_by_key(|s| std::cmp::Reverse(weight(s)));
    let groups = n.min(splits.len()).max(1);
    let mut out: Vec<(i64, Vec<DataSplit>)> = (0..groups).map(|_| (0, Vec::new())).collect();
    for s in splits {
        let w = weight(&s);
        if let Some(lightest) = out.iter_mut().min_by_key(|(load, _)| *load) {
            lightest.0 += w;
            lightest.1.push(s);
        }
    }
    out.into_iter().map(|(_, s)| s).collect()
}

impl DisplayAs for StrataScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let (splits, raw) = self.split_counts();
        let columns: Vec<&str> = self.schema.fields().iter().map(|f| f.name().as_str()).collect();
        write!(
            f,
            "StrataScanExec: table={}, snapshot={}, partitions={}, splits={splits} (raw {raw}), files={}, \
             projection=[{}]",
            self.table,
            self.snapshot.map_or_else(|| "none".to_string(), |s| s.to_string()),
            self.partitions.len(),
            self.file_count(),
            columns.join(", ")
        )?;
        if let Some(filter) = &self.filter {
            write!(f, ", filter={filter}")?;
        }
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for StrataScanExec {
    fn name(&self) -> &str {
        "StrataScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(self: Arc<Self>, _children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let splits = self.partitions.get(partition).cloned().ok_or_else(|| {
            DataFusionError::Internal(format!("partition {partition} of {} asked for", self.partitions.len()))
        })?;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| DataFusionError::Execution(format!("Strata scans run inside a tokio runtime: {e}")))?;
        let plan = Plan { snapshot: self.snapshot, splits };
        let read = self.read.clone();
        let (schema, limit) = (self.schema.clone(), self.limit);
        let rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        MetricBuilder::new(&self.metrics)
            .global_counter("files_read")
            .add(plan.splits.iter().map(|s| s.files.len()).sum());
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<RecordBatch>>(2);
        let out_schema = schema.clone();
        runtime.spawn_blocking(move || {
            let mut left = limit;
            let mut emit = |b: RecordBatch| -> bool {
                if b.num_rows() == 0 {
                    return true;
                }
                let b = match &mut left {
                    None => b,
                    Some(l) => {
                        let n = b.num_rows().min(*l);
                        *l -= n;
                        b.slice(0, n)
                    }
                };
                rows.add(b.num_rows());
                let sent = tx.blocking_send(shape(b, &out_schema));
                sent.is_ok() && left != Some(0)
            };
            // A panic in a decoder must end the stream with an error, never as if the partition were done.
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read.read_plan_with(&plan, &mut emit)));
            let failure = match read {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(to_df(e)),
                Err(p) => Some(DataFusionError::Execution(format!(
                    "a Strata read thread panicked: {}",
                    strata_spec::panic_message(p.as_ref())
                ))),
            };
            if let Some(e) = failure {
                let _ = tx.blocking_send(Err(e));
            }
        });
        let stream = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn statistics_from_inputs(&self, _input: &[Arc<Statistics>], args: &StatisticsArgs) -> Result<Arc<Statistics>> {
        Ok(Arc::new(Statistics::new_unknown(&self.schema).with_num_rows(self.rows(args.partition()))))
    }

    fn supports_limit_pushdown(&self) -> bool {
        false
    }
}

/// `b` in the operator's schema: as read, or only its row count when the operator has no columns.
fn shape(b: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    if !schema.fields().is_empty() {
        return Ok(b);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
    RecordBatch::try_new_with_options(schema.clone(), Vec::new(), &options).map_err(DataFusionError::from)
}
