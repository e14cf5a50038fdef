//! Arrow in, Arrow out: write `RecordBatch`es with row kinds into a partitioned merge-on-read table, then
//! read a projection back, time-travel to an earlier snapshot, and compact.
//!
//! `cargo run --example arrow_batches`

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use strata::spec::{DataType, TableSchema};
use strata::{Catalog, LocalFileIO, ReadBuilder, TableWriter};

fn batch(ids: &[i64], regions: &[&str], amounts: &[i64]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("region", ArrowType::Utf8, false),
        Field::new("amount", ArrowType::Int64, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(StringArray::from(regions.to_vec())),
        Arc::new(Int64Array::from(amounts.to_vec())),
    ];
    RecordBatch::try_new(schema, cols).unwrap_or_else(|e| panic!("{e}"))
}

fn main() -> strata::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| strata::Error::io("tempdir", e))?;
    let catalog = Catalog::new(Arc::new(LocalFileIO::new()), dir.path().to_str().unwrap_or("."));
    catalog.create_database("sales", true)?;
    let schema = TableSchema::new(
        vec![
            ("id".into(), DataType::bigint()),
            ("region".into(), DataType::string()),
            ("amount".into(), DataType::bigint()),
        ],
        vec!["region".into()],
        vec!["id".into(), "region".into()],
        BTreeMap::from([
            ("bucket".to_string(), "2".to_string()),
            ("merge-engine".to_string(), "aggregation".to_string()),
            ("fields.amount.aggregate-function".to_string(), "sum".to_string()),
        ]),
        0,
    )?;
    let table = catalog.create_table("sales", "orders", schema, true)?;
    let mut writer = TableWriter::new(&table, "arrow-example")?;
    writer.write(&batch(&[1, 2, 3], &["eu", "us", "eu"], &[10, 20, 30]))?;
    let first = writer.commit()?.unwrap_or_default();
    // The aggregation engine sums amounts per key; a -U retracts a previous contribution.
    writer.write_with_kinds(&batch(&[1, 2, 2], &["eu", "us", "us"], &[5, 20, 7]), &[0, 1, 0])?;
    writer.commit()?;
    writer.compact(true)?;

    let now = ReadBuilder::new(&table).with_projection(&["id", "amount"]).read()?;
    let then = ReadBuilder::new(&table).with_snapshot(first).read()?;
    let total = |batches: &[RecordBatch], col: usize| -> i64 {
        batches
            .iter()
            .map(|b| b.column(col).as_any().downcast_ref::<Int64Array>().map_or(0, |a| a.iter().flatten().sum::<i64>()))
            .sum()
    };
    assert_eq!(total(&now.batches, 1), 15 + 7 + 30);
    assert_eq!(total(&then.batches, 2), 60);
    println!(
        "now: {} rows, total {}; at snapshot {first}: total {}",
        now.num_rows(),
        total(&now.batches, 1),
        total(&then.batches, 2)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_runs() {
        super::main().unwrap_or_else(|e| panic!("{e}"));
    }
}
