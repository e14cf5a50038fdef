//! The rows of a local lookup file (the value part of Paimon's lookup store, `LookupStoreWriter` /
//! `LookupStoreReader`): every row of the data file (all columns, reversible) in packed form (`packed`), or in
//! arrow-row form for schemas with nested types, in groups of [`GROUP_ROWS`] rows, each group compressed on
//! its own and checked by a CRC32.
//!
//! A point lookup wants one row. A columnar block decodes every column of every row it holds, one buffer
//! (and one codec frame) per column; a row group of a few kilobytes decodes in one step, and the row found
//! becomes a one-row batch directly. The group's CRC is checked before anything is decoded: the local disk
//! is scratch, and a damaged group is an error (the cache then rebuilds the file from the data file), never
//! a wrong row.
//!
//! Layout: the groups, back to back; each is `raw length: u32 LE`, a codec byte (0 none, 1 lz4, 2 zstd: a
//! group the codec does not shrink by an eighth is stored as it is), then the codec's bytes of its body, and
//! its body is `row count: u32`, `end offset of each row: u32 each`, then the rows' bytes. Where each group
//! lies and its CRC are kept in memory (16 bytes per group).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_row::{RowConverter, SortField};
use arrow_schema::{Schema, SchemaRef};
use strata_spec::{Error, Result};

use super::groups::GroupCache;
use super::packed::{PackedRow, PackedRows};

/// Bytes before a stored group's codec bytes: its raw length (u32 LE) and its codec's tag.
const GROUP_HEADER: usize = 5;

/// Rows per group: a lookup reads and decompresses one group.
pub(crate) const GROUP_ROWS: usize = 8;

/// How groups are compressed (`lookup.cache-spill-compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowCodec {
    None,
    Lz4,
    Zstd,
}

impl RowCodec {
    pub(crate) fn of(compression: Option<arrow_ipc::CompressionType>) -> Self {
        match compression {
            Some(arrow_ipc::CompressionType::LZ4_FRAME) => RowCodec::Lz4,
            Some(arrow_ipc::CompressionType::ZSTD) => RowCodec::Zstd,
            _ => RowCodec::None,
        }
    }

    fn compress(self, raw: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            RowCodec::None => out.extend_from_slice(raw),
            RowCodec::Lz4 => out.extend_from_slice(&lz4_flex::block::compress(raw)),
            RowCodec::Zstd => crate::read::zstd_context::compress(raw, 1, out).map_err(std::io::Error::other)?,
        }
        Ok(())
    }

    /// The body of a stored group whose codec bytes start at `at` of `stored`; a group stored as it is
    /// becomes the body itself, past its header, without a copy.
    fn decompress(self, stored: Vec<u8>, at: usize, raw_len: usize) -> std::result::Result<Buffer, String> {
        let raw = match self {
            RowCodec::None => Buffer::from_vec(stored).slice(at),
            RowCodec::Lz4 => {
                Buffer::from_vec(lz4_flex::block::decompress(&stored[at..], raw_len).map_err(|e| e.to_string())?)
            }
            RowCodec::Zstd => Buffer::from(crate::read::zstd_context::decompress(&stored[at..], &[], raw_len)?),
        };
        if raw.len() != raw_len {
            return Err(format!("a group decompressed to {} bytes, not {raw_len}", raw.len()));
        }
        Ok(raw)
    }

    /// The byte naming the codec of a stored group.
    fn tag(self) -> u8 {
        match self {
            RowCodec::None => 0,
            RowCodec::Lz4 => 1,
            RowCodec::Zstd => 2,
        }
    }

    fn of_tag(tag: u8) -> Option<Self> {
        [RowCodec::None, RowCodec::Lz4, RowCodec::Zstd].into_iter().find(|c| c.tag() == tag)
    }
}

/// Whether `compressed` bytes save enough over `raw` ones to be worth decompressing on every read: at
/// least an eighth (RocksDB's rule); otherwise the group is stored as it is.
fn worth_it(compressed: usize, raw: usize) -> bool {
    compressed < raw - raw / 8
}

