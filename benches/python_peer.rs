//! The Rust API's side of `scripts/bench-python.sh`: the rows of a parquet file (made by the script, read
//! before any timing) written into a fresh table in one batch and one commit, then scanned, through the
//! Rust API, so the Python package's figures on the same rows show what crossing into Python costs.
//!
//! `cargo bench --bench python_peer -- ROWS.parquet WORK_DIR [BUCKETS] [DV]` prints one JSON line:
//! `{"write_s": .., "scan_s": .., "rows": ..}` (the best of three writes, each into a fresh table, and of
//! ten scans). Without arguments (a plain `cargo bench`) it says how to run it.
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use strata::spec::TableSchema;
use strata::table::{commit_batch, now_millis, FileSystemCatalog};
use strata::{LocalFileIO, ReadBuilder, TableWrite};

/// Writes per process, each into a fresh table; the best is reported (as on the Python side).
const WRITES: usize = 3;
/// Scans per process; the best is reported (as on the Python side).
const SCANS: usize = 10;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn read_rows(path: &str) -> Res<RecordBatch> {
    let reader =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path)?)?.with_batch_size(65_536).build()?;
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>()?;
    let schema = batches.first().ok_or("no rows")?.schema();
    Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let (Some(file), Some(dir)) = (args.first(), args.get(1)) else {
        eprintln!("python_peer: run through scripts/bench-python.sh (it makes the rows and compares with Python)");
        return Ok(());
    };
    let buckets = args.get(2).map_or("4", String::as_str);
    let dv = args.get(3).map_or("true", String::as_str);
    let batch = read_rows(file)?;
    let catalog = FileSystemCatalog::new(Arc::new(LocalFileIO::new()), dir);
    catalog.create_database("db", true)?;
    let mut columns = Vec::new();
    for f in batch.schema().fields() {
        let t = match f.data_type() {
            arrow_schema::DataType::Int64 => "BIGINT",
            arrow_schema::DataType::Float64 => "DOUBLE",
            _ => "STRING",
        };
        columns.push((f.name().clone(), format!("{t}{}", if f.name() == "id" { " NOT NULL" } else { "" }).parse()?));
    }
    let options: std::collections::BTreeMap<String, String> = [("bucket", buckets), ("deletion-vectors.enabled", dv)]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();

    // The best of WRITES writes, each into a fresh table (one write of 1M rows is at the mercy of the
    // scheduler and the page cache; the Python side measures the same way).
    let (mut write_s, mut name) = (f64::MAX, String::new());
    for i in 0..WRITES {
        name = format!("rust{i}");
        let schema = TableSchema::new(columns.clone(), vec![], vec!["id".into()], options.clone(), now_millis())?;
        let table = catalog.create_table("db", &name, schema, false)?;
        let started = Instant::now();
        let mut write = TableWrite::new(&table)?;
        write.write_batch(&batch)?;
        let messages = write.prepare_commit_waiting()?;
        commit_batch("bench", &table, &mut write, messages, None)?;
        write_s = write_s.min(started.elapsed().as_secs_f64());
    }

    // The best of SCANS scans (a scan takes a tenth of a second).
    let table = catalog.get_table("db", &name)?;
    let (mut scan_s, mut rows) = (f64::MAX, 0);
    for _ in 0..SCANS {
        let started = Instant::now();
        let result = ReadBuilder::new(&table).read()?;
        scan_s = scan_s.min(started.elapsed().as_secs_f64());
        // Freed outside the timing, as on the Python side.
        rows = result.num_rows();
        drop(result);
    }
    println!("{{\"write_s\": {write_s:.4}, \"scan_s\": {scan_s:.4}, \"rows\": {rows}}}");
    Ok(())
}
