//! Parquet row groups whose zstd pages are decompressed with one zstd context per thread.
//!
//! Why: parquet 59's page reader makes a codec for every column chunk it opens, and its zstd codec creates
//! a compression and a decompression context each time. Creating a zstd context probes the CPU for BMI2
//! with CPUID, which a hypervisor traps: about 7 us per CPUID on the benchmark host, four per column chunk.
//! A point lookup opens some 28 chunks (the key columns of each candidate file, then every column of the
//! row found), so context creation took a third of a one-off `get` (docs/BENCHMARKS.md, session 16).
//!
//! Here the page reader is given the chunk's metadata marked uncompressed, so it hands over each page's
//! bytes as stored (page CRCs, where a writer recorded them, are still checked by it: they cover the stored
//! bytes), and [`ThreadZstdPages`] decompresses them with the calling thread's context. Chunks of other
//! codecs are read as parquet reads them.

use std::sync::Arc;

use bytes::Bytes;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, RowGroups, RowSelection};
use parquet::arrow::ProjectionMask;
use parquet::basic::Compression;
use parquet::column::page::{Page, PageIterator, PageMetadata, PageReader};
use parquet::errors::{ParquetError, Result as ParquetResult};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::reader::ChunkReader;
use parquet::file::serialized_reader::SerializedPageReader;

/// A reader of `row_groups` of a parquet file (`reader`, described by `metadata`), projected by `mask` to
/// the fields `arrow_fields` describes (the file's arrow schema), `batch_size` rows at a time, with
/// `selection` if any: what `ParquetRecordBatchReaderBuilder::build` makes without a row filter, but
/// reading zstd pages through [`ThreadZstdPages`].
pub(crate) fn build_reader<R: ChunkReader + 'static>(
    reader: R,
    metadata: Arc<ParquetMetaData>,
    arrow_fields: &arrow_schema::Fields,
    mask: ProjectionMask,
    row_groups: Vec<usize>,
    batch_size: usize,
    selection: Option<RowSelection>,
) -> ParquetResult<ParquetRecordBatchReader> {
    let levels = parquet::arrow::parquet_to_arrow_field_levels(
        metadata.file_metadata().schema_descr(),
        mask,
        Some(arrow_fields),
    )?;
    // As the builder does: no batch buffers larger than the file.
    let batch_size = batch_size.min(usize::try_from(metadata.file_metadata().num_rows()).unwrap_or(0).max(1));
    let groups = ThreadZstdRowGroups { reader: Arc::new(reader), metadata, row_groups };
    ParquetRecordBatchReader::try_new_with_row_groups(&levels, &groups, batch_size, selection)
}

/// The most a zstd page may decompress to where its chunk records less (parquet-mr writes pages of 1 MiB).
const PAGE_LIMIT: usize = 64 << 20;

/// The most any zstd page may decompress to: what a page header can declare (`uncompressed_page_size`, i32).
const PAGE_MAX: usize = i32::MAX as usize;

/// Some row groups of a file, their column chunks read through [`ThreadZstdPages`] where zstd-compressed.
struct ThreadZstdRowGroups<R> {
    reader: Arc<R>,
    metadata: Arc<ParquetMetaData>,
    row_groups: Vec<usize>,
}

impl<R: ChunkReader + 'static> RowGroups for ThreadZstdRowGroups<R> {
    fn num_rows(&self) -> usize {
        self.row_groups.iter().map(|&g| usize::try_from(self.metadata.row_group(g).num_rows()).unwrap_or(0)).sum()
    }

    fn column_chunks(&self, column: usize) -> ParquetResult<Box<dyn PageIterator>> {
        Ok(Box::new(ChunkPages {
            reader: self.reader.clone(),
            metadata: self.metadata.clone(),
            column,
            row_groups: self.row_groups.clone().into_iter(),
        }))
    }

    fn row_groups(&self) -> Box<dyn Iterator<Item = &RowGroupMetaData> + '_> {
        Box::new(self.row_groups.iter().map(|&g| self.metadata.row_group(g)))
    }

    fn metadata(&self) -> &ParquetMetaData {
        &self.metadata
    }
}

/// One column's chunks, one row group after another.
struct ChunkPages<R> {
    reader: Arc<R>,
    metadata: Arc<ParquetMetaData>,
    column: usize,
    row_groups: std::vec::IntoIter<usize>,
}

