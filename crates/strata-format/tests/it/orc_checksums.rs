//! Strata's ORC data files carry checksums (`orc_crc`: block CRC32s of the stripes and a CRC32 of the tail in
//! the footer's user metadata): a flipped bit is a corrupt-file error or changes nothing, never other rows. Before them, 35% of the flips in an ORC table's largest data file were read as other rows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use common::Rec;
use strata_format::{file_columns, DataFileRef, FileFormat, FileRead, KvFileWriter};
use strata_io::{FileIO, MemoryFileIO};
use strata_spec::ErrorKind;

fn recs(n: i64) -> Vec<Rec> {
    (0..n)
        .map(|i| Rec { key: i * 3, seq: i, kind: 0, v: Some(i * 7), s: (i % 5 != 0).then(|| format!("s{}", i % 97)) })
        .collect()
}

type Row = (i64, Option<i64>, Option<String>);

fn written(io: &Arc<dyn FileIO>, compression: &str, recs: &[Rec]) -> DataFileRef {
    let mut config = common::writer_config(1);
    config.format = FileFormat::Orc;
    config.compression = compression.into();
    let mut w =
        KvFileWriter::new(io.clone(), "/t".into(), Box::new(|| "data.orc".to_string()), common::layout(), config);
    w.write(&common::batch(&common::layout(), recs)).unwrap();
    let meta = w.close().unwrap().remove(0);
    DataFileRef::new("/t/data.orc".into(), meta, None)
}

fn read(io: &Arc<dyn FileIO>, file: &DataFileRef) -> strata_spec::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for b in FileRead::new(file_columns(&common::layout())).batch_size(8192).open(io, file)? {
        let b = b?;
        let (k, v, s) = (b.column(0).as_primitive::<Int64Type>(), b.column(4).as_primitive::<Int64Type>(), b.column(5));
        let s = s.as_string::<i32>();
        for i in 0..b.num_rows() {
            use arrow_array::Array;
            rows.push((k.value(i), v.is_valid(i).then(|| v.value(i)), s.is_valid(i).then(|| s.value(i).to_string())));
        }
    }
    Ok(rows)
}

/// The footer's user metadata names, as any ORC reader (orc-rust here, paimon-rust's) sees them.
fn user_metadata(bytes: Vec<u8>) -> Vec<String> {
    let builder = orc_rust::ArrowReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
    let mut names: Vec<String> = builder.file_metadata().user_custom_metadata().keys().cloned().collect();
    names.sort();
    names
}

#[test]
fn every_flipped_bit_outside_the_postscript_is_a_corrupt_error() {
    for compression in ["zstd", "none", "snappy"] {
        let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
        let want = recs(600);
        let file = written(&io, compression, &want);
        let clean = read(&io, &file).unwrap();
        assert_eq!(clean, want.iter().map(|r| (r.key, r.v, r.s.clone())).collect::<Vec<_>>(), "{compression}");
        let original = io.read(&file.path).unwrap();
        assert_eq!(user_metadata(original.clone()), ["strata.block-crc32", "strata.tail-crc32"], "{compression}");
        // Harmless flips: in the postscript (the decoder bounds its lengths, codec and version) or where the
        // bytes decode alike (a zstd frame header's unused bits).
        let postscript = usize::from(original[original.len() - 1]) + 1;
        let (mut errors, mut harmless) = (0, 0);
        for at in 0..original.len() {
            let mut bad = original.clone();
            bad[at] ^= 1 << (at % 8);
            io.write(&file.path, &bad).unwrap();
            match read(&io, &file) {
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Corrupt, "{compression} offset {at}: {e}");
                    errors += 1;
                }
                Ok(rows) => {
                    assert_eq!(
                        rows,
                        clean,
                        "{compression}: a flip at offset {at} of {} was read as other rows",
                        bad.len()
                    );
                    harmless += 1;
                }
            }
        }
        eprintln!("{compression}: {} bytes, {errors} errors, {harmless} harmless", original.len());
        assert!(harmless <= postscript + 8, "{compression}: {harmless} harmless flips");
        io.write(&file.path, &original).unwrap();
    }
}

/// ORC files of other writers (orc-rust's plain writer, as paimon-rust writes them) carry no Strata entries
/// and read as before; one whose only user metadata name is a damaged form of Strata's is corrupt.
#[test]
fn files_without_strata_checksums_read_unchecked() {
    let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
    let want = recs(300);
    let file = written(&io, "zstd", &want);
    let layout = common::layout();
    let batch = common::batch(&layout, &want);
    let plain = |metadata: Vec<(String, Vec<u8>)>| {
        let mut out = Vec::new();
        let mut w = orc_rust::ArrowWriterBuilder::new(&mut out, layout.stored_schema.clone()).try_build().unwrap();
        let stored = arrow_array::RecordBatch::try_new(layout.stored_schema.clone(), batch.columns().to_vec()).unwrap();
        w.write(&stored).unwrap();
        w.close_with_user_metadata(|_, _| metadata).unwrap();
        out
    };
    io.write(&file.path, &plain(Vec::new())).unwrap();
    assert_eq!(read(&io, &file).unwrap().len(), 300);
    io.write(&file.path, &plain(vec![("strata.block-crc33".into(), b"x".to_vec())])).unwrap();
    let e = read(&io, &file).unwrap_err();
    assert!(e.kind() == ErrorKind::Corrupt && e.to_string().contains("looks like a damaged"), "{e}");
    io.write(&file.path, &plain(vec![("strata.tail-crc32".into(), b"00000000".to_vec())])).unwrap();
    let e = read(&io, &file).unwrap_err();
    assert!(e.kind() == ErrorKind::Corrupt && e.to_string().contains("lacks"), "{e}");
}
