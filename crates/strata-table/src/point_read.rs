//! Point reads: routing a primary key to its bucket, and `get`, which decodes only the rows that can hold it.

use std::sync::Arc;

use arrow_array::RecordBatch;
use strata_format::{
    file_columns, open_data_file_ranged, read_positions, CmpOp, KeyValueLayout, MergeConfig, MergeIterator, Predicate,
    Run, TypedPredicate, DEFAULT_BATCH_SIZE,
};
use strata_spec::{bucket_of_hash, key_hash, BinaryRow, DataType, Datum, Error, Result};

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

/// Routes `key` (values of every primary-key column, in the table's primary-key order) to its bucket.
pub(crate) fn route_key(table: &Table, layout: &KeyValueLayout, key: &[Option<Datum>]) -> Result<RoutedKey> {
    let schema = table.schema();
    if key.len() != schema.primary_keys.len() {
        return Err(Error::invalid("key", format!("{} values for primary key {:?}", key.len(), schema.primary_keys)));
    }
    let value = |name: &str| -> Result<Option<Datum>> {
        let i = schema.primary_keys.iter().position(|k| k == name).ok_or_else(|| {
            Error::invalid("key", format!("column '{name}' is not part of the primary key; get needs it to route"))
        })?;
        Ok(key[i].clone())
    };
    let types_of = |name: &str| -> Result<DataType> { Ok(schema.field(name)?.data_type) };
    let partition_values = schema.partition_keys.iter().map(|p| value(p)).collect::<Result<Vec<_>>>()?;
    let partition_types = schema.partition_keys.iter().map(|p| types_of(p)).collect::<Result<Vec<_>>>()?;
    let partition = BinaryRow::from_datums(&partition_values, &partition_types)?;
    let bucket_keys = schema.bucket_keys();
    let bucket_values = bucket_keys.iter().map(|k| value(k)).collect::<Result<Vec<_>>>()?;
    let bucket_types = bucket_keys.iter().map(|k| types_of(k)).collect::<Result<Vec<_>>>()?;
    // Dynamic (-1) and postpone (-2) tables place keys by their index or their writer, not by the hash:
    // routing them by hash would look in one bucket and miss keys in the others.
    let buckets = schema.core_options().bucket()?;
    let bucket = if buckets > 0 {
        KeyBuckets::Hashed { hash: key_hash(&bucket_values, &bucket_types)?, table_buckets: buckets }
    } else {
        KeyBuckets::Any
    };
    let trimmed: Vec<Option<Datum>> = layout.key_fields.iter().map(|k| value(&k.name)).collect::<Result<_>>()?;
    let key_types: Vec<DataType> = layout.key_fields.iter().map(|k| k.data_type).collect();
    // Through the binary row, so the key compares like the files' keys (types normalised as stored).
    let key = BinaryRow::from_datums(&trimmed, &key_types)?.to_datums(&key_types)?;
    Ok(RoutedKey { partition, bucket, key })
}

/// Merges every copy of one key (`runs`, one per file, each at its file's level) and returns the surviving
/// row (value columns only), `None` when the key is deleted or absent.
pub(crate) fn merge_copies(
    table: &Table,
    layout: &Arc<KeyValueLayout>,
    runs: Vec<Run>,
    run_levels: Vec<i32>,
) -> Result<Option<RecordBatch>> {
    if runs.is_empty() {
        return Ok(None);
    }
    let merged = MergeIterator::new(layout.clone(), runs, MergeConfig::from_schema(table.schema())?, true, 16)?
        .with_run_levels(run_levels);
    let value_cols: Vec<usize> = (0..layout.value_fields.len()).map(|i| layout.value_index(i)).collect();
    for b in merged {
        let b = b?;
        if b.num_rows() > 0 {
            let b = b.project(&value_cols).map_err(|e| Error::invalid("get", e.to_string()))?;
            return RecordBatch::try_new(layout.value_schema.clone(), b.columns().to_vec())
                .map(|b| Some(b.slice(0, 1)))
                .map_err(|e| Error::invalid("get", e.to_string()));
        }
    }
    Ok(None)
}

