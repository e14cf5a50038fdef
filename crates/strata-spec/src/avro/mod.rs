//! Avro container files for Paimon's manifests, manifest lists and index manifests.
//!
//! Schemas are the ones Java Paimon writes (`AvroSchemaConverter` over the manifest row types, top-level
//! record `org.apache.paimon.avro.generated.record`, nested records named `record_<FIELD>`, nullable
//! fields as `["null", T]` with default null). Values are read by field name, so files written by
//! pypaimon (same field names, different record names) decode too.

pub(crate) mod container_crc;

use apache_avro::types::Value;
use apache_avro::{Codec, Reader, Schema, Writer};

use crate::error::{Error, Result};

const SIMPLE_STATS_FIELDS: &str = r#"[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]"#;

fn simple_stats(name: &str) -> String {
    format!(r#"{{"type":"record","name":"{name}","fields":{SIMPLE_STATS_FIELDS}}}"#)
}

/// The schema of a manifest file (`ManifestEntry` rows, `_VERSION` 2).
pub(crate) fn manifest_entry_schema_json() -> String {
    format!(
        r#"{{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{{"name":"_VERSION","type":"int"}},{{"name":"_KIND","type":"int"}},{{"name":"_PARTITION","type":"bytes"}},{{"name":"_BUCKET","type":"int"}},{{"name":"_TOTAL_BUCKETS","type":"int"}},{{"name":"_FILE","type":{file}}}]}}"#,
        file = data_file_schema_json(),
    )
}

/// The record of one data file (`DataFileMeta`), named `record__FILE` as inside a manifest entry.
pub(crate) fn data_file_schema_json() -> String {
    format!(
        r#"{{"type":"record","name":"record__FILE","fields":[{{"name":"_FILE_NAME","type":"string"}},{{"name":"_FILE_SIZE","type":"long"}},{{"name":"_ROW_COUNT","type":"long"}},{{"name":"_MIN_KEY","type":"bytes"}},{{"name":"_MAX_KEY","type":"bytes"}},{{"name":"_KEY_STATS","type":{ks}}},{{"name":"_VALUE_STATS","type":{vs}}},{{"name":"_MIN_SEQUENCE_NUMBER","type":"long"}},{{"name":"_MAX_SEQUENCE_NUMBER","type":"long"}},{{"name":"_SCHEMA_ID","type":"long"}},{{"name":"_LEVEL","type":"int"}},{{"name":"_EXTRA_FILES","type":{{"type":"array","items":"string"}}}},{{"name":"_CREATION_TIME","type":["null",{{"type":"long","logicalType":"timestamp-millis"}}],"default":null}},{{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null}},{{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null}},{{"name":"_FILE_SOURCE","type":["null","int"],"default":null}},{{"name":"_VALUE_STATS_COLS","type":["null",{{"type":"array","items":"string"}}],"default":null}},{{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null}},{{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null}},{{"name":"_WRITE_COLS","type":["null",{{"type":"array","items":"string"}}],"default":null}},{{"name":"_WRITE_COLS_SEQUENCES","type":["null",{{"type":"array","items":"long"}}],"default":null}}]}}"#,
        ks = simple_stats("record__FILE__KEY_STATS"),
        vs = simple_stats("record__FILE__VALUE_STATS"),
    )
}

/// The schema of a manifest list (`ManifestFileMeta` rows, `_VERSION` 2).
pub(crate) fn manifest_file_meta_schema_json() -> String {
    format!(
        r#"{{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{{"name":"_VERSION","type":"int"}},{{"name":"_FILE_NAME","type":"string"}},{{"name":"_FILE_SIZE","type":"long"}},{{"name":"_NUM_ADDED_FILES","type":"long"}},{{"name":"_NUM_DELETED_FILES","type":"long"}},{{"name":"_PARTITION_STATS","type":{ps}}},{{"name":"_SCHEMA_ID","type":"long"}},{{"name":"_MIN_BUCKET","type":["null","int"],"default":null}},{{"name":"_MAX_BUCKET","type":["null","int"],"default":null}},{{"name":"_MIN_LEVEL","type":["null","int"],"default":null}},{{"name":"_MAX_LEVEL","type":["null","int"],"default":null}},{{"name":"_MIN_ROW_ID","type":["null","long"],"default":null}},{{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}}]}}"#,
        ps = simple_stats("record__PARTITION_STATS"),
    )
}

/// The schema of an index manifest (`IndexManifestEntry` rows, `_VERSION` 1).
pub(crate) fn index_manifest_entry_schema_json() -> String {
    format!(
        r#"{{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{{"name":"_VERSION","type":"int"}},{{"name":"_KIND","type":"int"}},{{"name":"_PARTITION","type":"bytes"}},{{"name":"_BUCKET","type":"int"}},{INDEX_FILE_FIELDS}]}}"#
    )
}

/// The fields of one index file (`IndexFileMeta`) as they stand in an index manifest entry.
pub(crate) const INDEX_FILE_FIELDS: &str = r#"{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDEX_FIELD_ID","type":"int"},{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},{"name":"_INDEX_META","type":["null","bytes"],"default":null},{"name":"_SOURCE_META","type":["null","bytes"],"default":null}]}],"default":null}"#;

fn avro_err(context: &str, e: apache_avro::Error) -> Error {
    Error::corrupt(format!("{context}: {e}"))
}

/// Maps Paimon's `manifest.compression` to an Avro codec (zstd at level 1, as Paimon).
pub(crate) fn codec_for(compression: &str) -> Result<Codec> {
    match compression.to_ascii_lowercase().as_str() {
        "zstd" | "zstandard" => Ok(Codec::Zstandard(apache_avro::ZstandardSettings::new(1))),
        "snappy" => Ok(Codec::Snappy),
        "deflate" => Ok(Codec::Deflate(apache_avro::DeflateSettings::default())),
        "null" | "none" => Ok(Codec::Null),
        other => Err(Error::invalid("option 'manifest.compression'", format!("unsupported codec '{other}'"))),
    }
}

/// Writes `records` into an Avro container file with `schema_json` and `codec`, its whole-file checksum in
/// its header ([`crate::avro::container_crc`]).
pub(crate) fn write_container(schema_json: &str, codec: Codec, records: Vec<Value>) -> Result<Vec<u8>> {
    let schema = Schema::parse_str(schema_json).map_err(|e| Error::internal_from("avro schema", e))?;
    let mut writer =
        Writer::builder().schema(&schema).writer(Vec::new()).codec(codec).marker(container_crc::marker()).build();
    writer
        .add_user_metadata(container_crc::CRC_KEY.to_string(), container_crc::PLACEHOLDER)
        .map_err(|e| Error::internal_from("manifest", e))?;
    for r in records {
        writer.append(r).map_err(|e| Error::invalid("manifest record", format!("does not match its schema: {e}")))?;
    }
    let mut bytes = writer.into_inner().map_err(|e| Error::internal_from("manifest", e))?;
    container_crc::seal(&mut bytes)?;
    Ok(bytes)
}

/// The largest length apache-avro may take from a file before allocating: a count of array or map items, or a
/// byte length. apache-avro reserves `count` elements at once, and an element is tens of bytes, so a corrupt
/// count near its 512 MiB default would reserve tens of gigabytes and abort the process (found by the
/// `manifest_decode` fuzz target). Paimon writers emit blocks of 16-64 KB and counts of at most a few
/// thousand, so 8 MiB is far above anything real.
pub(crate) const MAX_AVRO_ALLOCATION: usize = 8 << 20;

/// Reads every record of an Avro container file.
///
/// apache-avro trusts the schema in a file's header: some malformed headers (a record type named
/// `(ecord`, say) make it panic instead of returning an error. Stored bytes are not the program's to
/// crash on, so a panic inside the library is contained here and reported as a corrupt file.
pub(crate) fn read_container(bytes: &[u8]) -> Result<Vec<Value>> {
    apache_avro::util::max_allocation_bytes(MAX_AVRO_ALLOCATION);
    container_crc::verify(bytes)?;
    crate::error::contain_panic("avro container", || {
        let reader = Reader::new(bytes).map_err(|e| avro_err("avro header", e))?;
        reader.map(|r| r.map_err(|e| avro_err("avro record", e))).collect()
    })
}

/// A decoded Avro record, looked up by field name.
pub(crate) struct Record<'a> {
    what: &'static str,
    fields: &'a [(String, Value)],
}

