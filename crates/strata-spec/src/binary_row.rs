//! `BinaryRow`: Paimon's compact row encoding, used for partitions, min/max keys and stats rows.
//!
//! Matches `org.apache.paimon.data.BinaryRow` / `BinaryRowWriter`, and `SerializationUtils.serializeBinaryRow`
//! for the form stored in manifests (a 4-byte big-endian arity, then the row bytes).
//!
//! Layout of the row bytes: a null bit set of `((arity + 63 + 8) / 64) * 8` bytes whose first byte is the
//! row kind and whose bit `8 + i` marks field `i` null; then one 8-byte little-endian slot per field; then
//! the variable-length part, 8-byte aligned. A string or binary of at most 7 bytes sits in its slot with
//! `0x80 | len` in the slot's last byte; longer ones go to the variable part with `offset << 32 | len` in
//! the slot. DECIMAL with precision above 18 reserves 16 bytes there; TIMESTAMP with precision above 3
//! keeps its milliseconds there and the nano-of-millisecond in the slot.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{Error, Result};
use crate::schema::types::{compare_f64, DataType, TypeRoot};

/// One non-null value of an atomic type.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// BOOLEAN
    Boolean(bool),
    /// TINYINT
    TinyInt(i8),
    /// SMALLINT
    SmallInt(i16),
    /// INT
    Int(i32),
    /// BIGINT
    BigInt(i64),
    /// FLOAT
    Float(f32),
    /// DOUBLE
    Double(f64),
    /// DECIMAL: the unscaled value; precision and scale come from the type.
    Decimal(i128),
    /// CHAR / VARCHAR / STRING
    String(String),
    /// BINARY / VARBINARY / BYTES
    Bytes(Vec<u8>),
    /// DATE: days since 1970-01-01.
    Date(i32),
    /// TIME: milliseconds of the day.
    Time(i32),
    /// TIMESTAMP (with or without local time zone): milliseconds since the epoch and the
    /// nanoseconds within that millisecond (0..1_000_000).
    Timestamp {
        /// Milliseconds since 1970-01-01T00:00:00.
        millis: i64,
        /// Nanoseconds within the millisecond.
        nanos: i32,
    },
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Boolean(v) => write!(f, "{v}"),
            Datum::TinyInt(v) => write!(f, "{v}"),
            Datum::SmallInt(v) => write!(f, "{v}"),
            Datum::Int(v) => write!(f, "{v}"),
            Datum::BigInt(v) => write!(f, "{v}"),
            Datum::Float(v) => write!(f, "{v}"),
            Datum::Double(v) => write!(f, "{v}"),
            Datum::Decimal(v) => write!(f, "{v}"),
            Datum::String(v) => write!(f, "{v}"),
            Datum::Bytes(v) => {
                for b in v {
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
            Datum::Date(v) => write!(f, "{v}"),
            Datum::Time(v) => write!(f, "{v}"),
            Datum::Timestamp { millis, nanos } => write!(f, "{millis}.{nanos:06}"),
        }
    }
}

impl Datum {
    /// Renders the value as Paimon renders partition values in paths: DECIMAL with its scale.
    pub fn to_string_with_type(&self, ty: &DataType) -> String {
        match (self, ty.root) {
            (Datum::Decimal(v), TypeRoot::Decimal { scale, .. }) if scale > 0 => {
                let neg = *v < 0;
                let digits = v.unsigned_abs().to_string();
                let scale = usize::from(scale);
                let padded = if digits.len() <= scale {
                    format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
                } else {
                    digits
                };
                let (int, frac) = padded.split_at(padded.len() - scale);
                format!("{}{int}.{frac}", if neg { "-" } else { "" })
            }
            _ => self.to_string(),
        }
    }

