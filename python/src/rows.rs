//! Arrow streams from Python into a `TableWrite`: each row's kind (one for all rows, a column of the input,
//! or the table's own), the writes and the deletes by key; shared by `NativeTable.write` and `NativeWrite`.

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType as ArrowType;
use pyo3::PyResult;
use strata_format::RowKind;
use strata_spec::{Error, Result};
use strata_table::TableWrite;

use crate::errors::{invalid, IntoPyResult};

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
