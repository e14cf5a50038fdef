//! Input files for `strata write`: jsonl, csv and parquet read in batches of the table's columns, every
//! value exactly what the file gives or a refusal naming the file, the line (parquet: row), the column
//! and the value.
//!
//! Plays the part of Flink's format decoders in front of a Paimon sink (`JsonRowDataDeserializationSchema`,
//! `CsvRowDataDeserializationSchema`, the parquet `ColumnarRowData` reader), stricter than them: fields
//! go by name, not position; a field the table lacks is refused unless asked to drop it; no value is
//! rounded, truncated, wrapped or turned into null.

mod builder;
mod columns;
mod convert;
mod csv;
mod jsonl;
mod number;
mod parquet;
mod temporal;

use std::io::BufRead;
use std::sync::Arc;

use arrow_array::RecordBatch;
use strata_spec::{Error, Result, TableSchema};

use builder::ColumnBuilder;
pub(crate) use columns::TableColumns;

/// How inputs are read.
#[derive(Debug, Clone)]
pub(crate) struct InputOptions {
    /// The columns of header-less CSV files, in file order.
    pub columns: Option<Vec<String>>,
    /// Drop fields the table does not have instead of refusing them.
    pub ignore_unknown_fields: bool,
    /// At most this many rows per batch.
    pub batch_rows: usize,
    /// A jsonl or csv batch ends once it has read this many bytes of the file.
    pub batch_bytes: u64,
}

impl Default for InputOptions {
    fn default() -> Self {
        InputOptions { columns: None, ignore_unknown_fields: false, batch_rows: 8192, batch_bytes: 4 << 20 }
    }
}

/// A file read as batches of the table's columns.
pub(crate) trait BatchSource {
    /// The next batch; `None` at the end of the file.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>>;

    /// Bytes of the file read so far (for progress).
    fn bytes_read(&self) -> u64;
}

/// What reading one row of a text file found.
pub(crate) enum RowRead {
    /// A row, pushed to the column builders.
    Row,
    /// A blank line (no row).
    Blank,
    /// The end of the file.
    End,
}

/// The rows of a text file (csv, jsonl) in column builders, and where its batches end.
pub(crate) struct TextRows {
    pub(crate) columns: Arc<TableColumns>,
    pub(crate) builders: Vec<ColumnBuilder>,
    /// Bytes of the file read so far.
    pub(crate) bytes: u64,
    batch_rows: usize,
    batch_bytes: u64,
}

impl TextRows {
    /// No rows yet, `bytes` of the file read.
    pub(crate) fn new(columns: Arc<TableColumns>, opts: &InputOptions, bytes: u64) -> Self {
        TextRows {
            builders: columns.builders(),
            columns,
            bytes,
            batch_rows: opts.batch_rows.max(1),
            batch_bytes: opts.batch_bytes.max(1),
        }
    }
}

/// A text format read a row at a time.
pub(crate) trait RowReader {
    /// Reads the next row into `rows`.
    fn read_row(&mut self, rows: &mut TextRows) -> Result<RowRead>;
}

/// A text file being read: its format's reader, and its rows.
pub(crate) struct TextSource<R> {
    pub(crate) reader: R,
    pub(crate) rows: TextRows,
}

impl<R: RowReader> BatchSource for TextSource<R> {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let (mut n, start) = (0usize, self.rows.bytes);
        while n < self.rows.batch_rows && self.rows.bytes - start < self.rows.batch_bytes {
            match self.reader.read_row(&mut self.rows)? {
                RowRead::Row => n += 1,
                RowRead::Blank => continue,
                RowRead::End => break,
            }
        }
        if n == 0 {
            return Ok(None);
        }
        let rows = &mut self.rows;
        rows.columns.batch(rows.builders.iter_mut().map(ColumnBuilder::finish).collect()).map(Some)
    }

    fn bytes_read(&self) -> u64 {
        self.rows.bytes
    }
}

/// Opens `path` (by extension: .jsonl/.json/.ndjson, .csv, .parquet) for the table with `schema`.
pub(crate) fn open(schema: &TableSchema, path: &str, opts: &InputOptions) -> Result<Box<dyn BatchSource>> {
    let ext = extension(path);
    let columns = std::sync::Arc::new(TableColumns::new(schema));
    if opts.columns.is_some() && ext != "csv" {
        return Err(Error::invalid(
            format!("input {path}"),
            "--columns names the columns of header-less csv files; this file is not csv",
        ));
    }
    let _span = tracing::debug_span!("open_input", path).entered();
    match ext.as_str() {
        "jsonl" | "json" | "ndjson" => Ok(Box::new(jsonl::JsonlSource::open(path, columns, opts)?)),
        "csv" => Ok(Box::new(csv::CsvSource::open(path, columns, opts)?)),
        "parquet" => Ok(Box::new(parquet::ParquetSource::open(path, columns, opts)?)),
        "" => Err(Error::invalid(
            format!("input {path}"),
            "the file name has no extension to tell its format (jsonl, json, ndjson, csv or parquet)",
        )),
        other => Err(Error::invalid(
            format!("input {path}"),
            format!("unknown extension '{other}' (jsonl, json, ndjson, csv or parquet)"),
        )),
    }
}

/// The extension of the file `path` names, in lower case: from its file name only, so that a dot in a
/// directory's name (`in.d/rows`) is not taken for one.
pub(crate) fn extension(path: &str) -> String {
    std::path::Path::new(path).extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default()
}

/// Opens an input file: a missing one is "not found", a directory is refused.
fn open_file(path: &str) -> Result<std::fs::File> {
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound { path: format!("input file {path}") },
        _ => Error::io(path, e),
    })?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::invalid(format!("input {path}"), "is a directory, not an input file"));
    }
    Ok(file)
}

/// Skips a UTF-8 byte-order mark at the start of a text file; how many bytes it skipped.
fn skip_bom(reader: &mut impl BufRead, path: &str) -> Result<u64> {
    let start = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    if start.starts_with(b"\xEF\xBB\xBF") {
        reader.consume(3);
        return Ok(3);
    }
    Ok(0)
}

/// A value as an error message shows it: at most 60 characters.
fn shown(value: &str) -> String {
    match value.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &value[..cut]),
        None => value.to_string(),
    }
}

/// A refused value: `unit` is "line" or "row", `n` counts from 1.
fn value_error(path: &str, unit: &str, n: u64, column: &str, value: &str, reason: &str) -> Error {
    Error::invalid(format!("input {path} {unit} {n} column '{column}'"), format!("{} {reason}", shown(value)))
}

#[cfg(test)]
mod tests {
    use super::extension;

    #[test]
    fn the_extension_comes_from_the_file_name_only() {
        assert_eq!(extension("rows.JSONL"), "jsonl");
        assert_eq!(extension("dir.d/rows.csv"), "csv");
        assert_eq!(extension("dir.d/input"), "");
        assert_eq!(extension("a.b/c.d/rows"), "");
        assert_eq!(extension(".parquet"), "");
        assert_eq!(extension("rows.tar.parquet"), "parquet");
    }
}
