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
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use strata_spec::options::FOREIGN_COMPACTION_WINDOW;
use strata_spec::{BinaryRow, CommitKind, CommitMessage, Error, ErrorKind, Result, Snapshot};

use crate::commit::WRITER_VERSION;
use crate::manifest_io::ManifestStore;
use crate::snapshot_manager::SnapshotManager;

/// The default of `strata.foreign-compaction.window`: an hour. A writer that compacts commits far more often
/// than that while it runs, and Paimon drops a bucket writer's state once it has been idle for a commit.
pub(crate) const DEFAULT_FOREIGN_COMPACTION_WINDOW: Duration = Duration::from_secs(3600);

/// At most this many snapshots are read back from the latest one per check (more only when earlier checks
/// of this process read the ones before).
const MAX_SNAPSHOTS_SCANNED: i64 = 2_000;

/// A COMPACT snapshot another engine committed.
#[derive(Debug, Clone)]
struct ForeignCompaction {
    snapshot: i64,
    time_millis: i64,
    commit_user: String,
    buckets: Vec<(BinaryRow, i32)>,
}

/// What this process already read of one table's snapshots: up to which one (and its commit time, which
/// tells a snapshot rewritten after a rollback), and the foreign compactions among them.
#[derive(Debug, Default)]
struct Scanned {
    up_to: i64,
    up_to_time: i64,
    found: Vec<ForeignCompaction>,
}

static SCANNED: LazyLock<Mutex<HashMap<String, Scanned>>> = LazyLock::new(Default::default);

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
    let compacted: Vec<&CommitMessage> = messages.iter().filter(|m| crate::commit_check::checks_dv_index(m)).collect();
    if compacted.is_empty() || window.is_zero() {
        return Ok(());
    }
    let since = now_millis.saturating_sub(i64::try_from(window.as_millis()).unwrap_or(i64::MAX));
    let found = foreign_compactions_since(snapshots, manifests, latest, since)?;
    for f in found.iter().rev() {
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

/// The foreign compactions committed at or after `since_millis`, up to `latest`, oldest first.
fn foreign_compactions_since(
    snapshots: &SnapshotManager,
    manifests: &ManifestStore,
    latest: &Snapshot,
    since_millis: i64,
) -> Result<Vec<ForeignCompaction>> {
    let key = snapshots.snapshot_path(0);
    let mut cache = SCANNED.lock().unwrap_or_else(|e| e.into_inner());
    let scanned = cache.entry(key).or_default();
    // A rollback rewrites snapshot ids: what was read is only good while the last snapshot read is unchanged.
    let still = scanned.up_to > 0
        && scanned.up_to <= latest.id
        && match snapshots.snapshot(scanned.up_to) {
            Ok(s) => s.time_millis == scanned.up_to_time,
            Err(e) if e.kind() == ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
    if !still {
        *scanned = Scanned::default();
    }
    let mut fresh = Vec::new();
    let floor = scanned.up_to.max(latest.id - MAX_SNAPSHOTS_SCANNED);
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
            fresh.push(ForeignCompaction {
                snapshot: s.id,
                time_millis: s.time_millis,
                commit_user: s.commit_user.clone(),
                buckets: changed_buckets(manifests, &s)?,
            });
        }
        id -= 1;
    }
    fresh.reverse();
    scanned.found.extend(fresh);
    scanned.found.retain(|f| f.time_millis >= since_millis && f.snapshot <= latest.id);
    scanned.up_to = latest.id;
    scanned.up_to_time = latest.time_millis;
    Ok(scanned.found.clone())
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
