//! Lookup levels (Paimon's `LookupLevels`): for a key, the newest live copy in the levels at or below a
//! given level: its file and row position, and the record itself when the merge engine needs the old value.
//!
//! Per-file indexes (the file's keys in arrow-row form, which are sorted like the file) are built lazily on
//! first use, cached, and dropped when their file leaves the levels. Deleted rows are skipped by checking
//! the bucket's current deletion vectors at lookup time, so an index built before a deletion never returns
//! the deleted row (the failure behind Paimon issue 8204).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_row::{RowConverter, Rows, SortField};
use strata_dv::BucketedDvMaintainer;
use strata_format::arrow_types::{array_of, to_arrow};
use strata_format::bucket_read::{file_columns, open_data_file, DataFileRef};
use strata_format::KeyValueLayout;
use strata_io::{join, FileIO};
use strata_spec::{DataFileMeta, DataType, Error, Result};

use crate::levels::Levels;

/// Where a key's older copy is.
#[derive(Debug, Clone)]
pub struct LookupHit {
    /// The data file.
    pub file_name: String,
    /// Row position in the file.
    pub position: u64,
    /// The record (one row, file layout) when values were asked for.
    pub record: Option<RecordBatch>,
}

struct FileIndex {
    keys: Rows,
    batch: Option<RecordBatch>,
}

/// Lazily built, cached per-file key indexes of one bucket.
pub struct LookupLevels {
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    bucket_dir: String,
    need_values: bool,
    converter: RowConverter,
    key_types: Vec<DataType>,
    indexes: HashMap<String, Arc<FileIndex>>,
    ranges: HashMap<String, (Vec<u8>, Vec<u8>)>,
}

impl LookupLevels {
    /// Lookups into files of `bucket_dir`; `need_values` keeps records for partial-update and aggregation.
    pub fn new(
        io: Arc<dyn FileIO>,
        layout: Arc<KeyValueLayout>,
        bucket_dir: String,
        need_values: bool,
    ) -> Result<Self> {
        let fields: Vec<SortField> = layout.key_fields.iter().map(|f| SortField::new(to_arrow(&f.data_type))).collect();
        let converter = RowConverter::new(fields).map_err(|e| Error::invalid("key columns", e.to_string()))?;
        let key_types = layout.key_fields.iter().map(|f| f.data_type).collect();
        Ok(LookupLevels {
            io,
            layout,
            bucket_dir,
            need_values,
            converter,
            key_types,
            indexes: HashMap::new(),
            ranges: HashMap::new(),
        })
    }

    /// Forgets a file that left the levels.
    pub fn drop_file(&mut self, name: &str) {
        self.indexes.remove(name);
        self.ranges.remove(name);
    }

    /// Number of cached file indexes.
    pub fn cached(&self) -> usize {
        self.indexes.len()
    }

    fn key_bytes(&self, row: &strata_spec::BinaryRow) -> Result<Vec<u8>> {
        let values = row.to_datums(&self.key_types)?;
        let cols = self.key_types.iter().zip(values).map(|(t, v)| array_of(t, &[v])).collect::<Result<Vec<_>>>()?;
        let rows = self.converter.convert_columns(&cols).map_err(|e| Error::corrupt(format!("key: {e}")))?;
        Ok(rows.row(0).as_ref().to_vec())
    }

    fn range(&mut self, f: &DataFileMeta) -> Result<&(Vec<u8>, Vec<u8>)> {
        if !self.ranges.contains_key(&f.file_name) {
            let r = (self.key_bytes(&f.min_key)?, self.key_bytes(&f.max_key)?);
            self.ranges.insert(f.file_name.clone(), r);
        }
        self.ranges.get(&f.file_name).ok_or_else(|| Error::corrupt("lookup range vanished"))
    }

    fn index(&mut self, f: &DataFileMeta) -> Result<Arc<FileIndex>> {
        if let Some(ix) = self.indexes.get(&f.file_name) {
            return Ok(ix.clone());
        }
        let _span = tracing::debug_span!("build_lookup_index", file = f.file_name).entered();
        let file = DataFileRef { path: join(&self.bucket_dir, &f.file_name), meta: f.clone(), dv: None };
        let mut columns = file_columns(&self.layout);
        if !self.need_values {
            columns.truncate(self.layout.key_arity() + 2);
        }
        let batches: Vec<RecordBatch> =
            open_data_file(self.io.as_ref(), &file, columns, false, 64 * 1024)?.collect::<Result<_>>()?;
        let batch = match batches.first() {
            None => None,
            Some(first) => Some(
                arrow_select::concat::concat_batches(&first.schema(), &batches)
                    .map_err(|e| Error::corrupt(format!("{}: {e}", f.file_name)))?,
            ),
        };
        let keys = match &batch {
            Some(b) => self
                .converter
                .convert_columns(&b.columns()[..self.layout.key_arity()])
                .map_err(|e| Error::corrupt(format!("{}: {e}", f.file_name)))?,
            None => self.converter.empty_rows(0, 0),
        };
        let ix = Arc::new(FileIndex { keys, batch: if self.need_values { batch } else { None } });
        self.indexes.insert(f.file_name.clone(), ix.clone());
        Ok(ix)
    }

    /// The newest live copy of `key` (arrow-row bytes) at levels `start_level..`, skipping rows the bucket's
    /// deletion vectors already delete.
    pub fn lookup(
        &mut self,
        levels: &Levels,
        start_level: i32,
        key: &[u8],
        dvs: Option<&BucketedDvMaintainer>,
    ) -> Result<Option<LookupHit>> {
        for level in start_level.max(1)..=levels.max_level() {
            let files = levels.level(level);
            // Files of a level are ordered and disjoint: the first whose max key is >= key is the candidate.
            let mut lo = 0;
            let mut hi = files.len();
            while lo < hi {
                let mid = (lo + hi) / 2;
                if self.range(&files[mid])?.1.as_slice() < key {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let Some(f) = files.get(lo) else { continue };
            if self.range(f)?.0.as_slice() > key {
                continue;
            }
            let ix = self.index(f)?;
            let (mut a, mut b) = (0usize, ix.keys.num_rows());
            while a < b {
                let m = (a + b) / 2;
                if ix.keys.row(m).as_ref() < key {
                    a = m + 1;
                } else {
                    b = m;
                }
            }
            if a >= ix.keys.num_rows() || ix.keys.row(a).as_ref() != key {
                continue;
            }
            let position = a as u64;
            if dvs.and_then(|d| d.deletion_vector_of(&f.file_name)).is_some_and(|dv| dv.is_deleted(position)) {
                // Already superseded; an older copy below would be too, but keep looking in case the levels
                // hold a stale duplicate (a table switched into deletion-vector mode).
                continue;
            }
            return Ok(Some(LookupHit {
                file_name: f.file_name.clone(),
                position,
                record: ix.batch.as_ref().map(|b| b.slice(a, 1)),
            }));
        }
        Ok(None)
    }
}
