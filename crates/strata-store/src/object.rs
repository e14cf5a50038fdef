//! [`ObjectStoreFileIO`]: Strata's storage seam over one bucket (or container) of an object store.
//!
//! Every operation maps to the fewest requests the contract allows: a read is one GET (a range read one
//! ranged GET), a write one PUT (multipart above [`MULTIPART_THRESHOLD`], visible only when complete), a
//! listing one LIST of a delimited prefix. `create_if_absent` is a conditional PUT (`If-None-Match: *` on
//! S3, a generation precondition on GCS, `If-None-Match` on Azure): the store decides which of racing
//! committers wins, exactly as `link` does on a local disk. Before its first create the store is asked
//! once to prove that it honours the condition (a store that silently overwrites would let two commits
//! both win), and a store that cannot is refused for commits rather than used unsafely.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use parking_lot::Mutex;
use strata_io::{FileIO, FileSink, FileStatus, RequestCounts};
use strata_spec::{Error, Result};
use tokio::task::JoinSet;

use crate::runtime::block_on;

/// Writes at least this large go up as multipart uploads, of 8 MiB parts.
pub const MULTIPART_THRESHOLD: usize = 16 << 20;

/// Bytes per part of a multipart upload (S3 wants at least 5 MiB).
const PART_SIZE: usize = 8 << 20;

/// Parts of one upload in flight at once.
const PART_CONCURRENCY: usize = 4;

/// Whether a store's conditional create has been checked, and how it went.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CreateCheck {
    Unchecked,
    Honoured,
    /// Why commits are refused.
    Refused(String),
}

#[derive(Debug, Default)]
struct Counters {
    get: AtomicU64,
    put: AtomicU64,
    list: AtomicU64,
    head: AtomicU64,
    delete: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// [`FileIO`] over one bucket of an object store; paths are URIs under its root (`s3://bucket/...`).
#[derive(Debug)]
pub struct ObjectStoreFileIO {
    store: Arc<dyn ObjectStore>,
    /// `scheme://authority`, without a trailing slash.
    root: String,
    /// The store is configured to make conditional creates (`false`: S3 with `aws_conditional_put =
    /// disabled`, or an HTTP server).
    conditional_create: bool,
    create_check: Mutex<CreateCheck>,
    counters: Arc<Counters>,
}

fn io_error(uri: &str, e: impl std::fmt::Display) -> Error {
    Error::io(uri, std::io::Error::other(e.to_string()))
}

/// Strata's error for an object-store error on `uri`.
pub(crate) fn map_error(uri: &str, e: object_store::Error) -> Error {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => Error::NotFound { path: uri.to_string() },
        E::AlreadyExists { .. } => Error::AlreadyExists { path: uri.to_string() },
        E::NotSupported { .. } | E::NotImplemented { .. } => Error::unsupported(format!("{uri}: {e}")),
        E::InvalidPath { .. } => Error::invalid("path", format!("{uri}: {e}")),
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            Error::io(uri, std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string()))
        }
        other => io_error(uri, other),
    }
}

impl ObjectStoreFileIO {
    /// Paths under `root` (`scheme://authority`) in `store`; `conditional_create` says whether the store
    /// is configured to make conditional creates.
    pub fn new(store: Arc<dyn ObjectStore>, root: &str, conditional_create: bool) -> Self {
        ObjectStoreFileIO {
            store,
            root: root.trim_end_matches('/').to_string(),
            conditional_create,
            create_check: Mutex::new(CreateCheck::Unchecked),
            counters: Arc::default(),
        }
    }

    /// The root this FileIO serves (`s3://bucket`).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The object path of `uri`.
    fn location(&self, uri: &str) -> Result<Path> {
        let rest = uri
            .strip_prefix(&self.root)
            .filter(|r| r.is_empty() || r.starts_with('/'))
            .ok_or_else(|| Error::invalid("path", format!("{uri} is not under {}", self.root)))?;
        Path::parse(rest.trim_start_matches('/')).map_err(|e| Error::invalid("path", format!("{uri}: {e}")))
    }

    fn uri(&self, location: &Path) -> String {
        format!("{}/{}", self.root, location)
    }

