//! A warehouse as a DataFusion catalog: its databases (`<db>.db` directories) are schemas, their tables
//! Strata tables, and `t$snapshots` and the other suffixed names system tables and time travel (`names`).
//!
//! DataFusion asks for tables asynchronously, and those lookups open the table on a blocking thread. A few
//! of its catalog calls are synchronous (listing databases and tables, checking that one exists): they do
//! their small I/O in `block_in_place` on a multi-threaded runtime, so the worker's other tasks move on.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, MemTable, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use strata_spec::{Error, ErrorKind};
use strata_table::FileSystemCatalog;

use crate::error::to_df;
use crate::names::parse_table_name;
use crate::provider::{blocking, StrataTable};

/// Runs synchronous catalog I/O without stalling a multi-threaded runtime's worker.
fn sync_io<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// The databases of a warehouse.
#[derive(Debug, Clone)]
pub struct StrataCatalog {
    catalog: FileSystemCatalog,
}

impl StrataCatalog {
    /// The catalog over `catalog`'s warehouse.
    pub fn new(catalog: FileSystemCatalog) -> Self {
        StrataCatalog { catalog }
    }
}

impl CatalogProvider for StrataCatalog {
    fn schema_names(&self) -> Vec<String> {
        sync_io(|| self.catalog.list_databases()).unwrap_or_default()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let exists = sync_io(|| self.catalog.database_exists(name));
        // A storage error is not "no such database": the lookup that follows reports it.
        if matches!(exists, Ok(false)) {
            return None;
        }
        Some(Arc::new(StrataSchema { catalog: self.catalog.clone(), database: name.to_string() }))
    }

    /// `CREATE SCHEMA db` creates the database directory.
    fn register_schema(&self, name: &str, _schema: Arc<dyn SchemaProvider>) -> Result<Option<Arc<dyn SchemaProvider>>> {
        sync_io(|| self.catalog.create_database(name, true)).map_err(to_df)?;
        Ok(None)
    }
}

/// The tables of one database.
#[derive(Debug, Clone)]
pub struct StrataSchema {
    catalog: FileSystemCatalog,
    database: String,
}

impl StrataSchema {
    /// The provider for `name` (with its suffixes), `None` when the table does not exist. Blocking.
    fn open(&self, name: &str) -> strata_spec::Result<Option<Arc<dyn TableProvider>>> {
        let parsed = parse_table_name(name)?;
        let table = match self.catalog.get_table(&self.database, &parsed.table) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let table = match &parsed.branch {
            None => table,
            Some(branch) => strata_table::Table::open_branch(table.io().clone(), table.path(), branch)?,
        };
        let display = format!("{}.{}", self.database, name);
        Ok(Some(match parsed.system {
            None => Arc::new(StrataTable::open(&display, &table, &parsed.travel)?),
            Some(system) => {
                let travelled = StrataTable::open(&display, &table, &parsed.travel)?;
                let batch = system.build(travelled.table(), travelled.pinned())?;
                let schema = batch.schema();
                Arc::new(MemTable::try_new(schema, vec![vec![batch]]).map_err(crate::error::to_strata)?)
            }
        }))
    }
}

#[async_trait]
impl SchemaProvider for StrataSchema {
    fn table_names(&self) -> Vec<String> {
        sync_io(|| self.catalog.list_tables(&self.database)).unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        let (this, name) = (self.clone(), name.to_string());
        blocking(move || this.open(&name)).await
    }

    fn table_exist(&self, name: &str) -> bool {
        let Ok(parsed) = parse_table_name(name) else { return false };
        sync_io(|| self.catalog.get_table(&self.database, &parsed.table)).is_ok()
    }

    fn register_table(&self, name: String, _table: Arc<dyn TableProvider>) -> Result<Option<Arc<dyn TableProvider>>> {
        Err(to_df(Error::unsupported(format!(
            "CREATE TABLE {name} in SQL (create Strata tables with `strata create` or the Rust API)"
        ))))
    }
}
