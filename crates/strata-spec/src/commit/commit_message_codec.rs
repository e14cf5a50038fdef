//! Commit messages as bytes (Paimon's `CommitMessageSerializer`): what a writer or compactor in one process
//! hands to the one committer in another, so that the buckets of a table can be written or compacted on many
//! machines and committed once.
//!
//! The form: an 8-byte magic (`STRATACM`), the format version (u32, little-endian), the CRC-32 of the rest
//! (u32, little-endian), then an Avro container file of one record per message. Data files are the
//! `record__FILE` records of Paimon's manifest entries and index files the index-manifest fields, so every
//! name is checked as it is decoded exactly as a manifest's are. Bytes travel through queues, object
//! stores and task results: a flipped byte is a corrupt error, never a message that commits something else.

use apache_avro::types::Value;

use crate::avro::{self, build, Record};
use crate::binary_row::BinaryRow;
use crate::commit::commit_increment::{CommitIncrement, CompactIncrement, DataIncrement, DvIndexBase};
use crate::commit::commit_message::CommitMessage;
use crate::error::{Error, Result};
use crate::index::index_file_meta::IndexFileMeta;
use crate::manifest::data_file_meta::DataFileMeta;
use crate::manifest::file_name::check_file_name;

/// The version of the serialized form this build writes and reads.
pub const COMMIT_MESSAGES_VERSION: u32 = 1;

const MAGIC: &[u8; 8] = b"STRATACM";
const HEADER_LEN: usize = 16;

