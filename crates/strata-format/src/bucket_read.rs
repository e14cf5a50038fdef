//! Reading one bucket: its sorted runs merged (merge-on-read), or its files one by one without merging
//! (raw reads of deletion-vector tables).

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use strata_io::FileIO;
use strata_spec::{compare_rows, DataType, Result};

use crate::file_ref::DataFileRef;
use crate::footer_cache::FooterCache;
use crate::kv::KeyValueLayout;
use crate::merge::{MergeIterator, Run};
use crate::merge_function::MergeConfig;
use crate::reader::{open_file, FileBatches, ReadRequest};
use crate::system_fields::{KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND};
use crate::verify::RowCheck;
use crate::writer::FileFormat;

/// The file-layout columns of `layout` with their types (all of them).
pub fn file_columns(layout: &KeyValueLayout) -> Vec<(String, DataType)> {
    if layout.append {
        return layout.value_fields.iter().map(|f| (f.name.clone(), f.data_type)).collect();
    }
    let mut cols: Vec<(String, DataType)> =
        layout.key_fields.iter().map(|f| (format!("{}{}", KEY_PREFIX, f.name), f.data_type)).collect();
    cols.push((SEQUENCE_NUMBER.to_string(), DataType::not_null(strata_spec::TypeRoot::BigInt)));
    cols.push((VALUE_KIND.to_string(), DataType::not_null(strata_spec::TypeRoot::TinyInt)));
    cols.extend(layout.value_fields.iter().map(|f| (f.name.clone(), f.data_type)));
    cols
}

/// Opens one file with its deletion vector applied.
pub fn open_data_file(
    io: &dyn FileIO,
    file: &DataFileRef,
    columns: Vec<(String, DataType)>,
    with_positions: bool,
    batch_size: usize,
) -> Result<FileBatches> {
    let (format, req) = whole_file_request(file, columns, with_positions, batch_size, None)?;
    checked(open_file(io, &file.path, format, &req)?, file, &req.columns)
}

/// Reads only the rows at `positions` (ascending) of a file, all `columns`, fetching only the pages that
/// hold them (range reads).
pub fn read_positions(
    io: &Arc<dyn FileIO>,
    file: &DataFileRef,
    columns: Vec<(String, DataType)>,
    positions: Vec<u64>,
) -> Result<FileBatches> {
    let format = FileFormat::from_file_name(&file.meta.file_name)?;
    let req = ReadRequest {
        columns,
        dv: None,
        with_positions: false,
        batch_size: 1024,
        prune: None,
        select: Some(positions),
        rows: None,
        mapping: file.mapping.as_deref(),
    };
    checked(open_ranged(io, file, format, &req, false)?, file, &req.columns)
}

/// `file` opened for a read by ranges (`scan`: see `open_file_ranged`), with the size its manifest entry
/// records and its table's footer cache.
fn open_ranged(
    io: &Arc<dyn FileIO>,
    file: &DataFileRef,
    format: FileFormat,
    req: &ReadRequest<'_>,
    scan: bool,
) -> Result<FileBatches> {
    crate::reader::open_file_ranged(io, &file.path, format, req, recorded_size(file), scan, file.footers.as_ref())
}

/// The size `file`'s manifest entry records, if it records one.
fn recorded_size(file: &DataFileRef) -> Option<u64> {
    u64::try_from(file.meta.file_size).ok().filter(|&n| n > 0)
}

/// `batches` of `file` checked against its manifest entry: the row count now, and every decoded batch (of
/// `columns`, the read's) against the file's statistics.
fn checked(batches: FileBatches, file: &DataFileRef, columns: &[(String, DataType)]) -> Result<FileBatches> {
    if i64::try_from(batches.num_rows).ok() != Some(file.meta.row_count) {
        return Err(strata_spec::Error::Corrupt {
            path: file.path.clone(),
            message: format!("has {} rows where its manifest entry says {}", batches.num_rows, file.meta.row_count),
        });
    }
    Ok(batches.with_check(RowCheck::for_file(&file.meta, columns)))
}

/// [`open_data_file`], skipping row groups, and pages, whose statistics rule `prune` out.
///
/// With a predicate the file is read by ranges: the footer, then only the pages the read decodes (a
/// selective filter reads a fraction of the file), checked by the file's block checksums, or by its
/// column-chunk CRCs for a file that has only those (the chunks decoded are then fetched whole). So is a
/// part of a file (`DataFileRef::rows`): only its pages are fetched. Otherwise the file is read whole in one
/// request, its chunks checked.
pub fn open_data_file_pruned(
    io: &Arc<dyn FileIO>,
    file: &DataFileRef,
    columns: Vec<(String, DataType)>,
    with_positions: bool,
    batch_size: usize,
    prune: Option<crate::predicate::TypedPredicate>,
) -> Result<FileBatches> {
    let ranged = prune.is_some() || file.rows.is_some();
    let (format, req) = whole_file_request(file, columns, with_positions, batch_size, prune)?;
    let batches = if ranged {
        open_ranged(io, file, format, &req, true)?
    } else {
        open_file(io.as_ref(), &file.path, format, &req)?
    };
    checked(batches, file, &req.columns)
}

