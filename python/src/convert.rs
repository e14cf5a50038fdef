//! Python values into Strata's: Arrow schemas into Paimon types, filters into predicates, key tables into
//! primary keys, and Arrow streams in from any object that exports one.

use std::sync::Arc;

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_pyarrow::{FromPyArrow, PyArrowType};
use arrow_schema::{DataType as ArrowType, Field, TimeUnit};
use pyo3::prelude::*;
use pyo3::types::PyList;
use strata_format::{datum_at, exact_cast, CmpOp, Predicate};
use strata_spec::{DataType, Datum, TableSchema, TypeRoot, MAX_LENGTH};

use crate::errors::{invalid, IntoPyResult};

/// The Paimon type of an Arrow field (its nullability included).
pub(crate) fn paimon_type(field: &Field) -> PyResult<DataType> {
    let precision = |unit: &TimeUnit| match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    };
    let root = match field.data_type() {
        ArrowType::Boolean => TypeRoot::Boolean,
        ArrowType::Int8 => TypeRoot::TinyInt,
        ArrowType::Int16 => TypeRoot::SmallInt,
        ArrowType::Int32 => TypeRoot::Int,
        ArrowType::Int64 => TypeRoot::BigInt,
        ArrowType::Float32 => TypeRoot::Float,
        ArrowType::Float64 => TypeRoot::Double,
        ArrowType::Decimal128(p, s) if (1..=38).contains(p) && *s >= 0 && (*s as u8) <= *p => {
            TypeRoot::Decimal { precision: *p, scale: *s as u8 }
        }
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => TypeRoot::VarChar(MAX_LENGTH),
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => TypeRoot::VarBinary(MAX_LENGTH),
        ArrowType::FixedSizeBinary(n) if *n > 0 => TypeRoot::Binary(*n as u32),
        ArrowType::Date32 => TypeRoot::Date,
        // Strata stores TIME as milliseconds of the day (Paimon's Arrow mapping): finer units would be cut.
        ArrowType::Time32(unit) => TypeRoot::Time(precision(unit)),
        ArrowType::Timestamp(unit, None) => TypeRoot::Timestamp(precision(unit)),
        ArrowType::Timestamp(unit, Some(_)) => TypeRoot::LocalZonedTimestamp(precision(unit)),
        ArrowType::Dictionary(_, values) => {
            return paimon_type(&Field::new(field.name(), values.as_ref().clone(), field.is_nullable()))
        }
        other => {
            return Err(invalid(
                &format!("column '{}'", field.name()),
                format!(
                    "Arrow type {other} has no Paimon type Strata stores (atomic types only; TIME as time32; DECIMAL up to 38 digits)"
                ),
            ))
        }
    };
    Ok(DataType { root, nullable: field.is_nullable() })
}

/// The Paimon type string of a `pyarrow.DataType` (`"BIGINT NOT NULL"`, `"TIMESTAMP(6)"`).
#[pyfunction]
#[pyo3(signature = (arrow_type, nullable = true))]
pub(crate) fn paimon_type_of(arrow_type: PyArrowType<ArrowType>, nullable: bool) -> PyResult<String> {
    Ok(paimon_type(&Field::new("value", arrow_type.0, nullable))?.to_string())
}

/// Columns (name, Paimon type) of a `pyarrow.Schema`.
pub(crate) fn columns_of(schema: &arrow_schema::Schema) -> PyResult<Vec<(String, DataType)>> {
    schema.fields().iter().map(|f| Ok((f.name().clone(), paimon_type(f)?))).collect()
}

/// The Arrow stream an object exports (`__arrow_c_stream__`: pyarrow tables, readers and batches, polars
/// and pandas frames, DuckDB results ...), imported without copying its buffers.
pub(crate) fn stream_of(data: &Bound<'_, PyAny>) -> PyResult<ArrowArrayStreamReader> {
    ArrowArrayStreamReader::from_pyarrow_bound(data)
}

