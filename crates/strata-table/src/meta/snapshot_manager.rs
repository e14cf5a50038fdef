//! Finding and reading snapshots (Paimon's `SnapshotManager` and `HintFileUtils`).
//!
//! `LATEST` and `EARLIEST` are hints only: `LATEST` is trusted when `snapshot-(id+1)` does not exist,
//! `EARLIEST` when `snapshot-id` does; otherwise the directory is listed. The snapshot files themselves are
//! the truth, and only a create-if-absent ever makes one.

use std::sync::Arc;

use strata_io::{join, FileIO};
use strata_spec::{Error, Result, ResultExt, Snapshot};

const SNAPSHOT_PREFIX: &str = "snapshot-";
const LATEST: &str = "LATEST";
const EARLIEST: &str = "EARLIEST";

/// Snapshots past the LATEST hint probed before listing.
const HINT_PROBES: usize = 16;

/// Reads a table's snapshots.
#[derive(Debug, Clone)]
pub struct SnapshotManager {
    io: Arc<dyn FileIO>,
    dir: String,
}

impl SnapshotManager {
    /// The manager of `<table>/snapshot`.
    pub fn new(io: Arc<dyn FileIO>, table: &str) -> Self {
        SnapshotManager { io, dir: join(table, "snapshot") }
    }

    /// `<table>/snapshot`
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The store the snapshots are read from.
    pub(crate) fn io(&self) -> &Arc<dyn FileIO> {
        &self.io
    }

    /// Path of `snapshot-<id>`.
    pub fn snapshot_path(&self, id: i64) -> String {
        join(&self.dir, &format!("{SNAPSHOT_PREFIX}{id}"))
    }

    /// Whether `snapshot-<id>` exists.
    pub fn snapshot_exists(&self, id: i64) -> Result<bool> {
        self.io.file_exists(&self.snapshot_path(id))
    }

    /// Reads and parses `snapshot-<id>`; errors name the file.
    pub fn snapshot(&self, id: i64) -> Result<Snapshot> {
        let path = self.snapshot_path(id);
        let _span = tracing::debug_span!("read_snapshot", id).entered();
        let bytes = self.io.read(&path)?;
        let s = Snapshot::from_json(&bytes).in_file(&path)?;
        if s.id != id {
            return Err(Error::corrupt_file(path, format!("holds snapshot id {}", s.id)));
        }
        Ok(s)
    }

    /// Snapshot `id`, or `None` where it does not exist (expired, or not committed yet): the one place a
    /// missing snapshot is told from one that cannot be read.
    pub fn try_snapshot(&self, id: i64) -> Result<Option<Snapshot>> {
        match self.snapshot(id) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_hint(&self, name: &str) -> Option<i64> {
        let path = join(&self.dir, name);
        // Paimon reads hints with a few quick retries: a concurrent overwrite may be in flight.
        for _ in 0..3 {
            match self.io.read(&path) {
                Ok(bytes) => return std::str::from_utf8(&bytes).ok().and_then(|s| s.trim().parse().ok()),
                Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => return None,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
        }
        None
    }

    /// All snapshot ids present, ascending.
    pub fn list_ids(&self) -> Result<Vec<i64>> {
        let mut ids: Vec<i64> = self
            .io
            .list(&self.dir)?
            .into_iter()
            .filter(|s| !s.is_dir)
            .filter_map(|s| s.name().strip_prefix(SNAPSHOT_PREFIX).and_then(|n| n.parse().ok()))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The latest snapshot id, if any. From the LATEST hint, the next ids are probed (a hint lags by the
    /// commits whose hint update has not landed yet, or failed), as Paimon does; only a missing or stale hint
    /// lists the directory, which object stores answer slowest.
    pub fn latest_id(&self) -> Result<Option<i64>> {
        if let Some(h) = self.read_hint(LATEST) {
            if h > 0 && self.snapshot_exists(h)? {
                let mut id = h;
                for _ in 0..HINT_PROBES {
                    match id.checked_add(1) {
                        Some(next) if self.snapshot_exists(next)? => id = next,
                        _ => return Ok(Some(id)),
                    }
                }
            }
        }
        Ok(self.list_ids()?.last().copied())
    }

    /// The earliest snapshot id, if any.
    pub fn earliest_id(&self) -> Result<Option<i64>> {
        if let Some(h) = self.read_hint(EARLIEST) {
            if h > 0 && self.snapshot_exists(h)? && (h == 1 || !self.snapshot_exists(h - 1)?) {
                return Ok(Some(h));
            }
        }
        Ok(self.list_ids()?.first().copied())
    }

    /// The latest snapshot, if any. On a store that counts requests (an object store) the LATEST hint's
    /// snapshot is read while the next id is probed, so a current hint costs two round trips, not four; on
    /// a local disk one after the other (a thread costs more there than the probe).
    pub fn latest(&self) -> Result<Option<Snapshot>> {
        if let Some(h) = self.read_hint(LATEST).filter(|&h| h > 0 && h < i64::MAX) {
            let (read, next) = if self.io.request_counts().is_some() {
                std::thread::scope(|s| {
                    let next = s.spawn(|| self.snapshot_exists(h + 1));
                    (self.snapshot(h), next.join().ok())
                })
            } else {
                (self.snapshot(h), Some(self.snapshot_exists(h + 1)))
            };
            if let (Ok(s), Some(Ok(false))) = (read, next) {
                return Ok(Some(s));
            }
        }
        match self.latest_id()? {
            None => Ok(None),
            Some(id) => self.snapshot(id).map(Some),
        }
    }

    /// Updates the LATEST hint. Best effort: a failure only costs readers a listing.
    pub fn write_latest_hint(&self, id: i64) {
        self.write_hint(LATEST, id);
    }

    /// Updates the EARLIEST hint (best effort).
    pub fn write_earliest_hint(&self, id: i64) {
        self.write_hint(EARLIEST, id);
    }

    fn write_hint(&self, name: &str, id: i64) {
        // Like Paimon: the number alone, no newline.
        if let Err(e) = self.io.write(&join(&self.dir, name), id.to_string().as_bytes()) {
            tracing::warn!(error = %e, hint = name, "could not update snapshot hint");
        }
    }
}
