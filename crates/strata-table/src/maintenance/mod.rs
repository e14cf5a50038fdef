//! Keeping a long-running table in shape: snapshot expiration and orphan-file cleanup.
//!
//! Expiration decides what to delete from the ADD and DELETE records of the manifests and from the index
//! manifests (Paimon's rule), never from a listing: a data file goes when a DELETE record for it was
//! committed at or before the earliest retained snapshot and that snapshot no longer holds it. Orphan
//! cleanup is the one place that lists the directory, and it only removes files that no snapshot
//! references and that are older than a threshold, so files of in-flight commits are never touched.

pub(crate) mod references;
pub(crate) mod repair;
pub(crate) mod rollback;
pub(crate) mod tag;

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use serde::Serialize;
use strata_io::FileStatus;
use strata_spec::{Error, FileKind, Result, Snapshot};

use crate::commit::now_millis;
use crate::maintenance::references::{
    branch_references, delete_files, references, refuse_decoupled_changelogs, refuse_on_branch, References,
};
use crate::maintenance::tag::tagged_snapshots;
use crate::meta::paths::escape_path_name;
use crate::table::Table;

/// Which snapshots to keep.
#[derive(Debug, Clone)]
pub struct ExpireOptions {
    /// Always keep at least this many of the newest snapshots (`snapshot.num-retained.min`).
    pub retain_min: u32,
    /// Never keep more than this many (`snapshot.num-retained.max`).
    pub retain_max: u32,
    /// Expire snapshots older than this, beyond the minimum (`snapshot.time-retained`).
    pub time_retained: Duration,
    /// Report what would be deleted, delete nothing.
    pub dry_run: bool,
}

impl ExpireOptions {
    /// The table's options.
    pub fn from_table(table: &Table) -> Result<Self> {
        let o = table.schema().core_options();
        Ok(ExpireOptions {
            retain_min: o.snapshot_num_retained_min()?.max(1),
            retain_max: o.snapshot_num_retained_max()?.max(1),
            time_retained: o.snapshot_time_retained()?,
            dry_run: false,
        })
    }
}

/// What a maintenance run deleted (or would delete, in a dry run).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceReport {
    /// Snapshot ids removed.
    pub snapshots: Vec<i64>,
    /// Data files removed.
    pub data_files: Vec<String>,
    /// Deletion-vector index files removed.
    pub index_files: Vec<String>,
    /// Manifests, manifest lists and index manifests removed.
    pub manifests: Vec<String>,
    /// Other files removed (orphan cleanup: temporary files, files of failed commits).
    pub other_files: Vec<String>,
    /// Whether nothing was deleted because it was a dry run.
    pub dry_run: bool,
}

/// Adds to `refs` what the tags' snapshots reference (tags pin their files after the snapshots expire),
/// skipping tagged snapshots already in `seen` (id and base manifest list) and adding the others to it.
fn extend_with_tags(
    refs: &mut References,
    table: &Table,
    cache: &mut HashMap<String, Vec<String>>,
    seen: &mut BTreeSet<(i64, String)>,
) -> Result<()> {
    for tag in tagged_snapshots(table)? {
        if seen.insert((tag.id, tag.base_manifest_list.clone())) {
            refs.extend(references(table, &tag, cache)?);
        }
    }
    Ok(())
}

