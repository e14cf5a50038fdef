//! Page pruning: which rows of a parquet row group a predicate can match, by the statistics of each page
//! (the column index) and where each page starts (the offset index).
//!
//! Row-group statistics rule out whole row groups; a key-value file is sorted by key, so the pages of its
//! key columns hold disjoint key ranges and a key predicate (a point lookup, a key range) rules out all
//! but a few pages. The read then decodes only the rows of the pages that may match, and the parquet
//! reader skips the other pages without decompressing them.
//!
//! Columns of one row group page at different rows. The rows are cut at every page start of every column
//! the predicate reads; within one such segment each column's values lie in one page, so the segment may
//! match only if the predicate may match those pages' statistics together. The result is a superset of the
//! matching rows (like row-group pruning, never exact): rows are still filtered exactly after decoding.

use std::ops::Range;

use parquet::file::metadata::ParquetMetaData;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use strata_spec::{DataType, Datum, TypeRoot};

use crate::predicate::{ColumnRange, Predicate};

/// One predicate column's page index in one row group: per page, its first row (relative to the group) and
/// statistics.
struct PagedColumn<'a> {
    name: String,
    data_type: DataType,
    index: &'a ColumnIndexMetaData,
    /// Each page's first row within the group, ascending, starting at 0.
    starts: Vec<u64>,
}

/// The rows (file positions, ascending, disjoint) of row group `group`, which holds rows `rows` of the file,
/// that `pred` may match by its pages' statistics. `column` gives, for a predicate column, its parquet leaf
/// column index in the file and its type, when the file's statistics for it compare as that type (`None`: no
/// pruning by that column). `None` when no predicate column has a usable page index: every row may match.
pub(crate) fn matching_rows(
    meta: &ParquetMetaData,
    group: usize,
    rows: Range<u64>,
    pred: &Predicate,
    column: &dyn Fn(&str) -> Option<(usize, DataType)>,
) -> Option<Vec<Range<u64>>> {
    let n = rows.end.checked_sub(rows.start)?;
    let column_index = meta.column_index()?.get(group)?;
    let offset_index = meta.offset_index()?.get(group)?;
    let mut paged = Vec::new();
    for name in pred.columns() {
        let Some((idx, data_type)) = column(&name) else { continue };
        let (Some(index), Some(offsets)) = (column_index.get(idx), offset_index.get(idx)) else { continue };
        if matches!(index, ColumnIndexMetaData::NONE) {
            continue;
        }
        let starts: Vec<u64> = offsets.page_locations().iter().map(|p| p.first_row_index.max(0) as u64).collect();
        // An index that does not describe the group's pages (other page counts, pages not starting at row 0
        // or out of order, a start past the group's end) prunes nothing: the group is read whole.
        let consistent = index.num_pages() == starts.len() as u64
            && starts.first() == Some(&0)
            && starts.windows(2).all(|w| w[0] < w[1])
            && starts.last().is_some_and(|&s| s < n);
        if consistent {
            paged.push(PagedColumn { name, data_type, index, starts });
        }
    }
    if paged.is_empty() {
        return None;
    }
    let mut cuts: Vec<u64> = paged.iter().flat_map(|c| c.starts.iter().copied()).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Range<u64>> = Vec::new();
    for (i, &from) in cuts.iter().enumerate() {
        let to = cuts.get(i + 1).copied().unwrap_or(n);
        let stats = |name: &str| -> Option<ColumnRange> {
            let c = paged.iter().find(|c| c.name == name)?;
            // The page holding row `from`: the last one starting at or before it.
            let page = c.starts.partition_point(|&s| s <= from).checked_sub(1)?;
            let page_end = c.starts.get(page + 1).copied().unwrap_or(n);
            page_range(c.index, page, &c.data_type, (page_end - c.starts[page]) as i64)
        };
        if !pred.may_match(&stats) {
            continue;
        }
        let (from, to) = (rows.start + from, rows.start + to);
        match out.last_mut() {
            Some(last) if last.end == from => last.end = to,
            _ => out.push(from..to),
        }
    }
    Some(out)
}

/// Whether every column's page locations (the offset index, when there is one) describe its row group: the
/// first page at row 0, pages in ascending rows, none starting past the group's end. The parquet reader
/// skips pages by these locations once the index is loaded, so a file failing this is read without it.
pub(crate) fn offset_index_consistent(meta: &ParquetMetaData) -> bool {
    let Some(index) = meta.offset_index() else { return true };
    index.len() == meta.num_row_groups()
        && index.iter().zip(meta.row_groups()).all(|(columns, rg)| {
            columns.len() == rg.num_columns()
                && columns.iter().all(|c| {
                    let pages = c.page_locations();
                    pages.first().is_some_and(|p| p.first_row_index == 0)
                        && pages.windows(2).all(|w| w[0].first_row_index < w[1].first_row_index)
                        && pages.last().is_some_and(|p| p.first_row_index < rg.num_rows().max(1))
                })
        })
}

