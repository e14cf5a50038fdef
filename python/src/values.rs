//! One key and one row as plain Python values, for single-key lookups where an Arrow table at each end costs
//! more than the lookup (exporting a one-row batch of 21 columns through the C data interface takes about
//! 25 microseconds; the lookup about 8).
//!
//! Common types go straight across: `int` for integer columns, `float`, `bool`, `str` for strings, `bytes`
//! for binaries. Any other key value or column type takes pyarrow's road, so every type gives what `get`
//! would (`pyarrow`'s `as_py`), only slower.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_pyarrow::{FromPyArrow, PyArrowType, ToPyArrow};
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};
use strata_format::lookup::PackedValue;
use strata_format::{datum_at, exact_cast, to_arrow};
use strata_spec::{DataType, Datum, TableSchema, TypeRoot, MAX_LENGTH};
use strata_table::PackedTableRow;

use crate::errors::{invalid, IntoPyResult};

/// The primary key `key` (a value, or a tuple of one value per key column) as datums of the key's types.
pub(crate) fn key_datums(schema: &TableSchema, key: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Datum>>> {
    let pk = &schema.primary_keys;
    let values: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) if pk.len() > 1 || t.len() == 1 => t.iter().collect(),
        _ => vec![key.clone()],
    };
    if values.len() != pk.len() {
        return Err(invalid("key", format!("{} values for primary key ({})", values.len(), pk.join(", "))));
    }
    pk.iter().zip(&values).map(|(name, v)| datum_of(&schema.field(name).py()?.data_type, name, v)).collect()
}

/// One Python value as a datum of type `t` (exactly, or refused as `get` refuses it).
fn datum_of(t: &DataType, column: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<Datum>> {
    if v.is_none() {
        return Ok(None);
    }
    let out_of_range = || invalid("key", format!("{v} does not fit column '{column}' ({t})"));
    // Exact instances only: a bool is an int to Python, not to the column.
    if v.is_exact_instance_of::<PyInt>() {
        let fits = |d: Option<Datum>| d.ok_or_else(out_of_range).map(Some);
        match t.root {
            TypeRoot::BigInt => return fits(v.extract::<i64>().ok().map(Datum::BigInt)),
            TypeRoot::Int => return fits(v.extract::<i32>().ok().map(Datum::Int)),
            TypeRoot::SmallInt => return fits(v.extract::<i16>().ok().map(Datum::SmallInt)),
            TypeRoot::TinyInt => return fits(v.extract::<i8>().ok().map(Datum::TinyInt)),
            _ => {}
        }
    }
    let integer = matches!(t.root, TypeRoot::BigInt | TypeRoot::Int | TypeRoot::SmallInt | TypeRoot::TinyInt);
    if integer && v.is_instance_of::<PyFloat>() {
        // pyarrow would truncate 1.5 to 1 and look up another key.
        return Err(invalid("key", format!("{v} is not an integer, as column '{column}' ({t}) holds")));
    }
    match t.root {
        TypeRoot::VarChar(MAX_LENGTH) if v.is_exact_instance_of::<PyString>() => {
            return Ok(Some(Datum::String(v.extract::<String>()?)))
        }
        TypeRoot::VarBinary(MAX_LENGTH) if v.is_exact_instance_of::<PyBytes>() => {
            return Ok(Some(Datum::Bytes(v.extract::<Vec<u8>>()?)))
        }
        _ => {}
    }
    // Through a one-value pyarrow array of the column's Arrow type, cast exactly (as `get`'s keys are).
    let py = v.py();
    let arrow_type = to_arrow(&t.with_nullable(true));
    let array = py
        .import("pyarrow")?
        .call_method1("array", (vec![v.clone()], PyArrowType(arrow_type)))
        .map_err(|e| invalid("key", format!("{v} does not fit column '{column}' ({t}): {e}")))?;
    let array: ArrayRef = arrow_array::make_array(arrow_data::ArrayData::from_pyarrow_bound(&array)?);
    let typed =
        exact_cast(&array, &t.with_nullable(true)).map_err(|r| invalid(&format!("key column '{column}'"), r))?;
    datum_at(typed.as_ref(), 0).py()
}

/// A row as stored, as a dict of column name to Python value; `None` (not Python's) when a column's type has
/// no plain road (then `row_dict` of the decoded row).
pub(crate) fn packed_row_dict<'py>(
    py: Python<'py>,
    row: &PackedTableRow,
    names: &ColumnNames,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let dict = PyDict::new(py);
    let names = names.of(py, row.schema());
    let mut failed: Option<PyErr> = None;
    let mut plain = true;
    row.for_each_value(&mut |i, v| {
        if failed.is_some() || !plain {
            return;
        }
        let value = match v {
            PackedValue::Null => py.None().into_bound(py),
            PackedValue::Boolean(b) => PyBool::new(py, b).to_owned().into_any(),
            PackedValue::Int(x) => match x.into_pyobject(py) {
                Ok(x) => x.into_any(),
                Err(e) => return failed = Some(e.into()),
            },
            PackedValue::Float(x) => PyFloat::new(py, x).into_any(),
            PackedValue::Str(x) => PyString::new(py, x).into_any(),
            PackedValue::Bytes(x) => PyBytes::new(py, x).into_any(),
            PackedValue::Other(..) => return plain = false,
        };
        let Some(name) = names.get(i) else { return failed = Some(invalid("row", "more values than columns")) };
        if let Err(e) = dict.set_item(name.bind(py), value) {
            failed = Some(e);
        }
    })
    .py()?;
    match failed {
        Some(e) => Err(e),
        None => Ok(plain.then(|| dict.into_any())),
    }
}

