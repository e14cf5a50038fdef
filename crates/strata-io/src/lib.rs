//! FileIO: the one seam through which Strata touches storage.
//!
//! Everything Strata reads or writes goes through [`FileIO`]. The trait is synchronous and object-store
//! shaped (whole-object writes, at once or streamed through a [`FileSink`], range reads, listing by prefix
//! directory, one conditional create), so a backend with conditional PUT (`If-None-Match: *`) fits behind
//! it as well as a local file system.

mod block_crc;
mod cache;
mod local;
mod memory;
mod scratch;
mod sink;

use std::fmt::Debug;

pub use block_crc::BlockCrc32s;
pub use cache::{is_immutable_file, CacheStats, CachingFileIO};
pub use local::LocalFileIO;
pub use memory::MemoryFileIO;
pub use scratch::ScratchDir;
pub use sink::{create_file, FileSink, InspectSink};
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

/// Requests a store answered, by kind (object stores count them; a local file system does not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// GETs (whole and ranged reads).
    pub get: u64,
    /// PUTs (each part of a multipart upload, its start and its completion count).
    pub put: u64,
    /// LISTs.
    pub list: u64,
    /// HEADs (sizes, existence).
    pub head: u64,
    /// DELETEs (a bulk delete of up to a thousand keys counts once).
    pub delete: u64,
}

impl RequestCounts {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.get + self.put + self.list + self.head + self.delete
    }

    /// The requests made since `earlier` (a count taken before).
    pub fn since(&self, earlier: &RequestCounts) -> RequestCounts {
        RequestCounts {
            get: self.get.saturating_sub(earlier.get),
            put: self.put.saturating_sub(earlier.put),
            list: self.list.saturating_sub(earlier.list),
            head: self.head.saturating_sub(earlier.head),
            delete: self.delete.saturating_sub(earlier.delete),
        }
    }
}

impl std::ops::Add for RequestCounts {
    type Output = RequestCounts;
    fn add(self, o: RequestCounts) -> RequestCounts {
        RequestCounts {
            get: self.get + o.get,
            put: self.put + o.put,
            list: self.list + o.list,
            head: self.head + o.head,
            delete: self.delete + o.delete,
        }
    }
}

impl std::fmt::Display for RequestCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} GET, {} PUT, {} LIST, {} HEAD, {} DELETE", self.get, self.put, self.list, self.head, self.delete)
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

    /// Reads several ranges of one file, in the order given; side by side where the storage waits per
    /// request (object stores coalesce close ranges and issue them concurrently).
    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        parallel_map(ranges, READ_AHEAD, |r| self.read_range(path, r.start, r.end.saturating_sub(r.start)))
            .into_iter()
            .collect()
    }

    /// Size of a file in bytes.
    fn size(&self, path: &str) -> Result<u64>;

    /// Writes (or replaces) a whole file, atomically visible and durable on return.
    fn write(&self, path: &str, data: &[u8]) -> Result<()>;

    /// A sink streaming a new file to `path` under [`FileSink`]'s contract (that of [`write`](FileIO::write),
    /// for a file handed over in pieces), or `None` where the store only writes whole files. Callers use
    /// [`create_file`], which buffers for the latter. A wrapper returns its inner store's sink (wrapped to
    /// see the bytes if it must), or `None` when that store has none.
    fn create_sink(&self, _path: &str) -> Result<Option<Box<dyn FileSink>>> {
        Ok(None)
    }

    /// Creates `path` with `data` only if nothing is there: `Ok(true)` if this call created it, `Ok(false)`
    /// if it already existed (and was not touched).
    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool>;

    /// Whether a file or directory exists.
    fn exists(&self, path: &str) -> Result<bool>;

    /// Whether a file exists (never a directory): on object stores one HEAD, where [`FileIO::exists`] also
    /// lists to find a directory.
    fn file_exists(&self, path: &str) -> Result<bool> {
        self.exists(path)
    }

    /// The entries directly under `dir` (empty if `dir` does not exist).
    fn list(&self, dir: &str) -> Result<Vec<FileStatus>>;

    /// Deletes a file; deleting a missing file is not an error.
    fn delete(&self, path: &str) -> Result<()>;

    /// Deletes a directory and everything under it; a missing directory is not an error.
    fn delete_dir(&self, path: &str) -> Result<()>;

    /// Creates a directory and its parents (a no-op on stores without directories).
    fn mkdirs(&self, path: &str) -> Result<()>;

    /// The requests made so far, where the storage counts them (object stores); wrappers pass it on.
    fn request_counts(&self) -> Option<RequestCounts> {
        None
    }
}

/// Requests a reader keeps in flight when it knows several files it needs (manifests, deletion vectors):
/// on an object store each waits tens of milliseconds, so they are issued side by side.
pub const READ_AHEAD: usize = 8;

/// The cores this process may use, read once: `available_parallelism` reads the cgroup's files on every
/// call (tens of microseconds, a quarter of a point lookup's time when each lookup asked).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `f` applied to every item on up to `max` threads at once; the results in the items' order. For I/O that
/// waits: many requests in flight hide a store's latency.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], max: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() <= 1 || max <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<parking_lot::Mutex<Option<R>>> = items.iter().map(|_| parking_lot::Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        *slots[i].lock() = Some(f(item));
    };
    // The calling thread works too, rather than waiting: one thread fewer to start (a point lookup of two
    // files started two for a few hundred microseconds of work).
    std::thread::scope(|s| {
        for _ in 1..max.min(items.len()) {
            s.spawn(work);
        }
        work();
    });
    // Every slot was filled: each index below the length was taken by exactly one thread.
    slots.into_iter().filter_map(|m| m.into_inner()).collect()
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
