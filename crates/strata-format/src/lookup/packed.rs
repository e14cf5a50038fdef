//! The packed form of a lookup file's rows: one row's values back to back, decoded into a one-row batch
//! whose arrays share a handful of buffers (the decompressed group itself for strings and binaries), so a
//! point lookup allocates about one object per column instead of arrow-row's three or four.
//!
//! A row is a validity bitmap (bit `i` set when column `i` holds a value; `ceil(columns / 8)` bytes), then
//! each non-null value in column order: fixed-width values as their little-endian bytes (a boolean as one
//! byte 0 or 1), strings and binaries as `length: u32 LE` and their bytes. Nulls take no bytes.
//!
//! Only flat types have a packed form ([`PackedRows::new`] says `None` for a schema with another type; its
//! rows stay in arrow-row form). Decoding checks every length against the row's bytes, so a malformed row
//! is an error, never a panic or a value read from the next row.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, FixedSizeBinaryArray, PrimitiveArray, RecordBatch, StringArray,
};
use arrow_buffer::{bit_util, BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType as ArrowType, Schema, TimeUnit};

/// How one column is packed.
#[derive(Debug, Clone)]
enum Slot {
    Boolean,
    /// A fixed-width value of this many bytes.
    Fixed(usize),
    Utf8,
    Binary,
    FixedBinary(usize),
}

/// The packed form of one schema's rows.
#[derive(Debug, Clone)]
pub(crate) struct PackedRows {
    types: Vec<ArrowType>,
    slots: Vec<Slot>,
    /// Where each fixed-width column's value lies in a decoded row's shared value buffer (16-byte aligned).
    fixed_at: Vec<usize>,
    fixed_bytes: usize,
    /// Each string or binary column's pair in the shared offsets buffer.
    var_at: Vec<usize>,
    var_columns: usize,
}

