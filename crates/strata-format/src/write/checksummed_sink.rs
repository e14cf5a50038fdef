//! A data file's bytes on their way to storage, with the checksums Strata records in its footer taken as
//! they pass ([`crate::integrity::block_crc`]'s block CRCs and [`crate::integrity::verify`]'s column-chunk CRCs).
//!
//! The file is never whole in memory: the block checksums are running CRCs, and a column chunk's CRC is
//! taken once its row group is out, from the bytes kept since the previous one. Those are the row group
//! the parquet writer was holding anyway (it hands its encoded chunks over one by one and drops each), so
//! keeping them costs little more than the row group the writer already bounds.

use std::collections::VecDeque;
use std::io::Write;

use parquet::file::metadata::RowGroupMetaData;
use strata_io::FileSink;
use strata_spec::{Error, Result};

use crate::integrity::block_crc::BlockCrcBuilder;

/// Bytes per piece of the kept row group.
const PIECE_BYTES: usize = 1 << 20;

/// The writer parquet's `ArrowWriter` (or orc-rust's) writes into: every byte goes on to the store's sink.
pub(crate) struct ChecksummedSink {
    /// `None` once finished.
    sink: Option<Box<dyn FileSink>>,
    /// Bytes passed on.
    written: u64,
    /// `None` once the data (everything before the footer) is complete.
    blocks: Option<BlockCrcBuilder>,
    /// The bytes from offset `kept_from` on, until the row groups among them have their chunk CRCs: in
    /// pieces of [`PIECE_BYTES`], so that a row group costs its size (a growing `Vec` costs up to twice it,
    /// and copies it on the way).
    kept: VecDeque<Vec<u8>>,
    kept_from: u64,
    /// Whether bytes are kept for column-chunk CRCs (parquet).
    keep_chunks: bool,
    /// Each finished row group's chunk CRCs.
    groups: Vec<String>,
    /// The store's error, kept whole: the parquet writer only passes its text on.
    failed: Option<Error>,
    /// Whether the store failed: nothing more goes to it (parquet's buffer would flush into it again when
    /// its writer is dropped), even once `failed` has been taken.
    poisoned: bool,
}

impl ChecksummedSink {
    /// Bytes into `sink`, checksummed from the first.
    pub(crate) fn new(sink: Box<dyn FileSink>) -> Self {
        ChecksummedSink {
            sink: Some(sink),
            written: 0,
            blocks: Some(BlockCrcBuilder::default()),
            kept: VecDeque::new(),
            kept_from: 0,
            keep_chunks: true,
            groups: Vec::new(),
            failed: None,
            poisoned: false,
        }
    }

    /// A sink taking block CRCs only (ORC, whose footer records no column chunks): nothing is kept.
    pub(crate) fn blocks_only(sink: Box<dyn FileSink>) -> Self {
        ChecksummedSink { keep_chunks: false, ..Self::new(sink) }
    }

    /// How many row groups have their chunk CRCs.
    pub(crate) fn row_groups_checked(&self) -> usize {
        self.groups.len()
    }

    /// The store's error behind a failed write, if that is what failed.
    pub(crate) fn take_error(&mut self) -> Option<Error> {
        self.failed.take()
    }

    /// Takes the chunk CRCs of the row groups in `flushed` (all the writer has flushed, in order) that have
    /// none yet; their bytes must all have been passed on (the writer synced). Bytes before the end of
    /// the last are dropped.
    pub(crate) fn row_groups_done(&mut self, flushed: &[RowGroupMetaData]) -> Result<()> {
        for rg in flushed.iter().skip(self.groups.len()) {
            let mut cols = Vec::with_capacity(rg.num_columns());
            for c in rg.columns() {
                let (start, len) = c.byte_range();
                let crc = self
                    .kept_crc(start, len)
                    .ok_or_else(|| Error::invalid("parquet writer", "column chunk outside the bytes kept"))?;
                cols.push(format!("{crc:08x}"));
            }
            self.groups.push(cols.join(","));
            // Pieces wholly before the row group's end are done with.
            let end = rg.columns().iter().map(|c| c.byte_range()).map(|(s, n)| s.saturating_add(n)).max();
            while let Some(first) = self.kept.front() {
                let first_end = self.kept_from + first.len() as u64;
                if end.is_none_or(|e| first_end > e) {
                    break;
                }
                self.kept_from = first_end;
                self.kept.pop_front();
            }
        }
        Ok(())
    }

    /// The CRC32 of the kept bytes `start..start + len`, `None` where they are not all kept.
    fn kept_crc(&self, start: u64, len: u64) -> Option<u32> {
        let end = start.checked_add(len)?;
        if start < self.kept_from {
            return None;
        }
        let mut crc = crc32fast::Hasher::new();
        let (mut at, mut covered) = (self.kept_from, start);
        for piece in &self.kept {
            let piece_end = at + piece.len() as u64;
            if piece_end > covered && at < end {
                let from = (covered - at) as usize;
                let to = (end.min(piece_end) - at) as usize;
                crc.update(&piece[from..to]);
                covered = end.min(piece_end);
            }
            at = piece_end;
        }
        (covered == end).then(|| crc.finalize())
    }

