//! `StrataTable`: one Strata table as a DataFusion [`TableProvider`].
//!
//! Pushed into the Strata read: the projection, every filter that translates exactly (see `filter`), and the
//! limit. Planning (manifests, deletion-vector index) runs on a blocking thread when DataFusion asks for the
//! scan; the splits become the operator's partitions. `INSERT INTO` writes through a `TableWrite` and commits
//! once per statement; `DELETE FROM` finds the matching keys with an ordinary scan and writes a delete per
//! key in one commit, and `UPDATE` writes the matching rows with their new values (an UPDATE_AFTER row per
//! key, as Paimon's Spark UPDATE). On an append table both change rows by position instead
//! (`TableWrite::delete_matching`, `TableWrite::update_matching`).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::{Column, Constraint, Constraints};
use datafusion::datasource::{provider_as_source, TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::expr_rewriter::unnormalize_col;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlanBuilder, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use strata_format::Predicate;
use strata_spec::{Error, MergeEngine, Snapshot};
use strata_table::{ReadBuilder, Table, TimeTravel};

use crate::error::to_df;
use crate::exec::StrataScanExec;
use crate::filter::to_predicate;
use crate::write::{StrataWriteExec, WriteKind};

/// A Strata table for DataFusion: reads, `INSERT INTO`, `DELETE FROM` and `UPDATE`.
#[derive(Debug, Clone)]
pub struct StrataTable {
    name: String,
    /// The table, with the schema of the snapshot read.
    table: Table,
    /// The snapshot time travel chose; `None` reads the latest snapshot at each scan.
    pinned: Option<Snapshot>,
    /// Time travel came with the table's name: the table is read-only then.
    read_only: bool,
    schema: SchemaRef,
    constraints: Constraints,
}

impl StrataTable {
    /// `table` as a provider named `name` (for plans and messages), reading what the time-travel options
    /// choose: the table's own `scan.*` options overlaid with `travel` (`scan.snapshot-id`, `scan.tag-name`,
    /// `scan.timestamp-millis`, `scan.timestamp`, `scan.version`). A table given `travel` options is
    /// read-only. Blocking: it reads the chosen snapshot and schema.
    pub fn open(name: &str, table: &Table, travel: &BTreeMap<String, String>) -> strata_spec::Result<StrataTable> {
        let mut options = table.options().clone();
        options.extend(travel.iter().map(|(k, v)| (k.clone(), v.clone())));
        let (table, pinned) = match TimeTravel::from_options(table, &options)? {
            None => (table.clone(), None),
            Some(t) => {
                let s = t.resolve(table)?;
                (table.as_of_snapshot(&s)?, Some(s))
            }
        };
        let layout = table.layout()?;
        let schema = layout.value_schema.clone();
        let keys: Vec<usize> =
            table.schema().primary_keys.iter().filter_map(|k| schema.index_of(k).ok()).collect::<Vec<_>>();
        let constraints = if keys.is_empty() {
            Constraints::default()
        } else {
            Constraints::new_unverified(vec![Constraint::PrimaryKey(keys)])
        };
        Ok(StrataTable { name: name.to_string(), table, pinned, read_only: !travel.is_empty(), schema, constraints })
    }

    /// The Strata table (at the schema read).
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The snapshot time travel pinned, if any (`None`: each scan reads the latest).
    pub fn pinned(&self) -> Option<&Snapshot> {
        self.pinned.as_ref()
    }

    fn read_builder(&self) -> ReadBuilder {
        let rb = ReadBuilder::new(&self.table);
        match &self.pinned {
            Some(s) => rb.with_snapshot_value(s.clone()),
            None => rb,
        }
    }

    /// Plans the scan (blocking): the Strata read with the projection, filter and limit, and its splits.
    fn plan_scan(
        &self,
        projection: Option<Vec<usize>>,
        filter: Option<Predicate>,
        limit: Option<usize>,
        target_partitions: usize,
    ) -> strata_spec::Result<StrataScanExec> {
        let out_schema = match &projection {
            None => self.schema.clone(),
            Some(p) => Arc::new(self.schema.project(p).map_err(|e| Error::internal_from("projection", e))?),
        };
        let names: Vec<&str> = out_schema.fields().iter().map(|f| f.name().as_str()).collect();
        // Counting rows reads no column, but a Strata read returns at least one: the first key column.
        let read_names: Vec<&str> = match (names.is_empty(), self.table.schema().primary_keys.first()) {
            (false, _) => names,
            (true, Some(k)) => vec![k.as_str()],
            (true, None) => self.schema.fields().iter().take(1).map(|f| f.name().as_str()).collect(),
        };
        let mut read = self.read_builder().with_projection(&read_names);
        if let Some(f) = filter {
            read = read.with_filter(f);
        }
        let plan = read.plan()?;
        Ok(StrataScanExec::new(self.name.clone(), read, plan, out_schema, limit, target_partitions))
    }

    /// Row-level changes of a primary-key table write rows that replace its keys' rows: only the
    /// deduplicate merge engine keeps the last row of a key as it is (first-row keeps the first,
    /// aggregation folds, partial-update skips NULL values, so a change could be reported and not made).
    fn check_deduplicate(&self, what: &str) -> Result<()> {
        let engine = self.table.schema().core_options().merge_engine().map_err(to_df)?;
        if engine != MergeEngine::Deduplicate {
            return Err(to_df(Error::unsupported(format!(
                "{what} on {}: its merge engine is {engine:?}; only deduplicate tables replace a key's row",
                self.name
            ))));
        }
        Ok(())
    }

    /// The conjuncts of a row-level change's condition that translate into a Strata predicate: every row the
    /// change takes satisfies it, so files it rules out need not be read.
    fn file_filter(&self, filters: &[Expr]) -> Option<Predicate> {
        let mut parts: Vec<Predicate> = filters.iter().filter_map(|f| to_predicate(f, &self.schema)).collect();
        match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Predicate::And(parts)),
        }
    }

    fn check_writable(&self, what: &str) -> Result<()> {
        if self.read_only {
            return Err(to_df(Error::invalid(
                what,
                format!("{} is a time-travel read of a snapshot; write to the table itself", self.name),
            )));
        }
        Ok(())
    }
}