/// One value of a packed row, borrowed from the row's bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PackedValue<'a> {
    /// No value.
    Null,
    /// BOOLEAN.
    Boolean(bool),
    /// TINYINT, SMALLINT, INT or BIGINT, widened.
    Int(i64),
    /// FLOAT (widened) or DOUBLE.
    Float(f64),
    /// A string (UTF-8 checked).
    Str(&'a str),
    /// BYTES, VARBINARY or BINARY.
    Bytes(&'a [u8]),
    /// A value of another fixed-width type (DECIMAL, DATE, TIME, TIMESTAMP): its Arrow type and its
    /// little-endian bytes.
    Other(&'a ArrowType, &'a [u8]),
}

/// One row of a local lookup file in packed form, not decoded: its values are read in place.
#[derive(Debug, Clone)]
pub struct PackedRow {
    pub(crate) body: Buffer,
    pub(crate) range: Range<usize>,
    pub(crate) form: Arc<PackedRows>,
}

impl PackedRow {
    /// Calls `f` with each column's index (the file layout's) and value, in column order. A row whose bytes
    /// do not parse (a length past its end, a string that is not UTF-8) is an error, and `f` may have seen
    /// some of its values by then.
    pub fn for_each_value(&self, f: &mut dyn FnMut(usize, PackedValue<'_>)) -> strata_spec::Result<()> {
        let bytes = self
            .body
            .as_slice()
            .get(self.range.clone())
            .ok_or_else(|| strata_spec::Error::corrupt("a lookup row lies outside its group".to_string()))?;
        self.form.visit(bytes, f).map_err(|m| strata_spec::Error::corrupt(format!("a lookup row: {m}")))
    }
}

/// The width of a fixed-width type Strata stores, `None` for any other type.
fn fixed_width(t: &ArrowType) -> Option<usize> {
    Some(match t {
        ArrowType::Int8 => 1,
        ArrowType::Int16 => 2,
        ArrowType::Int32 | ArrowType::Float32 | ArrowType::Date32 | ArrowType::Time32(TimeUnit::Millisecond) => 4,
        ArrowType::Int64 | ArrowType::Float64 | ArrowType::Timestamp(_, _) => 8,
        ArrowType::Decimal128(_, _) => 16,
        _ => return None,
    })
}

impl PackedRows {
    /// The packed form of `schema`'s rows, `None` when a column's type has none.
    pub(crate) fn new(schema: &Schema) -> Option<Self> {
        let (mut slots, mut fixed_at, mut var_at) = (Vec::new(), Vec::new(), Vec::new());
        let (mut fixed_bytes, mut var_columns) = (0usize, 0usize);
        for f in schema.fields() {
            let t = f.data_type();
            let slot = match t {
                ArrowType::Boolean => Slot::Boolean,
                ArrowType::Utf8 => Slot::Utf8,
                ArrowType::Binary => Slot::Binary,
                ArrowType::FixedSizeBinary(n) => Slot::FixedBinary(usize::try_from(*n).ok()?),
                t => Slot::Fixed(fixed_width(t)?),
            };
            fixed_at.push(fixed_bytes);
            var_at.push(var_columns);
            match slot {
                Slot::Fixed(w) => fixed_bytes += w.next_multiple_of(16),
                Slot::Utf8 | Slot::Binary => var_columns += 1,
                _ => {}
            }
            slots.push(slot);
        }
        let types = schema.fields().iter().map(|f| f.data_type().clone()).collect();
        Some(PackedRows { types, slots, fixed_at, fixed_bytes, var_at, var_columns })
    }

    /// The columns of a batch (this schema's) made ready for [`PackedRows::encode_row`].
    pub(crate) fn prepare(&self, columns: &[ArrayRef]) -> strata_spec::Result<Vec<ArrayData>> {
        let bad = |m: String| strata_spec::Error::invalid("lookup rows", m);
        if columns.len() != self.slots.len() {
            return Err(bad(format!("{} columns for a packed form of {}", columns.len(), self.slots.len())));
        }
        columns
            .iter()
            .zip(&self.types)
            .map(|(c, t)| {
                let data = c.to_data();
                if data.data_type() != t {
                    return Err(bad(format!("a {} column where the packed form has {t}", data.data_type())));
                }
                Ok(data)
            })
            .collect()
    }

    /// Appends row `row` of `columns` (from [`PackedRows::prepare`]) to `out`.
    pub(crate) fn encode_row(&self, columns: &[ArrayData], row: usize, out: &mut Vec<u8>) -> strata_spec::Result<()> {
        let start = out.len();
        out.resize(start + self.slots.len().div_ceil(8), 0);
        for (i, (slot, d)) in self.slots.iter().zip(columns).enumerate() {
            if d.is_null(row) {
                continue;
            }
            out[start + i / 8] |= 1 << (i % 8);
            let at = d.offset() + row;
            match slot {
                Slot::Boolean => out.push(u8::from(bit_util::get_bit(d.buffers()[0].as_slice(), at))),
                Slot::Fixed(w) | Slot::FixedBinary(w) => {
                    out.extend_from_slice(&d.buffers()[0].as_slice()[at * w..(at + 1) * w])
                }
                Slot::Utf8 | Slot::Binary => {
                    let offsets: &[i32] = d.buffers()[0].typed_data();
                    let (s, e) = (offsets[at] as usize, offsets[at + 1] as usize);
                    let len = u32::try_from(e - s)
                        .map_err(|_| strata_spec::Error::invalid("lookup rows", "a value over 4 GiB"))?;
                    out.extend_from_slice(&len.to_le_bytes());
                    out.extend_from_slice(&d.buffers()[1].as_slice()[s..e]);
                }
            }
        }
        Ok(())
    }

    /// Calls `f` with each value of the row `bytes`, in column order.
    pub(crate) fn visit(&self, bytes: &[u8], f: &mut dyn FnMut(usize, PackedValue<'_>)) -> Result<(), String> {
        let n = self.slots.len();
        let bitmap = bytes.get(..n.div_ceil(8)).ok_or_else(|| "a row shorter than its validity bitmap".to_string())?;
        let mut pos = bitmap.len();
        let take = |pos: &mut usize, len: usize| -> Result<&[u8], String> {
            let end = pos.checked_add(len).filter(|&e| e <= bytes.len()).ok_or("a value runs past its row")?;
            let v = &bytes[*pos..end];
            *pos = end;
            Ok(v)
        };
        for (i, (slot, t)) in self.slots.iter().zip(&self.types).enumerate() {
            if bitmap[i / 8] & (1 << (i % 8)) == 0 {
                f(i, PackedValue::Null);
                continue;
            }
            let value = match slot {
                Slot::Boolean => PackedValue::Boolean(take(&mut pos, 1)?[0] & 1 == 1),
                Slot::FixedBinary(w) => PackedValue::Bytes(take(&mut pos, *w)?),
                Slot::Fixed(w) => {
                    let v = take(&mut pos, *w)?;
                    let le8 = |v: &[u8]| {
                        let mut b = [0u8; 8];
                        b[..v.len().min(8)].copy_from_slice(&v[..v.len().min(8)]);
                        b
                    };
                    match t {
                        ArrowType::Int8 => PackedValue::Int(i64::from(v[0] as i8)),
                        ArrowType::Int16 => PackedValue::Int(i64::from(i16::from_le_bytes([v[0], v[1]]))),
                        ArrowType::Int32 => PackedValue::Int(i64::from(i32::from_le_bytes([v[0], v[1], v[2], v[3]]))),
                        ArrowType::Int64 => PackedValue::Int(i64::from_le_bytes(le8(v))),
                        ArrowType::Float32 => {
                            PackedValue::Float(f64::from(f32::from_le_bytes([v[0], v[1], v[2], v[3]])))
                        }
                        ArrowType::Float64 => PackedValue::Float(f64::from_le_bytes(le8(v))),
                        other => PackedValue::Other(other, v),
                    }
                }
                Slot::Utf8 | Slot::Binary => {
                    let l = take(&mut pos, 4)?;
                    let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
                    let v = take(&mut pos, len)?;
                    if matches!(slot, Slot::Utf8) {
                        PackedValue::Str(std::str::from_utf8(v).map_err(|e| e.to_string())?)
                    } else {
                        PackedValue::Bytes(v)
                    }
                }
            };
            f(i, value);
        }
        if pos != bytes.len() {
            return Err(format!("a row of {} bytes holds {pos} bytes of values", bytes.len()));
        }
        Ok(())
    }

    /// The row at `range` of `body` (a decompressed group) as one-row arrays of this schema.
    pub(crate) fn decode(&self, body: &Buffer, range: Range<usize>) -> Result<Vec<ArrayRef>, String> {
        let bytes = body.as_slice().get(range.clone()).ok_or_else(|| "a row lies outside its group".to_string())?;
        let n = self.slots.len();
        let bitmap = bytes.get(..n.div_ceil(8)).ok_or_else(|| "a row shorter than its validity bitmap".to_string())?;
        let valid = |i: usize| bitmap[i / 8] & (1 << (i % 8)) != 0;
        let mut fixed = MutableBuffer::from_len_zeroed(self.fixed_bytes);
        let mut offsets = vec![0i32; 2 * self.var_columns];
        // Where each string, binary, boolean and fixed binary value lies in `body`.
        let mut value_at = vec![0usize..0; n];
        let mut pos = bitmap.len();
        let take = |pos: &mut usize, len: usize| -> Result<Range<usize>, String> {
            let end = pos
                .checked_add(len)
                .filter(|&e| e <= bytes.len())
                .ok_or_else(|| "a value runs past its row".to_string())?;
            let r = *pos..end;
            *pos = end;
            Ok(r)
        };
        for (i, slot) in self.slots.iter().enumerate() {
            if !valid(i) {
                continue;
            }
            match slot {
                Slot::Boolean => value_at[i] = take(&mut pos, 1)?,
                Slot::FixedBinary(w) => value_at[i] = take(&mut pos, *w)?,
                Slot::Fixed(w) => {
                    let r = take(&mut pos, *w)?;
                    fixed.as_slice_mut()[self.fixed_at[i]..self.fixed_at[i] + w].copy_from_slice(&bytes[r]);
                }
                Slot::Utf8 | Slot::Binary => {
                    let l = take(&mut pos, 4)?;
                    let len = u32::from_le_bytes([
                        bytes[l.start],
                        bytes[l.start + 1],
                        bytes[l.start + 2],
                        bytes[l.start + 3],
                    ]);
                    value_at[i] = take(&mut pos, len as usize)?;
                    offsets[2 * self.var_at[i] + 1] =
                        i32::try_from(len).map_err(|_| "a value over 2 GiB".to_string())?;
                }
            }
        }
        if pos != bytes.len() {
            return Err(format!("a row of {} bytes holds {pos} bytes of values", bytes.len()));
        }
        let fixed: Buffer = fixed.into();
        let offsets = Buffer::from_vec(offsets);
        let nulls = (0..n).any(|i| !valid(i)).then(|| Buffer::from_slice_ref(bitmap));
        let base = range.start;
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(n);
        for (i, (slot, t)) in self.slots.iter().zip(&self.types).enumerate() {
            let null = nulls.as_ref().map(|b| NullBuffer::new(BooleanBuffer::new(b.clone(), i, 1)));
            let in_body = |r: &Range<usize>| body.slice_with_length(base + r.start, r.len());
            let column: ArrayRef = match slot {
                Slot::Boolean => {
                    // The stored byte is 0 or 1: its lowest bit is the value (an unset value reads false).
                    let b = if valid(i) { in_body(&value_at[i]) } else { Buffer::from_slice_ref([0u8]) };
                    Arc::new(BooleanArray::new(BooleanBuffer::new(b, 0, 1), null))
                }
                Slot::FixedBinary(w) => {
                    let b = if valid(i) { in_body(&value_at[i]) } else { Buffer::from_vec(vec![0u8; *w]) };
                    let w = i32::try_from(*w).map_err(|_| "a fixed width over 2 GiB".to_string())?;
                    Arc::new(FixedSizeBinaryArray::try_new(w, b, null).map_err(|e| e.to_string())?)
                }
                Slot::Utf8 | Slot::Binary => {
                    let o = OffsetBuffer::new(ScalarBuffer::<i32>::new(offsets.clone(), 2 * self.var_at[i], 2));
                    let values = in_body(&value_at[i]);
                    if matches!(slot, Slot::Utf8) {
                        Arc::new(StringArray::try_new(o, values, null).map_err(|e| e.to_string())?)
                    } else {
                        Arc::new(BinaryArray::try_new(o, values, null).map_err(|e| e.to_string())?)
                    }
                }
                Slot::Fixed(_) => fixed_array(t, &fixed, self.fixed_at[i], null)?,
            };
            columns.push(column);
        }
        Ok(columns)
    }

    /// The rows at `ranges` of their groups' bodies as a batch of `schema` (this form's).
    pub(crate) fn decode_rows(
        &self,
        rows: &[(&Buffer, Range<usize>)],
        schema: &arrow_schema::SchemaRef,
    ) -> Result<RecordBatch, String> {
        let columns = match rows {
            [(body, range)] => self.decode(body, range.clone())?,
            _ => self.decode_many(rows)?,
        };
        RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
    }

    /// Many rows as columns of this schema, each column built in one pass over the rows (decoding each
    /// row into one-row arrays and concatenating them made and dropped an array per value).
    fn decode_many(&self, rows: &[(&Buffer, Range<usize>)]) -> Result<Vec<ArrayRef>, String> {
        let mut columns: Vec<ColumnBuilder> =
            self.slots.iter().map(|slot| ColumnBuilder::new(slot, rows.len())).collect();
        let n = self.slots.len();
        for (body, range) in rows {
            let bytes = body.as_slice().get(range.clone()).ok_or_else(|| "a row lies outside its group".to_string())?;
            let bitmap =
                bytes.get(..n.div_ceil(8)).ok_or_else(|| "a row shorter than its validity bitmap".to_string())?;
            let mut pos = bitmap.len();
            for (i, column) in columns.iter_mut().enumerate() {
                let valid = bitmap[i / 8] & (1 << (i % 8)) != 0;
                pos = column.push(bytes, pos, valid)?;
            }
            if pos != bytes.len() {
                return Err(format!("a row of {} bytes holds {pos} bytes of values", bytes.len()));
            }
        }
        columns.into_iter().zip(&self.types).map(|(c, t)| c.finish(t, rows.len())).collect()
    }
}

/// One column of many decoded rows, as it is built.
struct ColumnBuilder {
    slot: Slot,
    valid: arrow_buffer::BooleanBufferBuilder,
    /// Fixed-width values back to back (a boolean as its bit in `bits`).
    values: MutableBuffer,
    bits: arrow_buffer::BooleanBufferBuilder,
    /// String and binary value ends.
    offsets: Vec<i32>,
}

impl ColumnBuilder {
    fn new(slot: &Slot, rows: usize) -> Self {
        let (width, var) = match slot {
            Slot::Fixed(w) | Slot::FixedBinary(w) => (*w, false),
            Slot::Boolean => (0, false),
            Slot::Utf8 | Slot::Binary => (16, true),
        };
        let mut offsets = Vec::with_capacity(if var { rows + 1 } else { 0 });
        if var {
            offsets.push(0);
        }
        ColumnBuilder {
            slot: slot.clone(),
            valid: arrow_buffer::BooleanBufferBuilder::new(rows),
            values: MutableBuffer::with_capacity(width * rows),
            bits: arrow_buffer::BooleanBufferBuilder::new(if matches!(slot, Slot::Boolean) { rows } else { 0 }),
            offsets,
        }
    }

    /// Appends the value at `pos` of `row` (nothing there when `!valid`); where the row's next value lies.
    fn push(&mut self, row: &[u8], pos: usize, valid: bool) -> Result<usize, String> {
        self.valid.append(valid);
        let take = |len: usize| -> Result<&[u8], String> {
            pos.checked_add(len)
                .and_then(|end| row.get(pos..end))
                .ok_or_else(|| "a value runs past its row".to_string())
        };
        match &self.slot {
            Slot::Boolean => {
                let v = if valid { take(1)?[0] & 1 == 1 } else { false };
                self.bits.append(v);
                Ok(pos + usize::from(valid))
            }
            Slot::Fixed(w) | Slot::FixedBinary(w) => {
                let w = *w;
                if valid {
                    self.values.extend_from_slice(take(w)?);
                    Ok(pos + w)
                } else {
                    self.values.extend_zeros(w);
                    Ok(pos)
                }
            }
            Slot::Utf8 | Slot::Binary => {
                let end = self.offsets.last().copied().unwrap_or(0);
                if !valid {
                    self.offsets.push(end);
                    return Ok(pos);
                }
                let l = take(4)?;
                let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
                let value = pos.checked_add(4).and_then(|at| Some((at, at.checked_add(len)?)));
                let (at, stop) = value.ok_or_else(|| "a value runs past its row".to_string())?;
                let bytes = row.get(at..stop).ok_or_else(|| "a value runs past its row".to_string())?;
                self.values.extend_from_slice(bytes);
                let end = i32::try_from(len)
                    .ok()
                    .and_then(|len| end.checked_add(len))
                    .ok_or_else(|| "values over 2 GiB in one column".to_string())?;
                self.offsets.push(end);
                Ok(stop)
            }
        }
    }

    /// The column of `rows` values, typed `t` (checked as any array built from stored bytes).
    fn finish(mut self, t: &ArrowType, rows: usize) -> Result<ArrayRef, String> {
        let valid = NullBuffer::new(self.valid.finish());
        let nulls = (valid.null_count() > 0).then_some(valid);
        let buffers = match self.slot {
            Slot::Boolean => vec![self.bits.finish().into_inner()],
            Slot::Fixed(_) | Slot::FixedBinary(_) => vec![self.values.into()],
            Slot::Utf8 | Slot::Binary => vec![Buffer::from_vec(self.offsets), self.values.into()],
        };
        let data = ArrayData::builder(t.clone()).len(rows).buffers(buffers).nulls(nulls).build();
        data.map(arrow_array::make_array).map_err(|e| e.to_string())
    }
}

/// The one-row array of fixed-width type `t` whose value lies at byte `at` of `fixed`.
fn fixed_array(t: &ArrowType, fixed: &Buffer, at: usize, null: Option<NullBuffer>) -> Result<ArrayRef, String> {
    fn one<T: ArrowPrimitiveType>(fixed: &Buffer, at: usize, null: Option<NullBuffer>) -> PrimitiveArray<T> {
        let width = std::mem::size_of::<T::Native>();
        PrimitiveArray::<T>::new(ScalarBuffer::new(fixed.clone(), at / width, 1), null)
    }
    Ok(match t {
        ArrowType::Int8 => Arc::new(one::<Int8Type>(fixed, at, null)),
        ArrowType::Int16 => Arc::new(one::<Int16Type>(fixed, at, null)),
        ArrowType::Int32 => Arc::new(one::<Int32Type>(fixed, at, null)),
        ArrowType::Int64 => Arc::new(one::<Int64Type>(fixed, at, null)),
        ArrowType::Float32 => Arc::new(one::<Float32Type>(fixed, at, null)),
        ArrowType::Float64 => Arc::new(one::<Float64Type>(fixed, at, null)),
        ArrowType::Date32 => Arc::new(one::<Date32Type>(fixed, at, null)),
        ArrowType::Time32(TimeUnit::Millisecond) => Arc::new(one::<Time32MillisecondType>(fixed, at, null)),
        ArrowType::Timestamp(unit, tz) => match unit {
            TimeUnit::Second => Arc::new(one::<TimestampSecondType>(fixed, at, null).with_timezone_opt(tz.clone())),
            TimeUnit::Millisecond => {
                Arc::new(one::<TimestampMillisecondType>(fixed, at, null).with_timezone_opt(tz.clone()))
            }
            TimeUnit::Microsecond => {
                Arc::new(one::<TimestampMicrosecondType>(fixed, at, null).with_timezone_opt(tz.clone()))
            }
            TimeUnit::Nanosecond => {
                Arc::new(one::<TimestampNanosecondType>(fixed, at, null).with_timezone_opt(tz.clone()))
            }
        },
        ArrowType::Decimal128(p, s) => Arc::new(
            one::<Decimal128Type>(fixed, at, null).with_precision_and_scale(*p, *s).map_err(|e| e.to_string())?,
        ),
        other => return Err(format!("{other} has no packed form")),
    })
}

#[cfg(test)]
mod tests {
    use arrow_array::*;
    use arrow_schema::Field;
    use proptest::prelude::*;

    use super::*;

    /// A column of every type with a packed form, `n` rows, nulls where `null(i)` (the key column none).
    fn batch(n: usize, seed: u64, null: impl Fn(usize) -> bool) -> RecordBatch {
        let v = |i: usize| (seed as i64).wrapping_mul(31).wrapping_add(i as i64 * 7919);
        let opt = |i: usize| !null(i);
        let tz: Option<Arc<str>> = Some("Asia/Shanghai".into());
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("k", Arc::new(Int64Array::from_iter_values((0..n).map(v)))),
            ("b", Arc::new(BooleanArray::from_iter((0..n).map(|i| opt(i).then_some(v(i) % 3 == 0))))),
            ("i8", Arc::new(Int8Array::from_iter((0..n).map(|i| opt(i).then_some(v(i) as i8))))),
            ("i16", Arc::new(Int16Array::from_iter((0..n).map(|i| opt(i).then_some(v(i) as i16))))),
            ("i32", Arc::new(Int32Array::from_iter((0..n).map(|i| opt(i).then_some(v(i) as i32))))),
            ("f32", Arc::new(Float32Array::from_iter((0..n).map(|i| opt(i).then_some(v(i) as f32 / 3.0))))),
            (
                "f64",
                Arc::new(Float64Array::from_iter(
                    (0..n).map(|i| opt(i).then_some(if i % 5 == 0 { f64::NAN } else { v(i) as f64 })),
                )),
            ),
            ("d", Arc::new(Date32Array::from_iter((0..n).map(|i| opt(i).then_some(v(i) as i32 % 100_000))))),
            (
                "t",
                Arc::new(Time32MillisecondArray::from_iter(
                    (0..n).map(|i| opt(i).then_some(v(i).rem_euclid(86_400_000) as i32)),
                )),
            ),
            (
                "ts",
                Arc::new(
                    TimestampMicrosecondArray::from_iter((0..n).map(|i| opt(i).then_some(v(i)))).with_timezone_opt(tz),
                ),
            ),
            ("tn", Arc::new(TimestampNanosecondArray::from_iter((0..n).map(|i| opt(i).then_some(v(i)))))),
            (
                "dec",
                Arc::new(
                    Decimal128Array::from_iter((0..n).map(|i| opt(i).then_some(i128::from(v(i)) * 1_000_000_007)))
                        .with_precision_and_scale(38, 4)
                        .unwrap(),
                ),
            ),
            (
                "s",
                Arc::new(StringArray::from_iter(
                    (0..n).map(|i| opt(i).then(|| ["", "é", "naïve ☃", "x"][i % 4].repeat(i % 9))),
                )),
            ),
            ("bin", Arc::new(BinaryArray::from_iter((0..n).map(|i| opt(i).then(|| vec![i as u8; i % 5]))))),
            (
                "fb",
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                        (0..n).map(|i| opt(i).then_some([i as u8, 7, 9])),
                        3,
                    )
                    .unwrap(),
                ),
            ),
        ];
        let fields: Vec<Field> =
            cols.iter().map(|(name, c)| Field::new(*name, c.data_type().clone(), *name != "k")).collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols.into_iter().map(|(_, c)| c).collect()).unwrap()
    }

    /// Packs `batch`'s rows into one body; each row's range in it.
    fn pack(p: &PackedRows, columns: &[ArrayRef]) -> (Buffer, Vec<Range<usize>>) {
        let prepared = p.prepare(columns).unwrap();
        let (mut body, mut ranges) = (Vec::new(), Vec::new());
        for row in 0..columns[0].len() {
            let start = body.len();
            p.encode_row(&prepared, row, &mut body).unwrap();
            ranges.push(start..body.len());
        }
        (Buffer::from_vec(body), ranges)
    }

    proptest! {
        #[test]
        fn every_packed_row_decodes_to_the_row_encoded(
            n in 1usize..60, seed in any::<u64>(), nulls in any::<u64>(), from in 0usize..10,
            picks in proptest::collection::btree_set(0usize..70, 1..6),
        ) {
            let whole = batch(n + from, seed, |i| i > 0 && nulls & (1 << (i % 64)) != 0);
            // A slice: every array starts at an offset.
            let b = whole.slice(from, n);
            let p = PackedRows::new(&b.schema()).expect("every type has a packed form");
            let (body, ranges) = pack(&p, b.columns());
            let picked: Vec<usize> = picks.into_iter().filter(|&i| i < n).collect();
            prop_assume!(!picked.is_empty());
            let rows: Vec<(&Buffer, Range<usize>)> = picked.iter().map(|&i| (&body, ranges[i].clone())).collect();
            let got = p.decode_rows(&rows, &b.schema()).unwrap();
            let idx = UInt32Array::from_iter_values(picked.iter().map(|&i| i as u32));
            let want = arrow_select::take::take_record_batch(&b, &idx).unwrap();
            prop_assert_eq!(&got, &want);
            // Visited in place, each row gives the same values as its decoded row.
            for (r, &i) in picked.iter().enumerate() {
                let row = PackedRow { body: body.clone(), range: ranges[i].clone(), form: Arc::new(p.clone()) };
                let mut seen = 0;
                row.for_each_value(&mut |c, v| {
                    seen += 1;
                    assert_eq!(c + 1, seen, "columns in order");
                    let a = want.column(c);
                    assert_eq!(matches!(v, PackedValue::Null), a.is_null(r), "column {c} row {r}");
                    match v {
                        PackedValue::Int(x) => {
                            let x = arrow_cast::cast(&Int64Array::from(vec![x]), a.data_type()).unwrap();
                            assert_eq!(x.to_data(), a.slice(r, 1).to_data(), "column {c}");
                        }
                        PackedValue::Float(x) => {
                            let want = arrow_cast::cast(&a.slice(r, 1), &ArrowType::Float64).unwrap();
                            let want = want.as_any().downcast_ref::<Float64Array>().unwrap().value(0);
                            assert_eq!(x.to_bits(), want.to_bits(), "column {c}");
                        }
                        PackedValue::Str(x) => assert_eq!(x, a.as_any().downcast_ref::<StringArray>().unwrap().value(r)),
                        PackedValue::Bytes(x) => {
                            let want = arrow_cast::display::array_value_to_string(a, r).unwrap();
                            let got = arrow_cast::display::array_value_to_string(
                                &arrow_cast::cast(&BinaryArray::from(vec![x]), a.data_type()).unwrap(), 0).unwrap();
                            assert_eq!(got, want, "column {c}");
                        }
                        PackedValue::Boolean(x) => {
                            assert_eq!(x, a.as_any().downcast_ref::<BooleanArray>().unwrap().value(r))
                        }
                        PackedValue::Other(t, bytes) => {
                            assert_eq!(t, a.data_type());
                            assert_eq!(bytes.len(), fixed_width(t).unwrap());
                        }
                        PackedValue::Null => {}
                    }
                }).unwrap();
                prop_assert_eq!(seen, b.num_columns());
            }
        }

        /// Any bytes as a row, or a packed row cut short or lengthened: an error or some row, never a panic.
        #[test]
        fn malformed_rows_are_errors_not_panics(seed in any::<u64>(), cut in 0usize..200, junk in proptest::collection::vec(any::<u8>(), 0..80)) {
            let b = batch(3, seed, |i| i == 1);
            let p = PackedRows::new(&b.schema()).unwrap();
            let (body, ranges) = pack(&p, b.columns());
            let r = ranges[2].clone();
            let _ = p.decode(&body, r.start..r.start + cut.min(r.len()));
            let mut ignore = |_: usize, _: PackedValue<'_>| {};
            let _ = p.visit(&body[r.start..r.start + cut.min(r.len())], &mut ignore);
            let _ = p.visit(&junk, &mut ignore);
            let longer_row = p.visit(&body[r.start..(r.end + 1).min(body.len())], &mut ignore);
            prop_assert!(longer_row.is_err() || r.end == body.len());
            let mut longer = body.as_slice().to_vec();
            longer.extend_from_slice(&junk);
            let _ = p.decode(&Buffer::from_vec(longer.clone()), r.start..longer.len());
            let junk = Buffer::from_vec(junk);
            let _ = p.decode(&junk, 0..junk.len());
            // Many rows at once (built column by column), one of them malformed.
            let _ = p.decode_rows(&[(&body, ranges[0].clone()), (&junk, 0..junk.len())], &b.schema());
            let cut_short = r.start..r.start + cut.min(r.len());
            let _ = p.decode_rows(&[(&body, ranges[0].clone()), (&body, cut_short)], &b.schema());
            prop_assert!(p.decode_rows(&[(&body, ranges[0].clone()), (&body, r.start..r.end + 1)], &b.schema()).is_err());
            prop_assert!(p.decode(&body, r.start..r.end + 1).is_err());
        }
    }

    #[test]
    fn nested_types_have_no_packed_form() {
        let list = ArrowType::List(Arc::new(Field::new("item", ArrowType::Int32, true)));
        assert!(PackedRows::new(&Schema::new(vec![Field::new("l", list, true)])).is_none());
        assert!(PackedRows::new(&Schema::new(vec![Field::new("u", ArrowType::UInt64, true)])).is_none());
    }
}