    fn get_bytes(&self, uri: &str) -> Result<Bytes> {
        let location = self.location(uri)?;
        bump(&self.counters.get);
        let store = self.store.clone();
        let owned = uri.to_string();
        block_on(async move {
            let got = store.get(&location).await.map_err(|e| map_error(&owned, e))?;
            got.bytes().await.map_err(|e| map_error(&owned, e))
        })?
    }

    /// Puts `data` at `uri` with `mode`; multipart for large unconditional writes.
    fn put(&self, uri: &str, data: &[u8], mode: PutMode) -> Result<()> {
        let location = self.location(uri)?;
        let store = self.store.clone();
        let owned = uri.to_string();
        if data.len() >= MULTIPART_THRESHOLD && matches!(mode, PutMode::Overwrite) {
            let mut sink = ObjectSink::new(store, location, uri, self.counters.clone());
            sink.write_all(data)?;
            return Box::new(sink).finish();
        }
        bump(&self.counters.put);
        let payload = PutPayload::from(Bytes::copy_from_slice(data));
        let opts = PutOptions { mode, ..Default::default() };
        block_on(async move {
            store.put_opts(&location, payload, opts).await.map(|_| ()).map_err(|e| map_error(&owned, e))
        })?
    }

    /// Whether conditional creates may be used: checked once per FileIO by creating a scratch object twice
    /// next to `near` (the second create must fail) and deleting it.
    fn check_conditional_create(&self, near: &str) -> Result<()> {
        let mut check = self.create_check.lock();
        if *check == CreateCheck::Unchecked {
            *check = if !self.conditional_create {
                CreateCheck::Refused(format!("{} is configured without conditional creates", self.root))
            } else {
                self.probe_conditional_create(near)?
            };
        }
        match &*check {
            CreateCheck::Refused(why) => Err(Error::unsupported(format!(
                "{why}: Strata commits only where the store decides between racing committers (a conditional \
                 put, If-None-Match), since otherwise two commits could both win and one be lost"
            ))),
            _ => Ok(()),
        }
    }

    fn probe_conditional_create(&self, near: &str) -> Result<CreateCheck> {
        let dir = strata_io::parent(near);
        let probe = strata_io::join(dir, &format!("probe.{}.tmp", unique_suffix()));
        let _span = tracing::debug_span!("probe_conditional_create", probe).entered();
        self.put(&probe, b"strata conditional-create probe", PutMode::Create)?;
        let second = self.put(&probe, b"strata conditional-create probe, again", PutMode::Create);
        let verdict = match second {
            Err(e) if e.kind() == strata_spec::ErrorKind::AlreadyExists => CreateCheck::Honoured,
            Ok(()) => CreateCheck::Refused(format!(
                "{} accepted a conditional create (If-None-Match: *) of an object that exists",
                self.root
            )),
            Err(e) => {
                let _ = self.delete(&probe);
                return Err(e);
            }
        };
        self.delete(&probe)?;
        Ok(verdict)
    }
}

/// How many requests `ranges` take once ranges closer than `gap` are merged.
fn coalesced_count(ranges: &[std::ops::Range<u64>], gap: u64) -> u64 {
    let mut sorted: Vec<&std::ops::Range<u64>> = ranges.iter().collect();
    sorted.sort_by_key(|r| r.start);
    let mut count = 0;
    let mut end: Option<u64> = None;
    for r in sorted {
        match end {
            Some(e) if r.start <= e.saturating_add(gap) => end = Some(e.max(r.end)),
            _ => {
                count += 1;
                end = Some(r.end);
            }
        }
    }
    count
}

/// A name part no other process picks: the process id, the time and a counter.
fn unique_suffix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// An object streamed to the store: held in memory while it is small (then it goes up as one PUT at
/// `finish`), and as a multipart upload of [`PART_SIZE`] parts, [`PART_CONCURRENCY`] in flight, once it
/// reaches [`MULTIPART_THRESHOLD`]. The store shows the object only when the upload completes; an upload
/// that fails, or whose sink is dropped unfinished, is aborted (one a killed process leaves is the store's
/// to expire).
struct ObjectSink {
    store: Arc<dyn ObjectStore>,
    location: Path,
    uri: String,
    counters: Arc<Counters>,
    /// Bytes not yet sent, in pieces of exactly `PART_SIZE` but the last (a piece is a part as it is:
    /// a `Vec` grown by doubling would hold twice its bytes, and be copied to be cut).
    pending: Vec<Vec<u8>>,
    pending_bytes: usize,
    upload: Option<Upload>,
}

