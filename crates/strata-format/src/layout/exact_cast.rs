//! Arrow columns into a Paimon type, exactly. A cast between two types of one family (numbers; dates;
//! times; timestamps; binary; text) is taken only where casting the result back gives the value given, so a
//! narrowing, a truncated fraction or a rounded float is refused: arrow's `cast` makes these null, or
//! truncates, without complaint, and a null in a nullable column would be a silently wrong row. What the
//! Arrow type alone does not bound is checked too: string and binary lengths, decimal digits, fractional
//! digits beyond a time or timestamp column's precision.
//!
//! Text into a column of another family is refused here: parsing text is an input format's business (the
//! CLI's jsonl and csv rules), not a typed writer's.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef};
use arrow_cast::cast::{cast_with_options, CastOptions};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType as ArrowType;
use strata_spec::{DataType, TypeRoot, MAX_LENGTH};

use crate::layout::arrow_types::to_arrow;

/// Why a column, or one of its values, cannot be stored as asked: the row (from 0; `None` for the whole
/// column), the value as text, and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CastRefusal {
    /// The first row refused, or `None` when the column's type is.
    pub row: Option<usize>,
    /// That row's value as text (empty for a column).
    pub value: String,
    /// Why.
    pub reason: String,
}

impl CastRefusal {
    /// A refusal of the whole column.
    pub fn column(reason: String) -> Self {
        CastRefusal { row: None, value: String::new(), reason }
    }

    /// A refusal of `array`'s value at `row`.
    pub fn at(array: &dyn Array, row: usize, reason: String) -> Self {
        CastRefusal { row: Some(row), value: display(array, row), reason }
    }
}

impl std::fmt::Display for CastRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.row {
            Some(row) => write!(f, "row {row}: value {} {}", self.value, self.reason),
            None => f.write_str(&self.reason),
        }
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

/// A family of types that convert into each other value by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeFamily {
    /// BOOLEAN.
    Boolean,
    /// Integers, floats and decimals.
    Number,
    /// Strings.
    Text,
    /// Byte strings.
    Binary,
    /// Dates.
    Date,
    /// Times of day.
    Time,
    /// A timestamp; whether it is an instant (has a time zone).
    Timestamp(bool),
    /// Nothing a table column holds.
    Other,
}

/// The family of an Arrow type.
pub fn arrow_family(t: &ArrowType) -> TypeFamily {
    use ArrowType::*;
    match t {
        Boolean => TypeFamily::Boolean,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float16 | Float32 | Float64 => {
            TypeFamily::Number
        }
        Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..) => TypeFamily::Number,
        Utf8 | LargeUtf8 | Utf8View => TypeFamily::Text,
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => TypeFamily::Binary,
        Date32 | Date64 => TypeFamily::Date,
        Time32(_) | Time64(_) => TypeFamily::Time,
        Timestamp(_, tz) => TypeFamily::Timestamp(tz.is_some()),
        _ => TypeFamily::Other,
    }
}

/// The family of a Paimon type.
pub fn paimon_family(t: &TypeRoot) -> TypeFamily {
    match t {
        TypeRoot::Boolean => TypeFamily::Boolean,
        TypeRoot::TinyInt
        | TypeRoot::SmallInt
        | TypeRoot::Int
        | TypeRoot::BigInt
        | TypeRoot::Float
        | TypeRoot::Double
        | TypeRoot::Decimal { .. } => TypeFamily::Number,
        TypeRoot::Char(_) | TypeRoot::VarChar(_) => TypeFamily::Text,
        TypeRoot::Binary(_) | TypeRoot::VarBinary(_) => TypeFamily::Binary,
        TypeRoot::Date => TypeFamily::Date,
        TypeRoot::Time(_) => TypeFamily::Time,
        TypeRoot::Timestamp(_) => TypeFamily::Timestamp(false),
        TypeRoot::LocalZonedTimestamp(_) => TypeFamily::Timestamp(true),
    }
}

