//! Table and warehouse locations by URI: a plain path is local, `s3://bucket/warehouse/db.db/t` (and the
//! other schemes of [`crate::config`]) is an object store. An unknown scheme is an error, never a local
//! directory named after it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use strata_io::{CachingFileIO, FileIO, FileSink, FileStatus, LocalFileIO, RequestCounts};
use strata_spec::{Error, Result};

use crate::config::{build_store, StoreKind, SUPPORTED_SCHEMES};
use crate::object::ObjectStoreFileIO;

/// Where a table or a warehouse is: the [`FileIO`] that reaches it, and its path in that FileIO's terms
/// (a local absolute path, or the URI).
#[derive(Debug, Clone)]
pub struct Location {
    /// The storage.
    pub io: Arc<dyn FileIO>,
    /// The path to pass to the table and catalog APIs.
    pub path: String,
}

/// A URI's parts: scheme (lower case), authority, and the path after it (`/...` or empty).
struct Uri<'a> {
    scheme: String,
    authority: &'a str,
}

fn parse_uri(uri: &str) -> Result<Option<Uri<'_>>> {
    let Some((scheme, rest)) = uri.split_once("://") else {
        // "s3:/bucket/t" or "s3:bucket/t" would otherwise become a local directory named "s3:".
        if let Some((head, _)) = uri.split_once(':') {
            let scheme_like = head.len() > 1
                && head.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && head.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                && !head.contains('/');
            if scheme_like {
                return Err(Error::invalid(
                    "location",
                    format!("'{uri}' looks like a URI without '//' (write {head}://...; local paths have no scheme)"),
                ));
            }
        }
        return Ok(None);
    };
    let valid = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    if !valid {
        return Err(Error::invalid("location", format!("'{uri}' has no valid scheme")));
    }
    if rest.contains(['?', '#']) {
        return Err(Error::invalid("location", format!("'{uri}': query strings and fragments are not locations")));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    Ok(Some(Uri { scheme: scheme.to_ascii_lowercase(), authority }))
}

/// The local absolute form of `path` (relative paths against the working directory).
fn absolute(path: &str) -> String {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        return path.to_string();
    }
    std::env::current_dir().map(|c| c.join(p).to_string_lossy().into_owned()).unwrap_or_else(|_| path.to_string())
}

/// What a location string is: a local absolute path, or a URI of a store Strata reaches.
enum Parsed {
    Local(String),
    Remote(String),
}

fn classify(uri: &str) -> Result<Parsed> {
    let trimmed = uri.trim();
    if trimmed.is_empty() {
        return Err(Error::invalid("location", "an empty location"));
    }
    let Some(parsed) = parse_uri(trimmed)? else { return Ok(Parsed::Local(absolute(trimmed))) };
    let after_scheme = &trimmed[trimmed.find("://").map_or(0, |i| i + 3)..];
    if parsed.scheme == "file" {
        if !parsed.authority.is_empty() && parsed.authority != "localhost" {
            return Err(Error::invalid("location", format!("'{uri}': file URIs name no host")));
        }
        return Ok(Parsed::Local(absolute(&after_scheme[parsed.authority.len()..])));
    }
    if StoreKind::of_scheme(&parsed.scheme).is_none() {
        return Err(Error::unsupported(format!(
            "'{uri}': Strata cannot reach {}:// locations (supported: {SUPPORTED_SCHEMES}, and local paths)",
            parsed.scheme
        )));
    }
    if parsed.authority.is_empty() {
        return Err(Error::invalid("location", format!("'{uri}' names no bucket")));
    }
    Ok(Parsed::Remote(format!("{}://{}", parsed.scheme, after_scheme.trim_end_matches('/'))))
}

/// The canonical form of a location: a local path made absolute, or a store URI with its scheme in lower
/// case and no trailing slash; an error for schemes Strata cannot reach and for strings that only look like
/// URIs (`s3:/bucket`), which must never become local directories.
pub fn normalize_location(uri: &str) -> Result<String> {
    Ok(match classify(uri)? {
        Parsed::Local(p) | Parsed::Remote(p) => p,
    })
}

/// The storage and path of `uri`, with store `options` (Paimon's names: `s3.endpoint`, `s3.access-key`, ...; see docs/ARCHITECTURE.md, "Storage").
pub fn open_location(uri: &str, options: &BTreeMap<String, String>) -> Result<Location> {
    match classify(uri)? {
        Parsed::Local(path) => Ok(Location { io: Arc::new(LocalFileIO::new()), path }),
        Parsed::Remote(path) => {
            let router = StoreRouter::new(options.clone())?;
            // Build the store now, so that bad options fail here rather than at the first read.
            router.route(&path)?;
            Ok(Location { io: Arc::new(router), path })
        }
    }
}

/// Option naming the local cache of a store's immutable files (`0` turns it off; Strata's own option).
pub const FILE_CACHE_SIZE: &str = "file-cache.max-disk-size";

/// The local cache's default bound.
const DEFAULT_FILE_CACHE: u64 = 1 << 30;

/// A [`FileIO`] for URIs of any supported store (and local paths): one [`ObjectStoreFileIO`] per
/// `scheme://authority`, made on first use with the same options. Tables on object stores use it, so that
/// external data paths in another bucket are reached too.
///
/// Each store's immutable files are cached on local disk (`file-cache.max-disk-size`, default 1 GiB; see
/// [`CachingFileIO`]), so compactions and lookups do not fetch again what this process wrote or read.
#[derive(Debug)]
pub struct StoreRouter {
    options: BTreeMap<String, String>,
    cache_bytes: u64,
    stores: Mutex<HashMap<String, Arc<dyn FileIO>>>,
    local: LocalFileIO,
}

