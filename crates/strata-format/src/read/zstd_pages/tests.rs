use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;
use proptest::prelude::*;

use super::build_reader;

const ROWS: usize = 3_000;

/// A file of three row groups and small pages: `id` (no nulls), `s` (strings, some null, a dictionary
/// until it grows past its limit), `n` (ints, some null, SNAPPY where the others are zstd).
fn file(version: WriterVersion) -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("n", DataType::Int32, true),
    ]));
    let props = WriterProperties::builder()
        .set_writer_version(version)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("level")))
        .set_column_compression(ColumnPath::from("n"), Compression::SNAPPY)
        .set_max_row_group_row_count(Some(1_100))
        .set_data_page_row_count_limit(97)
        .set_dictionary_page_size_limit(512)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).expect("writer");
    for start in (0..ROWS).step_by(500) {
        let ids: Vec<i64> = (start..start + 500).map(|i| i as i64 * 3).collect();
        let s: Vec<Option<String>> =
            (start..start + 500).map(|i| (i % 7 != 0).then(|| format!("v{}", i * 31 % 401))).collect();
        let n: Vec<Option<i32>> = (start..start + 500).map(|i| (i % 5 != 0).then_some(i as i32)).collect();
        let columns: Vec<ArrayRef> =
            vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(s)), Arc::new(Int32Array::from(n))];
        w.write(&RecordBatch::try_new(schema.clone(), columns).expect("batch")).expect("write");
    }
    w.close().expect("close");
    Bytes::from(out)
}

fn concat(batches: Vec<RecordBatch>) -> Vec<ArrayRef> {
    let Some(first) = batches.first() else { return Vec::new() };
    (0..first.num_columns())
        .map(|c| {
            let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            arrow_select::concat::concat(&parts).expect("concat")
        })
        .collect()
}

/// The same read by parquet's own builder and by [`build_reader`]: (builder's columns, ours).
fn both(bytes: &Bytes, roots: &[usize], groups: &[usize], selection: Option<RowSelection>) -> [Vec<ArrayRef>; 2] {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let meta = ArrowReaderMetadata::load(bytes, options).expect("footer");
    let mask = ProjectionMask::roots(meta.parquet_schema(), roots.iter().copied());
    let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), meta.clone())
        .with_projection(mask.clone())
        .with_row_groups(groups.to_vec())
        .with_batch_size(256);
    if let Some(s) = &selection {
        builder = builder.with_row_selection(s.clone());
    }
    let reference = builder.build().expect("build").collect::<Result<Vec<_>, _>>().expect("reference read");
    let fields = meta.schema().fields().clone();
    let ours = build_reader(bytes.clone(), meta.metadata().clone(), &fields, mask, groups.to_vec(), 256, selection)
        .expect("build ours")
        .collect::<Result<Vec<_>, _>>()
        .expect("our read");
    [concat(reference), concat(ours)]
}

#[test]
fn whole_files_read_as_parquets_own_reader_reads_them() {
    for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
        let bytes = file(version);
        let [reference, ours] = both(&bytes, &[0, 1, 2], &[0, 1, 2], None);
        assert_eq!(reference[0].len(), ROWS);
        assert_eq!(ours, reference, "{version:?}");
        // Strings only, of the last two row groups.
        let [reference, ours] = both(&bytes, &[1], &[1, 2], None);
        assert_eq!(ours, reference, "{version:?}");
    }
}

#[test]
fn a_damaged_zstd_page_is_an_error_not_a_panic() {
    let bytes = file(WriterVersion::PARQUET_1_0);
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let meta = ArrowReaderMetadata::load(&bytes, options).expect("footer");
    let chunk = meta.metadata().row_group(0).column(1);
    let (start, len) = chunk.byte_range();
    let mut failed = 0;
    // Bytes across the string chunk's first pages (headers and zstd frames alike).
    for at in (start..start + len.min(600)).step_by(7) {
        let mut bad = bytes.to_vec();
        bad[at as usize] ^= 0x41;
        let mask = ProjectionMask::roots(meta.parquet_schema(), [1]);
        let fields = meta.schema().fields().clone();
        let read =
            build_reader(Bytes::from(bad), meta.metadata().clone(), &fields, mask, vec![0], 256, None).and_then(|r| {
                r.collect::<Result<Vec<_>, _>>().map_err(|e| parquet::errors::ParquetError::External(e.into()))
            });
        failed += usize::from(read.is_err());
    }
    assert!(failed > 0, "some damaged page must fail to read");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any projection, row groups and row selection read the same rows both ways (pages skipped by the
    /// offset index, dictionary pages, v1 and v2 pages, a snappy column among zstd ones).
    #[test]
    fn selections_read_as_parquets_own_reader_reads_them(
        v2 in any::<bool>(),
        roots in prop::sample::subsequence(vec![0usize, 1, 2], 1..=3),
        groups in prop::sample::subsequence(vec![0usize, 1, 2], 1..=3),
        runs in prop::collection::vec((1usize..300, any::<bool>()), 0..20),
    ) {
        let bytes = file(if v2 { WriterVersion::PARQUET_2_0 } else { WriterVersion::PARQUET_1_0 });
        let rows: usize = groups.iter().map(|&g| if g < 2 { 1_100 } else { ROWS - 2_200 }).sum();
        let selection = (!runs.is_empty()).then(|| {
            let mut selectors = Vec::new();
            let mut at = 0;
            for (n, keep) in runs {
                let n = n.min(rows - at);
                if n == 0 { break; }
                selectors.push(if keep { RowSelector::select(n) } else { RowSelector::skip(n) });
                at += n;
            }
            if at < rows { selectors.push(RowSelector::select(rows - at)); }
            RowSelection::from(selectors)
        });
        let [reference, ours] = both(&bytes, &roots, &groups, selection);
        prop_assert_eq!(ours, reference);
    }
}
