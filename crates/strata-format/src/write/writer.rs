//! Writing sorted key-value batches into data files (parquet or orc), rolling at the target size, and
//! producing each file's `DataFileMeta`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use strata_io::{create_file, join, FileIO};
use strata_spec::{now_millis, BinaryRow, DataFileMeta, DataType, Error, FileSource, Result};

use crate::layout::arrow_types::datum_at;
use crate::layout::kv::{KeyValueLayout, RowKind};
use crate::write::checksummed_sink::ChecksummedSink;
use crate::write::stats::{to_simple_stats, truncate_16, ColumnStats};

/// A data file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Apache Parquet.
    Parquet,
    /// Apache ORC.
    Orc,
}

impl FileFormat {
    /// From `file.format`.
    pub fn from_option(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "parquet" => Ok(FileFormat::Parquet),
            "orc" => Ok(FileFormat::Orc),
            other => {
                Err(Error::unsupported(format!("file.format '{other}' (Strata reads and writes parquet and orc)")))
            }
        }
    }

    /// From a file name's extension.
    pub fn from_file_name(name: &str) -> Result<Self> {
        match name.rsplit('.').next() {
            Some("parquet") => Ok(FileFormat::Parquet),
            Some("orc") => Ok(FileFormat::Orc),
            _ => Err(Error::unsupported(format!("data file '{name}': unknown format"))),
        }
    }

    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            FileFormat::Parquet => "parquet",
            FileFormat::Orc => "orc",
        }
    }
}

/// How files are written.
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// parquet or orc.
    pub format: FileFormat,
    /// `file.compression` (zstd, snappy, lz4, gzip/zlib, none).
    pub compression: String,
    /// Roll to a new file once a file reaches this many bytes.
    pub target_file_size: u64,
    /// Schema id recorded in the metadata.
    pub schema_id: i64,
    /// LSM level of the files.
    pub level: i32,
    /// APPEND (flush) or COMPACT.
    pub file_source: FileSource,
}

/// The sink orc-rust writes into, still reachable after its `close` consumed the writer.
#[derive(Clone)]
struct SharedSink(Arc<std::sync::Mutex<ChecksummedSink>>);

impl std::io::Write for SharedSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned sink"))?.write(data)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum Sink {
    Parquet(Box<ArrowWriter<ChecksummedSink>>),
    Orc(orc_rust::ArrowWriter<SharedSink>, SharedSink, u64),
}

struct OpenFile {
    name: String,
    sink: Sink,
    rows: i64,
    min_key: Option<BinaryRow>,
    max_key: Option<BinaryRow>,
    key_stats: Vec<ColumnStats>,
    value_stats: Vec<ColumnStats>,
    min_seq: i64,
    max_seq: i64,
    deletes: i64,
}

/// Writes one sorted stream of key-value rows into rolling files in one bucket directory.
pub struct KvFileWriter {
    io: Arc<dyn FileIO>,
    dir: String,
    new_name: Box<dyn FnMut() -> String + Send>,
    layout: Arc<KeyValueLayout>,
    cfg: WriterConfig,
    current: Option<OpenFile>,
    done: Vec<DataFileMeta>,
    /// [`DEFAULT_ROW_GROUP_BYTES`], or `parquet.block.size`.
    row_group_bytes: usize,
    /// An append table's next row's sequence number.
    next_seq: i64,
}

fn parquet_compression(c: &str) -> Result<Compression> {
    Ok(match c {
        "zstd" => Compression::ZSTD(ZstdLevel::try_new(1).map_err(|e| Error::internal_from("zstd level", e))?),
        "snappy" => Compression::SNAPPY,
        "lz4" => Compression::LZ4_RAW,
        "gzip" | "zlib" => Compression::GZIP(Default::default()),
        "none" | "uncompressed" => Compression::UNCOMPRESSED,
        other => return Err(Error::invalid("option 'file.compression'", format!("'{other}' is not supported"))),
    })
}

fn orc_compression(c: &str) -> Result<Option<orc_rust::compression::CompressionType>> {
    use orc_rust::compression::CompressionType as C;
    Ok(match c {
        "zstd" => Some(C::Zstd),
        "snappy" => Some(C::Snappy),
        "lz4" => Some(C::Lz4),
        "zlib" | "gzip" => Some(C::Zlib),
        "none" | "uncompressed" => None,
        other => return Err(Error::invalid("option 'file.compression'", format!("'{other}' is not supported"))),
    })
}