impl StoreRouter {
    /// A router whose stores are built with `options`.
    pub fn new(options: BTreeMap<String, String>) -> Result<Self> {
        let cache_bytes = match options.get(FILE_CACHE_SIZE) {
            None => DEFAULT_FILE_CACHE,
            Some(v) => strata_spec::options::parse_memory_size(v)
                .map_err(|e| Error::invalid_from(format!("store option '{FILE_CACHE_SIZE}'"), e))?,
        };
        Ok(StoreRouter { options, cache_bytes, stores: Mutex::new(HashMap::new()), local: LocalFileIO::new() })
    }

    /// The store serving `path` (its `scheme://authority`), `None` for a local path.
    fn store(&self, path: &str) -> Result<Option<Arc<dyn FileIO>>> {
        let Some(uri) = parse_uri(path)? else { return Ok(None) };
        let kind = StoreKind::of_scheme(&uri.scheme)
            .ok_or_else(|| Error::unsupported(format!("'{path}': no store for {}://", uri.scheme)))?;
        let root = format!("{}://{}", uri.scheme, uri.authority);
        let mut stores = self.stores.lock();
        if let Some(s) = stores.get(&root) {
            return Ok(Some(s.clone()));
        }
        let (store, conditional) = build_store(kind, &root, uri.authority, &self.options)?;
        let io: Arc<dyn FileIO> = Arc::new(ObjectStoreFileIO::new(store, &root, conditional));
        let io: Arc<dyn FileIO> =
            if self.cache_bytes > 0 { Arc::new(CachingFileIO::new(io, self.cache_bytes)) } else { io };
        stores.insert(root, io.clone());
        Ok(Some(io))
    }

    fn route(&self, path: &str) -> Result<RoutedIo<'_>> {
        Ok(match self.store(path)? {
            Some(s) => RoutedIo::Store(s),
            None => RoutedIo::Local(&self.local),
        })
    }
}

enum RoutedIo<'a> {
    Store(Arc<dyn FileIO>),
    Local(&'a LocalFileIO),
}

impl std::ops::Deref for RoutedIo<'_> {
    type Target = dyn FileIO;
    fn deref(&self) -> &Self::Target {
        match self {
            RoutedIo::Store(s) => s.as_ref(),
            RoutedIo::Local(l) => *l,
        }
    }
}

impl FileIO for StoreRouter {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        self.route(path)?.read(path)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.route(path)?.read_range(path, offset, len)
    }

    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        self.route(path)?.read_ranges(path, ranges)
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.route(path)?.size(path)
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.route(path)?.write(path, data)
    }

    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn FileSink>>> {
        self.route(path)?.create_sink(path)
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        self.route(path)?.create_if_absent(path, data)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        self.route(path)?.exists(path)
    }

    fn file_exists(&self, path: &str) -> Result<bool> {
        self.route(path)?.file_exists(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        self.route(dir)?.list(dir)
    }

    fn delete(&self, path: &str) -> Result<()> {
        self.route(path)?.delete(path)
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        self.route(path)?.delete_dir(path)
    }

    fn mkdirs(&self, path: &str) -> Result<()> {
        self.route(path)?.mkdirs(path)
    }

    fn request_counts(&self) -> Option<RequestCounts> {
        let stores = self.stores.lock();
        Some(stores.values().filter_map(|s| s.request_counts()).fold(RequestCounts::default(), |a, b| a + b))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use strata_spec::ErrorKind;

    fn open(uri: &str) -> Result<Location> {
        open_location(uri, &BTreeMap::new())
    }

    #[test]
    fn plain_and_file_paths_are_local_and_absolute() {
        let l = open("/tmp/wh/db.db/t").unwrap();
        assert_eq!(l.path, "/tmp/wh/db.db/t");
        assert!(l.io.request_counts().is_none());
        assert_eq!(open("file:///tmp/x").unwrap().path, "/tmp/x");
        assert!(open("relative/t").unwrap().path.starts_with('/'));
    }

    #[test]
    fn unknown_schemes_and_half_uris_are_refused() {
        let e = open("hdfs://nn/wh/t").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.to_string().contains("hdfs") && e.to_string().contains("s3"), "{e}");
        for bad in ["s3:/bucket/t", "s3:bucket/t", "s3://", "s3:///t", "s3://b/t?x=1", "", "file://host/x"] {
            let e = open(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Invalid, "{bad}: {e}");
        }
    }

    #[test]
    fn s3_uris_reach_a_store_with_paths_kept_as_uris() {
        let options: BTreeMap<String, String> = [("s3.endpoint", "http://127.0.0.1:1"), ("s3.region", "us-east-1")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let l = open_location("s3://bucket/wh/db.db/t/", &options).unwrap();
        assert_eq!(l.path, "s3://bucket/wh/db.db/t");
        assert_eq!(l.io.request_counts(), Some(RequestCounts::default()));
        // A path outside the store's root is refused, never mapped to another key.
        let router = StoreRouter::new(options).unwrap();
        let s = router.store("s3://bucket/x").unwrap().unwrap();
        assert!(s.size("s3://other/x").is_err());
    }
}