/// A multipart upload and its parts in flight.
struct Upload {
    upload: Box<dyn MultipartUpload>,
    parts: JoinSet<object_store::Result<()>>,
}

impl Upload {
    /// Aborts the upload once its parts in flight have ended (each within the client's timeouts and
    /// retries). Cancelling them instead could leave a part the store had already received to land after
    /// the abort, keeping storage under an upload its writer believes gone (S3 documents this race).
    async fn abort(mut self, uri: String) {
        while self.parts.join_next().await.is_some() {}
        if let Err(e) = self.upload.abort().await {
            tracing::warn!(path = uri, error = %e, "cannot abort a failed or abandoned multipart upload");
        }
    }

    /// Waits until at most `in_flight` parts are in flight; the first part's error, if one failed.
    async fn settle(&mut self, in_flight: usize, uri: &str) -> Result<()> {
        while self.parts.len() > in_flight {
            match self.parts.join_next().await {
                Some(Ok(Ok(()))) | None => {}
                Some(Ok(Err(e))) => return Err(map_error(uri, e)),
                Some(Err(e)) => return Err(io_error(uri, e)),
            }
        }
        Ok(())
    }
}

impl ObjectSink {
    fn new(store: Arc<dyn ObjectStore>, location: Path, uri: &str, counters: Arc<Counters>) -> Self {
        ObjectSink {
            store,
            location,
            uri: uri.to_string(),
            counters,
            pending: Vec::new(),
            pending_bytes: 0,
            upload: None,
        }
    }

    /// Sends the first pending piece as the upload's next part, once fewer than [`PART_CONCURRENCY`] are
    /// in flight. On an error the upload stays with the sink, whose drop aborts it.
    fn send_piece(&mut self) -> Result<()> {
        let Some(mut upload) = self.upload.take() else {
            return Err(Error::invalid("object sink", "a part sent before the upload started"));
        };
        if self.pending.is_empty() {
            self.upload = Some(upload);
            return Ok(());
        }
        let piece = self.pending.remove(0);
        self.pending_bytes -= piece.len();
        bump(&self.counters.put);
        let uri = self.uri.clone();
        let (upload, sent) = block_on(async move {
            let ready = upload.settle(PART_CONCURRENCY - 1, &uri).await;
            if ready.is_ok() {
                let part = upload.upload.put_part(PutPayload::from(Bytes::from(piece)));
                upload.parts.spawn(part);
            }
            (upload, ready)
        })?;
        self.upload = Some(upload);
        sent
    }

    fn start_upload(&mut self) -> Result<()> {
        let (store, location, uri) = (self.store.clone(), self.location.clone(), self.uri.clone());
        bump(&self.counters.put);
        let upload = block_on(async move { store.put_multipart(&location).await.map_err(|e| map_error(&uri, e)) })??;
        self.upload = Some(Upload { upload, parts: JoinSet::new() });
        Ok(())
    }
}

