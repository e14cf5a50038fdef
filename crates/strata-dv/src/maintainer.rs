//! The deletion vectors of one (partition, bucket) while it is written (Paimon's `BucketedDvMaintainer`).

use std::collections::BTreeMap;

use strata_io::{join, FileIO};
use strata_spec::{Error, IndexFileMeta, Result, DELETION_VECTORS_INDEX};

use crate::{read_all_deletion_vectors, write_index_file, DeletionVector};

/// What writing the bucket's index file changed: the new file, and the file it replaces (if any).
#[derive(Debug, Clone)]
pub struct IndexFileChange {
    /// The new index file (possibly empty but versioned, when every vector is gone).
    pub new_file: IndexFileMeta,
    /// The bucket's previous index file, now superseded.
    pub old_file: Option<IndexFileMeta>,
}

/// Data file name → deletion vector, for one bucket, with a modified flag.
#[derive(Debug)]
pub struct BucketedDvMaintainer {
    bitmap64: bool,
    vectors: BTreeMap<String, DeletionVector>,
    modified: bool,
    current_file: Option<IndexFileMeta>,
}

impl BucketedDvMaintainer {
    /// An empty maintainer (a bucket without vectors).
    pub fn new(bitmap64: bool) -> Self {
        BucketedDvMaintainer { bitmap64, vectors: BTreeMap::new(), modified: false, current_file: None }
    }

    /// Restores the bucket's vectors from its current DV index file (with the path it is read from), if it has
    /// one.
    pub fn restore(io: &dyn FileIO, index_file: Option<(&IndexFileMeta, &str)>, bitmap64: bool) -> Result<Self> {
        let mut m = Self::new(bitmap64);
        if let Some((f, path)) = index_file {
            // No ranges at all is a field that did not decode, not a file without vectors: restoring from
            // it would drop every vector of the bucket in the next index file.
            let metas = f.dv_ranges.clone().ok_or_else(|| {
                Error::corrupt_file(path.to_string(), "its index manifest entry lists no deletion vector ranges")
            })?;
            for (name, dv) in read_all_deletion_vectors(io, path, &metas)? {
                m.vectors.insert(name, dv);
            }
            m.current_file = Some(f.clone());
        }
        Ok(m)
    }

    /// Marks row `position` of `data_file` deleted; `Ok(true)` if it was live.
    pub fn notify_new_deletion(&mut self, data_file: &str, position: u64) -> Result<bool> {
        let bitmap64 = self.bitmap64;
        let dv = self.vectors.entry(data_file.to_string()).or_insert_with(|| DeletionVector::new(bitmap64));
        let fresh = dv.checked_delete(position)?;
        self.modified |= fresh;
        Ok(fresh)
    }

    /// Adds every position of `dv` to `data_file`'s vector.
    pub fn merge_new_deletion(&mut self, data_file: &str, dv: &DeletionVector) -> Result<()> {
        if dv.is_empty() {
            return Ok(());
        }
        let bitmap64 = self.bitmap64;
        self.vectors.entry(data_file.to_string()).or_insert_with(|| DeletionVector::new(bitmap64)).merge(dv)?;
        self.modified = true;
        Ok(())
    }

    /// Drops `data_file`'s vector (the file was rewritten or removed).
    pub fn remove_deletion_vector_of(&mut self, data_file: &str) {
        if self.vectors.remove(data_file).is_some() {
            self.modified = true;
        }
    }

    /// Drops the vectors of the data files `live` refuses, so the next index file leaves them out, and returns
    /// their names. A vector of a file that is no longer live (an orphan another writer left: Paimon 1.4 does,
    /// #8778) deletes nothing any reader reads.
    pub fn retain_live(&mut self, live: impl Fn(&str) -> bool) -> Vec<String> {
        let dropped: Vec<String> = self.vectors.keys().filter(|name| !live(name)).cloned().collect();
        for name in &dropped {
            self.vectors.remove(name);
        }
        self.modified |= !dropped.is_empty();
        dropped
    }

    /// `data_file`'s vector, if it has one.
    pub fn deletion_vector_of(&self, data_file: &str) -> Option<&DeletionVector> {
        self.vectors.get(data_file)
    }

    /// All vectors.
    pub fn vectors(&self) -> impl Iterator<Item = (&str, &DeletionVector)> {
        self.vectors.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether anything changed since the last restore or write.
    pub fn is_modified(&self) -> bool {
        self.modified
    }

    /// The bucket's current index file.
    pub fn current_index_file(&self) -> Option<&IndexFileMeta> {
        self.current_file.as_ref()
    }

    /// Writes all of the bucket's vectors into a new index file `index_dir/file_name` if something changed
    /// (an empty, versioned file when no vector is left, as Paimon does); `None` when nothing changed.
    pub fn write_index_file(
        &mut self,
        io: &dyn FileIO,
        index_dir: &str,
        file_name: &str,
    ) -> Result<Option<IndexFileChange>> {
        if !self.modified {
            return Ok(None);
        }
        let path = join(index_dir, file_name);
        let live = self.vectors.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k.as_str(), v));
        let (size, metas) = write_index_file(io, &path, live)?;
        let new_file = IndexFileMeta {
            index_type: DELETION_VECTORS_INDEX.to_string(),
            file_name: file_name.to_string(),
            file_size: size,
            row_count: metas.len() as i64,
            dv_ranges: Some(metas),
            external_path: None,
            global_index: None,
        };
        let old_file = self.current_file.replace(new_file.clone());
        self.modified = false;
        Ok(Some(IndexFileChange { new_file, old_file }))
    }
}
