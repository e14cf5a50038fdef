//! `ManifestEntry`: one ADD or DELETE of a data file in a manifest file.
//!
//! Matches Paimon's `org.apache.paimon.manifest.ManifestEntry` and `ManifestEntrySerializer`
//! (format identifier `_VERSION` = 2).

use apache_avro::types::Value;

use crate::avro::{self, build, Record};
use crate::binary_row::BinaryRow;
use crate::error::{Error, Result};
use crate::manifest::data_file_meta::DataFileMeta;

/// `_VERSION` written in manifest files.
pub(crate) const MANIFEST_ENTRY_VERSION: i32 = 2;

/// ADD or DELETE (`FileKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// The file becomes part of the table.
    Add,
    /// The file leaves the table.
    Delete,
}

impl FileKind {
    /// The stored byte.
    pub fn to_byte(self) -> i32 {
        match self {
            FileKind::Add => 0,
            FileKind::Delete => 1,
        }
    }

    /// From the stored byte.
    pub fn from_byte(b: i32) -> Result<Self> {
        match b {
            0 => Ok(FileKind::Add),
            1 => Ok(FileKind::Delete),
            other => Err(Error::corrupt(format!("unknown file kind {other}"))),
        }
    }
}

/// One entry of a manifest file.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestEntry {
    /// ADD or DELETE.
    pub kind: FileKind,
    /// Partition values.
    pub partition: BinaryRow,
    /// Bucket number.
    pub bucket: i32,
    /// Number of buckets the table had when the file was written.
    pub total_buckets: i32,
    /// The file.
    pub file: DataFileMeta,
}

/// Identifies a data file across ADD and DELETE entries (Paimon's `FileEntry.Identifier`, simplified to the
/// fields that make a file unique: partition, bucket, level, file name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileIdentifier {
    /// Serialized partition row.
    pub partition: Vec<u8>,
    /// Bucket.
    pub bucket: i32,
    /// Level.
    pub level: i32,
    /// File name.
    pub file_name: String,
}

impl ManifestEntry {
    /// The key under which ADD and DELETE entries of one file cancel out.
    pub fn identifier(&self) -> FileIdentifier {
        FileIdentifier {
            partition: self.partition.serialize(),
            bucket: self.bucket,
            level: self.file.level,
            file_name: self.file.file_name.clone(),
        }
    }

    /// The Avro record.
    pub(crate) fn to_avro(&self) -> Value {
        build::record(vec![
            ("_VERSION", Value::Int(MANIFEST_ENTRY_VERSION)),
            ("_KIND", Value::Int(self.kind.to_byte())),
            ("_PARTITION", Value::Bytes(self.partition.serialize())),
            ("_BUCKET", Value::Int(self.bucket)),
            ("_TOTAL_BUCKETS", Value::Int(self.total_buckets)),
            ("_FILE", self.file.to_avro()),
        ])
    }

    /// Reads the Avro record.
    pub(crate) fn from_avro(v: &Value) -> Result<Self> {
        let r = Record::new("ManifestEntry", v)?;
        let version = r.opt_int("_VERSION")?.unwrap_or(MANIFEST_ENTRY_VERSION);
        if version != MANIFEST_ENTRY_VERSION {
            return Err(Error::unsupported(format!("manifest entry version {version}")));
        }
        Ok(ManifestEntry {
            kind: FileKind::from_byte(r.int("_KIND")?)?,
            partition: BinaryRow::deserialize(&r.bytes("_PARTITION")?)?,
            bucket: r.int("_BUCKET")?,
            total_buckets: r.int("_TOTAL_BUCKETS")?,
            file: DataFileMeta::from_avro(&r.record("_FILE", "DataFileMeta")?)?,
        })
    }

    /// Encodes a manifest file.
    pub fn encode_file(entries: &[ManifestEntry], compression: &str) -> Result<Vec<u8>> {
        avro::write_container(
            &avro::manifest_entry_schema_json(),
            avro::codec_for(compression)?,
            entries.iter().map(ManifestEntry::to_avro).collect(),
        )
    }

    /// Decodes a manifest file.
    pub fn decode_file(bytes: &[u8]) -> Result<Vec<ManifestEntry>> {
        avro::read_container(bytes)?.iter().map(ManifestEntry::from_avro).collect()
    }
}
