//! A fault-injecting wrapper, for tests: fail the k-th operation, before or after it takes effect, or
//! tear a write.
//!
//! Where the wrapped store streams files ([`FileIO::create_sink`]: a local disk), files written piece by
//! piece go through its sink too, so faults reach the path data files take in production: opening a sink
//! (`create_sink`) and finishing it (`finish_sink`) are operations of their own. The pieces appended in
//! between are not counted, so the operations of a commit do not depend on how an encoder chunks its
//! bytes; a store failing mid-file is what a failed `finish_sink` leaves (nothing visible, the sink
//! abandoned), and the file writer's own tests fail stores mid-file.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use strata_io::{Error, FileIO, FileSink, FileStatus, Result};

/// What kind of operation a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// read, read_range, size, exists, list
    Read,
    /// write, create_if_absent, delete, delete_dir, mkdirs, create_sink, finish_sink
    Mutate,
}

/// How the chosen operation fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The call fails without doing anything.
    Before,
    /// The call takes effect, then reports an error (a timeout after the write landed).
    After,
    /// A `write` or `finish_sink` leaves a prefix of its data at the target, then reports an error (a
    /// store that breaks the whole-object contract, or a crash mid-write). `create_if_absent` is atomic by
    /// contract, so there, as for every other operation, it fails as [`Fault::Before`].
    Torn,
}

#[derive(Debug)]
struct Plan {
    fail_at: Option<u64>,
    fault: Fault,
    only: Option<OpKind>,
    /// Count only operations on paths containing this.
    path_contains: Option<String>,
}

/// Wraps a [`FileIO`], counts operations and fails the chosen one.
#[derive(Debug, Clone)]
pub struct FaultyFileIO {
    inner: Arc<dyn FileIO>,
    counter: Arc<AtomicU64>,
    plan: Arc<Mutex<Plan>>,
    log: Arc<Mutex<Vec<String>>>,
}