/// Like [`open_data_file_pruned`], for narrow reads (a few columns of a few row groups): only the needed
/// byte ranges are fetched.
pub fn open_data_file_ranged(
    io: &Arc<dyn FileIO>,
    file: &DataFileRef,
    columns: Vec<(String, DataType)>,
    with_positions: bool,
    batch_size: usize,
    prune: Option<crate::predicate::TypedPredicate>,
) -> Result<FileBatches> {
    let (format, req) = whole_file_request(file, columns, with_positions, batch_size, prune)?;
    checked(open_ranged(io, file, format, &req, false)?, file, &req.columns)
}

/// The format of `file` and a request for its rows (its deletion vector applied), as both ways of opening
/// a data file make it.
fn whole_file_request(
    file: &DataFileRef,
    columns: Vec<(String, DataType)>,
    with_positions: bool,
    batch_size: usize,
    prune: Option<crate::predicate::TypedPredicate>,
) -> Result<(FileFormat, ReadRequest<'_>)> {
    let format = FileFormat::from_file_name(&file.meta.file_name)?;
    Ok((
        format,
        ReadRequest {
            columns,
            dv: file.dv.as_deref(),
            with_positions,
            batch_size,
            prune,
            select: None,
            rows: file.rows.clone(),
            mapping: file.mapping.as_deref(),
        },
    ))
}

/// The files of one sorted run, read one after another, lazily; a large file in parts of about
/// [`RUN_PART_BYTES`], so that a compaction merging several runs holds a part of a file per run, not a
/// whole file of up to `target-file-size` per run.
struct RunReader {
    io: Arc<dyn FileIO>,
    files: VecDeque<DataFileRef>,
    columns: Vec<(String, DataType)>,
    current: Option<FileBatches>,
    batch_size: usize,
    /// The footer of the file being read in parts, parsed once for all its parts.
    footers: FooterCache,
}

/// Bytes of a file a run's read fetches at once.
const RUN_PART_BYTES: i64 = 16 << 20;

/// Footers a run's reader keeps: the file it is reading in parts (a footer with page indexes of a large
/// file takes a few hundred kilobytes).
const RUN_FOOTER_BYTES: usize = 4 << 20;

impl Iterator for RunReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(cur) = &mut self.current {
                match cur.next() {
                    Some(b) => return Some(b),
                    None => self.current = None,
                }
            }
            let file = self.files.pop_front()?;
            let mut parts = crate::file_parts(file, RUN_PART_BYTES, &self.footers);
            let file = parts.remove(0);
            for part in parts.into_iter().rev() {
                self.files.push_front(part);
            }
            let opened = match file.rows {
                Some(_) => open_data_file_pruned(&self.io, &file, self.columns.clone(), false, self.batch_size, None),
                None => open_data_file(self.io.as_ref(), &file, self.columns.clone(), false, self.batch_size),
            };
            match opened {
                Ok(f) => self.current = Some(f),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// A decoded key.
type KeyValues = Vec<Option<strata_spec::Datum>>;

/// A run reading `files` one after another (lazily), all columns of the file layout.
pub fn run_reader(io: Arc<dyn FileIO>, layout: &KeyValueLayout, files: Vec<DataFileRef>, batch_size: usize) -> Run {
    let footers = FooterCache::new(RUN_FOOTER_BYTES);
    Box::new(RunReader { io, files: files.into(), columns: file_columns(layout), current: None, batch_size, footers })
}

/// Groups a bucket's files into sorted runs: each level-0 file is a run; each deeper level is one run, its
/// files ordered by key.
pub(crate) fn sorted_runs(files: Vec<DataFileRef>, key_types: &[DataType]) -> Result<Vec<Vec<DataFileRef>>> {
    let mut level0: Vec<DataFileRef> = Vec::new();
    let mut levels: std::collections::BTreeMap<i32, Vec<(KeyValues, DataFileRef)>> = Default::default();
    for f in files {
        if f.meta.level == 0 {
            level0.push(f);
        } else {
            let min = f.meta.min_key.to_datums(key_types)?;
            levels.entry(f.meta.level).or_default().push((min, f));
        }
    }
    level0.sort_by_key(|f| std::cmp::Reverse(f.meta.max_sequence_number));
    let mut runs: Vec<Vec<DataFileRef>> = level0.into_iter().map(|f| vec![f]).collect();
    for (_, mut files) in levels {
        files.sort_by(|a, b| compare_rows(&a.0, &b.0));
        runs.push(files.into_iter().map(|(_, f)| f).collect());
    }
    Ok(runs)
}

/// Merge-on-read of one bucket's files: batches in file layout, one row per live key.
pub fn merge_read(
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    files: Vec<DataFileRef>,
    cfg: MergeConfig,
    drop_delete: bool,
    batch_size: usize,
) -> Result<MergeIterator> {
    let key_types: Vec<DataType> = layout.key_fields.iter().map(|f| f.data_type).collect();
    let sorted = sorted_runs(files, &key_types)?;
    let levels: Vec<i32> = sorted.iter().map(|files| files.first().map_or(0, |f| f.meta.level)).collect();
    let runs: Vec<Run> = sorted.into_iter().map(|files| run_reader(io.clone(), &layout, files, batch_size)).collect();
    Ok(MergeIterator::new(layout, runs, cfg, drop_delete, batch_size)?.with_run_levels(levels))
}
