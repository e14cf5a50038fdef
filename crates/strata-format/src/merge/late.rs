//! Merge-on-read by keys first (late materialisation). Where a key's merge result is one of its records as
//! stored (deduplicate and first-row, without `sequence.field`), merging needs only the key, sequence and
//! kind columns: the merge picks, for each key, the record that wins, and the value columns are needed for
//! that record alone. So a bucket's sorted runs are merged on those three columns, each record carrying
//! its file and row; every record that loses (or is a retraction that wins and is dropped) is added to its
//! file's deletion vector; the files are then read as a deletion-vector table's are, one after another, no
//! value copied between batches and no losing row's values decoded into arrays. A full merge assembles
//! every value column row by row from the runs' batches, which was a quarter of a merge-on-read scan.
//!
//! The rows come out in file order, not key order: for reads, which promise no order. Compactions, which
//! write sorted files, keep merging whole records ([`crate::merge_read`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use strata_dv::DeletionVector;
use strata_io::FileIO;
use strata_spec::{DataField, DataType, Error, MergeEngine, Result, TypeRoot};

use crate::layout::kv::KeyValueLayout;
use crate::merge::function::MergeConfig;
use crate::merge::iterator::{MergeIterator, Run};
use crate::read::bucket::{file_columns, sorted_runs, FileRead};
use crate::read::file_ref::DataFileRef;

/// The value column of the keys-only merge: a record's file (its index among the split's files, high 32
/// bits) and row (low 32 bits).
const PLACE: &str = "_STRATA_PLACE";

/// Whether `files` can be merged by keys first under `cfg`: the engine keeps one stored record per key,
/// and every file's rows and the file count fit the place encoding.
pub fn keys_first_applies(cfg: &MergeConfig, files: &[DataFileRef]) -> bool {
    matches!(cfg.engine, MergeEngine::Deduplicate | MergeEngine::FirstRow)
        && cfg.sequence_fields.is_empty()
        && u32::try_from(files.len()).is_ok()
        && files.iter().all(|f| u32::try_from(f.meta.row_count).is_ok())
}

/// `files` (one bucket's, in any order) with every row that is not its key's merge result under `cfg`
/// deselected by the file's deletion vector, retractions dropped (a read's merge); a file none of whose
/// rows survives is left out. Reading the files returned without merging yields the merge's rows. Callers
/// check [`keys_first_applies`] first.
pub fn merge_selection(
    io: &Arc<dyn FileIO>,
    layout: &KeyValueLayout,
    files: Vec<DataFileRef>,
    cfg: MergeConfig,
    batch_size: usize,
) -> Result<Vec<DataFileRef>> {
    let _span = tracing::debug_span!("merge_selection", files = files.len()).entered();
    if !keys_first_applies(&cfg, &files) {
        return Err(Error::invalid("merge", "these files cannot be merged by their keys alone"));
    }
    let place = DataField {
        id: i32::MAX,
        name: PLACE.to_string(),
        data_type: DataType::not_null(TypeRoot::BigInt),
        description: None,
        default_value: None,
    };
    let keys_layout = Arc::new(layout.keys_with(place));
    let key_columns: Vec<(String, DataType)> = file_columns(layout)[..layout.key_arity() + 2].to_vec();
    let ordinal: HashMap<String, u64> = files.iter().enumerate().map(|(i, f)| (f.path.clone(), i as u64)).collect();
    let key_types: Vec<DataType> = layout.key_fields.iter().map(|f| f.data_type).collect();
    let sorted = sorted_runs(files.clone(), &key_types)?;
    let levels: Vec<i32> = sorted.iter().map(|run| run.first().map_or(0, |f| f.meta.level)).collect();
    let runs: Vec<Run> = sorted
        .into_iter()
        .map(|run| {
            let run: Vec<(u64, DataFileRef)> =
                run.into_iter().map(|f| (ordinal.get(&f.path).copied().unwrap_or(u64::MAX), f)).collect();
            keys_of_run(io.clone(), keys_layout.clone(), key_columns.clone(), run, batch_size)
        })
        .collect();
    let merged = MergeIterator::new(keys_layout.clone(), runs, cfg, true, batch_size)?.with_run_levels(levels);
    let mut winners: Vec<Vec<u32>> = vec![Vec::new(); files.len()];
    let place_index = keys_layout.value_index(0);
    for batch in merged {
        let batch = batch?;
        for &p in batch.column(place_index).as_primitive::<Int64Type>().values() {
            let (file, row) = ((p as u64 >> 32) as usize, p as u32);
            winners.get_mut(file).ok_or_else(|| Error::invalid("merge", "a record's place names no file"))?.push(row);
        }
    }
    let mut out = Vec::with_capacity(files.len());
    for (file, mut rows) in files.into_iter().zip(winners) {
        if let Some(selected) = select(file, &mut rows)? {
            out.push(selected);
        }
    }
    Ok(out)
}

