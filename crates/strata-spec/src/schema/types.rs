//! Data types and their Paimon type strings.
//!
//! Matches Paimon's `org.apache.paimon.types.DataType` family for the atomic types and their
//! `asSerializableString()` form, which is what `schema/schema-N` stores ("BIGINT NOT NULL",
//! "STRING", "VARCHAR(10)", "DECIMAL(10, 2)", "TIMESTAMP(6)").

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// `VARCHAR(MAX_LENGTH)` is spelled `STRING`, `VARBINARY(MAX_LENGTH)` is `BYTES` (Java `Integer.MAX_VALUE`).
pub const MAX_LENGTH: u32 = i32::MAX as u32;

/// The kind of a data type, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeRoot {
    /// BOOLEAN
    Boolean,
    /// TINYINT (1 byte)
    TinyInt,
    /// SMALLINT (2 bytes)
    SmallInt,
    /// INT (4 bytes)
    Int,
    /// BIGINT (8 bytes)
    BigInt,
    /// FLOAT (4-byte IEEE 754)
    Float,
    /// DOUBLE (8-byte IEEE 754)
    Double,
    /// DECIMAL(precision, scale), precision 1..=38
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// CHAR(length)
    Char(u32),
    /// VARCHAR(length); `STRING` when length is [`MAX_LENGTH`]
    VarChar(u32),
    /// BINARY(length)
    Binary(u32),
    /// VARBINARY(length); `BYTES` when length is [`MAX_LENGTH`]
    VarBinary(u32),
    /// DATE (days since the epoch)
    Date,
    /// TIME(precision) (milliseconds of the day)
    Time(u8),
    /// TIMESTAMP(precision), without time zone
    Timestamp(u8),
    /// TIMESTAMP(precision) WITH LOCAL TIME ZONE
    LocalZonedTimestamp(u8),
}

/// A data type: its root and whether it admits nulls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataType {
    /// Kind and parameters.
    pub root: TypeRoot,
    /// Whether NULL is a value of the type.
    pub nullable: bool,
}

impl DataType {
    /// A nullable type of this root.
    pub fn nullable(root: TypeRoot) -> Self {
        DataType { root, nullable: true }
    }

    /// A NOT NULL type of this root.
    pub fn not_null(root: TypeRoot) -> Self {
        DataType { root, nullable: false }
    }

    /// The same type with the given nullability.
    pub fn with_nullable(self, nullable: bool) -> Self {
        DataType { nullable, ..self }
    }

    /// `STRING`
    pub fn string() -> Self {
        Self::nullable(TypeRoot::VarChar(MAX_LENGTH))
    }

    /// `BIGINT`
    pub fn bigint() -> Self {
        Self::nullable(TypeRoot::BigInt)
    }

    /// `INT`
    pub fn int() -> Self {
        Self::nullable(TypeRoot::Int)
    }

    /// Whether values of this type live in a BinaryRow's fixed-length part (Paimon's
    /// `BinaryRow.isInFixedLengthPart`).
    pub fn is_fixed_length(&self) -> bool {
        match self.root {
            TypeRoot::Decimal { precision, .. } => precision <= 18,
            TypeRoot::Timestamp(p) | TypeRoot::LocalZonedTimestamp(p) => p <= 3,
            TypeRoot::Char(_) | TypeRoot::VarChar(_) | TypeRoot::Binary(_) | TypeRoot::VarBinary(_) => false,
            _ => true,
        }
    }
}