/// `batch` under `schema`: columns cast where their type differs, fields as `schema` declares them.
fn conform_to(batch: &RecordBatch, schema: &arrow_schema::SchemaRef) -> Result<RecordBatch> {
    if batch.schema() == *schema {
        return Ok(batch.clone());
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                arrow_cast::cast(c, f.data_type()).map_err(|e| Error::internal_from("orc write", e))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::internal_from("orc write", e))
}

fn key_row(batch: &RecordBatch, row: usize, types: &[DataType]) -> Result<BinaryRow> {
    let values = (0..types.len()).map(|i| datum_at(batch.column(i).as_ref(), row)).collect::<Result<Vec<_>>>()?;
    BinaryRow::from_datums(&values, types)
}

/// Data pages of key columns hold about this many bytes (some 1,000 BIGINT keys; parquet checks the limit
/// every 1,024 values, so wide keys make larger pages) where parquet's default is a megabyte: a point lookup decodes the one key page that may hold its key (the page index tells which),
/// not a twentieth of the file.
const KEY_PAGE_BYTES: usize = 8 * 1024;

/// Data pages of the other columns: a lookup decompresses one page of each column it returns, so the page
/// size sets a one-off `get`'s floor. Measured on the lookup bench's table (20 string columns, 1M rows,
/// `benches/lookup.rs`), `get` p50 and full-scan p50: 256 KiB 17.5 ms; 64 KiB 4.5 ms, 0.62-0.69 s; 32 KiB
/// 2.9 ms, 0.73-0.87 s; 16 KiB 2.2 ms, 0.75-0.76 s (file sizes within 2%). 32 KiB halves the lookup's
/// decompression for a scan some 10% slower; smaller pages also double the page index every read parses.
/// An earlier measurement that made 64 KiB pages 35% slower in scans was the split packing's: larger files
/// tipped two splits out of balance on two cores (see the raw split target in the plan).
const DATA_PAGE_BYTES: usize = 32 * 1024;

/// A column's dictionary stops growing here (parquet's default: 1 MiB) and the column goes on plainly
/// encoded. A column of mostly distinct values has no dictionary at all (its file's first batch decides,
/// [`crate::write::dictionary`]); one whose first batch repeats values but whose later ones do not stops at this
/// size, where every lookup landing in its dictionary-encoded pages decoded the whole megabyte before (a
/// one-key `get` read 10.5 MB at 1 MiB, 3.3 MB at this size).
const DICTIONARY_PAGE_BYTES: usize = 64 * 1024;

/// Parquet writer settings for a key-value file: key columns (sorted, nearly unique) in small pages without
/// a dictionary, which for unique keys only costs a lookup a dictionary page to decode before its one page.
///
/// Other columns keep parquet's dictionary where the file's first batch (`first`, as stored) says it pays,
/// as parquet-mr decides on a column's first page ([`crate::write::dictionary`]).
fn parquet_properties(
    layout: &KeyValueLayout,
    compression: Compression,
    first: &RecordBatch,
    row_group_bytes: usize,
) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_bytes(Some(row_group_bytes.max(1)))
        .set_created_by(format!("strata version {}", env!("CARGO_PKG_VERSION")))
        .set_data_page_size_limit(DATA_PAGE_BYTES)
        .set_dictionary_page_size_limit(DICTIONARY_PAGE_BYTES);
    let mut keys = Vec::new();
    for k in &layout.key_fields {
        let stored = if layout.thin { k.name.clone() } else { format!("{}{}", crate::layout::kv::KEY_PREFIX, k.name) };
        let path = parquet::schema::types::ColumnPath::from(stored.clone());
        b = b.set_column_data_page_size_limit(path.clone(), KEY_PAGE_BYTES).set_column_dictionary_enabled(path, false);
        keys.push(stored);
    }
    // Top-level scalar columns only: a nested column's leaves have paths of their own, and keep the default.
    for (field, column) in first.schema().fields().iter().zip(first.columns()) {
        if keys.contains(field.name()) || field.data_type().is_nested() {
            continue;
        }
        if !crate::write::dictionary::dictionary_pays(column.as_ref()) {
            b = b.set_column_dictionary_enabled(parquet::schema::types::ColumnPath::from(field.name().clone()), false);
        }
    }
    b.build()
}