impl FaultyFileIO {
    /// A wrapper that injects nothing until [`FaultyFileIO::fail_at`] is called.
    pub fn new(inner: Arc<dyn FileIO>) -> Self {
        FaultyFileIO {
            inner,
            counter: Arc::new(AtomicU64::new(0)),
            plan: Arc::new(Mutex::new(Plan { fail_at: None, fault: Fault::Before, only: None, path_contains: None })),
            log: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Fails the `k`-th (0-based, counted from now) operation of kind `only` (or of any kind) with `fault`.
    pub fn fail_at(&self, k: u64, fault: Fault, only: Option<OpKind>) {
        self.counter.store(0, Ordering::SeqCst);
        self.arm(Plan { fail_at: Some(k), fault, only, path_contains: None });
    }

    /// Like [`FaultyFileIO::fail_at`], counting only operations on paths that contain `path_contains`
    /// (one bucket's directory, say), so the fault lands deterministically where work runs in parallel.
    pub fn fail_at_path(&self, k: u64, fault: Fault, only: Option<OpKind>, path_contains: &str) {
        self.arm(Plan { fail_at: Some(k), fault, only, path_contains: Some(path_contains.to_string()) });
    }

    fn arm(&self, plan: Plan) {
        self.counter.store(0, Ordering::SeqCst);
        *self.plan.lock() = plan;
        self.log.lock().clear();
    }

    /// Stops injecting.
    pub fn disarm(&self) {
        let mut plan = self.plan.lock();
        plan.fail_at = None;
        plan.path_contains = None;
    }

    /// Operations counted since the last [`FaultyFileIO::fail_at`] (of the kind it watches).
    pub fn count(&self) -> u64 {
        self.counter.load(Ordering::SeqCst)
    }

    /// The operations seen since the last `fail_at`, as "kind path" lines.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().clone()
    }

    /// Counts this call; `Some(fault)` if it is the one to fail.
    fn tick(&self, kind: OpKind, name: &str, path: &str) -> Option<Fault> {
        let plan = self.plan.lock();
        if plan.only.is_some_and(|o| o != kind)
            || plan.path_contains.as_ref().is_some_and(|p| !path.contains(p.as_str()))
        {
            return None;
        }
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        self.log.lock().push(format!("{name} {path}"));
        match plan.fail_at {
            Some(k) if k == n => Some(plan.fault),
            _ => None,
        }
    }

    fn injected(path: &str, fault: Fault) -> Error {
        Error::io(path, std::io::Error::other(format!("injected fault ({fault:?})")))
    }

    fn read_op<T>(&self, name: &str, path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        match self.tick(OpKind::Read, name, path) {
            None => f(),
            Some(Fault::After) => f().and_then(|_| Err(Self::injected(path, Fault::After))),
            Some(fault) => Err(Self::injected(path, fault)),
        }
    }

    fn mutate_op<T>(&self, name: &str, path: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        match self.tick(OpKind::Mutate, name, path) {
            None => f(),
            Some(Fault::After) => f().and_then(|_| Err(Self::injected(path, Fault::After))),
            Some(fault) => Err(Self::injected(path, fault)),
        }
    }

    fn write_op(&self, name: &str, path: &str, data: &[u8], f: impl FnOnce(&[u8]) -> Result<bool>) -> Result<bool> {
        match self.tick(OpKind::Mutate, name, path) {
            None => f(data),
            Some(Fault::After) => f(data).and_then(|_| Err(Self::injected(path, Fault::After))),
            Some(Fault::Torn) if name == "write" => {
                let _ = f(&data[..data.len() / 2]);
                Err(Self::injected(path, Fault::Torn))
            }
            Some(fault) => Err(Self::injected(path, fault)),
        }
    }
}

impl FileIO for FaultyFileIO {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        self.read_op("read", path, || self.inner.read(path))
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.read_op("read_range", path, || self.inner.read_range(path, offset, len))
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.read_op("size", path, || self.inner.size(path))
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.write_op("write", path, data, |d| self.inner.write(path, d).map(|()| true)).map(|_| ())
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        self.write_op("create_if_absent", path, data, |d| self.inner.create_if_absent(path, d))
    }

    fn exists(&self, path: &str) -> Result<bool> {
        self.read_op("exists", path, || self.inner.exists(path))
    }

    fn file_exists(&self, path: &str) -> Result<bool> {
        self.read_op("exists", path, || self.inner.file_exists(path))
    }

    fn request_counts(&self) -> Option<strata_io::RequestCounts> {
        self.inner.request_counts()
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        self.read_op("list", dir, || self.inner.list(dir))
    }

    fn delete(&self, path: &str) -> Result<()> {
        self.mutate_op("delete", path, || self.inner.delete(path))
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        self.mutate_op("delete_dir", path, || self.inner.delete_dir(path))
    }

    fn mkdirs(&self, path: &str) -> Result<()> {
        self.mutate_op("mkdirs", path, || self.inner.mkdirs(path))
    }

    /// The wrapped store's sink behind the faults, or `None` (writes then come whole, through `write`)
    /// where it has none, without counting an operation. The sink is opened before the operation is
    /// counted, so a failed `create_sink` may leave the parent directory the store made for it (a
    /// directory, which no reader of a table sees), never a file.
    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn FileSink>>> {
        let Some(inner) = self.inner.create_sink(path)? else {
            return Ok(None);
        };
        match self.tick(OpKind::Mutate, "create_sink", path) {
            None => {
                Ok(Some(Box::new(FaultySink { io: self.clone(), path: path.to_string(), inner, written: Vec::new() })))
            }
            // Staged and then abandoned (After), or never staged: dropping `inner` removes what it staged.
            Some(fault) => Err(Self::injected(path, fault)),
        }
    }
}

/// A wrapped store's sink whose `finish` is a counted operation. It keeps a copy of the bytes appended, for
/// a torn finish (tests write small files).
struct FaultySink {
    io: FaultyFileIO,
    path: String,
    inner: Box<dyn FileSink>,
    written: Vec<u8>,
}

