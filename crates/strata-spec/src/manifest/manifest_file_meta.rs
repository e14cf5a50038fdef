//! `ManifestFileMeta`: one manifest file as listed in a manifest list.
//!
//! Matches Paimon's `org.apache.paimon.manifest.ManifestFileMeta` and `ManifestFileMetaSerializer`
//! (format identifier `_VERSION` = 2).

use apache_avro::types::Value;

use crate::avro::{self, build, Record};
use crate::error::{Error, Result};
use crate::manifest::file_name::check_file_name;
use crate::manifest::stats::SimpleStats;

/// `_VERSION` written in manifest lists.
pub(crate) const MANIFEST_FILE_META_VERSION: i32 = 2;

/// One entry of a manifest list.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestFileMeta {
    /// Manifest file name (in `manifest/`).
    pub file_name: String,
    /// Its size in bytes.
    pub file_size: i64,
    /// ADD entries in it.
    pub num_added_files: i64,
    /// DELETE entries in it.
    pub num_deleted_files: i64,
    /// Min/max/null counts of the partitions it touches.
    pub partition_stats: SimpleStats,
    /// Schema id it was written with.
    pub schema_id: i64,
    /// Smallest bucket in it.
    pub min_bucket: Option<i32>,
    /// Largest bucket in it.
    pub max_bucket: Option<i32>,
    /// Smallest level in it.
    pub min_level: Option<i32>,
    /// Largest level in it.
    pub max_level: Option<i32>,
    /// Smallest row id (row tracking).
    pub min_row_id: Option<i64>,
    /// Largest row id (row tracking).
    pub max_row_id: Option<i64>,
}

impl ManifestFileMeta {
    /// The Avro record.
    pub(crate) fn to_avro(&self) -> Value {
        build::record(vec![
            ("_VERSION", Value::Int(MANIFEST_FILE_META_VERSION)),
            ("_FILE_NAME", Value::String(self.file_name.clone())),
            ("_FILE_SIZE", Value::Long(self.file_size)),
            ("_NUM_ADDED_FILES", Value::Long(self.num_added_files)),
            ("_NUM_DELETED_FILES", Value::Long(self.num_deleted_files)),
            ("_PARTITION_STATS", self.partition_stats.to_avro()),
            ("_SCHEMA_ID", Value::Long(self.schema_id)),
            ("_MIN_BUCKET", build::nullable(self.min_bucket.map(Value::Int))),
            ("_MAX_BUCKET", build::nullable(self.max_bucket.map(Value::Int))),
            ("_MIN_LEVEL", build::nullable(self.min_level.map(Value::Int))),
            ("_MAX_LEVEL", build::nullable(self.max_level.map(Value::Int))),
            ("_MIN_ROW_ID", build::nullable(self.min_row_id.map(Value::Long))),
            ("_MAX_ROW_ID", build::nullable(self.max_row_id.map(Value::Long))),
        ])
    }

    /// Reads the Avro record.
    pub(crate) fn from_avro(v: &Value) -> Result<Self> {
        let r = Record::new("ManifestFileMeta", v)?;
        let version = r.opt_int("_VERSION")?.unwrap_or(MANIFEST_FILE_META_VERSION);
        if version != MANIFEST_FILE_META_VERSION {
            return Err(Error::unsupported(format!("manifest list version {version}")));
        }
        let file_name = r.string("_FILE_NAME")?;
        check_file_name(&file_name, "manifest list _FILE_NAME")?;
        Ok(ManifestFileMeta {
            file_name,
            file_size: r.long("_FILE_SIZE")?,
            num_added_files: r.long("_NUM_ADDED_FILES")?,
            num_deleted_files: r.long("_NUM_DELETED_FILES")?,
            partition_stats: SimpleStats::from_avro(&r.record("_PARTITION_STATS", "SimpleStats")?)?,
            schema_id: r.long("_SCHEMA_ID")?,
            min_bucket: r.opt_int("_MIN_BUCKET")?,
            max_bucket: r.opt_int("_MAX_BUCKET")?,
            min_level: r.opt_int("_MIN_LEVEL")?,
            max_level: r.opt_int("_MAX_LEVEL")?,
            min_row_id: r.opt_long("_MIN_ROW_ID")?,
            max_row_id: r.opt_long("_MAX_ROW_ID")?,
        })
    }

    /// Encodes a manifest list.
    pub fn encode_file(metas: &[ManifestFileMeta], compression: &str) -> Result<Vec<u8>> {
        avro::write_container(
            &avro::manifest_file_meta_schema_json(),
            avro::codec_for(compression)?,
            metas.iter().map(ManifestFileMeta::to_avro).collect(),
        )
    }

    /// Decodes a manifest list.
    pub fn decode_file(bytes: &[u8]) -> Result<Vec<ManifestFileMeta>> {
        avro::read_container(bytes)?.iter().map(ManifestFileMeta::from_avro).collect()
    }
}
