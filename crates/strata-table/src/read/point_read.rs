//! Point reads: routing a primary key to its bucket, and `get` and `get_many`, which decode only the rows
//! that can hold the keys.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_row::{RowConverter, SortField};
use strata_format::{
    file_columns, CmpOp, DataFileRef, FileRead, KeyValueLayout, MergeConfig, MergeIterator, Predicate, Run,
    TypedPredicate,
};
use strata_spec::{bucket_of_hash, compare_rows, key_hash, BinaryRow, DataType, Datum, Error, Result};

use crate::read::ReadBuilder;
use crate::table::Table;

/// Where a primary key lives: its partition, bucket, and the key as the files hold it (the primary-key
/// columns minus partition columns, as datums).
pub(crate) struct RoutedKey {
    pub(crate) partition: BinaryRow,
    pub(crate) bucket: KeyBuckets,
    pub(crate) key: Vec<Option<Datum>>,
}

/// Which buckets of its partition may hold a routed key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyBuckets {
    /// Fixed buckets: the bucket key's hash, placed by the bucket count the partition's files were written
    /// with (`_TOTAL_BUCKETS`). That is the table's `bucket` unless the option changed and only some
    /// partitions were rewritten since (Paimon's rescale: `ALTER TABLE ... SET ('bucket' = ...)` and then
    /// `INSERT OVERWRITE` per partition); routing those by the new count would miss keys.
    Hashed { hash: i32, table_buckets: i32 },
    /// Dynamic and postpone tables place keys by their index or their writer, not by the hash: any bucket
    /// (postponed files, in negative buckets, are not visible to batch reads, as in Paimon).
    Any,
}

impl KeyBuckets {
    /// The one bucket that may hold the key in a partition whose files record `total_buckets` (0 or less
    /// when unknown: the table's count then); `None` for [`KeyBuckets::Any`].
    pub(crate) fn bucket_for(&self, total_buckets: i32) -> Result<Option<i32>> {
        match *self {
            KeyBuckets::Hashed { hash, table_buckets } => {
                let n = if total_buckets > 0 { total_buckets } else { table_buckets };
                bucket_of_hash(hash, n).map(Some)
            }
            KeyBuckets::Any => Ok(None),
        }
    }

    /// Whether a file in `bucket`, written with `total_buckets` buckets, may hold the key.
    pub(crate) fn holds(&self, bucket: i32, total_buckets: i32) -> Result<bool> {
        Ok(match self.bucket_for(total_buckets)? {
            Some(b) => b == bucket,
            None => bucket >= 0,
        })
    }
}

/// How one schema's primary keys are routed: which key values make the partition, the bucket key and the
/// key the files hold, worked out once (a `TableQuery` routes every lookup with the same router).
pub(crate) struct KeyRouter {
    primary_keys: Vec<String>,
    /// Positions in the primary key, and types, of the partition columns.
    partition: Vec<(usize, DataType)>,
    /// Of the bucket key's columns; and the table's bucket count (`None`: dynamic or postpone buckets).
    bucket: Vec<(usize, DataType)>,
    buckets: Option<i32>,
    /// Of the key columns as the files hold them (the primary key minus partition columns).
    key: Vec<(usize, DataType)>,
}

impl KeyRouter {
    pub(crate) fn new(table: &Table, layout: &KeyValueLayout) -> Result<Self> {
        let schema = table.schema();
        if layout.append {
            return Err(Error::unsupported(
                "point lookups on a table without a primary key (an append table); scan it with a filter",
            ));
        }
        let at = |name: &str| -> Result<(usize, DataType)> {
            let i = schema.primary_keys.iter().position(|k| k == name).ok_or_else(|| {
                Error::invalid("key", format!("column '{name}' is not part of the primary key; get needs it to route"))
            })?;
            Ok((i, schema.field(name)?.data_type))
        };
        let partition = schema.partition_keys.iter().map(|p| at(p)).collect::<Result<Vec<_>>>()?;
        let bucket = schema.bucket_keys().iter().map(|k| at(k)).collect::<Result<Vec<_>>>()?;
        // Dynamic (-1) and postpone (-2) tables place keys by their index or their writer, not by the hash:
        // routing them by hash would look in one bucket and miss keys in the others.
        let buckets = Some(schema.core_options().bucket()?).filter(|&b| b > 0);
        // The files' key types, as the layout stores them.
        let key = layout.key_fields.iter().map(|k| Ok((at(&k.name)?.0, k.data_type))).collect::<Result<Vec<_>>>()?;
        Ok(KeyRouter { primary_keys: schema.primary_keys.clone(), partition, bucket, buckets, key })
    }

