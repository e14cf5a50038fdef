//! One column of a batch being read, built value by value in the table's Arrow type; every value is taken
//! exactly or refused with the reason (the caller names the file, line and column).

use std::sync::Arc;

use arrow_array::builder::*;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray};
use strata_spec::{DataType, TypeRoot, MAX_LENGTH};

use super::{number, temporal};

/// An input value before it meets its column: JSON gives all four, CSV and parquet strings give text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    /// JSON `null`, an empty CSV field.
    Null,
    /// JSON `true` / `false`.
    Bool(bool),
    /// A JSON number, as written.
    Number(&'a str),
    /// A JSON string (unescaped) or a CSV field.
    Text(&'a str),
}

enum Data {
    Boolean(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Decimal(Decimal128Builder, u8, u8),
    Utf8(StringBuilder, u32),
    Binary(BinaryBuilder, u32),
    Date(Date32Builder),
    Time(Time32MillisecondBuilder, u8),
    /// Raw values in the column's unit; precision, and whether the column is WITH LOCAL TIME ZONE.
    Timestamp(PrimitiveBuilder<Int64Type>, u8, bool),
}

/// Builds one column of the table's type from input values.
pub(crate) struct ColumnBuilder {
    t: DataType,
    type_name: String,
    data: Data,
}

impl ColumnBuilder {
    /// An empty column of type `t`.
    pub(crate) fn new(t: DataType) -> Self {
        let data = match t.root {
            TypeRoot::Boolean => Data::Boolean(BooleanBuilder::new()),
            TypeRoot::TinyInt => Data::I8(Int8Builder::new()),
            TypeRoot::SmallInt => Data::I16(Int16Builder::new()),
            TypeRoot::Int => Data::I32(Int32Builder::new()),
            TypeRoot::BigInt => Data::I64(Int64Builder::new()),
            TypeRoot::Float => Data::F32(Float32Builder::new()),
            TypeRoot::Double => Data::F64(Float64Builder::new()),
            TypeRoot::Decimal { precision, scale } => Data::Decimal(Decimal128Builder::new(), precision, scale),
            TypeRoot::Char(n) | TypeRoot::VarChar(n) => Data::Utf8(StringBuilder::new(), n),
            TypeRoot::Binary(n) | TypeRoot::VarBinary(n) => Data::Binary(BinaryBuilder::new(), n),
            TypeRoot::Date => Data::Date(Date32Builder::new()),
            TypeRoot::Time(p) => Data::Time(Time32MillisecondBuilder::new(), p),
            TypeRoot::Timestamp(p) => Data::Timestamp(PrimitiveBuilder::new(), p, false),
            TypeRoot::LocalZonedTimestamp(p) => Data::Timestamp(PrimitiveBuilder::new(), p, true),
        };
        ColumnBuilder { t, type_name: t.root.to_string(), data }
    }

    /// Appends `v`, or says why it is not a value of the column (nothing is appended then).
    pub(crate) fn push(&mut self, v: Value<'_>) -> Result<(), String> {
        match v {
            Value::Null if !self.t.nullable => Err("is not allowed: the column is NOT NULL".to_string()),
            Value::Null => {
                self.append_null();
                Ok(())
            }
            Value::Bool(b) => match &mut self.data {
                Data::Boolean(x) => {
                    x.append_value(b);
                    Ok(())
                }
                _ => Err(format!("is a boolean; {} does not take booleans", self.type_name)),
            },
            Value::Number(raw) => self.push_number(raw),
            Value::Text(s) => self.push_text(s),
        }
    }

    fn append_null(&mut self) {
        match &mut self.data {
            Data::Boolean(b) => b.append_null(),
            Data::I8(b) => b.append_null(),
            Data::I16(b) => b.append_null(),
            Data::I32(b) => b.append_null(),
            Data::I64(b) => b.append_null(),
            Data::F32(b) => b.append_null(),
            Data::F64(b) => b.append_null(),
            Data::Decimal(b, ..) => b.append_null(),
            Data::Utf8(b, _) => b.append_null(),
            Data::Binary(b, _) => b.append_null(),
            Data::Date(b) => b.append_null(),
            Data::Time(b, _) => b.append_null(),
            Data::Timestamp(b, ..) => b.append_null(),
        }
    }

    /// A JSON number: numeric columns take it exactly; others want text.
    fn push_number(&mut self, raw: &str) -> Result<(), String> {
        match self.data {
            Data::I8(_)
            | Data::I16(_)
            | Data::I32(_)
            | Data::I64(_)
            | Data::F32(_)
            | Data::F64(_)
            | Data::Decimal(..) => self.push_text(raw),
            Data::Utf8(..) => Err(format!("is a number; {} takes strings (quote the value)", self.type_name)),
            Data::Boolean(_) => Err(format!("is a number; {} takes true or false", self.type_name)),
            _ => Err(format!("is a number; {} takes text such as {}", self.type_name, example(&self.t.root))),
        }
    }

    /// Text (a JSON string or a CSV field) parsed as the column's type; surrounding blanks are ignored for
    /// all but string columns.
    fn push_text(&mut self, s: &str) -> Result<(), String> {
        let name = self.type_name.as_str();
        let trimmed = s.trim_ascii();
        match &mut self.data {
            Data::Boolean(b) => match trimmed {
                t if t.eq_ignore_ascii_case("true") => b.append_value(true),
                t if t.eq_ignore_ascii_case("false") => b.append_value(false),
                _ => return Err(format!("is not a boolean ({name} takes true or false)")),
            },
            Data::I8(b) => b.append_value(number::integer(trimmed, i8::MIN.into(), i8::MAX.into(), name)? as i8),
            Data::I16(b) => b.append_value(number::integer(trimmed, i16::MIN.into(), i16::MAX.into(), name)? as i16),
            Data::I32(b) => b.append_value(number::integer(trimmed, i32::MIN.into(), i32::MAX.into(), name)? as i32),
            Data::I64(b) => b.append_value(number::integer(trimmed, i64::MIN.into(), i64::MAX.into(), name)? as i64),
            Data::F32(b) => b.append_value(number::float(trimmed, true, name)? as f32),
            Data::F64(b) => b.append_value(number::float(trimmed, false, name)?),
            Data::Decimal(b, p, sc) => b.append_value(number::decimal(trimmed, *p, *sc, name)?),
            Data::Utf8(b, n) => {
                if *n != MAX_LENGTH {
                    check_length(s.chars().count(), *n, "characters", name)?;
                }
                b.append_value(s);
            }
            Data::Binary(b, n) => {
                let bytes = hex(trimmed).ok_or_else(|| {
                    format!("is not hexadecimal ({name} takes hex digits, as strata scan prints them)")
                })?;
                check_length(bytes.len(), *n, "bytes", name)?;
                b.append_value(bytes);
            }
            Data::Date(b) => b.append_value(temporal::date(trimmed)?),
            Data::Time(b, p) => b.append_value(temporal::time(trimmed, *p, name)?),
            Data::Timestamp(b, p, zoned) => b.append_value(temporal::timestamp(trimmed, *p, *zoned, name)?),
        }
        Ok(())
    }

    /// The column built so far (the builder is empty again).
    pub(crate) fn finish(&mut self) -> ArrayRef {
        match &mut self.data {
            Data::Boolean(b) => Arc::new(b.finish()),
            Data::I8(b) => Arc::new(b.finish()),
            Data::I16(b) => Arc::new(b.finish()),
            Data::I32(b) => Arc::new(b.finish()),
            Data::I64(b) => Arc::new(b.finish()),
            Data::F32(b) => Arc::new(b.finish()),
            Data::F64(b) => Arc::new(b.finish()),
            // Every value was checked against the precision on the way in.
            Data::Decimal(b, p, s) => {
                Arc::new(b.finish().with_data_type(arrow_schema::DataType::Decimal128(*p, *s as i8)))
            }
            Data::Utf8(b, _) => Arc::new(b.finish()),
            Data::Binary(b, _) => Arc::new(b.finish()),
            Data::Date(b) => Arc::new(b.finish()),
            Data::Time(b, _) => Arc::new(b.finish()),
            Data::Timestamp(b, p, zoned) => {
                let (_, values, nulls) = b.finish().into_parts();
                let tz = zoned.then(|| Arc::<str>::from("UTC"));
                match p {
                    0..=3 => Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(tz)),
                    4..=6 => Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(tz)),
                    _ => Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone_opt(tz)),
                }
            }
        }
    }
}