impl fmt::Display for TypeRoot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TypeRoot::Boolean => f.write_str("BOOLEAN"),
            TypeRoot::TinyInt => f.write_str("TINYINT"),
            TypeRoot::SmallInt => f.write_str("SMALLINT"),
            TypeRoot::Int => f.write_str("INT"),
            TypeRoot::BigInt => f.write_str("BIGINT"),
            TypeRoot::Float => f.write_str("FLOAT"),
            TypeRoot::Double => f.write_str("DOUBLE"),
            TypeRoot::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            TypeRoot::Char(n) => write!(f, "CHAR({n})"),
            TypeRoot::VarChar(n) if n == MAX_LENGTH => f.write_str("STRING"),
            TypeRoot::VarChar(n) => write!(f, "VARCHAR({n})"),
            TypeRoot::Binary(n) => write!(f, "BINARY({n})"),
            TypeRoot::VarBinary(n) if n == MAX_LENGTH => f.write_str("BYTES"),
            TypeRoot::VarBinary(n) => write!(f, "VARBINARY({n})"),
            TypeRoot::Date => f.write_str("DATE"),
            TypeRoot::Time(p) => write!(f, "TIME({p})"),
            TypeRoot::Timestamp(p) => write!(f, "TIMESTAMP({p})"),
            TypeRoot::LocalZonedTimestamp(p) => write!(f, "TIMESTAMP({p}) WITH LOCAL TIME ZONE"),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.root)?;
        if !self.nullable {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

fn bad(input: &str, message: impl Into<String>) -> Error {
    Error::invalid(format!("type string '{input}'"), message)
}

/// Splits "NAME(args) REST" into ("NAME", Some("args"), "REST"), all trimmed.
fn split_type(s: &str) -> Result<(String, Option<String>, String)> {
    let s = s.trim();
    let name_end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    let name = s[..name_end].to_ascii_uppercase();
    let rest = s[name_end..].trim_start();
    if let Some(after_paren) = rest.strip_prefix('(') {
        let close = after_paren.find(')').ok_or_else(|| bad(s, "unclosed '('"))?;
        Ok((name, Some(after_paren[..close].trim().to_string()), after_paren[close + 1..].trim().to_string()))
    } else {
        Ok((name, None, rest.to_string()))
    }
}

fn parse_u32(input: &str, s: &str, what: &str) -> Result<u32> {
    s.trim().parse::<u32>().map_err(|_| bad(input, format!("{what} '{s}' is not a non-negative integer")))
}

fn precision_arg(input: &str, args: &Option<String>, default: u8, max: u8) -> Result<u8> {
    match args {
        None => Ok(default),
        Some(a) => {
            let p = parse_u32(input, a, "precision")?;
            if p > u32::from(max) {
                return Err(bad(input, format!("precision {p} is above {max}")));
            }
            Ok(p as u8)
        }
    }
}

fn length_arg(input: &str, args: &Option<String>, default: u32) -> Result<u32> {
    match args {
        None => Ok(default),
        Some(a) => {
            let n = parse_u32(input, a, "length")?;
            if n == 0 || n > MAX_LENGTH {
                return Err(bad(input, format!("length {n} is outside 1..={MAX_LENGTH}")));
            }
            Ok(n)
        }
    }
}

impl FromStr for DataType {
    type Err = Error;

    /// Parses a Paimon type string, e.g. `BIGINT NOT NULL`, `VARCHAR(10)`, `DECIMAL(10, 2)`,
    /// `TIMESTAMP(3) WITH LOCAL TIME ZONE`. Case-insensitive; SQL aliases (INTEGER, NUMERIC, …) accepted.
    fn from_str(input: &str) -> Result<Self> {
        let (name, args, rest) = split_type(input)?;
        let mut rest = rest.to_ascii_uppercase();
        let root = match name.as_str() {
            "BOOLEAN" | "BOOL" => TypeRoot::Boolean,
            "TINYINT" => TypeRoot::TinyInt,
            "SMALLINT" => TypeRoot::SmallInt,
            "INT" | "INTEGER" => TypeRoot::Int,
            "BIGINT" => TypeRoot::BigInt,
            "FLOAT" | "REAL" => TypeRoot::Float,
            "DOUBLE" => {
                if let Some(r) = rest.strip_prefix("PRECISION") {
                    rest = r.trim_start().to_string();
                }
                TypeRoot::Double
            }
            "DECIMAL" | "DEC" | "NUMERIC" => {
                let (precision, scale) = match &args {
                    None => (10, 0),
                    Some(a) => {
                        let mut parts = a.split(',');
                        let p = parse_u32(input, parts.next().unwrap_or(""), "precision")?;
                        let s = match parts.next() {
                            Some(s) => parse_u32(input, s, "scale")?,
                            None => 0,
                        };
                        if parts.next().is_some() {
                            return Err(bad(input, "DECIMAL takes at most two arguments"));
                        }
                        (p, s)
                    }
                };
                if !(1..=38).contains(&precision) {
                    return Err(bad(input, format!("decimal precision {precision} is outside 1..=38")));
                }
                if scale > precision {
                    return Err(bad(input, format!("decimal scale {scale} exceeds precision {precision}")));
                }
                TypeRoot::Decimal { precision: precision as u8, scale: scale as u8 }
            }
            "CHAR" | "CHARACTER" => TypeRoot::Char(length_arg(input, &args, 1)?),
            "VARCHAR" => TypeRoot::VarChar(length_arg(input, &args, 1)?),
            "STRING" => TypeRoot::VarChar(MAX_LENGTH),
            "BINARY" => TypeRoot::Binary(length_arg(input, &args, 1)?),
            "VARBINARY" => TypeRoot::VarBinary(length_arg(input, &args, 1)?),
            "BYTES" => TypeRoot::VarBinary(MAX_LENGTH),
            "DATE" => TypeRoot::Date,
            "TIME" => TypeRoot::Time(precision_arg(input, &args, 0, 9)?),
            "TIMESTAMP" => {
                let p = precision_arg(input, &args, 6, 9)?;
                if let Some(r) = rest.strip_prefix("WITH LOCAL TIME ZONE") {
                    rest = r.trim_start().to_string();
                    TypeRoot::LocalZonedTimestamp(p)
                } else {
                    if let Some(r) = rest.strip_prefix("WITHOUT TIME ZONE") {
                        rest = r.trim_start().to_string();
                    }
                    TypeRoot::Timestamp(p)
                }
            }
            "TIMESTAMP_LTZ" => TypeRoot::LocalZonedTimestamp(precision_arg(input, &args, 6, 9)?),
            "ARRAY" | "MAP" | "MULTISET" | "ROW" | "VARIANT" | "BLOB" | "VECTOR" => {
                return Err(Error::unsupported(format!("type '{}': Strata supports atomic types only", input.trim())))
            }
            "" => return Err(bad(input, "empty type")),
            other => return Err(bad(input, format!("unknown type '{other}'"))),
        };
        if matches!(
            root,
            TypeRoot::Boolean
                | TypeRoot::TinyInt
                | TypeRoot::SmallInt
                | TypeRoot::Int
                | TypeRoot::BigInt
                | TypeRoot::Float
                | TypeRoot::Double
                | TypeRoot::Date
        ) && args.is_some()
        {
            return Err(bad(input, format!("{name} takes no arguments")));
        }
        let nullable = match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
            [] => true,
            ["NULL"] => true,
            ["NOT", "NULL"] => false,
            _ => return Err(bad(input, format!("unexpected '{}' after the type", rest.trim()))),
        };
        Ok(DataType { root, nullable })
    }
}

