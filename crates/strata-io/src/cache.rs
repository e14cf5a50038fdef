//! [`CachingFileIO`]: a bounded local copy of the immutable files a process reads from a remote store.
//!
//! Paimon never changes a file once written, and every data, changelog, manifest and index file has a
//! unique name (a UUID in it), so a copy of one stays right for as long as the name is live. Compactions read
//! the files the previous commit wrote and lookups read the files compactions wrote: over an object store
//! each would be a GET of the whole file again. The cache keeps what this process wrote (write-through) and
//! what it read whole, on local disk, least recently used out past `max_bytes`. Snapshots, schemas, tags,
//! consumers and hints are never cached (they are replaced or removed and made again), and listings,
//! existence checks and conditional creates always go to the store, which stays the truth.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use strata_spec::{Error, Result};

use crate::scratch::ScratchDir;
use crate::{FileIO, FileSink, FileStatus, RequestCounts};

/// Whether `path` names an immutable Paimon file that may be cached: data and changelog files, manifests,
/// manifest lists, index files and index manifests.
pub fn is_immutable_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.ends_with(".tmp")
        && ["data-", "changelog-", "manifest-", "index-"].iter().any(|p| name.starts_with(p))
        && name.len() > 36
}

/// Bytes per checksummed block of a local copy: a range read verifies only the blocks it touches.
const BLOCK: u64 = 1 << 20;

#[derive(Debug)]
struct Entry {
    local: PathBuf,
    size: u64,
    /// CRC32 of each [`BLOCK`] of the copy: a damaged local disk is noticed, and the store read instead.
    crcs: Arc<Vec<u32>>,
    last_used: u64,
}

/// A local copy as a read finds it.
struct LocalCopy {
    local: PathBuf,
    size: u64,
    crcs: Arc<Vec<u32>>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Entry>,
    bytes: u64,
    /// Bytes of the copies being written beside streamed files: on disk already, and counted against the
    /// cache's bound so that many files written at once do not take it past it.
    writing: u64,
    clock: u64,
}

/// What a cache has done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reads answered from local disk.
    pub hits: u64,
    /// Reads of cacheable files that went to the store.
    pub misses: u64,
    /// Bytes in the cache now.
    pub bytes: u64,
}

/// A [`FileIO`] that keeps local copies of the immutable files it reads or writes (see the module docs).
#[derive(Debug)]
pub struct CachingFileIO {
    inner: Arc<dyn FileIO>,
    dir: ScratchDir,
    max_bytes: u64,
    /// Shared with the sinks of files being written, which add their copies when finished.
    state: Arc<Mutex<State>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CachingFileIO {
    /// `inner` with a local cache of at most `max_bytes`.
    pub fn new(inner: Arc<dyn FileIO>, max_bytes: u64) -> Self {
        CachingFileIO {
            inner,
            dir: ScratchDir::new("strata-cache-"),
            max_bytes,
            state: Arc::new(Mutex::new(State::default())),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// What the cache has done so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.state.lock().bytes,
        }
    }

    /// The local copy of `path`, marked most recently used.
    fn cached(&self, path: &str) -> Option<LocalCopy> {
        let mut st = self.state.lock();
        st.clock += 1;
        let now = st.clock;
        let e = st.entries.get_mut(path)?;
        e.last_used = now;
        Some(LocalCopy { local: e.local.clone(), size: e.size, crcs: e.crcs.clone() })
    }

    /// Drops `path`'s copy.
    fn forget(&self, path: &str) {
        let mut st = self.state.lock();
        if let Some(e) = st.entries.remove(path) {
            st.bytes = st.bytes.saturating_sub(e.size);
            // Local scratch: a failed removal leaves a file in the cache directory, removed with it.
            let _ = std::fs::remove_file(e.local);
        }
    }

    /// Keeps a copy of `data` as `path`, when it fits; local trouble only costs a later read from the store.
    fn keep(&self, path: &str, data: &[u8]) {
        let size = data.len() as u64;
        if !is_immutable_file(path) || size > self.max_bytes / 4 {
            return;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let written = self.dir.file(name).and_then(|local| {
            let mut f = File::create(&local).map_err(|e| Error::io(local.display().to_string(), e))?;
            f.write_all(data).map_err(|e| Error::io(local.display().to_string(), e))?;
            Ok(local)
        });
        let local = match written {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(path, error = %e, "cannot keep a local copy");
                return;
            }
        };
        let crcs = data.chunks(BLOCK as usize).map(crc32fast::hash).collect();
        admit(&self.state, self.max_bytes, path, local, size, crcs);
    }

    /// Reads `len` bytes at `offset` of a local copy, verifying the blocks it touches; `None` when the copy
    /// is unusable (then it is dropped).
    fn read_local(&self, path: &str, copy: &LocalCopy, offset: u64, len: u64) -> Option<Vec<u8>> {
        let read = || -> std::io::Result<Vec<u8>> {
            if len == 0 {
                return Ok(Vec::new());
            }
            let mut f = File::open(&copy.local)?;
            if f.metadata()?.len() != copy.size {
                return Err(std::io::Error::other("the local copy changed size"));
            }
            let (first, last) = (offset / BLOCK, (offset + len - 1) / BLOCK);
            let start = first * BLOCK;
            let end = ((last + 1) * BLOCK).min(copy.size);
            f.seek(SeekFrom::Start(start))?;
            let mut buf = vec![0u8; usize::try_from(end - start).map_err(std::io::Error::other)?];
            f.read_exact(&mut buf)?;
            for (i, block) in buf.chunks(BLOCK as usize).enumerate() {
                let want = copy.crcs.get(first as usize + i).copied();
                if want != Some(crc32fast::hash(block)) {
                    return Err(std::io::Error::other(format!("block {} fails its checksum", first as usize + i)));
                }
            }
            let from = usize::try_from(offset - start).map_err(std::io::Error::other)?;
            let to = from + usize::try_from(len).map_err(std::io::Error::other)?;
            buf.truncate(to);
            buf.drain(..from);
            Ok(buf)
        };
        match read() {
            Ok(b) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(b)
            }
            Err(e) => {
                tracing::warn!(path, error = %e, "local copy unreadable; reading from the store");
                self.forget(path);
                None
            }
        }
    }
}

