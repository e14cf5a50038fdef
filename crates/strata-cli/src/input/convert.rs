//! Parquet columns into the table's types, exactly. A cast between two types of one family (numbers;
//! dates; times; timestamps; binary) is taken only where casting the result back gives the value read, so
//! a narrowing, a truncated fraction or a rounded float is refused (arrow's `cast` makes these null, or
//! truncates, without complaint); string columns go through the same text rules as csv and jsonl.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef};
use arrow_cast::cast::{cast_with_options, CastOptions};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType as ArrowType;
use strata_format::to_arrow;
use strata_spec::{DataType, TypeRoot, MAX_LENGTH};

use super::builder::{ColumnBuilder, Value};

/// Why a column or one of its values is refused: the row (from 0; `None` for the whole column), the value
/// as shown, and the reason.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub row: Option<usize>,
    pub value: String,
    pub reason: String,
}

impl Refusal {
    fn column(reason: String) -> Self {
        Refusal { row: None, value: String::new(), reason }
    }

    fn at(array: &dyn Array, row: usize, reason: String) -> Self {
        Refusal { row: Some(row), value: display(array, row), reason }
    }
}

/// A value of `array` as text.
fn display(array: &dyn Array, row: usize) -> String {
    let opts = FormatOptions::default().with_null("null");
    match ArrayFormatter::try_new(array, &opts) {
        Ok(f) => f.value(row).to_string(),
        Err(_) => "?".to_string(),
    }
}

enum Family {
    Boolean,
    Number,
    Text,
    Binary,
    Date,
    Time,
    /// A timestamp; whether it is an instant (has a time zone).
    Timestamp(bool),
    Other,
}

fn family(t: &ArrowType) -> Family {
    use ArrowType::*;
    match t {
        Boolean => Family::Boolean,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float16 | Float32 | Float64 => Family::Number,
        Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..) => Family::Number,
        Utf8 | LargeUtf8 | Utf8View => Family::Text,
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => Family::Binary,
        Date32 | Date64 => Family::Date,
        Time32(_) | Time64(_) => Family::Time,
        Timestamp(_, tz) => Family::Timestamp(tz.is_some()),
        _ => Family::Other,
    }
}

fn table_family(t: &TypeRoot) -> Family {
    match t {
        TypeRoot::Boolean => Family::Boolean,
        TypeRoot::TinyInt
        | TypeRoot::SmallInt
        | TypeRoot::Int
        | TypeRoot::BigInt
        | TypeRoot::Float
        | TypeRoot::Double
        | TypeRoot::Decimal { .. } => Family::Number,
        TypeRoot::Char(_) | TypeRoot::VarChar(_) => Family::Text,
        TypeRoot::Binary(_) | TypeRoot::VarBinary(_) => Family::Binary,
        TypeRoot::Date => Family::Date,
        TypeRoot::Time(_) => Family::Time,
        TypeRoot::Timestamp(_) => Family::Timestamp(false),
        TypeRoot::LocalZonedTimestamp(_) => Family::Timestamp(true),
    }
}

