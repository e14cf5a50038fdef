//! Parquet files read by byte ranges, for narrow reads (point lookups: a few rows, or a few columns).
//!
//! The decoder asks for bytes piece by piece: the footer's length, the footer, the page indexes, then a
//! dictionary page and the selected data pages of every column. On a local disk each piece is a cheap
//! read; on an object store each is a request of tens of milliseconds, one after the other. On stores that
//! count requests (object stores) a [`RangedFile`] therefore fetches ahead: the file's tail (footer and,
//! usually, the page indexes) in one request, and, once the footer says where the read's pages are, all of
//! them at once ([`FileIO::read_ranges`], which an object store coalesces and issues side by side). Pieces
//! it has not fetched are read as the decoder asks, so fetching ahead changes how many requests are made,
//! never which bytes are decoded.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use parquet::file::metadata::ParquetMetaData;
use std::sync::OnceLock;

use crate::integrity::block_crc::BlockCrcs;
use strata_io::FileIO;
use strata_spec::{Error, Result};

/// Bytes of a file's end fetched first: Paimon's and Strata's footers, with their page indexes, mostly fit.
const TAIL: u64 = 64 << 10;

/// Ranges closer than this are fetched as one (a request costs more than the bytes between them).
const COALESCE: u64 = 256 << 10;

/// A coalesced range is fetched into pieces of at most this many bytes (rounded up to whole checksum
/// blocks). A part of a file in 16 MiB row groups coalesces into one 16 MiB range, and freeing buffers that
/// large raises glibc's dynamic mmap threshold, after which the scan's mid-size blocks come from its arenas
/// and fragment them: a 4M-row scan's resident peak was 1,724-3,168 MiB, and 1,613-1,616 MiB in pieces of
/// 1 MiB (256 KiB gave no more; docs/BENCHMARKS.md "Session 17"). The pieces go to the store as one
/// `read_ranges`, which an object store coalesces again.
const MAX_PIECE: u64 = 1 << 20;

/// A file whose bytes come from a `FileIO`'s range reads as the parquet decoder asks for them, from what was
/// fetched ahead where it covers them. Clones share what was fetched.
#[derive(Clone)]
pub(crate) struct RangedFile {
    io: Arc<dyn FileIO>,
    path: String,
    len: u64,
    /// Fetched pieces (start, bytes), sorted by start, not overlapping.
    fetched: Arc<Mutex<Vec<(u64, Bytes)>>>,
    /// Whether to fetch ahead (the store counts requests).
    ahead: bool,
    /// The file's block checksums, once its footer is read: from then on every fetch inside the bytes they
    /// cover is widened to whole blocks and checked before it is kept, so the decoder sees checked bytes only.
    blocks: Arc<OnceLock<BlockCrcs>>,
}