impl KvFileWriter {
    /// A writer into `dir`, naming files with `new_name` (e.g. `data-<uuid>-<n>.parquet`).
    pub fn new(
        io: Arc<dyn FileIO>,
        dir: String,
        new_name: Box<dyn FnMut() -> String + Send>,
        layout: Arc<KeyValueLayout>,
        cfg: WriterConfig,
    ) -> Self {
        KvFileWriter {
            io,
            dir,
            new_name,
            layout,
            cfg,
            current: None,
            done: Vec::new(),
            row_group_bytes: DEFAULT_ROW_GROUP_BYTES,
            next_seq: 0,
        }
    }

    /// This writer numbering an append table's rows from `seq` (each row takes the next sequence number;
    /// files of a primary-key table carry theirs in `_SEQUENCE_NUMBER`).
    pub fn with_first_sequence(mut self, seq: i64) -> Self {
        self.next_seq = seq;
        self
    }

    /// The sequence number an append table's next row takes.
    pub fn next_sequence(&self) -> i64 {
        self.next_seq
    }

    /// This writer with parquet row groups closed at `bytes` of encoded data (`parquet.block.size`;
    /// [`DEFAULT_ROW_GROUP_BYTES`] otherwise).
    pub fn with_row_group_bytes(mut self, bytes: usize) -> Self {
        self.row_group_bytes = bytes.max(1);
        self
    }

    /// Opens the next file, for `first` (its first batch, as stored).
    fn open(&mut self, first: &RecordBatch) -> Result<OpenFile> {
        let name = (self.new_name)();
        let schema = self.layout.stored_schema.clone();
        let path = join(&self.dir, &name);
        let sink = match self.cfg.format {
            FileFormat::Parquet => {
                let compression = parquet_compression(&self.cfg.compression)?;
                let props = parquet_properties(&self.layout, compression, first, self.row_group_bytes);
                let out = ChecksummedSink::new(create_file(&self.io, &path)?);
                Sink::Parquet(Box::new(
                    ArrowWriter::try_new(out, schema, Some(props))
                        .map_err(|e| Error::internal_from("parquet writer", e))?,
                ))
            }
            FileFormat::Orc => {
                // orc-rust 0.9 panics on types it cannot write; refuse them up front.
                for f in schema.fields() {
                    if matches!(
                        f.data_type(),
                        arrow_schema::DataType::Decimal128(..) | arrow_schema::DataType::Time32(_)
                    ) {
                        return Err(Error::unsupported(format!(
                            "writing column '{}' of type {} to ORC (orc-rust writes no DECIMAL or TIME); use file.format parquet",
                            f.name(),
                            f.data_type()
                        )));
                    }
                }
                let buf = SharedSink(Arc::new(std::sync::Mutex::new(ChecksummedSink::blocks_only(create_file(
                    &self.io, &path,
                )?))));
                let mut b = orc_rust::ArrowWriterBuilder::new(buf.clone(), schema);
                if let Some(c) = orc_compression(&self.cfg.compression)? {
                    b = b.with_compression(c);
                }
                Sink::Orc(b.try_build().map_err(|e| Error::unsupported(format!("orc writer: {e}")))?, buf, 0)
            }
        };
        Ok(OpenFile {
            name,
            sink,
            rows: 0,
            min_key: None,
            max_key: None,
            key_stats: vec![ColumnStats::default(); self.layout.key_arity()],
            value_stats: vec![ColumnStats::default(); self.layout.value_fields.len()],
            min_seq: i64::MAX,
            max_seq: i64::MIN,
            deletes: 0,
        })
    }

