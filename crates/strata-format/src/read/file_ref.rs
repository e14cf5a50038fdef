//! A data file to read, as a reader needs it: its path, its manifest entry, its deletion vector and how its
//! columns map to the reading schema.

use std::sync::Arc;

use strata_dv::DeletionVector;
use strata_spec::DataFileMeta;

use crate::layout::evolution::ColumnMapping;
use crate::read::footer_cache::FooterCache;

/// A data file to read: where it is, what the manifest says of it, and its deletion vector.
#[derive(Clone, Debug)]
pub struct DataFileRef {
    /// Full path.
    pub path: String,
    /// Manifest metadata.
    pub meta: DataFileMeta,
    /// Its deletion vector, if it has one.
    pub dv: Option<Arc<DeletionVector>>,
    /// How its columns read as the reading schema's, when it was written with another schema.
    pub mapping: Option<Arc<ColumnMapping>>,
    /// Where narrow reads of it keep its parsed footer (its table's cache), if anywhere.
    pub footers: Option<FooterCache>,
    /// Only the rows at these positions are read (a part of a large file that several threads read); its
    /// deletion vector applies within them. Parquet files only.
    pub rows: Option<std::ops::Range<u64>>,
}

impl DataFileRef {
    /// The file at `path` that `meta` describes, written with the reading schema (no mapping).
    pub fn new(path: String, meta: DataFileMeta, dv: Option<Arc<DeletionVector>>) -> Self {
        DataFileRef { path, meta, dv, mapping: None, footers: None, rows: None }
    }

    /// This file, its footer kept in `footers` by narrow reads (point lookups).
    pub fn with_footers(mut self, footers: FooterCache) -> Self {
        self.footers = Some(footers);
        self
    }
}
