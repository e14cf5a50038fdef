//! A table's primary key as bytes that compare like the key (arrow-row form), and the search of a sorted
//! file's keys.

use arrow_array::{Array, BinaryArray, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use strata_spec::{BinaryRow, DataType, Datum, Error, Result};

use crate::layout::arrow_types::{array_of, to_arrow};
use crate::layout::kv::KeyValueLayout;

/// The positions of `key` in `keys` (arrow-row bytes in ascending order, as a sorted file holds them): one
/// stretch, empty when the key is absent.
pub(crate) fn key_positions(keys: &BinaryArray, key: &[u8]) -> std::ops::Range<usize> {
    let (mut first, mut upper) = (0usize, keys.len());
    while first < upper {
        let mid = (first + upper) / 2;
        if keys.value(mid) < key {
            first = mid + 1;
        } else {
            upper = mid;
        }
    }
    let mut end = first;
    while end < keys.len() && keys.value(end) == key {
        end += 1;
    }
    first..end
}

/// [`key_positions`] for a key no smaller than one whose stretch began at `from` (keys looked up in ascending
/// order): searched in steps that double from there, so a key costs the logarithm of its distance from the
/// previous one, not of the file's length.
pub(crate) fn key_positions_from(keys: &BinaryArray, key: &[u8], from: usize) -> std::ops::Range<usize> {
    let len = keys.len();
    let (mut first, mut bound, mut step) = (from.min(len), from.min(len), 1usize);
    // Every key before `first` is smaller; `bound` is past the end or holds a key no smaller than `key`.
    while bound < len && keys.value(bound) < key {
        first = bound + 1;
        bound = bound.saturating_add(step);
        step = step.saturating_mul(2);
    }
    let mut upper = bound.min(len);
    while first < upper {
        let mid = first + (upper - first) / 2;
        if keys.value(mid) < key {
            first = mid + 1;
        } else {
            upper = mid;
        }
    }
    let mut end = first;
    while end < len && keys.value(end) == key {
        end += 1;
    }
    first..end
}

/// A table's primary key in arrow-row bytes (the layout's key columns, in order): bytes compare like the
/// keys, so sorted files hold their keys in byte order and key ranges are byte ranges.
pub struct KeyEncoder {
    converter: RowConverter,
    key_types: Vec<DataType>,
    arity: usize,
}

impl KeyEncoder {
    /// The encoder of `layout`'s key.
    pub fn new(layout: &KeyValueLayout) -> Result<Self> {
        let fields: Vec<SortField> = layout.key_fields.iter().map(|f| SortField::new(to_arrow(&f.data_type))).collect();
        let converter = RowConverter::new(fields).map_err(|e| Error::internal_from("key columns", e))?;
        Ok(KeyEncoder {
            converter,
            key_types: layout.key_fields.iter().map(|f| f.data_type).collect(),
            arity: layout.key_arity(),
        })
    }

    /// The bytes of one key (a value per key column).
    pub fn encode(&self, key: &[Option<Datum>]) -> Result<Vec<u8>> {
        let cols = self
            .key_types
            .iter()
            .zip(key)
            .map(|(t, v)| array_of(t, std::slice::from_ref(v)))
            .collect::<Result<Vec<_>>>()?;
        let rows = self.converter.convert_columns(&cols).map_err(|e| Error::internal_from("key", e))?;
        Ok(rows.row(0).as_ref().to_vec())
    }

    /// The bytes of a key stored as a binary row (a file's min or max key).
    pub fn encode_row(&self, row: &BinaryRow) -> Result<Vec<u8>> {
        self.encode(&row.to_datums(&self.key_types)?)
    }

    /// The keys of `batch`'s rows (file layout: the key columns come first).
    pub fn rows(&self, batch: &RecordBatch) -> std::result::Result<Rows, arrow_schema::ArrowError> {
        self.converter.convert_columns(&batch.columns()[..self.arity])
    }

    /// No keys.
    pub fn empty_rows(&self) -> Rows {
        self.converter.empty_rows(0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// From any start at or before a key's stretch, the stepped search finds the stretch a full search finds.
        #[test]
        fn the_stepped_search_finds_what_the_full_search_finds(
            mut values in proptest::collection::vec(0u16..300, 0..400), wanted in 0u16..320, back in 0usize..500,
        ) {
            values.sort_unstable();
            let keys = BinaryArray::from_iter_values(values.iter().map(|v| v.to_be_bytes()));
            let key = wanted.to_be_bytes();
            let full = key_positions(&keys, &key);
            let from = full.start.saturating_sub(back);
            prop_assert_eq!(key_positions_from(&keys, &key, from), full);
        }
    }
}
