//! `NativeTable`: one table's writes, commits, compactions and maintenance from Python (scans and lookups
//! are in `scan.rs`). Each call that writes commits once, as `strata write` and `strata compact` do.

use std::collections::BTreeMap;
use std::time::Duration;

use arrow_pyarrow::PyArrowType;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use strata_spec::{decode_commit_messages, encode_commit_messages, BinaryRow, CommitMessage};
use strata_table::{BatchSnapshots, ExpireOptions, ForeignCommit, MaintenanceReport, Table, TableWrite};

use crate::convert::stream_of;
use crate::errors::{invalid, IntoPyResult};
use crate::rows::{delete_stream, write_stream, RowKinds};

/// The job name of one-off commits from Python (the commit user is `python-<uuid>`).
pub(crate) const PYTHON_JOB: &str = "python";

/// A table, and the store options it was opened with (so a worker process can open it again).
#[pyclass(module = "strata._strata", frozen)]
pub(crate) struct NativeTable {
    pub(crate) table: Table,
    pub(crate) options: BTreeMap<String, String>,
}

impl NativeTable {
    pub(crate) fn new(table: Table, options: BTreeMap<String, String>) -> Self {
        NativeTable { table, options }
    }
}

/// A bucket holding live files as Python gets it: (serialized partition, bucket, files, bytes).
type UnitTuple = (Vec<u8>, i32, usize, i64);

/// What a commit made: `(append, last)` snapshot ids (`append` is `None` when no rows were written).
type Committed = Option<(Option<i64>, i64)>;

fn committed(s: Option<BatchSnapshots>) -> Committed {
    s.map(|s| (s.append, s.last))
}

/// Serialized messages from Python (`bytes` each), decoded and concatenated.
fn decode_all(messages: &[Vec<u8>]) -> strata_spec::Result<Vec<CommitMessage>> {
    let mut out = Vec::new();
    for m in messages {
        out.extend(decode_commit_messages(m)?);
    }
    Ok(out)
}

fn report_dict<'py>(py: Python<'py>, r: &MaintenanceReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("snapshots", r.snapshots.clone())?;
    d.set_item("data_files", r.data_files.clone())?;
    d.set_item("index_files", r.index_files.clone())?;
    d.set_item("manifests", r.manifests.clone())?;
    d.set_item("other_files", r.other_files.clone())?;
    d.set_item("dry_run", r.dry_run)?;
    Ok(d)
}

#[pymethods]
impl NativeTable {
    /// Opens the table at `path` (a local path or a store URI) with store `options`.
    #[staticmethod]
    #[pyo3(signature = (path, options = None))]
    fn open(py: Python<'_>, path: String, options: Option<BTreeMap<String, String>>) -> PyResult<Self> {
        let options = options.unwrap_or_default();
        let table = py
            .detach(|| {
                let location = strata_store::open_location(&path, &options)?;
                Table::open(location.io, &location.path)
            })
            .py()?;
        Ok(NativeTable::new(table, options))
    }

    /// The table's path as given when it was opened.
    #[getter]
    fn path(&self) -> String {
        self.table.path().to_string()
    }

    /// The store options the table was opened with.
    #[getter]
    fn store_options(&self) -> BTreeMap<String, String> {
        self.options.clone()
    }

    /// The table's rows as a `pyarrow.Schema`.
    #[getter]
    fn arrow_schema(&self) -> PyResult<PyArrowType<arrow_schema::Schema>> {
        let layout = self.table.layout().py()?;
        Ok(PyArrowType(layout.value_schema.as_ref().clone()))
    }

    /// The schema as Paimon stores it (`schema/schema-N` JSON).
    #[getter]
    fn schema_json(&self) -> PyResult<String> {
        self.table.schema().to_json().py()
    }

    #[getter]
    fn primary_keys(&self) -> Vec<String> {
        self.table.schema().primary_keys.clone()
    }

    #[getter]
    fn partition_keys(&self) -> Vec<String> {
        self.table.schema().partition_keys.clone()
    }

    #[getter]
    fn options(&self) -> BTreeMap<String, String> {
        self.table.options().clone()
    }

    /// The latest snapshot's id, `None` before the first commit.
    fn latest_snapshot_id(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        py.detach(|| self.table.snapshot_manager().latest_id()).py()
    }

    /// Writes every batch of `data` (anything exporting an Arrow stream) and commits once.
    #[pyo3(signature = (data, row_kind = None, row_kind_column = None))]
    fn write(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        row_kind: Option<String>,
        row_kind_column: Option<String>,
    ) -> PyResult<Committed> {
        let kinds = RowKinds::new(row_kind, row_kind_column)?;
        let stream = stream_of(data)?;
        py.detach(|| {
            let mut write = TableWrite::new(&self.table)?;
            write_stream(&mut write, stream, &kinds)?;
            let messages = write.prepare_commit_waiting()?;
            strata_table::commit_batch(PYTHON_JOB, &self.table, &mut write, messages, None)
        })
        .py()
        .map(committed)
    }

