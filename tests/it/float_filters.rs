//! Filters on FLOAT and DOUBLE columns return every row the exact comparison keeps, although statistics
//! (parquet's row-group and page statistics, other writers' manifests) leave NaN out and may not order the two
//! zeros. The expected rows come from `total_cmp`, the order Strata's filters compare floats in (-NaN below
//! every number, NaN above, -0 below +0), not from Strata.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Float32Array, Float64Array, Int64Array, RecordBatch};
use strata::spec::{DataType, Datum, TableSchema, TypeRoot};
use strata::{CmpOp, FileIO, LocalFileIO, Predicate, ReadBuilder, Table, TableWriter};

/// A NaN with its sign bit set, as x86 computes 0/0.
const NEG_NAN: f64 = f64::from_bits(0xFFF8_0000_0000_0000);

/// The rows of each commit (one level-0 file each in merge-on-read): files whose numbers lie far from the
/// NaN and zero rows beside them, so statistics that miss those rows would prune their files.
fn commits() -> Vec<Vec<Option<f64>>> {
    vec![
        vec![Some(1.0), Some(f64::NAN)],
        vec![Some(2.0), Some(NEG_NAN)],
        vec![Some(-0.0), Some(0.5)],
        vec![Some(0.0), Some(3.0)],
        vec![Some(-7.0), None, Some(8.0)],
        vec![Some(f64::NEG_INFINITY), Some(f64::INFINITY)],
    ]
}

fn table(dir: &std::path::Path, dv: bool) -> Table {
    let options = [
        ("bucket", "1"),
        ("deletion-vectors.enabled", if dv { "true" } else { "false" }),
        ("num-sorted-run.compaction-trigger", "100"),
        ("num-sorted-run.stop-trigger", "100"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let schema = TableSchema::new(
        vec![
            ("id".into(), DataType::not_null(TypeRoot::BigInt)),
            ("d".into(), DataType::nullable(TypeRoot::Double)),
            ("f".into(), DataType::nullable(TypeRoot::Float)),
        ],
        vec![],
        vec!["id".into()],
        options,
        0,
    )
    .unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let t = Table::create(io, dir.join(if dv { "dv" } else { "mor" }).to_str().unwrap(), schema).unwrap();
    let arrow_schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("d", arrow_schema::DataType::Float64, true),
        arrow_schema::Field::new("f", arrow_schema::DataType::Float32, true),
    ]));
    let mut w = TableWriter::new(&t, "w").unwrap();
    let mut id = 0i64;
    for rows in commits() {
        let ids = Int64Array::from_iter_values((0..rows.len() as i64).map(|i| id + i));
        id += rows.len() as i64;
        let d = Float64Array::from(rows.clone());
        let f = Float32Array::from(rows.iter().map(|v| v.map(|v| v as f32)).collect::<Vec<_>>());
        let batch = RecordBatch::try_new(arrow_schema.clone(), vec![Arc::new(ids), Arc::new(d), Arc::new(f)]).unwrap();
        w.write(&batch).unwrap();
        w.commit().unwrap();
    }
    t
}

/// Ids whose value in column `d` (or `f` as FLOAT) the comparison keeps, by `total_cmp`; nulls never match.
fn expected(column: &str, op: CmpOp, literal: f64) -> BTreeSet<i64> {
    let values: Vec<Option<f64>> = commits().into_iter().flatten().collect();
    let keeps = |o: std::cmp::Ordering| match op {
        CmpOp::Eq => o.is_eq(),
        CmpOp::NotEq => o.is_ne(),
        CmpOp::Lt => o.is_lt(),
        CmpOp::LtEq => o.is_le(),
        CmpOp::Gt => o.is_gt(),
        CmpOp::GtEq => o.is_ge(),
    };
    (0..values.len() as i64)
        .filter(|&i| {
            values[i as usize].is_some_and(|v| match column {
                "d" => keeps(v.total_cmp(&literal)),
                _ => keeps((v as f32).total_cmp(&(literal as f32))),
            })
        })
        .collect()
}

fn ids(t: &Table, filter: Predicate) -> BTreeSet<i64> {
    let read = ReadBuilder::new(t).with_filter(filter).read().unwrap();
    read.batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect()
}

#[test]
fn float_filters_keep_the_nan_and_zero_rows_statistics_leave_out() {
    let dir = tempfile::tempdir().unwrap();
    let ops = [CmpOp::Eq, CmpOp::NotEq, CmpOp::Lt, CmpOp::LtEq, CmpOp::Gt, CmpOp::GtEq];
    let literals = [5.0, -5.0, 1.0, 0.0, -0.0, f64::NAN, NEG_NAN, f64::INFINITY];
    for dv in [false, true] {
        let t = table(dir.path(), dv);
        let mut checked = 0;
        for column in ["d", "f"] {
            for op in ops {
                for lit in literals {
                    let datum = if column == "d" { Datum::Double(lit) } else { Datum::Float(lit as f32) };
                    let got = ids(&t, Predicate::cmp(column, op, datum));
                    assert_eq!(
                        got,
                        expected(column, op, lit),
                        "dv {dv}: {column} {op:?} {lit:?} (bits {:x})",
                        lit.to_bits()
                    );
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 2 * ops.len() * literals.len());
    }
}
