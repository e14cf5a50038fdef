//! `NativeWrite`, the explicit writer of a distributed job from Python (write, then hand the serialized
//! commit messages to one committer); the rows go in through `crate::rows`.

use arrow_array::{Array, UInt64Array};
use arrow_pyarrow::PyArrowType;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use strata_spec::{encode_commit_messages, Error, Result};
use strata_table::TableWrite;

use crate::convert::stream_of;
use crate::errors::IntoPyResult;
use crate::rows::{delete_stream, write_stream, RowKinds};
use crate::table::NativeTable;

/// A writer of one table for one commit that someone else makes: write and delete rows, then
/// `prepare_commit` hands the serialized messages out (to `NativeTable.commit` in this process or another).
#[pyclass(module = "strata._strata", frozen)]
pub(crate) struct NativeWrite {
    write: Mutex<Option<TableWrite>>,
}

impl NativeWrite {
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut TableWrite) -> Result<T> + Send) -> PyResult<T> {
        py.detach(|| {
            let mut guard = self.write.lock();
            let w = guard.as_mut().ok_or_else(|| Error::invalid("write", "the writer is closed"))?;
            f(w)
        })
        .py()
    }
}

#[pymethods]
impl NativeWrite {
    #[new]
    fn new(py: Python<'_>, table: &NativeTable) -> PyResult<Self> {
        let write = py.detach(|| TableWrite::new(&table.table)).py()?;
        Ok(NativeWrite { write: Mutex::new(Some(write)) })
    }

    /// Writes every batch of `data`.
    #[pyo3(signature = (data, row_kind = None, row_kind_column = None))]
    fn write(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        row_kind: Option<String>,
        row_kind_column: Option<String>,
    ) -> PyResult<()> {
        let kinds = RowKinds::new(row_kind, row_kind_column)?;
        let stream = stream_of(data)?;
        self.with(py, |w| write_stream(w, stream, &kinds))
    }

    /// Deletes the rows whose primary keys are the rows of `keys`.
    fn delete(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let stream = stream_of(keys)?;
        self.with(py, |w| delete_stream(w, stream))
    }

    /// For each row of `data`, the unit of work that must write it: a 64-bit id of its (partition,
    /// bucket), or of its partition in a dynamic-bucket table. Rows of one id go to one writer.
    fn unit_ids(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyArrowType<arrow_data::ArrayData>> {
        let stream = stream_of(data)?;
        let ids = self.with(py, |w| {
            let mut ids: Vec<u64> = Vec::new();
            for batch in stream {
                let batch = batch.map_err(|e| Error::invalid_from("data", e))?;
                ids.extend(w.units_of(&batch)?.iter().map(|(p, b)| unit_id(p, *b)));
            }
            Ok(ids)
        })?;
        Ok(PyArrowType(UInt64Array::from(ids).into_data()))
    }

    /// Flushes, compacts and returns the serialized commit messages of everything written (nothing is
    /// committed); the writer can go on writing for a next commit.
    fn prepare_commit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(py, |w| encode_commit_messages(&w.prepare_commit_waiting()?))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Drops the writer: files it flushed and never handed over are removed.
    fn close(&self, py: Python<'_>) {
        let taken = self.write.lock().take();
        py.detach(move || drop(taken));
    }
}

/// A stable 64-bit id of a (serialized partition, bucket): FNV-1a over both, so every process routing rows
/// gives a unit the same id.
fn unit_id(partition: &[u8], bucket: i32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in partition.iter().chain(&bucket.to_le_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
