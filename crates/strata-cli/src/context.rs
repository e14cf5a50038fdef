//! What every command works with: the storage, reached with the command line's store options, and the
//! branch the command line names.

use std::collections::BTreeMap;
use std::sync::Arc;

use strata_io::FileIO;
use strata_spec::Error;
use strata_table::Table;

use crate::progress::CountingFileIO;

/// The storage and branch of one run of the CLI, made once from the command line and handed to the
/// command (no process-wide state: a library user, or a test, runs commands with contexts of its own).
pub(crate) struct Context {
    store_options: BTreeMap<String, String>,
    io: Arc<dyn FileIO>,
    branch: Option<String>,
}

impl Context {
    /// Checks `store_options` (a router is built from them, so an unknown key or a bad value is refused
    /// before any command runs) and keeps them with `branch`.
    pub(crate) fn new(store_options: BTreeMap<String, String>, branch: Option<String>) -> Result<Self, Error> {
        let router = strata_store::StoreRouter::new(store_options.clone())?;
        Ok(Context { io: Arc::new(CountingFileIO(router)), store_options, branch })
    }

    /// The storage every command works through: local paths and store URIs alike, counted for progress
    /// lines; one instance for the run, so its cache of immutable files is shared.
    pub(crate) fn io(&self) -> Arc<dyn FileIO> {
        self.io.clone()
    }

    /// Storage like [`Context::io`] but of its own: another client without local copies of immutable
    /// files, as a separate reading process would have.
    pub(crate) fn reader_io(&self) -> Result<Arc<dyn FileIO>, Error> {
        let mut options = self.store_options.clone();
        options.insert(strata_store::FILE_CACHE_SIZE.to_string(), "0".to_string());
        Ok(Arc::new(CountingFileIO(strata_store::StoreRouter::new(options)?)))
    }

    /// Opens the table at the table argument `dir` (see [`location`]), on the branch given.
    pub(crate) fn open_table(&self, dir: &str) -> Result<Table, Error> {
        self.open_located(&location(dir)?)
    }

    /// Opens the table at `path`, a location already canonical, on the branch given.
    pub(crate) fn open_located(&self, path: &str) -> Result<Table, Error> {
        match &self.branch {
            Some(b) => Table::open_branch(self.io(), path, b),
            None => Table::open(self.io(), path),
        }
    }
}

/// The canonical location of a table argument: a local path made absolute, or a store URI
/// (`s3://bucket/warehouse/db.db/t`); schemes Strata cannot reach are refused, never made local directories.
pub(crate) fn location(dir: &str) -> Result<String, Error> {
    strata_store::normalize_location(dir)
}

/// A local directory argument made absolute (against the working directory).
pub(crate) fn absolute(dir: &str) -> String {
    let p = std::path::Path::new(dir);
    if p.is_absolute() {
        dir.to_string()
    } else {
        std::env::current_dir().map(|c| c.join(p).to_string_lossy().into_owned()).unwrap_or_else(|_| dir.to_string())
    }
}

/// The `KEY=VALUE` arguments of `flag` as a map (keys and values trimmed; an empty key is refused).
pub(crate) fn parse_options(flag: &str, raw: &[String]) -> Result<BTreeMap<String, String>, Error> {
    let mut map = BTreeMap::new();
    for kv in raw {
        let (k, v) = kv.split_once('=').ok_or_else(|| Error::invalid(flag, format!("'{kv}' is not KEY=VALUE")))?;
        if k.trim().is_empty() {
            return Err(Error::invalid(flag, format!("'{kv}' has an empty key")));
        }
        map.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(map)
}
