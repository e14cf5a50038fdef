//! The deletion vectors of one bucket of an append table (Paimon's `AppendDeleteFileMaintainer`).
//!
//! Unlike a primary-key bucket, whose vectors live in one index file rewritten whole, an append table's
//! partition may hold several index files (each DELETE that wrote vectors added one; an unaware-bucket
//! table keeps them all under bucket 0). So the vectors are kept by the index file that holds them: a change
//! to a data file's vector touches its file, and only touched files are replaced, their other vectors
//! carried into the new file. Vectors of untouched files stay where they are.

use std::collections::BTreeMap;
use std::sync::Arc;

use strata_io::{join, FileIO};
use strata_spec::{DvIndexBase, Error, IndexFileMeta, Result, DELETION_VECTORS_INDEX};

use crate::{read_all_deletion_vectors, write_index_file, DeletionVector};

/// One index file's vectors, by data file name.
#[derive(Debug)]
struct HeldFile {
    meta: IndexFileMeta,
    vectors: BTreeMap<String, Arc<DeletionVector>>,
    touched: bool,
}

/// What persisting changed: the index files to add and the ones they replace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppendIndexChange {
    /// New index files (none when every touched file lost all its vectors and nothing new was added).
    pub new_files: Vec<IndexFileMeta>,
    /// The replaced index files.
    pub deleted_files: Vec<IndexFileMeta>,
}

/// The vectors of one (partition, bucket) of an append table, by the index file holding each.
#[derive(Debug, Default)]
pub struct AppendDvMaintainer {
    bitmap64: bool,
    files: Vec<HeldFile>,
    /// Data file name → index into `files`.
    holder: BTreeMap<String, usize>,
    /// Vectors changed or added since the last persist, for the next new index file.
    fresh: BTreeMap<String, Arc<DeletionVector>>,
    /// A fixed bucket's vectors, kept in one index file (commits replace a bucket's file by its newest):
    /// a persist rewrites them all.
    whole_bucket: bool,
}

impl AppendDvMaintainer {
    /// Restores the bucket's vectors from its DV index files (each with the path it is read from). A data
    /// file named in two of them is refused: which vector applies would be a guess.
    pub fn restore(io: &dyn FileIO, index_files: &[(IndexFileMeta, String)], bitmap64: bool) -> Result<Self> {
        let mut m = AppendDvMaintainer { bitmap64, ..Default::default() };
        for (meta, path) in index_files.iter().filter(|(f, _)| f.index_type == DELETION_VECTORS_INDEX) {
            // No ranges at all is a field that did not decode, not a file without vectors.
            let ranges = meta.dv_ranges.as_deref().ok_or_else(|| {
                Error::corrupt_file(path.clone(), "its index manifest entry lists no deletion vector ranges")
            })?;
            let at = m.files.len();
            let mut vectors = BTreeMap::new();
            for (name, dv) in read_all_deletion_vectors(io, path, ranges)? {
                if m.holder.insert(name.clone(), at).is_some() {
                    return Err(Error::corrupt_file(
                        path.clone(),
                        format!("data file {name} has deletion vectors in two index files of its bucket"),
                    ));
                }
                vectors.insert(name, Arc::new(dv));
            }
            m.files.push(HeldFile { meta: meta.clone(), vectors, touched: false });
        }
        Ok(m)
    }

    /// For a fixed bucket, whose vectors live in one index file that a commit replaces whole (Paimon's
    /// `BucketedCombiner`): every persist writes all of them.
    pub fn whole_bucket(mut self) -> Self {
        self.whole_bucket = true;
        self
    }

    /// `data_file`'s vector, if it has one.
    pub fn vector_of(&self, data_file: &str) -> Option<Arc<DeletionVector>> {
        if let Some(dv) = self.fresh.get(data_file) {
            return Some(dv.clone());
        }
        self.holder.get(data_file).and_then(|&i| self.files[i].vectors.get(data_file).cloned())
    }

    /// The name of the index file holding `data_file`'s committed vector, if any.
    pub fn index_file_of(&self, data_file: &str) -> Option<&str> {
        self.holder.get(data_file).map(|&i| self.files[i].meta.file_name.as_str())
    }

    /// Drops `data_file`'s vector (the file was rewritten or removed): its index file is replaced at the next
    /// persist.
    pub fn remove(&mut self, data_file: &str) {
        self.fresh.remove(data_file);
        if let Some(i) = self.holder.remove(data_file) {
            let held = &mut self.files[i];
            held.vectors.remove(data_file);
            held.touched = true;
        }
    }

    /// `data_file`'s vector with `positions` added (kept nowhere).
    pub fn vector_with(&self, data_file: &str, positions: &[u64]) -> Result<DeletionVector> {
        let mut dv = match self.vector_of(data_file) {
            Some(old) => (*old).clone(),
            None => DeletionVector::new(self.bitmap64),
        };
        for &p in positions {
            dv.checked_delete(p)?;
        }
        Ok(dv)
    }

    /// Makes `dv` `data_file`'s vector (it replaces the one it had, whose index file is replaced at the next
    /// persist).
    pub fn set(&mut self, data_file: &str, dv: DeletionVector) {
        self.remove(data_file);
        self.fresh.insert(data_file.to_string(), Arc::new(dv));
    }

    /// Whether the bucket has no vector.
    pub fn is_empty(&self) -> bool {
        self.fresh.is_empty() && self.files.iter().all(|f| f.vectors.is_empty())
    }

    /// Whether a persist would change anything.
    pub fn is_modified(&self) -> bool {
        !self.fresh.is_empty() || self.files.iter().any(|f| f.touched)
    }

    /// The index files the vectors were restored from, as a commit checks them.
    pub fn base(&self) -> DvIndexBase {
        DvIndexBase::of_files(self.files.iter().map(|f| f.meta.file_name.as_str()))
    }

    /// Writes the vectors of touched index files, with the new ones, into one new index file
    /// `index_dir/<name>` (none when no vector is left) and says which files it replaces. Afterwards the
    /// maintainer holds the new state.
    pub fn persist(
        &mut self,
        io: &dyn FileIO,
        index_dir: &str,
        name: impl FnOnce() -> String,
    ) -> Result<AppendIndexChange> {
        if !self.is_modified() {
            return Ok(AppendIndexChange::default());
        }
        let mut carried: BTreeMap<String, Arc<DeletionVector>> = self.fresh.clone();
        let mut deleted = Vec::new();
        let whole = self.whole_bucket;
        for held in self.files.iter_mut() {
            held.touched |= whole;
            if held.touched {
                deleted.push(held.meta.clone());
                carried.extend(held.vectors.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let mut new_files = Vec::new();
        let mut new_held = None;
        if !carried.is_empty() {
            let file_name = name();
            let (size, metas) =
                write_index_file(io, &join(index_dir, &file_name), carried.iter().map(|(k, v)| (k.as_str(), &**v)))?;
            let meta = IndexFileMeta {
                index_type: DELETION_VECTORS_INDEX.to_string(),
                file_name,
                file_size: size,
                row_count: metas.len() as i64,
                dv_ranges: Some(metas),
                external_path: None,
                global_index: None,
            };
            new_held = Some(HeldFile { meta: meta.clone(), vectors: carried, touched: false });
            new_files.push(meta);
        }
        self.files.retain(|f| !f.touched);
        self.files.extend(new_held);
        self.fresh.clear();
        self.holder =
            self.files.iter().enumerate().flat_map(|(i, f)| f.vectors.keys().map(move |k| (k.clone(), i))).collect();
        Ok(AppendIndexChange { new_files, deleted_files: deleted })
    }
}
