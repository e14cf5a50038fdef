//! `StrataSession`: a DataFusion session whose default catalog is a Strata warehouse.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::dataframe::DataFrame;
use datafusion::execution::context::{SessionConfig, SessionContext};
use datafusion::physical_plan::{visit_execution_plan, ExecutionPlan, ExecutionPlanVisitor};
use datafusion::sql::parser::Statement;
use strata_io::FileIO;
use strata_spec::{Error, Result};
use strata_table::FileSystemCatalog;

use crate::catalog::StrataCatalog;
use crate::error::to_strata;
use crate::exec::StrataScanExec;

/// The name of the warehouse's catalog in a [`StrataSession`] (`SELECT * FROM strata.db.t`); it is the
/// default catalog, so `db.t` names the same table.
pub const CATALOG: &str = "strata";

/// The database unqualified table names are looked up in (Paimon's default database).
pub const DEFAULT_DATABASE: &str = "default";

/// SQL over the tables of a warehouse: `SELECT ... FROM db.t`, joins across tables, `INSERT INTO`,
/// `DELETE FROM`, system tables (`db."t$snapshots"`) and time travel (`FOR SYSTEM_TIME AS OF`,
/// `VERSION AS OF`, `db."t$snapshot=3"`).
#[derive(Clone)]
pub struct StrataSession {
    ctx: SessionContext,
}

impl std::fmt::Debug for StrataSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrataSession").field("session_id", &self.ctx.session_id()).finish()
    }
}

impl StrataSession {
    /// A session over the warehouse at `warehouse` on `io`, with DataFusion's default configuration (one
    /// partition per core) and the information schema (`SHOW TABLES`).
    pub fn new(io: Arc<dyn FileIO>, warehouse: &str) -> Self {
        let config = SessionConfig::new()
            .with_default_catalog_and_schema(CATALOG, DEFAULT_DATABASE)
            .with_create_default_catalog_and_schema(false)
            .with_information_schema(true);
        Self::with_config(io, warehouse, config)
    }

    /// [`new`](Self::new) with a DataFusion configuration of the caller's (its default catalog and schema
    /// are the caller's to choose too).
    pub fn with_config(io: Arc<dyn FileIO>, warehouse: &str, config: SessionConfig) -> Self {
        let ctx = SessionContext::new_with_config(config);
        ctx.register_catalog(CATALOG, Arc::new(StrataCatalog::new(FileSystemCatalog::new(io, warehouse))));
        StrataSession { ctx }
    }

    /// A session over the warehouse at a location: a local directory or a store URI
    /// (`s3://bucket/warehouse`), with store options by Paimon's names (`s3.endpoint`, ...).
    pub fn open(warehouse: &str, store_options: &BTreeMap<String, String>) -> Result<Self> {
        let location = strata_store::open_location(warehouse, store_options)?;
        Ok(Self::new(location.io, &location.path))
    }

    /// The DataFusion context, to register more tables or functions, or to run DataFusion's own API.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// The statements of `sql`, with time-travel clauses (`FOR SYSTEM_TIME AS OF`, `TIMESTAMP AS OF`,
    /// `VERSION AS OF`) rewritten into table-name suffixes.
    pub fn parse(&self, sql: &str) -> Result<Vec<Statement>> {
        crate::sql::parse(sql)
    }

    /// Plans one statement; DDL and DML run here, queries when the frame is collected.
    pub async fn plan(&self, statement: Statement) -> Result<DataFrame> {
        let plan = self.ctx.state().statement_to_plan(statement).await.map_err(to_strata)?;
        self.ctx.execute_logical_plan(plan).await.map_err(to_strata)
    }

    /// Plans `sql`, which must hold one statement.
    pub async fn sql(&self, sql: &str) -> Result<DataFrame> {
        let mut statements = self.parse(sql)?;
        match statements.len() {
            1 => match statements.pop() {
                Some(s) => self.plan(s).await,
                None => Err(Error::invalid("sql", "no statement")),
            },
            n => Err(Error::invalid("sql", format!("{n} statements where one was expected"))),
        }
    }

    /// Runs every statement of `sql` in order; the rows of the last one.
    pub async fn query(&self, sql: &str) -> Result<Vec<RecordBatch>> {
        let mut rows = Vec::new();
        for statement in self.parse(sql)? {
            rows = collect(self.plan(statement).await?).await?;
        }
        Ok(rows)
    }
}

/// What one statement returned: its rows, and what its Strata scans read.
#[derive(Debug, Default)]
pub struct StatementOutput {
    /// The rows (none for DDL; one count row for `INSERT` and `DELETE`).
    pub batches: Vec<RecordBatch>,
    /// Strata scans in the statement's plan (none when `COUNT(*)` came from metadata).
    pub scans: usize,
    /// Data files those scans read (the `files_read` metric of `EXPLAIN ANALYZE`).
    pub files_read: usize,
}

impl StrataSession {
    /// Plans and runs one statement, and counts what its Strata scans read.
    pub async fn run(&self, statement: Statement) -> Result<StatementOutput> {
        let frame = self.plan(statement).await?;
        let task = Arc::new(frame.task_ctx());
        let plan = frame.create_physical_plan().await.map_err(to_strata)?;
        let batches = datafusion::physical_plan::collect(plan.clone(), task).await.map_err(to_strata)?;
        let mut scans = ScanMetrics::default();
        let _ = visit_execution_plan(plan.as_ref(), &mut scans);
        Ok(StatementOutput { batches, scans: scans.scans, files_read: scans.files_read })
    }
}

/// Sums the `files_read` metric of the Strata scans of a plan that ran.
#[derive(Default)]
struct ScanMetrics {
    scans: usize,
    files_read: usize,
}

impl ExecutionPlanVisitor for ScanMetrics {
    type Error = std::convert::Infallible;

    fn pre_visit(&mut self, plan: &dyn ExecutionPlan) -> std::result::Result<bool, Self::Error> {
        if plan.is::<StrataScanExec>() {
            self.scans += 1;
            let read = plan.metrics().and_then(|m| m.sum_by_name("files_read")).map_or(0, |v| v.as_usize());
            self.files_read += read;
        }
        Ok(true)
    }
}

/// Runs a planned frame and collects its rows.
pub async fn collect(frame: DataFrame) -> Result<Vec<RecordBatch>> {
    frame.collect().await.map_err(to_strata)
}
