//! Merge-on-read micro benchmarks: merging 1..16 sorted runs (deduplicate, one core) and a raw scan of one
//! key-value parquet file.
#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch, StringArray};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use strata::format::{
    file_columns, open_file, FileFormat, KeyValueLayout, KvFileWriter, MergeConfig, MergeIterator, ReadRequest, Run,
    WriterConfig,
};
use strata::spec::{DataType, FileSource, TableSchema};
use strata::{FileIO, MemoryFileIO};

const ROWS: usize = 1 << 20;

fn layout() -> Arc<KeyValueLayout> {
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint()), ("s".into(), DataType::string())],
        vec![],
        vec!["id".into()],
        Default::default(),
        0,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Arc::new(KeyValueLayout::new(&schema).unwrap_or_else(|e| panic!("{e}")))
}

/// `runs` sorted runs of `ROWS / runs` rows each; run r holds keys r, r + runs, r + 2·runs … shifted so that
/// neighbouring runs overlap by half.
fn make_runs(layout: &KeyValueLayout, runs: usize) -> Vec<Vec<RecordBatch>> {
    let per = ROWS / runs;
    (0..runs)
        .map(|r| {
            let keys: Vec<i64> = (0..per).map(|i| (i * 2 + (r % 2)) as i64 + (r / 2 * per) as i64 / 2).collect();
            keys.chunks(8192)
                .map(|k| {
                    let cols: Vec<ArrayRef> = vec![
                        Arc::new(Int64Array::from(k.to_vec())),
                        Arc::new(Int64Array::from_iter_values(k.iter().map(|x| x * 10 + r as i64))),
                        Arc::new(Int8Array::from(vec![0i8; k.len()])),
                        Arc::new(Int64Array::from(k.to_vec())),
                        Arc::new(Int64Array::from_iter_values(k.iter().map(|x| x * 3))),
                        Arc::new(StringArray::from_iter_values(k.iter().map(|x| format!("value-{x:010}")))),
                    ];
                    RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap_or_else(|e| panic!("{e}"))
                })
                .collect()
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let layout = layout();
    let mut g = c.benchmark_group("merge_sorted_runs");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS as u64));
    for runs in [1usize, 2, 4, 8, 16] {
        let data = make_runs(&layout, runs);
        g.bench_with_input(BenchmarkId::from_parameter(runs), &data, |b, data| {
            b.iter(|| {
                let inputs: Vec<Run> =
                    data.iter().map(|batches| Box::new(batches.clone().into_iter().map(Ok)) as Run).collect();
                let merged = MergeIterator::new(layout.clone(), inputs, MergeConfig::deduplicate(3), true, 8192)
                    .unwrap_or_else(|e| panic!("{e}"));
                merged.map(|b| b.map(|b| b.num_rows()).unwrap_or(0)).sum::<usize>()
            })
        });
    }
    g.finish();

    // One key-value parquet file of ROWS rows, written by Strata, scanned raw (value columns).
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let cfg = WriterConfig {
        format: FileFormat::Parquet,
        compression: "zstd".into(),
        target_file_size: u64::MAX,
        schema_id: 0,
        level: 1,
        file_source: FileSource::Compact,
    };
    let mut w =
        KvFileWriter::new(io.clone(), "/t/bucket-0".into(), Box::new(|| "data-0.parquet".into()), layout.clone(), cfg);
    for b in make_runs(&layout, 1).remove(0) {
        w.write(&b).unwrap_or_else(|e| panic!("{e}"));
    }
    w.close().unwrap_or_else(|e| panic!("{e}"));
    let values: Vec<(String, DataType)> = file_columns(&layout).split_off(layout.key_arity() + 2);
    let mut g = c.benchmark_group("raw_file_scan");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("parquet_zstd_3_columns", |b| {
        b.iter(|| {
            let req = ReadRequest {
                columns: values.clone(),
                dv: None,
                with_positions: false,
                batch_size: 8192,
                prune: None,
                select: None,
                rows: None,
                mapping: None,
            };
            open_file(io.as_ref(), "/t/bucket-0/data-0.parquet", FileFormat::Parquet, &req)
                .unwrap_or_else(|e| panic!("{e}"))
                .map(|b| b.map(|b| b.num_rows()).unwrap_or(0))
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(merge, benches);
criterion_main!(merge);
