//! Reading from Python: scans as `pyarrow.RecordBatchReader`s fed by Strata's decoding threads (batches
//! cross through the Arrow C stream interface, not copied), point lookups, and `NativeQuery` for repeated
//! lookups through local lookup files.

use std::collections::BTreeMap;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_pyarrow::{IntoPyArrow, PyArrowType};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::PyList;
use strata_spec::Datum;
use strata_table::{BatchStream, ReadBuilder, Table, TableQuery};

use crate::convert::{concat, keys_of, predicate_of, stream_of};
use crate::errors::{invalid, IntoPyResult};
use crate::table::NativeTable;

/// A [`BatchStream`] as Arrow's `RecordBatchReader`.
struct StreamReader(BatchStream);

impl Iterator for StreamReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|r| r.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
}

/// Which snapshot a read sees, as Paimon's `scan.*` options (at most one).
fn travel_options(
    snapshot: Option<i64>,
    tag: Option<String>,
    timestamp_millis: Option<i64>,
) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    if let Some(id) = snapshot {
        o.insert("scan.snapshot-id".to_string(), id.to_string());
    }
    if let Some(t) = tag {
        o.insert(strata_table::SCAN_TAG_NAME.to_string(), t);
    }
    if let Some(ms) = timestamp_millis {
        o.insert(strata_table::SCAN_TIMESTAMP_MILLIS.to_string(), ms.to_string());
    }
    o
}

/// All keys of a key table (any Arrow stream with the primary-key columns).
fn all_keys(table: &Table, keys: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<Option<Datum>>>> {
    let mut out = Vec::new();
    for batch in stream_of(keys)? {
        let batch = batch.map_err(|e| invalid("keys", e))?;
        out.extend(keys_of(table.schema(), &batch)?);
    }
    Ok(out)
}

#[pymethods]
impl NativeTable {
    /// A read as a `pyarrow.RecordBatchReader`: `columns` (all when `None`), `filter` in the form
    /// `convert::predicate_of` takes, the snapshot chosen by `snapshot`, `tag` or `timestamp_millis` (latest
    /// otherwise), at most `limit` rows. With `collect` every batch is decoded before this returns (errors
    /// are then Strata's typed exceptions); otherwise batches stream as Strata's threads decode them.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (columns = None, filter = None, snapshot = None, tag = None, timestamp_millis = None, limit = None, batch_size = None, collect = false))]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        columns: Option<Vec<String>>,
        filter: Option<&Bound<'py, PyList>>,
        snapshot: Option<i64>,
        tag: Option<String>,
        timestamp_millis: Option<i64>,
        limit: Option<usize>,
        batch_size: Option<usize>,
        collect: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let builder = self.read_builder(py, columns, filter, travel_options(snapshot, tag, timestamp_millis))?;
        let builder = match limit {
            Some(n) => builder.with_limit(n),
            None => builder,
        };
        let builder = match batch_size {
            Some(n) if n > 0 => builder.with_batch_size(n),
            Some(_) => return Err(invalid("batch_size", "must be positive")),
            None => builder,
        };
        let reader: Box<dyn RecordBatchReader + Send> = if collect {
            let read = py.detach(|| builder.read()).py()?;
            Box::new(arrow_array::RecordBatchIterator::new(read.batches.into_iter().map(Ok), read.schema))
        } else {
            Box::new(StreamReader(py.detach(|| builder.stream()).py()?))
        };
        reader.into_pyarrow(py)
    }

    /// The number of rows a scan with `filter` would return (from metadata where the table allows).
    #[pyo3(signature = (filter = None, snapshot = None))]
    fn count(&self, py: Python<'_>, filter: Option<&Bound<'_, PyList>>, snapshot: Option<i64>) -> PyResult<u64> {
        let builder = self.read_builder(py, None, filter, travel_options(snapshot, None, None))?;
        py.detach(|| builder.count()).py()
    }

    /// The rows whose primary keys are the rows of `keys`, in key order, absent keys skipped; one batch.
    #[pyo3(signature = (keys, snapshot = None))]
    fn get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        snapshot: Option<i64>,
    ) -> PyResult<PyArrowType<RecordBatch>> {
        let keys = all_keys(&self.table, keys)?;
        let found: Vec<RecordBatch> =
            py.detach(|| strata_table::get_many(&self.table, &keys, snapshot)).py()?.into_iter().flatten().collect();
        // The rows come in the schema of the snapshot read, which may be older than the table's; only when
        // nothing was found is that schema read again.
        let schema = match found.first() {
            Some(b) => b.schema(),
            None => self.table.as_of(snapshot).py()?.layout().py()?.value_schema,
        };
        Ok(PyArrowType(concat(&schema, &found)?))
    }

    /// A query for repeated lookups on snapshot `snapshot` (the latest when `None`).
    #[pyo3(signature = (snapshot = None))]
    fn query(&self, py: Python<'_>, snapshot: Option<i64>) -> PyResult<NativeQuery> {
        let query = py
            .detach(|| match snapshot {
                Some(id) => TableQuery::at_snapshot(&self.table, id),
                None => TableQuery::new(&self.table),
            })
            .py()?;
        Ok(NativeQuery { query, table: self.table.clone(), names: Default::default() })
    }
}