    /// Compares two values of the same type as Paimon's key comparators do.
    pub fn compare(&self, other: &Datum) -> Ordering {
        use Datum::*;
        match (self, other) {
            (Boolean(a), Boolean(b)) => a.cmp(b),
            (TinyInt(a), TinyInt(b)) => a.cmp(b),
            (SmallInt(a), SmallInt(b)) => a.cmp(b),
            (Int(a), Int(b)) | (Date(a), Date(b)) | (Time(a), Time(b)) => a.cmp(b),
            (BigInt(a), BigInt(b)) => a.cmp(b),
            (Float(a), Float(b)) => compare_f64(f64::from(*a), f64::from(*b)),
            (Double(a), Double(b)) => compare_f64(*a, *b),
            (Decimal(a), Decimal(b)) => a.cmp(b),
            (String(a), String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Timestamp { millis: a, nanos: an }, Timestamp { millis: b, nanos: bn }) => (a, an).cmp(&(b, bn)),
            // Values of different types are never compared by well-formed callers; order by variant.
            (a, b) => a.variant_index().cmp(&b.variant_index()),
        }
    }

    fn variant_index(&self) -> u8 {
        match self {
            Datum::Boolean(_) => 0,
            Datum::TinyInt(_) => 1,
            Datum::SmallInt(_) => 2,
            Datum::Int(_) => 3,
            Datum::BigInt(_) => 4,
            Datum::Float(_) => 5,
            Datum::Double(_) => 6,
            Datum::Decimal(_) => 7,
            Datum::String(_) => 8,
            Datum::Bytes(_) => 9,
            Datum::Date(_) => 10,
            Datum::Time(_) => 11,
            Datum::Timestamp { .. } => 12,
        }
    }
}

/// Compares two rows field by field, nulls first (Paimon's generated record comparators).
pub fn compare_rows(a: &[Option<Datum>], b: &[Option<Datum>]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.compare(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// The row kind stored in a BinaryRow header byte (Paimon's `RowKind`).
pub(crate) const ROW_KIND_INSERT: u8 = 0;

/// A row in Paimon's binary layout. `data` excludes the arity prefix used in manifests.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BinaryRow {
    arity: usize,
    data: Vec<u8>,
}

impl fmt::Debug for BinaryRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BinaryRow(arity={}, {} bytes)", self.arity, self.data.len())
    }
}

fn null_bits_width(arity: usize) -> usize {
    (arity + 63 + 8) / 64 * 8
}

fn round_to_word(n: usize) -> usize {
    n.div_ceil(8) * 8
}

fn encode_len(len: usize, what: &str) -> Result<u64> {
    u32::try_from(len)
        .map(u64::from)
        .map_err(|_| Error::invalid("BinaryRow field", format!("{what} of {len} bytes is too long")))
}

/// Minimal big-endian two's complement bytes of `v`, as Java's `BigInteger.toByteArray`.
fn i128_to_be_min(v: i128) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let b = bytes[start];
        let next_high = bytes[start + 1] & 0x80;
        if (b == 0x00 && next_high == 0) || (b == 0xff && next_high != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}

fn be_to_i128(b: &[u8]) -> Result<i128> {
    if b.is_empty() || b.len() > 16 {
        return Err(Error::corrupt(format!("decimal of {} bytes", b.len())));
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0x00 };
    let mut full = [fill; 16];
    full[16 - b.len()..].copy_from_slice(b);
    Ok(i128::from_be_bytes(full))
}

impl Default for BinaryRow {
    fn default() -> Self {
        BinaryRow::empty()
    }
}

impl BinaryRow {
    /// The row of arity 0 (`BinaryRow.EMPTY_ROW`): unpartitioned tables' partition, empty stats.
    pub fn empty() -> Self {
        BinaryRow { arity: 0, data: vec![0u8; null_bits_width(0)] }
    }