/// Adds `local`, the copy of `path`, to the cache, and evicts the least recently used copies past
/// `max_bytes`.
fn admit(state: &Mutex<State>, max_bytes: u64, path: &str, local: PathBuf, size: u64, crcs: Vec<u32>) {
    let mut st = state.lock();
    st.clock += 1;
    let now = st.clock;
    let crcs = Arc::new(crcs);
    if let Some(old) = st.entries.insert(path.to_string(), Entry { local, size, crcs, last_used: now }) {
        st.bytes = st.bytes.saturating_sub(old.size);
        let _ = std::fs::remove_file(old.local);
    }
    st.bytes += size;
    evict(&mut st, max_bytes);
}

/// Drops the least recently used copies until the cache, copies being written included, is within
/// `max_bytes` (or nothing is left to drop).
fn evict(st: &mut State, max_bytes: u64) {
    while st.bytes + st.writing > max_bytes {
        let Some(victim) = st.entries.iter().min_by_key(|(_, e)| e.last_used).map(|(p, _)| p.clone()) else {
            break;
        };
        if let Some(e) = st.entries.remove(&victim) {
            st.bytes = st.bytes.saturating_sub(e.size);
            let _ = std::fs::remove_file(e.local);
        }
    }
}

/// Counts `n` more bytes of a copy being written, making room for them; `false` (nothing counted) when
/// the copies being written alone would take the cache past `max_bytes`.
fn reserve(state: &Mutex<State>, max_bytes: u64, n: u64) -> bool {
    let mut st = state.lock();
    st.writing += n;
    evict(&mut st, max_bytes);
    if st.bytes + st.writing > max_bytes {
        st.writing -= n;
        return false;
    }
    true
}

/// Stops counting `n` bytes of a copy that was written (and admitted) or abandoned.
fn release(state: &Mutex<State>, n: u64) {
    let mut st = state.lock();
    st.writing = st.writing.saturating_sub(n);
}

/// A local copy being written beside a streamed file, checksummed block by block as it grows.
struct CopyWriter {
    /// `None` once handed to the cache (until then, dropping the writer removes the file).
    local: Option<PathBuf>,
    file: BufWriter<File>,
    /// The checksums of the bytes written so far, and their count.
    crcs: crate::BlockCrc32s,
}

impl CopyWriter {
    fn append(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.file.write_all(data)?;
        self.crcs.update(data);
        Ok(())
    }

    /// Bytes written.
    fn size(&self) -> u64 {
        self.crcs.len()
    }