fn unwrap_union(v: &Value) -> &Value {
    match v {
        Value::Union(_, inner) => inner,
        other => other,
    }
}

impl<'a> Record<'a> {
    /// Views `v` as a record of kind `what` (named in errors).
    pub(crate) fn new(what: &'static str, v: &'a Value) -> Result<Self> {
        match unwrap_union(v) {
            Value::Record(fields) => Ok(Record { what, fields }),
            other => Err(Error::corrupt(format!("{what}: expected a record, found {}", kind_of(other)))),
        }
    }

    fn raw(&self, name: &str) -> Option<&'a Value> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| unwrap_union(v)).filter(|v| !matches!(v, Value::Null))
    }

    fn missing(&self, name: &str) -> Error {
        Error::corrupt(format!("{}: field {name} is missing or null", self.what))
    }

    fn wrong(&self, name: &str, want: &str, v: &Value) -> Error {
        Error::corrupt(format!("{}: field {name} should be {want}, found {}", self.what, kind_of(v)))
    }

    /// A nullable long (also accepts int and timestamp logical types).
    pub(crate) fn opt_long(&self, name: &str) -> Result<Option<i64>> {
        match self.raw(name) {
            None => Ok(None),
            Some(
                Value::Long(v) | Value::TimestampMillis(v) | Value::LocalTimestampMillis(v) | Value::TimestampMicros(v),
            ) => Ok(Some(*v)),
            Some(Value::Int(v)) => Ok(Some(i64::from(*v))),
            Some(other) => Err(self.wrong(name, "a long", other)),
        }
    }

    /// A required long.
    pub(crate) fn long(&self, name: &str) -> Result<i64> {
        self.opt_long(name)?.ok_or_else(|| self.missing(name))
    }

    /// A nullable int.
    pub(crate) fn opt_int(&self, name: &str) -> Result<Option<i32>> {
        match self.raw(name) {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(*v)),
            Some(Value::Long(v)) => {
                i32::try_from(*v).map(Some).map_err(|_| self.wrong(name, "an int", &Value::Long(*v)))
            }
            Some(other) => Err(self.wrong(name, "an int", other)),
        }
    }

    /// A required int.
    pub(crate) fn int(&self, name: &str) -> Result<i32> {
        self.opt_int(name)?.ok_or_else(|| self.missing(name))
    }

    /// A nullable string.
    pub(crate) fn opt_string(&self, name: &str) -> Result<Option<String>> {
        match self.raw(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Bytes(b)) => {
                String::from_utf8(b.clone()).map(Some).map_err(|_| self.wrong(name, "UTF-8", &Value::Null))
            }
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    /// A required string.
    pub(crate) fn string(&self, name: &str) -> Result<String> {
        self.opt_string(name)?.ok_or_else(|| self.missing(name))
    }

    /// Nullable bytes.
    pub(crate) fn opt_bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        match self.raw(name) {
            None => Ok(None),
            Some(Value::Bytes(b) | Value::Fixed(_, b)) => Ok(Some(b.clone())),
            Some(other) => Err(self.wrong(name, "bytes", other)),
        }
    }

    /// Required bytes.
    pub(crate) fn bytes(&self, name: &str) -> Result<Vec<u8>> {
        self.opt_bytes(name)?.ok_or_else(|| self.missing(name))
    }

    /// A nullable array (elements unwrapped from their unions, nulls kept as `Value::Null`).
    pub(crate) fn opt_array(&self, name: &str) -> Result<Option<Vec<&'a Value>>> {
        match self.raw(name) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items.iter().map(unwrap_union).collect())),
            Some(other) => Err(self.wrong(name, "an array", other)),
        }
    }

    /// A nullable array of strings.
    pub(crate) fn opt_string_array(&self, name: &str) -> Result<Option<Vec<String>>> {
        self.opt_array(name)?
            .map(|items| {
                items
                    .into_iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s.clone()),
                        other => Err(self.wrong(name, "an array of strings", other)),
                    })
                    .collect()
            })
            .transpose()
    }

    /// A nullable array of nullable longs.
    pub(crate) fn opt_long_array(&self, name: &str) -> Result<Option<Vec<Option<i64>>>> {
        self.opt_array(name)?
            .map(|items| {
                items
                    .into_iter()
                    .map(|v| match v {
                        Value::Null => Ok(None),
                        Value::Long(x) => Ok(Some(*x)),
                        Value::Int(x) => Ok(Some(i64::from(*x))),
                        other => Err(self.wrong(name, "an array of longs", other)),
                    })
                    .collect()
            })
            .transpose()
    }

    /// A nested record, if present and not null.
    pub(crate) fn opt_record(&self, name: &str, what: &'static str) -> Result<Option<Record<'a>>> {
        self.raw(name).map(|v| Record::new(what, v)).transpose()
    }

    /// A required nested record.
    pub(crate) fn record(&self, name: &str, what: &'static str) -> Result<Record<'a>> {
        self.opt_record(name, what)?.ok_or_else(|| self.missing(name))
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Boolean(_) => "boolean",
        Value::Int(_) => "int",
        Value::Long(_) => "long",
        Value::Float(_) => "float",
        Value::Double(_) => "double",
        Value::Bytes(_) => "bytes",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        Value::Record(_) => "record",
        Value::Union(_, _) => "union",
        _ => "another type",
    }
}

/// Builders for the values written (nullable fields are unions: index 0 null, 1 value).
pub(crate) mod build {
    use apache_avro::types::Value;

    /// A nullable field.
    pub(crate) fn nullable(v: Option<Value>) -> Value {
        match v {
            None => Value::Union(0, Box::new(Value::Null)),
            Some(v) => Value::Union(1, Box::new(v)),
        }
    }

    /// A record from (name, value) pairs.
    pub(crate) fn record(fields: Vec<(&str, Value)>) -> Value {
        Value::Record(fields.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
    }

    /// An array of strings.
    pub(crate) fn strings(items: &[String]) -> Value {
        Value::Array(items.iter().map(|s| Value::String(s.clone())).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_count_in_a_corrupt_header_is_an_error_not_an_abort() {
        // Found by the manifest_decode fuzz target: the header map claims ~10^9 entries.
        let bytes = [0x4f, 0x62, 0x6a, 0x01, 0xfc, 0xff, 0xff, 0x3d, 0xff, 0x0a, 0x09, 0x0a, 0x0a, 0x5b];
        let e = read_container(&bytes).expect_err("must not decode");
        assert_eq!(e.kind(), crate::ErrorKind::Corrupt);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod header_tests {
    use crate::{ErrorKind, IndexManifestEntry, ManifestEntry, ManifestFileMeta};

    fn decode_all(bytes: &[u8]) -> [Option<ErrorKind>; 3] {
        [
            ManifestEntry::decode_file(bytes).err().map(|e| e.kind()),
            ManifestFileMeta::decode_file(bytes).err().map(|e| e.kind()),
            IndexManifestEntry::decode_file(bytes).err().map(|e| e.kind()),
        ]
    }

    fn containers() -> Vec<Vec<u8>> {
        vec![
            ManifestEntry::encode_file(&[], "zstd").unwrap(),
            ManifestFileMeta::encode_file(&[], "null").unwrap(),
            ManifestFileMeta::encode_file(
                &[ManifestFileMeta {
                    file_name: "manifest-0b7d6f56-5a4e-4f2c-9a57-0d0d6b1f0c11-0".into(),
                    file_size: 10,
                    num_added_files: 1,
                    num_deleted_files: 0,
                    partition_stats: crate::SimpleStats::empty(),
                    schema_id: 0,
                    min_bucket: Some(0),
                    max_bucket: Some(0),
                    min_level: Some(0),
                    max_level: Some(0),
                    min_row_id: None,
                    max_row_id: None,
                }],
                "null",
            )
            .unwrap(),
            IndexManifestEntry::encode_file(&[], "snappy").unwrap(),
        ]
    }

    /// The input that crashed `strata scan`, `inspect` and `compact` (exit 101): a header whose record type
    /// is named `(ecord`.
    #[test]
    fn a_misnamed_record_in_the_header_is_corrupt_not_a_panic() {
        for bytes in containers() {
            let at = bytes.windows(15).position(|w| w == b"\"name\":\"record\"").unwrap();
            let mut bad = bytes.clone();
            bad[at + 8] = b'(';
            for kind in decode_all(&bad) {
                assert_eq!(kind, Some(ErrorKind::Corrupt));
            }
        }
    }

    /// Every byte of every header, flipped two ways: an error or a decode, never a panic.
    #[test]
    fn header_byte_flips_never_panic() {
        for bytes in containers() {
            // The header ends with the 16-byte sync marker; an empty container is header and nothing else.
            for at in 0..bytes.len() {
                for flip in [0x01u8, 0xff] {
                    let mut bad = bytes.clone();
                    bad[at] ^= flip;
                    let _ = decode_all(&bad);
                }
            }
        }
    }
}