/// `array` as a column of type `t`, every value unchanged, or the first value that cannot be.
pub(crate) fn exact(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, Refusal> {
    if let ArrowType::Dictionary(_, values) = array.data_type() {
        let plain = cast_with_options(array, values, &CastOptions { safe: false, ..Default::default() })
            .map_err(|e| Refusal::column(format!("cannot read its dictionary: {e}")))?;
        return exact(&plain, t);
    }
    if array.data_type() == &ArrowType::Float16 {
        // Every half-precision value is a single-precision one.
        let single = cast_with_options(array, &ArrowType::Float32, &CastOptions::default())
            .map_err(|e| Refusal::column(format!("cannot read its values: {e}")))?;
        return exact(&single, t);
    }
    let want = to_arrow(t);
    let converted = match (family(array.data_type()), table_family(&t.root)) {
        _ if array.data_type() == &want => array.clone(),
        (Family::Text, Family::Text) => round_trip(array, t)?,
        (Family::Text, _) => parse_text(array, t)?,
        (Family::Timestamp(true), Family::Timestamp(false)) => {
            return Err(Refusal::column(format!(
                "the file's column holds instants ({}); {} holds date-times without a time zone (make the column TIMESTAMP WITH LOCAL TIME ZONE)",
                array.data_type(),
                t.root
            )))
        }
        (Family::Timestamp(false), Family::Timestamp(true)) => {
            return Err(Refusal::column(format!(
                "the file's column holds date-times without a time zone ({}); {} holds instants",
                array.data_type(),
                t.root
            )))
        }
        (Family::Number, Family::Number)
        | (Family::Boolean, Family::Boolean)
        | (Family::Binary, Family::Binary)
        | (Family::Date, Family::Date)
        | (Family::Time, Family::Time)
        | (Family::Timestamp(_), Family::Timestamp(_)) => round_trip(&positive_zeros(array, &want), t)?,
        _ => {
            return Err(Refusal::column(format!(
                "the file's column is {}, which {} cannot hold exactly",
                array.data_type(),
                t.root
            )))
        }
    };
    check_values(&converted, t)?;
    Ok(converted)
}

/// Casts, then casts back: a value whose result is null or comes back different is refused.
fn round_trip(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, Refusal> {
    let want = &to_arrow(t);
    let opts = CastOptions { safe: true, ..Default::default() };
    let cannot =
        |e: arrow_schema::ArrowError| Refusal::column(format!("cannot be cast from {}: {e}", array.data_type()));
    let out = cast_with_options(array, want, &opts).map_err(cannot)?;
    let back = cast_with_options(&out, array.data_type(), &opts).map_err(cannot)?;
    let same = arrow_ord::cmp::not_distinct(&back, array).map_err(cannot)?;
    if let Some(row) = (0..array.len()).find(|&r| array.is_valid(r) && !same.value(r)) {
        let reason = format!("cannot be stored as {} without changing it", t.root);
        return Err(Refusal::at(array.as_ref(), row, reason));
    }
    Ok(out)
}

/// Floats with -0.0 made 0.0 when the column is not a float (a whole-number or decimal zero has no sign,
/// and the round trip would otherwise refuse it).
fn positive_zeros(array: &ArrayRef, want: &ArrowType) -> ArrayRef {
    if matches!(want, ArrowType::Float32 | ArrowType::Float64) {
        return array.clone();
    }
    match array.data_type() {
        ArrowType::Float32 => Arc::new(array.as_primitive::<Float32Type>().unary::<_, Float32Type>(|v| v + 0.0)),
        ArrowType::Float64 => Arc::new(array.as_primitive::<Float64Type>().unary::<_, Float64Type>(|v| v + 0.0)),
        _ => array.clone(),
    }
}

/// Strings parsed by the same rules as csv and jsonl text.
fn parse_text(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, Refusal> {
    let strings = cast_with_options(array, &ArrowType::Utf8, &CastOptions::default())
        .map_err(|e| Refusal::column(format!("cannot read its strings: {e}")))?;
    let strings = strings.as_string::<i32>();
    let mut b = ColumnBuilder::new(t.with_nullable(true));
    for (row, v) in strings.iter().enumerate() {
        let value = v.map_or(Value::Null, Value::Text);
        b.push(value).map_err(|reason| Refusal::at(array.as_ref(), row, reason))?;
    }
    Ok(b.finish())
}

/// Checks what the Arrow type alone does not: string and binary lengths, decimal digits, fractional
/// digits beyond a time or timestamp column's precision.
fn check_values(array: &ArrayRef, t: &DataType) -> Result<(), Refusal> {
    let name = t.root.to_string();
    let bad = |row: usize, reason: String| Err(Refusal::at(array.as_ref(), row, reason));
    match t.root {
        TypeRoot::Char(n) | TypeRoot::VarChar(n) if n != MAX_LENGTH => {
            let s = array.as_string::<i32>();
            if let Some(row) = (0..s.len()).find(|&r| s.is_valid(r) && s.value(r).chars().count() > n as usize) {
                return bad(row, format!("has more characters than {name} holds"));
            }
        }
        TypeRoot::Binary(n) | TypeRoot::VarBinary(n) if n != MAX_LENGTH => {
            let s = array.as_binary::<i32>();
            if let Some(row) = (0..s.len()).find(|&r| s.is_valid(r) && s.value(r).len() > n as usize) {
                return bad(row, format!("has more bytes than {name} holds"));
            }
        }
        TypeRoot::Decimal { precision, .. } => {
            let d = array.as_primitive::<arrow_array::types::Decimal128Type>();
            let limit = 10i128.pow(u32::from(precision));
            if let Some(row) = (0..d.len()).find(|&r| d.is_valid(r) && d.value(r).unsigned_abs() >= limit as u128) {
                return bad(row, format!("has more digits than {name} holds"));
            }
        }
        TypeRoot::Time(p) if p < 3 => {
            let v = array.as_primitive::<arrow_array::types::Time32MillisecondType>();
            let unit = 10i32.pow(3 - u32::from(p));
            if let Some(row) = (0..v.len()).find(|&r| v.is_valid(r) && v.value(r) % unit != 0) {
                return bad(row, format!("has more fractional digits than {name} holds"));
            }
        }
        TypeRoot::Timestamp(p) | TypeRoot::LocalZonedTimestamp(p) if !matches!(p, 3 | 6 | 9) => {
            let unit_digits = match p {
                0..=3 => 3,
                4..=6 => 6,
                _ => 9,
            };
            let unit = 10i64.pow(unit_digits - u32::from(p));
            let v = cast_with_options(array, &ArrowType::Int64, &CastOptions::default())
                .map_err(|e| Refusal::column(e.to_string()))?;
            let v = v.as_primitive::<arrow_array::types::Int64Type>();
            if let Some(row) = (0..v.len()).find(|&r| v.is_valid(r) && v.value(r) % unit != 0) {
                return bad(row, format!("has more fractional digits than {name} holds"));
            }
        }
        _ => {}
    }
    Ok(())
}
