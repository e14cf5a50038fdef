//! Reading data files: projection, deletion vectors applied at decode (a row selection), row positions.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use strata_dv::DeletionVector;
use strata_io::FileIO;
use strata_spec::{panic_message, DataType, Error, Result};

use crate::evolution::{absent_column, read_as, resolve, stored_index, ColumnMapping, StoredColumn};
use crate::footer_cache::FooterCache;
use crate::ranged::RangedFile;
use crate::row_runs::{live_runs, orc_selection, parquet_selection, position_runs, segment_runs};
use crate::system_fields::ROW_POSITION;
use crate::writer::FileFormat;

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

type ArrowBatches = Box<dyn Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send>;

/// An opened file: its batches, row count, the row ranges read, and each requested column's source.
type Opened = (ArrowBatches, u64, Vec<std::ops::Range<u64>>, Vec<Source>);

/// Where a requested column comes from in an opened file.
#[derive(Debug, Clone)]
struct Source {
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
    check: Option<crate::verify::RowCheck>,
    /// Rows in the file (before deletions).
    pub num_rows: u64,
}

fn corrupt(path: &str, e: impl std::fmt::Display) -> Error {
    Error::Corrupt { path: path.to_string(), message: e.to_string() }
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

/// A ranged read's file, its footer when read before, and where to keep the footer it reads.
struct Ahead {
    file: RangedFile,
    footer: Option<ArrowReaderMetadata>,
    footers: Option<FooterCache>,
}

impl Ahead {
    /// Has every fetch of the file checked by the block checksums its footer `meta` lists, from here on
    /// (and what was fetched before); `false` when the footer lists none.
    fn check_blocks(&self, meta: &parquet::file::metadata::ParquetMetaData, path: &str) -> Result<bool> {
        match crate::block_crc::BlockCrcs::from_metadata(meta, self.file.len(), path)? {
            Some(blocks) => self.file.check_blocks(blocks).map(|()| true),
            None => Ok(false),
        }
    }

    /// Keeps `meta`, the file's footer read with its page indexes, in the table's cache, if the read has one.
    fn keep(&self, meta: &ArrowReaderMetadata) {
        if let Some(footers) = &self.footers {
            footers.put(self.file.path(), self.file.len(), meta);
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

/// Opens parquet from `bytes`; with `whole` (the file's bytes, when read whole) the column chunks to be
/// decoded are checked against the CRC32s Strata records in the footer first. A ranged file (`ahead`) checks
/// its fetches by the footer's block checksums, or for a `scan` the chunks decoded by their CRC32s, and
/// fetches the pages the read decodes once the footer says where they are (parquet page CRCs, when a
/// writer recorded them, are checked by the decoder either way).
fn open_parquet<R: parquet::file::reader::ChunkReader + Clone + 'static>(
    bytes: R,
    whole: Option<Bytes>,
    ahead: Option<&Ahead>,
    scan: bool,
    path: &str,
    req: &ReadRequest<'_>,
) -> Result<Opened> {
    // With a position selection (point lookups) or a pruning predicate, load the page index: unselected
    // pages are skipped without being decompressed, and pages the predicate rules out are not selected.
    // A ranged read's footer with its page index is kept for the next narrow read of the file.
    let open = |index: bool| reader_builder(&bytes, ahead, index, path);
    if req.rows.is_some() && req.select.is_some() {
        return Err(Error::invalid("read", "a read selects rows either by positions or by a range, not both"));
    }
    // A part of a file is found by its pages (the offset index), like a predicate's rows.
    let builder = match (req.select.is_some(), req.prune.is_some() || req.rows.is_some()) {
        (true, _) => open(true)?,
        // For pruning the page index is an optimisation: one another writer left unreadable, or whose page
        // locations do not describe its row groups, costs the pruning, never the read or a row.
        (false, true) => match open(true) {
            Ok(b) if crate::page_prune::offset_index_consistent(b.metadata()) => b,
            _ => open(false)?,
        },
        (false, false) => open(false)?,
    };
    // A ranged read checks what it fetches from here on by the footer's block checksums; a file without
    // them but with column-chunk CRCs (Strata's before block checksums) has the chunks the read decodes
    // fetched whole and checked in a `scan` (filtered scans, which checked them when they read
    // whole files), else reads unchecked (point lookups, as before).
    let ranged_blocks = match ahead {
        Some(a) => a.check_blocks(builder.metadata(), path)?,
        None => false,
    };
    let file_schema = builder.schema().clone();
    let num_rows = builder.metadata().file_metadata().num_rows().max(0) as u64;
    let sources = column_sources(path, &file_schema, req)?;
    let roots = distinct_roots(&sources);
    // Key-value files hold scalar columns only; a repeated one is a damaged footer.
    let fields = builder.parquet_schema().root_schema().get_fields();
    if let Some(f) = roots.iter().filter_map(|&i| fields.get(i)).find(|f| {
        f.get_basic_info().has_repetition() && f.get_basic_info().repetition() == parquet::basic::Repetition::REPEATED
    }) {
        return Err(corrupt(path, format!("column '{}' is repeated in the footer", f.name())));
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    // Row groups, with their row ranges, that the pruning predicate does not rule out.
    let mut start = 0u64;
    let mut groups: Vec<(usize, std::ops::Range<u64>)> = Vec::new();
    for (i, rg) in builder.metadata().row_groups().iter().enumerate() {
        let n = rg.num_rows().max(0) as u64;
        let keep = match &req.prune {
            None => true,
            Some(tp) => {
                let (pred, types) = &**tp;
                pred.may_match(&|name: &str| {
                    let (leaf, t) = stats_leaf(builder.parquet_schema(), &file_schema, req.mapping, types, name)?;
                    crate::predicate::parquet_range(rg, leaf, &t)
                })
            }
        };
        if keep {
            groups.push((i, start..start + n));
        }
        start += n;
    }
    // Row positions (deletion vectors, selections) count through the row groups: their counts must add up
    // to the file's, or a damaged footer would shift every position after it.
    if start != num_rows {
        return Err(corrupt(path, format!("row groups hold {start} rows, the footer says {num_rows}")));
    }
    // Within the groups kept, the rows whose pages the predicate does not rule out (a position selection
    // is exact already); of a part of the file, only its rows among them.
    let mut reads: Vec<std::ops::Range<u64>> = match (&req.prune, &req.select) {
        (Some(tp), None) => pruned_pages(builder.metadata(), &groups, tp, &file_schema, req.mapping),
        _ => groups.iter().map(|(_, r)| r.clone()).collect(),
    };
    if let Some(part) = &req.rows {
        reads = reads
            .into_iter()
            .map(|r| r.start.max(part.start)..r.end.min(part.end))
            .filter(|r| r.start < r.end)
            .collect();
    }
    // Where pages or a part narrowed the rows, only the groups holding rows to read.
    if req.rows.is_some() || (req.prune.is_some() && req.select.is_none()) {
        groups.retain(|(_, r)| reads.iter().any(|s| s.start < r.end && r.start < s.end));
    }
    let all = groups.len() == builder.metadata().num_row_groups();
    let indices: Vec<usize> = groups.iter().map(|(i, _)| *i).collect();
    match (&whole, ahead.map(|a| &a.file)) {
        (Some(whole), _) => crate::verify::verify_chunks(whole, builder.metadata(), &indices, &mask, path)?,
        (None, Some(file)) if scan && !ranged_blocks && crate::verify::has_chunk_crcs(builder.metadata()) => {
            file.fetch_pages(builder.metadata(), &groups, &roots, None, true)?;
            crate::verify::verify_chunks(file, builder.metadata(), &indices, &mask, path)?;
        }
        _ => {}
    }
    let ranges: Vec<std::ops::Range<u64>> = groups.iter().map(|(_, r)| r.clone()).collect();
    let partial = reads != ranges;
    if let Some(file) = ahead.map(|a| &a.file) {
        let wanted = match &req.select {
            Some(sel) => Some(sel.iter().map(|&p| p..p + 1).collect::<Vec<_>>()),
            None => partial.then(|| reads.clone()),
        };
        // A `scan` fetches its pages at once on any store: coalesced, a filter that keeps most of a
        // file reads it in a few large reads, not page by page; a lookup's few pages are read as decoded.
        file.fetch_pages(builder.metadata(), &groups, &roots, wanted.as_deref(), scan)?;
    }
    // A filtered scan evaluates its predicate before decoding the other columns (not for lookups by
    // position, whose rows are chosen already, nor where positions are reported: they count selected rows).
    let row_filter = match (&req.prune, req.mapping, &req.select, req.with_positions) {
        (Some(tp), None, None, false) => {
            crate::predicate::parquet_row_filter(tp, &file_schema, builder.parquet_schema())
        }
        _ => None,
    };
    let selection = match (&req.select, req.dv) {
        (Some(sel), _) => Some(parquet_selection(&position_runs(sel, num_rows))),
        (None, _) if partial => Some(parquet_selection(&segment_runs(&ranges, &reads, req.dv))),
        (None, Some(dv)) => Some(parquet_selection(&live_runs(dv, &ranges))),
        (None, None) => None,
    };
    // Measured (benches/dv.rs): for a whole file's deletion vector a boolean mask beats a selector queue
    // from about 0.2% deleted rows up; below that, skipping runs is cheaper.
    let policy = match (&req.select, req.dv) {
        (None, Some(dv)) if !partial => Some(if dv.cardinality() as f64 > 0.002 * num_rows.max(1) as f64 {
            parquet::arrow::arrow_reader::RowSelectionPolicy::Mask
        } else {
            parquet::arrow::arrow_reader::RowSelectionPolicy::Selectors
        }),
        _ => None,
    };
    let reader = match (row_filter, policy) {
        // Without a row filter or a chosen policy (point lookups, merge reads, plain scans), the reader
        // decompresses zstd pages with the thread's context instead of two made per column chunk.
        (None, None) => {
            let fields = builder.schema().fields().clone();
            crate::zstd_pages::build_reader(
                bytes.clone(),
                builder.metadata().clone(),
                &fields,
                mask,
                indices,
                req.batch_size,
                selection,
            )
        }
        (row_filter, policy) => {
            let mut builder = builder.with_projection(mask).with_batch_size(req.batch_size);
            if let Some(filter) = row_filter {
                builder = builder.with_row_filter(filter);
            }
            if !all {
                builder = builder.with_row_groups(indices);
            }
            if let Some(selection) = selection {
                builder = builder.with_row_selection(selection);
            }
            if let Some(policy) = policy {
                builder = builder.with_row_selection_policy(policy);
            }
            builder.build()
        }
    }
    .map_err(|e| corrupt(path, e))?;
    Ok((Box::new(reader), num_rows, reads, sources))
}

/// A reader builder over `bytes`, its footer loaded with the page indexes when `index`; a ranged read's
/// footer with page indexes comes from its table's cache when read before, and is kept there once read.
fn reader_builder<R: parquet::file::reader::ChunkReader + Clone + 'static>(
    bytes: &R,
    ahead: Option<&Ahead>,
    index: bool,
    path: &str,
) -> Result<ParquetRecordBatchReaderBuilder<R>> {
    use parquet::file::metadata::PageIndexPolicy;
    if let Some(meta) = ahead.filter(|_| index).and_then(|a| a.footer.clone()) {
        return Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), meta));
    }
    let policy = if index { PageIndexPolicy::Optional } else { PageIndexPolicy::Skip };
    let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new().with_page_index_policy(policy);
    let meta = ArrowReaderMetadata::load(bytes, options).map_err(|e| corrupt(path, e))?;
    if let (true, Some(a)) = (index, ahead) {
        a.keep(&meta);
    }
    Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), meta))
}

