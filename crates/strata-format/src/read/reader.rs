//! Reading data files: projection, deletion vectors applied at decode (a row selection), row positions.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use strata_dv::DeletionVector;
use strata_io::FileIO;
use strata_spec::{panic_message, DataType, Error, Result};

use crate::layout::evolution::{absent_column, read_as, resolve, stored_index, ColumnMapping, StoredColumn};
use crate::layout::system_fields::ROW_POSITION;
use crate::read::footer_cache::FooterCache;
use crate::read::parquet_file::{open_parquet, Ahead};
use crate::read::ranged::RangedFile;
use crate::read::row_runs::{live_runs, orc_selection, position_runs};
use crate::write::writer::FileFormat;

/// Rows per batch read.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// What to read from one file.
pub struct ReadRequest<'a> {
    /// Column names in the file, in the order wanted, with the types to return them as.
    pub columns: Vec<(String, DataType)>,
    /// Rows to skip.
    pub dv: Option<&'a DeletionVector>,
    /// Append a `_ROW_POSITION` (BIGINT) column holding each row's position in the file.
    pub with_positions: bool,
    /// Rows per batch.
    pub batch_size: usize,
    /// Row groups and pages whose statistics rule this out are skipped (rows are not filtered exactly here).
    pub prune: Option<crate::predicate::TypedPredicate>,
    /// Read only these row positions (ascending); the deletion vector is not consulted then.
    pub select: Option<Vec<u64>>,
    /// Read only the rows at these positions (a part of the file, when several threads share it); with the
    /// deletion vector applied within them. Not with `select`.
    pub rows: Option<std::ops::Range<u64>>,
    /// Where the file stores the requested columns, when it was written with another schema than the read's
    /// (`None`: each under its own name and type).
    pub mapping: Option<&'a ColumnMapping>,
}

pub(crate) type ArrowBatches = Box<dyn Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send>;

/// An opened file: its batches, row count, the row ranges read, and each requested column's source.
pub(crate) type Opened = (ArrowBatches, u64, Vec<std::ops::Range<u64>>, Vec<Source>);

/// Where a requested column comes from in an opened file.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    /// Its root column in the file, `None` when the file's schema lacks it (read as nulls).
    root: Option<usize>,
    /// Its type in the file's schema.
    stored: DataType,
}

/// Batches of one file, in file order, with deleted rows skipped.
pub struct FileBatches {
    path: String,
    inner: ArrowBatches,
    /// Per requested column: the type it is read as, its type as stored, and its position in the decoded
    /// batch (`None`: absent from the file, all null).
    columns: Vec<(DataType, DataType, Option<usize>)>,
    names: Vec<String>,
    schema: SchemaRef,
    positions: Option<Box<dyn Iterator<Item = u64> + Send>>,
    check: Option<crate::integrity::verify::RowCheck>,
    /// Rows in the file (before deletions).
    pub num_rows: u64,
}

pub(crate) fn corrupt(path: &str, e: impl std::fmt::Display) -> Error {
    Error::corrupt_file(path.to_string(), e.to_string())
}

/// Positions in `ranges` without those `dv` deletes, lazily.
fn live_positions(
    dv: Option<&DeletionVector>,
    ranges: Vec<std::ops::Range<u64>>,
) -> Box<dyn Iterator<Item = u64> + Send> {
    match dv {
        None => Box::new(ranges.into_iter().flatten()),
        Some(dv) => {
            // Only the deletions inside the ranges, each range's found by the bitmap's index: a lookup reads
            // one page of a file that may hold a hundred thousand deletions.
            let deleted: Vec<u64> = ranges
                .iter()
                .flat_map(|r| {
                    let end = r.end;
                    dv.positions_from(r.start).take_while(move |&p| p < end)
                })
                .collect();
            let all = ranges.into_iter().flatten();
            let mut next = 0usize;
            Box::new(all.filter(move |p| {
                while next < deleted.len() && deleted[next] < *p {
                    next += 1;
                }
                !(next < deleted.len() && deleted[next] == *p)
            }))
        }
    }
}