impl serde::Serialize for DataType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for DataType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
            other => Err(serde::de::Error::custom(format!(
                "unsupported: nested type {other}: Strata supports atomic types only"
            ))),
        }
    }
}

/// Total order on floats as Paimon's comparators use (`Double.compare`: -0.0 < 0.0, NaN last).
pub(crate) fn compare_f64(a: f64, b: f64) -> Ordering {
    a.total_cmp(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_paimon_type_strings() {
        for s in [
            "BOOLEAN",
            "TINYINT",
            "SMALLINT",
            "INT",
            "BIGINT NOT NULL",
            "FLOAT",
            "DOUBLE",
            "DECIMAL(10, 2)",
            "DECIMAL(38, 10) NOT NULL",
            "STRING",
            "STRING NOT NULL",
            "VARCHAR(10)",
            "CHAR(3)",
            "BYTES",
            "BINARY(4)",
            "VARBINARY(9)",
            "DATE",
            "TIME(0)",
            "TIMESTAMP(6)",
            "TIMESTAMP(3) NOT NULL",
            "TIMESTAMP(6) WITH LOCAL TIME ZONE",
        ] {
            let t: DataType = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(t.to_string(), s);
        }
    }

    #[test]
    fn accepts_aliases() {
        assert_eq!("integer not null".parse::<DataType>().ok(), Some(DataType::not_null(TypeRoot::Int)));
        assert_eq!(
            "decimal".parse::<DataType>().ok().map(|t| t.root),
            Some(TypeRoot::Decimal { precision: 10, scale: 0 })
        );
        assert_eq!("TIMESTAMP".parse::<DataType>().ok().map(|t| t.root), Some(TypeRoot::Timestamp(6)));
        assert_eq!("VARCHAR(2147483647)".parse::<DataType>().ok().map(|t| t.to_string()), Some("STRING".into()));
    }

    #[test]
    fn rejects_bad_type_strings_with_typed_errors() {
        for s in [
            "BIGNUM",
            "",
            "DECIMAL(40, 2)",
            "DECIMAL(5, 6)",
            "VARCHAR(0)",
            "INT(3)",
            "BIGINT NOT",
            "VARCHAR(abc)",
            "TIMESTAMP(12)",
            "STRING NOT NULL extra",
        ] {
            let e = s.parse::<DataType>().err().unwrap_or_else(|| panic!("{s} parsed"));
            assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{s}: {e}");
        }
        let e = "ARRAY<INT>".parse::<DataType>().err().map(|e| e.kind());
        assert_eq!(e, Some(crate::ErrorKind::Unsupported));
    }
}