    /// Routes `key` (values of every primary-key column, in the table's primary-key order) to its bucket.
    pub(crate) fn route(&self, key: &[Option<Datum>]) -> Result<RoutedKey> {
        if key.len() != self.primary_keys.len() {
            return Err(Error::invalid("key", format!("{} values for primary key {:?}", key.len(), self.primary_keys)));
        }
        let pick = |cols: &[(usize, DataType)]| -> (Vec<Option<Datum>>, Vec<DataType>) {
            cols.iter().map(|(i, t)| (key[*i].clone(), *t)).unzip()
        };
        let (values, types) = pick(&self.partition);
        let partition = BinaryRow::from_datums(&values, &types)?;
        let bucket = match self.buckets {
            Some(table_buckets) => {
                let (values, types) = pick(&self.bucket);
                KeyBuckets::Hashed { hash: key_hash(&values, &types)?, table_buckets }
            }
            None => KeyBuckets::Any,
        };
        let (values, types) = pick(&self.key);
        // Through the binary row, so the key compares like the files' keys (types normalised as stored).
        let key = BinaryRow::from_datums(&values, &types)?.to_datums(&types)?;
        Ok(RoutedKey { partition, bucket, key })
    }
}

/// A value row of `b` (its value columns at `row`) as a one-row batch.
fn value_row(layout: &KeyValueLayout, b: &RecordBatch, row: usize) -> Result<RecordBatch> {
    let columns = (0..layout.value_fields.len())
        .map(|i| {
            let c = layout.value_index(i);
            let column = b.columns().get(c).ok_or_else(|| Error::invalid("get", format!("no column {c}")))?;
            // A one-row batch is its own row: slicing would only copy every array's handle again.
            Ok(if b.num_rows() == 1 && row == 0 { column.clone() } else { column.slice(row, 1) })
        })
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(layout.value_schema.clone(), columns).map_err(|e| Error::internal_from("get", e))
}

/// The key's row when row `row` of `b` is its only copy under deduplicate (its own merge): kept when it adds
/// or updates the key, `None` when it retracts it. (A deletion-vector table's lookups mostly end here,
/// without a merge iterator.)
fn only_copy(layout: &KeyValueLayout, b: &RecordBatch, row: usize) -> Result<Option<RecordBatch>> {
    Ok(if row_is_live(layout, b, row)? { Some(value_row(layout, b, row)?) } else { None })
}

/// Whether row `row` of `b` (file layout) adds or updates its key (rather than retracting it).
pub(crate) fn row_is_live(layout: &KeyValueLayout, b: &RecordBatch, row: usize) -> Result<bool> {
    let kind = b
        .column(layout.kind_index())
        .as_any()
        .downcast_ref::<arrow_array::Int8Array>()
        .filter(|k| row < k.len() && k.is_valid(row))
        .ok_or_else(|| Error::corrupt("the row kind is not a TINYINT value"))?;
    Ok(match strata_format::RowKind::from_byte(kind.value(row))? {
        strata_format::RowKind::Insert | strata_format::RowKind::UpdateAfter => true,
        strata_format::RowKind::Delete | strata_format::RowKind::UpdateBefore => false,
    })
}

