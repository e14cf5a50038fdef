//! Reading data files: one file opened with its projection, predicate and deletion vector (`reader`), the
//! pruning and row selections that narrow it, ranged reads for point lookups, parts of large files, cached
//! footers, zstd with per-thread contexts, and a bucket's files read merged or one by one (`bucket`).

pub(crate) mod bucket;
pub(crate) mod file_parts;
pub(crate) mod file_ref;
pub(crate) mod footer_cache;
pub(crate) mod page_prune;
pub(crate) mod parquet_file;
pub(crate) mod ranged;
pub(crate) mod reader;
pub(crate) mod row_runs;
pub(crate) mod zstd_context;
pub(crate) mod zstd_pages;