    /// Deletes the rows whose primary keys are the rows of `keys` and commits once.
    fn delete(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Committed> {
        let stream = stream_of(keys)?;
        py.detach(|| {
            let mut write = TableWrite::new(&self.table)?;
            delete_stream(&mut write, stream)?;
            let messages = write.prepare_commit_waiting()?;
            strata_table::commit_batch(PYTHON_JOB, &self.table, &mut write, messages, None)
        })
        .py()
        .map(committed)
    }

    /// Compacts every bucket and commits once (`full`: all levels into one run per bucket).
    #[pyo3(signature = (full = false, delete_ratio_threshold = None))]
    fn compact(&self, py: Python<'_>, full: bool, delete_ratio_threshold: Option<f64>) -> PyResult<Committed> {
        if let Some(t) = delete_ratio_threshold.filter(|t| !(0.0..=1.0).contains(t)) {
            return Err(invalid("delete_ratio_threshold", format!("{t} is outside 0..=1")));
        }
        py.detach(|| strata_table::compact_table(PYTHON_JOB, &self.table, full, delete_ratio_threshold, || ()))
            .py()
            .map(|done| committed(done.snapshots))
    }

    /// The buckets holding live files: `(partition, bucket, files, bytes)`, `partition` as Paimon's
    /// serialized `BinaryRow`.
    #[pyo3(signature = (snapshot = None))]
    fn bucket_units(&self, py: Python<'_>, snapshot: Option<i64>) -> PyResult<Vec<UnitTuple>> {
        let units = py.detach(|| strata_table::bucket_units(&self.table, snapshot)).py()?;
        Ok(units.into_iter().map(|u| (u.partition.serialize(), u.bucket, u.files, u.bytes)).collect())
    }

    /// Compacts the buckets `units` (`(partition, bucket)` as `bucket_units` gives them) and returns their
    /// commit messages, serialized; nothing is committed.
    #[pyo3(signature = (units, full = false))]
    fn compact_units<'py>(
        &self,
        py: Python<'py>,
        units: Vec<(Vec<u8>, i32)>,
        full: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| {
                let units = units
                    .iter()
                    .map(|(p, b)| Ok((BinaryRow::deserialize(p)?, *b)))
                    .collect::<strata_spec::Result<Vec<_>>>()?;
                encode_commit_messages(&strata_table::compact_units(&self.table, &units, full)?)
            })
            .py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Commits serialized messages from any number of writers in one commit.
    #[pyo3(signature = (messages, commit_user = None, identifier = None))]
    fn commit(
        &self,
        py: Python<'_>,
        messages: Vec<Vec<u8>>,
        commit_user: Option<String>,
        identifier: Option<i64>,
    ) -> PyResult<Committed> {
        if identifier.is_some() && commit_user.is_none() {
            return Err(invalid("identifier", "an identifier needs the commit_user it belongs to"));
        }
        py.detach(|| {
            let decoded = decode_all(&messages)?;
            let how = ForeignCommit { commit_user, identifier };
            strata_table::commit_foreign_messages(&self.table, decoded, &how)
        })
        .py()
        .map(committed)
    }

    /// Removes the files serialized messages added (messages that will not be committed).
    fn abort(&self, py: Python<'_>, messages: Vec<Vec<u8>>) -> PyResult<()> {
        py.detach(|| strata_table::abort_messages(&self.table, &decode_all(&messages)?)).py()
    }

    /// Expires snapshots (unset values come from the table's `snapshot.*` options).
    #[pyo3(signature = (retain_max = None, retain_min = None, older_than = None, dry_run = false))]
    fn expire<'py>(
        &self,
        py: Python<'py>,
        retain_max: Option<u32>,
        retain_min: Option<u32>,
        older_than: Option<String>,
        dry_run: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let report = py
            .detach(|| {
                let mut opts = ExpireOptions::from_table(&self.table)?;
                opts.retain_max = retain_max.unwrap_or(opts.retain_max);
                opts.retain_min = retain_min.unwrap_or(opts.retain_min);
                if let Some(d) = &older_than {
                    opts.time_retained = strata_table::parse_older_than(d)?;
                }
                opts.dry_run = dry_run;
                strata_table::expire_snapshots(&self.table, &opts)
            })
            .py()?;
        report_dict(py, &report)
    }

    /// Removes files no snapshot, tag or consumer references that are older than `older_than`.
    #[pyo3(signature = (older_than = None, dry_run = false))]
    fn clean<'py>(&self, py: Python<'py>, older_than: Option<String>, dry_run: bool) -> PyResult<Bound<'py, PyDict>> {
        let report = py
            .detach(|| {
                let age = match &older_than {
                    Some(d) => strata_table::parse_older_than(d)?,
                    None => Duration::from_secs(24 * 3600),
                };
                strata_table::remove_orphan_files(&self.table, age, dry_run)
            })
            .py()?;
        report_dict(py, &report)
    }

    /// `strata inspect --json` of snapshot `snapshot` (the latest when `None`).
    #[pyo3(signature = (snapshot = None))]
    fn inspect(&self, py: Python<'_>, snapshot: Option<i64>) -> PyResult<String> {
        let report = py.detach(|| strata_table::inspect(&self.table, snapshot)).py()?;
        serde_json::to_string(&report).map_err(|e| invalid("inspect", e))
    }
}