fn check_length(len: usize, max: u32, what: &str, type_name: &str) -> Result<(), String> {
    if max != MAX_LENGTH && len > max as usize {
        return Err(format!("has {len} {what}, more than {type_name} holds"));
    }
    Ok(())
}

/// Hex digits (either case) as bytes.
fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes().chunks(2).map(|p| Some(nibble(p[0])? << 4 | nibble(p[1])?)).collect()
}

/// What text a temporal or binary column takes.
fn example(t: &TypeRoot) -> &'static str {
    match t {
        TypeRoot::Date => "'2024-02-29'",
        TypeRoot::Time(_) => "'10:11:12.345'",
        TypeRoot::Timestamp(_) => "'2024-02-29 10:11:12.345'",
        TypeRoot::LocalZonedTimestamp(_) => "'2024-02-29T10:11:12.345Z'",
        _ => "hex digits ('68656c6c6f')",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn ty(s: &str) -> DataType {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn each_type_takes_exact_values_only() {
        let cases: &[(&str, Value, bool)] = &[
            ("BIGINT", Value::Number("1.9"), false),
            ("BIGINT", Value::Number("1.0"), true),
            ("BIGINT", Value::Text(" 12 "), true),
            ("INT", Value::Number("2147483648"), false),
            ("BOOLEAN", Value::Text("yes"), false),
            ("BOOLEAN", Value::Text("TRUE"), true),
            ("BOOLEAN", Value::Number("1"), false),
            ("STRING", Value::Number("1"), false),
            ("VARCHAR(3)", Value::Text("abcd"), false),
            ("VARCHAR(3)", Value::Text("héé"), true),
            ("BYTES", Value::Text("zz"), false),
            ("BINARY(2)", Value::Text("010203"), false),
            ("DECIMAL(5, 2)", Value::Number("1.234"), false),
            ("DECIMAL(5, 2)", Value::Number("999.99"), true),
            ("DECIMAL(5, 2)", Value::Number("1000"), false),
            ("DATE", Value::Number("19000"), false),
            ("TIMESTAMP(3)", Value::Text("2024-01-01 00:00:00.0001"), false),
            ("INT NOT NULL", Value::Null, false),
            ("INT", Value::Bool(true), false),
        ];
        for (t, v, ok) in cases {
            let mut b = ColumnBuilder::new(ty(t));
            let r = b.push(*v);
            assert_eq!(r.is_ok(), *ok, "{t} {v:?}: {r:?}");
            assert_eq!(b.finish().len(), usize::from(*ok), "{t} {v:?}: a refused value is not appended");
        }
    }

    #[test]
    fn finished_columns_have_the_tables_arrow_type() {
        for t in ["TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(9)", "DECIMAL(10, 2)", "BYTES", "TIME(3)"] {
            let t = ty(t);
            let mut b = ColumnBuilder::new(t);
            b.push(Value::Null).unwrap();
            assert_eq!(b.finish().data_type(), &strata_format::to_arrow(&t));
        }
    }
}