/// Point lookup: the row whose primary key is `key` (values of every primary-key column, in the order of
/// the table's primary key), as one-row batch of all columns; `None` when absent or deleted. Uses the
/// same visibility as a scan (deletion-vector tables show compacted levels).
///
/// Each call reads the snapshot's metadata and only the pages of candidate files that can hold the key:
/// right for a lookup now and then. For many lookups, [`TableQuery`](crate::query::TableQuery) keeps
/// local lookup files and answers in microseconds once warm.
pub fn get(table: &Table, key: &[Option<Datum>], snapshot: Option<i64>) -> Result<Option<RecordBatch>> {
    let table = &table.as_of(snapshot)?;
    let layout = Arc::new(table.layout()?);
    let RoutedKey { partition, bucket, key: want } = route_key(table, &layout, key)?;
    let Some(snap) = table.snapshot(snapshot)? else { return Ok(None) };
    let key_types: Vec<DataType> = layout.key_fields.iter().map(|k| k.data_type).collect();
    let rb = ReadBuilder::new(table);
    let raw = rb.raw_mode()?;
    let deletion_files = table.deletion_files(&snap)?;
    let mut candidates = Vec::new();
    for e in table.live_files_shared(&snap)?.iter() {
        if e.partition != partition || !bucket.holds(e.bucket, e.total_buckets)? || (raw && e.file.level == 0) {
            continue;
        }
        let e = e.clone();
        let min = e.file.min_key.to_datums(&key_types)?;
        let max = e.file.max_key.to_datums(&key_types)?;
        use strata_spec::compare_rows;
        if compare_rows(&want, &min).is_lt() || compare_rows(&want, &max).is_gt() {
            continue;
        }
        let dv = match deletion_files.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone())) {
            Some(d) => Some(Arc::from(d.read(table.io().as_ref())?)),
            None => None,
        };
        candidates.push(layout.file_ref(table.data_file_path(&e)?, e.file, dv)?);
    }
    // Each candidate file filtered to the key (row groups pruned by the key columns' statistics) is a run.
    let key_pred = Predicate::And(
        layout
            .key_fields
            .iter()
            .zip(&want)
            .map(|(k, v)| match v {
                Some(v) => Predicate::cmp(&format!("{}{}", strata_format::KEY_PREFIX, k.name), CmpOp::Eq, v.clone()),
                None => Predicate::IsNull(format!("{}{}", strata_format::KEY_PREFIX, k.name)),
            })
            .collect(),
    );
    let file_cols = file_columns(&layout);
    let typed: TypedPredicate = Arc::new((key_pred.clone(), file_cols.clone()));
    let col_type = |name: &str| file_cols.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
    // Per candidate file: find the key's live positions from the key columns alone (row groups pruned by
    // their statistics), then decode just those rows. Each file's matches form one run for the merge.
    let key_cols: Vec<(String, DataType)> = file_cols[..layout.key_arity()].to_vec();
    let mut runs: Vec<Run> = Vec::new();
    let mut run_levels: Vec<i32> = Vec::new();
    for f in &candidates {
        let mut positions = Vec::new();
        for b in open_data_file_ranged(table.io(), f, key_cols.clone(), true, DEFAULT_BATCH_SIZE, Some(typed.clone()))?
        {
            let b = b?;
            let mask = key_pred.evaluate(&b, &col_type)?;
            let pos = b
                .column(b.num_columns() - 1)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .ok_or_else(|| Error::invalid("get", "row positions missing"))?;
            for i in 0..b.num_rows() {
                if mask.value(i) {
                    positions.push(pos.value(i) as u64);
                }
            }
        }
        if positions.is_empty() {
            continue;
        }
        let mut batches = Vec::new();
        for b in read_positions(table.io(), f, file_cols.clone(), positions)? {
            batches.push(
                RecordBatch::try_new(layout.file_schema.clone(), b?.columns().to_vec())
                    .map_err(|e| Error::invalid("get", e.to_string())),
            );
        }
        runs.push(Box::new(batches.into_iter()));
        run_levels.push(f.meta.level);
    }
    merge_copies(table, &layout, runs, run_levels)
}