impl FileSink for FaultySink {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.inner.write_all(data)?;
        self.written.extend_from_slice(data);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let FaultySink { io, path, inner, written } = *self;
        match io.tick(OpKind::Mutate, "finish_sink", &path) {
            None => inner.finish(),
            Some(Fault::After) => inner.finish().and_then(|()| Err(FaultyFileIO::injected(&path, Fault::After))),
            Some(Fault::Torn) => {
                // The sink abandoned, a prefix left at the target as a store breaking the contract would.
                drop(inner);
                let _ = io.inner.write(&path, &written[..written.len() / 2]);
                Err(FaultyFileIO::injected(&path, Fault::Torn))
            }
            Some(Fault::Before) => Err(FaultyFileIO::injected(&path, Fault::Before)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_io::MemoryFileIO;

    #[test]
    fn fails_exactly_the_chosen_operation() {
        let mem = Arc::new(MemoryFileIO::new());
        let io = FaultyFileIO::new(mem.clone());
        io.fail_at(1, Fault::Before, Some(OpKind::Mutate));
        io.write("/a", b"1").unwrap();
        assert!(io.write("/b", b"2").is_err());
        io.write("/c", b"3").unwrap();
        assert!(!mem.exists("/b").unwrap());

        io.fail_at(0, Fault::After, None);
        assert!(io.create_if_absent("/d", b"4").is_err());
        assert_eq!(mem.read("/d").unwrap(), b"4");

        io.fail_at(0, Fault::Torn, None);
        assert!(io.write("/e", b"abcdef").is_err());
        assert_eq!(mem.read("/e").unwrap(), b"abc");

        // A store without sinks: files come whole, through `write`, and opening one counts nothing.
        io.fail_at(0, Fault::Before, None);
        assert!(io.create_sink("/f").unwrap().is_none());
        assert_eq!(io.count(), 0);
    }

    /// Opening and finishing a sink on a store that streams are counted operations, failing as chosen; the
    /// pieces in between are not counted; a failed sink leaves nothing but what `fault` promises.
    #[test]
    fn sinks_fail_where_chosen() {
        let dir = tempfile::tempdir().unwrap();
        let io = FaultyFileIO::new(Arc::new(strata_io::LocalFileIO::new()));
        let at = |name: &str| format!("{}/{name}", dir.path().display());
        let entries = || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect::<Vec<_>>()
        };
        let write = |name: &str| -> Result<()> {
            let mut sink = strata_io::create_file(&(Arc::new(io.clone()) as Arc<dyn FileIO>), &at(name))?;
            sink.write_all(b"abc")?;
            sink.write_all(b"def")?;
            sink.finish()
        };

        io.fail_at(u64::MAX, Fault::Before, None);
        write("ok").unwrap();
        assert_eq!(io.log(), vec![format!("create_sink {}", at("ok")), format!("finish_sink {}", at("ok"))]);
        assert_eq!(std::fs::read(at("ok")).unwrap(), b"abcdef");

        for (k, fault, name, left) in [
            (0, Fault::Before, "open-before", None),
            (0, Fault::After, "open-after", None),
            (0, Fault::Torn, "open-torn", None),
            (1, Fault::Before, "finish-before", None),
            (1, Fault::After, "finish-after", Some(&b"abcdef"[..])),
            (1, Fault::Torn, "finish-torn", Some(&b"abc"[..])),
        ] {
            io.fail_at(k, fault, Some(OpKind::Mutate));
            assert!(write(name).is_err(), "{name}: the fault did not fail the write");
            assert_eq!(std::fs::read(at(name)).ok().as_deref(), left, "{name}");
        }
        // Nothing staged is left behind by any of them.
        let mut names = entries();
        names.sort();
        assert_eq!(names, vec!["finish-after", "finish-torn", "ok"]);
    }
}
