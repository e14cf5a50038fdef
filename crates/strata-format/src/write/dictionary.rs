//! Whether a column's values gain from a parquet dictionary, judged on a file's first batch.
//!
//! parquet-mr (what Paimon's Java writers use) tries a dictionary on a column's first page and drops it
//! for the whole column chunk when the dictionary-encoded page and its dictionary come out no smaller than
//! the plain page (`FallbackValuesWriter`, `DictionaryValuesWriter.isCompressionSatisfying`). The parquet
//! crate has no such check: it keeps a dictionary until it reaches the page limit and then falls back,
//! and the dictionary page it wrote stays in the chunk. A column of mostly distinct values (ids, hashes,
//! names) then carries a dictionary page that every point lookup decompresses and decodes before it can
//! reach its row's page, though few of the column's pages use it. Strata makes parquet-mr's decision up
//! front, on a sample of the first batch a file receives.

use std::collections::HashSet;

use arrow_array::Array;
use arrow_row::{RowConverter, SortField};

/// Rows of the first batch a decision looks at (parquet-mr decides on its first page, some 20,000 small
/// values; a batch is usually smaller).
const SAMPLE_ROWS: usize = 8192;

/// Below this many sampled values a dictionary is kept (parquet's default): too few to judge by.
const MIN_SAMPLE: usize = 256;

/// Whether `column`'s values, judged by the first [`SAMPLE_ROWS`] of them, come out smaller dictionary
/// encoded: the distinct values once each plus a bit-packed index per value, against every value plainly.
/// Booleans and nulls have nothing to gain either way, and a column that cannot be judged keeps the
/// dictionary (parquet's default).
pub(crate) fn dictionary_pays(column: &dyn Array) -> bool {
    if column.data_type() == &arrow_schema::DataType::Boolean {
        return true;
    }
    let n = column.len().min(SAMPLE_ROWS);
    let sample = column.slice(0, n);
    if n - sample.null_count() < MIN_SAMPLE {
        return true;
    }
    let Ok(converter) = RowConverter::new(vec![SortField::new(column.data_type().clone())]) else { return true };
    let Ok(rows) = converter.convert_columns(std::slice::from_ref(&sample)) else { return true };
    let size = plain_size(sample.as_ref());
    // Distinct values by their row encoding (one per value, whatever the type), sized as parquet stores
    // them plainly.
    let mut distinct: HashSet<&[u8]> = HashSet::with_capacity(n);
    let (mut plain_bytes, mut dictionary_bytes, mut values) = (0usize, 0usize, 0usize);
    for i in (0..n).filter(|&i| sample.is_valid(i)) {
        let bytes = size(i);
        values += 1;
        plain_bytes += bytes;
        if distinct.insert(rows.row(i).data()) {
            dictionary_bytes += bytes;
        }
    }
    let index_bits = usize::BITS - distinct.len().saturating_sub(1).leading_zeros();
    let index_bytes = (values * index_bits as usize).div_ceil(8);
    dictionary_bytes + index_bytes < plain_bytes
}

/// The bytes parquet's plain encoding takes for each value of `array`: a length and the bytes for byte
/// arrays, the width for fixed-width values.
fn plain_size(array: &dyn Array) -> Box<dyn Fn(usize) -> usize + '_> {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType as T;
    match array.data_type() {
        T::Utf8 => {
            let a = array.as_string::<i32>();
            Box::new(move |i| 4 + a.value(i).len())
        }
        T::LargeUtf8 => {
            let a = array.as_string::<i64>();
            Box::new(move |i| 4 + a.value(i).len())
        }
        T::Utf8View => {
            let a = array.as_string_view();
            Box::new(move |i| 4 + a.value(i).len())
        }
        T::Binary => {
            let a = array.as_binary::<i32>();
            Box::new(move |i| 4 + a.value(i).len())
        }
        T::LargeBinary => {
            let a = array.as_binary::<i64>();
            Box::new(move |i| 4 + a.value(i).len())
        }
        T::BinaryView => {
            let a = array.as_binary_view();
            Box::new(move |i| 4 + a.value(i).len())
        }
        T::FixedSizeBinary(w) => {
            let w = usize::try_from(*w).unwrap_or(0);
            Box::new(move |_| w)
        }
        t => {
            let width = t.primitive_width().unwrap_or(8);
            Box::new(move |_| width)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, BooleanArray, Int64Array, StringArray};

    use super::*;

    fn strings(n: usize, f: impl Fn(usize) -> String) -> ArrayRef {
        Arc::new(StringArray::from((0..n).map(f).collect::<Vec<_>>()))
    }

    #[test]
    fn distinct_values_gain_nothing_from_a_dictionary() {
        assert!(!dictionary_pays(strings(10_000, |i| format!("{:010x}", i * 7919)).as_ref()));
        assert!(!dictionary_pays(&Int64Array::from_iter_values(0..10_000)));
    }

    #[test]
    fn repeated_values_keep_their_dictionary() {
        assert!(dictionary_pays(strings(10_000, |i| format!("city-{}", i % 300)).as_ref()));
        assert!(dictionary_pays(&Int64Array::from_iter_values((0..10_000).map(|i| i % 50))));
        // Half the values distinct is still worth a dictionary for ten-byte strings.
        assert!(dictionary_pays(strings(10_000, |i| format!("{:010}", i / 2)).as_ref()));
    }

    #[test]
    fn too_few_values_or_booleans_keep_parquets_default() {
        assert!(dictionary_pays(strings(100, |i| format!("{i:010}")).as_ref()));
        let nulls: Vec<Option<&str>> = (0..10_000).map(|i| (i % 100 == 0).then_some("x")).collect();
        assert!(dictionary_pays(&StringArray::from(nulls)));
        assert!(dictionary_pays(&BooleanArray::from((0..10_000).map(|i| i % 3 == 0).collect::<Vec<_>>())));
    }
}