/// The form of a row file's rows: packed where every column's type has a packed form (a one-row decode
/// shares buffers), arrow-row otherwise (nested types).
#[derive(Debug)]
pub(crate) enum RowForm {
    Packed(Arc<PackedRows>),
    Arrow(RowConverter),
}

impl RowForm {
    /// The form of rows of `schema`.
    pub(crate) fn of(schema: &Schema) -> Result<Self> {
        if let Some(p) = PackedRows::new(schema) {
            return Ok(RowForm::Packed(Arc::new(p)));
        }
        let fields = schema.fields().iter().map(|f| SortField::new(f.data_type().clone())).collect();
        RowConverter::new(fields).map(RowForm::Arrow).map_err(|e| Error::internal_from("lookup file", e))
    }
}

/// Where one group lies in the file.
#[derive(Debug, Clone, Copy)]
struct Group {
    offset: u64,
    len: u32,
    crc: u32,
}

/// A finished row file: where its groups are.
#[derive(Debug)]
pub(crate) struct RowFile {
    pub(crate) path: PathBuf,
    groups: Vec<Group>,
    rows: u64,
    pub(crate) bytes: u64,
}

/// Writes a row file group by group.
pub(crate) struct RowFileWriter {
    path: PathBuf,
    out: BufWriter<File>,
    codec: RowCodec,
    /// The open group's row ends and row bytes.
    ends: Vec<u32>,
    body: Vec<u8>,
    groups: Vec<Group>,
    rows: u64,
    written: u64,
    scratch: Vec<u8>,
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path.display().to_string(), e)
}

impl RowFileWriter {
    pub(crate) fn create(path: PathBuf, codec: RowCodec) -> Result<Self> {
        let out = BufWriter::new(File::create(&path).map_err(io_error(&path))?);
        Ok(RowFileWriter {
            path,
            out,
            codec,
            ends: Vec::with_capacity(GROUP_ROWS),
            body: Vec::new(),
            groups: Vec::new(),
            rows: 0,
            written: 0,
            scratch: Vec::new(),
        })
    }

    /// Appends the rows of `columns` (the file's columns, in file order) in `form`.
    pub(crate) fn append(&mut self, form: &RowForm, columns: &[ArrayRef]) -> Result<()> {
        match form {
            RowForm::Packed(p) => {
                let prepared = p.prepare(columns)?;
                for row in 0..columns.first().map_or(0, |c| c.len()) {
                    p.encode_row(&prepared, row, &mut self.body)?;
                    self.end_row()?;
                }
            }
            RowForm::Arrow(conv) => {
                let rows = conv.convert_columns(columns).map_err(|e| Error::internal_from("lookup rows", e))?;
                for row in rows.iter() {
                    self.body.extend_from_slice(row.as_ref());
                    self.end_row()?;
                }
            }
        }
        Ok(())
    }

