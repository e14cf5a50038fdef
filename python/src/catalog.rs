//! `NativeCatalog`: Paimon's filesystem catalog over a warehouse, local or on an object store.

use std::collections::BTreeMap;

use arrow_pyarrow::PyArrowType;
use pyo3::prelude::*;
use pyo3::types::PyString;
use strata_spec::{parse_columns, TableSchema};
use strata_table::{now_millis, FileSystemCatalog, OptionPolicy};

use crate::convert::columns_of;
use crate::errors::IntoPyResult;
use crate::table::NativeTable;

/// Databases and tables under a warehouse (`<warehouse>/<db>.db/<table>`).
#[pyclass(module = "strata._strata", frozen)]
pub(crate) struct NativeCatalog {
    catalog: FileSystemCatalog,
    /// Store options (`s3.endpoint`, ...), handed to the tables it opens so they can be reopened elsewhere.
    options: BTreeMap<String, String>,
}

#[pymethods]
impl NativeCatalog {
    #[new]
    #[pyo3(signature = (warehouse, options = None))]
    fn new(py: Python<'_>, warehouse: String, options: Option<BTreeMap<String, String>>) -> PyResult<Self> {
        let options = options.unwrap_or_default();
        let location = py.detach(|| strata_store::open_location(&warehouse, &options)).py()?;
        Ok(NativeCatalog { catalog: FileSystemCatalog::new(location.io, &location.path), options })
    }

    /// The warehouse path.
    #[getter]
    fn warehouse(&self) -> String {
        self.catalog.warehouse().to_string()
    }

    #[pyo3(signature = (name, ignore_if_exists = true))]
    fn create_database(&self, py: Python<'_>, name: String, ignore_if_exists: bool) -> PyResult<()> {
        py.detach(|| self.catalog.create_database(&name, ignore_if_exists)).py()
    }

    fn list_databases(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        py.detach(|| self.catalog.list_databases()).py()
    }

    fn list_tables(&self, py: Python<'_>, database: String) -> PyResult<Vec<String>> {
        py.detach(|| self.catalog.list_tables(&database)).py()
    }

    /// Creates a table from a `pyarrow.Schema` or a column list string (`"id BIGINT NOT NULL, v STRING"`).
    /// Primary-key columns become NOT NULL; `bucket` defaults to 1 (Strata's default, as `strata create`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (database, name, schema, primary_keys, partition_keys, options, ignore_if_exists, allow_unknown_options))]
    fn create_table(
        &self,
        py: Python<'_>,
        database: String,
        name: String,
        schema: &Bound<'_, PyAny>,
        primary_keys: Vec<String>,
        partition_keys: Vec<String>,
        options: BTreeMap<String, String>,
        ignore_if_exists: bool,
        allow_unknown_options: bool,
    ) -> PyResult<NativeTable> {
        let columns = if let Ok(s) = schema.cast::<PyString>() {
            parse_columns(&s.to_cow()?).py()?
        } else {
            let arrow: PyArrowType<arrow_schema::Schema> = schema.extract()?;
            columns_of(&arrow.0)?
        };
        let mut options = options;
        // Without a primary key, Paimon's default: an unaware-bucket append table.
        let default_bucket = if primary_keys.is_empty() { "-1" } else { "1" };
        options.entry("bucket".to_string()).or_insert_with(|| default_bucket.to_string());
        let policy = OptionPolicy { allow_unknown_options };
        let table = py
            .detach(|| {
                let schema = TableSchema::new(columns, partition_keys, primary_keys, options, now_millis())?;
                self.catalog.create_table_with_policy(&database, &name, schema, ignore_if_exists, policy)
            })
            .py()?;
        Ok(NativeTable::new(table, self.options.clone()))
    }

    fn get_table(&self, py: Python<'_>, database: String, name: String) -> PyResult<NativeTable> {
        let table = py.detach(|| self.catalog.get_table(&database, &name)).py()?;
        Ok(NativeTable::new(table, self.options.clone()))
    }

    #[pyo3(signature = (database, name, ignore_if_not_exists = false))]
    fn drop_table(&self, py: Python<'_>, database: String, name: String, ignore_if_not_exists: bool) -> PyResult<()> {
        py.detach(|| self.catalog.drop_table(&database, &name, ignore_if_not_exists)).py()
    }
}
