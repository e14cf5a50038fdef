//! `TableQuery` and `get` return, for a table of every atomic type with nulls, exactly the row last written
//! for each key (the input batches are the model), in both table modes, through local lookup files whose
//! rows are packed per type. (Columns are compared: Strata's batches carry Paimon's field ids as metadata.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::*;
use arrow_schema::{DataType as ArrowType, Field, Schema, TimeUnit};
use strata::format::lookup::PackedValue;
use strata::spec::{DataType, Datum, TableSchema};
use strata::{get, FileIO, FoundRow, LocalFileIO, PackedTableRow, Table, TableQuery, TableWriter};

/// (column, Paimon type, its Arrow type in Strata's files).
fn columns() -> Vec<(&'static str, &'static str, ArrowType)> {
    vec![
        ("id", "BIGINT NOT NULL", ArrowType::Int64),
        ("b", "BOOLEAN", ArrowType::Boolean),
        ("t", "TINYINT", ArrowType::Int8),
        ("s", "SMALLINT", ArrowType::Int16),
        ("i", "INT", ArrowType::Int32),
        ("f", "FLOAT", ArrowType::Float32),
        ("d", "DOUBLE", ArrowType::Float64),
        ("dec", "DECIMAL(20, 4)", ArrowType::Decimal128(20, 4)),
        ("str", "STRING", ArrowType::Utf8),
        ("bin", "BYTES", ArrowType::Binary),
        ("dt", "DATE", ArrowType::Date32),
        ("tm", "TIME(3)", ArrowType::Time32(TimeUnit::Millisecond)),
        ("ts", "TIMESTAMP(6)", ArrowType::Timestamp(TimeUnit::Microsecond, None)),
        ("ltz", "TIMESTAMP(3) WITH LOCAL TIME ZONE", ArrowType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))),
    ]
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(columns().into_iter().map(|(n, _, t)| Field::new(n, t, n != "id")).collect::<Vec<_>>()))
}

/// Rows for `ids` in `round`: values from the id and round, a null in each column on its own rows.
fn batch(ids: &[i64], round: i64) -> RecordBatch {
    let v = |id: i64| id * 131 + round * 7;
    let null = |id: i64, c: i64| (id + round + c) % 5 == 0;
    let each = |c: i64| ids.iter().map(move |&id| (!null(id, c)).then_some(v(id)));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(BooleanArray::from_iter(each(1).map(|x| x.map(|x| x % 2 == 0)))),
        Arc::new(Int8Array::from_iter(each(2).map(|x| x.map(|x| x as i8)))),
        Arc::new(Int16Array::from_iter(each(3).map(|x| x.map(|x| x as i16)))),
        Arc::new(Int32Array::from_iter(each(4).map(|x| x.map(|x| x as i32)))),
        Arc::new(Float32Array::from_iter(
            each(5).map(|x| x.map(|x| if x % 11 == 0 { f32::NAN } else { x as f32 / 4.0 })),
        )),
        Arc::new(Float64Array::from_iter(each(6).map(|x| x.map(|x| -(x as f64) / 3.0)))),
        Arc::new(
            Decimal128Array::from_iter(each(7).map(|x| x.map(|x| i128::from(x) * 10_007)))
                .with_precision_and_scale(20, 4)
                .unwrap(),
        ),
        Arc::new(StringArray::from_iter(each(8).map(|x| x.map(|x| format!("é{}", "x".repeat((x % 13) as usize)))))),
        Arc::new(BinaryArray::from_iter(each(9).map(|x| x.map(|x| vec![x as u8; (x % 6) as usize])))),
        Arc::new(Date32Array::from_iter(each(10).map(|x| x.map(|x| (x % 40_000) as i32)))),
        Arc::new(Time32MillisecondArray::from_iter(each(11).map(|x| x.map(|x| (x % 86_400_000) as i32)))),
        Arc::new(TimestampMicrosecondArray::from_iter(each(12).map(|x| x.map(|x| x * 1_000_003)))),
        Arc::new(TimestampMillisecondArray::from_iter(each(13).map(|x| x.map(|x| x * 997))).with_timezone("UTC")),
    ];
    RecordBatch::try_new(schema(), cols).unwrap()
}

