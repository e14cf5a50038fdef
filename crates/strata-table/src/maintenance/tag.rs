//! Tags: named snapshots that outlive expiration (Paimon's `TagManager` and `Tag`).
//!
//! A tag is the file `tag/tag-<name>` in the table directory, holding the tagged snapshot's JSON. When a tag
//! has a retention Paimon adds two fields: `tagCreateTime`, a Java `LocalDateTime` as Jackson writes it
//! (`[year, month, day, hour, minute, second, nanos]`, trailing zero parts left out), and `tagTimeRetained`,
//! a `Duration` as decimal seconds. Without a retention it writes the plain snapshot JSON, because readers up
//! to Paimon 0.7 refuse the extra fields; Strata does the same. Reading a tag never needs `snapshot-N`: the
//! tag file is the snapshot, so a tag stays readable after expiration removed its snapshot, and expiration
//! and orphan cleanup keep every file a tag references (`maintenance`).
//!
//! Tags are written with create-if-absent, so of two creators of one name exactly one wins. Deleting a tag
//! whose snapshot has expired reclaims the files only it still held (Paimon's `TagDeletion`); see
//! [`delete_tag`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use serde::Serialize;
use serde_json::Value;
use strata_io::{join, FileIO};
use strata_spec::{Error, ErrorKind, Result, Snapshot};

use crate::maintenance::references::{delete_files, references, References};
use crate::table::Table;

/// The tag directory, under the table directory.
pub(crate) const TAG_DIR: &str = "tag";
/// Tag files are named `tag-<name>`.
pub(crate) const TAG_PREFIX: &str = "tag-";
const CREATE_TIME: &str = "tagCreateTime";
const TIME_RETAINED: &str = "tagTimeRetained";
/// `tag-<name>` must fit the usual 255-byte limit of a file name.
const MAX_NAME_BYTES: usize = 255 - TAG_PREFIX.len();

/// One tag: its name, the snapshot it pins, and Paimon's retention fields when the tag has them.
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    /// The tag's name (`tag-<name>`).
    pub name: String,
    /// The tagged snapshot, without the tag's own fields (Paimon's `Tag.trimToSnapshot`).
    pub snapshot: Snapshot,
    /// When the tag was created, in the creator's local time (Java's `LocalDateTime`); only tags with a
    /// retention record it.
    pub create_time: Option<NaiveDateTime>,
    /// How long Paimon engines keep the tag after `create_time` (Strata never expires tags itself).
    pub time_retained: Option<Duration>,
}

impl Tag {
    /// Parses a tag file's JSON. A damaged snapshot part or tag field is a corrupt error.
    pub fn from_json(name: &str, bytes: &[u8]) -> Result<Tag> {
        let mut snapshot = Snapshot::from_json(bytes)?;
        let create_time = match snapshot.extra.remove(CREATE_TIME) {
            None | Some(Value::Null) => None,
            Some(v) => Some(parse_local_date_time(&v)?),
        };
        let time_retained = match snapshot.extra.remove(TIME_RETAINED) {
            None | Some(Value::Null) => None,
            Some(v) => Some(parse_duration_seconds(&v)?),
        };
        Ok(Tag { name: name.to_string(), snapshot, create_time, time_retained })
    }

    /// The tag file's JSON: the snapshot's, plus the retention fields when there is a retention.
    pub fn to_json(&self) -> Result<String> {
        let mut s = self.snapshot.clone();
        if let Some(t) = &self.create_time {
            s.extra.insert(CREATE_TIME.into(), local_date_time_json(t));
        }
        if let Some(d) = self.time_retained {
            let secs = serde_json::Number::from_f64(d.as_secs_f64())
                .ok_or_else(|| Error::invalid("tag retention", format!("{d:?} is not a number of seconds")))?;
            s.extra.insert(TIME_RETAINED.into(), Value::Number(secs));
        }
        s.to_json()
    }
}

/// The local time now, to the microsecond, as Java's `LocalDateTime.now()` reads it on Linux (and as
/// pypaimon, whose datetimes stop at microseconds, reads a tag back).
fn local_now_micros() -> NaiveDateTime {
    let now = chrono::Local::now().naive_local();
    now.with_nanosecond(now.nanosecond() / 1000 * 1000).unwrap_or(now)
}