    /// Appends a batch in file layout whose rows continue the sorted order.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        // A thin file stores no key columns (readers take the key from the value columns).
        let stored = if self.layout.thin {
            let columns: Vec<usize> = (self.layout.key_arity()..batch.num_columns()).collect();
            batch.project(&columns).map_err(|e| Error::internal_from("thin data file", e))?
        } else {
            batch.clone()
        };
        let mut file = match self.current.take() {
            Some(f) => f,
            None => self.open(&stored)?,
        };
        for (i, s) in file.value_stats.iter_mut().enumerate() {
            s.update(batch.column(self.layout.value_index(i)))?;
        }
        if self.layout.append {
            // Appended rows: the table's columns only, numbered in arrival order, no key.
            let n = batch.num_rows() as i64;
            file.min_seq = file.min_seq.min(self.next_seq);
            file.max_seq = file.max_seq.max(self.next_seq + n - 1);
            self.next_seq += n;
        } else {
            let key_types: Vec<DataType> = self.layout.key_fields.iter().map(|f| f.data_type).collect();
            if file.min_key.is_none() {
                file.min_key = Some(key_row(batch, 0, &key_types)?);
            }
            file.max_key = Some(key_row(batch, batch.num_rows() - 1, &key_types)?);
            for (i, s) in file.key_stats.iter_mut().enumerate() {
                s.update(batch.column(i))?;
            }
            let seq = batch.column(self.layout.seq_index()).as_primitive::<Int64Type>();
            if let (Some(lo), Some(hi)) = (arrow_arith::aggregate::min(seq), arrow_arith::aggregate::max(seq)) {
                file.min_seq = file.min_seq.min(lo);
                file.max_seq = file.max_seq.max(hi);
            }
            let kinds = batch.column(self.layout.kind_index()).as_primitive::<Int8Type>();
            file.deletes += kinds.values().iter().filter(|k| RowKind::byte_is_retract(**k)).count() as i64;
        }
        file.rows += batch.num_rows() as i64;
        let batch = &stored;
        let size = match &mut file.sink {
            Sink::Parquet(w) => parquet_write(w, batch)?,
            Sink::Orc(w, buf, est) => {
                // orc-rust requires the batch's schema to equal the writer's, field nullability and metadata
                // included (parquet's writer only compares types), and batches merged from ORC reads arrive
                // with nullable fields and sometimes other string encodings.
                let batch = conform_to(batch, &self.layout.stored_schema)?;
                // orc-rust 0.9's integer encoder panics on some value distributions (its RLEv2 patched-base
                // widths: a few values far wider than the rest). The file is abandoned with a typed error;
                // nothing half-written is committed.
                strata_spec::catch_contained(|| w.write(&batch))
                    .map_err(|p| {
                        Error::unsupported(format!(
                            "writing this data as ORC: orc-rust 0.9 failed to encode it ({}); use file.format parquet",
                            strata_spec::panic_message(p.as_ref())
                        ))
                    })?
                    .map_err(|e| {
                        let stored = buf.0.lock().ok().and_then(|mut s| s.take_error());
                        stored.unwrap_or_else(|| Error::unsupported(format!("orc write: {e}")))
                    })?;
                // orc-rust reports no size; estimate a 4x compression of the Arrow bytes.
                *est += batch.get_array_memory_size() as u64 / 4;
                *est
            }
        };
        if size >= self.cfg.target_file_size {
            self.finish(file)?;
        } else {
            self.current = Some(file);
        }
        Ok(())
    }

    fn finish(&mut self, file: OpenFile) -> Result<()> {
        let _span = tracing::debug_span!("finish_data_file", name = file.name, rows = file.rows).entered();
        // Everything that may fail is done before the file becomes visible: a file finished but not in
        // `done` would be missed by the caller's cleanup.
        let key_types: Vec<DataType> = self.layout.key_fields.iter().map(|f| f.data_type).collect();
        let value_types: Vec<DataType> = self.layout.value_fields.iter().map(|f| f.data_type).collect();
        let mut value_stats = file.value_stats;
        value_stats.iter_mut().for_each(truncate_16);
        let key_stats = to_simple_stats(&file.key_stats, &key_types)?;
        let value_stats = to_simple_stats(&value_stats, &value_types)?;
        let size = match file.sink {
            Sink::Parquet(w) => parquet_close(*w)?,
            Sink::Orc(w, buf, _) => {
                // The stripes are all out when orc-rust asks for the footer's entries: their block CRCs are
                // sealed there, beside the tail's CRC (`crate::integrity::orc_crc`).
                let mut sealed: Option<Error> = None;
                let entries = |metadata: &[u8], footer: &[u8]| {
                    let blocks = buf.0.lock().map_err(|_| Error::invalid("orc writer", "poisoned sink"));
                    match blocks.and_then(|mut sink| sink.seal_blocks()) {
                        Ok(blocks) => crate::integrity::orc_crc::footer_items(metadata, footer, blocks),
                        Err(e) => {
                            sealed = Some(e);
                            Vec::new()
                        }
                    }
                };
                strata_spec::catch_contained(|| w.close_with_user_metadata(entries))
                    .map_err(|p| {
                        Error::unsupported(format!(
                            "writing this data as ORC: orc-rust 0.9 failed to encode it ({}); use file.format parquet",
                            strata_spec::panic_message(p.as_ref())
                        ))
                    })?
                    .map_err(|e| {
                        let stored = buf.0.lock().ok().and_then(|mut s| s.take_error());
                        stored.unwrap_or_else(|| Error::unsupported(format!("orc close: {e}")))
                    })?;
                if let Some(e) = sealed {
                    return Err(e);
                }
                let mut sink = buf.0.lock().map_err(|_| Error::invalid("orc writer", "poisoned sink"))?;
                sink.finish()?
            }
        };
        let empty = BinaryRow::empty();
        self.done.push(DataFileMeta {
            file_name: file.name,
            // A file's size is what a `u64` counted as it was written: 8 EiB is out of reach.
            file_size: i64::try_from(size).unwrap_or(i64::MAX),
            row_count: file.rows,
            min_key: file.min_key.unwrap_or_else(|| empty.clone()),
            max_key: file.max_key.unwrap_or(empty),
            key_stats,
            value_stats,
            min_sequence_number: file.min_seq,
            max_sequence_number: file.max_seq,
            schema_id: self.cfg.schema_id,
            level: self.cfg.level,
            extra_files: Vec::new(),
            creation_time: Some(now_millis()),
            delete_row_count: Some(file.deletes),
            embedded_index: None,
            file_source: Some(self.cfg.file_source.to_byte()),
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        });
        Ok(())
    }

    /// Closes the open file and returns the metadata of every file written.
    pub fn close(mut self) -> Result<Vec<DataFileMeta>> {
        if let Some(f) = self.current.take() {
            self.finish(f)?;
        }
        Ok(self.done)
    }

    /// Paths of files written so far (to delete them if the caller aborts).
    pub fn written_paths(&self) -> Vec<String> {
        self.done.iter().map(|f| join(&self.dir, &f.file_name)).collect()
    }
}

