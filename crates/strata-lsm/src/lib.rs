//! The per-bucket LSM merge tree with deletion vectors (Paimon PIP-16).

mod append;
mod append_pick;
mod bucket_lookup;
mod compact;
mod files;
mod flush;
mod levels;
mod lookup;
mod options;
mod write_buffer;
mod writer;

// One bucket's writer, and the options it takes from the table.
pub use append::{AppendBucket, AppendCompaction, AppendWriter};
pub use append_pick::{pack_unaware, pick_after_write, pick_full, AppendCompactOptions, FileDeletions};
pub use options::WriterOptions;
pub use writer::MergeTreeWriter;

// What a write cycle hands to the commit.
pub use strata_spec::{CommitIncrement, CompactIncrement, DataIncrement, DvIndexBase};

/// Fixtures for the crate's unit tests.
#[cfg(test)]
pub(crate) mod test_util {
    use strata_spec::{BinaryRow, DataFileMeta, DataType, SimpleStats, TableSchema};

    /// A table of `id BIGINT` (the primary key) and one `value` column named `name`, default options.
    pub(crate) fn schema(name: &str, value: DataType) -> TableSchema {
        TableSchema::new(
            vec![("id".into(), DataType::bigint()), (name.into(), value)],
            vec![],
            vec!["id".into()],
            Default::default(),
            0,
        )
        .unwrap()
    }

    /// A data file's metadata: `size` bytes, ten rows, keys from `min` to `max`.
    pub(crate) fn file_meta(name: &str, level: i32, size: i64, min: BinaryRow, max: BinaryRow) -> DataFileMeta {
        DataFileMeta {
            file_name: name.to_string(),
            file_size: size,
            row_count: 10,
            min_key: min,
            max_key: max,
            key_stats: SimpleStats::empty(),
            value_stats: SimpleStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 9,
            schema_id: 0,
            level,
            extra_files: vec![],
            creation_time: None,
            delete_row_count: Some(0),
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        }
    }
}
