//! The local file system.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, ErrorKind as IoKind, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::{parent, Error, FileIO, FileSink, FileStatus, Result};

/// [`FileIO`] over the local file system.
///
/// `write` (and a streamed file's finish) is temp file + fsync + rename + directory fsync;
/// `create_if_absent` is temp file + fsync + hard `link` (which fails if the target exists, so it can never
/// overwrite) + directory fsync.
#[derive(Debug, Default, Clone)]
pub struct LocalFileIO;

impl LocalFileIO {
    /// A local FileIO.
    pub fn new() -> Self {
        LocalFileIO
    }
}

fn io_err(path: &str, e: std::io::Error) -> Error {
    if e.kind() == IoKind::NotFound {
        Error::NotFound { path: path.to_string() }
    } else {
        Error::io(path, e)
    }
}

fn sync_dir(dir: &str) -> Result<()> {
    let dir = if dir.is_empty() { "." } else { dir };
    File::open(dir).and_then(|f| f.sync_all()).map_err(|e| io_err(dir, e))
}

fn temp_name(path: &str) -> String {
    format!("{}.{}.tmp", path, uuid::Uuid::new_v4())
}

fn write_synced(path: &str, data: &[u8]) -> Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| io_err(path, e))?;
    f.write_all(data).map_err(|e| io_err(path, e))?;
    f.sync_all().map_err(|e| io_err(path, e))
}

/// Bytes a [`LocalSink`] gathers before a `write(2)`: parquet hands over its pages a few kilobytes at a time.
const SINK_BUFFER: usize = 256 << 10;

/// A local file streamed into a temp file beside its target, then fsynced and renamed over it, as
/// [`FileIO::write`] does with a whole file. Dropped unfinished, it removes the temp file.
struct LocalSink {
    tmp: String,
    path: String,
    dir: String,
    /// `None` once finished.
    file: Option<BufWriter<File>>,
}

impl FileSink for LocalSink {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        match &mut self.file {
            Some(f) => f.write_all(data).map_err(|e| io_err(&self.tmp, e)),
            None => Err(Error::invalid("local file sink", "written after it was finished")),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let _span = tracing::trace_span!("local_sink_finish", path = self.path).entered();
        let Some(buffered) = self.file.take() else {
            return Err(Error::invalid("local file sink", "finished twice"));
        };
        let renamed = buffered
            .into_inner()
            .map_err(|e| io_err(&self.tmp, e.into_error()))
            .and_then(|file| file.sync_all().map_err(|e| io_err(&self.tmp, e)))
            .and_then(|()| fs::rename(&self.tmp, &self.path).map_err(|e| io_err(&self.path, e)));
        if renamed.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        renamed?;
        sync_dir(&self.dir)
    }
}