    /// Keeps `data`, filling the last piece before starting another.
    fn keep(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match self.kept.back_mut() {
                Some(last) if last.len() < PIECE_BYTES => {
                    let take = (PIECE_BYTES - last.len()).min(data.len());
                    last.extend_from_slice(&data[..take]);
                    data = &data[take..];
                }
                _ => self.kept.push_back(Vec::with_capacity(PIECE_BYTES)),
            }
        }
    }

    /// Marks the end of the data (the footer follows), and returns the footer entries' values: the block
    /// CRCs and the chunk CRCs.
    pub(crate) fn seal(&mut self) -> Result<(String, String)> {
        let blocks = self.blocks.take().ok_or_else(|| Error::invalid("parquet writer", "sealed twice"))?;
        self.kept = VecDeque::new();
        Ok((blocks.finish(), self.groups.join(";")))
    }

    /// Marks the end of the data (an ORC file's stripes; its tail follows), and returns the block CRC entry.
    pub(crate) fn seal_blocks(&mut self) -> Result<String> {
        self.seal().map(|(blocks, _)| blocks)
    }

    /// Makes the file visible; its size. (It takes `&mut self` because parquet's writer, once finished,
    /// cannot give its sink back.)
    pub(crate) fn finish(&mut self) -> Result<u64> {
        let sink = self.sink.take().ok_or_else(|| Error::invalid("data file sink", "finished twice"))?;
        sink.finish()?;
        Ok(self.written)
    }
}

