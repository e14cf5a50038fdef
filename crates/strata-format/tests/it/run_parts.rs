//! A sorted run's reader reads a large file in parts (row ranges fetched by their pages) and returns
//! exactly the rows a whole-file read returns, its deletion vector applied, in order; so does a merge of
//! runs, against a model of the latest row per key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use common::Rec;
use strata_dv::DeletionVector;
use strata_format::{merge_read, run_reader, DataFileRef, FileRead, KvFileWriter, MergeConfig};
use strata_io::{FileIO, LocalFileIO};

/// Rows as (key, v, s), from batches in file layout.
fn rows(batches: &[RecordBatch]) -> Vec<(i64, i64, String)> {
    let mut out = Vec::new();
    for b in batches {
        let (k, v, s) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(4).as_primitive::<Int64Type>(),
            b.column(5).as_string::<i32>(),
        );
        out.extend((0..b.num_rows()).map(|i| (k.value(i), v.value(i), s.value(i).to_string())));
    }
    out
}

/// Writes `recs` (sorted by key) as one file in `dir`; its reference with `dv`.
fn file(io: &Arc<dyn FileIO>, dir: &str, name: &str, recs: &[Rec], dv: Option<DeletionVector>) -> DataFileRef {
    let layout = common::layout();
    let owned = name.to_string();
    let mut w = KvFileWriter::new(
        io.clone(),
        dir.into(),
        Box::new(move || owned.clone()),
        layout.clone(),
        common::writer_config(1),
    );
    for chunk in recs.chunks(50_000) {
        w.write(&common::batch(&layout, chunk)).unwrap();
    }
    let meta = w.close().unwrap().remove(0);
    DataFileRef::new(format!("{dir}/{name}"), meta, dv.map(Arc::new))
}

/// Strings of 240 pseudo-random hex characters (half a byte of entropy each): some 25 MB for 200,000 rows,
/// more than one part.
fn recs(n: i64, seq: i64, step: i64) -> Vec<Rec> {
    let s = |i: i64| {
        let mut x = (i as u64 * 7 + seq as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..15)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{x:016x}")
            })
            .collect::<String>()
    };
    (0..n)
        .map(|i| Rec { key: i * step, seq: seq * 1_000_000 + i, kind: 0, v: Some(i * 10 + seq), s: Some(s(i)) })
        .collect()
}

#[test]
fn runs_read_in_parts_return_the_whole_files_rows() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().display().to_string();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let layout = common::layout();
    let old = recs(200_000, 1, 1);
    let mut dv = DeletionVector::new(false);
    for p in (0..200_000u64).step_by(7) {
        dv.delete(p).unwrap();
    }
    let big = file(&io, &base, "data-big.parquet", &old, Some(dv));
    assert!(big.meta.file_size > 16 << 20, "the file is {} bytes: not read in parts", big.meta.file_size);

    let whole: Vec<RecordBatch> = FileRead::new(strata_format::file_columns(&layout))
        .batch_size(4096)
        .open(&io, &big)
        .unwrap()
        .map(|b| b.unwrap())
        .collect();
    let parted: Vec<RecordBatch> =
        run_reader(io.clone(), &layout, vec![big.clone()], 4096).map(|b| b.unwrap()).collect();
    let whole = rows(&whole);
    assert_eq!(whole.len(), 200_000 - 200_000usize.div_ceil(7));
    assert_eq!(rows(&parted), whole);

    // Merged with a newer run updating every third key: the latest row per key, deleted rows gone.
    let new = recs(66_667, 2, 3);
    let newer = file(&io, &base, "data-new.parquet", &new, None);
    let mut newer_meta = newer;
    newer_meta.meta.level = 0;
    let mut model: BTreeMap<i64, (i64, String)> = BTreeMap::new();
    for (i, r) in old.iter().enumerate() {
        if i % 7 != 0 {
            model.insert(r.key, (r.v.unwrap(), r.s.clone().unwrap()));
        }
    }
    for r in &new {
        model.insert(r.key, (r.v.unwrap(), r.s.clone().unwrap()));
    }
    let mut big_l1 = big;
    big_l1.meta.level = 1;
    let cfg = MergeConfig::from_schema(&layout.schema).unwrap();
    let merged = merge_read(io.clone(), layout, vec![big_l1, newer_meta], cfg, true, 4096).unwrap();
    let merged: Vec<RecordBatch> = merged.map(|b| b.unwrap()).collect();
    let got: Vec<(i64, (i64, String))> = rows(&merged).into_iter().map(|(k, v, s)| (k, (v, s))).collect();
    assert_eq!(got, model.into_iter().collect::<Vec<_>>());
}
