//! `IndexManifestEntry`: one ADD or DELETE of an index file in an index manifest.
//!
//! Matches Paimon's `org.apache.paimon.manifest.IndexManifestEntry` and `IndexManifestEntrySerializer`
//! (format identifier `_VERSION` = 1). Unlike data manifests, an index manifest lists every live index
//! file of the snapshot, not a delta.

use apache_avro::types::Value;

use crate::avro::{self, build, Record};
use crate::binary_row::BinaryRow;
use crate::error::{Error, Result};
use crate::index::index_file_meta::IndexFileMeta;
use crate::manifest::manifest_entry::FileKind;

/// `_VERSION` written in index manifests.
pub(crate) const INDEX_MANIFEST_ENTRY_VERSION: i32 = 1;

/// One entry of an index manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexManifestEntry {
    /// ADD or DELETE.
    pub kind: FileKind,
    /// Partition values.
    pub partition: BinaryRow,
    /// Bucket.
    pub bucket: i32,
    /// The index file.
    pub index_file: IndexFileMeta,
}

impl IndexManifestEntry {
    /// The Avro record.
    pub(crate) fn to_avro(&self) -> Value {
        let mut fields = vec![
            ("_VERSION", Value::Int(INDEX_MANIFEST_ENTRY_VERSION)),
            ("_KIND", Value::Int(self.kind.to_byte())),
            ("_PARTITION", Value::Bytes(self.partition.serialize())),
            ("_BUCKET", Value::Int(self.bucket)),
        ];
        fields.extend(self.index_file.avro_fields());
        build::record(fields)
    }

    /// Reads the Avro record.
    pub(crate) fn from_avro(v: &Value) -> Result<Self> {
        let r = Record::new("IndexManifestEntry", v)?;
        let version = r.opt_int("_VERSION")?.unwrap_or(INDEX_MANIFEST_ENTRY_VERSION);
        if version != INDEX_MANIFEST_ENTRY_VERSION {
            return Err(Error::unsupported(format!("index manifest entry version {version}")));
        }
        Ok(IndexManifestEntry {
            kind: FileKind::from_byte(r.int("_KIND")?)?,
            partition: BinaryRow::deserialize(&r.bytes("_PARTITION")?)?,
            bucket: r.int("_BUCKET")?,
            index_file: IndexFileMeta::from_record(&r)?,
        })
    }

    /// Encodes an index manifest.
    pub fn encode_file(entries: &[IndexManifestEntry], compression: &str) -> Result<Vec<u8>> {
        avro::write_container(
            &avro::index_manifest_entry_schema_json(),
            avro::codec_for(compression)?,
            entries.iter().map(IndexManifestEntry::to_avro).collect(),
        )
    }

    /// Decodes an index manifest.
    pub fn decode_file(bytes: &[u8]) -> Result<Vec<IndexManifestEntry>> {
        avro::read_container(bytes)?.iter().map(IndexManifestEntry::from_avro).collect()
    }
}