/// Runs blocking Strata work off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> strata_spec::Result<T> + Send + 'static,
) -> Result<T> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(to_df),
        Err(e) => Err(DataFusionError::ExecutionJoin(Box::new(e))),
    }
}

#[async_trait]
impl TableProvider for StrataTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn constraints(&self) -> Option<&Constraints> {
        Some(&self.constraints)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match to_predicate(f, &self.schema) {
                Some(_) => TableProviderFilterPushDown::Exact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Only filters this provider called exact reach here; one that no longer translates is a bug, and
        // dropping it silently would return rows the query excludes.
        let predicates = filters
            .iter()
            .map(|f| {
                to_predicate(f, &self.schema)
                    .ok_or_else(|| DataFusionError::Internal(format!("filter {f} was pushed but does not translate")))
            })
            .collect::<Result<Vec<_>>>()?;
        let filter = match predicates.len() {
            0 => None,
            1 => predicates.into_iter().next(),
            _ => Some(Predicate::And(predicates)),
        };
        let target = state.config().target_partitions();
        let (this, projection) = (self.clone(), projection.cloned());
        let exec = blocking(move || this.plan_scan(projection, filter, limit, target)).await?;
        Ok(Arc::new(exec))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.check_writable("INSERT")?;
        if insert_op != InsertOp::Append {
            return Err(to_df(Error::unsupported(format!(
                "INSERT {insert_op} into a Strata table (only INSERT INTO, which upserts by primary key)"
            ))));
        }
        Ok(Arc::new(StrataWriteExec::new(self.table.clone(), input, WriteKind::Insert)))
    }

