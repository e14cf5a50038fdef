//! Deletion-vector micro benchmarks: `is_deleted` per call, serialize and deserialize throughput, and
//! applying a vector to a parquet read (as a `RowSelection`) at 0.1%, 1%, 10% and 50% deleted.
//! Bytes per deleted row are printed once per density.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use strata::dv::{decode_entry, DeletionVector};
use strata::format::{live_runs, parquet_selection};

const ROWS: u64 = 1_000_000;

/// Deterministic pseudo-random deleted positions: `per_mille` of every 1000 rows.
fn dv_with(density: f64, rows: u64) -> DeletionVector {
    let mut dv = DeletionVector::new(false);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for p in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (x % 1_000_000) as f64 / 1_000_000.0 < density {
            dv.delete(p).unwrap_or_default();
        }
    }
    dv
}

fn parquet_file(rows: u64) -> Bytes {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
    ]));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(128 * 1024))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap_or_else(|e| panic!("{e}"));
    let batch = 64 * 1024;
    let mut start = 0;
    while start < rows {
        let n = batch.min(rows - start);
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values((start..start + n).map(|i| i as i64)));
        let names: ArrayRef =
            Arc::new(StringArray::from_iter_values((start..start + n).map(|i| format!("name-{:08}", i * 7))));
        let vs: ArrayRef = Arc::new(Int64Array::from_iter_values((start..start + n).map(|i| (i * 31) as i64)));
        w.write(&RecordBatch::try_new(schema.clone(), vec![ids, names, vs]).unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        start += n;
    }
    w.close().unwrap_or_else(|e| panic!("{e}"));
    Bytes::from(out)
}

fn read_rows(file: &Bytes, dv: Option<&DeletionVector>) -> usize {
    let mut b = ParquetRecordBatchReaderBuilder::try_new(file.clone()).unwrap_or_else(|e| panic!("{e}"));
    if let Some(dv) = dv {
        b = b.with_row_selection(parquet_selection(&live_runs(dv, std::slice::from_ref(&(0..ROWS)))));
    }
    b.build().unwrap_or_else(|e| panic!("{e}")).map(|r| r.map(|b| b.num_rows()).unwrap_or(0)).sum()
}

fn benches(c: &mut Criterion) {
    let densities = [0.001, 0.01, 0.1, 0.5];
    let dvs: Vec<(f64, DeletionVector)> = densities.iter().map(|&d| (d, dv_with(d, ROWS))).collect();

    for (d, dv) in &dvs {
        let (entry, _) = dv.serialize_entry().unwrap_or_default();
        eprintln!(
            "density {:>5.1}%: {} deleted of {ROWS}, entry {} bytes, {:.3} bytes per deleted row",
            d * 100.0,
            dv.cardinality(),
            entry.len(),
            entry.len() as f64 / dv.cardinality().max(1) as f64
        );
    }

    let mut g = c.benchmark_group("dv_is_deleted");
    for (d, dv) in &dvs {
        g.throughput(Throughput::Elements(ROWS));
        g.bench_with_input(BenchmarkId::from_parameter(format!("{}%", d * 100.0)), dv, |b, dv| {
            b.iter(|| (0..ROWS).filter(|&p| dv.is_deleted(black_box(p))).count())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("dv_serialize");
    for (d, dv) in &dvs {
        g.throughput(Throughput::Elements(dv.cardinality()));
        g.bench_with_input(BenchmarkId::from_parameter(format!("{}%", d * 100.0)), dv, |b, dv| {
            b.iter(|| dv.serialize_entry().map(|(e, _)| e.len()).unwrap_or_default())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("dv_deserialize");
    for (d, dv) in &dvs {
        let (entry, len) = dv.serialize_entry().unwrap_or_default();
        g.throughput(Throughput::Elements(dv.cardinality()));
        g.bench_with_input(BenchmarkId::from_parameter(format!("{}%", d * 100.0)), &entry, |b, entry| {
            b.iter(|| decode_entry(entry, len).map(|d| d.cardinality()).unwrap_or_default())
        });
    }
    g.finish();

    let file = parquet_file(ROWS);
    let mut g = c.benchmark_group("parquet_read_with_dv");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("no_dv", |b| b.iter(|| read_rows(&file, None)));
    for (d, dv) in &dvs {
        let kept = read_rows(&file, Some(dv));
        assert_eq!(kept as u64, ROWS - dv.cardinality());
        g.bench_with_input(BenchmarkId::from_parameter(format!("{}%", d * 100.0)), dv, |b, dv| {
            b.iter(|| read_rows(&file, Some(dv)))
        });
    }
    g.finish();
}

criterion_group!(dv, benches);
criterion_main!(dv);
