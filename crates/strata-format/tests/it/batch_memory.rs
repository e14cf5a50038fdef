//! Batches read from a data file hold their rows' bytes and little spare capacity. The parquet decoder
//! grows a string column's value bytes by doubling, so a decoded batch holds a quarter more than its data
//! on average; a caller that keeps every batch (a scan collected into memory) kept that slack too: 160 MB
//! of a 4M-row merge-on-read scan's 1.6 GB (docs/BENCHMARKS.md, session 18).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use common::Rec;
use strata_format::{file_columns, DataFileRef, FileFormat, FileRead, KvFileWriter};
use strata_io::{FileIO, LocalFileIO};

/// Thirteen-character strings (a null every 17th row): 8,192 rows hold 106,496 value bytes, which doubling
/// rounds up to 131,072.
fn recs(n: i64) -> Vec<Rec> {
    (0..n)
        .map(|i| Rec {
            key: i,
            seq: i,
            kind: 0,
            v: Some(i * 3),
            s: (i % 17 != 0).then(|| format!("{:013}", (i as u64).wrapping_mul(0x9E37_79B9) % 10_000_000_000_000)),
        })
        .collect()
}

fn written(io: &Arc<dyn FileIO>, dir: &str, format: FileFormat, recs: &[Rec]) -> DataFileRef {
    let layout = common::layout();
    let name = format!("data.{}", if format == FileFormat::Orc { "orc" } else { "parquet" });
    let owned = name.clone();
    let mut config = common::writer_config(1);
    config.format = format;
    let mut w = KvFileWriter::new(io.clone(), dir.into(), Box::new(move || owned.clone()), layout, config);
    w.write(&common::batch(&common::layout(), recs)).unwrap();
    let meta = w.close().unwrap().remove(0);
    DataFileRef::new(format!("{dir}/{name}"), meta, None)
}

/// Each column of `b` as (name, bytes used, bytes allocated) over its buffers and null bitmap.
fn columns(b: &RecordBatch) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for (field, column) in b.schema().fields().iter().zip(b.columns()) {
        let data = column.to_data();
        let mut sizes: Vec<(usize, usize)> = data.buffers().iter().map(|buf| (buf.len(), buf.capacity())).collect();
        if let Some(nulls) = column.nulls() {
            sizes.push((nulls.buffer().len(), nulls.buffer().capacity()));
        }
        let (used, allocated) = sizes.iter().fold((0, 0), |(u, a), (l, c)| (u + l, a + c));
        out.push((field.name().clone(), used, allocated));
    }
    out
}

#[test]
fn batches_read_hold_little_spare_capacity() {
    for format in [FileFormat::Parquet, FileFormat::Orc] {
        let dir = tempfile::tempdir().unwrap();
        let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
        let want = recs(50_000);
        let file = written(&io, &dir.path().display().to_string(), format, &want);
        let batches: Vec<RecordBatch> = FileRead::new(file_columns(&common::layout()))
            .batch_size(8192)
            .open(&io, &file)
            .unwrap()
            .collect::<strata_spec::Result<_>>()
            .unwrap();
        // The rows as written, so that a compacted buffer is known to hold the right bytes.
        let mut got = Vec::new();
        for b in &batches {
            let (k, v, s) = (
                b.column(0).as_primitive::<Int64Type>(),
                b.column(4).as_primitive::<Int64Type>(),
                b.column(5).as_string::<i32>(),
            );
            got.extend(
                (0..b.num_rows()).map(|i| (k.value(i), v.value(i), s.is_valid(i).then(|| s.value(i).to_string()))),
            );
        }
        let want: Vec<_> = want.iter().map(|r| (r.key, r.v.unwrap(), r.s.clone())).collect();
        assert_eq!(got, want, "{format:?}");
        for b in &batches {
            for (column, used, allocated) in columns(b) {
                // Up to a sixteenth is left (an aligned buffer's rounding is not worth a copy); doubling
                // leaves up to half.
                assert!(
                    allocated - used <= allocated / 16,
                    "{format:?}: column {column} holds {used} bytes in {allocated}"
                );
            }
        }
    }
}