/// Jackson's array form of a `LocalDateTime`: seconds only when seconds or nanos are set, nanos only when set.
fn local_date_time_json(t: &NaiveDateTime) -> Value {
    let mut parts = vec![i64::from(t.year()), t.month().into(), t.day().into(), t.hour().into(), t.minute().into()];
    let nanos = t.nanosecond() % 1_000_000_000;
    if t.second() != 0 || nanos != 0 {
        parts.push(t.second().into());
        if nanos != 0 {
            parts.push(nanos.into());
        }
    }
    Value::Array(parts.into_iter().map(Value::from).collect())
}

/// Reads a `LocalDateTime` as Jackson writes it (the array form) or as an ISO string.
fn parse_local_date_time(v: &Value) -> Result<NaiveDateTime> {
    let bad = || Error::corrupt(format!("{CREATE_TIME} {v} is not a date and time"));
    if let Some(text) = v.as_str() {
        return NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
            .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M"))
            .map_err(|_| bad());
    }
    let parts: Vec<i64> =
        v.as_array().ok_or_else(bad)?.iter().map(Value::as_i64).collect::<Option<_>>().ok_or_else(bad)?;
    if !(5..=7).contains(&parts.len()) {
        return Err(bad());
    }
    let part = |i: usize| parts.get(i).copied().unwrap_or(0);
    let small = |i: usize| u32::try_from(part(i)).map_err(|_| bad());
    let year = i32::try_from(part(0)).map_err(|_| bad())?;
    NaiveDate::from_ymd_opt(year, small(1)?, small(2)?)
        .and_then(|d| d.and_hms_nano_opt(small(3).ok()?, small(4).ok()?, small(5).ok()?, small(6).ok()?))
        .ok_or_else(bad)
}

/// Reads a `Duration` as Jackson writes it: decimal seconds.
fn parse_duration_seconds(v: &Value) -> Result<Duration> {
    v.as_f64()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| Error::corrupt(format!("{TIME_RETAINED} {v} is not a non-negative number of seconds")))
}

fn name_error(name: &str, why: &str) -> Error {
    Error::invalid(format!("tag name '{}'", name.escape_debug()), why.to_string())
}

