//! The write operator of `INSERT INTO` and `DELETE FROM`: its input's rows go into one `TableWrite` on a
//! blocking thread, and the statement commits once, after the last row, as a one-off batch commit (an APPEND
//! snapshot, then a COMPACT one when the write compacted). The operator's one output row is the number of
//! rows written (DataFusion's `count`).
//!
//! Nothing is committed unless the input ended normally: an input error, a cancelled query or a refused
//! row drops the `TableWrite`, which removes the files it had flushed, so the table stays as it was. A
//! commit that conflicts with a concurrent writer is an error of kind conflict (nothing committed); the
//! statement can be run again.

use std::fmt;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt64Array};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    execute_stream, ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions, SendableRecordBatchStream,
};
use futures::StreamExt;
use strata_spec::Error;
use strata_table::{commit_batch, Table, TableWrite};

use crate::error::to_df;

/// The commit-user prefix of SQL statements' commits.
const SQL_JOB: &str = "strata-sql";

/// What the input rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// Rows to upsert (every column of the table; row kinds from `rowkind.field` where the table sets one).
    Insert,
    /// Primary keys (in key order) to delete.
    DeleteKeys,
    /// An append table's rows that the operator's filter matches, deleted (no input rows).
    DeleteRows,
}

/// Writes its input into a Strata table in one commit.
#[derive(Debug)]
pub struct StrataWriteExec {
    table: Table,
    input: Arc<dyn ExecutionPlan>,
    kind: WriteKind,
    /// `DeleteRows`: which rows go (`None`: all).
    filter: Option<Arc<dyn PhysicalExpr>>,
    properties: Arc<PlanProperties>,
}

fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("count", ArrowType::UInt64, false)]))
}

impl StrataWriteExec {
    pub(crate) fn new(table: Table, input: Arc<dyn ExecutionPlan>, kind: WriteKind) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        StrataWriteExec { table, input, kind, filter: None, properties: Arc::new(properties) }
    }

    /// With the filter of a `DeleteRows` operator.
    pub(crate) fn with_filter(mut self, filter: Option<Arc<dyn PhysicalExpr>>) -> Self {
        self.filter = filter;
        self
    }
}

impl DisplayAs for StrataWriteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let what = match self.kind {
            WriteKind::Insert => "insert",
            WriteKind::DeleteKeys => "delete keys",
            WriteKind::DeleteRows => "delete rows",
        };
        write!(f, "StrataWriteExec: {what} into {}", self.table.path())
    }
}

/// What the input task hands the writer thread.
enum Message {
    Rows(RecordBatch),
    /// The input ended normally: commit.
    Commit,
}

impl ExecutionPlan for StrataWriteExec {
    fn name(&self) -> &str {
        "StrataWriteExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [input]: [Arc<dyn ExecutionPlan>; 1] =
            children.try_into().map_err(|_| DataFusionError::Internal("StrataWriteExec has one input".to_string()))?;
        Ok(Arc::new(StrataWriteExec::new(self.table.clone(), input, self.kind).with_filter(self.filter.clone())))
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(children, ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!("StrataWriteExec has one partition, not {partition}")));
        }
        // Every input partition, merged into one stream.
        let mut input = execute_stream(self.input.clone(), context)?;
        let (table, kind, filter) = (self.table.clone(), self.kind, self.filter.clone());
        let run = async move {
            let (tx, rx) = tokio::sync::mpsc::channel::<Message>(2);
            let writer = tokio::task::spawn_blocking(move || write_all(&table, kind, filter, rx));
            let mut failed = None;
            while let Some(b) = input.next().await {
                match b {
                    Ok(b) => {
                        // The writer stopped (it failed): its error is the statement's.
                        if tx.send(Message::Rows(b)).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if failed.is_none() {
                let _ = tx.send(Message::Commit).await;
            }
            drop(tx);
            let written = writer.await.map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)))?;
            if let Some(e) = failed {
                return Err(e);
            }
            let rows = written.map_err(to_df)?;
            let column: ArrayRef = Arc::new(UInt64Array::from(vec![rows]));
            Ok(RecordBatch::try_new(count_schema(), vec![column])?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(count_schema(), futures::stream::once(run))))
    }
}

/// The writer thread: every batch into one `TableWrite`, then one commit when told to; the rows written.
/// Returning early (an error, or the channel closing without `Commit`) drops the write, which removes the
/// files it flushed.
fn write_all(
    table: &Table,
    kind: WriteKind,
    filter: Option<Arc<dyn PhysicalExpr>>,
    mut rx: tokio::sync::mpsc::Receiver<Message>,
) -> strata_spec::Result<u64> {
    let mut write = TableWrite::new(table)?;
    let mut rows = 0u64;
    loop {
        match rx.blocking_recv() {
            Some(Message::Rows(b)) => {
                rows += b.num_rows() as u64;
                match kind {
                    WriteKind::Insert => write.write_batch(&b)?,
                    WriteKind::DeleteKeys => write.delete_keys(&b)?,
                    WriteKind::DeleteRows => {}
                }
            }
            Some(Message::Commit) => break,
            None => return Err(Error::invalid("sql", "the statement's input ended before its last row")),
        }
    }
    if kind == WriteKind::DeleteRows {
        rows = write.delete_matching(&mut |b| rows_matching(filter.as_deref(), b))?;
    }
    if rows == 0 {
        return Ok(0);
    }
    // One commit per statement, like a Paimon batch write: compaction finishes inside it.
    let messages = write.prepare_commit_waiting()?;
    commit_batch(SQL_JOB, table, &mut write, messages, None)?;
    Ok(rows)
}

/// Which rows of `batch` `filter` matches (all without one).
fn rows_matching(filter: Option<&dyn PhysicalExpr>, batch: &RecordBatch) -> strata_spec::Result<BooleanArray> {
    let Some(filter) = filter else { return Ok(BooleanArray::from(vec![true; batch.num_rows()])) };
    let refused = |e: String| Error::invalid("DELETE condition", e);
    let value =
        filter.evaluate(batch).and_then(|v| v.into_array(batch.num_rows())).map_err(|e| refused(e.to_string()))?;
    value.as_boolean_opt().cloned().ok_or_else(|| refused(format!("it is {}, not a boolean", value.data_type())))
}
