//! `Snapshot`: the JSON file `snapshot/snapshot-N` that names a table version.
//!
//! Matches Paimon's `org.apache.paimon.Snapshot` (version 3): null optional fields are omitted, fields
//! this version does not know are kept and written back.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::manifest::file_name::{check_file_name, check_opt_file_name};

/// The snapshot format version Strata writes.
pub const SNAPSHOT_VERSION: i32 = 3;

/// What a commit did (`Snapshot.CommitKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CommitKind {
    /// New files from writes.
    Append,
    /// Compaction: files replaced by others with the same rows.
    Compact,
    /// Partitions or the table replaced.
    Overwrite,
    /// Statistics only.
    Analyze,
}

impl std::fmt::Display for CommitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CommitKind::Append => "APPEND",
            CommitKind::Compact => "COMPACT",
            CommitKind::Overwrite => "OVERWRITE",
            CommitKind::Analyze => "ANALYZE",
        })
    }
}

/// One snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Format version (3).
    pub version: i32,
    /// Random id of this snapshot.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub uuid: Option<String>,
    /// Snapshot id, 1-based, consecutive.
    pub id: i64,
    /// Schema id at commit.
    pub schema_id: i64,
    /// Manifest list of all files before this commit.
    pub base_manifest_list: String,
    /// Its size.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub base_manifest_list_size: Option<i64>,
    /// Manifest list of this commit's changes.
    pub delta_manifest_list: String,
    /// Its size.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub delta_manifest_list_size: Option<i64>,
    /// Manifest list of changelog files.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub changelog_manifest_list: Option<String>,
    /// Its size.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub changelog_manifest_list_size: Option<i64>,
    /// Index manifest (full listing of live index files).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub index_manifest: Option<String>,
    /// Who committed.
    pub commit_user: String,
    /// Writer software and version.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub writer_version: Option<String>,
    /// The committer's identifier (with `commit_user`, makes commits idempotent).
    pub commit_identifier: i64,
    /// What the commit did.
    pub commit_kind: CommitKind,
    /// Commit time, epoch milliseconds.
    pub time_millis: i64,
    /// Physical rows in live files (not DV-adjusted).
    #[serde(default)]
    pub total_record_count: Option<i64>,
    /// Rows added by this commit's delta.
    #[serde(default)]
    pub delta_record_count: Option<i64>,
    /// Changelog rows.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub changelog_record_count: Option<i64>,
    /// Watermark.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub watermark: Option<i64>,
    /// Statistics file name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub statistics: Option<String>,
    /// Free-form properties.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub properties: Option<serde_json::Map<String, serde_json::Value>>,
    /// Next row id (row tracking).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next_row_id: Option<i64>,
    /// The user-level operation.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub operation: Option<String>,
    /// Fields a newer writer added, kept so they round-trip.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The keys of the snapshot JSON Strata reads (Paimon's `Snapshot` fields).
const KNOWN_KEYS: &[&str] = &[
    "version",
    "uuid",
    "id",
    "schemaId",
    "baseManifestList",
    "baseManifestListSize",
    "deltaManifestList",
    "deltaManifestListSize",
    "changelogManifestList",
    "changelogManifestListSize",
    "indexManifest",
    "commitUser",
    "writerVersion",
    "commitIdentifier",
    "commitKind",
    "timeMillis",
    "totalRecordCount",
    "deltaRecordCount",
    "changelogRecordCount",
    "watermark",
    "statistics",
    "properties",
    "nextRowId",
    "operation",
];

impl Snapshot {
    /// Parses `snapshot-N` JSON.
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        let s: Snapshot =
            serde_json::from_slice(bytes).map_err(|e| Error::corrupt(format!("malformed snapshot JSON: {e}")))?;
        if s.version > SNAPSHOT_VERSION {
            return Err(Error::unsupported(format!("snapshot version {}", s.version)));
        }
        if s.id < 1 {
            return Err(Error::corrupt(format!("snapshot id {} is below 1", s.id)));
        }
        // Optional fields missing from the JSON default to absent: a damaged key (`indexManifesu`) would
        // silently drop what it held (the deletion vectors, say). A key one edit away from a known one is
        // damage, not a newer writer's field.
        if let Some((bad, known)) =
            s.extra.keys().find_map(|k| crate::damage::damaged_form_of(k, KNOWN_KEYS).map(|known| (k.clone(), known)))
        {
            return Err(Error::corrupt(format!("snapshot key {bad:?} looks like a damaged {known:?}")));
        }
        check_file_name(&s.base_manifest_list, "baseManifestList")?;
        check_file_name(&s.delta_manifest_list, "deltaManifestList")?;
        check_opt_file_name(s.changelog_manifest_list.as_deref(), "changelogManifestList")?;
        check_opt_file_name(s.index_manifest.as_deref(), "indexManifest")?;
        check_opt_file_name(s.statistics.as_deref(), "statistics")?;
        Ok(s)
    }

    /// The JSON Strata writes (pretty, as Paimon does).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(|e| Error::internal_from("snapshot", e))
    }
}

/// Milliseconds since the Unix epoch, as snapshots, files and manifests record time (0 if the clock reads
/// before the epoch).
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod key_tests {
    use super::*;

    #[test]
    fn a_key_one_edit_from_a_known_one_is_damage() {
        let json = r#"{"version":3,"id":2,"schemaId":0,"baseManifestList":"manifest-list-a-0","deltaManifestList":"manifest-list-a-1","indexManifesu":"index-manifest-a-0","commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":1}"#;
        let e = Snapshot::from_json(json.as_bytes()).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corrupt, "{e}");
        // A newer writer's field, or a tag's, is kept.
        let json = json.replace("indexManifesu", "tagCreateTime");
        assert!(Snapshot::from_json(json.as_bytes()).is_ok());
    }
}