/// Runs a third-party decoder step, turning a panic inside it (malformed input it did not anticipate) into a
/// corrupt-file error naming `path`.
fn guarded<T>(path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match strata_spec::catch_contained(f) {
        Ok(r) => r,
        Err(p) => Err(corrupt(path, format!("cannot decode: {}", panic_message(p.as_ref())))),
    }
}

/// Opens `path` for reading, the whole file read into memory first (what scans and compactions want).
pub fn open_file(io: &dyn FileIO, path: &str, format: FileFormat, req: &ReadRequest<'_>) -> Result<FileBatches> {
    let bytes = io.read(path)?;
    guarded(path, || open_source(ParquetSource::Whole(Bytes::from(bytes)), path, format, req))
}

/// Opens `path` for a narrow read (a few columns, or a few rows), fetching only what the read needs through
/// `io`'s range reads: the footer, the page indexes, and the pages of the projected columns in the row groups
/// and rows selected. Point lookups and filtered scans use it, so their cost does not grow with the file.
/// What is fetched is checked by the footer's block checksums where the file has them; where it has only
/// column-chunk CRCs, a `scan` fetches the chunks decoded whole to check them (a lookup reads them
/// unchecked), and a `scan` fetches its pages at once on any store. ORC is read whole. With `footers` (the
/// file's table's cache) the parsed footer and page indexes are taken from there, or kept there once read.
pub(crate) fn open_file_ranged(
    io: &Arc<dyn FileIO>,
    path: &str,
    format: FileFormat,
    req: &ReadRequest<'_>,
    size: Option<u64>,
    scan: bool,
    footers: Option<&FooterCache>,
) -> Result<FileBatches> {
    match format {
        FileFormat::Orc => open_file(io.as_ref(), path, format, req),
        FileFormat::Parquet => {
            // The size the manifest records saves a request (Paimon's readers take it from there too); a
            // file of another size fails to decode, which names it as corrupt.
            let len = match size {
                Some(n) if n > 0 => n,
                _ => io.size(path)?,
            };
            let file = RangedFile::new(io.clone(), path, len);
            // A footer read before needs no tail fetched (on an object store, a request saved).
            let footer = footers.and_then(|f| f.get(path, len));
            if footer.is_none() {
                file.fetch_tail()?;
            }
            let ranged = ParquetSource::Ranged { file, scan, footer, footers: footers.cloned() };
            guarded(path, || open_source(ranged, path, format, req))
        }
    }
}

/// Where parquet bytes come from.
enum ParquetSource {
    Whole(Bytes),
    /// With whether the read is a scan (see [`open_file_ranged`]), the file's footer if read before, and
    /// the cache to keep it in.
    Ranged {
        file: RangedFile,
        scan: bool,
        footer: Option<ArrowReaderMetadata>,
        footers: Option<FooterCache>,
    },
}

fn open_source(source: ParquetSource, path: &str, format: FileFormat, req: &ReadRequest<'_>) -> Result<FileBatches> {
    let _span = tracing::debug_span!("open_data_file", path).entered();
    let opened = match (source, format) {
        (ParquetSource::Whole(bytes), FileFormat::Parquet) => {
            open_parquet(bytes.clone(), Some(bytes), None, false, path, req)?
        }
        (ParquetSource::Ranged { file, scan, footer, footers }, FileFormat::Parquet) => {
            let ahead = Ahead { file: file.clone(), footer, footers };
            open_parquet(file, None, Some(&ahead), scan, path, req)?
        }
        (ParquetSource::Whole(bytes), FileFormat::Orc) => open_orc(bytes, path, req)?,
        (ParquetSource::Ranged { file, .. }, FileFormat::Orc) => {
            let bytes = file.io().read(file.path())?;
            open_orc(Bytes::from(bytes), path, req)?
        }
    };
    finish_open(opened, path, req)
}

