//! The atomic commit (Paimon's `FileStoreCommitImpl`, reduced to what Strata needs).
//!
//! A commit writes its delta manifest, a manifest list for the base and one for the delta, and the index
//! manifest when index files change; then it creates `snapshot-N` with [`FileIO::create_if_absent`], the
//! only arbiter between concurrent committers. Losing the race means: clean up what this attempt wrote,
//! re-read the new latest snapshot, re-check conflicts, retry with backoff.
//!
//! Like Paimon, one commit call makes up to two snapshots under the same user and identifier: an `APPEND`
//! snapshot with the write's new level-0 files (and input changelog), then a `COMPACT` snapshot with what
//! the compaction replaced and produced and the deletion-vector index changes. Incremental and streaming
//! readers follow `APPEND` snapshots' delta files, so every write reaches them, even one the same commit
//! compacted away. Deletion-vector readers skip level 0, so the `APPEND` snapshot shows them nothing new
//! until the `COMPACT` one lands: no snapshot shows rows without the vectors that describe them. A message
//! with only one half makes one snapshot.

pub(crate) mod batch;
pub(crate) mod check;
pub(crate) mod foreign_compaction;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use strata_io::FileIO;
use strata_spec::{compare_rows, DELETION_VECTORS_INDEX, SNAPSHOT_VERSION};
use strata_spec::{
    BinaryRow, CommitKind, DataFileMeta, DataType, Datum, Error, FileKind, IndexFileMeta, IndexManifestEntry,
    ManifestEntry, ManifestFileMeta, Result, Snapshot,
};

use crate::meta::manifest_io::{merge_into, LiveFiles, ManifestStore};
use crate::meta::snapshot_manager::SnapshotManager;
use strata_spec::CommitMessage;

/// What Strata writes as `writerVersion`.
pub(crate) const WRITER_VERSION: &str = concat!("strata-", env!("CARGO_PKG_VERSION"));

/// When the base manifest list names more files than this, the commit rewrites them into a compact set
/// (Paimon's `manifest.merge-min-count`, default 30).
pub(crate) const MANIFEST_MERGE_MIN_COUNT: usize = 30;

/// A set of messages committed together under one identifier.
#[derive(Debug, Clone, Default)]
pub struct Committable {
    /// With the commit user, identifies the commit for idempotence (Paimon uses `i64::MAX` for batch jobs).
    pub identifier: i64,
    /// The changes.
    pub messages: Vec<CommitMessage>,
    /// Forces a commit kind; by default APPEND when there are new files, else COMPACT.
    pub kind: Option<CommitKind>,
    /// Snapshot properties.
    pub properties: Option<serde_json::Map<String, serde_json::Value>>,
}

/// How a commit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    /// This call created snapshot `id`.
    Committed(i64),
    /// A snapshot with this user and identifier already exists (an earlier attempt landed).
    AlreadyCommitted(i64),
    /// The write's APPEND snapshot `id` landed, but its compaction conflicted with a concurrent commit (the
    /// files it replaces or the deletion vectors it worked from changed) and was not committed: the rows
    /// are committed, in level 0, where the next compaction takes them up; the compaction's outputs and
    /// index files are garbage, and the writer's view of the bucket is stale.
    CompactionDropped(i64),
    /// Nothing to commit; no snapshot was made.
    Empty,
}

impl CommitOutcome {
    /// The snapshot holding the commit, if one was made.
    pub fn snapshot_id(&self) -> Option<i64> {
        match self {
            CommitOutcome::Committed(id)
            | CommitOutcome::AlreadyCommitted(id)
            | CommitOutcome::CompactionDropped(id) => Some(*id),
            CommitOutcome::Empty => None,
        }
    }
}

impl Committable {
    /// How many snapshots committing it makes: one of the forced kind, or one per half that changes anything.
    pub fn snapshot_count(&self) -> i64 {
        if self.kind.is_some() {
            return 1;
        }
        let data = self.messages.iter().any(|m| !m.increment.data.is_empty());
        let compact = self.messages.iter().any(|m| !m.increment.compact.is_empty());
        i64::from(data) + i64::from(compact)
    }
}