/// Checks a tag name given to look a tag up or delete it: not blank (Paimon's rule), and a plain file-name
/// part, so that `tag/tag-<name>` never leaves the tag directory whatever the caller passes.
pub(crate) fn check_tag_name(name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(name_error(name, "it is blank"));
    }
    if name == "." || name == ".." {
        return Err(name_error(name, "it is a relative directory name"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(name_error(name, &format!("it is longer than {MAX_NAME_BYTES} bytes")));
    }
    if name.contains(['/', '\\']) {
        return Err(name_error(name, "it contains a path separator"));
    }
    if name.chars().any(char::is_control) {
        return Err(name_error(name, "it contains a control character"));
    }
    Ok(())
}

/// Checks the name of a new tag: [`check_tag_name`], and no surrounding blanks, no `..`, no leading `.`, and
/// not the form of a temporary file (`<name>.<uuid>.tmp`, which listings skip). Paimon only refuses blank
/// names; purely numeric names are allowed, as Paimon's dated auto-tags (`20240101`) are.
pub(crate) fn check_new_tag_name(name: &str) -> Result<()> {
    check_tag_name(name)?;
    if name.trim() != name {
        return Err(name_error(name, "it starts or ends with a blank"));
    }
    if name.starts_with('.') || name.contains("..") {
        return Err(name_error(name, "it starts with '.' or contains '..'"));
    }
    if is_temp_name(name) {
        return Err(name_error(name, "it looks like a temporary file (<name>.<uuid>.tmp)"));
    }
    Ok(())
}

/// `<name>.<uuid>.tmp`: the temporary file `LocalFileIO` writes before linking `<name>` into place.
fn is_temp_name(name: &str) -> bool {
    name.strip_suffix(".tmp").and_then(|n| n.rsplit_once('.')).is_some_and(|(_, u)| uuid::Uuid::parse_str(u).is_ok())
}

/// Reads and writes a table's tag files.
#[derive(Debug, Clone)]
pub struct TagManager {
    io: Arc<dyn FileIO>,
    dir: String,
}

impl TagManager {
    /// The manager of `<table>/tag`.
    pub fn new(io: Arc<dyn FileIO>, table: &str) -> Self {
        TagManager { io, dir: join(table, TAG_DIR) }
    }

    /// `<table>/tag`
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Path of `tag-<name>`, for a name that is not blank and a plain file-name part.
    pub fn tag_path(&self, name: &str) -> Result<String> {
        check_tag_name(name)?;
        Ok(join(&self.dir, &format!("{TAG_PREFIX}{name}")))
    }

    /// The tag `name`, or `None` when there is none.
    pub fn get(&self, name: &str) -> Result<Option<Tag>> {
        let path = self.tag_path(name)?;
        let _span = tracing::debug_span!("read_tag", name).entered();
        match self.io.read(&path) {
            Ok(bytes) => Tag::from_json(name, &bytes).map(Some).map_err(|e| e.in_file(&path)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The tag `name`; a not-found error when there is none.
    pub fn get_required(&self, name: &str) -> Result<Tag> {
        self.get(name)?.ok_or_else(|| Error::NotFound { path: format!("tag '{}'", name.escape_debug()) })
    }

    /// Every tag, ordered by snapshot id, then name. Names come from the files (`tag-<name>`), whatever
    /// engine wrote them; temporary files of a create in progress are skipped, and a tag deleted while
    /// listing is left out (as Paimon's `TagManager.tags` does). A tag that does not decode is a corrupt
    /// error: maintenance must not guess what it references.
    pub fn list(&self) -> Result<Vec<Tag>> {
        let _span = tracing::debug_span!("list_tags", dir = self.dir.as_str()).entered();
        let mut out = Vec::new();
        for f in self.io.list(&self.dir)? {
            let Some(name) = f.name().strip_prefix(TAG_PREFIX) else { continue };
            if f.is_dir || is_temp_name(name) {
                continue;
            }
            match self.io.read(&f.path) {
                Ok(bytes) => out.push(Tag::from_json(name, &bytes).map_err(|e| e.in_file(&f.path))?),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        out.sort_by(|a, b| (a.snapshot.id, &a.name).cmp(&(b.snapshot.id, &b.name)));
        Ok(out)
    }

    /// Writes a new tag for `snapshot` (create-if-absent: an existing tag of that name is an
    /// already-exists error and is left untouched). With `time_retained`, the tag records its creation time
    /// (local time, as Java's `LocalDateTime.now()`) and retention.
    pub fn create(&self, name: &str, snapshot: &Snapshot, time_retained: Option<Duration>) -> Result<Tag> {
        check_new_tag_name(name)?;
        let path = self.tag_path(name)?;
        let mut snapshot = snapshot.clone();
        // A snapshot read from another tag carries no tag fields (they are parsed off), but be sure.
        snapshot.extra.remove(CREATE_TIME);
        snapshot.extra.remove(TIME_RETAINED);
        let tag = Tag {
            name: name.to_string(),
            snapshot,
            create_time: time_retained.map(|_| local_now_micros()),
            time_retained,
        };
        let _span = tracing::info_span!("create_tag", name, snapshot = tag.snapshot.id).entered();
        if !self.io.create_if_absent(&path, tag.to_json()?.as_bytes())? {
            return Err(Error::AlreadyExists { path: format!("tag '{name}' ({path})") });
        }
        Ok(tag)
    }

    /// Deletes the file of tag `name` (nothing else); a missing tag is not an error.
    pub fn delete_file(&self, name: &str) -> Result<()> {
        self.io.delete(&self.tag_path(name)?)
    }

    /// Deletes the file of a tag [`list`](Self::list) returned: its name came from the directory, so it is
    /// a file there whatever it looks like (another engine's tag need not pass [`check_tag_name`]).
    pub(crate) fn delete_listed(&self, tag: &Tag) -> Result<()> {
        self.io.delete(&join(&self.dir, &format!("{TAG_PREFIX}{}", tag.name)))
    }
}

impl Table {
    /// The table's tags.
    pub fn tag_manager(&self) -> TagManager {
        TagManager::new(self.io().clone(), &self.metadata_root())
    }
}

/// The snapshots the table's tags pin: what they reference must outlive the snapshots' expiration.
pub(crate) fn tagged_snapshots(table: &Table) -> Result<Vec<Snapshot>> {
    Ok(table.tag_manager().list()?.into_iter().map(|t| t.snapshot).collect())
}

/// Tags snapshot `snapshot_id` (the latest when `None`) as `name`, with an optional retention for Paimon
/// engines. The snapshot must exist: an expired one is a not-found error, and so is one that expires while
/// the tag is written (expiration reads the tags again before it deletes files, so a snapshot that still
/// exists once the tag is written keeps every file for the tag).
pub fn create_tag(table: &Table, name: &str, snapshot_id: Option<i64>, time_retained: Option<Duration>) -> Result<Tag> {
    check_new_tag_name(name)?;
    let sm = table.snapshot_manager();
    let snapshot = match snapshot_id {
        Some(id) => match sm.snapshot(id) {
            Ok(s) => s,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::NotFound { path: format!("snapshot {id} (expired or never committed)") })
            }
            Err(e) => return Err(e),
        },
        None => table
            .snapshot(None)?
            .ok_or_else(|| Error::invalid(format!("tag '{name}'"), "the table has no snapshot to tag yet"))?,
    };
    let tm = table.tag_manager();
    let tag = tm.create(name, &snapshot, time_retained)?;
    if !sm.snapshot_exists(snapshot.id)? {
        // Expired (or rolled back) while we wrote the tag: the files only it referenced may be gone.
        tm.delete_file(name)?;
        return Err(Error::NotFound { path: format!("snapshot {} (expired while it was being tagged)", snapshot.id) });
    }
    Ok(tag)
}

/// What deleting a tag did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TagDeletion {
    /// The tag deleted.
    pub name: String,
    /// Its snapshot id (`None` when the tag file did not decode).
    pub snapshot_id: Option<i64>,
    /// Data files deleted (only the tag still held them).
    pub data_files: Vec<String>,
    /// Index files deleted.
    pub index_files: Vec<String>,
    /// Manifests, manifest lists and index manifests deleted.
    pub manifests: Vec<String>,
    /// Why files were left for orphan cleanup instead, if they were.
    pub skipped_reclaim: Option<String>,
}

/// Deletes tag `name` and, when its snapshot has expired, the files only the tag still held (Paimon's
/// `TagManager.deleteTag` with `TagDeletion`).
///
/// Nothing a snapshot or another tag references is deleted: a file is kept when the earliest snapshot or any
/// other tag references it. That the earliest snapshot suffices among the snapshots follows from how files
/// live: a file (data, index, manifest) is referenced by one unbroken run of snapshots, since names are never
/// reused and a dropped file never comes back; so a file the tag's older snapshot and some retained snapshot
/// both reference is referenced by every snapshot in between, the earliest among them. While the tag's
/// snapshot still exists there is nothing to reclaim: its expiration deletes what it alone held, once no tag
/// keeps it. A tag that does not decode (or is of a newer format) is deleted without reclaiming, and so is any tag while another tag
/// does not decode or the table has branches or decoupled changelogs: its files are left to orphan cleanup.
pub fn delete_tag(table: &Table, name: &str) -> Result<TagDeletion> {
    let _span = tracing::info_span!("delete_tag", name).entered();
    let tm = table.tag_manager();
    let mut report = TagDeletion { name: name.to_string(), ..Default::default() };
    let tag = match tm.get(name) {
        Ok(Some(t)) => t,
        Ok(None) => return Err(Error::NotFound { path: format!("tag '{}'", name.escape_debug()) }),
        Err(e) if matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::Unsupported) => {
            tm.delete_file(name)?;
            report.skipped_reclaim = Some(format!("the tag did not decode ({e})"));
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    report.snapshot_id = Some(tag.snapshot.id);
    let plan = match reclaim_plan(table, &tag) {
        Ok(plan) => plan,
        Err(why) => {
            tm.delete_file(name)?;
            report.skipped_reclaim = why;
            return Ok(report);
        }
    };
    // The tag file goes first: a crash after it leaves orphans for cleanup, never a tag with missing files.
    tm.delete_file(name)?;
    (report.data_files, report.index_files, report.manifests) = plan.into_lists();
    delete_files(table, &report.data_files, &report.index_files, &report.manifests)?;
    Ok(report)
}

/// What deleting `tag` may reclaim; `Err(None)` when there is nothing to reclaim (its snapshot still
/// exists), `Err(Some(why))` when reclaiming is skipped for a reason worth reporting.
fn reclaim_plan(table: &Table, tag: &Tag) -> std::result::Result<References, Option<String>> {
    let sm = table.snapshot_manager();
    let earliest = match sm.earliest_id() {
        Ok(Some(e)) if tag.snapshot.id < e => e,
        Ok(_) => return Err(None),
        Err(e) => return Err(Some(format!("the snapshots could not be listed ({e})"))),
    };
    if let Err(e) = crate::maintenance::references::refuse_unread_references(table) {
        return Err(Some(e.to_string()));
    }
    let others = match table.tag_manager().list() {
        Ok(tags) => tags,
        Err(e) => return Err(Some(format!("another tag could not be read ({e})"))),
    };
    let mut cache = HashMap::new();
    let mut plan = || -> Result<References> {
        let mut candidates = references(table, &tag.snapshot, &mut cache)?;
        let mut protected = references(table, &sm.snapshot(earliest)?, &mut cache)?;
        for other in others.iter().filter(|o| o.name != tag.name) {
            protected.extend(references(table, &other.snapshot, &mut cache)?);
        }
        candidates.remove_referenced(&protected);
        Ok(candidates)
    };
    plan().map_err(|e| Some(format!("the files of the snapshots could not be read ({e})")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SNAPSHOT: &str = r#"{"version":3,"id":4,"schemaId":0,"baseManifestList":"manifest-list-a-0","deltaManifestList":"manifest-list-a-1","commitUser":"u","commitIdentifier":1,"commitKind":"APPEND","timeMillis":1700000000000,"totalRecordCount":3,"deltaRecordCount":3}"#;

    #[test]
    fn retention_fields_round_trip_in_jacksons_forms() {
        let json = SNAPSHOT.replace(
            r#""deltaRecordCount":3}"#,
            r#""deltaRecordCount":3,"tagCreateTime":[2024,3,20,17,4,32,747000000],"tagTimeRetained":86400.000000000}"#,
        );
        let tag = Tag::from_json("t", json.as_bytes()).unwrap();
        let want = NaiveDate::from_ymd_opt(2024, 3, 20).unwrap().and_hms_nano_opt(17, 4, 32, 747_000_000).unwrap();
        assert_eq!(tag.create_time, Some(want));
        assert_eq!(tag.time_retained, Some(Duration::from_secs(86400)));
        assert!(tag.snapshot.extra.is_empty(), "tag fields stay out of the snapshot");
        let back: Value = serde_json::from_str(&tag.to_json().unwrap()).unwrap();
        assert_eq!(back[CREATE_TIME], serde_json::json!([2024, 3, 20, 17, 4, 32, 747000000]));
        assert_eq!(back[TIME_RETAINED].as_f64(), Some(86400.0));
        // Trailing zero parts are left out, as Jackson does, and read back.
        let midnight = NaiveDate::from_ymd_opt(2024, 1, 2).unwrap().and_hms_opt(0, 0, 0).unwrap();
        assert_eq!(local_date_time_json(&midnight), serde_json::json!([2024, 1, 2, 0, 0]));
        assert_eq!(parse_local_date_time(&local_date_time_json(&midnight)).unwrap(), midnight);
        // Without a retention: the plain snapshot JSON.
        let plain = Tag::from_json("t", SNAPSHOT.as_bytes()).unwrap();
        assert!(!plain.to_json().unwrap().contains("tag"));
    }

    #[test]
    fn damaged_tag_fields_are_corrupt_errors() {
        for bad in [r#""x""#, "[2024,13,1,0,0]", "[2024,1]", "[2024,1,1,0,0,0,0,0]", "[-1e9,1,1,0,0]", "{}"] {
            let json = SNAPSHOT
                .replace(r#""deltaRecordCount":3}"#, &format!(r#""deltaRecordCount":3,"tagCreateTime":{bad}}}"#));
            let e = Tag::from_json("t", json.as_bytes()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corrupt, "{bad}: {e}");
        }
        for bad in ["-1", r#""PT1H""#, "1e400", "[]"] {
            let json = SNAPSHOT
                .replace(r#""deltaRecordCount":3}"#, &format!(r#""deltaRecordCount":3,"tagTimeRetained":{bad}}}"#));
            let e = Tag::from_json("t", json.as_bytes()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corrupt, "{bad}: {e}");
        }
    }

    #[test]
    fn names_that_could_leave_the_tag_directory_are_refused() {
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        for bad in ["", "  ", "a/b", "../x", "..", "a\\b", "a\0b", "a\nb", long.as_str()] {
            assert_eq!(check_tag_name(bad).unwrap_err().kind(), ErrorKind::Invalid, "{bad:?}");
        }
        let temp = "x.0b5d9d36-8cf3-4b1a-9d6c-3b43f7c1f2aa.tmp";
        for bad in [" a", "a ", ".hidden", "a..b", temp] {
            assert!(check_tag_name(bad).is_ok(), "{bad:?} is readable");
            assert_eq!(check_new_tag_name(bad).unwrap_err().kind(), ErrorKind::Invalid, "{bad:?}");
        }
        for good in ["v1", "2024-01-01", "20240101", "release 1.2", "ünïcode", "a.b"] {
            assert!(check_new_tag_name(good).is_ok(), "{good:?}");
        }
    }
}