/// The statistics of page `page` (of `rows` rows) of a column of Paimon type `t`, when the type is one whose
/// parquet statistics map plainly onto values (as [`crate::predicate::parquet_range`] maps a row group's).
fn page_range(index: &ColumnIndexMetaData, page: usize, t: &DataType, rows: i64) -> Option<ColumnRange> {
    use ColumnIndexMetaData as C;
    use TypeRoot as R;
    fn pair<T>(min: Option<&T>, max: Option<&T>, f: impl Fn(&T) -> Datum) -> (Option<Datum>, Option<Datum>) {
        (min.map(&f), max.map(&f))
    }
    let string = |v: &[u8]| std::str::from_utf8(v).ok().map(|s| Datum::String(s.to_string()));
    let (min, max) = if index.is_null_page(page) {
        (None, None)
    } else {
        match (index, t.root) {
            (C::INT32(c), R::Int) => pair(c.min_value(page), c.max_value(page), |v| Datum::Int(*v)),
            (C::INT32(c), R::Date) => pair(c.min_value(page), c.max_value(page), |v| Datum::Date(*v)),
            (C::INT32(c), R::SmallInt) => pair(c.min_value(page), c.max_value(page), |v| Datum::SmallInt(*v as i16)),
            (C::INT32(c), R::TinyInt) => pair(c.min_value(page), c.max_value(page), |v| Datum::TinyInt(*v as i8)),
            (C::INT64(c), R::BigInt) => pair(c.min_value(page), c.max_value(page), |v| Datum::BigInt(*v)),
            (C::DOUBLE(c), R::Double) => pair(c.min_value(page), c.max_value(page), |v| Datum::Double(*v)),
            (C::FLOAT(c), R::Float) => pair(c.min_value(page), c.max_value(page), |v| Datum::Float(*v)),
            (C::BOOLEAN(c), R::Boolean) => pair(c.min_value(page), c.max_value(page), |v| Datum::Boolean(*v)),
            // Truncated string statistics stay bounds: parquet truncates a minimum down and a maximum up.
            (C::BYTE_ARRAY(c), R::VarChar(_) | R::Char(_)) => {
                (c.min_value(page).and_then(string), c.max_value(page).and_then(string))
            }
            (C::BYTE_ARRAY(c), R::VarBinary(_) | R::Binary(_)) => (
                c.min_value(page).map(|v| Datum::Bytes(v.to_vec())),
                c.max_value(page).map(|v| Datum::Bytes(v.to_vec())),
            ),
            _ => (None, None),
        }
    };
    Some(ColumnRange { min, max, null_count: index.null_count(page), row_count: rows })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use proptest::prelude::*;
    use strata_dv::DeletionVector;
    use strata_io::{FileIO, MemoryFileIO};
    use strata_spec::{DataType, Datum};

    use crate::predicate::{CmpOp, Predicate};
    use crate::read::reader::{open_file, ReadRequest};
    use crate::write::writer::FileFormat;

    const KEY: &str = "_KEY_id";

    /// A sorted file of `keys` (and a string value) in pages of 64 rows, row groups of 700.
    fn file(keys: &[i64]) -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![
            Field::new(KEY, ArrowType::Int64, false),
            Field::new("v", ArrowType::Utf8, true),
        ]));
        let values: Vec<String> = keys.iter().map(|k| format!("v{k}")).collect();
        paged(
            RecordBatch::try_new(
                schema,
                vec![Arc::new(Int64Array::from(keys.to_vec())), Arc::new(StringArray::from(values))],
            )
            .unwrap(),
        )
    }

    /// `batch` as a parquet file in pages of 64 rows, row groups of 700, with Strata's footer checksums.
    fn paged(batch: RecordBatch) -> Vec<u8> {
        paged_with(batch, true)
    }

    /// `batch` in pages of 64 rows, row groups of 700, with column-chunk CRCs, and with block checksums if
    /// `blocks` (a file Strata wrote before block checksums has none).
    fn paged_with(batch: RecordBatch, blocks: bool) -> Vec<u8> {
        use parquet::file::metadata::KeyValue;
        let props = WriterProperties::builder()
            .set_data_page_row_count_limit(64)
            .set_write_batch_size(64)
            .set_max_row_group_row_count(Some(700))
            .build();
        let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.flush().unwrap();
        w.sync().unwrap();
        let chunks = crate::integrity::verify::chunk_crcs(w.inner(), w.flushed_row_groups()).unwrap();
        w.append_key_value_metadata(KeyValue::new(crate::integrity::verify::CHUNK_CRC_KEY.to_string(), chunks));
        if blocks {
            let blocks = crate::integrity::block_crc::block_crcs(w.inner());
            w.append_key_value_metadata(KeyValue::new(crate::integrity::block_crc::BLOCK_CRC_KEY.to_string(), blocks));
        }
        w.into_inner().unwrap()
    }

    /// The rows of a pruned read of `f.parquet` in `io`, read whole and read by ranges (as filtered scans
    /// and lookups read), which must decode the same rows: (position, key) each.
    fn read(io: &MemoryFileIO, pred: Predicate, dv: Option<&DeletionVector>) -> Vec<(u64, i64)> {
        let whole = read_file(io, pred.clone(), dv, false).unwrap();
        let ranged = read_file(io, pred, dv, true).unwrap();
        assert_eq!(whole, ranged, "a ranged read decodes other rows than a whole one");
        whole
    }

    /// (position, key) of every row a pruned read of `pred` decodes, the file read whole or by `ranged` reads.
    fn read_file(
        io: &MemoryFileIO,
        pred: Predicate,
        dv: Option<&DeletionVector>,
        ranged: bool,
    ) -> strata_spec::Result<Vec<(u64, i64)>> {
        let bigint: DataType = "BIGINT".parse().unwrap();
        let req = ReadRequest {
            columns: vec![(KEY.to_string(), bigint), ("v".to_string(), "STRING".parse().unwrap())],
            dv,
            with_positions: true,
            batch_size: 100,
            prune: Some(Arc::new((pred, vec![(KEY.to_string(), bigint)]))),
            select: None,
            rows: None,
            mapping: None,
        };
        let mut out = Vec::new();
        let batches = if ranged {
            let io: Arc<dyn FileIO> = Arc::new(io.clone());
            crate::read::reader::open_file_ranged(&io, "f.parquet", FileFormat::Parquet, &req, None, true, None)?
        } else {
            open_file(io, "f.parquet", FileFormat::Parquet, &req)?
        };
        for b in batches {
            let b = b?;
            let keys = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let values = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            let pos = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
            for r in 0..b.num_rows() {
                // Every decoded row is a row of the file, at its position, with its own value.
                assert_eq!(values.value(r), format!("v{}", keys.value(r)));
                out.push((pos.value(r) as u64, keys.value(r)));
            }
        }
        Ok(out)
    }

    /// A file with column-chunk CRCs only (Strata's before block checksums) read by ranges for a filtered
    /// scan has the chunks it decodes fetched whole and checked; with block checksums, the blocks read are.
    #[test]
    fn ranged_filtered_reads_check_chunks_or_blocks() {
        let keys: Vec<i64> = (0..2000).collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new(KEY, ArrowType::Int64, false),
            Field::new("v", ArrowType::Utf8, true),
        ]));
        let values: Vec<String> = keys.iter().map(|k| format!("v{k}")).collect();
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from(keys.clone())), Arc::new(StringArray::from(values))],
        )
        .unwrap();
        for blocks in [false, true] {
            let bytes = paged_with(batch.clone(), blocks);
            let meta = parquet::file::metadata::ParquetMetaDataReader::new()
                .parse_and_finish(&bytes::Bytes::from(bytes.clone()))
                .unwrap();
            let (start, len) = meta.row_group(0).column(1).byte_range();
            let mut bad = bytes.clone();
            bad[(start + len / 2) as usize] ^= 0x04;
            let io = MemoryFileIO::new();
            io.write("f.parquet", &bad).unwrap();
            // Key 10 lives in row group 0, whose `v` chunk holds the flipped byte.
            let e = read_file(&io, Predicate::eq(KEY, Datum::BigInt(10)), None, true).unwrap_err();
            assert!(
                matches!(e, strata_spec::Error::Corrupt { .. }) && e.to_string().contains("checksum"),
                "{blocks}: {e}"
            );
            assert!(read_file(&io, Predicate::eq(KEY, Datum::BigInt(10)), None, false).is_err());
            // Another row group's rows are read, and right (with block checksums, unless they share the
            // flipped byte's block: this file is smaller than a block).
            match read_file(&io, Predicate::eq(KEY, Datum::BigInt(1500)), None, true) {
                Ok(rows) => assert!(rows.contains(&(1500, 1500)), "{blocks}: {rows:?}"),
                Err(e) => assert!(blocks && e.to_string().contains("checksum"), "{blocks}: {e}"),
            }
        }
    }

    fn matches(pred: &Predicate, k: i64) -> bool {
        match pred {
            Predicate::Or(ps) => ps.iter().any(|p| matches(p, k)),
            Predicate::And(ps) => ps.iter().all(|p| matches(p, k)),
            Predicate::Compare { op, value: Datum::BigInt(v), .. } => match op {
                CmpOp::Eq => k == *v,
                CmpOp::GtEq => k >= *v,
                CmpOp::LtEq => k <= *v,
                CmpOp::Lt => k < *v,
                CmpOp::Gt => k > *v,
                CmpOp::NotEq => k != *v,
            },
            _ => true,
        }
    }

    #[test]
    fn a_point_predicate_decodes_one_page_of_a_sorted_file() {
        let keys: Vec<i64> = (0..2000).map(|i| i * 3).collect();
        let io = MemoryFileIO::new();
        io.write("f.parquet", &file(&keys)).unwrap();
        let rows = read(&io, Predicate::eq(KEY, Datum::BigInt(3 * 1500)), None);
        assert!(rows.contains(&(1500, 4500)), "the matching row is read");
        assert!(rows.len() <= 64, "one page of 64 rows is decoded, not {}", rows.len());
        assert!(read(&io, Predicate::eq(KEY, Datum::BigInt(1)), None).len() <= 64);
    }

    #[test]
    fn statistics_are_of_the_predicate_column_when_a_nested_column_precedes_it() {
        // A struct of two fields is two leaves, so the key column is root 1 but leaf 2; leaf 1 holds values
        // far from the keys: read as the key column's statistics, they would rule out every group and page.
        let fields: arrow_schema::Fields =
            vec![Field::new("a", ArrowType::Int64, false), Field::new("b", ArrowType::Int64, false)].into();
        let schema = Arc::new(Schema::new(vec![
            Field::new("tags", ArrowType::Struct(fields.clone()), false),
            Field::new(KEY, ArrowType::Int64, false),
            Field::new("v", ArrowType::Utf8, true),
        ]));
        let keys: Vec<i64> = (0..2000).collect();
        let far: Vec<i64> = keys.iter().map(|k| k + 1_000_000).collect();
        let tags = arrow_array::StructArray::new(
            fields,
            vec![Arc::new(Int64Array::from(far.clone())), Arc::new(Int64Array::from(far))],
            None,
        );
        let values: Vec<String> = keys.iter().map(|k| format!("v{k}")).collect();
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(tags), Arc::new(Int64Array::from(keys.clone())), Arc::new(StringArray::from(values))],
        )
        .unwrap();
        let io = MemoryFileIO::new();
        io.write("f.parquet", &paged(batch)).unwrap();
        for k in [0, 999, 1999] {
            let rows = read(&io, Predicate::eq(KEY, Datum::BigInt(k)), None);
            assert!(rows.contains(&(k as u64, k)), "key {k} is read: {rows:?}");
        }
    }

    proptest! {
        #[test]
        fn pruned_reads_keep_every_live_matching_row(
            gaps in proptest::collection::vec(0i64..4, 1..2000),
            deleted in proptest::collection::btree_set(0u64..2000, 0..200),
            with_dv in any::<bool>(),
            points in proptest::collection::vec(-5i64..6000, 1..6),
            range in (-5i64..6000, 0i64..800),
            kind in 0u8..3,
        ) {
            // Sorted keys, duplicates included (a key's older copies sit beside it in a file).
            let keys: Vec<i64> = gaps.iter().scan(0i64, |k, g| { *k += g; Some(*k) }).collect();
            let io = MemoryFileIO::new();
            io.write("f.parquet", &file(&keys)).unwrap();
            let mut dv = DeletionVector::new(false);
            for &p in &deleted {
                dv.delete(p).unwrap();
            }
            let pred = match kind {
                0 => Predicate::Or(points.iter().map(|&p| Predicate::eq(KEY, Datum::BigInt(p))).collect()),
                1 => Predicate::And(vec![
                    Predicate::cmp(KEY, CmpOp::GtEq, Datum::BigInt(range.0)),
                    Predicate::cmp(KEY, CmpOp::LtEq, Datum::BigInt(range.0 + range.1)),
                ]),
                _ => Predicate::cmp(KEY, CmpOp::Lt, Datum::BigInt(points[0])),
            };
            let got = read(&io, pred.clone(), with_dv.then_some(&dv));
            let live = |p: &u64| !(with_dv && deleted.contains(p));
            // Exactly the live rows, in order, at their positions; every live match among them.
            prop_assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
            for (p, k) in &got {
                prop_assert!(live(p));
                prop_assert_eq!(keys[*p as usize], *k);
            }
            let want: Vec<(u64, i64)> = keys.iter().enumerate()
                .map(|(p, &k)| (p as u64, k))
                .filter(|(p, k)| live(p) && matches(&pred, *k))
                .collect();
            let got_matching: Vec<(u64, i64)> = got.into_iter().filter(|(_, k)| matches(&pred, *k)).collect();
            prop_assert_eq!(got_matching, want);
        }
    }
}
