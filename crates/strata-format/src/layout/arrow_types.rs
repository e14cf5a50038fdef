//! Paimon types as Arrow types, and single values moved between Arrow arrays and [`Datum`]s.
//!
//! The mapping is pypaimon's and Paimon's Arrow one: STRING → Utf8, BYTES → Binary, DECIMAL(p, s) →
//! Decimal128(p, s), DATE → Date32, TIME → Time32(ms), TIMESTAMP(p) → Timestamp(ms | µs | ns) without a
//! zone, TIMESTAMP WITH LOCAL TIME ZONE → the same with zone "UTC".

use std::sync::Arc;

use arrow_array::builder::*;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use strata_spec::{DataType, Datum, Error, Result, TypeRoot};

/// The Arrow type of a Paimon type.
pub fn to_arrow(t: &DataType) -> ArrowType {
    match t.root {
        TypeRoot::Boolean => ArrowType::Boolean,
        TypeRoot::TinyInt => ArrowType::Int8,
        TypeRoot::SmallInt => ArrowType::Int16,
        TypeRoot::Int => ArrowType::Int32,
        TypeRoot::BigInt => ArrowType::Int64,
        TypeRoot::Float => ArrowType::Float32,
        TypeRoot::Double => ArrowType::Float64,
        TypeRoot::Decimal { precision, scale } => ArrowType::Decimal128(precision, scale as i8),
        TypeRoot::Char(_) | TypeRoot::VarChar(_) => ArrowType::Utf8,
        TypeRoot::Binary(_) | TypeRoot::VarBinary(_) => ArrowType::Binary,
        TypeRoot::Date => ArrowType::Date32,
        TypeRoot::Time(_) => ArrowType::Time32(TimeUnit::Millisecond),
        TypeRoot::Timestamp(p) => ArrowType::Timestamp(unit_of(p), None),
        TypeRoot::LocalZonedTimestamp(p) => ArrowType::Timestamp(unit_of(p), Some(Arc::from("UTC"))),
    }
}

fn unit_of(precision: u8) -> TimeUnit {
    match precision {
        0..=3 => TimeUnit::Millisecond,
        4..=6 => TimeUnit::Microsecond,
        _ => TimeUnit::Nanosecond,
    }
}

/// Casts `array` (as a reader found it: dictionary-encoded, large strings, another timestamp unit) to the
/// Arrow type of `t`.
pub fn normalize(array: &ArrayRef, t: &DataType) -> Result<ArrayRef> {
    let want = to_arrow(t);
    if array.data_type() == &want {
        return Ok(array.clone());
    }
    arrow_cast::cast(array, &want)
        .map_err(|e| Error::invalid("column type", format!("cannot read {} as {t}: {e}", array.data_type())))
}

fn split_millis(v: i64, unit: &TimeUnit) -> (i64, i32) {
    match unit {
        TimeUnit::Second => (v.saturating_mul(1000), 0),
        TimeUnit::Millisecond => (v, 0),
        TimeUnit::Microsecond => (v.div_euclid(1000), (v.rem_euclid(1000) * 1000) as i32),
        TimeUnit::Nanosecond => (v.div_euclid(1_000_000), v.rem_euclid(1_000_000) as i32),
    }
}

/// The value at `row` of `array` (already of the Arrow type of its Paimon type), or `None` when null.
pub fn datum_at(array: &dyn Array, row: usize) -> Result<Option<Datum>> {
    if array.is_null(row) {
        return Ok(None);
    }
    let d = match array.data_type() {
        ArrowType::Boolean => Datum::Boolean(array.as_boolean().value(row)),
        ArrowType::Int8 => Datum::TinyInt(array.as_primitive::<Int8Type>().value(row)),
        ArrowType::Int16 => Datum::SmallInt(array.as_primitive::<Int16Type>().value(row)),
        ArrowType::Int32 => Datum::Int(array.as_primitive::<Int32Type>().value(row)),
        ArrowType::Int64 => Datum::BigInt(array.as_primitive::<Int64Type>().value(row)),
        ArrowType::Float32 => Datum::Float(array.as_primitive::<Float32Type>().value(row)),
        ArrowType::Float64 => Datum::Double(array.as_primitive::<Float64Type>().value(row)),
        ArrowType::Decimal128(_, _) => Datum::Decimal(array.as_primitive::<Decimal128Type>().value(row)),
        ArrowType::Utf8 => Datum::String(array.as_string::<i32>().value(row).to_string()),
        ArrowType::LargeUtf8 => Datum::String(array.as_string::<i64>().value(row).to_string()),
        ArrowType::Binary => Datum::Bytes(array.as_binary::<i32>().value(row).to_vec()),
        ArrowType::LargeBinary => Datum::Bytes(array.as_binary::<i64>().value(row).to_vec()),
        ArrowType::Date32 => Datum::Date(array.as_primitive::<Date32Type>().value(row)),
        ArrowType::Time32(TimeUnit::Millisecond) => {
            Datum::Time(array.as_primitive::<Time32MillisecondType>().value(row))
        }
        ArrowType::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            let (millis, nanos) = split_millis(v, unit);
            Datum::Timestamp { millis, nanos }
        }
        other => return Err(Error::unsupported(format!("Arrow type {other} in a data file"))),
    };
    Ok(Some(d))
}

