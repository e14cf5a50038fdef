//! Files written piece by piece: [`FileSink`], and [`create_file`], which gives one for any [`FileIO`].
//!
//! A data file is encoded as it is written. Holding the whole file in memory until it is complete made a
//! writer's memory grow with `target-file-size`; a sink lets the bytes go out as they are made (a temp file
//! on a local disk, the parts of a multipart upload on an object store).

use std::sync::Arc;

use crate::{FileIO, Result};

/// A new file being written, seen by nobody until [`finish`](FileSink::finish) returns.
///
/// The contract is the one [`FileIO::write`] keeps for whole files:
/// - **Nothing partial is ever visible.** Until `finish` returns `Ok`, no reader, listing or existence check
///   sees the path; once it has, the whole content is there, durably, replacing what was there before.
/// - **Dropping a sink unfinished abandons it.** What was staged is removed, best effort: a process killed
///   mid-write leaves at most a staging object outside the table's namespace (a `*.tmp` file next to the
///   target on a local disk, an incomplete multipart upload on an object store), never a file under the
///   target's name.
/// - **Errors are final.** After a failed `write_all` the sink is dropped, never finished.
pub trait FileSink: Send {
    /// Appends `data`.
    fn write_all(&mut self, data: &[u8]) -> Result<()>;

    /// Makes the file visible with every byte appended.
    fn finish(self: Box<Self>) -> Result<()>;
}

/// A sink writing `path` through `io`: the store's own streaming sink where it has one
/// ([`FileIO::create_sink`]), otherwise one that buffers the file and writes it whole at `finish`.
pub fn create_file(io: &Arc<dyn FileIO>, path: &str) -> Result<Box<dyn FileSink>> {
    match io.create_sink(path)? {
        Some(sink) => Ok(sink),
        None => Ok(Box::new(BufferedSink { io: io.clone(), path: path.to_string(), data: Vec::new() })),
    }
}

/// A store's whole-file write behind the sink interface: the bytes are held until `finish`.
struct BufferedSink {
    io: Arc<dyn FileIO>,
    path: String,
    data: Vec<u8>,
}

impl FileSink for BufferedSink {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.data.extend_from_slice(data);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        self.io.write(&self.path, &self.data)
    }
}

/// A sink that passes every byte to `inner` and calls `on_bytes` with each piece (a wrapper's counter).
pub struct InspectSink<F: FnMut(&[u8]) + Send> {
    inner: Box<dyn FileSink>,
    on_bytes: F,
}

impl<F: FnMut(&[u8]) + Send> InspectSink<F> {
    /// `inner`, watched by `on_bytes`.
    pub fn new(inner: Box<dyn FileSink>, on_bytes: F) -> Self {
        InspectSink { inner, on_bytes }
    }
}

impl<F: FnMut(&[u8]) + Send> FileSink for InspectSink<F> {
    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.inner.write_all(data)?;
        (self.on_bytes)(data);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LocalFileIO, MemoryFileIO};

    fn contract(io: Arc<dyn FileIO>, dir: &str) {
        let path = format!("{dir}/sub/f");
        let mut sink = create_file(&io, &path).unwrap();
        sink.write_all(b"hello ").unwrap();
        sink.write_all(&[]).unwrap();
        sink.write_all(b"world").unwrap();
        assert!(!io.file_exists(&path).unwrap(), "a file is visible before it is finished");
        sink.finish().unwrap();
        assert_eq!(io.read(&path).unwrap(), b"hello world");

        // Replacing: the old content stays until the new one is finished.
        let mut sink = create_file(&io, &path).unwrap();
        sink.write_all(b"again").unwrap();
        assert_eq!(io.read(&path).unwrap(), b"hello world");
        sink.finish().unwrap();
        assert_eq!(io.read(&path).unwrap(), b"again");

        // Abandoned: nothing at the path, nothing staged left in the directory.
        let other = format!("{dir}/sub/g");
        let mut sink = create_file(&io, &other).unwrap();
        sink.write_all(&vec![7u8; 3 << 20]).unwrap();
        drop(sink);
        assert!(!io.file_exists(&other).unwrap());
        let names: Vec<String> = io.list(&format!("{dir}/sub")).unwrap().iter().map(|s| s.name().to_string()).collect();
        assert_eq!(names, vec!["f".to_string()]);
    }

    #[test]
    fn sinks_keep_the_whole_file_contract() {
        contract(Arc::new(MemoryFileIO::new()), "/m");
        let dir = tempfile::tempdir().unwrap();
        contract(Arc::new(LocalFileIO::new()), &dir.path().display().to_string());
    }

    #[test]
    fn an_inspecting_sink_sees_every_byte() {
        let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
        let mut seen = 0usize;
        {
            let mut sink = InspectSink::new(create_file(&io, "/a").unwrap(), |b: &[u8]| seen += b.len());
            sink.write_all(b"abc").unwrap();
            Box::new(sink).finish().unwrap();
        }
        assert_eq!(seen, 3);
        assert_eq!(io.read("/a").unwrap(), b"abc");
    }
}