impl RangedFile {
    /// `path` of `len` bytes in `io`.
    pub(crate) fn new(io: Arc<dyn FileIO>, path: &str, len: u64) -> Self {
        let ahead = io.request_counts().is_some();
        let fetched = Arc::new(Mutex::new(Vec::new()));
        RangedFile { io, path: path.to_string(), len, fetched, ahead, blocks: Arc::new(OnceLock::new()) }
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Checks every later fetch, and the whole blocks of the pieces fetched so far (the tail, which for a
    /// small file is all of it), against `blocks`; a piece's part blocks are dropped, to be fetched again
    /// (and checked) if the decoder asks for them.
    pub(crate) fn check_blocks(&self, blocks: BlockCrcs) -> Result<()> {
        let mut fetched = self.fetched.lock();
        // Set while the pieces are locked, so no fetch in between is kept unchecked. A second call (the
        // footer parsed again) finds the same checksums set.
        let blocks = self.blocks.get_or_init(|| blocks);
        let mut kept = Vec::with_capacity(fetched.len());
        let mut failed = None;
        for (start, bytes) in std::mem::take(&mut *fetched) {
            let Some(r) = blocks.whole_blocks(start, bytes.len() as u64) else { continue };
            let piece = bytes.slice((r.start - start) as usize..(r.end - start) as usize);
            match blocks.check(r.start, &piece, &self.path) {
                Ok(()) => kept.push((r.start, piece)),
                Err(e) => failed = Some(e),
            }
        }
        // Only checked pieces stay (a failed one is fetched, and fails, again if asked for).
        *fetched = kept;
        failed.map_or(Ok(()), Err)
    }

    pub(crate) fn io(&self) -> &Arc<dyn FileIO> {
        &self.io
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// On a store that counts requests: fetches the file's tail, where the footer is.
    pub(crate) fn fetch_tail(&self) -> Result<()> {
        if !self.ahead || self.len == 0 {
            return Ok(());
        }
        let start = self.len.saturating_sub(TAIL);
        self.fetch(std::iter::once(start..self.len).collect())
    }

    /// On a store that counts requests, or on any with `any_store`: fetches the byte ranges of the pages a
    /// read of `groups` (row-group index and its rows in the file) and root columns `roots` decodes, only the pages holding rows of
    /// `select` (ascending, disjoint row ranges in file positions) when there is a selection and an offset
    /// index.
    pub(crate) fn fetch_pages(
        &self,
        meta: &ParquetMetaData,
        groups: &[(usize, Range<u64>)],
        roots: &[usize],
        select: Option<&[Range<u64>]>,
        any_store: bool,
    ) -> Result<()> {
        if !self.ahead && !any_store {
            return Ok(());
        }
        let ranges = page_ranges(meta, groups, roots, select);
        self.fetch(ranges)
    }

    /// Fetches `ranges` (coalesced) and keeps the pieces not already held.
    /// Ranges are widened to whole blocks when the file's block checksums are known, and checked on arrival.
    fn fetch(&self, ranges: Vec<Range<u64>>) -> Result<()> {
        let blocks = self.blocks.get();
        let wanted: Vec<Range<u64>> = {
            let fetched = self.fetched.lock();
            coalesce(
                ranges
                    .into_iter()
                    .filter(|r| {
                        r.start < r.end && r.end <= self.len && covering(&fetched, r.start, r.end - r.start).is_none()
                    })
                    // Widened to whole blocks, less the blocks already held (the pages of a column are read
                    // in order, so the block a page shares with the one before is not fetched twice).
                    .map(|r| blocks.map_or(r.clone(), |b| unheld(&fetched, b.widen(r))))
                    .filter(|r| r.start < r.end),
            )
        };
        if wanted.is_empty() {
            return Ok(());
        }
        let step = blocks.map_or(MAX_PIECE, |b| MAX_PIECE.div_ceil(b.block_size()).saturating_mul(b.block_size()));
        let wanted = split_ranges(wanted, step);
        let pieces = self.io.read_ranges(&self.path, &wanted)?;
        let mut fetched = self.fetched.lock();
        for (r, bytes) in wanted.into_iter().zip(pieces) {
            if bytes.len() as u64 != r.end - r.start {
                return Err(Error::corrupt(format!("range {}..{} returned {} bytes", r.start, r.end, bytes.len()))
                    .in_file(&self.path));
            }
            if let Some(b) = blocks {
                b.check(r.start, &bytes, &self.path)?;
            }
            // A piece this one holds is dropped, so the piece found for a start is never a shorter one.
            fetched.retain(|(s, b)| *s < r.start || s + b.len() as u64 > r.end);
            fetched.push((r.start, Bytes::from(bytes)));
        }
        fetched.sort_by_key(|(s, _)| *s);
        Ok(())
    }

    /// Whether a read at `start` must go through a checked fetch.
    fn checked_at(&self, start: u64) -> bool {
        self.blocks.get().is_some_and(|b| start < b.end())
    }

    /// The fetched bytes from `start`, at most `len` of them, when a piece holds `start`.
    fn held_from(&self, start: u64, len: u64) -> Option<Bytes> {
        let fetched = self.fetched.lock();
        let (_, s, b) = piece_at(&fetched, start)?;
        let from = usize::try_from(start - s).ok()?;
        let to = b.len().min(from.saturating_add(usize::try_from(len).ok()?));
        Some(b.slice(from..to))
    }

    /// The bytes `start..start + len`, when a fetched piece holds all of them.
    fn covered(&self, start: u64, len: u64) -> Option<Bytes> {
        let fetched = self.fetched.lock();
        covering(&fetched, start, len)
    }
}

/// The bytes `start..start + len` from `fetched` (sorted by start): a slice of one piece, or copied from
/// consecutive pieces that together hold them (a checked fetch leaves out blocks already held, so one page
/// may span two pieces).
fn covering(fetched: &[(u64, Bytes)], start: u64, len: u64) -> Option<Bytes> {
    // The last piece starting at or before `start`, holding it or not (an empty read at a piece's end is
    // that piece's).
    let i = fetched.partition_point(|(s, _)| *s <= start).checked_sub(1)?;
    let (s, bytes) = &fetched[i];
    let from = usize::try_from(start - s).ok()?;
    let want = usize::try_from(len).ok()?;
    let to = from.checked_add(want)?;
    if to <= bytes.len() {
        return Some(bytes.slice(from..to));
    }
    let end = start.checked_add(len)?;
    let mut out = Vec::with_capacity(want);
    let mut pos = start;
    for (s, b) in &fetched[i..] {
        if *s > pos {
            return None;
        }
        let piece_end = s + b.len() as u64;
        if piece_end <= pos {
            continue;
        }
        let take_to = piece_end.min(end);
        out.extend_from_slice(&b[usize::try_from(pos - s).ok()?..usize::try_from(take_to - s).ok()?]);
        pos = take_to;
        if pos == end {
            return Some(Bytes::from(out));
        }
    }
    None
}

/// The piece of `fetched` (sorted by start) holding byte `at`: its index, start and bytes. (Of pieces that
/// overlap, the one starting last at or before `at`, as `fetch` drops pieces another one holds.)
fn piece_at(fetched: &[(u64, Bytes)], at: u64) -> Option<(usize, u64, &Bytes)> {
    let i = fetched.partition_point(|(s, _)| *s <= at).checked_sub(1)?;
    let (s, b) = &fetched[i];
    (at < s + b.len() as u64).then_some((i, *s, b))
}

/// `r` without the blocks at its ends that a piece of `fetched` already holds.
fn unheld(fetched: &[(u64, Bytes)], mut r: Range<u64>) -> Range<u64> {
    while r.start < r.end {
        match piece_at(fetched, r.start) {
            Some((_, s, b)) => r.start = s + b.len() as u64,
            None => break,
        }
    }
    while r.start < r.end {
        match piece_at(fetched, r.end - 1) {
            Some((_, start, _)) if start > r.start => r.end = start,
            _ => break,
        }
    }
    r
}

/// `ranges` cut into pieces of at most `step` bytes, each starting `step`s after its range's start (so a
/// range aligned to checksum blocks gives pieces aligned to them when `step` is a whole number of blocks).
fn split_ranges(ranges: Vec<Range<u64>>, step: u64) -> Vec<Range<u64>> {
    let step = step.max(1);
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let mut start = r.start;
        while start < r.end {
            let end = start.saturating_add(step).min(r.end);
            out.push(start..end);
            start = end;
        }
    }
    out
}

/// `ranges` sorted and merged where they overlap or lie within [`COALESCE`] of each other.
fn coalesce(ranges: impl Iterator<Item = Range<u64>>) -> Vec<Range<u64>> {
    let mut all: Vec<Range<u64>> = ranges.collect();
    all.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(all.len());
    for r in all {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(COALESCE) => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The byte ranges a read decodes: per row group and leaf column of the roots read, the dictionary page and the data pages
/// holding selected rows (from the offset index), or the whole column chunk.
fn page_ranges(
    meta: &ParquetMetaData,
    groups: &[(usize, Range<u64>)],
    roots: &[usize],
    select: Option<&[Range<u64>]>,
) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    for (g, rows) in groups {
        let Some(rg) = meta.row_groups().get(*g) else { continue };
        // The selected rows in this group, relative to its first row.
        let selected: Option<Vec<Range<u64>>> = select.map(|s| {
            s.iter()
                .filter(|r| r.start < rows.end && rows.start < r.end)
                .map(|r| r.start.max(rows.start) - rows.start..r.end.min(rows.end) - rows.start)
                .collect()
        });
        if selected.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        let leaves =
            roots.iter().flat_map(|&r| crate::predicate::parquet_leaves(meta.file_metadata().schema_descr(), r));
        for c in leaves {
            let Some(col) = rg.columns().get(c) else { continue };
            let pages = meta.offset_index().and_then(|o| o.get(*g)).and_then(|cols| cols.get(c));
            match (pages, &selected) {
                (Some(index), Some(sel)) if !index.page_locations().is_empty() => {
                    let locs = index.page_locations();
                    let first = locs[0].offset.max(0) as u64;
                    if let Some(d) = col.dictionary_page_offset() {
                        out.push(d.max(0) as u64..first);
                    }
                    for (i, p) in locs.iter().enumerate() {
                        let from = p.first_row_index.max(0) as u64;
                        let to = locs.get(i + 1).map_or(rows.end - rows.start, |n| n.first_row_index.max(0) as u64);
                        // The first selected range ending after the page's first row starts before its end.
                        let lo = sel.partition_point(|r| r.end <= from);
                        if sel.get(lo).is_some_and(|r| r.start < to) {
                            let start = p.offset.max(0) as u64;
                            out.push(start..start + p.compressed_page_size.max(0) as u64);
                        }
                    }
                }
                _ => {
                    let (start, len) = col.byte_range();
                    out.push(start..start + len);
                }
            }
        }
    }
    out
}

fn external(e: Error) -> parquet::errors::ParquetError {
    parquet::errors::ParquetError::External(Box::new(e))
}

impl parquet::file::reader::Length for RangedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl parquet::file::reader::ChunkReader for RangedFile {
    type T = RangedRead;

    fn get_read(&self, start: u64) -> parquet::errors::Result<RangedRead> {
        Ok(RangedRead { file: self.clone(), pos: start, end: self.len, buf: Bytes::new() })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        if let Some(b) = self.covered(start, length as u64) {
            return Ok(b);
        }
        if self.checked_at(start) {
            let end = start.checked_add(length as u64).filter(|&e| e <= self.len).ok_or_else(|| {
                external(Error::corrupt(format!("bytes {start}+{length} past the end")).in_file(&self.path))
            })?;
            self.fetch(std::iter::once(start..end).collect()).map_err(external)?;
            return self.covered(start, length as u64).ok_or_else(|| {
                external(Error::corrupt(format!("bytes {start}..{end} not held after a fetch")).in_file(&self.path))
            });
        }
        self.io.read_range(&self.path, start, length as u64).map(Bytes::from).map_err(external)
    }
}

/// Bytes a sequential read fetches at least when nothing fetched ahead covers it.
const READ_WINDOW: u64 = 64 << 10;

/// A sequential reader over a ranged file: from fetched pieces where they cover it, else what the decoder
/// asks for (at least [`READ_WINDOW`], at most a megabyte at a time) from the store.
pub(crate) struct RangedRead {
    file: RangedFile,
    pos: u64,
    end: u64,
    buf: Bytes,
}

impl std::io::Read for RangedRead {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.buf.is_empty() {
            // What the decoder asks for, at least a small window (a page header arrives in pieces) and at
            // most a megabyte: without an offset index the decoder opens a reader at every page, so a
            // fixed megabyte would read far past small pages.
            let n = (self.end.saturating_sub(self.pos)).min((out.len() as u64).clamp(READ_WINDOW, 1 << 20));
            if n == 0 {
                return Ok(0);
            }
            let file = &self.file;
            self.buf = match file.held_from(self.pos, n) {
                Some(b) => b,
                None if file.checked_at(self.pos) => {
                    file.fetch(std::iter::once(self.pos..self.pos + n).collect()).map_err(std::io::Error::other)?;
                    file.held_from(self.pos, n).ok_or_else(|| std::io::Error::other("bytes not held after a fetch"))?
                }
                None => Bytes::from(file.io.read_range(&file.path, self.pos, n).map_err(std::io::Error::other)?),
            };
            self.pos += self.buf.len() as u64;
        }
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn close_ranges_merge_and_pieces_answer_only_what_they_hold() {
        assert_eq!(split_ranges(vec![0..10, 20..21, 30..30], 4), vec![0..4, 4..8, 8..10, 20..21]);
        let merged = coalesce(vec![10..20, 0..5, 30..40, (1 << 20)..(1 << 20) + 5].into_iter());
        assert_eq!(merged, vec![0..40, (1 << 20)..(1 << 20) + 5]);
        let pieces = vec![(0u64, Bytes::from_static(b"0123456789")), (100, Bytes::from_static(b"abc"))];
        assert_eq!(covering(&pieces, 2, 3).unwrap(), Bytes::from_static(b"234"));
        assert_eq!(covering(&pieces, 100, 3).unwrap(), Bytes::from_static(b"abc"));
        assert!(covering(&pieces, 8, 5).is_none(), "a range past a piece's end");
        assert!(covering(&pieces, 50, 1).is_none(), "a range between pieces");
        assert!(covering(&[], 0, 1).is_none());
    }

    /// A memory file system counting the bytes its range reads return.
    #[derive(Debug, Default)]
    struct Counting {
        inner: strata_io::MemoryFileIO,
        read: std::sync::atomic::AtomicU64,
    }

    impl FileIO for Counting {
        fn read(&self, path: &str) -> Result<Vec<u8>> {
            self.inner.read(path)
        }
        fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
            let b = self.inner.read_range(path, offset, len)?;
            self.read.fetch_add(b.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(b)
        }
        fn size(&self, path: &str) -> Result<u64> {
            self.inner.size(path)
        }
        fn write(&self, path: &str, data: &[u8]) -> Result<()> {
            self.inner.write(path, data)
        }
        fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
            self.inner.create_if_absent(path, data)
        }
        fn exists(&self, path: &str) -> Result<bool> {
            self.inner.exists(path)
        }
        fn list(&self, dir: &str) -> Result<Vec<strata_io::FileStatus>> {
            self.inner.list(dir)
        }
        fn delete(&self, path: &str) -> Result<()> {
            self.inner.delete(path)
        }
        fn delete_dir(&self, path: &str) -> Result<()> {
            self.inner.delete_dir(path)
        }
        fn mkdirs(&self, path: &str) -> Result<()> {
            self.inner.mkdirs(path)
        }
    }

    /// With block checksums, every byte handed out was checked: random reads (single and sequential, in any
    /// order, over pieces fetched before the checksums were known too) return the file's bytes, a flipped
    /// byte fails every read touching its block and no other, and a block is not fetched twice.
    #[test]
    fn checked_reads_return_the_files_bytes_and_fail_on_a_flipped_block() {
        use crate::integrity::block_crc::{block_crcs, BlockCrcs};
        use parquet::file::reader::ChunkReader;
        use std::io::Read;
        // xorshift: deterministic offsets without a dependency.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let data: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let covered = 250_000usize; // the rest stands for the page indexes and the footer
        let crcs = BlockCrcs::parse_for_test(&block_crcs(&data[..covered]), data.len() as u64);
        for flipped in [None, Some(100_000usize), Some(249_999)] {
            let counting = Arc::new(Counting::default());
            let mut stored = data.clone();
            if let Some(at) = flipped {
                stored[at] ^= 0x10;
            }
            counting.write("f", &stored).unwrap();
            let file = RangedFile::new(counting.clone(), "f", data.len() as u64);
            // A piece fetched before the checksums are known (the tail, on an object store).
            file.fetch(std::iter::once(200_000..300_000).collect()).unwrap();
            file.check_blocks(crcs.clone()).unwrap_or_else(|e| assert!(flipped == Some(249_999), "{e}"));
            for _ in 0..300 {
                let start = next(data.len() as u64 - 1);
                let len = 1 + next((data.len() as u64 - start).min(70_000));
                let range = start as usize..(start + len) as usize;
                // Whether the range's blocks hold the flipped byte; a sequential read may read a window
                // past what it returns, so it may also fail on a flip in the blocks of that window.
                let sequential = next(2) == 1;
                let touches = |end: usize| {
                    flipped.is_some_and(|at| {
                        let block = |p: usize| p / (32 << 10);
                        at < covered
                            && range.start < covered
                            && block(range.start) <= block(at)
                            && block(at) <= block(end - 1)
                    })
                };
                let hits_flip = touches(range.end);
                let may_hit = touches(if sequential { range.end + READ_WINDOW as usize } else { range.end });
                let got = if !sequential {
                    file.get_bytes(start, len as usize).map(|b| b.to_vec())
                } else {
                    let mut out = vec![0u8; len as usize];
                    file.get_read(start)
                        .unwrap()
                        .read_exact(&mut out)
                        .map(|_| out)
                        .map_err(|e| parquet::errors::ParquetError::General(e.to_string()))
                };
                match got {
                    Ok(bytes) => {
                        assert!(!hits_flip, "{range:?} read past the flipped byte");
                        assert_eq!(bytes, stored[range.clone()], "{range:?}");
                        if range.end <= covered {
                            assert_eq!(bytes, data[range.clone()], "{range:?}");
                        }
                    }
                    Err(e) => assert!(may_hit, "{range:?}: {e}"),
                }
            }
            if flipped.is_none() {
                let read = counting.read.load(std::sync::atomic::Ordering::Relaxed);
                assert!(read <= data.len() as u64 + 100_000, "{read} bytes fetched for a {}-byte file", data.len());
            }
        }
    }

    /// A sequential read (the decoder's, page by page, without an offset index) fetches about what it
    /// reads: a small page costs a small window, not a megabyte; a large read is fetched as asked; and the
    /// bytes are the file's.
    #[test]
    fn sequential_reads_fetch_what_is_asked_not_a_megabyte() {
        use parquet::file::reader::ChunkReader;
        use std::io::Read;
        let counting = Arc::new(Counting::default());
        let data: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
        counting.write("f", &data).unwrap();
        let file = RangedFile::new(counting.clone(), "f", data.len() as u64);
        let fetched = || counting.read.load(std::sync::atomic::Ordering::Relaxed);
        // A page: a header read in small pieces, then a 10 KB body.
        let mut r = file.get_read(1000).unwrap();
        let mut header = [0u8; 16];
        r.read_exact(&mut header).unwrap();
        let mut body = vec![0u8; 10_000];
        r.read_exact(&mut body).unwrap();
        assert_eq!(&header[..], &data[1000..1016]);
        assert_eq!(body, data[1016..11_016]);
        assert_eq!(fetched(), READ_WINDOW, "a small page costs one window");
        // A large body: what is asked, not rounded up to a megabyte.
        let mut r = file.get_read(2 << 20).unwrap();
        let mut big = vec![0u8; 300_000];
        r.read_exact(&mut big).unwrap();
        assert_eq!(big, data[(2 << 20)..(2 << 20) + 300_000]);
        assert_eq!(fetched() - READ_WINDOW, 300_000);
        // The end of the file bounds a read.
        let mut r = file.get_read(data.len() as u64 - 10).unwrap();
        let mut tail = Vec::new();
        r.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, data[data.len() - 10..]);
    }
}
