//! Opening a parquet data file: the footer (with its page indexes when pruning or selecting by position),
//! the row groups and pages a predicate keeps, the checks of what is decoded, the pages fetched ahead by a
//! ranged read, and the row selection a deletion vector or a position list makes.

use std::ops::Range;

use arrow_schema::Schema;
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder, RowSelection, RowSelectionPolicy,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::ChunkReader;
use parquet::schema::types::SchemaDescriptor;
use strata_spec::{DataType, Error, Result};

use crate::layout::evolution::{resolve, stored_index, ColumnMapping, StoredColumn};
use crate::read::footer_cache::FooterCache;
use crate::read::ranged::RangedFile;
use crate::read::reader::{column_sources, corrupt, distinct_roots, Opened, ReadRequest};
use crate::read::row_runs::{live_runs, parquet_selection, position_runs, segment_runs};

/// A ranged read's file, its footer when read before, and where to keep the footer it reads.
pub(crate) struct Ahead {
    pub(crate) file: RangedFile,
    pub(crate) footer: Option<ArrowReaderMetadata>,
    pub(crate) footers: Option<FooterCache>,
}

impl Ahead {
    /// Has every fetch of the file checked by the block checksums its footer `meta` lists, from here on
    /// (and what was fetched before); `false` when the footer lists none.
    fn check_blocks(&self, meta: &parquet::file::metadata::ParquetMetaData, path: &str) -> Result<bool> {
        match crate::integrity::block_crc::BlockCrcs::from_metadata(meta, self.file.len(), path)? {
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

/// A row group kept for a read: its index and its rows in the file.
type Group = (usize, Range<u64>);

/// Opens parquet from `bytes`; with `whole` (the file's bytes, when read whole) the column chunks to be
/// decoded are checked against the CRC32s Strata records in the footer first. A ranged file (`ahead`) checks
/// its fetches by the footer's block checksums, or for a `scan` the chunks decoded by their CRC32s, and
/// fetches the pages the read decodes once the footer says where they are (parquet page CRCs, when a
/// writer recorded them, are checked by the decoder either way).
pub(crate) fn open_parquet<R: ChunkReader + Clone + 'static>(
    bytes: R,
    whole: Option<Bytes>,
    ahead: Option<&Ahead>,
    scan: bool,
    path: &str,
    req: &ReadRequest<'_>,
) -> Result<Opened> {
    if req.rows.is_some() && req.select.is_some() {
        return Err(Error::invalid("read", "a read selects rows either by positions or by a range, not both"));
    }
    let builder = footer(&bytes, ahead, path, req)?;
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
    refuse_repeated(builder.parquet_schema(), &roots, path)?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    let mut groups = kept_groups(builder.metadata(), &file_schema, req, num_rows, path)?;
    let reads = rows_to_read(builder.metadata(), &mut groups, &file_schema, req);
    let indices: Vec<usize> = groups.iter().map(|(i, _)| *i).collect();
    match (&whole, ahead.map(|a| &a.file)) {
        (Some(whole), _) => crate::integrity::verify::verify_chunks(whole, builder.metadata(), &indices, &mask, path)?,
        (None, Some(file))
            if scan && !ranged_blocks && crate::integrity::verify::has_chunk_crcs(builder.metadata()) =>
        {
            file.fetch_pages(builder.metadata(), &groups, &roots, None, true)?;
            crate::integrity::verify::verify_chunks(file, builder.metadata(), &indices, &mask, path)?;
        }
        _ => {}
    }
    let ranges: Vec<Range<u64>> = groups.iter().map(|(_, r)| r.clone()).collect();
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
    let selection = row_selection(req, num_rows, &ranges, &reads, partial);
    let reader = build_reader(bytes, builder, req, mask, indices, selection, policy(req, num_rows, partial))
        .map_err(|e| corrupt(path, e))?;
    Ok((Box::new(reader), num_rows, reads, sources))
}

/// The footer of `bytes` as a reader builder. With a position selection (point lookups) or a pruning
/// predicate the page index is loaded too: unselected pages are skipped without being decompressed, and
/// pages the predicate rules out are not selected. A ranged read's footer with its page index is kept for
/// the next narrow read of the file.
fn footer<R: ChunkReader + Clone + 'static>(
    bytes: &R,
    ahead: Option<&Ahead>,
    path: &str,
    req: &ReadRequest<'_>,
) -> Result<ParquetRecordBatchReaderBuilder<R>> {
    let open = |index: bool| reader_builder(bytes, ahead, index, path);
    // A part of a file is found by its pages (the offset index), like a predicate's rows.
    match (req.select.is_some(), req.prune.is_some() || req.rows.is_some()) {
        (true, _) => open(true),
        // For pruning the page index is an optimisation: one another writer left unreadable, or whose page
        // locations do not describe its row groups, costs the pruning, never the read or a row.
        (false, true) => match open(true) {
            Ok(b) if crate::read::page_prune::offset_index_consistent(b.metadata()) => Ok(b),
            _ => open(false),
        },
        (false, false) => open(false),
    }
}

/// Key-value files hold scalar columns only; a repeated one among `roots` is a damaged footer.
fn refuse_repeated(descr: &SchemaDescriptor, roots: &[usize], path: &str) -> Result<()> {
    let fields = descr.root_schema().get_fields();
    match roots.iter().filter_map(|&i| fields.get(i)).find(|f| {
        f.get_basic_info().has_repetition() && f.get_basic_info().repetition() == parquet::basic::Repetition::REPEATED
    }) {
        Some(f) => Err(corrupt(path, format!("column '{}' is repeated in the footer", f.name()))),
        None => Ok(()),
    }
}

/// The row groups, with their row ranges, that the read's pruning predicate does not rule out. Row
/// positions (deletion vectors, selections) count through the row groups: their counts must add up to the
/// file's `num_rows`, or a damaged footer would shift every position after it.
fn kept_groups(
    meta: &ParquetMetaData,
    file_schema: &Schema,
    req: &ReadRequest<'_>,
    num_rows: u64,
    path: &str,
) -> Result<Vec<Group>> {
    let mut start = 0u64;
    let mut groups: Vec<Group> = Vec::new();
    let descr = meta.file_metadata().schema_descr();
    for (i, rg) in meta.row_groups().iter().enumerate() {
        let n = rg.num_rows().max(0) as u64;
        let keep = match &req.prune {
            None => true,
            Some(tp) => {
                let (pred, types) = &**tp;
                pred.may_match(&|name: &str| {
                    let (leaf, t) = stats_leaf(descr, file_schema, req.mapping, types, name)?;
                    crate::predicate::parquet_range(rg, leaf, &t)
                })
            }
        };
        if keep {
            groups.push((i, start..start + n));
        }
        start += n;
    }
    if start != num_rows {
        return Err(corrupt(path, format!("row groups hold {start} rows, the footer says {num_rows}")));
    }
    Ok(groups)
}

/// Within `groups`, the rows whose pages the predicate does not rule out (a position selection is exact
/// already); of a part of the file, only its rows among them. Where pages or a part narrowed the rows,
/// `groups` keeps only the groups holding rows to read.
fn rows_to_read(
    meta: &ParquetMetaData,
    groups: &mut Vec<Group>,
    file_schema: &Schema,
    req: &ReadRequest<'_>,
) -> Vec<Range<u64>> {
    let mut reads: Vec<Range<u64>> = match (&req.prune, &req.select) {
        (Some(tp), None) => pruned_pages(meta, groups, tp, file_schema, req.mapping),
        _ => groups.iter().map(|(_, r)| r.clone()).collect(),
    };
    if let Some(part) = &req.rows {
        reads = reads
            .into_iter()
            .map(|r| r.start.max(part.start)..r.end.min(part.end))
            .filter(|r| r.start < r.end)
            .collect();
    }
    if req.rows.is_some() || (req.prune.is_some() && req.select.is_none()) {
        groups.retain(|(_, r)| reads.iter().any(|s| s.start < r.end && r.start < s.end));
    }
    reads
}

/// The rows the decoder returns of the row groups kept (`ranges`): the positions selected, the rows read
/// (`reads`, where pages or a part narrowed them), or those the deletion vector leaves.
fn row_selection(
    req: &ReadRequest<'_>,
    num_rows: u64,
    ranges: &[Range<u64>],
    reads: &[Range<u64>],
    partial: bool,
) -> Option<RowSelection> {
    match (&req.select, req.dv) {
        (Some(sel), _) => Some(parquet_selection(&position_runs(sel, num_rows))),
        (None, _) if partial => Some(parquet_selection(&segment_runs(ranges, reads, req.dv))),
        (None, Some(dv)) => Some(parquet_selection(&live_runs(dv, ranges))),
        (None, None) => None,
    }
}

/// How the decoder applies a whole file's deletion vector. Measured (benches/dv.rs): a boolean mask beats
/// a selector queue from about 0.2% deleted rows up; below that, skipping runs is cheaper.
fn policy(req: &ReadRequest<'_>, num_rows: u64, partial: bool) -> Option<RowSelectionPolicy> {
    match (&req.select, req.dv) {
        (None, Some(dv)) if !partial => Some(if dv.cardinality() as f64 > 0.002 * num_rows.max(1) as f64 {
            RowSelectionPolicy::Mask
        } else {
            RowSelectionPolicy::Selectors
        }),
        _ => None,
    }
}

/// The decoder of the read. A filtered scan evaluates its predicate before decoding the other columns (not
/// for lookups by position, whose rows are chosen already, nor where positions are reported: they count
/// selected rows). Without a row filter or a chosen policy (point lookups, merge reads, plain scans), the
/// reader decompresses zstd pages with the thread's context instead of two made per column chunk.
fn build_reader<R: ChunkReader + Clone + 'static>(
    bytes: R,
    builder: ParquetRecordBatchReaderBuilder<R>,
    req: &ReadRequest<'_>,
    mask: ProjectionMask,
    indices: Vec<usize>,
    selection: Option<RowSelection>,
    policy: Option<RowSelectionPolicy>,
) -> parquet::errors::Result<ParquetRecordBatchReader> {
    let row_filter = match (&req.prune, req.mapping, &req.select, req.with_positions) {
        (Some(tp), None, None, false) => {
            crate::predicate::parquet_row_filter(tp, builder.schema(), builder.parquet_schema())
        }
        _ => None,
    };
    match (row_filter, policy) {
        (None, None) => {
            let fields = builder.schema().fields().clone();
            let meta = builder.metadata().clone();
            crate::read::zstd_pages::build_reader(bytes, meta, &fields, mask, indices, req.batch_size, selection)
        }
        (row_filter, policy) => {
            let all = indices.len() == builder.metadata().num_row_groups();
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
    descr: &SchemaDescriptor,
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
            crate::read::page_prune::matching_rows(meta, *g, rows.clone(), pred, &column)
                .unwrap_or_else(|| vec![rows.clone()])
        })
        .collect()
}