    /// The copy's path, size and block checksums, once on disk.
    fn complete(mut self) -> std::io::Result<(PathBuf, u64, Vec<u32>)> {
        self.file.flush()?;
        let size = self.size();
        let crcs = std::mem::replace(&mut self.crcs, crate::BlockCrc32s::new(BLOCK)).finish();
        let local = self.local.take().ok_or_else(|| std::io::Error::other("copy already handed over"))?;
        Ok((local, size, crcs))
    }
}

impl Drop for CopyWriter {
    fn drop(&mut self) {
        if let Some(local) = self.local.take() {
            let _ = std::fs::remove_file(local);
        }
    }
}

/// The store's sink for a cacheable file, writing a local copy as the bytes go by; the copy joins the cache
/// when the file is finished (a copy outgrowing the cache's quarter share is dropped on the way).
struct CachingSink {
    inner: Box<dyn FileSink>,
    path: String,
    copy: Option<CopyWriter>,
    state: Arc<Mutex<State>>,
    max_bytes: u64,
}

impl FileSink for CachingSink {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.inner.write_all(data)?;
        if let Some(copy) = &mut self.copy {
            let n = data.len() as u64;
            let kept = if copy.size() + n > self.max_bytes / 4 {
                Err(std::io::Error::other("larger than the cache keeps"))
            } else if !reserve(&self.state, self.max_bytes, n) {
                Err(std::io::Error::other("the cache is full of copies being written"))
            } else {
                copy.append(data).inspect_err(|_| release(&self.state, n))
            };
            if let Err(e) = kept {
                tracing::debug!(path = self.path, error = %e, "no local copy of this file");
                self.drop_copy();
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.inner_finish()?;
        let Some(copy) = self.copy.take() else { return Ok(()) };
        // No longer a copy being written: admitted (and counted as the cache's) or dropped.
        release(&self.state, copy.size());
        match copy.complete() {
            Ok((local, size, crcs)) => admit(&self.state, self.max_bytes, &self.path, local, size, crcs),
            Err(e) => tracing::warn!(path = self.path, error = %e, "cannot keep a local copy"),
        }
        Ok(())
    }
}

impl CachingSink {
    /// Drops the copy being written (its file goes with it) and stops counting its bytes.
    fn drop_copy(&mut self) {
        if let Some(copy) = self.copy.take() {
            release(&self.state, copy.size());
        }
    }