fn open_orc(bytes: Bytes, path: &str, req: &ReadRequest<'_>) -> Result<Opened> {
    let builder = orc_rust::ArrowReaderBuilder::try_new(bytes.clone()).map_err(|e| corrupt(path, e))?;
    crate::integrity::orc_crc::verify(&bytes, builder.file_metadata(), path)?;
    let num_rows = builder.file_metadata().number_of_rows();
    let file_schema = builder.schema();
    let sources = column_sources(path, &file_schema, req)?;
    let names: Vec<&str> = distinct_roots(&sources).into_iter().map(|i| file_schema.field(i).name().as_str()).collect();
    let mask = orc_rust::projection::ProjectionMask::named_roots(builder.file_metadata().root_data_type(), &names);
    if req.rows.is_some() {
        return Err(Error::unsupported("reading a part of an ORC file (ORC files are read whole)"));
    }
    let mut builder = builder.with_projection(mask).with_batch_size(req.batch_size);
    if let Some(sel) = &req.select {
        builder = builder.with_row_selection(orc_selection(&position_runs(sel, num_rows)));
    } else if let Some(dv) = req.dv {
        builder = builder.with_row_selection(orc_selection(&live_runs(dv, std::slice::from_ref(&(0..num_rows)))));
    }
    Ok((Box::new(builder.build()), num_rows, std::iter::once(0..num_rows).collect(), sources))
}

fn finish_open(opened: Opened, path: &str, req: &ReadRequest<'_>) -> Result<FileBatches> {
    let (inner, num_rows, ranges, sources) = opened;
    // Projected columns arrive once each, in file order; a requested column's batch position is its root's
    // rank among them (two requested columns may share a root: a thin file's key and value column).
    let roots = distinct_roots(&sources);
    let columns = req
        .columns
        .iter()
        .zip(&sources)
        .map(|((_, t), s)| (*t, s.stored, s.root.and_then(|r| roots.binary_search(&r).ok())))
        .collect();
    let mut fields: Vec<Field> =
        req.columns.iter().map(|(n, t)| Field::new(n, crate::layout::arrow_types::to_arrow(t), true)).collect();
    if req.with_positions {
        fields.push(Field::new(ROW_POSITION, arrow_schema::DataType::Int64, false));
    }
    Ok(FileBatches {
        path: path.to_string(),
        inner,
        columns,
        names: req.columns.iter().map(|(n, _)| n.clone()).collect(),
        schema: Arc::new(Schema::new(fields)),
        positions: req.with_positions.then(|| match &req.select {
            Some(sel) => Box::new(sel.clone().into_iter()) as Box<dyn Iterator<Item = u64> + Send>,
            None => live_positions(req.dv, ranges),
        }),
        check: None,
        num_rows,
    })
}

