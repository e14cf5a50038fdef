//! Where a test's tables live: a local temporary directory or a fresh bucket of the loopback S3 server,
//! so that one test body checks both storages.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Arc;

use strata::{FileIO, LocalFileIO};

/// The storages the table tests run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// A local temporary directory.
    Local,
    /// A bucket of the loopback S3 server (`tests/common/s3.rs`).
    S3,
}

/// A place for tables: its storage and root; a local directory goes when the value does.
pub(crate) struct Place {
    /// The storage.
    pub io: Arc<dyn FileIO>,
    /// The root (a local absolute path or `s3://bucket`).
    pub root: String,
    /// Which backend.
    pub backend: Backend,
    _dir: Option<tempfile::TempDir>,
}

impl Place {
    /// A fresh, empty place on `backend`.
    pub(crate) fn new(backend: Backend) -> Place {
        match backend {
            Backend::Local => {
                let dir = tempfile::tempdir().unwrap();
                Place {
                    io: Arc::new(LocalFileIO::new()),
                    root: dir.path().to_str().unwrap().to_string(),
                    backend,
                    _dir: Some(dir),
                }
            }
            Backend::S3 => {
                let root = format!("s3://{}", super::s3::bucket());
                let location = strata::open_location(&root, &super::s3::options()).unwrap();
                Place { io: location.io, root: location.path, backend, _dir: None }
            }
        }
    }

    /// The path of `name` under the root.
    pub(crate) fn path(&self, name: &str) -> String {
        format!("{}/{}", self.root, name)
    }

    /// The names of the files directly in `dir` (empty when it does not exist).
    pub(crate) fn names_in(&self, dir: &str) -> BTreeSet<String> {
        self.io.list(dir).unwrap().into_iter().filter(|s| !s.is_dir).map(|s| s.name().to_string()).collect()
    }

    /// The same storage again, as another process would open it (for S3: a new client and cache).
    pub(crate) fn reopen_io(&self) -> Arc<dyn FileIO> {
        match self.backend {
            Backend::Local => Arc::new(LocalFileIO::new()),
            Backend::S3 => strata::open_location(&self.root, &super::s3::options()).unwrap().io,
        }
    }
}