/// Builds an array of Paimon type `t` from values.
pub fn array_of(t: &DataType, values: &[Option<Datum>]) -> Result<ArrayRef> {
    let bad = |d: &Datum| Error::invalid("value", format!("{d:?} is not a {t}"));
    macro_rules! prim {
        ($builder:ty, $variant:ident) => {{
            let mut b = <$builder>::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Datum::$variant(x)) => b.append_value(*x),
                    Some(d) => return Err(bad(d)),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    let arr: ArrayRef = match t.root {
        TypeRoot::Boolean => prim!(BooleanBuilder, Boolean),
        TypeRoot::TinyInt => prim!(Int8Builder, TinyInt),
        TypeRoot::SmallInt => prim!(Int16Builder, SmallInt),
        TypeRoot::Int => prim!(Int32Builder, Int),
        TypeRoot::BigInt => prim!(Int64Builder, BigInt),
        TypeRoot::Float => prim!(Float32Builder, Float),
        TypeRoot::Double => prim!(Float64Builder, Double),
        TypeRoot::Date => prim!(Date32Builder, Date),
        TypeRoot::Time(_) => prim!(Time32MillisecondBuilder, Time),
        TypeRoot::Decimal { precision, scale } => {
            let mut b = Decimal128Builder::with_capacity(values.len());
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Datum::Decimal(x)) => b.append_value(*x),
                    Some(d) => return Err(bad(d)),
                }
            }
            Arc::new(
                b.finish()
                    .with_precision_and_scale(precision, scale as i8)
                    .map_err(|e| Error::invalid_from("decimal", e))?,
            )
        }
        TypeRoot::Char(_) | TypeRoot::VarChar(_) => {
            let mut b = StringBuilder::with_capacity(values.len(), values.len() * 8);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Datum::String(s)) => b.append_value(s),
                    Some(d) => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        TypeRoot::Binary(_) | TypeRoot::VarBinary(_) => {
            let mut b = BinaryBuilder::with_capacity(values.len(), values.len() * 8);
            for v in values {
                match v {
                    None => b.append_null(),
                    Some(Datum::Bytes(x)) => b.append_value(x),
                    Some(d) => return Err(bad(d)),
                }
            }
            Arc::new(b.finish())
        }
        TypeRoot::Timestamp(p) | TypeRoot::LocalZonedTimestamp(p) => {
            let raw: Vec<Option<i64>> = values
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some(Datum::Timestamp { millis, nanos }) => Ok(Some(match unit_of(p) {
                        TimeUnit::Millisecond => *millis,
                        TimeUnit::Microsecond => millis * 1000 + i64::from(*nanos) / 1000,
                        _ => millis * 1_000_000 + i64::from(*nanos),
                    })),
                    Some(d) => Err(bad(d)),
                })
                .collect::<Result<_>>()?;
            let tz = matches!(t.root, TypeRoot::LocalZonedTimestamp(_)).then(|| Arc::<str>::from("UTC"));
            match unit_of(p) {
                TimeUnit::Millisecond => Arc::new(TimestampMillisecondArray::from(raw).with_timezone_opt(tz)),
                TimeUnit::Microsecond => Arc::new(TimestampMicrosecondArray::from(raw).with_timezone_opt(tz)),
                _ => Arc::new(TimestampNanosecondArray::from(raw).with_timezone_opt(tz)),
            }
        }
    };
    Ok(arr)
}

use arrow_array::{TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray};