/// The distinct root columns `sources` read, ascending (the order a projection decodes them in).
pub(crate) fn distinct_roots(sources: &[Source]) -> Vec<usize> {
    let mut roots: Vec<usize> = sources.iter().filter_map(|s| s.root).collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// The kind of values an Arrow type holds, for telling a damaged footer type from a stored representation
/// of the table's type (widths, string and binary encodings, time units all vary by writer).
fn type_family(t: &arrow_schema::DataType) -> u8 {
    use arrow_schema::DataType as A;
    match t {
        A::Boolean => 0,
        A::Int8 | A::Int16 | A::Int32 | A::Int64 | A::UInt8 | A::UInt16 | A::UInt32 | A::UInt64 => 1,
        A::Float16 | A::Float32 | A::Float64 => 2,
        A::Decimal32(..) | A::Decimal64(..) | A::Decimal128(..) | A::Decimal256(..) => 3,
        A::Utf8 | A::LargeUtf8 | A::Utf8View | A::Binary | A::LargeBinary | A::BinaryView | A::FixedSizeBinary(_) => 4,
        A::Date32 | A::Date64 | A::Time32(_) | A::Time64(_) | A::Timestamp(..) => 5,
        t if t.is_nested() => 6,
        A::Dictionary(_, value) => type_family(value),
        _ => 7,
    }
}

/// Where each column `req` asks for is in a file of `file_schema`: under the name and type the file's own
/// schema gives it (`req.mapping`), from the value column for a key column of a thin-mode file, or nowhere
/// (a column added after the file was written).
pub(crate) fn column_sources(path: &str, file_schema: &Schema, req: &ReadRequest<'_>) -> Result<Vec<Source>> {
    req.columns
        .iter()
        .map(|(name, t)| {
            let (stored_name, stored) = match resolve(req.mapping, name, *t) {
                StoredColumn::Absent => return Ok(Source { root: None, stored: *t }),
                StoredColumn::Stored { name, data_type } => (name, data_type),
            };
            let i = stored_index(file_schema, &stored_name).ok_or_else(|| {
                Error::invalid(format!("data file {path}"), format!("has no column '{stored_name}' (schema mismatch)"))
            })?;
            // A column whose footer type is of another kind than its schema's (a damaged type in the footer:
            // INT64 read as BOOLEAN, a scalar as a list) decodes into other values, which a cast would hide.
            let found = file_schema.field(i).data_type();
            if type_family(found) != type_family(&crate::layout::arrow_types::to_arrow(&stored)) {
                return Err(corrupt(
                    path,
                    format!("column '{stored_name}' is {found} in the file, {stored} in its schema"),
                ));
            }
            Ok(Source { root: Some(i), stored })
        })
        .collect()
}

/// Shrinks `column`'s buffers to their lengths where they hold over a sixteenth more. The parquet decoder
/// grows a string column's value bytes by doubling, so a batch holds a quarter more than its data on
/// average, kept by every caller that keeps the batches (a collected scan: 160 MB of a 4M-row scan's
/// 1.6 GB). Those buffers began as `Vec`s, and the allocator shrinks them in place; buffers built by arrow's
/// builders are aligned, so shrinking one is a copy, worth it only for real slack (not the bytes rounding
/// up to the alignment). Buffers the column shares (a column read twice, a shared dictionary) stay as they
/// are.
fn release_spare_capacity(column: &mut ArrayRef) {
    let held = column.get_buffer_memory_size();
    // `to_data` clones the buffers' handles; they are dropped before the shrink, which needs them unshared.
    let used = column.to_data().get_slice_memory_size().unwrap_or(held);
    if held.saturating_sub(used) > held / 16 {
        arrow_array::Array::shrink_to_fit(column);
    }
}

impl FileBatches {
    /// The schema of the batches returned.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Checks every batch decoded against `check` (the file's manifest statistics).
    pub(crate) fn with_check(mut self, check: Option<crate::integrity::verify::RowCheck>) -> Self {
        self.check = check;
        self
    }

    fn convert(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.columns.len() + 1);
        for ((read, stored, position), name) in self.columns.iter().zip(&self.names) {
            columns.push(match position {
                Some(p) => read_as(batch.column(*p), stored, read, name).map_err(|e| e.in_file(&self.path))?,
                None => absent_column(read, batch.num_rows()),
            });
        }
        if let Some(positions) = &mut self.positions {
            let p: Vec<i64> = positions.by_ref().take(batch.num_rows()).map(|p| p as i64).collect();
            if p.len() != batch.num_rows() {
                return Err(corrupt(&self.path, "more rows than the file declares"));
            }
            columns.push(Arc::new(Int64Array::from(p)));
        }
        drop(batch);
        columns.iter_mut().for_each(release_spare_capacity);
        RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| corrupt(&self.path, e))
    }
}

impl Iterator for FileBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let path = self.path.clone();
        let inner = &mut self.inner;
        let batch = match guarded(&path, || Ok(inner.next())) {
            Ok(None) => return None,
            Ok(Some(Ok(b))) => b,
            Ok(Some(Err(e))) => return Some(Err(corrupt(&self.path, e))),
            Err(e) => return Some(Err(e)),
        };
        let batch = self.convert(batch);
        if let (Ok(b), Some(check)) = (&batch, &self.check) {
            if let Err(e) = check.check(b, &self.path) {
                return Some(Err(e));
            }
        }
        Some(batch)
    }
}