impl Drop for LocalSink {
    fn drop(&mut self) {
        if let Some(buffered) = self.file.take() {
            // Abandoned: what is still buffered is discarded unwritten, and the temp file, which is not the
            // table's, removed (a removal that fails leaves a `.tmp` orphan).
            drop(buffered.into_parts());
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// `len` bytes at `offset` of `f` (`path`, of `size` bytes); a range past the end is a corrupt file.
fn read_at(f: &mut File, path: &str, size: u64, offset: u64, len: u64) -> Result<Vec<u8>> {
    if offset.checked_add(len).is_none_or(|end| end > size) {
        return Err(Error::corrupt(format!("range {offset}+{len} is beyond the file's {size} bytes")).in_file(path));
    }
    f.seek(SeekFrom::Start(offset)).map_err(|e| io_err(path, e))?;
    // Read into spare capacity: zero-filling it first was 4% of a one-off get's profile.
    let mut buf = Vec::with_capacity(usize::try_from(len).map_err(|_| Error::invalid("read range", "too large"))?);
    f.take(len).read_to_end(&mut buf).map_err(|e| io_err(path, e))?;
    if buf.len() as u64 != len {
        return Err(
            Error::corrupt(format!("range {offset}+{len}: the file ended after {} bytes", buf.len())).in_file(path)
        );
    }
    Ok(buf)
}

impl FileIO for LocalFileIO {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        let _span = tracing::trace_span!("local_read", path).entered();
        fs::read(path).map_err(|e| io_err(path, e))
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let mut f = File::open(path).map_err(|e| io_err(path, e))?;
        let size = f.metadata().map_err(|e| io_err(path, e))?.len();
        read_at(&mut f, path, size, offset, len)
    }

    /// One after another through one handle: a local read is a copy from the page cache, and threads
    /// started for it would only take malloc arenas of their own.
    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        let mut f = File::open(path).map_err(|e| io_err(path, e))?;
        let size = f.metadata().map_err(|e| io_err(path, e))?.len();
        ranges.iter().map(|r| read_at(&mut f, path, size, r.start, r.end.saturating_sub(r.start))).collect()
    }

    fn size(&self, path: &str) -> Result<u64> {
        fs::metadata(path).map(|m| m.len()).map_err(|e| io_err(path, e))
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        let _span = tracing::trace_span!("local_write", path, bytes = data.len()).entered();
        let dir = parent(path);
        self.mkdirs(dir)?;
        let tmp = temp_name(path);
        let result = write_synced(&tmp, data).and_then(|()| fs::rename(&tmp, path).map_err(|e| io_err(path, e)));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result?;
        sync_dir(dir)
    }

    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn FileSink>>> {
        let dir = parent(path).to_string();
        self.mkdirs(&dir)?;
        let tmp = temp_name(path);
        let file = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| io_err(&tmp, e))?;
        let file = Some(BufWriter::with_capacity(SINK_BUFFER, file));
        Ok(Some(Box::new(LocalSink { tmp, path: path.to_string(), dir, file })))
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        let _span = tracing::debug_span!("local_create_if_absent", path).entered();
        let dir = parent(path);
        self.mkdirs(dir)?;
        if Path::new(path).exists() {
            return Ok(false);
        }
        let tmp = temp_name(path);
        write_synced(&tmp, data).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })?;
        // link(2) is atomic and never replaces an existing target: exactly one racer wins.
        let linked = fs::hard_link(&tmp, path);
        let _ = fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                sync_dir(dir)?;
                Ok(true)
            }
            Err(e) if e.kind() == IoKind::AlreadyExists => Ok(false),
            Err(e) => Err(io_err(path, e)),
        }
    }

    fn exists(&self, path: &str) -> Result<bool> {
        Path::new(path).try_exists().map_err(|e| io_err(path, e))
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == IoKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(dir, e)),
        };
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| io_err(dir, e))?;
            let path = entry.path().to_string_lossy().into_owned();
            let meta = match entry.metadata() {
                Ok(m) => m,
                // Deleted between the listing and the stat: not there any more.
                Err(e) if e.kind() == IoKind::NotFound => continue,
                Err(e) => return Err(io_err(&path, e)),
            };
            let modified_millis = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            out.push(FileStatus {
                path,
                size: if meta.is_dir() { 0 } else { meta.len() },
                is_dir: meta.is_dir(),
                modified_millis,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn delete(&self, path: &str) -> Result<()> {
        match fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == IoKind::NotFound => Ok(()),
            Err(e) => Err(io_err(path, e)),
        }
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        match fs::remove_dir_all(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == IoKind::NotFound => Ok(()),
            Err(e) => Err(io_err(path, e)),
        }
    }

    fn mkdirs(&self, path: &str) -> Result<()> {
        if path.is_empty() {
            return Ok(());
        }
        fs::create_dir_all(path).map_err(|e| io_err(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn create_if_absent_has_exactly_one_winner() {
        let dir = tempfile::tempdir().unwrap();
        let path = format!("{}/snap/snapshot-1", dir.path().display());
        let io = Arc::new(LocalFileIO::new());
        let winners: usize = (0..8)
            .map(|i| {
                let io = io.clone();
                let path = path.clone();
                std::thread::spawn(move || io.create_if_absent(&path, format!("writer {i}").as_bytes()).unwrap())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| usize::from(h.join().unwrap()))
            .sum();
        assert_eq!(winners, 1);
        let content = String::from_utf8(io.read(&path).unwrap()).unwrap();
        assert!(content.starts_with("writer "));
        // No temp files left behind.
        assert_eq!(io.list(&format!("{}/snap", dir.path().display())).unwrap().len(), 1);
    }

    #[test]
    fn read_range_checks_bounds_and_missing_files_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = format!("{}/f", dir.path().display());
        let io = LocalFileIO::new();
        io.write(&path, b"hello world").unwrap();
        assert_eq!(io.read_range(&path, 6, 5).unwrap(), b"world");
        assert!(io.read_range(&path, 6, 6).is_err());
        let pieces = io.read_ranges(&path, &[6..11, 0..5, 3..3]).unwrap();
        assert_eq!(pieces, vec![b"world".to_vec(), b"hello".to_vec(), Vec::new()]);
        let past = io.read_ranges(&path, &[0..5, 6..12]).err().map(|e| e.kind());
        assert_eq!(past, Some(strata_spec::ErrorKind::Corrupt));
        let missing = format!("{}/missing", dir.path().display());
        assert_eq!(io.read(&missing).err().map(|e| e.kind()), Some(strata_spec::ErrorKind::NotFound));
        io.delete(&missing).unwrap();
    }
}