/// `array` as a column of Paimon type `t` (its Arrow type, [`to_arrow`]), every value unchanged, or the
/// first value (or the column type) that cannot be. Dictionary-encoded columns are decoded first.
pub fn exact_cast(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, CastRefusal> {
    let array = plain(array)?;
    let want = to_arrow(t);
    let converted = match (arrow_family(array.data_type()), paimon_family(&t.root)) {
        _ if array.data_type() == &want => array.clone(),
        // A column of nulls only (what `pa.array([None])` infers) is null in any type.
        _ if array.data_type() == &ArrowType::Null => arrow_array::new_null_array(&want, array.len()),
        (TypeFamily::Timestamp(true), TypeFamily::Timestamp(false)) => {
            return Err(CastRefusal::column(format!(
                "the column holds instants ({}); {} holds date-times without a time zone (make the column TIMESTAMP WITH LOCAL TIME ZONE)",
                array.data_type(),
                t.root
            )))
        }
        (TypeFamily::Timestamp(false), TypeFamily::Timestamp(true)) => {
            return Err(CastRefusal::column(format!(
                "the column holds date-times without a time zone ({}); {} holds instants",
                array.data_type(),
                t.root
            )))
        }
        (TypeFamily::Number, TypeFamily::Number)
        | (TypeFamily::Boolean, TypeFamily::Boolean)
        | (TypeFamily::Text, TypeFamily::Text)
        | (TypeFamily::Binary, TypeFamily::Binary)
        | (TypeFamily::Date, TypeFamily::Date)
        | (TypeFamily::Time, TypeFamily::Time)
        | (TypeFamily::Timestamp(_), TypeFamily::Timestamp(_)) => round_trip(&positive_zeros(&array, &want), t)?,
        _ => {
            return Err(CastRefusal::column(format!(
                "the column is {}, which {} cannot hold exactly",
                array.data_type(),
                t.root
            )))
        }
    };
    check_values(&converted, t)?;
    Ok(converted)
}

/// `array` without dictionary encoding, and half-precision floats as single-precision ones (every
/// half-precision value is one, and arrow casts few types from half precision).
pub fn plain(array: &ArrayRef) -> Result<ArrayRef, CastRefusal> {
    match array.data_type() {
        ArrowType::Dictionary(_, values) => {
            let decoded = cast_with_options(array, values, &CastOptions { safe: false, ..Default::default() })
                .map_err(|e| CastRefusal::column(format!("cannot read its dictionary: {e}")))?;
            plain(&decoded)
        }
        ArrowType::Float16 => cast_with_options(array, &ArrowType::Float32, &CastOptions::default())
            .map_err(|e| CastRefusal::column(format!("cannot read its values: {e}"))),
        _ => Ok(array.clone()),
    }
}

/// Casts, then casts back: a value whose result is null or comes back different is refused.
fn round_trip(array: &ArrayRef, t: &DataType) -> Result<ArrayRef, CastRefusal> {
    let want = &to_arrow(t);
    let opts = CastOptions { safe: true, ..Default::default() };
    let cannot =
        |e: arrow_schema::ArrowError| CastRefusal::column(format!("cannot be cast from {}: {e}", array.data_type()));
    let out = cast_with_options(array, want, &opts).map_err(cannot)?;
    let back = cast_with_options(&out, array.data_type(), &opts).map_err(cannot)?;
    let same = arrow_ord::cmp::not_distinct(&back, array).map_err(cannot)?;
    if let Some(row) = (0..array.len()).find(|&r| array.is_valid(r) && !same.value(r)) {
        let reason = format!("cannot be stored as {} without changing it", t.root);
        return Err(CastRefusal::at(array.as_ref(), row, reason));
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

/// Checks what the Arrow type alone does not: string and binary lengths, decimal digits, fractional
/// digits beyond a time or timestamp column's precision. `array` is of `t`'s Arrow type.
pub fn check_values(array: &ArrayRef, t: &DataType) -> Result<(), CastRefusal> {
    let name = t.root.to_string();
    let bad = |row: usize, reason: String| Err(CastRefusal::at(array.as_ref(), row, reason));
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
                .map_err(|e| CastRefusal::column(e.to_string()))?;
            let v = v.as_primitive::<arrow_array::types::Int64Type>();
            if let Some(row) = (0..v.len()).find(|&r| v.is_valid(r) && v.value(r) % unit != 0) {
                return bad(row, format!("has more fractional digits than {name} holds"));
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int64Array, StringArray, TimestampMicrosecondArray};

    fn t(s: &str) -> DataType {
        s.parse().unwrap()
    }

    #[test]
    fn widening_and_fitting_values_are_taken() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(-7)]));
        let out = exact_cast(&a, &t("INT")).unwrap();
        assert_eq!(out.as_primitive::<arrow_array::types::Int32Type>().values(), &[1, 0, -7]);
        assert!(out.is_null(1));
        let f: ArrayRef = Arc::new(Float64Array::from(vec![2.0, -0.0]));
        assert_eq!(
            exact_cast(&f, &t("BIGINT")).unwrap().as_primitive::<arrow_array::types::Int64Type>().values(),
            &[2, 0]
        );
    }

    #[test]
    fn values_that_would_change_are_refused_with_their_row() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 1 << 40]));
        let r = exact_cast(&a, &t("INT")).unwrap_err();
        assert_eq!((r.row, r.value.as_str()), (Some(1), "1099511627776"));
        let f: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 1.5]));
        assert_eq!(exact_cast(&f, &t("BIGINT")).unwrap_err().row, Some(1));
        let s: ArrayRef = Arc::new(StringArray::from(vec!["abc", "abcdef"]));
        assert_eq!(exact_cast(&s, &t("VARCHAR(5)")).unwrap_err().row, Some(1));
        let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![1_000, 1_001]));
        assert_eq!(exact_cast(&ts, &t("TIMESTAMP(3)")).unwrap_err().row, Some(1));
    }

    #[test]
    fn other_families_and_zones_are_refused_as_a_column() {
        let s: ArrayRef = Arc::new(StringArray::from(vec!["1"]));
        assert_eq!(exact_cast(&s, &t("BIGINT")).unwrap_err().row, None);
        let nulls: ArrayRef = Arc::new(arrow_array::NullArray::new(2));
        assert_eq!(exact_cast(&nulls, &t("STRING")).unwrap().null_count(), 2);
        let instants: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![1]).with_timezone("UTC"));
        assert_eq!(exact_cast(&instants, &t("TIMESTAMP(6)")).unwrap_err().row, None);
    }
}