/// Merges every copy of one key (`copies`: per file, its rows of the key and the file's level) with the
/// table's merge engine and returns the surviving row (value columns only), `None` when the key is deleted
/// or absent.
pub(crate) fn merge_copies(
    layout: &Arc<KeyValueLayout>,
    merge: &MergeConfig,
    copies: Vec<(Vec<RecordBatch>, i32)>,
) -> Result<Option<RecordBatch>> {
    if copies.is_empty() {
        return Ok(None);
    }
    if let [(batches, _)] = copies.as_slice() {
        let mut rows = batches.iter().filter(|b| b.num_rows() > 0);
        if let (Some(b), None, true) = (rows.next(), rows.next(), merge.engine == strata_spec::MergeEngine::Deduplicate)
        {
            if b.num_rows() == 1 {
                return only_copy(layout, b, 0);
            }
        }
    }
    let (runs, run_levels): (Vec<Run>, Vec<i32>) =
        copies.into_iter().map(|(batches, level)| (Box::new(batches.into_iter().map(Ok)) as Run, level)).unzip();
    let merged = MergeIterator::new(layout.clone(), runs, merge.clone(), true, 16)?.with_run_levels(run_levels);
    for b in merged {
        let b = b?;
        if b.num_rows() > 0 {
            return value_row(layout, &b, 0).map(Some);
        }
    }
    Ok(None)
}

/// Point lookup: the row whose primary key is `key` (values of every primary-key column, in the order of
/// the table's primary key), as one-row batch of all columns; `None` when absent or deleted. Uses the
/// same visibility as a scan (deletion-vector tables show compacted levels).
///
/// Each call reads the snapshot's metadata and only the pages of candidate files that can hold the key:
/// right for a lookup now and then. Many keys at once: [`get_many`]. Many lookups over time:
/// [`TableQuery`](crate::read::query::TableQuery) keeps local lookup files and answers in microseconds once warm.
pub fn get(table: &Table, key: &[Option<Datum>], snapshot: Option<i64>) -> Result<Option<RecordBatch>> {
    Ok(get_many(table, &[key.to_vec()], snapshot)?.pop().flatten())
}

/// Point lookups of many keys in one pass: each key's row (as [`get`]), `None` where absent or deleted, in
/// the order of `keys`. The snapshot's metadata and deletion vectors are read once; keys are routed,
/// grouped by partition and sorted, and matched against each live file's key range; each candidate file's
/// key columns are read once for all its keys (row groups pruned by the keys' values or range), and only the
/// matching rows are then decoded in full. So 10,000 keys cost about one filtered scan of the files they
/// touch, not 10,000 lookups.
pub fn get_many(table: &Table, keys: &[Vec<Option<Datum>>], snapshot: Option<i64>) -> Result<Vec<Option<RecordBatch>>> {
    let _span = tracing::info_span!("get_many", keys = keys.len()).entered();
    let table = &table.as_of(snapshot)?;
    let layout = Arc::new(table.layout()?);
    let mut out: Vec<Option<RecordBatch>> = vec![None; keys.len()];
    let Some(snap) = table.snapshot(snapshot)? else { return Ok(out) };
    let router = KeyRouter::new(table, &layout)?;
    let routed: Vec<RoutedKey> = keys.iter().map(|k| router.route(k)).collect::<Result<_>>()?;
    let files = candidate_files(table, &layout, &snap, &routed)?;
    let file_cols = file_columns(&layout);
    let key_cols: Vec<(String, DataType)> = file_cols[..layout.key_arity()].to_vec();
    // Per candidate file, the rows of its keys it holds.
    let found: Vec<Result<FileHits>> = strata_io::parallel_map(&files, LOOKUP_THREADS, |(f, cand)| {
        rows_of_keys(table, &layout, f, cand, &routed, &key_cols, &file_cols)
    });
    let found = found.into_iter().collect::<Result<Vec<FileHits>>>()?;
    // Each key's copies, in file order (the merge's run order): (key, file, batch, row).
    let mut copies: Vec<(usize, usize, usize, usize)> = found
        .iter()
        .enumerate()
        .flat_map(|(file, h)| h.hits.iter().map(move |&(key, batch, row)| (key, file, batch, row)))
        .collect();
    copies.sort_unstable();
    let merge = MergeConfig::from_schema(table.schema())?;
    let dedup = merge.engine == strata_spec::MergeEngine::Deduplicate;
    for group in copies.chunk_by(|a, b| a.0 == b.0) {
        let k = group[0].0;
        out[k] = match group {
            [(_, file, batch, row)] if dedup => only_copy(&layout, &found[*file].batches[*batch], *row)?,
            _ => {
                let rows = group
                    .iter()
                    .map(|&(_, file, batch, row)| (vec![found[file].batches[batch].slice(row, 1)], found[file].level))
                    .collect();
                merge_copies(&layout, &merge, rows)?
            }
        };
    }
    Ok(out)
}