impl NativeTable {
    fn read_builder(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<&Bound<'_, PyList>>,
        travel: BTreeMap<String, String>,
    ) -> PyResult<ReadBuilder> {
        if travel.len() > 1 {
            return Err(invalid("scan", "give at most one of snapshot, tag and timestamp"));
        }
        let builder = py.detach(|| strata_table::read_builder(&self.table, &travel)).py()?;
        // The filter is typed by the schema of the snapshot read (time travel reads under its own schema).
        let predicate = match filter {
            Some(dnf) => predicate_of(builder.table().schema(), dnf)?,
            None => None,
        };
        let builder = match columns {
            Some(cols) => {
                let names: Vec<&str> = cols.iter().map(String::as_str).collect();
                builder.with_projection(&names)
            }
            None => builder,
        };
        Ok(match predicate {
            Some(p) => builder.with_filter(p),
            None => builder,
        })
    }
}

/// Repeated point lookups on one snapshot through local lookup files (`TableQuery`).
#[pyclass(module = "strata._strata", frozen)]
pub(crate) struct NativeQuery {
    query: TableQuery,
    table: Table,
    /// Column names for `get_row`'s dicts.
    names: crate::values::ColumnNames,
}

#[pymethods]
impl NativeQuery {
    /// The rows of the keys in `keys`, in the order given, absent keys skipped; one batch.
    fn get(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<PyArrowType<RecordBatch>> {
        let keys = all_keys(&self.table, keys)?;
        // Rows carry the schema of the snapshot read (a refresh may have moved past a schema change).
        let found = py.detach(|| self.query.get_many(&keys)).py()?;
        Ok(PyArrowType(found.rows))
    }

    /// The row of one key (a value, or a tuple for a key of several columns) as a dict of Python values;
    /// `None` when absent or deleted.
    fn get_row<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let key = crate::values::key_datums(self.table.schema(), key)?;
        let found = match py.detach(|| self.query.get_row(&key)).py()? {
            Some(strata_table::FoundRow::Packed(row)) => match crate::values::packed_row_dict(py, &row, &self.names)? {
                Some(dict) => return Ok(Some(dict)),
                // A column without a plain road: the row decoded, as `get` gives it.
                None => py.detach(|| self.query.get(&key)).py()?,
            },
            Some(strata_table::FoundRow::Batch(row)) => Some(row),
            None => None,
        };
        found.map(|row| crate::values::row_dict(py, &row)).transpose()
    }

    /// Moves to the latest snapshot if newer; the snapshot read.
    fn refresh(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        py.detach(|| self.query.refresh()).py()
    }

    /// The snapshot the query reads.
    #[getter]
    fn snapshot_id(&self) -> Option<i64> {
        self.query.snapshot_id()
    }
}
