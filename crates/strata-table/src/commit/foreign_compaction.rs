//! Compactions by another engine in the buckets a Strata commit compacts.
//!
//! Paimon before 2.0 checks a fixed-bucket commit against concurrent ones by its data files only (files it
//! deletes must be live, level key ranges must not overlap: `ConflictDetection` in 1.4), never by its
//! deletion vectors. A writer of that engine that compacts keeps its bucket's levels and vectors in memory
//! across commits; after another engine compacted the bucket, its next compaction still passes those checks
//! (it deletes only level-0 files of its own) and commits its vectors as the bucket's whole index: vectors for
//! files that are gone, none for the rows that moved, and every delete since its state was loaded comes back.
//! Nothing Strata commits can make that commit fail, so Strata does not compact a deletion-vector bucket that
//! another engine compacted recently: the commit is refused with a [`Conflict`](Error::Conflict) that names
//! the way out (that engine's writers with `write-only`, one compactor). docs/ARCHITECTURE.md, "Two engines
//! compacting one bucket", has the sequence.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use strata_spec::options::FOREIGN_COMPACTION_WINDOW;
use strata_spec::{BinaryRow, CommitKind, CommitMessage, Error, ErrorKind, Result, Snapshot};

use crate::commit::WRITER_VERSION;
use crate::meta::manifest_io::ManifestStore;
use crate::meta::snapshot_manager::SnapshotManager;

/// The default of `strata.foreign-compaction.window`: an hour. A writer that compacts commits far more often
/// than that while it runs, and Paimon drops a bucket writer's state once it has been idle for a commit.
pub(crate) const DEFAULT_FOREIGN_COMPACTION_WINDOW: Duration = Duration::from_secs(3600);

/// At most this many snapshots are read back from the latest one by one check: the window is then the last
/// this many snapshots within it (a writer of another engine that still compacts commits again long before).
const MAX_SNAPSHOTS_SCANNED: i64 = 2_000;

/// A COMPACT snapshot another engine committed.
#[derive(Debug, Clone)]
struct ForeignCompaction {
    snapshot: i64,
    time_millis: i64,
    commit_user: String,
    buckets: Vec<(BinaryRow, i32)>,
}

/// What this process already read of one table's snapshots: every foreign compaction from `covered_since`
/// (a commit time) up to snapshot `up_to`, whose commit time and user tell it apart from a snapshot written
/// under the same id after a rollback.
#[derive(Debug)]
struct Scanned {
    up_to: i64,
    up_to_stamp: (i64, String),
    covered_since: i64,
    found: Vec<ForeignCompaction>,
}

/// By table (its snapshot directory and the store's address): one lock per table, so checks of different
/// tables do not wait on each other's reads.
type Cache = HashMap<(String, usize), Arc<Mutex<Option<Scanned>>>>;

static SCANNED: LazyLock<Mutex<Cache>> = LazyLock::new(Default::default);

/// Whether the snapshot was committed by Strata (by its `writerVersion`; Paimon's Java writers leave it out).
fn by_strata(s: &Snapshot) -> bool {
    let prefix = WRITER_VERSION.split_once('-').map_or(WRITER_VERSION, |(name, _)| name);
    s.writer_version.as_deref().is_some_and(|v| v.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('-')))
}

/// Refuses `messages` when one of them compacts a deletion-vector bucket (or changes its vectors) that a
/// COMPACT snapshot of another engine changed within `window` before `now_millis`.
pub(crate) fn refuse_beside_foreign_compactor(
    snapshots: &SnapshotManager,
    manifests: &ManifestStore,
    latest: &Snapshot,
    messages: &[CommitMessage],
    window: Duration,
    now_millis: i64,
) -> Result<()> {
    let compacted: Vec<&CommitMessage> = messages.iter().filter(|m| crate::commit::check::checks_dv_index(m)).collect();
    if compacted.is_empty() || window.is_zero() {
        return Ok(());
    }
    let since = window_start(now_millis, window);
    let mut found = foreign_compactions_since(snapshots, manifests, latest, since)?;
    found.sort_by_key(|f| std::cmp::Reverse(f.snapshot));
    for f in &found {
        let Some(m) = compacted.iter().find(|m| f.buckets.iter().any(|(p, b)| *p == m.partition && *b == m.bucket))
        else {
            continue;
        };
        let minutes = (now_millis - f.time_millis).max(0) / 60_000;
        return Err(Error::Conflict {
            message: format!(
                "bucket {} was compacted by another engine {minutes} min ago (snapshot {}, commit user {}, no Strata \
                 writerVersion): Paimon before 2.0 does not check deletion vectors between concurrent compactions \
                 of a fixed bucket, so if that engine's writer is still running, its next compaction would commit \
                 vectors over this one's and deleted rows would come back. Nothing was committed. Let one engine \
                 compact: set 'write-only' = 'true' on the other engine's writers (Paimon's dedicated compaction), \
                 or, once it has stopped, compact with --ignore-foreign-compactions (the table option \
                 '{FOREIGN_COMPACTION_WINDOW}', default 1 h, sets how long a foreign compaction counts)",
                m.bucket, f.snapshot, f.commit_user
            ),
        });
    }
    Ok(())
}