/// The rows one file holds of the keys asked: its level, the batches read, and per row found (the key's
/// index in the request, the batch, the row in it).
struct FileHits {
    level: i32,
    batches: Vec<RecordBatch>,
    hits: Vec<(usize, usize, usize)>,
}

/// How many candidate files `get_many` reads at once.
const LOOKUP_THREADS: usize = 8;

/// Up to this many keys of a file prune its row groups by each key's value; more, by their range.
const KEYS_PRUNED_ONE_BY_ONE: usize = 32;

/// The live files that may hold some of the keys, each with the indices of those keys, and its deletion
/// vector read.
fn candidate_files(
    table: &Table,
    layout: &Arc<KeyValueLayout>,
    snap: &strata_spec::Snapshot,
    routed: &[RoutedKey],
) -> Result<Vec<(DataFileRef, Vec<usize>)>> {
    let key_types: Vec<DataType> = layout.key_fields.iter().map(|k| k.data_type).collect();
    let mut by_partition: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
    for (i, r) in routed.iter().enumerate() {
        by_partition.entry(r.partition.serialize()).or_default().push(i);
    }
    for idx in by_partition.values_mut() {
        idx.sort_by(|&a, &b| compare_rows(&routed[a].key, &routed[b].key));
    }
    let raw = ReadBuilder::new(table).raw_mode()?;
    let deletion_files = table.deletion_files(snap)?;
    let mut files = Vec::new();
    for e in table.live_files_shared(snap)?.iter() {
        if raw && e.file.level == 0 {
            continue;
        }
        let Some(idx) = by_partition.get(&e.partition.serialize()) else { continue };
        let min = e.file.min_key.to_datums(&key_types)?;
        let max = e.file.max_key.to_datums(&key_types)?;
        let lo = idx.partition_point(|&i| compare_rows(&routed[i].key, &min).is_lt());
        let hi = idx.partition_point(|&i| compare_rows(&routed[i].key, &max).is_le());
        let mut cand = Vec::new();
        for &i in idx.get(lo..hi.max(lo)).unwrap_or_default() {
            if routed[i].bucket.holds(e.bucket, e.total_buckets)? {
                cand.push(i);
            }
        }
        if cand.is_empty() {
            continue;
        }
        let dv = match deletion_files.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone())) {
            Some(d) => Some(Arc::from(d.read(table.io().as_ref())?)),
            None => None,
        };
        files.push((
            layout.file_ref(table.data_file_path(e)?, e.file.clone(), dv)?.with_footers(table.footers().clone()),
            cand,
        ));
    }
    Ok(files)
}

