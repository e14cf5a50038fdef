//! The write operator of `INSERT INTO`, `DELETE FROM` and `UPDATE`: its input's rows go into one `TableWrite`
//! on a blocking thread, and the statement commits once, after the last row, as a one-off batch commit (an
//! APPEND snapshot, then a COMPACT one when the write compacted; an OVERWRITE one for a row-level change of
//! an append table). The operator's one output row is the number of
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
use strata_format::{Predicate, RowKind};
use strata_spec::Error;
use strata_table::{commit_batch, RowUpdate, Table, TableWrite};

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
    /// A primary-key table's rows with new values (every column), written as UPDATE_AFTER rows.
    UpdateKeys,
    /// An append table's rows that the operator's filter matches, given the assigned values (no input rows).
    UpdateRows,
}

/// Writes its input into a Strata table in one commit.
#[derive(Debug)]
pub struct StrataWriteExec {
    table: Table,
    input: Arc<dyn ExecutionPlan>,
    kind: WriteKind,
    /// `DeleteRows`, `UpdateRows`: which rows go or change (`None`: all).
    filter: Option<Arc<dyn PhysicalExpr>>,
    /// `DeleteRows`, `UpdateRows`: a predicate every such row satisfies (files it rules out are not read).
    files: Option<Predicate>,
    /// `UpdateRows`: the changed columns and their new values (over the table's columns).
    assignments: Vec<(String, Arc<dyn PhysicalExpr>)>,
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
        StrataWriteExec {
            table,
            input,
            kind,
            filter: None,
            files: None,
            assignments: Vec::new(),
            properties: Arc::new(properties),
        }
    }

    /// With the filter of a `DeleteRows` or `UpdateRows` operator, and a predicate its rows satisfy.
    pub(crate) fn with_filter(mut self, filter: Option<Arc<dyn PhysicalExpr>>, files: Option<Predicate>) -> Self {
        self.filter = filter;
        self.files = files;
        self
    }

    /// With the assignments of an `UpdateRows` operator.
    pub(crate) fn with_assignments(mut self, assignments: Vec<(String, Arc<dyn PhysicalExpr>)>) -> Self {
        self.assignments = assignments;
        self
    }
}

impl DisplayAs for StrataWriteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let what = match self.kind {
            WriteKind::Insert => "insert",
            WriteKind::DeleteKeys => "delete keys",
            WriteKind::DeleteRows => "delete rows",
            WriteKind::UpdateKeys => "update keys",
            WriteKind::UpdateRows => "update rows",
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
        let exec = StrataWriteExec::new(self.table.clone(), input, self.kind)
            .with_filter(self.filter.clone(), self.files.clone())
            .with_assignments(self.assignments.clone());
        Ok(Arc::new(exec))
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
        let (table, kind) = (self.table.clone(), self.kind);
        let changes = RowChanges {
            filter: self.filter.clone(),
            files: self.files.clone(),
            assignments: self.assignments.clone(),
        };
        let run = async move {
            let (tx, rx) = tokio::sync::mpsc::channel::<Message>(2);
            let writer = tokio::task::spawn_blocking(move || write_all(&table, kind, changes, rx));
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
    changes: RowChanges,
    mut rx: tokio::sync::mpsc::Receiver<Message>,
) -> strata_spec::Result<u64> {
    let mut write = TableWrite::new(table)?;
    if let Some(files) = changes.files.clone() {
        write = write.with_row_filter(files);
    }
    let mut rows = 0u64;
    loop {
        match rx.blocking_recv() {
            Some(Message::Rows(b)) => {
                rows += b.num_rows() as u64;
                match kind {
                    WriteKind::Insert => write.write_batch(&b)?,
                    WriteKind::DeleteKeys => write.delete_keys(&b)?,
                    WriteKind::UpdateKeys => {
                        write.write_with_kinds(&b, &vec![RowKind::UpdateAfter.to_byte(); b.num_rows()])?
                    }
                    WriteKind::DeleteRows | WriteKind::UpdateRows => {}
                }
            }
            Some(Message::Commit) => break,
            None => return Err(Error::invalid("sql", "the statement's input ended before its last row")),
        }
    }
    let filter = changes.filter.as_deref();
    match kind {
        WriteKind::DeleteRows => rows = write.delete_matching(&mut |b| rows_matching(filter, b))?,
        WriteKind::UpdateRows => {
            rows = write.update_matching(RowUpdate {
                matches: &mut |b| rows_matching(filter, b),
                assign: &mut |b| changes.assign(b),
                columns: changes.assignments.iter().map(|(n, _)| n.clone()).collect(),
            })?
        }
        _ => {}
    }
    if rows == 0 {
        return Ok(0);
    }
    // One commit per statement, like a Paimon batch write: compaction finishes inside it.
    let messages = write.prepare_commit_waiting()?;
    commit_batch(SQL_JOB, table, &mut write, messages, None)?;
    Ok(rows)
}

/// What a row-level change of an append table matches and assigns.
struct RowChanges {
    filter: Option<Arc<dyn PhysicalExpr>>,
    files: Option<Predicate>,
    assignments: Vec<(String, Arc<dyn PhysicalExpr>)>,
}

impl RowChanges {
    /// `batch` with the assigned columns' new values.
    fn assign(&self, batch: &RecordBatch) -> strata_spec::Result<RecordBatch> {
        let refused = |e: String| Error::invalid("UPDATE value", e);
        let mut columns = batch.columns().to_vec();
        let schema = batch.schema();
        for (name, value) in &self.assignments {
            let i = schema.index_of(name).map_err(|e| refused(e.to_string()))?;
            let new = value.evaluate(batch).and_then(|v| v.into_array(batch.num_rows()));
            columns[i] = new.map_err(|e| refused(e.to_string()))?;
        }
        // Types as evaluated (the table's, by the planner's casts); the writer checks them exactly.
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .zip(&columns)
            .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| refused(e.to_string()))
    }
}

/// Which rows of `batch` `filter` matches (all without one).
fn rows_matching(filter: Option<&dyn PhysicalExpr>, batch: &RecordBatch) -> strata_spec::Result<BooleanArray> {
    let Some(filter) = filter else { return Ok(BooleanArray::from(vec![true; batch.num_rows()])) };
    let refused = |e: String| Error::invalid("DELETE condition", e);
    let value =
        filter.evaluate(batch).and_then(|v| v.into_array(batch.num_rows())).map_err(|e| refused(e.to_string()))?;
    value.as_boolean_opt().cloned().ok_or_else(|| refused(format!("it is {}, not a boolean", value.data_type())))
}
