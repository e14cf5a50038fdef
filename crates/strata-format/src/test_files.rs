//! What the writer's and the checksummed sink's unit tests share: an `id BIGINT` key, `s STRING` table's
//! layout, its rows in file layout, and a writer configuration.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch, StringArray};
use strata_spec::{DataType, FileSource, TableSchema};

use crate::layout::kv::KeyValueLayout;
use crate::write::writer::{FileFormat, WriterConfig};

/// The layout of `id BIGINT` (the key), `s STRING`.
pub(crate) fn layout() -> Arc<KeyValueLayout> {
    let fields = vec![("id".into(), DataType::bigint()), ("s".into(), DataType::string())];
    let schema = TableSchema::new(fields, vec![], vec!["id".into()], Default::default(), 0).unwrap();
    Arc::new(KeyValueLayout::new(&schema).unwrap())
}

/// Keys `0..n` (sequence numbers alike, all inserts) with `s` from `strings`, in file layout.
pub(crate) fn rows(layout: &KeyValueLayout, n: i64, strings: impl Fn(i64) -> String) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(Int8Array::from(vec![0i8; n as usize])),
        Arc::new(Int64Array::from_iter_values(0..n)),
        Arc::new(StringArray::from_iter_values((0..n).map(strings))),
    ];
    RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap()
}

/// Parquet, zstd, one file per writer, compaction output at level 1.
pub(crate) fn config() -> WriterConfig {
    WriterConfig {
        format: FileFormat::Parquet,
        compression: "zstd".into(),
        target_file_size: 1 << 30,
        schema_id: 0,
        level: 1,
        file_source: FileSource::Compact,
    }
}