/// `file` with only `rows` (its merge's winners) live, or `None` if there are none.
fn select(mut file: DataFileRef, rows: &mut [u32]) -> Result<Option<DataFileRef>> {
    if rows.is_empty() {
        return Ok(None);
    }
    // A file's winners come out in key order, which is its row order; sorting is a check that costs
    // nothing then.
    if !rows.is_sorted() {
        rows.sort_unstable();
    }
    let count = u64::try_from(file.meta.row_count).unwrap_or(0);
    if rows.len() as u64 == count && file.dv.is_none() {
        return Ok(Some(file));
    }
    // Rows the file's own deletion vector removed were never read, so they are not winners either.
    let mut dv = DeletionVector::new(false);
    let mut next = 0u64;
    for &row in rows.iter() {
        for lost in next..u64::from(row) {
            dv.delete(lost)?;
        }
        next = u64::from(row) + 1;
    }
    for lost in next..count {
        dv.delete(lost)?;
    }
    file.dv = Some(Arc::new(dv));
    Ok(Some(file))
}

/// One sorted run's key, sequence and kind columns, with each record's place (file ordinal, row), read
/// file by file (only those columns' pages are fetched).
fn keys_of_run(
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    columns: Vec<(String, DataType)>,
    files: Vec<(u64, DataFileRef)>,
    batch_size: usize,
) -> Run {
    let width = columns.len();
    let batches = files.into_iter().flat_map(move |(ordinal, mut file)| {
        // The file's own length, not its manifest entry's (a stat on the local stores this runs on): a file
        // replaced under its entry is then reported by what it holds (its rows, its keys), as a whole read
        // reports it, not as a footer out of place.
        file.meta.file_size = 0;
        let opened = FileRead::new(columns.clone()).with_positions().batch_size(batch_size).narrow().open(&io, &file);
        let layout = layout.clone();
        let rows: Box<dyn Iterator<Item = Result<RecordBatch>> + Send> = match opened {
            Err(e) => Box::new(std::iter::once(Err(e))),
            Ok(batches) => Box::new(batches.map(move |b| with_place(&layout, b?, width, ordinal))),
        };
        rows
    });
    Box::new(batches)
}

/// A decoded batch (the key columns, then `_ROW_POSITION`) in the keys layout: positions become places.
fn with_place(layout: &KeyValueLayout, batch: RecordBatch, width: usize, ordinal: u64) -> Result<RecordBatch> {
    if ordinal > u64::from(u32::MAX) {
        return Err(Error::invalid("merge", "a file of the merge has no place"));
    }
    let positions = batch.column(width).as_primitive::<Int64Type>();
    let places: Int64Array = positions.unary(|p| ((ordinal << 32) | (p as u64 & 0xFFFF_FFFF)) as i64);
    let mut columns: Vec<ArrayRef> = batch.columns()[..width].to_vec();
    columns.push(Arc::new(places));
    RecordBatch::try_new(layout.file_schema.clone(), columns).map_err(|e| Error::internal_from("merge", e))
}
