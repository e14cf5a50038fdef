//! Writing from Python: row kinds, Arrow streams into a `TableWrite`, and `NativeWrite`, the explicit writer
//! of a distributed job (write, then hand the serialized commit messages to one committer).

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch, UInt64Array};
use arrow_pyarrow::PyArrowType;
use arrow_schema::DataType as ArrowType;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use strata_format::RowKind;
use strata_spec::{encode_commit_messages, Error, Result};
use strata_table::TableWrite;

use crate::convert::stream_of;
use crate::errors::{invalid, IntoPyResult};
use crate::table::NativeTable;

/// How rows get their kinds: every row one kind, a column of the input holding each row's kind (not a
/// table column: it is dropped before writing), or the table's own (`rowkind.field`, else inserts).
#[derive(Debug, Clone)]
pub(crate) enum RowKinds {
    Table,
    Uniform(i8),
    Column(String),
}

impl RowKinds {
    pub(crate) fn new(uniform: Option<String>, column: Option<String>) -> PyResult<Self> {
        match (uniform, column) {
            (Some(_), Some(_)) => Err(invalid("row kinds", "give row_kind or row_kind_column, not both")),
            (Some(k), None) => Ok(RowKinds::Uniform(RowKind::from_short_string(&k).py()?.to_byte())),
            (None, Some(c)) => Ok(RowKinds::Column(c)),
            (None, None) => Ok(RowKinds::Table),
        }
    }
}

/// The kinds in column `name` of `batch` (`+I`/`-U`/`+U`/`-D` strings, or their byte values 0-3), and the
/// batch without that column.
fn split_kinds(batch: &RecordBatch, name: &str) -> Result<(RecordBatch, Vec<i8>)> {
    let at = batch
        .schema()
        .index_of(name)
        .map_err(|_| Error::invalid("row_kind_column", format!("'{name}' is not a column of the data")))?;
    let column = batch.column(at);
    if column.null_count() > 0 {
        return Err(Error::invalid("row_kind_column", format!("'{name}' has nulls")));
    }
    let kinds = match column.data_type() {
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => {
            let strings = arrow_cast_utf8(column)?;
            let s = strings.as_string::<i32>();
            (0..s.len())
                .map(|r| RowKind::from_short_string(s.value(r)).map(RowKind::to_byte))
                .collect::<Result<Vec<_>>>()?
        }
        ArrowType::Int8 => {
            let v = column.as_primitive::<arrow_array::types::Int8Type>();
            v.values().iter().map(|b| RowKind::from_byte(*b).map(RowKind::to_byte)).collect::<Result<Vec<_>>>()?
        }
        other => {
            return Err(Error::invalid("row_kind_column", format!("'{name}' is {other}; kinds are strings or int8")))
        }
    };
    let mut rest = batch.clone();
    rest.remove_column(at);
    Ok((rest, kinds))
}

fn arrow_cast_utf8(column: &arrow_array::ArrayRef) -> Result<arrow_array::ArrayRef> {
    strata_format::exact_cast(column, &strata_spec::DataType::string())
        .map_err(|r| Error::invalid("row_kind_column", r.to_string()))
}

/// Writes one batch with its kinds.
pub(crate) fn write_batch(write: &mut TableWrite, batch: &RecordBatch, kinds: &RowKinds) -> Result<()> {
    match kinds {
        RowKinds::Table => write.write_batch(batch),
        RowKinds::Uniform(k) => write.write_with_kinds(batch, &vec![*k; batch.num_rows()]),
        RowKinds::Column(name) => {
            let (rest, k) = split_kinds(batch, name)?;
            write.write_with_kinds(&rest, &k)
        }
    }
}

/// Writes every batch of an imported Arrow stream.
pub(crate) fn write_stream<I>(write: &mut TableWrite, stream: I, kinds: &RowKinds) -> Result<()>
where
    I: Iterator<Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>>,
{
    for batch in stream {
        let batch = batch.map_err(|e| Error::invalid_from("data", e))?;
        write_batch(write, &batch, kinds)?;
    }
    Ok(())
}

/// Deletes the keys of every batch of an imported Arrow stream (the primary-key columns by name).
pub(crate) fn delete_stream<I>(write: &mut TableWrite, stream: I) -> Result<()>
where
    I: Iterator<Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>>,
{
    for batch in stream {
        write.delete_keys(&batch.map_err(|e| Error::invalid_from("keys", e))?)?;
    }
    Ok(())
}

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