    /// Number of fields.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// The row bytes (without the arity prefix).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Encodes `values` of `types` (same length) as Paimon's `BinaryRowWriter` does.
    pub fn from_datums(values: &[Option<Datum>], types: &[DataType]) -> Result<Self> {
        if values.len() != types.len() {
            return Err(Error::invalid("BinaryRow", format!("{} values for {} types", values.len(), types.len())));
        }
        let arity = values.len();
        let header = null_bits_width(arity);
        let fixed = header + 8 * arity;
        let mut data = vec![0u8; fixed];
        data[0] = ROW_KIND_INSERT;
        for (i, (value, ty)) in values.iter().zip(types).enumerate() {
            let slot = header + 8 * i;
            let set_null = |data: &mut Vec<u8>| {
                let bit = i + 8;
                data[bit / 8] |= 1 << (bit % 8);
            };
            let put_slot = |data: &mut Vec<u8>, v: u64| data[slot..slot + 8].copy_from_slice(&v.to_le_bytes());
            match (value, ty.root) {
                (None, TypeRoot::Decimal { precision, .. }) if precision > 18 => {
                    // Java reserves the 16 bytes even for null, keeping the offset for a later update.
                    let off = data.len() as u64;
                    data.extend_from_slice(&[0u8; 16]);
                    set_null(&mut data);
                    put_slot(&mut data, off << 32);
                }
                (None, TypeRoot::Timestamp(p) | TypeRoot::LocalZonedTimestamp(p)) if p > 3 => {
                    let off = data.len() as u64;
                    data.extend_from_slice(&[0u8; 8]);
                    set_null(&mut data);
                    put_slot(&mut data, off << 32);
                }
                (None, _) => set_null(&mut data),
                (Some(d), root) => Self::write_value(&mut data, slot, d, root, ty)?,
            }
        }
        Ok(BinaryRow { arity, data })
    }