    async fn delete_from(&self, state: &dyn Session, filters: Vec<Expr>) -> Result<Arc<dyn ExecutionPlan>> {
        self.check_writable("DELETE")?;
        let schema = self.table.schema();
        if schema.primary_keys.is_empty() {
            // An append table: its rows that match go by position (deletion vectors, or files rewritten).
            let df_schema = datafusion::common::DFSchema::try_from(self.schema.clone())?;
            let files = self.file_filter(&filters);
            let filter = conjunction(filters.into_iter().map(unnormalize_col))
                .map(|p| state.create_physical_expr(p, &df_schema))
                .transpose()?;
            let input = Arc::new(datafusion::physical_plan::empty::EmptyExec::new(self.schema.clone()));
            let exec =
                StrataWriteExec::new(self.table.clone(), input, WriteKind::DeleteRows).with_filter(filter, files);
            return Ok(Arc::new(exec));
        }
        let options = schema.core_options();
        self.check_deduplicate("DELETE")?;
        // Other merge engines do not delete a key on a delete row (first-row and aggregation ignore it,
        // partial-update refuses it by default), so a DELETE would report rows it did not remove.
        if options.ignore_delete().map_err(to_df)? {
            return Err(to_df(Error::unsupported(format!(
                "DELETE on {}: a table with ignore-delete does not remove a key on a delete",
                self.name
            ))));
        }
        // The keys to delete: an ordinary scan of the table (filters pushed as for any query), keys only.
        let source = provider_as_source(Arc::new(self.clone()));
        let mut plan = LogicalPlanBuilder::scan(self.name.as_str(), source, None)?;
        if let Some(p) = conjunction(filters.into_iter().map(unnormalize_col)) {
            plan = plan.filter(p)?;
        }
        let keys: Vec<Expr> = schema.primary_keys.iter().map(|k| Expr::Column(Column::new_unqualified(k))).collect();
        let plan = plan.project(keys)?.build()?;
        let input = state.create_physical_plan(&plan).await?;
        Ok(Arc::new(StrataWriteExec::new(self.table.clone(), input, WriteKind::DeleteKeys)))
    }

    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.check_writable("UPDATE")?;
        let df_schema = datafusion::common::DFSchema::try_from(self.schema.clone())?;
        // Each new value as its column's type (the SQL planner casts most; an exact cast refuses the rest).
        let mut assigned = Vec::with_capacity(assignments.len());
        for (name, value) in assignments {
            let field = self
                .schema
                .field_with_name(&name)
                .map_err(|_| to_df(Error::invalid("UPDATE", format!("'{name}' is not a column of {}", self.name))))?;
            let value = unnormalize_col(value).cast_to(field.data_type(), &df_schema)?;
            assigned.push((name, value));
        }
        let schema = self.table.schema();
        let files = self.file_filter(&filters);
        let filter = conjunction(filters.into_iter().map(unnormalize_col));
        if schema.primary_keys.is_empty() {
            // An append table: the matching rows change by position (see `TableWrite::update_matching`).
            let filter = filter.map(|p| state.create_physical_expr(p, &df_schema)).transpose()?;
            let assigned = assigned
                .into_iter()
                .map(|(name, value)| Ok((name, state.create_physical_expr(value, &df_schema)?)))
                .collect::<Result<Vec<_>>>()?;
            let input = Arc::new(datafusion::physical_plan::empty::EmptyExec::new(self.schema.clone()));
            let exec = StrataWriteExec::new(self.table.clone(), input, WriteKind::UpdateRows)
                .with_filter(filter, files)
                .with_assignments(assigned);
            return Ok(Arc::new(exec));
        }
        self.check_deduplicate("UPDATE")?;
        // A key's new row replaces its old one; a new key (or partition) would add a row and leave the old.
        if let Some((name, _)) =
            assigned.iter().find(|(n, _)| schema.primary_keys.contains(n) || schema.partition_keys.contains(n))
        {
            return Err(to_df(Error::unsupported(format!(
                "UPDATE of {}'s primary-key or partition column '{name}' (delete the row and insert the new one)",
                self.name
            ))));
        }
        // The new rows: an ordinary scan of the matching rows, the assigned columns replaced.
        let source = provider_as_source(Arc::new(self.clone()));
        let mut plan = LogicalPlanBuilder::scan(self.name.as_str(), source, None)?;
        if let Some(p) = filter {
            plan = plan.filter(p)?;
        }
        let columns: Vec<Expr> = self
            .schema
            .fields()
            .iter()
            .map(|f| match assigned.iter().find(|(n, _)| n == f.name()) {
                Some((_, value)) => value.clone().alias(f.name()),
                None => Expr::Column(Column::new_unqualified(f.name())),
            })
            .collect();
        let input = state.create_physical_plan(&plan.project(columns)?.build()?).await?;
        Ok(Arc::new(StrataWriteExec::new(self.table.clone(), input, WriteKind::UpdateKeys)))
    }
}
