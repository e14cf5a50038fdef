//! An in-memory store, for tests and for embedding without a disk.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::{Error, FileIO, FileStatus, Result};

/// Path → (content, modification time in epoch milliseconds).
type Files = BTreeMap<String, (Vec<u8>, i64)>;

/// [`FileIO`] over a map in memory. Clones share the same files. Directories are implied by paths.
#[derive(Debug, Default, Clone)]
pub struct MemoryFileIO {
    files: Arc<Mutex<Files>>,
}

impl MemoryFileIO {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn dir_prefix(dir: &str) -> String {
    let d = dir.trim_end_matches('/');
    format!("{d}/")
}

impl FileIO for MemoryFileIO {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        self.files.lock().get(path).map(|(d, _)| d.clone()).ok_or_else(|| Error::NotFound { path: path.to_string() })
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let files = self.files.lock();
        let (data, _) = files.get(path).ok_or_else(|| Error::NotFound { path: path.to_string() })?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
        data.get(start..end).map(<[u8]>::to_vec).ok_or_else(|| {
            Error::corrupt(format!("range {offset}+{len} is beyond the file's {} bytes", data.len())).in_file(path)
        })
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.files
            .lock()
            .get(path)
            .map(|(d, _)| d.len() as u64)
            .ok_or_else(|| Error::NotFound { path: path.to_string() })
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.files.lock().insert(path.to_string(), (data.to_vec(), strata_spec::now_millis()));
        Ok(())
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        let mut files = self.files.lock();
        if files.contains_key(path) {
            return Ok(false);
        }
        files.insert(path.to_string(), (data.to_vec(), strata_spec::now_millis()));
        Ok(true)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        let files = self.files.lock();
        if files.contains_key(path) {
            return Ok(true);
        }
        let prefix = dir_prefix(path);
        Ok(files.range(prefix.clone()..).next().is_some_and(|(k, _)| k.starts_with(&prefix)))
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        let prefix = dir_prefix(dir);
        let files = self.files.lock();
        let mut out: Vec<FileStatus> = Vec::new();
        for (k, (data, modified)) in files.range(prefix.clone()..) {
            let Some(rest) = k.strip_prefix(&prefix) else { break };
            match rest.find('/') {
                None => out.push(FileStatus {
                    path: k.clone(),
                    size: data.len() as u64,
                    is_dir: false,
                    modified_millis: *modified,
                }),
                Some(i) => {
                    let sub = format!("{prefix}{}", &rest[..i]);
                    if out.last().is_none_or(|l| l.path != sub) {
                        out.push(FileStatus { path: sub, size: 0, is_dir: true, modified_millis: *modified });
                    }
                }
            }
        }
        Ok(out)
    }

    fn delete(&self, path: &str) -> Result<()> {
        self.files.lock().remove(path);
        Ok(())
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        let prefix = dir_prefix(path);
        self.files.lock().retain(|k, _| !k.starts_with(&prefix));
        Ok(())
    }

    fn mkdirs(&self, _path: &str) -> Result<()> {
        Ok(())
    }
}
