//! The cost of one data file's write and whole read, for the checksum overhead (docs/BENCHMARKS.md,
//! "Checksums of ORC and Avro files"): `cargo run --release -p strata-format --example file_rw -- FORMAT ROWS
//! RUNS DIR` writes ROWS rows (`id BIGINT` key, `v BIGINT`, `s STRING` of 16 characters) as one parquet or orc
//! file in DIR through `KvFileWriter` (zstd, as tables write them), reads it back whole, RUNS times, and
//! prints the median and best seconds of each as one JSON line. `scripts/bench-checksums.sh` runs it against
//! the code before a change.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch, StringArray};
use strata_format::{file_columns, DataFileRef, FileFormat, FileRead, KeyValueLayout, KvFileWriter, WriterConfig};
use strata_io::{FileIO, LocalFileIO};
use strata_spec::{DataType, FileSource, TableSchema};

fn layout() -> Arc<KeyValueLayout> {
    let fields =
        vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint()), ("s".into(), DataType::string())];
    let schema = TableSchema::new(fields, vec![], vec!["id".into()], Default::default(), 0).unwrap();
    Arc::new(KeyValueLayout::new(&schema).unwrap())
}

/// Batches of 100,000 rows in file layout.
fn batches(layout: &KeyValueLayout, rows: i64) -> Vec<RecordBatch> {
    (0..rows)
        .step_by(100_000)
        .map(|start| {
            let ids = start..(start + 100_000).min(rows);
            let s = ids.clone().map(|i| format!("{:016x}", (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 8));
            let cols: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(Int8Array::from(vec![0i8; ids.clone().count()])),
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(Int64Array::from_iter_values(ids.clone().map(|i| i * 7))),
                Arc::new(StringArray::from_iter_values(s)),
            ];
            RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap()
        })
        .collect()
}

fn stats(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let format = match args.first().map(String::as_str) {
        Some("orc") => FileFormat::Orc,
        _ => FileFormat::Parquet,
    };
    let rows: i64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(7);
    let dir = args.get(3).cloned().unwrap_or_else(|| std::env::temp_dir().display().to_string());
    let layout = layout();
    let input = batches(&layout, rows);
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let name = format!("data.{}", format.extension());
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    let mut size = 0;
    for _ in 0..runs {
        let config = WriterConfig {
            format,
            compression: "zstd".into(),
            target_file_size: 1 << 40,
            schema_id: 0,
            level: 1,
            file_source: FileSource::Compact,
        };
        let owned = name.clone();
        let t = Instant::now();
        let mut w = KvFileWriter::new(io.clone(), dir.clone(), Box::new(move || owned.clone()), layout.clone(), config);
        for b in &input {
            w.write(b).unwrap();
        }
        let meta = w.close().unwrap().remove(0);
        writes.push(t.elapsed().as_secs_f64());
        size = meta.file_size;
        let file = DataFileRef::new(format!("{dir}/{name}"), meta, None);
        let t = Instant::now();
        let mut read = 0;
        for b in FileRead::new(file_columns(&layout)).batch_size(8192).open(&io, &file).unwrap() {
            read += b.unwrap().num_rows() as i64;
        }
        reads.push(t.elapsed().as_secs_f64());
        assert_eq!(read, rows);
    }
    let ((w50, wbest), (r50, rbest)) = (stats(writes), stats(reads));
    println!(
        "{{\"format\": \"{}\", \"rows\": {rows}, \"bytes\": {size}, \"write_p50_s\": {w50:.4}, \"write_best_s\": {wbest:.4}, \"read_p50_s\": {r50:.4}, \"read_best_s\": {rbest:.4}}}",
        format.extension()
    );
}