/// Expires snapshots per `opts`, then deletes what only they referenced. Snapshots a consumer still
/// needs are kept, and nothing a tag references is deleted.
pub fn expire_snapshots(table: &Table, opts: &ExpireOptions) -> Result<MaintenanceReport> {
    let _span = tracing::info_span!("expire", path = table.path()).entered();
    refuse_on_branch(table, "expiration")?;
    refuse_decoupled_changelogs(table)?;
    let sm = table.snapshot_manager();
    let mut report = MaintenanceReport { dry_run: opts.dry_run, ..Default::default() };
    let ids = sm.list_ids()?;
    let (Some(&earliest), Some(&latest)) = (ids.first(), ids.last()) else { return Ok(report) };
    let expired = expired_snapshots(table, opts, earliest, latest)?;
    let Some(last_expired) = expired.last().map(|s| s.id) else { return Ok(report) };
    let first_retained = sm.snapshot(last_expired + 1)?;
    let mut cache = HashMap::new();
    let mut tags_seen = BTreeSet::new();
    let retained = retained_references(table, &first_retained, latest, &mut cache, &mut tags_seen)?;
    let mut doomed = doomed_files(table, earliest, &first_retained, &expired, &retained, &mut cache)?;
    report.snapshots = expired.iter().map(|s| s.id).collect();
    if opts.dry_run {
        (report.data_files, report.index_files, report.manifests) = doomed.into_lists();
        return Ok(report);
    }
    // Snapshot files first (oldest first) and the EARLIEST hint: a crash after this leaves orphans for the
    // cleanup, never a retained snapshot pointing at a deleted file.
    for s in &expired {
        table.io().delete(&sm.snapshot_path(s.id))?;
    }
    sm.write_earliest_hint(first_retained.id);
    // A tag created meanwhile, on a snapshot that still existed once the tag was written (what `create_tag`
    // checks), must keep its files: look at the tags again now that the snapshots are gone.
    let mut late = References::default();
    extend_with_tags(&mut late, table, &mut cache, &mut tags_seen)?;
    doomed.remove_referenced(&late);
    (report.data_files, report.index_files, report.manifests) = doomed.into_lists();
    delete_files(table, &report.data_files, &report.index_files, &report.manifests)?;
    Ok(report)
}

/// The snapshots of `earliest..=latest` that `opts` expires, oldest first: never the newest `retain_min`,
/// nor one a consumer still needs; the oldest while more than `retain_max` remain or older than
/// `time_retained`.
fn expired_snapshots(table: &Table, opts: &ExpireOptions, earliest: i64, latest: i64) -> Result<Vec<Snapshot>> {
    let sm = table.snapshot_manager();
    let now = now_millis();
    let threshold = now - opts.time_retained.as_millis() as i64;
    let mut last_candidate = latest - i64::from(opts.retain_min);
    // Consumers not written within `consumer.expiration-time` are expired first (Paimon's order), so that
    // they do not hold snapshots back.
    if let Some(next) = crate::changes::consumer::min_consumer_next_snapshot(table, now, opts.dry_run)? {
        last_candidate = last_candidate.min(next - 1);
    }
    let mut expired = Vec::new();
    for id in earliest..=last_candidate {
        let Some(s) = sm.try_snapshot(id)? else { continue };
        let remaining = latest - id + 1;
        if remaining > i64::from(opts.retain_max) || s.time_millis < threshold {
            expired.push(s);
        } else {
            break;
        }
    }
    Ok(expired)
}

/// What the retained snapshots (`first_retained` to `latest`), the tags and the branches reference. Of
/// the data files, only the first retained snapshot's: later snapshots only add files newer than it.
fn retained_references(
    table: &Table,
    first_retained: &Snapshot,
    latest: i64,
    cache: &mut HashMap<String, Vec<String>>,
    tags_seen: &mut BTreeSet<(i64, String)>,
) -> Result<References> {
    let sm = table.snapshot_manager();
    let mut all = References::default();
    for id in first_retained.id..=latest {
        let Some(s) = sm.try_snapshot(id)? else { continue };
        let r = references(table, &s, cache)?;
        all.index.extend(r.index);
        all.meta.extend(r.meta);
        if id == first_retained.id {
            all.data = r.data;
        }
    }
    extend_with_tags(&mut all, table, cache, tags_seen)?;
    all.extend(branch_references(table, cache)?);
    Ok(all)
}