/// The addresses of the value buffers of every column of the first batch `data` exports, as Rust sees them
/// once imported: equal to pyarrow's own `buffers()` addresses when the import copied nothing (tests).
#[pyfunction]
pub(crate) fn import_addresses(data: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<usize>>> {
    let mut stream = stream_of(data)?;
    let Some(batch) = stream.next() else { return Ok(Vec::new()) };
    let batch = batch.map_err(|e| invalid("data", e))?;
    Ok(batch.columns().iter().map(|c| c.to_data().buffers().iter().map(|b| b.as_ptr() as usize).collect()).collect())
}

/// One value given from Python as a one-element Arrow array, as a Datum of column `column`'s type (taken
/// exactly, or refused).
fn datum_of(schema: &TableSchema, column: &str, value: &ArrayRef) -> PyResult<Option<Datum>> {
    let field = schema.field(column).py()?;
    if value.len() != 1 {
        return Err(invalid("filter", format!("the value for '{column}' must be one value")));
    }
    let typed = exact_cast(value, &field.data_type.with_nullable(true))
        .map_err(|r| invalid(&format!("filter value for '{column}'"), r))?;
    datum_at(typed.as_ref(), 0).py()
}

/// A filter in disjunctive normal form, as the Python half builds it: a list of conjunctions, each a list
/// of `(column, op, value)` with `value` a one-element Arrow array (`None` for `is_null`/`is_not_null`).
pub(crate) fn predicate_of(schema: &TableSchema, dnf: &Bound<'_, PyList>) -> PyResult<Option<Predicate>> {
    let mut any = Vec::new();
    for conjunction in dnf.iter() {
        let mut all = Vec::new();
        for term in conjunction.cast::<PyList>()?.iter() {
            let (column, op, value): (String, String, Option<PyArrowType<arrow_data::ArrayData>>) = term.extract()?;
            let value = value.map(|v| arrow_array::make_array(v.0));
            let compare = |op: CmpOp| -> PyResult<Predicate> {
                let v =
                    value.as_ref().ok_or_else(|| invalid("filter", format!("'{op:?}' on '{column}' needs a value")))?;
                match datum_of(schema, &column, v)? {
                    Some(d) => Ok(Predicate::cmp(&column, op, d)),
                    None => Err(invalid(
                        "filter",
                        format!("a comparison of '{column}' with null matches nothing; use is_null"),
                    )),
                }
            };
            schema.field(&column).py()?;
            all.push(match op.as_str() {
                "=" | "==" => compare(CmpOp::Eq)?,
                "!=" | "<>" => compare(CmpOp::NotEq)?,
                "<" => compare(CmpOp::Lt)?,
                "<=" => compare(CmpOp::LtEq)?,
                ">" => compare(CmpOp::Gt)?,
                ">=" => compare(CmpOp::GtEq)?,
                "is_null" => Predicate::IsNull(column),
                "is_not_null" => Predicate::IsNotNull(column),
                other => return Err(invalid("filter", format!("unknown operator '{other}'"))),
            });
        }
        any.push(if all.len() == 1 { all.remove(0) } else { Predicate::And(all) });
    }
    Ok(match any.len() {
        0 => None,
        1 => Some(any.remove(0)),
        _ => Some(Predicate::Or(any)),
    })
}

/// The primary keys of the rows of `keys` (a batch with every primary-key column by name), each cast to its
/// column's type exactly.
pub(crate) fn keys_of(schema: &TableSchema, keys: &RecordBatch) -> PyResult<Vec<Vec<Option<Datum>>>> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.primary_keys.len());
    for k in &schema.primary_keys {
        let field = schema.field(k).py()?;
        let column = keys.column_by_name(k).ok_or_else(|| invalid("keys", format!("key column '{k}' is missing")))?;
        let typed = exact_cast(column, &field.data_type.with_nullable(true))
            .map_err(|r| invalid(&format!("keys column '{k}'"), r))?;
        columns.push(typed);
    }
    (0..keys.num_rows())
        .map(|r| columns.iter().map(|c| datum_at(c.as_ref(), r).py()).collect::<PyResult<Vec<_>>>())
        .collect()
}

/// One batch of `batches` (all of one schema), or an empty batch of `schema`.
pub(crate) fn concat(schema: &arrow_schema::SchemaRef, batches: &[RecordBatch]) -> PyResult<RecordBatch> {
    if batches.is_empty() {
        return Ok(RecordBatch::new_empty(Arc::clone(schema)));
    }
    arrow_select::concat::concat_batches(schema, batches).map_err(|e| invalid("rows", e))
}