    fn write_value(data: &mut Vec<u8>, slot: usize, d: &Datum, root: TypeRoot, ty: &DataType) -> Result<()> {
        let mismatch = || Error::invalid("BinaryRow field", format!("value {d:?} does not fit type {ty}"));
        let mut fixed = |bytes: &[u8]| data[slot..slot + bytes.len()].copy_from_slice(bytes);
        match (d, root) {
            (Datum::Boolean(v), TypeRoot::Boolean) => fixed(&[u8::from(*v)]),
            (Datum::TinyInt(v), TypeRoot::TinyInt) => fixed(&v.to_le_bytes()),
            (Datum::SmallInt(v), TypeRoot::SmallInt) => fixed(&v.to_le_bytes()),
            (Datum::Int(v), TypeRoot::Int) | (Datum::Date(v), TypeRoot::Date) | (Datum::Time(v), TypeRoot::Time(_)) => {
                fixed(&v.to_le_bytes())
            }
            (Datum::BigInt(v), TypeRoot::BigInt) => fixed(&v.to_le_bytes()),
            (Datum::Float(v), TypeRoot::Float) => fixed(&v.to_le_bytes()),
            (Datum::Double(v), TypeRoot::Double) => fixed(&v.to_le_bytes()),
            (Datum::Decimal(v), TypeRoot::Decimal { precision, .. }) => {
                if precision <= 18 {
                    let v = i64::try_from(*v).map_err(|_| mismatch())?;
                    fixed(&v.to_le_bytes());
                } else {
                    let bytes = i128_to_be_min(*v);
                    let off = data.len() as u64;
                    let mut reserved = [0u8; 16];
                    reserved[..bytes.len()].copy_from_slice(&bytes);
                    data.extend_from_slice(&reserved);
                    data[slot..slot + 8].copy_from_slice(&((off << 32) | bytes.len() as u64).to_le_bytes());
                }
            }
            (Datum::Timestamp { millis, nanos }, TypeRoot::Timestamp(p) | TypeRoot::LocalZonedTimestamp(p)) => {
                if p <= 3 {
                    fixed(&millis.to_le_bytes());
                } else {
                    let off = data.len() as u64;
                    data.extend_from_slice(&millis.to_le_bytes());
                    let nanos = u64::try_from(*nanos).map_err(|_| mismatch())?;
                    data[slot..slot + 8].copy_from_slice(&((off << 32) | nanos).to_le_bytes());
                }
            }
            (Datum::String(s), TypeRoot::Char(_) | TypeRoot::VarChar(_)) => Self::write_var(data, slot, s.as_bytes())?,
            (Datum::Bytes(b), TypeRoot::Binary(_) | TypeRoot::VarBinary(_)) => Self::write_var(data, slot, b)?,
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    fn write_var(data: &mut Vec<u8>, slot: usize, bytes: &[u8]) -> Result<()> {
        if bytes.len() <= 7 {
            data[slot..slot + bytes.len()].copy_from_slice(bytes);
            data[slot + 7] = 0x80 | bytes.len() as u8;
        } else {
            let len = encode_len(bytes.len(), "string or binary")?;
            let off = data.len() as u64;
            data.extend_from_slice(bytes);
            data.resize(round_to_word(data.len()), 0);
            data[slot..slot + 8].copy_from_slice(&((off << 32) | len).to_le_bytes());
        }
        Ok(())
    }

    /// Whether field `i` is null.
    pub fn is_null_at(&self, i: usize) -> bool {
        let bit = i + 8;
        self.data.get(bit / 8).is_some_and(|b| b & (1 << (bit % 8)) != 0)
    }

    fn slot(&self, i: usize) -> Result<[u8; 8]> {
        let off = null_bits_width(self.arity) + 8 * i;
        self.data
            .get(off..off + 8)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| Error::corrupt(format!("BinaryRow of {} bytes has no slot for field {i}", self.data.len())))
    }

    fn var_part(&self, slot: [u8; 8], what: &str) -> Result<&[u8]> {
        let v = u64::from_le_bytes(slot);
        let off = (v >> 32) as usize;
        let len = (v & 0xffff_ffff) as usize;
        self.data.get(off..off.saturating_add(len)).ok_or_else(|| {
            Error::corrupt(format!(
                "BinaryRow {what} at offset {off} length {len} is beyond its {} bytes",
                self.data.len()
            ))
        })
    }

    fn var_bytes(&self, slot: [u8; 8]) -> Result<Vec<u8>> {
        if slot[7] & 0x80 != 0 {
            let len = usize::from(slot[7] & 0x7f);
            if len > 7 {
                return Err(Error::corrupt(format!("inline BinaryRow value of length {len}")));
            }
            Ok(slot[..len].to_vec())
        } else {
            Ok(self.var_part(slot, "string")?.to_vec())
        }
    }

    /// Field `i` decoded as `ty`; `None` when null.
    pub fn get(&self, i: usize, ty: &DataType) -> Result<Option<Datum>> {
        if i >= self.arity {
            return Err(Error::corrupt(format!("BinaryRow of arity {} has no field {i}", self.arity)));
        }
        if self.is_null_at(i) {
            return Ok(None);
        }
        let s = self.slot(i)?;
        let i32_at = || i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let d = match ty.root {
            TypeRoot::Boolean => Datum::Boolean(s[0] != 0),
            TypeRoot::TinyInt => Datum::TinyInt(s[0] as i8),
            TypeRoot::SmallInt => Datum::SmallInt(i16::from_le_bytes([s[0], s[1]])),
            TypeRoot::Int => Datum::Int(i32_at()),
            TypeRoot::Date => Datum::Date(i32_at()),
            TypeRoot::Time(_) => Datum::Time(i32_at()),
            TypeRoot::BigInt => Datum::BigInt(i64::from_le_bytes(s)),
            TypeRoot::Float => Datum::Float(f32::from_le_bytes([s[0], s[1], s[2], s[3]])),
            TypeRoot::Double => Datum::Double(f64::from_le_bytes(s)),
            TypeRoot::Decimal { precision, .. } => {
                if precision <= 18 {
                    Datum::Decimal(i128::from(i64::from_le_bytes(s)))
                } else {
                    Datum::Decimal(be_to_i128(self.var_part(s, "decimal")?)?)
                }
            }
            TypeRoot::Timestamp(p) | TypeRoot::LocalZonedTimestamp(p) => {
                if p <= 3 {
                    Datum::Timestamp { millis: i64::from_le_bytes(s), nanos: 0 }
                } else {
                    let v = u64::from_le_bytes(s);
                    let off = (v >> 32) as usize;
                    let nanos = (v & 0xffff_ffff) as i32;
                    let m = self.data.get(off..off + 8).and_then(|b| b.try_into().ok()).ok_or_else(|| {
                        Error::corrupt(format!("BinaryRow timestamp at offset {off} is out of bounds"))
                    })?;
                    Datum::Timestamp { millis: i64::from_le_bytes(m), nanos }
                }
            }
            TypeRoot::Char(_) | TypeRoot::VarChar(_) => {
                let b = self.var_bytes(s)?;
                Datum::String(
                    String::from_utf8(b).map_err(|_| Error::corrupt(format!("BinaryRow field {i} is not UTF-8")))?,
                )
            }
            TypeRoot::Binary(_) | TypeRoot::VarBinary(_) => Datum::Bytes(self.var_bytes(s)?),
        };
        Ok(Some(d))
    }

    /// Decodes every field by `types`.
    pub fn to_datums(&self, types: &[DataType]) -> Result<Vec<Option<Datum>>> {
        if types.len() != self.arity {
            return Err(Error::corrupt(format!(
                "BinaryRow has arity {} where the schema has {} fields",
                self.arity,
                types.len()
            )));
        }
        types.iter().enumerate().map(|(i, t)| self.get(i, t)).collect()
    }

    /// The manifest form: 4-byte big-endian arity, then the row bytes (`SerializationUtils.serializeBinaryRow`).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.data.len());
        out.extend_from_slice(&(self.arity as u32).to_be_bytes());
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads the manifest form written by [`BinaryRow::serialize`].
    pub fn deserialize(bytes: &[u8]) -> Result<Self> {
        let arity_bytes: [u8; 4] = bytes
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| Error::corrupt(format!("BinaryRow of {} bytes has no arity", bytes.len())))?;
        let arity = i32::from_be_bytes(arity_bytes);
        let arity = usize::try_from(arity).map_err(|_| Error::corrupt(format!("BinaryRow arity {arity}")))?;
        let data = bytes[4..].to_vec();
        let need = null_bits_width(arity).saturating_add(arity.saturating_mul(8));
        if data.len() < need {
            return Err(Error::corrupt(format!(
                "BinaryRow of arity {arity} needs at least {need} bytes, has {}",
                data.len()
            )));
        }
        Ok(BinaryRow { arity, data })
    }