/// The parquet leaf column whose statistics (row group or page) stand for predicate column `name`, with the
/// type read: the column as stored, and only when stored as the type read (the values of a widened column
/// compare differently). `None`: no statistics to prune by.
fn stats_leaf(
    descr: &parquet::schema::types::SchemaDescriptor,
    file_schema: &Schema,
    mapping: Option<&ColumnMapping>,
    types: &[(String, DataType)],
    name: &str,
) -> Option<(usize, DataType)> {
    let t = types.iter().find(|(n, _)| n == name)?.1;
    match resolve(mapping, name, t) {
        StoredColumn::Stored { name, data_type } if data_type.root == t.root => {
            Some((crate::predicate::parquet_leaf(descr, stored_index(file_schema, &name)?)?, t))
        }
        _ => None,
    }
}

/// The rows of `groups` (row-group index and its rows in the file) whose pages `tp` may match, by the page
/// index; a group without a usable page index is kept whole.
fn pruned_pages(
    meta: &parquet::file::metadata::ParquetMetaData,
    groups: &[(usize, std::ops::Range<u64>)],
    tp: &crate::predicate::TypedPredicate,
    file_schema: &Schema,
    mapping: Option<&ColumnMapping>,
) -> Vec<std::ops::Range<u64>> {
    let (pred, types) = &**tp;
    let descr = meta.file_metadata().schema_descr();
    let column = |name: &str| stats_leaf(descr, file_schema, mapping, types, name);
    groups
        .iter()
        .flat_map(|(g, rows)| {
            crate::page_prune::matching_rows(meta, *g, rows.clone(), pred, &column)
                .unwrap_or_else(|| vec![rows.clone()])
        })
        .collect()
}