impl Write for ChecksummedSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.poisoned {
            return Err(std::io::Error::other("the file's store failed earlier"));
        }
        let Some(sink) = &mut self.sink else {
            return Err(std::io::Error::other("written after the file was finished"));
        };
        if let Err(e) = sink.write_all(data) {
            let message = e.to_string();
            self.failed = Some(e);
            self.poisoned = true;
            return Err(std::io::Error::other(message));
        }
        if let Some(blocks) = &mut self.blocks {
            blocks.update(data);
            if self.keep_chunks {
                self.keep(data);
            }
        }
        self.written += data.len() as u64;
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Arc;

    use arrow_array::RecordBatch;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use strata_io::{FileIO, LocalFileIO, MemoryFileIO};
    use strata_spec::{DataType, ErrorKind};

    use crate::layout::kv::KeyValueLayout;
    use crate::test_files::{config, layout};
    use crate::write::writer::KvFileWriter;

    /// 32 pseudo-random hex characters per row (incompressible enough to fill row groups).
    fn rows(layout: &KeyValueLayout, n: i64) -> RecordBatch {
        let s = |i: i64| format!("{:032x}", (i as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835));
        crate::test_files::rows(layout, n, s)
    }

    /// A file written in many row groups through a streaming sink (a local disk) and a buffering one (memory)
    /// records the same checksums the whole file's bytes give, reads back as written through Strata's
    /// verifying reader, and leaves nothing staged behind.
    #[test]
    fn streamed_checksums_equal_those_of_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().display().to_string();
        let layout = layout();
        let input = rows(&layout, 60_000);
        for (io, base) in [
            (Arc::new(LocalFileIO::new()) as Arc<dyn FileIO>, local.as_str()),
            (Arc::new(MemoryFileIO::new()) as Arc<dyn FileIO>, "/m"),
        ] {
            let bucket = format!("{base}/bucket-0");
            let mut w = KvFileWriter::new(
                io.clone(),
                bucket.clone(),
                Box::new(|| "f.parquet".into()),
                layout.clone(),
                config(),
            )
            .with_row_group_bytes(256 << 10);
            // Batches of uneven sizes, one larger than a slice.
            for (start, len) in [(0, 7), (7, 20_000), (20_007, 39_993)] {
                w.write(&input.slice(start, len)).unwrap();
            }
            let meta = w.close().unwrap().remove(0);
            let path = format!("{bucket}/f.parquet");
            let bytes = io.read(&path).unwrap();
            assert_eq!(meta.file_size as usize, bytes.len());
            let names: Vec<String> = io.list(&bucket).unwrap().iter().map(|f| f.name().to_string()).collect();
            assert_eq!(names, vec!["f.parquet".to_string()], "only the file is left");

            let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes.clone())).unwrap();
            let pq = reader.metadata().clone();
            let groups = pq.row_groups();
            assert!(groups.len() >= 4, "{} row groups", groups.len());
            let data_end = groups.iter().flat_map(|g| g.columns()).map(|c| c.byte_range()).map(|(s, n)| s + n).max();
            let data_end = data_end.unwrap() as usize;
            let footer = |key: &str| crate::integrity::verify::footer_value(&pq, key).unwrap().to_string();
            assert_eq!(
                footer(crate::integrity::block_crc::BLOCK_CRC_KEY),
                crate::integrity::block_crc::block_crcs(&bytes[..data_end])
            );
            assert_eq!(
                footer(crate::integrity::verify::CHUNK_CRC_KEY),
                crate::integrity::verify::chunk_crcs(&bytes, groups).unwrap()
            );
            let back: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
            let back = arrow_select::concat::concat_batches(&back[0].schema(), &back).unwrap();
            assert_eq!(back.columns(), input.columns());

            let file = crate::DataFileRef::new(path.clone(), meta, None);
            let columns = vec![("id".to_string(), DataType::bigint()), ("s".to_string(), DataType::string())];
            let read = crate::FileRead::new(columns.clone()).batch_size(4096).open(&io, &file).unwrap();
            assert_eq!(read.map(|b| b.unwrap().num_rows()).sum::<usize>(), 60_000);
            // A byte flipped in the last row group's data is found by the recorded checksums.
            let mut damaged = bytes.clone();
            damaged[data_end - 100] ^= 0x40;
            io.write(&path, &damaged).unwrap();
            let read = crate::FileRead::new(columns)
                .batch_size(4096)
                .open(&io, &file)
                .and_then(|batches| batches.collect::<strata_spec::Result<Vec<_>>>());
            assert_eq!(read.err().map(|e| e.kind()), Some(ErrorKind::Corrupt));
        }
    }

    /// A store that fails partway through a file: the writer reports the store's error (a full disk stays an
    /// I/O error, not a parquet one) and nothing appears at the path.
    #[test]
    fn a_store_failing_mid_file_is_an_io_error_and_leaves_nothing() {
        #[derive(Debug)]
        struct FullDisk(MemoryFileIO, usize);
        struct FullSink(usize);
        impl strata_io::FileSink for FullSink {
            fn write_all(&mut self, data: &[u8]) -> strata_spec::Result<()> {
                self.0 = self.0.saturating_sub(data.len());
                if self.0 == 0 {
                    let e = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left on device");
                    return Err(strata_spec::Error::io("f", e));
                }
                Ok(())
            }
            fn finish(self: Box<Self>) -> strata_spec::Result<()> {
                panic!("a failed file was finished");
            }
        }
        impl FileIO for FullDisk {
            fn create_sink(&self, _: &str) -> strata_spec::Result<Option<Box<dyn strata_io::FileSink>>> {
                Ok(Some(Box::new(FullSink(self.1))))
            }
            fn read(&self, p: &str) -> strata_spec::Result<Vec<u8>> {
                self.0.read(p)
            }
            fn read_range(&self, p: &str, o: u64, l: u64) -> strata_spec::Result<Vec<u8>> {
                self.0.read_range(p, o, l)
            }
            fn size(&self, p: &str) -> strata_spec::Result<u64> {
                self.0.size(p)
            }
            fn write(&self, p: &str, d: &[u8]) -> strata_spec::Result<()> {
                self.0.write(p, d)
            }
            fn create_if_absent(&self, p: &str, d: &[u8]) -> strata_spec::Result<bool> {
                self.0.create_if_absent(p, d)
            }
            fn exists(&self, p: &str) -> strata_spec::Result<bool> {
                self.0.exists(p)
            }
            fn list(&self, d: &str) -> strata_spec::Result<Vec<strata_io::FileStatus>> {
                self.0.list(d)
            }
            fn delete(&self, p: &str) -> strata_spec::Result<()> {
                self.0.delete(p)
            }
            fn delete_dir(&self, p: &str) -> strata_spec::Result<()> {
                self.0.delete_dir(p)
            }
            fn mkdirs(&self, p: &str) -> strata_spec::Result<()> {
                self.0.mkdirs(p)
            }
        }
        let layout = layout();
        let input = rows(&layout, 20_000);
        let whole: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
        let mut w =
            KvFileWriter::new(whole.clone(), "/b".into(), Box::new(|| "f.parquet".into()), layout.clone(), config())
                .with_row_group_bytes(128 << 10);
        w.write(&input).unwrap();
        let size = w.close().unwrap()[0].file_size as usize;
        // Failing in the first row group's bytes, in a later one's, and in the footer.
        for room in [10, size / 2, size - 10] {
            let io: Arc<dyn FileIO> = Arc::new(FullDisk(MemoryFileIO::new(), room));
            let mut w =
                KvFileWriter::new(io.clone(), "/b".into(), Box::new(|| "f.parquet".into()), layout.clone(), config())
                    .with_row_group_bytes(128 << 10);
            let result = w.write(&input).and_then(|()| w.close().map(|_| ()));
            let err = result.err();
            assert_eq!(err.as_ref().map(|e| e.kind()), Some(ErrorKind::Io), "room {room}: {err:?}");
            assert!(!io.file_exists("/b/f.parquet").unwrap());
        }
    }
}