/// The files only the `expired` snapshots reference: data files whose DELETE was committed in
/// (earliest, first retained] and that the first retained snapshot does not hold, the expired snapshots'
/// changelog files (a snapshot's changelog is its own), and their index and metadata files.
fn doomed_files(
    table: &Table,
    earliest: i64,
    first_retained: &Snapshot,
    expired: &[Snapshot],
    retained: &References,
    cache: &mut HashMap<String, Vec<String>>,
) -> Result<References> {
    let sm = table.snapshot_manager();
    let store = table.manifest_store()?;
    let mut data = BTreeSet::new();
    for id in (earliest + 1)..=first_retained.id {
        let s = if id == first_retained.id { first_retained.clone() } else { sm.snapshot(id)? };
        for m in store.read_manifest_list(&s.delta_manifest_list)? {
            for e in store.read_manifest(&m.file_name)? {
                if e.kind == FileKind::Delete {
                    let path = table.data_file_path(&e)?;
                    if !retained.data.contains(&path) {
                        data.insert(path);
                    }
                }
            }
        }
    }
    for s in expired {
        for e in table.changelog_files(s)? {
            let path = table.data_file_path(&e)?;
            if !retained.data.contains(&path) {
                data.insert(path);
            }
        }
    }
    let mut index = BTreeSet::new();
    let mut meta = BTreeSet::new();
    for s in expired {
        let r = references(table, s, cache)?;
        index.extend(r.index.into_iter().filter(|n| !retained.index.contains(n)));
        meta.extend(r.meta.into_iter().filter(|n| !retained.meta.contains(n)));
    }
    Ok(References { data, index, meta })
}

/// Where in Paimon's layout a file lies, which says which names Paimon (and Strata) write there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Snapshot,
    Schema,
    Manifest,
    Index,
    Bucket,
}

impl Area {
    /// Whether `name` is one Paimon writes in this area (or a temporary file of `LocalFileIO`'s form
    /// `<name>.<uuid>.tmp` for one): orphan cleanup never looks at anything else, so a user's own files in the
    /// table directory are never taken for orphans.
    fn owns(self, name: &str, data_prefixes: &[&str]) -> bool {
        if let Some(target) = temp_target(name) {
            return self.owns_final(target, data_prefixes) || (self == Area::Snapshot && is_hint(target));
        }
        // Final snapshot and schema files are never orphans: only their temporary files are candidates.
        matches!(self, Area::Manifest | Area::Index | Area::Bucket) && self.owns_final(name, data_prefixes)
    }

    fn owns_final(self, name: &str, data_prefixes: &[&str]) -> bool {
        let counted = |prefix: &str| name.strip_prefix(prefix).is_some_and(is_uuid_counter);
        match self {
            Area::Snapshot => name.strip_prefix("snapshot-").is_some_and(|n| n.parse::<i64>().is_ok()),
            Area::Schema => name.strip_prefix("schema-").is_some_and(|n| n.parse::<i64>().is_ok()),
            Area::Manifest => counted("manifest-list-") || counted("index-manifest-") || counted("manifest-"),
            Area::Index => counted("index-"),
            Area::Bucket => data_prefixes.iter().any(|p| {
                // `<prefix><uuid>-<n>.<ext>` (the extension may carry a compression part), or a postponed file's
                // `<prefix>-u-<commit user>-s-<writer id>-w-<uuid>-<n>.<ext>`.
                name.strip_prefix(p)
                    .and_then(|rest| rest.split_once('.'))
                    .is_some_and(|(id, _)| is_uuid_counter(id) || is_postponed_writer_id(id))
            }),
        }
    }
}

fn is_hint(name: &str) -> bool {
    name == "LATEST" || name == "EARLIEST"
}

/// `<uuid>-<n>`, as Paimon's path factories name files.
fn is_uuid_counter(s: &str) -> bool {
    s.rsplit_once('-').is_some_and(|(uuid, n)| uuid::Uuid::parse_str(uuid).is_ok() && n.parse::<u64>().is_ok())
}

/// `-u-<commit user>-s-<writer id>-w-<uuid>-<n>`: Paimon's `PostponeBucketFileStoreWrite` names postponed
/// files with the data-file prefix followed by this.
fn is_postponed_writer_id(s: &str) -> bool {
    let Some((writer, file)) = s.strip_prefix("-u-").and_then(|rest| rest.rsplit_once("-w-")) else { return false };
    let writer_id = writer.rsplit_once("-s-").map(|(_, id)| id);
    writer_id.is_some_and(|id| id.parse::<u32>().is_ok()) && is_uuid_counter(file)
}

/// The file a temporary file `<name>.<uuid>.tmp` was going to become.
fn temp_target(name: &str) -> Option<&str> {
    let (target, uuid) = name.strip_suffix(".tmp")?.rsplit_once('.')?;
    uuid::Uuid::parse_str(uuid).ok().map(|_| target)
}

