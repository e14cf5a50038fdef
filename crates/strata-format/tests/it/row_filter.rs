//! A filtered read's row filter: rows the predicate rejects are not returned (the filter runs inside the
//! parquet reader), every matching row is, and retraction rows pass whatever their values, so that a raw
//! read's check that its file holds none still sees them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch, StringArray};
use strata_format::{CmpOp, DataFileRef, FileRead, KvFileWriter, Predicate, VALUE_KIND};
use strata_io::{FileIO, MemoryFileIO};
use strata_spec::{DataType, Datum, TypeRoot};

#[test]
fn the_row_filter_keeps_matching_rows_and_every_retraction() {
    let layout = common::layout();
    let n = 1000i64;
    // Key 500 is a DELETE whose value fails the filter.
    let kind = |i: i64| if i == 500 { 3i8 } else { 0 };
    let v = |i: i64| if i == 500 { 999_999 } else { i * 7 % 1000 };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(Int8Array::from_iter_values((0..n).map(kind))),
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(Int64Array::from_iter_values((0..n).map(v))),
        Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("s{i}")))),
    ];
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let cfg = common::writer_config(1);
    let mut w = KvFileWriter::new(io.clone(), "/b".into(), Box::new(|| "f.parquet".into()), layout.clone(), cfg);
    w.write(&RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap()).unwrap();
    let file = DataFileRef::new("/b/f.parquet".into(), w.close().unwrap().remove(0), None);
    // Values are spread over every page: statistics prune nothing, only the row filter can drop rows.
    let filter = Predicate::cmp("v", CmpOp::Lt, Datum::BigInt(100));
    let types = vec![("id".to_string(), DataType::bigint()), ("v".to_string(), DataType::bigint())];
    let columns = vec![
        ("id".to_string(), DataType::bigint()),
        ("v".to_string(), DataType::bigint()),
        (VALUE_KIND.to_string(), DataType::not_null(TypeRoot::TinyInt)),
    ];
    let batches =
        FileRead::new(columns).batch_size(64).prune(Some(Arc::new((filter, types)))).open(&io, &file).unwrap();
    let mut got: Vec<(i64, i64, i8)> = Vec::new();
    for b in batches {
        let b = b.unwrap();
        let (ids, vs, ks) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(1).as_primitive::<Int64Type>(),
            b.column(2).as_primitive::<Int8Type>(),
        );
        got.extend((0..b.num_rows()).map(|i| (ids.value(i), vs.value(i), ks.value(i))));
    }
    let want: Vec<(i64, i64, i8)> = (0..n).filter(|&i| v(i) < 100 || i == 500).map(|i| (i, v(i), kind(i))).collect();
    assert_eq!(got, want);
}