/// The snapshot of the latest COMPACT commit of another engine that changed (`partition`, `bucket`) within
/// the table's window before now, as of `latest`: a writer leaves such a bucket's compaction to that engine.
pub(crate) fn compacted_by_another_engine(
    table: &crate::table::Table,
    latest: &Snapshot,
    partition: &BinaryRow,
    bucket: i32,
) -> Result<Option<i64>> {
    let window = table.foreign_compaction_window()?;
    if window.is_zero() {
        return Ok(None);
    }
    let since = window_start(crate::now_millis(), window);
    let found = foreign_compactions_since(table.snapshot_manager(), &table.manifest_store()?, latest, since)?;
    Ok(found.iter().filter(|f| f.buckets.iter().any(|(p, b)| p == partition && *b == bucket)).map(|f| f.snapshot).max())
}

/// The commit time from which a foreign compaction counts: `window` before `now_millis`.
fn window_start(now_millis: i64, window: Duration) -> i64 {
    now_millis.saturating_sub(i64::try_from(window.as_millis()).unwrap_or(i64::MAX))
}

/// The foreign compactions committed at or after `since_millis`, up to `latest`.
fn foreign_compactions_since(
    snapshots: &SnapshotManager,
    manifests: &ManifestStore,
    latest: &Snapshot,
    since_millis: i64,
) -> Result<Vec<ForeignCompaction>> {
    let key = (snapshots.dir().to_string(), Arc::as_ptr(snapshots.io()).cast::<u8>() as usize);
    let table = SCANNED.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().clone();
    let mut scanned = table.lock().unwrap_or_else(|e| e.into_inner());
    let still = match scanned.as_ref() {
        Some(s) if s.up_to <= latest.id && s.covered_since <= since_millis => match snapshots.snapshot(s.up_to) {
            Ok(at) => (at.time_millis, at.commit_user) == s.up_to_stamp,
            Err(e) if e.kind() == ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        },
        _ => false,
    };
    let (floor, mut found) = match scanned.take().filter(|_| still) {
        Some(s) => (s.up_to, s.found),
        None => (0, Vec::new()),
    };
    let cap = latest.id.saturating_sub(MAX_SNAPSHOTS_SCANNED);
    let capped = cap > floor;
    let floor = floor.max(cap);
    let mut id = latest.id;
    while id > floor {
        let s = if id == latest.id {
            latest.clone()
        } else {
            match snapshots.snapshot(id) {
                Ok(s) => s,
                // Expired: nothing older is left.
                Err(e) if e.kind() == ErrorKind::NotFound => break,
                Err(e) => return Err(e),
            }
        };
        if s.time_millis < since_millis {
            break;
        }
        if s.commit_kind == CommitKind::Compact && !by_strata(&s) {
            match changed_buckets(manifests, &s) {
                Ok(buckets) => found.push(ForeignCompaction {
                    snapshot: s.id,
                    time_millis: s.time_millis,
                    commit_user: s.commit_user.clone(),
                    buckets,
                }),
                // Expired while this was reading it.
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        id -= 1;
    }
    if capped && id == floor && floor > 0 {
        tracing::warn!(
            latest = latest.id,
            "checked the last {MAX_SNAPSHOTS_SCANNED} snapshots for foreign compactions"
        );
    }
    found.retain(|f| f.time_millis >= since_millis && f.snapshot <= latest.id);
    *scanned = Some(Scanned {
        up_to: latest.id,
        up_to_stamp: (latest.time_millis, latest.commit_user.clone()),
        covered_since: since_millis,
        found: found.clone(),
    });
    Ok(found)
}

/// The (partition, bucket)s whose files a snapshot's delta changed.
fn changed_buckets(manifests: &ManifestStore, s: &Snapshot) -> Result<Vec<(BinaryRow, i32)>> {
    let mut out: Vec<(BinaryRow, i32)> = Vec::new();
    for meta in manifests.read_manifest_list_sized(&s.delta_manifest_list, s.delta_manifest_list_size)? {
        for e in manifests.read_manifest_of(&meta)? {
            if !out.iter().any(|(p, b)| *p == e.partition && *b == e.bucket) {
                out.push((e.partition, e.bucket));
            }
        }
    }
    Ok(out)
}
