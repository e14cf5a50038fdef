//! Small fixtures: a table with a BIGINT key and fake data-file metadata to commit.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use strata::lsm::{CommitIncrement, CompactIncrement, DataIncrement};
use strata::spec::{BinaryRow, DataFileMeta, DataType, Datum, SimpleStats, TableSchema};
use strata::table::{CommitMessage, Committable};
use strata::{FileIO, Table};

pub(crate) fn key_row(k: i64) -> BinaryRow {
    BinaryRow::from_datums(&[Some(Datum::BigInt(k))], &["BIGINT NOT NULL".parse().unwrap()]).unwrap()
}

pub(crate) fn file(name: &str, level: i32, min: i64, max: i64, rows: i64) -> DataFileMeta {
    DataFileMeta {
        file_name: name.to_string(),
        file_size: 100 + rows,
        row_count: rows,
        min_key: key_row(min),
        max_key: key_row(max),
        key_stats: SimpleStats { min_values: key_row(min), max_values: key_row(max), null_counts: Some(vec![Some(0)]) },
        value_stats: SimpleStats::empty(),
        min_sequence_number: 0,
        max_sequence_number: rows - 1,
        schema_id: 0,
        level,
        extra_files: vec![],
        creation_time: Some(0),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(0),
        value_stats_cols: Some(vec![]),
        external_path: None,
        first_row_id: None,
        write_cols: None,
        write_cols_sequences: None,
    }
}

/// The schema `id BIGINT (pk), v BIGINT` with `options` (a later entry of a key wins).
pub(crate) fn kv_schema(options: &[(&str, &str)]) -> TableSchema {
    let options: BTreeMap<String, String> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint())],
        vec![],
        vec!["id".into()],
        options,
        0,
    )
    .unwrap()
}

/// The schema `id BIGINT (pk), name STRING, v BIGINT` with `options` (a later entry of a key wins).
pub(crate) fn id_name_v_schema(options: &[(&str, &str)]) -> TableSchema {
    let options: BTreeMap<String, String> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("name".into(), DataType::string()), ("v".into(), DataType::bigint())],
        vec![],
        vec!["id".into()],
        options,
        0,
    )
    .unwrap()
}

/// A table `id BIGINT (pk), v BIGINT` with `buckets` buckets and extra options.
pub(crate) fn create_table(io: Arc<dyn FileIO>, path: &str, buckets: i32, extra: &[(&str, &str)]) -> Table {
    let buckets = buckets.to_string();
    let options: Vec<(&str, &str)> = [("bucket", buckets.as_str())].into_iter().chain(extra.iter().copied()).collect();
    Table::create(io, path, kv_schema(&options)).unwrap()
}

/// The rows of the latest snapshot of an `id BIGINT, v BIGINT` table, by key; each key read once.
pub(crate) fn kv_rows(t: &Table) -> BTreeMap<i64, i64> {
    unique_kv(&strata::ReadBuilder::new(t).read().unwrap().batches)
}

/// The (id, v) rows of batches of `id BIGINT, v BIGINT`, in order.
pub(crate) fn kv_pairs(batches: &[RecordBatch]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for b in batches {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let vs = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        out.extend((0..b.num_rows()).map(|i| (ids.value(i), vs.value(i))));
    }
    out
}

/// The rows of batches of `id BIGINT, v BIGINT` by key; each key read once.
pub(crate) fn unique_kv(batches: &[RecordBatch]) -> BTreeMap<i64, i64> {
    let mut out = BTreeMap::new();
    for (k, v) in kv_pairs(batches) {
        assert!(out.insert(k, v).is_none(), "key {k} read twice");
    }
    out
}

/// A batch of `id BIGINT NOT NULL, v BIGINT` rows.
pub(crate) fn kv_batch(rows: &[(i64, i64)]) -> RecordBatch {
    let schema =
        Arc::new(Schema::new(vec![Field::new("id", ArrowType::Int64, false), Field::new("v", ArrowType::Int64, true)]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
    ];
    RecordBatch::try_new(schema, cols).unwrap()
}

/// A committable adding `files` to `bucket` of an unpartitioned table.
pub(crate) fn append(identifier: i64, bucket: i32, total_buckets: i32, files: Vec<DataFileMeta>) -> Committable {
    Committable {
        identifier,
        messages: vec![message(bucket, total_buckets, files, vec![], vec![])],
        ..Default::default()
    }
}

/// A message of an unpartitioned table's `bucket`: new files (the APPEND half), and files a compaction
/// replaced and produced (the COMPACT half).
pub(crate) fn message(
    bucket: i32,
    total_buckets: i32,
    new_files: Vec<DataFileMeta>,
    compact_before: Vec<DataFileMeta>,
    compact_after: Vec<DataFileMeta>,
) -> CommitMessage {
    let increment = CommitIncrement {
        data: DataIncrement { new_files, ..Default::default() },
        compact: CompactIncrement { compact_before, compact_after, ..Default::default() },
        ..Default::default()
    };
    CommitMessage::new(BinaryRow::empty(), bucket, total_buckets, increment)
}
