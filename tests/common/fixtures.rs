//! Small fixtures: a table with a BIGINT key and fake data-file metadata to commit.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

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

/// A table `id BIGINT (pk), v BIGINT` with `buckets` buckets and extra options.
pub(crate) fn create_table(io: Arc<dyn FileIO>, path: &str, buckets: i32, extra: &[(&str, &str)]) -> Table {
    let mut options: BTreeMap<String, String> = BTreeMap::from([("bucket".to_string(), buckets.to_string())]);
    for (k, v) in extra {
        options.insert(k.to_string(), v.to_string());
    }
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint())],
        vec![],
        vec!["id".into()],
        options,
        0,
    )
    .unwrap();
    Table::create(io, path, schema).unwrap()
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
