//! Reading and creating `schema/schema-N` (Paimon's `SchemaManager`).

use std::sync::Arc;

use strata_io::{join, FileIO};
use strata_spec::{Error, Result, ResultExt, TableSchema};

const SCHEMA_PREFIX: &str = "schema-";

/// Reads and creates a table's schemas.
#[derive(Debug, Clone)]
pub struct SchemaManager {
    io: Arc<dyn FileIO>,
    dir: String,
}

impl SchemaManager {
    /// The manager of `<table>/schema`.
    pub fn new(io: Arc<dyn FileIO>, table: &str) -> Self {
        SchemaManager { io, dir: join(table, "schema") }
    }

    /// Path of `schema-<id>`.
    pub fn schema_path(&self, id: i64) -> String {
        join(&self.dir, &format!("{SCHEMA_PREFIX}{id}"))
    }

    /// Schema ids present, ascending.
    pub fn list_ids(&self) -> Result<Vec<i64>> {
        let mut ids: Vec<i64> = self
            .io
            .list(&self.dir)?
            .into_iter()
            .filter_map(|s| s.name().strip_prefix(SCHEMA_PREFIX).and_then(|n| n.parse().ok()))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// Reads `schema-<id>`; errors name the file.
    pub fn schema(&self, id: i64) -> Result<TableSchema> {
        let path = self.schema_path(id);
        let bytes = self.io.read(&path)?;
        let schema = TableSchema::from_json(&bytes).in_file(&path)?;
        if schema.id != id {
            return Err(Error::corrupt_file(path, format!("holds schema id {}", schema.id)));
        }
        Ok(schema)
    }

    /// The newest schema, if the table has one.
    pub fn latest(&self) -> Result<Option<TableSchema>> {
        match self.list_ids()?.last() {
            None => Ok(None),
            Some(&id) => self.schema(id).map(Some),
        }
    }

    /// Creates `schema-<schema.id>`; fails with `AlreadyExists` if it is there.
    pub fn create(&self, schema: &TableSchema) -> Result<()> {
        schema.validate()?;
        let path = self.schema_path(schema.id);
        if self.io.create_if_absent(&path, schema.to_json()?.as_bytes())? {
            Ok(())
        } else {
            Err(Error::AlreadyExists { path })
        }
    }
}

/// A table's schemas by id, each read once: what reads of files written under older schemas map through.
#[derive(Debug)]
pub(crate) struct SchemaHistoryCache {
    schemas: SchemaManager,
    by_id: parking_lot::Mutex<std::collections::HashMap<i64, Arc<TableSchema>>>,
}

impl SchemaHistoryCache {
    /// The history of the table `schemas` manages.
    pub(crate) fn new(schemas: SchemaManager) -> Self {
        SchemaHistoryCache { schemas, by_id: Default::default() }
    }
}

impl strata_format::SchemaHistory for SchemaHistoryCache {
    fn schema(&self, id: i64) -> Result<Arc<TableSchema>> {
        if let Some(s) = self.by_id.lock().get(&id) {
            return Ok(s.clone());
        }
        // Not validated as the current schema is: only its fields matter here, and an option an older schema
        // held must not make the table's files unreadable.
        let schema = Arc::new(self.schemas.schema(id)?);
        self.by_id.lock().insert(id, schema.clone());
        Ok(schema)
    }
}