/// The snapshots holding each half of one commit (see [`FileStoreCommit::landed`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Landed {
    /// The APPEND snapshot (or a snapshot of another non-COMPACT kind forced by the commit).
    pub append: Option<i64>,
    /// The COMPACT snapshot.
    pub compact: Option<i64>,
}

impl Landed {
    /// Whether any half landed.
    pub fn any(&self) -> bool {
        self.append.is_some() || self.compact.is_some()
    }

    /// The snapshot of the half a snapshot of `kind` holds.
    pub fn of(&self, kind: CommitKind) -> Option<i64> {
        if kind == CommitKind::Compact {
            self.compact
        } else {
            self.append
        }
    }
}

/// Retry policy (`commit.max-retries`, `commit.timeout`, `commit.min-retry-wait`, `commit.max-retry-wait`).
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub max_retries: u32,
    /// Give up after this long.
    pub timeout: Option<Duration>,
    /// First backoff.
    pub min_wait: Duration,
    /// Longest backoff.
    pub max_wait: Duration,
}

/// Commits to one table as one commit user.
#[derive(Debug, Clone)]
pub struct FileStoreCommit {
    io: Arc<dyn FileIO>,
    snapshots: SnapshotManager,
    manifests: ManifestStore,
    commit_user: String,
    schema_id: i64,
    key_types: Vec<DataType>,
    retry: RetryPolicy,
    foreign_compaction_window: Duration,
    /// Deletion-vector index files are combined by name, not one per bucket (an unaware-bucket append table,
    /// Paimon's `GlobalCombiner`).
    dv_index_by_name: bool,
}

/// The key range of one file, for the level-overlap check.
struct KeyRange<'a> {
    min: Vec<Option<Datum>>,
    max: Vec<Option<Datum>>,
    file: &'a str,
}

/// What one attempt produced, before its snapshot is created.
struct Attempt {
    snapshot: Snapshot,
    written: Vec<String>,
}

impl FileStoreCommit {
    /// A committer. `key_types` are the trimmed primary key's types (empty for tables without one: no
    /// level-overlap check then).
    pub fn new(
        io: Arc<dyn FileIO>,
        snapshots: SnapshotManager,
        manifests: ManifestStore,
        commit_user: String,
        schema_id: i64,
        key_types: Vec<DataType>,
        retry: RetryPolicy,
    ) -> Self {
        let foreign_compaction_window = crate::commit::foreign_compaction::DEFAULT_FOREIGN_COMPACTION_WINDOW;
        FileStoreCommit {
            io,
            snapshots,
            manifests,
            commit_user,
            schema_id,
            key_types,
            retry,
            foreign_compaction_window,
            dv_index_by_name: false,
        }
    }

    /// Combines deletion-vector index files by name (an unaware-bucket append table, whose partition holds
    /// several) instead of one per bucket.
    pub fn with_dv_index_by_name(mut self, by_name: bool) -> Self {
        self.dv_index_by_name = by_name;
        self
    }

    /// How long a COMPACT snapshot of another engine keeps this committer from compacting the buckets it
    /// changed (deletion-vector buckets; zero: no check). See `foreign_compaction`.
    pub fn with_foreign_compaction_window(mut self, window: Duration) -> Self {
        self.foreign_compaction_window = window;
        self
    }

    /// The commit user.
    pub fn commit_user(&self) -> &str {
        &self.commit_user
    }

    /// Commits `c`: an APPEND snapshot with its messages' data increments, then a COMPACT snapshot with their
    /// compaction increments (either alone when the other is empty; one snapshot of `c.kind` when the kind
    /// is forced), each retrying lost races. On error no snapshot holds the failed half (unless the error
    /// says the outcome is unknown: an I/O error while creating the snapshot file that could not be
    /// resolved by reading it back) and the files this call wrote for it are removed. Call
    /// [`recommit`](Self::recommit) to retry a commit whose earlier call failed.
    pub fn commit(&self, c: &Committable) -> Result<CommitOutcome> {
        self.commit_halves(c, Landed::default())
    }