/// The files orphan cleanup may consider: only in the directories Paimon's layout defines (snapshot, schema,
/// manifest, index, and `bucket-N` directories under partition directories of the table's own partition
/// keys) and only names Paimon writes there. Tags, branches, consumers, statistics and anything a user put in
/// the table directory are never listed.
fn cleanup_candidates(table: &Table) -> Result<Vec<(FileStatus, Area)>> {
    let o = table.schema().core_options();
    // Paimon's defaults (what Strata writes) and the table's own prefixes, if it sets them.
    let mut prefixes = vec!["data-", "changelog-"];
    prefixes.extend(
        ["data-file.prefix", "changelog-file.prefix"].iter().filter_map(|k| o.get(k)).filter(|p| !p.is_empty()),
    );
    let paths = table.path_factory();
    let mut out = Vec::new();
    let flat = [
        (table.snapshot_manager().dir().to_string(), Area::Snapshot),
        (paths.schema_dir(), Area::Schema),
        (paths.manifest_dir(), Area::Manifest),
        (paths.index_dir(), Area::Index),
    ];
    for (dir, area) in flat {
        out.extend(
            table
                .io()
                .list(&dir)?
                .into_iter()
                .filter(|f| !f.is_dir && area.owns(f.name(), &prefixes))
                .map(|f| (f, area)),
        );
    }
    let keys: Vec<String> = table.schema().partition_keys.iter().map(|k| format!("{}=", escape_path_name(k))).collect();
    collect_bucket_files(table, table.path(), &keys, &prefixes, &mut out)?;
    Ok(out)
}