impl FileSink for ObjectSink {
    fn write_all(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            match self.pending.last_mut() {
                Some(last) if last.len() < PART_SIZE => {
                    let take = (PART_SIZE - last.len()).min(data.len());
                    last.extend_from_slice(&data[..take]);
                    self.pending_bytes += take;
                    data = &data[take..];
                }
                _ => self.pending.push(Vec::with_capacity(PART_SIZE)),
            }
        }
        if self.upload.is_none() && self.pending_bytes >= MULTIPART_THRESHOLD {
            self.start_upload()?;
        }
        // Full pieces go up as they fill; the last one keeps filling.
        while self.upload.is_some() && self.pending.len() > 1 {
            self.send_piece()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let _span = tracing::trace_span!("object_sink_finish", path = self.uri).entered();
        let uri = self.uri.clone();
        if self.upload.is_none() {
            bump(&self.counters.put);
            let (store, location) = (self.store.clone(), self.location.clone());
            let payload: PutPayload = std::mem::take(&mut self.pending).into_iter().map(Bytes::from).collect();
            return block_on(async move {
                store.put(&location, payload).await.map(|_| ()).map_err(|e| map_error(&uri, e))
            })?;
        }
        while !self.pending.is_empty() {
            self.send_piece()?;
        }
        let Some(mut upload) = self.upload.take() else {
            return Err(Error::invalid("object sink", "upload lost"));
        };
        bump(&self.counters.put);
        block_on(async move {
            let done = match upload.settle(0, &uri).await {
                Ok(()) => upload.upload.complete().await.map(|_| ()).map_err(|e| map_error(&uri, e)),
                Err(e) => Err(e),
            };
            if done.is_err() {
                // Waited for: the caller is getting an error anyway, and a process that exits on it would
                // drop a detached abort with the runtime, leaving the upload to the bucket's lifecycle rules.
                upload.abort(uri).await;
            }
            done
        })?
    }
}

impl Drop for ObjectSink {
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            bump(&self.counters.delete);
            // Not waited for: a drop (an error unwinding, a cancelled write) must not block on the store.
            crate::runtime::spawn_detached(upload.abort(self.uri.clone()));
        }
    }
}

