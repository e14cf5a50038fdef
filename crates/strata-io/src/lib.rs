//! FileIO: the one seam through which Strata touches storage.
//!
//! Everything Strata reads or writes goes through [`FileIO`]. The trait is synchronous and object-store
//! shaped (whole-object writes, range reads, listing by prefix directory, one conditional create), so a
//! backend with conditional PUT (`If-None-Match: *`) fits behind it as well as a local file system.

mod local;
mod memory;
mod scratch;

use std::fmt::Debug;

pub use local::LocalFileIO;
pub use memory::MemoryFileIO;
pub use scratch::ScratchDir;
pub use strata_spec::{Error, Result};

/// What a listing returns for each entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    /// Full path of the entry.
    pub path: String,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// Whether the entry is a directory.
    pub is_dir: bool,
    /// Last modification, epoch milliseconds.
    pub modified_millis: i64,
}

impl FileStatus {
    /// The last path component.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// Storage operations, with the guarantees Strata's commit protocol relies on.
///
/// Paths are `/`-separated strings; what they are relative to is the implementation's business (a local
/// file system takes absolute paths).
///
/// # Contract
/// - **Durability.** When a mutating call returns `Ok`, its effect survives a crash of the process and of
///   the machine (local: the file and its directory are fsynced).
/// - **Whole objects.** [`write`](FileIO::write) and [`create_if_absent`](FileIO::create_if_absent) make
///   a file visible only with its complete content: no reader ever sees a prefix.
/// - **Create-if-absent is the only arbiter.** Of any number of concurrent `create_if_absent` calls on one
///   path, at most one returns `Ok(true)`; the others return `Ok(false)` and the existing object is left
///   untouched. This is what makes snapshot commits atomic; nothing else may assume mutual exclusion.
/// - **Read-after-write.** Once a write returned, `read`, `exists` and `list` from any thread see it.
/// - **Errors.** A failed call may or may not have taken effect (a timeout after the write landed): callers
///   that need to know must look (see the commit's idempotence check). Missing files are
///   [`Error::NotFound`]; nothing panics on storage errors.
pub trait FileIO: Send + Sync + Debug {
    /// Reads a whole file.
    fn read(&self, path: &str) -> Result<Vec<u8>>;

    /// Reads `len` bytes at `offset`; a range past the end is an error naming the file.
    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>>;

    /// Size of a file in bytes.
    fn size(&self, path: &str) -> Result<u64>;

    /// Writes (or replaces) a whole file, atomically visible and durable on return.
    fn write(&self, path: &str, data: &[u8]) -> Result<()>;

    /// Creates `path` with `data` only if nothing is there: `Ok(true)` if this call created it, `Ok(false)`
    /// if it already existed (and was not touched).
    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool>;

    /// Whether a file or directory exists.
    fn exists(&self, path: &str) -> Result<bool>;

    /// The entries directly under `dir` (empty if `dir` does not exist).
    fn list(&self, dir: &str) -> Result<Vec<FileStatus>>;

    /// Deletes a file; deleting a missing file is not an error.
    fn delete(&self, path: &str) -> Result<()>;

    /// Deletes a directory and everything under it; a missing directory is not an error.
    fn delete_dir(&self, path: &str) -> Result<()>;

    /// Creates a directory and its parents (a no-op on stores without directories).
    fn mkdirs(&self, path: &str) -> Result<()>;
}

/// Joins path segments with `/`.
pub fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}

/// The parent directory of a path ("" when there is none).
pub fn parent(path: &str) -> &str {
    match path.trim_end_matches('/').rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => "",
    }
}