fn collect_bucket_files(
    table: &Table,
    dir: &str,
    keys: &[String],
    prefixes: &[&str],
    out: &mut Vec<(FileStatus, Area)>,
) -> Result<()> {
    for s in table.io().list(dir)?.into_iter().filter(|s| s.is_dir) {
        match keys.first() {
            Some(key) if s.name().starts_with(key.as_str()) => {
                collect_bucket_files(table, &s.path, &keys[1..], prefixes, out)?
            }
            // `bucket-<n>`, and `bucket-postpone` for postponed files.
            None if s.name().strip_prefix("bucket-").is_some_and(|b| b == "postpone" || b.parse::<i32>().is_ok()) => {
                let files = table.io().list(&s.path)?;
                out.extend(
                    files
                        .into_iter()
                        .filter(|f| !f.is_dir && Area::Bucket.owns(f.name(), prefixes))
                        .map(|f| (f, Area::Bucket)),
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// Deletes files in the table directory that no snapshot references and that were last modified more than
/// `older_than` ago.
pub fn remove_orphan_files(table: &Table, older_than: Duration, dry_run: bool) -> Result<MaintenanceReport> {
    let _span = tracing::info_span!("remove_orphan_files", path = table.path()).entered();
    refuse_on_branch(table, "orphan cleanup")?;
    refuse_decoupled_changelogs(table)?;
    let sm = table.snapshot_manager();
    let cutoff = now_millis() - older_than.as_millis() as i64;
    let files = cleanup_candidates(table)?;
    let referenced = |ids: &[i64]| -> Result<References> {
        let mut all = References::default();
        let mut cache = HashMap::new();
        for &id in ids {
            let s = match sm.snapshot(id) {
                Ok(s) => s,
                // Expired while we looked: what it referenced is either still referenced by a newer snapshot
                // or being deleted by the expiration.
                Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            let r = match references(table, &s, &mut cache) {
                Ok(r) => r,
                // Expiration deletes the snapshot file before the files only it referenced: a missing
                // manifest of a snapshot that is gone now means it expired while we read it (the race behind
                // Paimon issue 7710 again), and its files are expiration's to delete.
                Err(e) if e.kind() == strata_spec::ErrorKind::NotFound && !sm.snapshot_exists(id)? => continue,
                Err(e) => return Err(e),
            };
            all.extend(r);
        }
        Ok(all)
    };
    let ids = sm.list_ids()?;
    let mut refs = referenced(&ids)?;
    extend_with_tags(&mut refs, table, &mut HashMap::new(), &mut BTreeSet::new())?;
    refs.extend(branch_references(table, &mut HashMap::new())?);
    let data_names = refs.data_names();
    let mut candidates: Vec<(FileStatus, Area)> = files
        .into_iter()
        .filter(|(f, _)| f.modified_millis < cutoff)
        .filter(|(f, area)| match area {
            Area::Snapshot | Area::Schema => true,
            Area::Manifest => !refs.meta.contains(f.name()),
            Area::Index => !refs.index.contains(f.name()),
            // By name, as Paimon's orphan cleanup does (names are unique per writer UUID): a path computed
            // from partition values can differ from the directory another engine wrote (Java renders a
            // DOUBLE partition `1.0`, a TIMESTAMP as ISO text), and a path mismatch must never make a
            // referenced file look orphaned.
            Area::Bucket => !data_names.contains(f.name()),
        })
        .collect();
    // Snapshots committed while we listed may reference candidates: look again before deleting (the race
    // behind Paimon issue 7710).
    let newer: Vec<i64> = sm.list_ids()?.into_iter().filter(|id| !ids.contains(id)).collect();
    // A branch's commits too (read again whole: branches are few).
    let has_branches = !crate::branch::list_branches(table)?.is_empty();
    if !newer.is_empty() || has_branches {
        let mut more = referenced(&newer)?;
        more.extend(branch_references(table, &mut HashMap::new())?);
        let more_names = more.data_names();
        candidates.retain(|(f, _)| {
            !more_names.contains(f.name()) && !more.meta.contains(f.name()) && !more.index.contains(f.name())
        });
    }
    let mut report = MaintenanceReport { dry_run, ..Default::default() };
    for (f, area) in candidates {
        let list = match area {
            Area::Manifest if temp_target(f.name()).is_none() => &mut report.manifests,
            Area::Index if temp_target(f.name()).is_none() => &mut report.index_files,
            Area::Bucket if temp_target(f.name()).is_none() => &mut report.data_files,
            _ => &mut report.other_files,
        };
        list.push(f.path.clone());
        if !dry_run {
            table.io().delete(&f.path)?;
        }
    }
    Ok(report)
}

/// Parses `--older-than` values like "1 d", "12h", "0 s".
///
/// The unit is required: Paimon's durations default to milliseconds, so a bare `5` would mean 5 ms, where a
/// person typing it at a prompt likely meant days or hours, and orphan cleanup would then delete the files
/// of commits in flight.
pub fn parse_older_than(s: &str) -> Result<Duration> {
    let text = s.trim();
    if text.is_empty() || text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(Error::invalid(
            "--older-than",
            format!("'{s}' has no unit: give one, e.g. '30 s', '10 min', '1 h', '2 d'"),
        ));
    }
    strata_spec::options::parse_duration(text).map_err(|e| Error::invalid_from("--older-than", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_than_needs_a_unit() {
        for bad in ["5", "", " 10 ", "1.5", "5 fortnights"] {
            let e = parse_older_than(bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("--older-than"), "{bad:?}: {e}");
        }
        assert_eq!(parse_older_than("5 min").ok(), Some(Duration::from_secs(300)));
        assert_eq!(parse_older_than("1 d").ok(), Some(Duration::from_secs(86_400)));
    }

    #[test]
    fn paimon_names_in_each_area() {
        let uuid = "0b5d9d36-8cf3-4b1a-9d6c-3b43f7c1f2aa";
        // Hash index files are named like deletion-vector files (Paimon's `IndexPathFactory`).
        assert!(Area::Index.owns(&format!("index-{uuid}-3"), &[]));
        assert!(!Area::Index.owns("index-notes.txt", &[]));
        let p = ["data-"];
        assert!(Area::Bucket.owns(&format!("data-{uuid}-0.parquet"), &p));
        assert!(Area::Bucket.owns(&format!("data--u-{uuid}-s-1520731944-w-{uuid}-0.parquet"), &p));
        assert!(Area::Bucket.owns(&format!("data--u-a-user-s-7-w-{uuid}-12.orc"), &p));
        assert!(!Area::Bucket.owns(&format!("data--u-someone-s-x-w-{uuid}-0.parquet"), &p));
        assert!(!Area::Bucket.owns("data-my-notes.parquet", &p));
    }
}