/// A schema's column names as Python strings, made once per schema (a lookup takes microseconds; making
/// 21 strings for the names took one of them).
#[derive(Default)]
pub(crate) struct ColumnNames(std::sync::Mutex<Option<(SchemaRef, Names)>>);

/// Column names, shared.
type Names = Arc<Vec<Py<PyString>>>;

impl ColumnNames {
    fn of(&self, py: Python<'_>, schema: &SchemaRef) -> Names {
        let mut held = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match held.as_ref() {
            Some((s, names)) if Arc::ptr_eq(s, schema) => names.clone(),
            _ => {
                let names: Names =
                    Arc::new(schema.fields().iter().map(|f| PyString::new(py, f.name()).unbind()).collect());
                *held = Some((schema.clone(), names.clone()));
                names
            }
        }
    }
}

/// Row 0 of `row` as a dict of column name to Python value.
pub(crate) fn row_dict<'py>(py: Python<'py>, row: &RecordBatch) -> PyResult<Bound<'py, PyAny>> {
    let dict = PyDict::new(py);
    for (field, column) in row.schema().fields().iter().zip(row.columns()) {
        let Some(value) = plain_value(py, column)? else {
            // A type without a plain road: pyarrow's own conversion of the whole row.
            let rows = row.to_pyarrow(py)?.call_method0("to_pylist")?;
            return rows.get_item(0);
        };
        dict.set_item(field.name(), value)?;
    }
    Ok(dict.into_any())
}

/// Value 0 of `column` as a Python value, `None` (not Python's) when its type has no plain road.
fn plain_value<'py>(py: Python<'py>, column: &ArrayRef) -> PyResult<Option<Bound<'py, PyAny>>> {
    if column.is_empty() {
        return Err(invalid("row", "an empty column"));
    }
    if column.is_null(0) {
        return Ok(Some(py.None().into_bound(py)));
    }
    let c = column.as_ref();
    Ok(Some(match c.data_type() {
        ArrowType::Int64 => c.as_primitive::<Int64Type>().value(0).into_pyobject(py)?.into_any(),
        ArrowType::Int32 => c.as_primitive::<Int32Type>().value(0).into_pyobject(py)?.into_any(),
        ArrowType::Int16 => c.as_primitive::<Int16Type>().value(0).into_pyobject(py)?.into_any(),
        ArrowType::Int8 => c.as_primitive::<Int8Type>().value(0).into_pyobject(py)?.into_any(),
        ArrowType::Float64 => PyFloat::new(py, c.as_primitive::<Float64Type>().value(0)).into_any(),
        ArrowType::Float32 => PyFloat::new(py, f64::from(c.as_primitive::<Float32Type>().value(0))).into_any(),
        ArrowType::Boolean => PyBool::new(py, c.as_boolean().value(0)).to_owned().into_any(),
        ArrowType::Utf8 => PyString::new(py, c.as_string::<i32>().value(0)).into_any(),
        ArrowType::Binary => PyBytes::new(py, c.as_binary::<i32>().value(0)).into_any(),
        _ => return Ok(None),
    }))
}
