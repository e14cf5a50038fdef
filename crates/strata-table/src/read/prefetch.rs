//! Reading ahead on object stores. A plan names every file its splits will read, in the order the read
//! threads take them; on a store that answers in tens of milliseconds, fetching each only when a thread
//! gets to it would leave the threads waiting on the network most of the time. [`Prefetching`] fetches the
//! plan's files on I/O threads of its own, up to a byte budget ahead of the readers, and hands each to the
//! reader that asks for it. Anything it has not fetched (or failed to fetch) is read from the store as
//! usual, so it changes when bytes arrive, never which bytes.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};
use strata_io::{FileIO, FileStatus, RequestCounts};
use strata_spec::Result;

/// Bytes fetched ahead of the readers at most (one file larger than this is still fetched, alone).
const BUDGET: u64 = 256 << 20;

/// Fetching threads.
const THREADS: usize = 4;

enum Slot {
    Fetching,
    /// The bytes, and the size the plan gave (what they hold of the budget).
    Ready(Vec<u8>, u64),
    /// Taken, failed, or read by a reader before its fetch: a read goes to the store itself (and gets the
    /// error, if it persists).
    Direct,
}

struct State {
    /// The plan's files (path, size) in reading order.
    order: Vec<(String, u64)>,
    next: usize,
    slots: HashMap<String, Slot>,
    /// Bytes fetching or fetched and not yet taken.
    held: u64,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    inner: Arc<dyn FileIO>,
}

/// A [`FileIO`] that reads a plan's files ahead (see the module docs); every other call goes to `inner`.
pub(super) struct Prefetching {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Prefetching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefetching").field("inner", &self.shared.inner).finish()
    }
}

impl Prefetching {
    /// Starts fetching `files` (path, size), in order, from `inner`.
    pub(super) fn new(inner: Arc<dyn FileIO>, files: Vec<(String, u64)>) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State { order: files, next: 0, slots: HashMap::new(), held: 0, stop: false }),
            changed: Condvar::new(),
            inner,
        });
        let threads = (0..THREADS)
            .map(|_| {
                let shared = shared.clone();
                std::thread::spawn(move || fetch_loop(&shared))
            })
            .collect();
        Prefetching { shared, threads }
    }
}

fn fetch_loop(shared: &Shared) {
    loop {
        let (path, size) = {
            let mut st = shared.state.lock();
            loop {
                if st.stop || st.next >= st.order.len() {
                    return;
                }
                let size = st.order[st.next].1;
                if st.held == 0 || st.held + size <= BUDGET {
                    break;
                }
                shared.changed.wait(&mut st);
            }
            let (path, size) = st.order[st.next].clone();
            st.next += 1;
            if st.slots.contains_key(&path) {
                // Taken by a reader already, or listed twice.
                continue;
            }
            st.slots.insert(path.clone(), Slot::Fetching);
            st.held += size;
            (path, size)
        };
        let _span = tracing::trace_span!("prefetch", path).entered();
        let fetched = shared.inner.read(&path);
        let mut st = shared.state.lock();
        let st = &mut *st;
        let still_wanted = matches!(st.slots.get(&path), Some(Slot::Fetching));
        match fetched {
            Ok(bytes) if still_wanted => {
                st.slots.insert(path, Slot::Ready(bytes, size));
            }
            Ok(_) => st.held = st.held.saturating_sub(size),
            Err(e) => {
                tracing::debug!(path, error = %e, "prefetch failed; the reader reads the file itself");
                st.held = st.held.saturating_sub(size);
                st.slots.insert(path, Slot::Direct);
            }
        }
        shared.changed.notify_all();
    }
}

impl Drop for Prefetching {
    fn drop(&mut self) {
        self.shared.state.lock().stop = true;
        self.shared.changed.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl FileIO for Prefetching {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        let mut st = self.shared.state.lock();
        loop {
            match st.slots.get(path) {
                Some(Slot::Fetching) => self.shared.changed.wait(&mut st),
                Some(Slot::Ready(..)) => {
                    if let Some(Slot::Ready(bytes, size)) = st.slots.insert(path.to_string(), Slot::Direct) {
                        st.held = st.held.saturating_sub(size);
                        self.shared.changed.notify_all();
                        return Ok(bytes);
                    }
                    break;
                }
                Some(Slot::Direct) => break,
                None => {
                    // Not fetched yet: read it here, and keep the fetchers from fetching it again.
                    st.slots.insert(path.to_string(), Slot::Direct);
                    break;
                }
            }
        }
        drop(st);
        self.shared.inner.read(path)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.shared.inner.read_range(path, offset, len)
    }

    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        self.shared.inner.read_ranges(path, ranges)
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.shared.inner.size(path)
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.shared.inner.write(path, data)
    }

    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn strata_io::FileSink>>> {
        self.shared.inner.create_sink(path)
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        self.shared.inner.create_if_absent(path, data)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        self.shared.inner.exists(path)
    }

    fn file_exists(&self, path: &str) -> Result<bool> {
        self.shared.inner.file_exists(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        self.shared.inner.list(dir)
    }

    fn delete(&self, path: &str) -> Result<()> {
        self.shared.inner.delete(path)
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        self.shared.inner.delete_dir(path)
    }

    fn mkdirs(&self, path: &str) -> Result<()> {
        self.shared.inner.mkdirs(path)
    }

    fn request_counts(&self) -> Option<RequestCounts> {
        self.shared.inner.request_counts()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use strata_io::MemoryFileIO;

    #[test]
    fn reads_return_the_files_bytes_whether_fetched_ahead_or_not() {
        let mem = Arc::new(MemoryFileIO::new());
        let files: Vec<(String, u64)> = (0..20).map(|i| (format!("/t/f{i}"), 10)).collect();
        for (i, (p, _)) in files.iter().enumerate() {
            mem.write(p, format!("file {i}").as_bytes()).unwrap();
        }
        let io = Prefetching::new(mem.clone(), files.clone());
        // Out of order, twice each, and one file the plan does not name.
        for i in (0..20).rev().chain(0..20) {
            assert_eq!(io.read(&format!("/t/f{i}")).unwrap(), format!("file {i}").as_bytes());
        }
        mem.write("/t/other", b"x").unwrap();
        assert_eq!(io.read("/t/other").unwrap(), b"x");
        assert!(io.read("/t/missing").is_err());
        drop(io);
    }

    #[test]
    fn a_file_that_vanished_before_its_fetch_is_the_readers_error() {
        let mem = Arc::new(MemoryFileIO::new());
        let io = Prefetching::new(mem, vec![("/t/gone".into(), 5)]);
        let e = io.read("/t/gone").unwrap_err();
        assert_eq!(e.kind(), strata_spec::ErrorKind::NotFound);
    }
}