    /// Paimon's `BinaryRow.hashCode()`: Murmur3 over the row bytes, word by word, seed 42.
    pub fn hash_code(&self) -> i32 {
        murmur_hash_bytes_by_words(&self.data, 42)
    }
}

/// Paimon's `MurmurHashUtils.hashBytesByWords`: Murmur3-32 over whole 4-byte little-endian words (the
/// length is a multiple of 4 for BinaryRows), finalised with the byte length.
pub(crate) fn murmur_hash_bytes_by_words(data: &[u8], seed: i32) -> i32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h1 = seed as u32;
    for w in data.chunks_exact(4) {
        let mut k1 = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        k1 = k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h1 = (h1 ^ k1).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h1 ^= data.len() as u32;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^= h1 >> 16;
    h1 as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(s: &str) -> DataType {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn matches_pypaimon_layout_for_a_short_string_partition() {
        // Bytes of the partition ('a',) in a manifest written by pypaimon 2.1.0.
        let row = BinaryRow::from_datums(&[Some(Datum::String("a".into()))], &[t("STRING NOT NULL")]).unwrap();
        let want = b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00a\x00\x00\x00\x00\x00\x00\x81";
        assert_eq!(row.serialize(), want.to_vec());
        assert_eq!(BinaryRow::empty().serialize(), vec![0u8; 12]);
    }

    #[test]
    fn decimal_bytes_are_minimal_twos_complement() {
        assert_eq!(i128_to_be_min(0), vec![0]);
        assert_eq!(i128_to_be_min(-128), vec![0x80]);
        assert_eq!(i128_to_be_min(128), vec![0x00, 0x80]);
        assert_eq!(i128_to_be_min(-1), vec![0xff]);
    }

    #[test]
    fn truncated_rows_are_corrupt_not_panics() {
        assert!(BinaryRow::deserialize(&[0, 0]).is_err());
        assert!(BinaryRow::deserialize(&[0, 0, 0, 3, 0, 0]).is_err());
        assert!(BinaryRow::deserialize(&[0xff, 0xff, 0xff, 0xff]).is_err());
        // A slot pointing past the end.
        let mut bytes = vec![0, 0, 0, 1];
        bytes.extend_from_slice(&[0u8; 8]);
        bytes.extend_from_slice(&((100u64 << 32) | 20).to_le_bytes());
        let row = BinaryRow::deserialize(&bytes).unwrap();
        assert!(row.get(0, &t("STRING")).is_err());
    }

    fn datum_for(ty: DataType) -> BoxedStrategy<Option<Datum>> {
        let v: BoxedStrategy<Datum> = match ty.root {
            TypeRoot::Boolean => any::<bool>().prop_map(Datum::Boolean).boxed(),
            TypeRoot::TinyInt => any::<i8>().prop_map(Datum::TinyInt).boxed(),
            TypeRoot::SmallInt => any::<i16>().prop_map(Datum::SmallInt).boxed(),
            TypeRoot::Int => any::<i32>().prop_map(Datum::Int).boxed(),
            TypeRoot::BigInt => any::<i64>().prop_map(Datum::BigInt).boxed(),
            TypeRoot::Double => any::<f64>().prop_filter("nan", |f| !f.is_nan()).prop_map(Datum::Double).boxed(),
            TypeRoot::Decimal { precision, .. } if precision <= 18 => {
                (-999_999_999_999_999_999i64..=999_999_999_999_999_999).prop_map(|v| Datum::Decimal(v.into())).boxed()
            }
            TypeRoot::Decimal { .. } => any::<i64>().prop_map(|v| Datum::Decimal(i128::from(v) * 1_000_003)).boxed(),
            TypeRoot::VarChar(_) => ".{0,20}".prop_map(Datum::String).boxed(),
            TypeRoot::VarBinary(_) => proptest::collection::vec(any::<u8>(), 0..20).prop_map(Datum::Bytes).boxed(),
            TypeRoot::Timestamp(p) if p > 3 => {
                (any::<i64>(), 0i32..1_000_000).prop_map(|(millis, nanos)| Datum::Timestamp { millis, nanos }).boxed()
            }
            TypeRoot::Timestamp(_) => any::<i64>().prop_map(|millis| Datum::Timestamp { millis, nanos: 0 }).boxed(),
            _ => any::<i32>().prop_map(Datum::Date).boxed(),
        };
        prop_oneof![1 => Just(None), 4 => v.prop_map(Some)].boxed()
    }

    const ALL_TYPES: [&str; 11] = [
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "DOUBLE",
        "DECIMAL(10, 2)",
        "DECIMAL(30, 3)",
        "STRING",
        "BYTES",
        "TIMESTAMP(6)",
    ];

    fn typed_row() -> impl Strategy<Value = (Vec<DataType>, Vec<Option<Datum>>)> {
        proptest::collection::vec(0usize..ALL_TYPES.len(), 0..9).prop_flat_map(|idx| {
            let types: Vec<DataType> = idx.iter().map(|&i| t(ALL_TYPES[i])).collect();
            let values: Vec<BoxedStrategy<Option<Datum>>> = types.iter().map(|ty| datum_for(*ty)).collect();
            (Just(types), values)
        })
    }

    proptest! {
        #[test]
        fn rows_round_trip((types, values) in typed_row()) {
            let row = BinaryRow::from_datums(&values, &types).unwrap();
            let back = BinaryRow::deserialize(&row.serialize()).unwrap();
            prop_assert_eq!(&back, &row);
            prop_assert_eq!(back.to_datums(&types).unwrap(), values);
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), idx in 0usize..ALL_TYPES.len()) {
            if let Ok(row) = BinaryRow::deserialize(&bytes) {
                for i in 0..row.arity().min(8) {
                    let _ = row.get(i, &t(ALL_TYPES[idx]));
                }
            }
        }
    }
}