    /// Commits `c` again after a call that failed, committing only the halves that did not land (found by
    /// this user's identifier and the snapshot kind), so nothing is committed twice: a crash or error
    /// between the APPEND and the COMPACT snapshot leaves the APPEND one, and this commits the COMPACT one.
    pub fn recommit(&self, c: &Committable) -> Result<CommitOutcome> {
        let landed = self.landed(c.identifier)?;
        let outcome = self.commit_halves(c, landed)?;
        Ok(match outcome {
            CommitOutcome::Committed(id) if landed.any() => CommitOutcome::Committed(id),
            CommitOutcome::Empty => match landed.compact.or(landed.append) {
                Some(id) => CommitOutcome::AlreadyCommitted(id),
                None => CommitOutcome::Empty,
            },
            other => other,
        })
    }

    /// Which halves of the commit `identifier` of this user are in snapshots, scanning back from the latest
    /// snapshot to the user's previous commit (identifiers of one user increase).
    pub fn landed(&self, identifier: i64) -> Result<Landed> {
        let mut landed = Landed::default();
        let (Some(latest), Some(earliest)) = (self.snapshots.latest_id()?, self.snapshots.earliest_id()?) else {
            return Ok(landed);
        };
        for id in (earliest..=latest).rev() {
            let Some(s) = self.snapshots.try_snapshot(id)? else { continue };
            if s.commit_user != self.commit_user {
                continue;
            }
            if s.commit_identifier < identifier {
                break;
            }
            if s.commit_identifier == identifier {
                match s.commit_kind {
                    CommitKind::Compact => landed.compact = landed.compact.or(Some(id)),
                    _ => landed.append = landed.append.or(Some(id)),
                }
            }
        }
        Ok(landed)
    }

    fn commit_halves(&self, c: &Committable, landed: Landed) -> Result<CommitOutcome> {
        if c.messages.iter().all(CommitMessage::is_empty) {
            return Ok(CommitOutcome::Empty);
        }
        if let Some(kind) = c.kind {
            // One snapshot of the forced kind, holding everything.
            if let Some(id) = landed.of(kind) {
                return Ok(CommitOutcome::AlreadyCommitted(id));
            }
            return self.commit_one(c, kind);
        }
        let half = |f: fn(&CommitMessage) -> CommitMessage| Committable {
            identifier: c.identifier,
            messages: c.messages.iter().map(f).filter(|m| !m.is_empty()).collect(),
            kind: None,
            properties: c.properties.clone(),
        };
        let (data, compaction) = (half(CommitMessage::data_increment), half(CommitMessage::compact_increment));
        let mut outcome = CommitOutcome::Empty;
        if !data.messages.is_empty() && landed.append.is_none() {
            // A write that changes committed rows (a row-level DELETE or UPDATE) is an OVERWRITE, as Paimon
            // commits it: streaming readers, which follow APPEND snapshots' new files, skip it.
            let overwrites = data.messages.iter().any(|m| m.increment.data.changes_committed_rows());
            outcome = self.commit_one(&data, if overwrites { CommitKind::Overwrite } else { CommitKind::Append })?;
        }
        if compaction.messages.is_empty() || landed.compact.is_some() {
            return Ok(outcome);
        }
        match self.commit_one(&compaction, CommitKind::Compact) {
            Err(e) if e.kind() == strata_spec::ErrorKind::Conflict => {
                match outcome.snapshot_id().or(landed.append) {
                    // The write is committed; only its compaction is lost (the next one redoes it).
                    Some(append) => {
                        tracing::warn!(append, error = %e, "the compaction of a committed write conflicted; it was not committed");
                        Ok(CommitOutcome::CompactionDropped(append))
                    }
                    None => Err(e),
                }
            }
            compacted => compacted,
        }
    }