    /// Ends the row whose bytes were just appended to the body.
    fn end_row(&mut self) -> Result<()> {
        let end =
            u32::try_from(self.body.len()).map_err(|_| Error::invalid("lookup file", "a group of rows over 4 GiB"))?;
        self.ends.push(end);
        if self.ends.len() == GROUP_ROWS {
            self.flush_group()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> Result<()> {
        if self.ends.is_empty() {
            return Ok(());
        }
        let mut raw = Vec::with_capacity(4 + 4 * self.ends.len() + self.body.len());
        raw.extend_from_slice(&(self.ends.len() as u32).to_le_bytes());
        for e in &self.ends {
            raw.extend_from_slice(&e.to_le_bytes());
        }
        raw.extend_from_slice(&self.body);
        let raw_len = u32::try_from(raw.len()).map_err(|_| Error::invalid("lookup file", "a group over 4 GiB"))?;
        self.scratch.clear();
        self.scratch.extend_from_slice(&raw_len.to_le_bytes());
        self.scratch.push(self.codec.tag());
        self.codec.compress(&raw, &mut self.scratch).map_err(io_error(&self.path))?;
        if self.codec != RowCodec::None && !worth_it(self.scratch.len() - GROUP_HEADER, raw.len()) {
            self.scratch.truncate(4);
            self.scratch.push(RowCodec::None.tag());
            self.scratch.extend_from_slice(&raw);
        }
        self.out.write_all(&self.scratch).map_err(io_error(&self.path))?;
        let len = u32::try_from(self.scratch.len()).map_err(|_| Error::invalid("lookup file", "a group over 4 GiB"))?;
        self.groups.push(Group { offset: self.written, len, crc: crc32fast::hash(&self.scratch) });
        self.written += u64::from(len);
        self.rows += self.ends.len() as u64;
        self.ends.clear();
        self.body.clear();
        Ok(())
    }

    /// The finished file; on an error the partial file is removed (as it is when the writer is dropped).
    pub(crate) fn finish(mut self) -> Result<RowFile> {
        self.flush_group()?;
        self.out.flush().map_err(io_error(&self.path))?;
        let path = std::mem::take(&mut self.path);
        let groups = std::mem::take(&mut self.groups);
        Ok(RowFile { path, groups, rows: self.rows, bytes: self.written })
    }
}

impl Drop for RowFileWriter {
    fn drop(&mut self) {
        // Unfinished (an error or a panic while building): the partial file is scratch.
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl RowFile {
    /// Bytes held in memory for the file.
    pub(crate) fn memory_size(&self) -> u64 {
        (self.groups.len() * std::mem::size_of::<Group>()) as u64
    }

    /// The rows at `positions` (ascending) as a batch of `schema` decoded from `form` (the one that wrote
    /// them), read through `file` (this row file, open) or taken from `cached` (the cache and this file's id
    /// in it, which keeps the groups read); and how many groups were read from `file`.
    pub(crate) fn read(
        &self,
        file: &File,
        positions: &[u64],
        form: &RowForm,
        schema: &SchemaRef,
        mut cached: Option<(&mut GroupCache, u64)>,
    ) -> Result<(RecordBatch, u64)> {
        let shown = self.path.display().to_string();
        let bad = |m: String| Error::corrupt_file(shown.clone(), m);
        let mut bodies: Vec<(Buffer, Vec<std::ops::Range<usize>>)> = Vec::new();
        let mut current: Option<u64> = None;
        let mut from_disk = 0u64;
        for &p in positions {
            if p >= self.rows {
                return Err(bad(format!("row {p} asked of a file of {} rows", self.rows)));
            }
            let g = p / GROUP_ROWS as u64;
            if current != Some(g) {
                let (body, read) = self.cached_group(file, g, &mut cached).map_err(&bad)?;
                from_disk += u64::from(read);
                bodies.push((body, Vec::new()));
                current = Some(g);
            }
            let Some((body, picked)) = bodies.last_mut() else { continue };
            picked.push(row_in(body.as_slice(), (p % GROUP_ROWS as u64) as usize).map_err(&bad)?);
        }
        // The CRC matched, so these are the bytes this form wrote; a decoder panic is still an error.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match form {
            RowForm::Packed(p) => {
                let rows: Vec<_> =
                    bodies.iter().flat_map(|(body, picked)| picked.iter().map(move |r| (body, r.clone()))).collect();
                p.decode_rows(&rows, schema)
            }
            RowForm::Arrow(conv) => {
                let parser = conv.parser();
                let rows =
                    bodies.iter().flat_map(|(body, picked)| picked.iter().map(|r| parser.parse(&body[r.clone()])));
                conv.convert_rows(rows)
                    .and_then(|columns| RecordBatch::try_new(schema.clone(), columns))
                    .map_err(|e| e.to_string())
            }
        }))
        .map_err(|p| bad(format!("rows cannot be decoded: {}", strata_spec::panic_message(&p))))?
        .map_err(bad)?;
        Ok((decoded, from_disk))
    }

    /// Row `position` in packed form, read through `file` or taken from `cached` as [`RowFile::read`] does;
    /// `None` when the rows are in arrow-row form. And whether its group was read from `file`.
    pub(crate) fn packed_row(
        &self,
        file: &File,
        position: u64,
        form: &RowForm,
        mut cached: Option<(&mut GroupCache, u64)>,
    ) -> Result<(Option<PackedRow>, bool)> {
        let RowForm::Packed(form) = form else { return Ok((None, false)) };
        let shown = self.path.display().to_string();
        let bad = |m: String| Error::corrupt_file(shown.clone(), m);
        if position >= self.rows {
            return Err(bad(format!("row {position} asked of a file of {} rows", self.rows)));
        }
        let (body, read) = self.cached_group(file, position / GROUP_ROWS as u64, &mut cached).map_err(&bad)?;
        let range = row_in(body.as_slice(), (position % GROUP_ROWS as u64) as usize).map_err(&bad)?;
        Ok((Some(PackedRow { body, range, form: form.clone() }), read))
    }

    /// Group `g`'s body from `cached` when it holds it, else read (and kept there); whether it was read.
    fn cached_group(
        &self,
        file: &File,
        g: u64,
        cached: &mut Option<(&mut GroupCache, u64)>,
    ) -> std::result::Result<(Buffer, bool), String> {
        if let Some(body) = cached.as_mut().and_then(|(c, file_id)| c.get((*file_id, g))) {
            return Ok((body, false));
        }
        let body = self.group(file, usize::try_from(g).map_err(|_| format!("group {g}"))?)?;
        if let Some((c, file_id)) = cached.as_mut() {
            c.insert((*file_id, g), body.clone());
        }
        Ok((body, true))
    }

    /// Group `g`'s body, its CRC checked.
    fn group(&self, file: &File, g: usize) -> std::result::Result<Buffer, String> {
        let loc = self.groups.get(g).ok_or_else(|| format!("group {g} of {}", self.groups.len()))?;
        let mut stored = vec![0u8; loc.len as usize];
        read_exact_at(file, &mut stored, loc.offset).map_err(|e| format!("group {g}: {e}"))?;
        if crc32fast::hash(&stored) != loc.crc {
            return Err(format!("group {g} fails its CRC32"));
        }
        let header = stored.get(..GROUP_HEADER).ok_or_else(|| format!("group {g} is {} bytes", loc.len))?;
        let raw_len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let codec = RowCodec::of_tag(header[4]).ok_or_else(|| format!("group {g} names codec {}", header[4]))?;
        codec.decompress(stored, GROUP_HEADER, raw_len).map_err(|e| format!("group {g}: {e}"))
    }
}

/// The byte range of row `i` in a group's body.
fn row_in(body: &[u8], i: usize) -> std::result::Result<std::ops::Range<usize>, String> {
    let word = |at: usize| -> Option<usize> {
        let b = body.get(at..at + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let n = word(0).ok_or("a group without a row count")?;
    if i >= n {
        return Err(format!("row {i} of a group of {n}"));
    }
    let data = 4 + 4 * n;
    let start = if i == 0 { 0 } else { word(4 + 4 * (i - 1)).ok_or("a row end is missing")? };
    let end = word(4 + 4 * i).ok_or("a row end is missing")?;
    let range = data + start..data + end;
    if start > end || range.end > body.len() {
        return Err(format!("row {i} lies at {range:?} of a {}-byte group", body.len()));
    }
    Ok(range)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Int64Array, StringArray};
    use arrow_schema::{DataType as ArrowType, Field};
    use proptest::prelude::*;

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("name", ArrowType::Utf8, true),
        ]))
    }

    /// Both forms of the test schema's rows: packed (its types have one) and arrow-row.
    fn forms() -> [RowForm; 2] {
        let fields = schema().fields().iter().map(|f| SortField::new(f.data_type().clone())).collect();
        [RowForm::of(&schema()).unwrap(), RowForm::Arrow(RowConverter::new(fields).unwrap())]
    }

    fn columns(n: usize) -> Vec<ArrayRef> {
        let ids: Vec<i64> = (0..n as i64).collect();
        let names: Vec<Option<String>> = (0..n).map(|i| (i % 7 != 0).then(|| format!("name-{i}"))).collect();
        vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(names))]
    }

    fn write(dir: &Path, codec: RowCodec, n: usize, form: &RowForm) -> RowFile {
        let mut w = RowFileWriter::create(dir.join("rows"), codec).unwrap();
        let cols = columns(n);
        // In several appends, as a build hands batches over (slices: arrays with an offset).
        for from in (0..n).step_by(100) {
            let len = 100.min(n - from);
            let part: Vec<ArrayRef> = cols.iter().map(|c| c.slice(from, len)).collect();
            w.append(form, &part).unwrap();
        }
        w.finish().unwrap()
    }

    proptest! {
        #[test]
        fn every_row_read_back_is_the_row_written(
            n in 1usize..400,
            picks in proptest::collection::btree_set(0usize..400, 1..20),
            codec in prop_oneof![Just(RowCodec::None), Just(RowCodec::Lz4), Just(RowCodec::Zstd)],
            packed in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let [p, a] = forms();
            let form = if packed { p } else { a };
            prop_assert_eq!(matches!(form, RowForm::Packed(_)), packed);
            let rf = write(dir.path(), codec, n, &form);
            let file = File::open(&rf.path).unwrap();
            let positions: Vec<u64> = picks.iter().filter(|&&p| p < n).map(|&p| p as u64).collect();
            prop_assume!(!positions.is_empty());
            let (got, _) = rf.read(&file, &positions, &form, &schema(), None).unwrap();
            let all = columns(n);
            let idx = arrow_array::UInt64Array::from(positions.clone());
            for (g, a) in got.columns().iter().zip(&all) {
                let want = arrow_select::take::take(a.as_ref(), &idx, None).unwrap();
                prop_assert_eq!(g.as_ref(), want.as_ref());
            }
            prop_assert!(rf.read(&file, &[n as u64], &form, &schema(), None).is_err(), "a row past the end is an error");
        }
    }

    /// Groups the codec shrinks by an eighth are stored compressed, others as they are; both read back.
    #[test]
    fn groups_are_compressed_only_where_it_pays() {
        let schema = Arc::new(Schema::new(vec![Field::new("b", ArrowType::Binary, false)]));
        let form = RowForm::of(&schema).unwrap();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut noise = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()
        };
        let random: Vec<Vec<u8>> = (0..64).map(|_| (0..8).flat_map(|_| noise()).collect()).collect();
        let repeated: Vec<Vec<u8>> = (0..64).map(|i| vec![b'a' + (i % 3) as u8; 64]).collect();
        for (values, compressed) in [(random, false), (repeated, true)] {
            let dir = tempfile::tempdir().unwrap();
            let mut w = RowFileWriter::create(dir.path().join("rows"), RowCodec::Lz4).unwrap();
            let column: ArrayRef = Arc::new(arrow_array::BinaryArray::from_iter_values(values.iter()));
            w.append(&form, std::slice::from_ref(&column)).unwrap();
            let rf = w.finish().unwrap();
            let bytes = std::fs::read(&rf.path).unwrap();
            let tags: Vec<u8> = rf.groups.iter().map(|g| bytes[g.offset as usize + 4]).collect();
            assert_eq!(tags, vec![if compressed { 1 } else { 0 }; 64 / GROUP_ROWS], "compressible: {compressed}");
            let file = File::open(&rf.path).unwrap();
            let all: Vec<u64> = (0..64).collect();
            let (got, groups) = rf.read(&file, &all, &form, &schema, None).unwrap();
            assert_eq!((got.column(0).as_ref(), groups), (column.as_ref(), (64 / GROUP_ROWS) as u64));
        }
    }

    #[test]
    fn a_flipped_byte_in_any_group_is_an_error_not_a_row() {
        // Every byte of the local file, each codec (the corruption sweep's share of lookup files: they live
        // on local disk only while a query or a compaction uses them).
        for (form, codec) in [RowCodec::None, RowCodec::Lz4].into_iter().flat_map(|c| forms().map(|f| (f, c))) {
            let dir = tempfile::tempdir().unwrap();
            let rf = write(dir.path(), codec, 64, &form);
            let clean = std::fs::read(&rf.path).unwrap();
            for at in 0..clean.len() {
                let mut bytes = clean.clone();
                bytes[at] ^= 1 << (at % 8);
                std::fs::write(&rf.path, &bytes).unwrap();
                let file = File::open(&rf.path).unwrap();
                let all: Vec<u64> = (0..64).collect();
                let err = rf.read(&file, &all, &form, &schema(), None).expect_err("a damaged group is detected");
                assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
            }
        }
    }
}
