//! Parsed parquet footers, with their page indexes, kept across narrow reads of the same file.
//!
//! A point lookup reads a file twice (its key column, then the matching rows' other columns), and a process
//! answering lookups reads the same few files again and again. Each read of a footer and its page indexes
//! (for a file of 24 columns, tens of kilobytes of thrift, and the arrow schema) cost more than the pages
//! the read decodes. Paimon's data files are immutable and uniquely named (a UUID in every name), so a
//! footer read once stays right for as long as the file does.
//!
//! A cache belongs to one table (one storage, one directory, files named by the table's writers), keyed by
//! the path and the file's length as the manifest records it, and bounded by the parsed metadata's memory.
//! A process-wide cache would answer for a file of another storage or another table at the same path and
//! length: a test writing `f.parquet` into fresh in-memory stores decoded one file's pages by another's
//! footer. What a cached footer points at is still checked on every read: the pages are fetched and verified
//! by the block checksums the footer lists, as on a first read.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;

/// The parsed footers a table keeps, by the memory they take (lookups touch a few files per bucket; a footer
/// with page indexes of a 24-column, 250,000-row file takes some 200 KB).
pub const FOOTER_CACHE_BYTES: usize = 64 << 20;

struct Entry {
    meta: ArrowReaderMetadata,
    bytes: usize,
    last_used: u64,
}

struct Footers {
    entries: HashMap<(String, u64), Entry>,
    bytes: usize,
    max_bytes: usize,
    clock: u64,
}

impl Footers {
    fn new(max_bytes: usize) -> Self {
        Footers { entries: HashMap::new(), bytes: 0, max_bytes, clock: 0 }
    }

    fn get(&mut self, path: &str, len: u64) -> Option<ArrowReaderMetadata> {
        self.clock += 1;
        let now = self.clock;
        let e = self.entries.get_mut(&(path.to_string(), len))?;
        e.last_used = now;
        Some(e.meta.clone())
    }

    fn put(&mut self, path: &str, len: u64, meta: &ArrowReaderMetadata) {
        let bytes = meta.metadata().memory_size();
        if bytes > self.max_bytes / 8 {
            return;
        }
        self.clock += 1;
        let entry = Entry { meta: meta.clone(), bytes, last_used: self.clock };
        if let Some(old) = self.entries.insert((path.to_string(), len), entry) {
            self.bytes -= old.bytes;
        }
        self.bytes += bytes;
        while self.bytes > self.max_bytes {
            let Some(victim) = self.entries.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some(e) = self.entries.remove(&victim) {
                self.bytes -= e.bytes;
            }
        }
    }
}

/// A table's parsed footers (see the module docs); clones share them.
#[derive(Clone)]
pub struct FooterCache(Arc<Mutex<Footers>>);

impl std::fmt::Debug for FooterCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let footers = self.0.lock();
        write!(f, "FooterCache({} footers, {} bytes)", footers.entries.len(), footers.bytes)
    }
}

impl FooterCache {
    /// An empty cache of at most `max_bytes` of parsed footers.
    pub fn new(max_bytes: usize) -> Self {
        FooterCache(Arc::new(Mutex::new(Footers::new(max_bytes))))
    }

    /// The footer of `path` (`len` bytes), with its page indexes, if read before.
    pub(crate) fn get(&self, path: &str, len: u64) -> Option<ArrowReaderMetadata> {
        self.0.lock().get(path, len)
    }

    /// Keeps the footer of `path` (`len` bytes), read with its page indexes; the least recently used go when
    /// the footers kept pass the bound.
    pub(crate) fn put(&self, path: &str, len: u64, meta: &ArrowReaderMetadata) {
        self.0.lock().put(path, len, meta);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use parquet::arrow::arrow_reader::ArrowReaderOptions;
    use parquet::arrow::ArrowWriter;

    use super::*;

    fn footer(rows: i64) -> ArrowReaderMetadata {
        let batch = RecordBatch::try_from_iter([("v", Arc::new(Int64Array::from_iter_values(0..rows)) as _)]).unwrap();
        let mut w = ArrowWriter::try_new(Vec::new(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        let bytes = bytes::Bytes::from(w.into_inner().unwrap());
        ArrowReaderMetadata::load(&bytes, ArrowReaderOptions::new()).unwrap()
    }

    #[test]
    fn a_footer_is_found_only_for_its_path_and_length() {
        let mut f = Footers::new(1 << 20);
        let meta = footer(10);
        f.put("/t/data-1.parquet", 100, &meta);
        assert!(f.get("/t/data-1.parquet", 100).is_some());
        assert!(f.get("/t/data-1.parquet", 101).is_none(), "a file of another length is another file");
        assert!(f.get("/t/data-2.parquet", 100).is_none());
    }

    #[test]
    fn the_least_recently_used_footers_go_past_the_bound() {
        let size = footer(10).metadata().memory_size();
        let mut f = Footers::new(size * 10);
        for i in 0..10u64 {
            f.put("/t/f", i, &footer(10));
        }
        // The first one used again, then five more: the five used least recently (1 to 5) go.
        assert!(f.get("/t/f", 0).is_some());
        for i in 10..15u64 {
            f.put("/t/f", i, &footer(10));
        }
        assert!(f.bytes <= size * 10, "{} bytes kept, bound {}", f.bytes, size * 10);
        assert!(f.get("/t/f", 0).is_some(), "the footer used recently was dropped");
        assert!((1..=5).all(|i| f.get("/t/f", i).is_none()), "footers used least recently were kept");
        assert!((6..15).all(|i| f.get("/t/f", i).is_some()));
        // One larger than an eighth of the bound is not kept at all.
        let mut small = Footers::new(size * 4);
        small.put("/t/big", 1, &footer(10));
        assert!(small.get("/t/big", 1).is_none());
    }
}