/// The Avro schema of one message.
fn message_schema_json() -> String {
    let files = |name: &str| format!(r#"{{"name":"{name}","type":{{"type":"array","items":"record__FILE"}}}}"#);
    let indexes = |name: &str| format!(r#"{{"name":"{name}","type":{{"type":"array","items":"record__INDEX"}}}}"#);
    format!(
        r#"{{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{{"name":"_VERSION","type":"int"}},{{"name":"_PARTITION","type":"bytes"}},{{"name":"_BUCKET","type":"int"}},{{"name":"_TOTAL_BUCKETS","type":"int"}},{{"name":"_NEW_FILES","type":{{"type":"array","items":{file}}}}},{changelog},{{"name":"_NEW_INDEX_FILES","type":{{"type":"array","items":{{"type":"record","name":"record__INDEX","fields":[{index}]}}}}}},{deleted_index},{before},{after},{compact_changelog},{compact_new_index},{compact_deleted_index},{{"name":"_DV_INDEX_BASE_KIND","type":"int"}},{{"name":"_DV_INDEX_BASE_FILE","type":["null","string"],"default":null}},{{"name":"_FIRST_NEW_SEQUENCE","type":["null","long"],"default":null}},{{"name":"_EXPECTED_HASH_INDEX","type":["null",{{"type":"array","items":{{"type":"record","name":"record__HASH_INDEX","fields":[{{"name":"_BUCKET","type":"int"}},{{"name":"_FILE_NAME","type":"string"}}]}}}}],"default":null}},{{"name":"_DELETED_FILES","type":{{"type":"array","items":"record__FILE"}},"default":[]}}]}}"#,
        file = avro::data_file_schema_json(),
        index = avro::INDEX_FILE_FIELDS,
        changelog = files("_CHANGELOG_FILES"),
        deleted_index = indexes("_DELETED_INDEX_FILES"),
        before = files("_COMPACT_BEFORE"),
        after = files("_COMPACT_AFTER"),
        compact_changelog = files("_COMPACT_CHANGELOG_FILES"),
        compact_new_index = indexes("_COMPACT_NEW_INDEX_FILES"),
        compact_deleted_index = indexes("_COMPACT_DELETED_INDEX_FILES"),
    )
}

fn file_list(files: &[DataFileMeta]) -> Value {
    Value::Array(files.iter().map(DataFileMeta::to_avro).collect())
}

fn index_list(files: &[IndexFileMeta]) -> Value {
    Value::Array(files.iter().map(|f| build::record(f.avro_fields())).collect())
}

fn to_avro(m: &CommitMessage) -> Value {
    let (data, compact) = (&m.increment.data, &m.increment.compact);
    let (base_kind, base_file) = match &m.increment.dv_index_base {
        DvIndexBase::Unchecked => (0, None),
        DvIndexBase::NoFile => (1, None),
        DvIndexBase::File(name) => (2, Some(Value::String(name.clone()))),
        // Plain file names hold no '/', so the list is joined by it.
        DvIndexBase::Files(names) => (3, Some(Value::String(names.join("/")))),
    };
    let hash = m.expected_hash_index.as_ref().map(|listing| {
        Value::Array(
            listing
                .iter()
                .map(|(b, name)| {
                    build::record(vec![("_BUCKET", Value::Int(*b)), ("_FILE_NAME", Value::String(name.clone()))])
                })
                .collect(),
        )
    });
    build::record(vec![
        ("_VERSION", Value::Int(COMMIT_MESSAGES_VERSION as i32)),
        ("_PARTITION", Value::Bytes(m.partition.serialize())),
        ("_BUCKET", Value::Int(m.bucket)),
        ("_TOTAL_BUCKETS", Value::Int(m.total_buckets)),
        ("_NEW_FILES", file_list(&data.new_files)),
        ("_CHANGELOG_FILES", file_list(&data.changelog_files)),
        ("_NEW_INDEX_FILES", index_list(&data.new_index_files)),
        ("_DELETED_INDEX_FILES", index_list(&data.deleted_index_files)),
        ("_COMPACT_BEFORE", file_list(&compact.compact_before)),
        ("_COMPACT_AFTER", file_list(&compact.compact_after)),
        ("_COMPACT_CHANGELOG_FILES", file_list(&compact.changelog_files)),
        ("_COMPACT_NEW_INDEX_FILES", index_list(&compact.new_index_files)),
        ("_COMPACT_DELETED_INDEX_FILES", index_list(&compact.deleted_index_files)),
        ("_DV_INDEX_BASE_KIND", Value::Int(base_kind)),
        ("_DV_INDEX_BASE_FILE", build::nullable(base_file)),
        ("_FIRST_NEW_SEQUENCE", build::nullable(m.increment.first_new_sequence.map(Value::Long))),
        ("_EXPECTED_HASH_INDEX", build::nullable(hash)),
        ("_DELETED_FILES", file_list(&data.deleted_files)),
    ])
}

fn files_of(r: &Record<'_>, name: &str) -> Result<Vec<DataFileMeta>> {
    r.opt_array(name)?
        .unwrap_or_default()
        .into_iter()
        .map(|v| DataFileMeta::from_avro(&Record::new("DataFileMeta", v)?))
        .collect()
}

fn indexes_of(r: &Record<'_>, name: &str) -> Result<Vec<IndexFileMeta>> {
    r.opt_array(name)?
        .unwrap_or_default()
        .into_iter()
        .map(|v| IndexFileMeta::from_record(&Record::new("IndexFileMeta", v)?))
        .collect()
}

fn from_avro(v: &Value) -> Result<CommitMessage> {
    let r = Record::new("CommitMessage", v)?;
    let version = r.int("_VERSION")?;
    if version != COMMIT_MESSAGES_VERSION as i32 {
        return Err(Error::unsupported(format!("commit message version {version}")));
    }
    let dv_index_base = match (r.int("_DV_INDEX_BASE_KIND")?, r.opt_string("_DV_INDEX_BASE_FILE")?) {
        (0, None) => DvIndexBase::Unchecked,
        (1, None) => DvIndexBase::NoFile,
        (2, Some(name)) => {
            check_file_name(&name, "commit message _DV_INDEX_BASE_FILE")?;
            DvIndexBase::File(name)
        }
        (3, Some(joined)) => {
            let names: Vec<&str> = joined.split('/').collect();
            for name in &names {
                check_file_name(name, "commit message _DV_INDEX_BASE_FILE")?;
            }
            match DvIndexBase::of_files(names) {
                DvIndexBase::Files(names) => DvIndexBase::Files(names),
                _ => return Err(Error::corrupt("commit message: a _DV_INDEX_BASE_FILE list of fewer than two")),
            }
        }
        (kind, _) => return Err(Error::corrupt(format!("commit message: bad _DV_INDEX_BASE_KIND {kind}"))),
    };
    let expected_hash_index = match r.opt_array("_EXPECTED_HASH_INDEX")? {
        None => None,
        Some(items) => Some(
            items
                .into_iter()
                .map(|v| {
                    let h = Record::new("HashIndexListing", v)?;
                    let name = h.string("_FILE_NAME")?;
                    check_file_name(&name, "commit message _EXPECTED_HASH_INDEX")?;
                    Ok((h.int("_BUCKET")?, name))
                })
                .collect::<Result<Vec<_>>>()?,
        ),
    };
    let increment = CommitIncrement {
        data: DataIncrement {
            new_files: files_of(&r, "_NEW_FILES")?,
            changelog_files: files_of(&r, "_CHANGELOG_FILES")?,
            new_index_files: indexes_of(&r, "_NEW_INDEX_FILES")?,
            deleted_index_files: indexes_of(&r, "_DELETED_INDEX_FILES")?,
            // Absent from messages of builds before row-level rewrites.
            deleted_files: files_of(&r, "_DELETED_FILES")?,
        },
        compact: CompactIncrement {
            compact_before: files_of(&r, "_COMPACT_BEFORE")?,
            compact_after: files_of(&r, "_COMPACT_AFTER")?,
            changelog_files: files_of(&r, "_COMPACT_CHANGELOG_FILES")?,
            new_index_files: indexes_of(&r, "_COMPACT_NEW_INDEX_FILES")?,
            deleted_index_files: indexes_of(&r, "_COMPACT_DELETED_INDEX_FILES")?,
        },
        dv_index_base,
        first_new_sequence: r.opt_long("_FIRST_NEW_SEQUENCE")?,
    };
    Ok(CommitMessage {
        partition: BinaryRow::deserialize(&r.bytes("_PARTITION")?)?,
        bucket: r.int("_BUCKET")?,
        total_buckets: r.int("_TOTAL_BUCKETS")?,
        increment,
        expected_hash_index,
    })
}

/// Serializes `messages` (see the module doc for the form).
pub fn encode_commit_messages(messages: &[CommitMessage]) -> Result<Vec<u8>> {
    let container = avro::write_container(
        &message_schema_json(),
        apache_avro::Codec::Null,
        messages.iter().map(to_avro).collect(),
    )?;
    let mut out = Vec::with_capacity(HEADER_LEN + container.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&COMMIT_MESSAGES_VERSION.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&container).to_le_bytes());
    out.extend_from_slice(&container);
    Ok(out)
}

/// Reads messages serialized by [`encode_commit_messages`]: a wrong magic, a checksum mismatch or a malformed
/// record is a corrupt error, another version an unsupported one.
pub fn decode_commit_messages(bytes: &[u8]) -> Result<Vec<CommitMessage>> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(Error::corrupt("commit messages: not Strata's serialized commit messages (bad magic)"));
    }
    let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version != COMMIT_MESSAGES_VERSION {
        return Err(Error::unsupported(format!(
            "commit messages of format version {version} (this build reads version {COMMIT_MESSAGES_VERSION})"
        )));
    }
    let container = &bytes[HEADER_LEN..];
    if crc32fast::hash(container) != word(12) {
        return Err(Error::corrupt("commit messages: checksum mismatch"));
    }
    avro::read_container(container)?.iter().map(from_avro).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{DataType, Datum, DeletionVectorMeta, ErrorKind, FileSource, SimpleStats};

    fn file(name: &str, level: i32) -> DataFileMeta {
        let key = BinaryRow::from_datums(&[Some(Datum::BigInt(7))], &[DataType::bigint()]).unwrap();
        DataFileMeta {
            file_name: name.into(),
            file_size: 1234,
            row_count: 10,
            min_key: key.clone(),
            max_key: key,
            key_stats: SimpleStats::empty(),
            value_stats: SimpleStats::empty(),
            min_sequence_number: 3,
            max_sequence_number: 12,
            schema_id: 0,
            level,
            extra_files: vec![],
            creation_time: Some(1_700_000_000_000),
            delete_row_count: Some(2),
            embedded_index: None,
            file_source: Some(FileSource::Compact.to_byte()),
            value_stats_cols: Some(vec![]),
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        }
    }

    fn index(name: &str) -> IndexFileMeta {
        IndexFileMeta {
            index_type: crate::DELETION_VECTORS_INDEX.into(),
            file_name: name.into(),
            file_size: 99,
            row_count: 1,
            dv_ranges: Some(vec![DeletionVectorMeta {
                data_file_name: "data-a-0.parquet".into(),
                offset: 1,
                length: 20,
                cardinality: Some(3),
            }]),
            external_path: None,
            global_index: None,
        }
    }

    fn message() -> CommitMessage {
        let partition = BinaryRow::from_datums(&[Some(Datum::String("p1".into()))], &[DataType::string()]).unwrap();
        CommitMessage {
            partition,
            bucket: 3,
            total_buckets: 4,
            increment: CommitIncrement {
                data: DataIncrement {
                    new_files: vec![file("data-n-0.parquet", 0)],
                    changelog_files: vec![file("changelog-c-0.parquet", 0)],
                    new_index_files: vec![],
                    deleted_index_files: vec![],
                    deleted_files: vec![file("data-replaced-0.parquet", 0)],
                },
                compact: CompactIncrement {
                    compact_before: vec![file("data-n-0.parquet", 0), file("data-old-0.parquet", 5)],
                    compact_after: vec![file("data-new-0.parquet", 5)],
                    changelog_files: vec![],
                    new_index_files: vec![index("index-new-0")],
                    deleted_index_files: vec![index("index-old-0")],
                },
                dv_index_base: DvIndexBase::File("index-old-0".into()),
                first_new_sequence: Some(13),
            },
            expected_hash_index: Some(vec![(0, "index-h-0".into())]),
        }
    }

    #[test]
    fn messages_round_trip() {
        let mut other = message();
        other.increment.dv_index_base = DvIndexBase::NoFile;
        other.expected_hash_index = None;
        other.increment.first_new_sequence = None;
        let mut several = message();
        several.increment.dv_index_base = DvIndexBase::of_files(["index-b-1", "index-a-0"]);
        assert!(matches!(several.increment.dv_index_base, DvIndexBase::Files(_)));
        let messages = vec![message(), other, several, CommitMessage::default()];
        let bytes = encode_commit_messages(&messages).unwrap();
        assert_eq!(decode_commit_messages(&bytes).unwrap(), messages);
        assert_eq!(decode_commit_messages(&encode_commit_messages(&[]).unwrap()).unwrap(), vec![]);
    }

    #[test]
    fn every_flipped_byte_is_an_error() {
        let bytes = encode_commit_messages(&[message()]).unwrap();
        for at in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            let e = decode_commit_messages(&bad).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::Unsupported), "byte {at}: {e}");
        }
        for len in [0, 7, 15, bytes.len() - 1] {
            assert_eq!(decode_commit_messages(&bytes[..len]).unwrap_err().kind(), ErrorKind::Corrupt);
        }
    }

    /// A crafted message has a valid checksum: every byte of the Avro part changed (and the checksum made to
    /// match) decodes or errors, never panics.
    #[test]
    fn crafted_payloads_with_valid_checksums_never_panic() {
        let bytes = encode_commit_messages(&[message()]).unwrap();
        for at in HEADER_LEN..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                let crc = crc32fast::hash(&bad[HEADER_LEN..]).to_le_bytes();
                bad[12..16].copy_from_slice(&crc);
                let _ = decode_commit_messages(&bad);
            }
        }
    }

    #[test]
    fn a_file_name_that_leaves_its_directory_is_refused() {
        let mut m = message();
        m.increment.compact.compact_before[0].file_name = "../../victim.parquet".into();
        let bytes = encode_commit_messages(&[m]).unwrap();
        assert_eq!(decode_commit_messages(&bytes).unwrap_err().kind(), ErrorKind::Corrupt);
    }
}