    /// Commits `c` in one new snapshot of `kind`, retrying lost races.
    fn commit_one(&self, c: &Committable, kind: CommitKind) -> Result<CommitOutcome> {
        let _span =
            tracing::info_span!("commit", user = %self.commit_user, identifier = c.identifier, kind = ?kind).entered();
        let started = Instant::now();
        let mut retries = 0u32;
        // Snapshots up to this id were checked (or predate the commit) for our own earlier attempt.
        let mut checked_up_to: Option<i64> = None;
        // The manifest entries this commit adds and deletes: the same for every attempt.
        let delta = Self::delta_entries(c);
        loop {
            let latest = self.snapshots.latest()?;
            let latest_id = latest.as_ref().map_or(0, |s| s.id);
            if let Some(from) = checked_up_to {
                if let Some(id) = self.find_own_commit(from + 1, latest_id, c.identifier, kind)? {
                    return Ok(CommitOutcome::AlreadyCommitted(id));
                }
            }
            checked_up_to = Some(latest_id);

            let live = match &latest {
                Some(s) => self.manifests.live_files(s)?,
                None => LiveFiles::new(),
            };
            self.check_conflicts(&live, c, &delta)?;
            if c.messages.iter().any(crate::commit::check::checks_index) {
                let entries = match &latest {
                    Some(s) => self.manifests.index_entries(s)?,
                    None => Vec::new(),
                };
                crate::commit::check::index_unchanged(&entries, &c.messages)?;
                crate::commit::check::hash_index_unchanged(&entries, &c.messages)?;
            }
            crate::commit::check::vectors_name_live_files(&live, &delta, &c.messages)?;
            if let Some(latest) = &latest {
                crate::commit::foreign_compaction::refuse_beside_foreign_compactor(
                    &self.snapshots,
                    &self.manifests,
                    latest,
                    &c.messages,
                    self.foreign_compaction_window,
                    now_millis(),
                )?;
            }

            let mut written = Vec::new();
            let attempt = match self.prepare(latest.as_ref(), c, kind, &delta, &mut written) {
                Ok(a) => a,
                Err(e) => {
                    self.clean_up(&written);
                    return Err(e);
                }
            };
            let id = attempt.snapshot.id;
            let path = self.snapshots.snapshot_path(id);
            let json = attempt.snapshot.to_json()?;
            let created = match self.io.create_if_absent(&path, json.as_bytes()) {
                Ok(true) => true,
                // A store whose retried create found this very write reports the object as existing: look
                // before cleaning up, since the files this attempt wrote may be live now.
                Ok(false) => matches!(self.snapshots.snapshot(id), Ok(s) if s.uuid == attempt.snapshot.uuid),
                // The outcome is unknown: look.
                Err(e) => match self.snapshots.snapshot(id) {
                    Ok(s) if s.uuid == attempt.snapshot.uuid => true,
                    Ok(_) => false,
                    Err(read_err) if read_err.kind() == strata_spec::ErrorKind::NotFound => {
                        self.clean_up(&attempt.written);
                        return Err(e);
                    }
                    // Still unknown: keep the files (an orphan at worst) and report.
                    Err(_) => return Err(e),
                },
            };
            if created {
                self.snapshots.write_latest_hint(id);
                tracing::debug!(id, "committed");
                return Ok(CommitOutcome::Committed(id));
            }
            // Lost the race for snapshot-N.
            self.clean_up(&attempt.written);
            retries += 1;
            let timed_out = self.retry.timeout.is_some_and(|t| started.elapsed() > t);
            if retries > self.retry.max_retries || timed_out {
                // The winner may have been our own earlier attempt of this call: impossible, since attempts of
                // one call are sequential; but a concurrent duplicate call could have landed it.
                let now = self.snapshots.latest_id()?.unwrap_or(0);
                if let Some(id) = self.find_own_commit(latest_id + 1, now, c.identifier, kind)? {
                    return Ok(CommitOutcome::AlreadyCommitted(id));
                }
                return Err(Error::Conflict {
                    message: format!(
                        "gave up after {retries} attempts lost to concurrent commits (commit.max-retries = {})",
                        self.retry.max_retries
                    ),
                });
            }
            self.back_off(retries);
        }
    }

    /// The identifiers among `identifiers` not yet committed by this commit user (Paimon's
    /// `filterCommitted`): a writer restarting after a crash, or retrying after an error whose outcome was
    /// unknown, calls this and re-commits only what it returns. Identifiers of one user must increase.
    pub fn filter_committed(&self, identifiers: &[i64]) -> Result<Vec<i64>> {
        let latest_of_user = self.latest_identifier_of_user()?;
        Ok(identifiers.iter().copied().filter(|&i| latest_of_user.is_none_or(|l| i > l)).collect())
    }