fn open_orc(bytes: Bytes, path: &str, req: &ReadRequest<'_>) -> Result<Opened> {
    let builder = orc_rust::ArrowReaderBuilder::try_new(bytes.clone()).map_err(|e| corrupt(path, e))?;
    crate::orc_crc::verify(&bytes, builder.file_metadata(), path)?;
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
        req.columns.iter().map(|(n, t)| Field::new(n, crate::arrow_types::to_arrow(t), true)).collect();
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
fn distinct_roots(sources: &[Source]) -> Vec<usize> {
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
fn column_sources(path: &str, file_schema: &Schema, req: &ReadRequest<'_>) -> Result<Vec<Source>> {
    req.columns
        .iter()
        .map(|(name, t)| {
            let (stored_name, stored) = match resolve(req.mapping, name, *t) {
                StoredColumn::Absent => return Ok(Source { root: None, stored: *t }),
                StoredColumn::Stored { name, data_type } => (name, data_type),
            };
            let i = stored_index(file_schema, &stored_name).ok_or_else(|| Error::Invalid {
                what: format!("data file {path}"),
                message: format!("has no column '{stored_name}' (schema mismatch)"),
            })?;
            // A column whose footer type is of another kind than its schema's (a damaged type in the footer:
            // INT64 read as BOOLEAN, a scalar as a list) decodes into other values, which a cast would hide.
            let found = file_schema.field(i).data_type();
            if type_family(found) != type_family(&crate::arrow_types::to_arrow(&stored)) {
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
    pub(crate) fn with_check(mut self, check: Option<crate::verify::RowCheck>) -> Self {
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
