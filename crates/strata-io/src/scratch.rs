//! Private local scratch directories: spilled write buffers and local lookup files.
//!
//! Scratch data is never part of a table: losing it costs a rebuild, never a row. Each directory is made on
//! first use under the system's temporary directory, carries the owning process id in its name, and goes
//! when its owner is dropped, so on every exit path but a killed process; the first scratch directory a
//! later process makes also removes those of processes that died ([`remove_stale_scratch_dirs`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use strata_spec::{Error, Result};

/// Prefixes of the local scratch directories Strata makes; each is followed by the owning process id.
pub(crate) const SCRATCH_PREFIXES: [&str; 4] = ["strata-spill-", "strata-lookup-", "strata-query-", "strata-cache-"];

/// A private local temporary directory, created on first use and removed with the value. Shared by
/// reference between threads: [`ScratchDir::file`] hands out names no other call of it returns.
#[derive(Debug)]
pub struct ScratchDir {
    prefix: &'static str,
    dir: Mutex<Option<tempfile::TempDir>>,
    counter: AtomicU64,
}

impl ScratchDir {
    /// A directory whose name starts with `prefix` (one of `strata-spill-`, `strata-lookup-` and
    /// `strata-query-`), not created yet.
    pub fn new(prefix: &'static str) -> Self {
        ScratchDir { prefix, dir: Mutex::new(None), counter: AtomicU64::new(0) }
    }

    /// The directory, created now if it does not exist yet.
    pub fn path(&self) -> Result<PathBuf> {
        let mut slot = self.dir.lock();
        if let Some(d) = slot.as_ref() {
            return Ok(d.path().to_path_buf());
        }
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| {
            remove_stale_scratch_dirs(&std::env::temp_dir());
        });
        let d = tempfile::Builder::new()
            .prefix(&format!("{}{}-", self.prefix, std::process::id()))
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir().display().to_string(), e))?;
        let path = d.path().to_path_buf();
        *slot = Some(d);
        Ok(path)
    }

    /// A fresh path in the directory for a file named after `name` (two calls never return the same path).
    pub fn file(&self, name: &str) -> Result<PathBuf> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        Ok(self.path()?.join(format!("{n}-{name}")))
    }

    /// Whether the directory has been created.
    pub fn exists(&self) -> bool {
        self.dir.lock().is_some()
    }
}

/// Removes the scratch directories under `tmp` whose owning process is gone (a writer killed with
/// `kill -9` leaves its spilled runs behind); returns how many. Only on systems with `/proc`, where a
/// process id can be checked; a directory whose owner is alive, or whose name does not carry an id, is
/// left alone.
pub(crate) fn remove_stale_scratch_dirs(tmp: &Path) -> usize {
    let proc_fs = Path::new("/proc");
    if !proc_fs.join("self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(tmp) else { return 0 };
    let own = std::process::id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = SCRATCH_PREFIXES
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != own && !proc_fs.join(pid.to_string()).exists() && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A writer killed mid-spill leaves `strata-spill-<pid>-*`; the next process removes it, and never a
    /// live process's directory or anything else.
    #[test]
    fn stale_scratch_dirs_of_dead_processes_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dead = tmp.path().join(format!("strata-spill-{}-abc", u32::MAX - 7));
        let live = tmp.path().join(format!("strata-lookup-{}-abc", std::process::id()));
        let other = tmp.path().join("strata-spill-notapid");
        for d in [&dead, &live, &other] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("run-0.arrow"), b"x").unwrap();
        }
        assert_eq!(remove_stale_scratch_dirs(tmp.path()), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
    }

    #[test]
    fn a_scratch_dir_is_made_on_first_use_and_removed_with_its_owner() {
        let d = ScratchDir::new("strata-spill-");
        assert!(!d.exists());
        let a = d.file("x").unwrap();
        let b = d.file("x").unwrap();
        assert_ne!(a, b);
        let dir = d.path().unwrap();
        assert!(dir.is_dir());
        assert!(dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("strata-spill-{}-", std::process::id())));
        drop(d);
        assert!(!dir.exists());
    }
}