    /// The identifier of this user's newest snapshot, scanning back from the latest.
    pub fn latest_identifier_of_user(&self) -> Result<Option<i64>> {
        let (Some(latest), Some(earliest)) = (self.snapshots.latest_id()?, self.snapshots.earliest_id()?) else {
            return Ok(None);
        };
        for id in (earliest..=latest).rev() {
            match self.snapshots.snapshot(id) {
                Ok(s) if s.commit_user == self.commit_user => return Ok(Some(s.commit_identifier)),
                Ok(_) => {}
                Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    fn back_off(&self, retries: u32) {
        let base = self.retry.min_wait.saturating_mul(1u32 << retries.min(16)).min(self.retry.max_wait);
        let millis = base.as_millis().max(1) as u64;
        let wait = rand::rng().random_range(millis / 2..=millis);
        std::thread::sleep(Duration::from_millis(wait));
    }

    fn find_own_commit(&self, from: i64, to: i64, identifier: i64, kind: CommitKind) -> Result<Option<i64>> {
        let same_half = |k: CommitKind| (k == CommitKind::Compact) == (kind == CommitKind::Compact);
        for id in from.max(1)..=to {
            match self.snapshots.snapshot(id) {
                Ok(s)
                    if s.commit_user == self.commit_user
                        && s.commit_identifier == identifier
                        && same_half(s.commit_kind) =>
                {
                    return Ok(Some(id))
                }
                Ok(_) => {}
                // Expired in between: it cannot be ours, ours is newer than our first read.
                Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    fn delta_entries(c: &Committable) -> Vec<ManifestEntry> {
        let mut out = Vec::new();
        for m in &c.messages {
            let entry = |kind, file: &DataFileMeta| ManifestEntry {
                kind,
                partition: m.partition.clone(),
                bucket: m.bucket,
                total_buckets: m.total_buckets,
                file: file.clone(),
            };
            let (data, compact) = (&m.increment.data, &m.increment.compact);
            out.extend(data.deleted_files.iter().map(|f| entry(FileKind::Delete, f)));
            out.extend(data.new_files.iter().map(|f| entry(FileKind::Add, f)));
            out.extend(compact.compact_before.iter().map(|f| entry(FileKind::Delete, f)));
            out.extend(compact.compact_after.iter().map(|f| entry(FileKind::Add, f)));
        }
        out
    }

    /// Paimon's checks: files to delete are still live; bucket counts agree; at levels >= 1 of a bucket,
    /// key ranges do not overlap once the commit is applied.
    fn check_conflicts(&self, live: &LiveFiles, c: &Committable, delta: &[ManifestEntry]) -> Result<()> {
        for e in delta.iter().filter(|e| e.kind == FileKind::Delete) {
            if !live.contains_key(&e.identifier()) {
                return Err(Error::Conflict {
                    message: format!(
                        "file deletion conflict: {} (bucket {}, level {}) is no longer live; another commit removed it",
                        e.file.file_name, e.bucket, e.file.level
                    ),
                });
            }
        }
        // Only real bucket counts: dynamic buckets record -1 and postponed files -2 (Paimon skips those too).
        let mut bucket_counts: std::collections::HashMap<&BinaryRow, i32> = std::collections::HashMap::new();
        for e in live.values().filter(|e| e.total_buckets > 0) {
            bucket_counts.entry(&e.partition).or_insert(e.total_buckets);
        }
        for m in c.messages.iter().filter(|m| m.total_buckets > 0) {
            if let Some(&n) = bucket_counts.get(&m.partition) {
                if n != m.total_buckets && !m.is_empty() {
                    return Err(Error::Conflict {
                        message: format!("total buckets changed: table has {n}, commit has {}", m.total_buckets),
                    });
                }
            }
        }
        crate::commit::check::sequence_order(live, &c.messages)?;
        if self.key_types.is_empty() {
            return Ok(());
        }
        let touched: HashSet<(&BinaryRow, i32)> = c.messages.iter().map(|m| (&m.partition, m.bucket)).collect();
        let mut merged = LiveFiles::new();
        for (id, e) in live {
            if touched.contains(&(&e.partition, e.bucket)) && e.file.level > 0 {
                merged.insert(id.clone(), e.clone());
            }
        }
        merge_into(&mut merged, delta.iter().filter(|e| e.file.level > 0).cloned().collect());
        let mut by_level: BTreeMap<(Vec<u8>, i32, i32), Vec<KeyRange>> = BTreeMap::new();
        for e in merged.values() {
            by_level.entry((e.partition.serialize(), e.bucket, e.file.level)).or_default().push(KeyRange {
                min: e.file.min_key.to_datums(&self.key_types)?,
                max: e.file.max_key.to_datums(&self.key_types)?,
                file: &e.file.file_name,
            });
        }
        for ((_, bucket, level), mut files) in by_level {
            files.sort_by(|a, b| compare_rows(&a.min, &b.min));
            for pair in files.windows(2) {
                if compare_rows(&pair[0].max, &pair[1].min).is_ge() {
                    return Err(Error::Conflict {
                        message: format!(
                            "LSM conflict: at level {level} of bucket {bucket}, the key ranges of {} and {} overlap",
                            pair[0].file, pair[1].file
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    fn prepare(
        &self,
        latest: Option<&Snapshot>,
        c: &Committable,
        kind: CommitKind,
        delta: &[ManifestEntry],
        written: &mut Vec<String>,
    ) -> Result<Attempt> {
        let _span = tracing::debug_span!("prepare_commit").entered();
        // Base = everything the previous snapshot listed; compacted into fresh manifests when it grows long.
        let mut base: Vec<ManifestFileMeta> = match latest {
            Some(s) => self.manifests.data_manifests(s)?,
            None => Vec::new(),
        };
        if base.len() > MANIFEST_MERGE_MIN_COUNT {
            let mut live = LiveFiles::new();
            for m in &base {
                merge_into(&mut live, self.manifests.read_manifest_of(m)?);
            }
            let entries: Vec<ManifestEntry> = live.into_values().collect();
            base = self.manifests.write_manifests(&entries, written)?;
        }
        let delta_metas = self.manifests.write_manifests(delta, written)?;
        let (base_list, base_size) = self.manifests.write_manifest_list(&base, written)?;
        let (delta_list, delta_size) = self.manifests.write_manifest_list(&delta_metas, written)?;
        let index_manifest = self.next_index_manifest(latest, c, written)?;
        // Changelog files go into a manifest list of their own (Paimon's `changelogManifestList`).
        let changelog: Vec<ManifestEntry> = c
            .messages
            .iter()
            .flat_map(|m| {
                m.increment.data.changelog_files.iter().chain(&m.increment.compact.changelog_files).map(move |f| {
                    ManifestEntry {
                        kind: FileKind::Add,
                        partition: m.partition.clone(),
                        bucket: m.bucket,
                        total_buckets: m.total_buckets,
                        file: f.clone(),
                    }
                })
            })
            .collect();
        let (changelog_list, changelog_size, changelog_rows) = if changelog.is_empty() {
            (None, None, None)
        } else {
            let metas = self.manifests.write_manifests(&changelog, written)?;
            let (list, size) = self.manifests.write_manifest_list(&metas, written)?;
            (Some(list), Some(size), Some(changelog.iter().map(|e| e.file.row_count).sum::<i64>()))
        };

        let added: i64 = delta.iter().filter(|e| e.kind == FileKind::Add).map(|e| e.file.row_count).sum();
        let deleted: i64 = delta.iter().filter(|e| e.kind == FileKind::Delete).map(|e| e.file.row_count).sum();
        let snapshot = Snapshot {
            version: SNAPSHOT_VERSION,
            uuid: Some(uuid::Uuid::new_v4().to_string()),
            id: latest.map_or(1, |s| s.id + 1),
            schema_id: self.schema_id,
            base_manifest_list: base_list,
            base_manifest_list_size: Some(base_size),
            delta_manifest_list: delta_list,
            delta_manifest_list_size: Some(delta_size),
            changelog_manifest_list: changelog_list,
            changelog_manifest_list_size: changelog_size,
            index_manifest,
            commit_user: self.commit_user.clone(),
            writer_version: Some(WRITER_VERSION.to_string()),
            commit_identifier: c.identifier,
            commit_kind: kind,
            time_millis: now_millis(),
            total_record_count: Some(latest.and_then(|s| s.total_record_count).unwrap_or(0) + added - deleted),
            delta_record_count: Some(added - deleted),
            changelog_record_count: changelog_rows,
            watermark: latest.and_then(|s| s.watermark),
            statistics: None,
            properties: c.properties.clone(),
            next_row_id: latest.and_then(|s| s.next_row_id),
            operation: None,
            extra: Default::default(),
        };
        Ok(Attempt { snapshot, written: written.clone() })
    }

    /// The index manifest of the new snapshot: the previous listing with this commit's index changes
    /// applied (Paimon's `BucketedCombiner`: a new file of a type replaces that bucket's file of the type).
    fn next_index_manifest(
        &self,
        latest: Option<&Snapshot>,
        c: &Committable,
        written: &mut Vec<String>,
    ) -> Result<Option<String>> {
        let has_changes = c.messages.iter().any(|m| {
            let (new, deleted) = index_changes(m);
            !new.is_empty() || !deleted.is_empty()
        });
        let previous = latest.and_then(|s| s.index_manifest.clone());
        if !has_changes {
            return Ok(previous);
        }
        let mut entries = match latest {
            Some(s) => self.manifests.index_entries(s)?,
            None => Vec::new(),
        };
        for m in &c.messages {
            let (new, deleted) = index_changes(m);
            let deleted: HashSet<&str> = deleted.iter().map(|f| f.file_name.as_str()).collect();
            let replaced_types: HashSet<&str> = new
                .iter()
                .map(|f| f.index_type.as_str())
                .filter(|t| !(self.dv_index_by_name && *t == DELETION_VECTORS_INDEX))
                .collect();
            entries.retain(|e| {
                let same_bucket = e.partition == m.partition && e.bucket == m.bucket;
                let replaced = deleted.contains(e.index_file.file_name.as_str())
                    || replaced_types.contains(e.index_file.index_type.as_str());
                !(same_bucket && replaced)
            });
            entries.extend(new.into_iter().map(|f| IndexManifestEntry {
                kind: FileKind::Add,
                partition: m.partition.clone(),
                bucket: m.bucket,
                index_file: f.clone(),
            }));
        }
        if self.dv_index_by_name {
            vectors_once_per_file(&entries)?;
        }
        if entries.is_empty() {
            return Ok(None);
        }
        self.manifests.write_index_manifest(&entries, written).map(Some)
    }

    fn clean_up(&self, written: &[String]) {
        for path in written {
            if let Err(e) = self.io.delete(path) {
                tracing::warn!(error = %e, path, "could not remove a file of a failed commit");
            }
        }
    }
}

/// Refuses an index listing in which a data file has vectors in two index files of its partition (Paimon's
/// `GlobalCombiner` refuses it too): which one applies would be a guess.
fn vectors_once_per_file(entries: &[IndexManifestEntry]) -> Result<()> {
    let mut seen: HashSet<(&BinaryRow, i32, &str)> = HashSet::new();
    for e in entries.iter().filter(|e| e.index_file.index_type == DELETION_VECTORS_INDEX) {
        for r in e.index_file.dv_ranges.iter().flatten() {
            if !seen.insert((&e.partition, e.bucket, r.data_file_name.as_str())) {
                return Err(Error::Conflict {
                    message: format!(
                        "data file {} would have deletion vectors in two index files (another commit added one); \
                         nothing was committed: retry",
                        r.data_file_name
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A message's index files, of both halves: (new, deleted).
fn index_changes(m: &CommitMessage) -> (Vec<&IndexFileMeta>, Vec<&IndexFileMeta>) {
    let (data, compact) = (&m.increment.data, &m.increment.compact);
    (
        data.new_index_files.iter().chain(&compact.new_index_files).collect(),
        data.deleted_index_files.iter().chain(&compact.deleted_index_files).collect(),
    )
}

pub use strata_spec::now_millis;
