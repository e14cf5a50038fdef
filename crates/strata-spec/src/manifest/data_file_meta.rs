//! `DataFileMeta`: everything a manifest records about one data file.
//!
//! Matches Paimon's `org.apache.paimon.io.DataFileMeta` (the current, 21-field schema).

use apache_avro::types::Value;

use crate::avro::{build, Record};
use crate::binary_row::BinaryRow;
use crate::error::Result;
use crate::manifest::file_name::{check_external_path, check_file_name};
use crate::manifest::stats::SimpleStats;

/// Where a data file came from (`FileSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileSource {
    /// Written from new input (a flush).
    Append,
    /// Written by a compaction.
    Compact,
}

impl FileSource {
    /// The stored byte.
    pub fn to_byte(self) -> i32 {
        match self {
            FileSource::Append => 0,
            FileSource::Compact => 1,
        }
    }

    /// From the stored byte; unknown values are kept as `None` by the caller.
    pub fn from_byte(b: i32) -> Option<Self> {
        match b {
            0 => Some(FileSource::Append),
            1 => Some(FileSource::Compact),
            _ => None,
        }
    }
}

/// Metadata of one data file.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFileMeta {
    /// File name within its bucket directory.
    pub file_name: String,
    /// Size in bytes.
    pub file_size: i64,
    /// Physical rows (all row kinds).
    pub row_count: i64,
    /// Smallest key (the trimmed primary key).
    pub min_key: BinaryRow,
    /// Largest key.
    pub max_key: BinaryRow,
    /// Stats of the key columns.
    pub key_stats: SimpleStats,
    /// Stats of the value columns (those of `value_stats_cols`, or all when that is `None`).
    pub value_stats: SimpleStats,
    /// Smallest sequence number in the file.
    pub min_sequence_number: i64,
    /// Largest sequence number in the file.
    pub max_sequence_number: i64,
    /// Schema the file was written with.
    pub schema_id: i64,
    /// LSM level (0 for fresh flushes).
    pub level: i32,
    /// Extra files that belong to this one.
    pub extra_files: Vec<String>,
    /// Creation time in epoch milliseconds (Paimon stores local wall-clock time).
    pub creation_time: Option<i64>,
    /// Rows with a retract kind (-U, -D); `None` for legacy files.
    pub delete_row_count: Option<i64>,
    /// Embedded file index bytes.
    pub embedded_index: Option<Vec<u8>>,
    /// APPEND or COMPACT, as the raw byte (unknown values kept).
    pub file_source: Option<i32>,
    /// Columns the value stats cover; `None` means all.
    pub value_stats_cols: Option<Vec<String>>,
    /// Absolute path when the file lives outside the table directory.
    pub external_path: Option<String>,
    /// First row id (row tracking).
    pub first_row_id: Option<i64>,
    /// Columns written (data evolution).
    pub write_cols: Option<Vec<String>>,
    /// Sequences of the written columns.
    pub write_cols_sequences: Option<Vec<i64>>,
}

impl DataFileMeta {
    /// Physical rows minus retract rows, when the delete count is known.
    pub fn add_row_count(&self) -> Option<i64> {
        self.delete_row_count.map(|d| self.row_count - d)
    }

    /// The Avro record.
    pub(crate) fn to_avro(&self) -> Value {
        build::record(vec![
            ("_FILE_NAME", Value::String(self.file_name.clone())),
            ("_FILE_SIZE", Value::Long(self.file_size)),
            ("_ROW_COUNT", Value::Long(self.row_count)),
            ("_MIN_KEY", Value::Bytes(self.min_key.serialize())),
            ("_MAX_KEY", Value::Bytes(self.max_key.serialize())),
            ("_KEY_STATS", self.key_stats.to_avro()),
            ("_VALUE_STATS", self.value_stats.to_avro()),
            ("_MIN_SEQUENCE_NUMBER", Value::Long(self.min_sequence_number)),
            ("_MAX_SEQUENCE_NUMBER", Value::Long(self.max_sequence_number)),
            ("_SCHEMA_ID", Value::Long(self.schema_id)),
            ("_LEVEL", Value::Int(self.level)),
            ("_EXTRA_FILES", build::strings(&self.extra_files)),
            ("_CREATION_TIME", build::nullable(self.creation_time.map(Value::TimestampMillis))),
            ("_DELETE_ROW_COUNT", build::nullable(self.delete_row_count.map(Value::Long))),
            ("_EMBEDDED_FILE_INDEX", build::nullable(self.embedded_index.clone().map(Value::Bytes))),
            ("_FILE_SOURCE", build::nullable(self.file_source.map(Value::Int))),
            ("_VALUE_STATS_COLS", build::nullable(self.value_stats_cols.as_deref().map(build::strings))),
            ("_EXTERNAL_PATH", build::nullable(self.external_path.clone().map(Value::String))),
            ("_FIRST_ROW_ID", build::nullable(self.first_row_id.map(Value::Long))),
            ("_WRITE_COLS", build::nullable(self.write_cols.as_deref().map(build::strings))),
            (
                "_WRITE_COLS_SEQUENCES",
                build::nullable(
                    self.write_cols_sequences
                        .as_ref()
                        .map(|s| Value::Array(s.iter().map(|v| Value::Long(*v)).collect())),
                ),
            ),
        ])
    }

    /// Reads the Avro record.
    pub(crate) fn from_avro(r: &Record<'_>) -> Result<Self> {
        let meta = Self::from_avro_unchecked(r)?;
        check_file_name(&meta.file_name, "_FILE_NAME")?;
        for extra in &meta.extra_files {
            check_file_name(extra, "_EXTRA_FILES")?;
        }
        if let Some(p) = &meta.external_path {
            check_external_path(p, "_EXTERNAL_PATH")?;
        }
        Ok(meta)
    }

    fn from_avro_unchecked(r: &Record<'_>) -> Result<Self> {
        Ok(DataFileMeta {
            file_name: r.string("_FILE_NAME")?,
            file_size: r.long("_FILE_SIZE")?,
            row_count: r.long("_ROW_COUNT")?,
            min_key: BinaryRow::deserialize(&r.bytes("_MIN_KEY")?)?,
            max_key: BinaryRow::deserialize(&r.bytes("_MAX_KEY")?)?,
            key_stats: SimpleStats::from_avro(&r.record("_KEY_STATS", "SimpleStats")?)?,
            value_stats: SimpleStats::from_avro(&r.record("_VALUE_STATS", "SimpleStats")?)?,
            min_sequence_number: r.long("_MIN_SEQUENCE_NUMBER")?,
            max_sequence_number: r.long("_MAX_SEQUENCE_NUMBER")?,
            schema_id: r.long("_SCHEMA_ID")?,
            level: r.int("_LEVEL")?,
            extra_files: r.opt_string_array("_EXTRA_FILES")?.unwrap_or_default(),
            creation_time: r.opt_long("_CREATION_TIME")?,
            delete_row_count: r.opt_long("_DELETE_ROW_COUNT")?,
            embedded_index: r.opt_bytes("_EMBEDDED_FILE_INDEX")?,
            file_source: r.opt_int("_FILE_SOURCE")?,
            value_stats_cols: r.opt_string_array("_VALUE_STATS_COLS")?,
            external_path: r.opt_string("_EXTERNAL_PATH")?,
            first_row_id: r.opt_long("_FIRST_ROW_ID")?,
            write_cols: r.opt_string_array("_WRITE_COLS")?,
            write_cols_sequences: r
                .opt_long_array("_WRITE_COLS_SEQUENCES")?
                .map(|v| v.into_iter().map(|x| x.unwrap_or(0)).collect()),
        })
    }
}