impl<R: ChunkReader + 'static> ChunkPages<R> {
    fn page_reader(&self, group: usize) -> ParquetResult<Box<dyn PageReader>> {
        let rg = self.metadata.row_group(group);
        let chunk = rg.column(self.column);
        // With the offset index the page reader can skip the pages a selection does not touch unread.
        let locations = self
            .metadata
            .offset_index()
            .and_then(|index| index.get(group))
            .and_then(|columns| columns.get(self.column))
            .map(|c| c.page_locations.clone());
        let rows = usize::try_from(rg.num_rows()).map_err(|_| ParquetError::General("negative row count".into()))?;
        if !matches!(chunk.compression(), Compression::ZSTD(_)) {
            return Ok(Box::new(SerializedPageReader::new(self.reader.clone(), chunk, rows, locations)?));
        }
        let stored = chunk.clone().into_builder().set_compression(Compression::UNCOMPRESSED).build()?;
        // No page decompresses to more than its whole chunk; a writer that recorded the chunk's size short
        // still has pages up to 64 MiB read. Never more than parquet's own bound, a page header's i32 size:
        // the chunk's size is a footer value a crafted file may set to anything.
        let limit = usize::try_from(chunk.uncompressed_size()).unwrap_or(0).clamp(PAGE_LIMIT, PAGE_MAX);
        let inner = SerializedPageReader::new(self.reader.clone(), &stored, rows, locations)?;
        Ok(Box::new(ThreadZstdPages { inner, limit }))
    }
}

impl<R: ChunkReader + 'static> Iterator for ChunkPages<R> {
    type Item = ParquetResult<Box<dyn PageReader>>;

    fn next(&mut self) -> Option<Self::Item> {
        let group = self.row_groups.next()?;
        Some(self.page_reader(group))
    }
}

impl<R: ChunkReader + 'static> PageIterator for ChunkPages<R> {}

/// The pages of one zstd column chunk, read as stored and decompressed with the thread's context.
struct ThreadZstdPages<R: ChunkReader> {
    inner: SerializedPageReader<R>,
    /// The most a page may decompress to: the chunk's uncompressed size, at least [`PAGE_LIMIT`], at most
    /// [`PAGE_MAX`].
    limit: usize,
}

impl<R: ChunkReader> ThreadZstdPages<R> {
    fn decompressed(&self, mut page: Page) -> ParquetResult<Page> {
        match &mut page {
            Page::DataPage { buf, .. } | Page::DictionaryPage { buf, .. } => *buf = decompress(buf, &[], self.limit)?,
            Page::DataPageV2 { buf, def_levels_byte_len, rep_levels_byte_len, is_compressed, .. } if *is_compressed => {
                // A v2 page stores its levels uncompressed in front of the compressed values.
                let levels = usize::try_from(u64::from(*def_levels_byte_len) + u64::from(*rep_levels_byte_len))
                    .ok()
                    .filter(|&n| n <= buf.len())
                    .ok_or_else(|| ParquetError::General("Invalid page header: levels longer than the page".into()))?;
                *buf = decompress(&buf[levels..], &buf[..levels], self.limit)?;
                *is_compressed = false;
            }
            Page::DataPageV2 { .. } => {}
        }
        Ok(page)
    }
}

impl<R: ChunkReader> Iterator for ThreadZstdPages<R> {
    type Item = ParquetResult<Page>;

    fn next(&mut self) -> Option<Self::Item> {
        self.get_next_page().transpose()
    }
}

impl<R: ChunkReader> PageReader for ThreadZstdPages<R> {
    fn get_next_page(&mut self) -> ParquetResult<Option<Page>> {
        match self.inner.get_next_page()? {
            Some(page) => self.decompressed(page).map(Some),
            None => Ok(None),
        }
    }

    fn peek_next_page(&mut self) -> ParquetResult<Option<PageMetadata>> {
        self.inner.peek_next_page()
    }

    fn skip_next_page(&mut self) -> ParquetResult<()> {
        self.inner.skip_next_page()
    }

    fn at_record_boundary(&mut self) -> ParquetResult<bool> {
        self.inner.at_record_boundary()
    }
}

/// `prefix` then the zstd frames of `frames` decompressed by the thread's context, as a parquet error.
fn decompress(frames: &[u8], prefix: &[u8], limit: usize) -> ParquetResult<Bytes> {
    crate::read::zstd_context::decompress(frames, prefix, limit)
        .map_err(|e| ParquetError::General(format!("zstd page: {e}")))
}

#[cfg(test)]
mod tests;