fn table(dir: &std::path::Path, dv: bool) -> Table {
    let cols: Vec<(String, DataType)> =
        columns().into_iter().map(|(n, t, _)| (n.to_string(), t.parse().unwrap())).collect();
    let options = [("bucket", "2"), ("deletion-vectors.enabled", if dv { "true" } else { "false" })]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let schema = TableSchema::new(cols, vec![], vec!["id".into()], options, 0).unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    Table::create(io, dir.join(if dv { "dv" } else { "mor" }).to_str().unwrap(), schema).unwrap()
}

/// A row read in place holds `want`'s values: integers, floats, booleans, strings and binaries as such,
/// other types as their stored little-endian bytes, and a null where `want` has one.
fn assert_packed_row_is(row: &PackedTableRow, want: &RecordBatch) {
    let mut seen = 0;
    row.for_each_value(&mut |i, v| {
        seen += 1;
        let a = want.column(i);
        let shown = arrow_cast::display::array_value_to_string(a, 0).unwrap();
        match v {
            PackedValue::Null => assert!(a.is_null(0), "column {i}"),
            PackedValue::Int(x) => assert_eq!(x.to_string(), shown, "column {i}"),
            PackedValue::Boolean(x) => assert_eq!(x.to_string(), shown, "column {i}"),
            PackedValue::Float(x) => {
                let f = arrow_cast::cast(a, &ArrowType::Float64).unwrap();
                let f = f.as_any().downcast_ref::<Float64Array>().unwrap().value(0);
                assert_eq!(x.to_bits(), f.to_bits(), "column {i}");
            }
            PackedValue::Str(x) => assert_eq!(x, shown, "column {i}"),
            PackedValue::Bytes(x) => assert_eq!(x, a.as_any().downcast_ref::<BinaryArray>().unwrap().value(0)),
            PackedValue::Other(t, bytes) => {
                assert_eq!(t, a.data_type(), "column {i}");
                let d = a.to_data();
                let width = bytes.len();
                assert_eq!(bytes, &d.buffers()[0].as_slice()[d.offset() * width..(d.offset() + 1) * width]);
            }
        }
    })
    .unwrap();
    assert_eq!(seen, want.num_columns());
}

#[test]
fn query_and_get_return_the_row_last_written_for_every_type() {
    let dir = tempfile::tempdir().unwrap();
    for dv in [true, false] {
        let t = table(dir.path(), dv);
        let mut w = TableWriter::new(&t, "w").unwrap();
        // The model: each key's last row, as the one-row slice of the batch that wrote it.
        let mut model: BTreeMap<i64, RecordBatch> = BTreeMap::new();
        for round in 0..3i64 {
            // Round 0 writes 0..300; later rounds overwrite every third or fifth key.
            let ids: Vec<i64> = (0..300).filter(|id| round == 0 || id % (round * 2 + 1) == 0).collect();
            let b = batch(&ids, round);
            w.write(&b).unwrap();
            w.commit().unwrap();
            for (row, id) in ids.iter().enumerate() {
                model.insert(*id, b.slice(row, 1));
            }
        }
        let query = TableQuery::new(&t).unwrap();
        for (id, want) in &model {
            let key = [Some(Datum::BigInt(*id))];
            let got = query.get(&key).unwrap().unwrap_or_else(|| panic!("dv {dv}: key {id} not found"));
            assert_eq!(got.columns(), want.columns(), "dv {dv}: TableQuery row of key {id}");
            let got = get(&t, &key, None).unwrap().unwrap();
            assert_eq!(got.columns(), want.columns(), "dv {dv}: get row of key {id}");
            match query.get_row(&key).unwrap().expect("found by get_row") {
                FoundRow::Batch(b) => assert_eq!(b.columns(), want.columns(), "dv {dv}: get_row of key {id}"),
                FoundRow::Packed(row) => assert_packed_row_is(&row, want),
            }
        }
        assert!(query.get(&[Some(Datum::BigInt(300))]).unwrap().is_none());
        assert!(query.stats().built > 0, "dv {dv}: no lookup file was built");
    }
}
