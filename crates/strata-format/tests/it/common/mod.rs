//! What the merge and read tests share: a three-column table (`id` key, `v` BIGINT, `s` STRING), its
//! records as file-layout batches, and a writer configuration.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch, StringArray};
use strata_format::{FileFormat, KeyValueLayout, WriterConfig};
use strata_spec::{DataType, FileSource, TableSchema};

/// One record of the table: its key, sequence number, row kind and values.
#[derive(Debug, Clone)]
pub(crate) struct Rec {
    pub(crate) key: i64,
    pub(crate) seq: i64,
    pub(crate) kind: i8,
    pub(crate) v: Option<i64>,
    pub(crate) s: Option<String>,
}

/// The table's file layout.
pub(crate) fn layout() -> Arc<KeyValueLayout> {
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("v".into(), DataType::bigint()), ("s".into(), DataType::string())],
        vec![],
        vec!["id".into()],
        Default::default(),
        0,
    )
    .unwrap();
    Arc::new(KeyValueLayout::new(&schema).unwrap())
}

/// `recs` as one batch in file layout.
pub(crate) fn batch(layout: &KeyValueLayout, recs: &[Rec]) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.key))),
        Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.seq))),
        Arc::new(Int8Array::from_iter_values(recs.iter().map(|r| r.kind))),
        Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.key))),
        Arc::new(Int64Array::from(recs.iter().map(|r| r.v).collect::<Vec<_>>())),
        Arc::new(StringArray::from(recs.iter().map(|r| r.s.clone()).collect::<Vec<_>>())),
    ];
    RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap()
}

/// Parquet files, zstd, one file per writer, compaction output at `level`.
pub(crate) fn writer_config(level: i32) -> WriterConfig {
    WriterConfig {
        format: FileFormat::Parquet,
        compression: "zstd".into(),
        target_file_size: 1 << 30,
        schema_id: 0,
        level,
        file_source: FileSource::Compact,
    }
}