/// A row group is closed once the parquet writer holds this many encoded bytes of it (parquet's
/// `max_row_group_bytes`; its own bound is a million rows), unless `parquet.block.size` says otherwise, so
/// that an open file costs a writer about this much memory whatever `target-file-size` is: with a single row
/// group per file, files were held whole until written. Measured with `benches/lookup.rs load`
/// (docs/BENCHMARKS.md "Session 17"): a 4M-row load's heap peak is 298-348 MB at 16 MiB whatever
/// `target-file-size` (307 MB at 32 MiB, 341 MB at 512 MiB) and 341 MB for 8M rows; at 64 MiB it was 338 MB
/// for 4M rows and 429-450 MB for 8M. Larger row groups read with less memory in readers that hold a row
/// group at a time and more in Strata's scan of a 4M-row table (1.65 GiB resident at 64 MiB against
/// 1.72-1.84 GiB at 16 MiB, the heap the same): see the benchmark notes.
pub const DEFAULT_ROW_GROUP_BYTES: usize = 16 << 20;

/// Batches go to the parquet writer in slices of at most this many rows, so that each row group's
/// checksums are taken, and its kept bytes dropped, soon after parquet closes it, however large the
/// caller's batches are.
const SLICE_ROWS: usize = 8192;

/// The error behind a failed parquet call: the store's own where the sink failed (a full disk stays an
/// I/O error), otherwise parquet's.
fn parquet_error(w: &mut ArrowWriter<ChecksummedSink>, what: &str, e: impl std::fmt::Display) -> Error {
    w.inner_mut().take_error().unwrap_or_else(|| Error::invalid(what, e.to_string()))
}

/// Hands `batch` to the parquet writer slice by slice, taking the checksums of each row group it closes;
/// returns the file's size so far, counting what the writer holds.
fn parquet_write(w: &mut ArrowWriter<ChecksummedSink>, batch: &RecordBatch) -> Result<u64> {
    let mut offset = 0;
    while offset < batch.num_rows() {
        let len = SLICE_ROWS.min(batch.num_rows() - offset);
        w.write(&batch.slice(offset, len)).map_err(|e| parquet_error(w, "parquet write", e))?;
        offset += len;
        if w.flushed_row_groups().len() > w.inner().row_groups_checked() {
            row_groups_out(w)?;
        }
    }
    Ok((w.bytes_written() + w.in_progress_size()) as u64)
}