/// The predicate that prunes a file's row groups for keys `cand` (sorted by key): each key's value when
/// they are few, else the range of the first key column.
fn pruning_predicate(layout: &KeyValueLayout, routed: &[RoutedKey], cand: &[usize]) -> Option<Predicate> {
    let column = |k: usize| format!("{}{}", strata_format::KEY_PREFIX, layout.key_fields[k].name);
    let equals = |key: &[Option<Datum>]| {
        Predicate::And(
            key.iter()
                .enumerate()
                .map(|(k, v)| match v {
                    Some(v) => Predicate::cmp(&column(k), CmpOp::Eq, v.clone()),
                    None => Predicate::IsNull(column(k)),
                })
                .collect(),
        )
    };
    if cand.len() <= KEYS_PRUNED_ONE_BY_ONE {
        return Some(Predicate::Or(cand.iter().map(|&i| equals(&routed[i].key)).collect()));
    }
    let first = routed[*cand.first()?].key.first()?.clone()?;
    let last = routed[*cand.last()?].key.first()?.clone()?;
    Some(Predicate::And(vec![
        Predicate::cmp(&column(0), CmpOp::GtEq, first),
        Predicate::cmp(&column(0), CmpOp::LtEq, last),
    ]))
}

/// The rows of file `f` holding keys `cand`.
fn rows_of_keys(
    table: &Table,
    layout: &Arc<KeyValueLayout>,
    f: &DataFileRef,
    cand: &[usize],
    routed: &[RoutedKey],
    key_cols: &[(String, DataType)],
    file_cols: &[(String, DataType)],
) -> Result<FileHits> {
    let key_types: Vec<DataType> = key_cols.iter().map(|(_, t)| *t).collect();
    let fields: Vec<SortField> = key_types.iter().map(|t| SortField::new(strata_format::to_arrow(t))).collect();
    let converter = RowConverter::new(fields).map_err(|e| Error::internal_from("get", e))?;
    // The wanted keys in arrow-row form, each with the request indices asking for it.
    let columns = (0..key_types.len())
        .map(|c| {
            let values: Vec<Option<Datum>> = cand.iter().map(|&i| routed[i].key[c].clone()).collect();
            strata_format::array_of(&key_types[c], &values)
        })
        .collect::<Result<Vec<_>>>()?;
    let wanted_rows = converter.convert_columns(&columns).map_err(|e| Error::internal_from("get", e))?;
    let mut wanted: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (slot, &i) in cand.iter().enumerate() {
        wanted.entry(wanted_rows.row(slot).data()).or_default().push(i);
    }
    let typed: Option<TypedPredicate> =
        pruning_predicate(layout, routed, cand).map(|p| Arc::new((p, file_cols.to_vec())) as TypedPredicate);
    let mut hits: Vec<(u64, &Vec<usize>)> = Vec::new();
    for b in FileRead::new(key_cols.to_vec()).with_positions().prune(typed).narrow().open(table.io(), f)? {
        let b = b?;
        let rows =
            converter.convert_columns(&b.columns()[..key_types.len()]).map_err(|e| Error::internal_from("get", e))?;
        let pos = b
            .column(b.num_columns() - 1)
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .ok_or_else(|| Error::invalid("get", "row positions missing"))?;
        for r in 0..b.num_rows() {
            if let Some(keys) = wanted.get(rows.row(r).data()) {
                hits.push((pos.value(r) as u64, keys));
            }
        }
    }
    if hits.is_empty() {
        return Ok(FileHits { level: f.meta.level, batches: Vec::new(), hits: Vec::new() });
    }
    let positions: Vec<u64> = hits.iter().map(|(p, _)| *p).collect();
    let mut found = FileHits { level: f.meta.level, batches: Vec::new(), hits: Vec::with_capacity(hits.len()) };
    let mut at = 0usize;
    for b in FileRead::new(file_cols.to_vec()).batch_size(1024).at_positions(positions).open(table.io(), f)? {
        let b = RecordBatch::try_new(layout.file_schema.clone(), b?.columns().to_vec())
            .map_err(|e| Error::internal_from("get", e))?;
        for r in 0..b.num_rows() {
            let (_, keys) =
                hits.get(at).ok_or_else(|| Error::corrupt(format!("{}: more rows than positions asked", f.path)))?;
            at += 1;
            found.hits.extend(keys.iter().map(|&k| (k, found.batches.len(), r)));
        }
        found.batches.push(b);
    }
    if at != hits.len() {
        return Err(Error::corrupt(format!("{}: {} of {} rows asked were read", f.path, at, hits.len())));
    }
    Ok(found)
}