    /// Finishes the store's file; the sink stays whole for its copy.
    fn inner_finish(&mut self) -> Result<()> {
        let inner = std::mem::replace(&mut self.inner, Box::new(Finished));
        inner.finish()
    }
}

impl Drop for CachingSink {
    fn drop(&mut self) {
        self.drop_copy();
    }
}

/// What a [`CachingSink`] holds once its store's file is finished.
struct Finished;

impl FileSink for Finished {
    fn write_all(&mut self, _: &[u8]) -> Result<()> {
        Err(Error::invalid("file sink", "written after it was finished"))
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Err(Error::invalid("file sink", "finished twice"))
    }
}

impl FileIO for CachingFileIO {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        if let Some(copy) = self.cached(path) {
            if let Some(b) = self.read_local(path, &copy, 0, copy.size) {
                return Ok(b);
            }
        }
        let data = self.inner.read(path)?;
        if is_immutable_file(path) {
            self.misses.fetch_add(1, Ordering::Relaxed);
            self.keep(path, &data);
        }
        Ok(data)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        if let Some(copy) = self.cached(path) {
            if offset.checked_add(len).is_none_or(|end| end > copy.size) {
                let size = copy.size;
                return Err(
                    Error::corrupt(format!("range {offset}+{len} is beyond the file's {size} bytes")).in_file(path)
                );
            }
            if let Some(b) = self.read_local(path, &copy, offset, len) {
                return Ok(b);
            }
        }
        self.inner.read_range(path, offset, len)
    }

    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        if self.cached(path).is_some() {
            return ranges.iter().map(|r| self.read_range(path, r.start, r.end.saturating_sub(r.start))).collect();
        }
        self.inner.read_ranges(path, ranges)
    }

    fn size(&self, path: &str) -> Result<u64> {
        match self.cached(path) {
            Some(copy) => Ok(copy.size),
            None => self.inner.size(path),
        }
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.forget(path);
        self.inner.write(path, data)?;
        self.keep(path, data);
        Ok(())
    }

    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn FileSink>>> {
        self.forget(path);
        let Some(inner) = self.inner.create_sink(path)? else {
            // Written whole through `write`, which keeps the copy.
            return Ok(None);
        };
        if !is_immutable_file(path) {
            return Ok(Some(inner));
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let copy = self.dir.file(name).and_then(|local| {
            let file = File::create(&local).map_err(|e| Error::io(local.display().to_string(), e))?;
            let file = BufWriter::new(file);
            Ok(CopyWriter { local: Some(local), file, crcs: crate::BlockCrc32s::new(BLOCK) })
        });
        let copy = copy.inspect_err(|e| tracing::warn!(path, error = %e, "cannot keep a local copy")).ok();
        let (state, max_bytes) = (self.state.clone(), self.max_bytes);
        Ok(Some(Box::new(CachingSink { inner, path: path.to_string(), copy, state, max_bytes })))
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        self.inner.create_if_absent(path, data)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        self.inner.exists(path)
    }

    fn file_exists(&self, path: &str) -> Result<bool> {
        self.inner.file_exists(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        self.inner.list(dir)
    }

    fn delete(&self, path: &str) -> Result<()> {
        self.forget(path);
        self.inner.delete(path)
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let under: Vec<String> = self.state.lock().entries.keys().filter(|p| p.starts_with(&prefix)).cloned().collect();
        for p in under {
            self.forget(&p);
        }
        self.inner.delete_dir(path)
    }

    fn mkdirs(&self, path: &str) -> Result<()> {
        self.inner.mkdirs(path)
    }

    fn request_counts(&self) -> Option<RequestCounts> {
        self.inner.request_counts()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::MemoryFileIO;

    const DATA: &str = "/t/bucket-0/data-3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b-0.parquet";

    #[test]
    fn only_immutable_paimon_files_are_cached() {
        assert!(is_immutable_file(DATA));
        assert!(is_immutable_file("/t/manifest/manifest-list-3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b-1"));
        assert!(is_immutable_file("/t/index/index-3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b-0"));
        for p in [
            "/t/snapshot/snapshot-3",
            "/t/snapshot/LATEST",
            "/t/schema/schema-0",
            "/t/tag/tag-x",
            "/t/consumer/consumer-a",
            "/t/manifest/manifest-x.tmp",
            "/t/bucket-0/data-short.parquet",
        ] {
            assert!(!is_immutable_file(p), "{p}");
        }
    }

    #[test]
    fn reads_after_a_write_or_a_read_come_from_local_disk_and_deletes_drop_them() {
        let store = Arc::new(MemoryFileIO::new());
        let io = CachingFileIO::new(store.clone(), 1 << 20);
        io.write(DATA, b"0123456789").unwrap();
        assert_eq!(io.read(DATA).unwrap(), b"0123456789");
        assert_eq!(io.read_range(DATA, 2, 3).unwrap(), b"234");
        assert_eq!(io.size(DATA).unwrap(), 10);
        assert!(io.read_range(DATA, 8, 3).is_err(), "a range past the end is an error");
        assert_eq!(io.stats().hits, 2);
        // Gone from the store behind the cache's back: the copy answers (it is the file's content), and a
        // delete through the cache drops it.
        store.delete(DATA).unwrap();
        assert_eq!(io.read(DATA).unwrap(), b"0123456789");
        io.delete(DATA).unwrap();
        assert!(io.read(DATA).is_err());
        // A file read whole from the store is kept.
        store.write(DATA, b"abc").unwrap();
        assert_eq!(io.read(DATA).unwrap(), b"abc");
        assert_eq!(io.read(DATA).unwrap(), b"abc");
        assert_eq!(io.stats().misses, 1);
    }

    /// A cache of `max_bytes` over a local store (which streams files through sinks), in a scratch directory:
    /// the directory, the store, the cache, and the cache as a `FileIO`.
    fn streaming_cache(max_bytes: u64) -> (tempfile::TempDir, Arc<dyn FileIO>, Arc<CachingFileIO>, Arc<dyn FileIO>) {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn FileIO> = Arc::new(crate::LocalFileIO::new());
        let cache = Arc::new(CachingFileIO::new(store.clone(), max_bytes));
        let io: Arc<dyn FileIO> = cache.clone();
        (dir, store, cache, io)
    }

    /// Data file `i`'s path under `dir`.
    fn data_path(dir: &tempfile::TempDir, i: usize) -> String {
        format!("{}{}", dir.path().display(), DATA.replace("-0.parquet", &format!("-{i}.parquet")))
    }

    /// A file streamed through the cache to a store with sinks is kept as it goes by, its block checksums
    /// taken piece by piece; one outgrowing the cache's share, or abandoned, leaves no copy.
    #[test]
    fn streamed_files_are_kept_block_by_block() {
        let (dir, store, cache, io) = streaming_cache(64 << 20);
        let path = |i: usize| data_path(&dir, i);
        let content: Vec<u8> =
            (0..(5u64 << 20) + 12_345).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let mut sink = crate::create_file(&io, &path(0)).unwrap();
        for piece in content.chunks(77_777) {
            sink.write_all(piece).unwrap();
        }
        sink.finish().unwrap();
        assert_eq!(cache.stats().bytes, content.len() as u64);
        // Gone from the store behind the cache's back: the copy answers, every block checked.
        store.delete(&path(0)).unwrap();
        assert_eq!(io.read(&path(0)).unwrap(), content);
        let (at, len) = ((1u64 << 20) - 5, 3u64 << 20);
        assert_eq!(io.read_range(&path(0), at, len).unwrap(), &content[at as usize..(at + len) as usize]);
        assert_eq!(cache.stats().hits, 2);

        // Larger than a quarter of the cache: written, not kept.
        let big: Arc<dyn FileIO> = Arc::new(CachingFileIO::new(store.clone(), 16 << 20));
        let mut sink = crate::create_file(&big, &path(1)).unwrap();
        sink.write_all(&content).unwrap();
        sink.finish().unwrap();
        assert_eq!(store.read(&path(1)).unwrap(), content);
        // Abandoned: nothing in the store, and no local copy left behind.
        let mut sink = crate::create_file(&io, &path(2)).unwrap();
        sink.write_all(&content[..1000]).unwrap();
        drop(sink);
        assert!(!store.file_exists(&path(2)).unwrap());
        assert_eq!(std::fs::read_dir(cache.dir.path().unwrap()).unwrap().count(), 1, "only the kept copy");
    }

    /// Copies of files written side by side count against the bound while they are written: the cache
    /// never holds more than its bound on disk, and every file still reads back right.
    #[test]
    fn copies_being_written_stay_within_the_bound() {
        let (dir, _store, cache, io) = streaming_cache(8 << 20);
        let path = |i: usize| data_path(&dir, i);
        let mut sinks: Vec<_> = (0..6).map(|i| crate::create_file(&io, &path(i)).unwrap()).collect();
        let piece = vec![5u8; 100 << 10];
        for _ in 0..19 {
            for sink in sinks.iter_mut() {
                sink.write_all(&piece).unwrap();
                let on_disk: u64 = std::fs::read_dir(cache.dir.path().unwrap())
                    .unwrap()
                    .map(|e| e.unwrap().metadata().unwrap().len())
                    .sum();
                assert!(on_disk <= 8 << 20, "{on_disk} bytes of copies on disk");
            }
        }
        for sink in sinks {
            sink.finish().unwrap();
        }
        assert!(cache.stats().bytes <= 8 << 20);
        assert_eq!(cache.state.lock().writing, 0, "every copy written is accounted for");
        for i in 0..6 {
            assert_eq!(io.read(&path(i)).unwrap(), vec![5u8; 19 * (100 << 10)]);
        }
    }

    #[test]
    fn the_cache_stays_within_its_bound_and_damaged_copies_are_refetched() {
        let store = Arc::new(MemoryFileIO::new());
        let io = CachingFileIO::new(store.clone(), 100);
        let path = |i: usize| DATA.replace("-0.parquet", &format!("-{i}.parquet"));
        for i in 0..10 {
            io.write(&path(i), &[i as u8; 20]).unwrap();
            assert!(io.stats().bytes <= 100);
        }
        for i in 0..10 {
            assert_eq!(io.read(&path(i)).unwrap(), vec![i as u8; 20]);
        }
        // Damage every local copy (one flipped byte, or truncated): reads fall back to the store.
        let dir = io.dir.path().unwrap();
        for (n, e) in std::fs::read_dir(&dir).unwrap().enumerate() {
            let p = e.unwrap().path();
            let mut b = std::fs::read(&p).unwrap();
            if n % 2 == 0 {
                b[7] ^= 0x10;
            } else {
                b.truncate(3);
            }
            std::fs::write(p, b).unwrap();
        }
        for i in 0..10 {
            assert_eq!(io.read(&path(i)).unwrap(), vec![i as u8; 20]);
        }
    }
}