/// Passes the closed row groups' bytes on to the sink, and takes their chunk CRCs.
fn row_groups_out(w: &mut ArrowWriter<ChecksummedSink>) -> Result<()> {
    w.sync().map_err(|e| parquet_error(w, "parquet write", e))?;
    let flushed = w.flushed_row_groups().to_vec();
    w.inner_mut().row_groups_done(&flushed)
}

/// Closes a parquet file, recording in the footer the CRC32 of every column chunk (for reads of whole files)
/// and of every block of its pages (for reads of some pages; the parquet crate writes no page CRCs), and
/// makes it visible; its size.
fn parquet_close(mut w: ArrowWriter<ChecksummedSink>) -> Result<u64> {
    w.flush().map_err(|e| parquet_error(&mut w, "parquet close", e))?;
    row_groups_out(&mut w)?;
    let (blocks, chunks) = w.inner_mut().seal()?;
    w.append_key_value_metadata(KeyValue::new(crate::integrity::verify::CHUNK_CRC_KEY.to_string(), chunks));
    w.append_key_value_metadata(KeyValue::new(crate::integrity::block_crc::BLOCK_CRC_KEY.to_string(), blocks));
    // The footer is written and synced while the sink is still reachable for its error.
    w.finish().map_err(|e| parquet_error(&mut w, "parquet close", e))?;
    w.sync().map_err(|e| parquet_error(&mut w, "parquet close", e))?;
    w.inner_mut().finish()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parquet::file::reader::{FileReader, SerializedFileReader};
    use strata_io::{FileIO, MemoryFileIO};

    use super::*;

    /// A key column is written in small pages without a dictionary (so a lookup decodes one small page), and
    /// a value column of many distinct values leaves its dictionary early.
    #[test]
    fn key_columns_are_paged_small_and_without_a_dictionary() {
        let layout = crate::test_files::layout();
        let n = 50_000i64;
        let write = |strings: &dyn Fn(i64) -> String| {
            let io = Arc::new(MemoryFileIO::new());
            let cfg = crate::test_files::config();
            let mut w =
                KvFileWriter::new(io.clone(), "/b".into(), Box::new(|| "f.parquet".into()), layout.clone(), cfg);
            w.write(&crate::test_files::rows(&layout, n, strings)).unwrap();
            w.close().unwrap();
            let bytes = bytes::Bytes::from(io.read("/b/f.parquet").unwrap());
            let options = parquet::file::serialized_reader::ReadOptionsBuilder::new().with_page_index().build();
            SerializedFileReader::new_with_options(bytes, options).unwrap().metadata().clone()
        };
        let meta = write(&|i| format!("{:016x}", (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        let offsets = meta.offset_index().expect("an offset index is written");
        let rg = meta.row_group(0);
        let key = rg.column(0);
        assert_eq!(key.column_path().string(), "_KEY_id");
        assert!(key.dictionary_page_offset().is_none(), "the key column has no dictionary");
        let key_pages = offsets[0][0].page_locations().len();
        // 50,000 BIGINT keys are 400 KB plainly encoded: pages of 8 KiB are some 50 of them.
        assert!(key_pages >= 40, "the key column is in {key_pages} pages");
        // Unique values gain nothing from a dictionary (as parquet-mr decides); 1 MB of them is in pages of
        // about 32 KiB.
        let value = rg.column(4);
        assert!(value.dictionary_page_offset().is_none(), "a column of unique values has no dictionary");
        assert!(rg.column(3).dictionary_page_offset().is_none(), "nor a BIGINT column of unique values");
        let value_pages = offsets[0][4].page_locations().len();
        assert!((24..=48).contains(&value_pages), "1 MB of values in {value_pages} pages");
        // Values repeated keep their dictionary, and the file is smaller for it.
        let repeated = write(&|i| format!("{:016x}", i % 100));
        assert!(
            repeated.row_group(0).column(4).dictionary_page_offset().is_some(),
            "repeated values lost their dictionary"
        );
        assert!(repeated.row_group(0).column(4).compressed_size() < value.compressed_size() / 4);
    }
}
