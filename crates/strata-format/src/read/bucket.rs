//! Reading one bucket: its sorted runs merged (merge-on-read), or its files one by one without merging
//! (raw reads of deletion-vector tables).

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use strata_io::FileIO;
use strata_spec::{compare_rows, DataType, Result};

use crate::integrity::verify::RowCheck;
use crate::layout::kv::KeyValueLayout;
use crate::layout::system_fields::{KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND};
use crate::merge::function::MergeConfig;
use crate::merge::iterator::{MergeIterator, Run};
use crate::read::file_ref::DataFileRef;
use crate::read::footer_cache::FooterCache;
use crate::read::reader::{open_file, FileBatches, ReadRequest, DEFAULT_BATCH_SIZE};
use crate::write::writer::FileFormat;

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

/// How a read of one data file fetches its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetch {
    /// Whole, in one request, unless a predicate or a part of the file (`DataFileRef::rows`) is read: then
    /// only the pages the read decodes (a selective filter reads a fraction of the file), checked by the
    /// file's block checksums, or by its column-chunk CRCs for a file that has only those (the chunks
    /// decoded are then fetched whole).
    Scan,
    /// Only the byte ranges a narrow read needs (a few columns of a few row groups: point lookups).
    Narrow,
}

/// What a read takes of one data file, and how it fetches it: the one way to open a data file. Every read
/// applies the file's deletion vector (but for [`FileRead::at_positions`]) and checks its batches against
/// the file's manifest entry (row count, and each batch against the file's statistics).
#[derive(Debug, Clone)]
pub struct FileRead {
    columns: Vec<(String, DataType)>,
    with_positions: bool,
    batch_size: usize,
    prune: Option<crate::predicate::TypedPredicate>,
    positions: Option<Vec<u64>>,
    fetch: Fetch,
}

impl FileRead {
    /// A read of `columns` (file-layout names, with the types to return them as): every live row, in
    /// batches of [`DEFAULT_BATCH_SIZE`], the file fetched whole.
    pub fn new(columns: Vec<(String, DataType)>) -> Self {
        FileRead {
            columns,
            with_positions: false,
            batch_size: DEFAULT_BATCH_SIZE,
            prune: None,
            positions: None,
            fetch: Fetch::Scan,
        }
    }

    /// Appends a `_ROW_POSITION` column: each row's position in the file.
    pub fn with_positions(mut self) -> Self {
        self.with_positions = true;
        self
    }

    /// Rows per batch.
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows;
        self
    }

    /// Skips row groups, and pages, whose statistics rule `prune` out (rows are not filtered exactly), and
    /// fetches only the pages read.
    pub fn prune(mut self, prune: Option<crate::predicate::TypedPredicate>) -> Self {
        self.prune = prune;
        self
    }

    /// Fetches only the byte ranges the read needs, for narrow reads (a few columns of a few row groups).
    pub fn narrow(mut self) -> Self {
        self.fetch = Fetch::Narrow;
        self
    }

    /// Reads only the rows at `positions` (ascending), whether deleted or not, fetching only the pages that
    /// hold them.
    pub fn at_positions(mut self, positions: Vec<u64>) -> Self {
        self.positions = Some(positions);
        self.fetch = Fetch::Narrow;
        self
    }

    /// Opens `file` for this read.
    pub fn open(self, io: &Arc<dyn FileIO>, file: &DataFileRef) -> Result<FileBatches> {
        let format = FileFormat::from_file_name(&file.meta.file_name)?;
        let select = self.positions;
        let req = ReadRequest {
            columns: self.columns,
            dv: if select.is_some() { None } else { file.dv.as_deref() },
            with_positions: self.with_positions,
            batch_size: self.batch_size,
            prune: self.prune,
            rows: if select.is_some() { None } else { file.rows.clone() },
            select,
            mapping: file.mapping.as_deref(),
        };
        let batches = match self.fetch {
            Fetch::Narrow => open_ranged(io, file, format, &req, false)?,
            Fetch::Scan if req.prune.is_some() || req.rows.is_some() => open_ranged(io, file, format, &req, true)?,
            Fetch::Scan => open_file(io.as_ref(), &file.path, format, &req)?,
        };
        checked(batches, file, &req.columns)
    }
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
    crate::read::reader::open_file_ranged(io, &file.path, format, req, recorded_size(file), scan, file.footers.as_ref())
}

/// The size `file`'s manifest entry records, if it records one.
fn recorded_size(file: &DataFileRef) -> Option<u64> {
    u64::try_from(file.meta.file_size).ok().filter(|&n| n > 0)
}

/// `batches` of `file` checked against its manifest entry: the row count now, and every decoded batch (of
/// `columns`, the read's) against the file's statistics.
fn checked(batches: FileBatches, file: &DataFileRef, columns: &[(String, DataType)]) -> Result<FileBatches> {
    if i64::try_from(batches.num_rows).ok() != Some(file.meta.row_count) {
        return Err(strata_spec::Error::corrupt_file(
            file.path.clone(),
            format!("has {} rows where its manifest entry says {}", batches.num_rows, file.meta.row_count),
        ));
    }
    Ok(batches.with_check(RowCheck::for_file(&file.meta, columns)))
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
            let mut parts = crate::read::file_parts::file_parts(file, RUN_PART_BYTES, &self.footers);
            let file = parts.remove(0);
            for part in parts.into_iter().rev() {
                self.files.push_front(part);
            }
            match FileRead::new(self.columns.clone()).batch_size(self.batch_size).open(&self.io, &file) {
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