impl FileIO for ObjectStoreFileIO {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        let _span = tracing::trace_span!("object_read", path).entered();
        Ok(self.get_bytes(path)?.into())
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let _span = tracing::trace_span!("object_read_range", path, offset, len).entered();
        let end = offset.checked_add(len).ok_or_else(|| Error::invalid("read range", "past the largest offset"))?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let location = self.location(path)?;
        bump(&self.counters.get);
        let store = self.store.clone();
        let owned = path.to_string();
        let got = block_on(async move { store.get_range(&location, offset..end).await })?;
        match got {
            Ok(bytes) if bytes.len() as u64 == len => Ok(bytes.into()),
            Ok(bytes) => {
                Err(Error::corrupt(format!("range {offset}+{len} returned {} bytes", bytes.len())).in_file(path))
            }
            Err(object_store::Error::NotFound { .. }) => Err(Error::NotFound { path: path.to_string() }),
            // A range past the end is refused by the store (416) or by the client's length check.
            Err(e) if e.to_string().contains("Range") || e.to_string().contains("range") => {
                Err(Error::corrupt(format!("range {offset}+{len} is beyond the file: {e}")).in_file(&owned))
            }
            Err(e) => Err(map_error(&owned, e)),
        }
    }

    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        let _span = tracing::trace_span!("object_read_ranges", path, ranges = ranges.len()).entered();
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let location = self.location(path)?;
        // object_store coalesces ranges closer than a megabyte and fetches the rest side by side.
        self.counters.get.fetch_add(coalesced_count(ranges, 1 << 20), Ordering::Relaxed);
        let store = self.store.clone();
        let owned = path.to_string();
        let wanted = ranges.to_vec();
        let got =
            block_on(async move { store.get_ranges(&location, &wanted).await })?.map_err(|e| map_error(&owned, e))?;
        if got.len() != ranges.len() || got.iter().zip(ranges).any(|(b, r)| b.len() as u64 != r.end - r.start) {
            return Err(Error::corrupt("a range read returned other lengths than asked for").in_file(path));
        }
        Ok(got.into_iter().map(Vec::from).collect())
    }

    fn size(&self, path: &str) -> Result<u64> {
        let location = self.location(path)?;
        bump(&self.counters.head);
        let store = self.store.clone();
        let owned = path.to_string();
        block_on(async move { store.head(&location).await.map(|m| m.size).map_err(|e| map_error(&owned, e)) })?
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        let _span = tracing::trace_span!("object_write", path, bytes = data.len()).entered();
        self.put(path, data, PutMode::Overwrite)
    }

    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn FileSink>>> {
        let location = self.location(path)?;
        Ok(Some(Box::new(ObjectSink::new(self.store.clone(), location, path, self.counters.clone()))))
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        let _span = tracing::debug_span!("object_create_if_absent", path).entered();
        self.check_conditional_create(path)?;
        match self.put(path, data, PutMode::Create) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == strata_spec::ErrorKind::AlreadyExists => {
                // The client retries a PUT whose answer was lost (a 5xx or a dropped connection after the
                // store applied it); the retry then finds this very write. Identical bytes mean this call
                // made the object: commit files carry unique identifiers, so no other writer makes them.
                match self.get_bytes(path) {
                    Ok(existing) => Ok(existing.as_ref() == data),
                    Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => Ok(false),
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    fn file_exists(&self, path: &str) -> Result<bool> {
        match self.size(path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn exists(&self, path: &str) -> Result<bool> {
        if self.file_exists(path)? {
            return Ok(true);
        }
        // Object stores have no directories: a directory exists when an object lies under it.
        let location = self.location(path)?;
        bump(&self.counters.list);
        let store = self.store.clone();
        let owned = path.to_string();
        block_on(async move {
            match store.list(Some(&location)).next().await {
                None => Ok(false),
                Some(Ok(_)) => Ok(true),
                Some(Err(e)) => Err(map_error(&owned, e)),
            }
        })?
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        let _span = tracing::debug_span!("object_list", dir).entered();
        let location = self.location(dir)?;
        bump(&self.counters.list);
        let store = self.store.clone();
        let owned = dir.to_string();
        let listed = block_on(async move {
            let prefix = if location.as_ref().is_empty() { None } else { Some(&location) };
            store.list_with_delimiter(prefix).await.map_err(|e| map_error(&owned, e))
        })??;
        let own = self.location(dir)?;
        let mut out = Vec::with_capacity(listed.objects.len() + listed.common_prefixes.len());
        for p in listed.common_prefixes {
            out.push(FileStatus { path: self.uri(&p), size: 0, is_dir: true, modified_millis: 0 });
        }
        // A zero-byte "directory marker" (some writers make `dir/`) lists as the directory itself.
        for o in listed.objects.into_iter().filter(|o| o.location != own) {
            out.push(FileStatus {
                path: self.uri(&o.location),
                size: o.size,
                is_dir: false,
                modified_millis: o.last_modified.timestamp_millis(),
            });
        }
        Ok(out)
    }

    fn delete(&self, path: &str) -> Result<()> {
        let location = self.location(path)?;
        bump(&self.counters.delete);
        let store = self.store.clone();
        let owned = path.to_string();
        match block_on(async move { store.delete(&location).await })? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(map_error(&owned, e)),
        }
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        let _span = tracing::debug_span!("object_delete_dir", path).entered();
        let location = self.location(path)?;
        if location.as_ref().is_empty() {
            return Err(Error::invalid("delete", format!("refusing to delete the whole of {}", self.root)));
        }
        bump(&self.counters.list);
        let store = self.store.clone();
        let owned = path.to_string();
        let deleted = block_on(async move {
            let listed = store.list(Some(&location)).map_ok(|m| m.location).boxed();
            let mut results = store.delete_stream(listed);
            let mut n = 0u64;
            while let Some(r) = results.next().await {
                match r {
                    Ok(_) | Err(object_store::Error::NotFound { .. }) => n += 1,
                    Err(e) => return Err(map_error(&owned, e)),
                }
            }
            Ok(n)
        })??;
        // Bulk deletes go up to a thousand keys a request.
        self.counters.delete.fetch_add(deleted.div_ceil(1000).max(1), Ordering::Relaxed);
        Ok(())
    }

    fn mkdirs(&self, _path: &str) -> Result<()> {
        Ok(())
    }

    fn request_counts(&self) -> Option<RequestCounts> {
        let c = &self.counters;
        Some(RequestCounts {
            get: c.get.load(Ordering::Relaxed),
            put: c.put.load(Ordering::Relaxed),
            list: c.list.load(Ordering::Relaxed),
            head: c.head.load(Ordering::Relaxed),
            delete: c.delete.load(Ordering::Relaxed),
        })
    }
}
