//! The lookup state of one bucket: its [`LookupLevels`] (local copies of the deeper files, to find a key's
//! older copy) and, in deletion-vector mode, its deletion vectors (Paimon's `LookupLevels` with the
//! `BucketedDvMaintainer`, which Paimon's `LookupMergeTreeCompactRewriter` drives together).
//!
//! One type that a bucket's writer owns and shares with its compaction jobs, so that "find the older copy of
//! a key and mark it deleted" is one step under one lock, and the vectors leave only through the index file.

use std::sync::{Arc, Mutex, MutexGuard};

use strata_dv::{BucketedDvMaintainer, DeletionVector, IndexFileChange};
use strata_format::{LookupHook, LookupResult};
use strata_io::FileIO;
use strata_spec::{DataFileMeta, Error, Result};

use crate::levels::Levels;
use crate::lookup::LookupLevels;

struct State {
    lookup: LookupLevels,
    vectors: Option<BucketedDvMaintainer>,
}

/// The bucket's lookup levels and deletion vectors; clones share them.
#[derive(Clone)]
pub(crate) struct BucketLookup(Arc<Mutex<State>>);

/// What writing the bucket's index file at the end of a commit cycle gives the commit.
pub(crate) struct IndexFlush {
    /// The index file the cycle started from (`None`: the bucket had none).
    pub(crate) base: Option<String>,
    /// The new index file and the one it replaces, when the vectors changed.
    pub(crate) change: Option<IndexFileChange>,
}

impl BucketLookup {
    /// `vectors` is `Some` in deletion-vector mode.
    pub(crate) fn new(lookup: LookupLevels, vectors: Option<BucketedDvMaintainer>) -> Self {
        BucketLookup(Arc::new(Mutex::new(State { lookup, vectors })))
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>> {
        self.0.lock().map_err(|_| Error::invalid("bucket writer", "a previous operation panicked"))
    }

    /// Finds the newest copy of `key` in `levels` from `start_level` down and, in deletion-vector mode, marks
    /// it deleted in its file's vector: the row being written supersedes it.
    pub(crate) fn supersede(&self, levels: &Levels, start_level: i32, key: &[u8]) -> Result<Option<LookupResult>> {
        let mut st = self.lock()?;
        let st = &mut *st;
        let Some(hit) = st.lookup.lookup(levels, start_level, key, st.vectors.as_ref())? else {
            return Ok(None);
        };
        if let Some(dv) = st.vectors.as_mut() {
            dv.notify_new_deletion(&hit.file_name, hit.position)?;
        }
        Ok(Some(LookupResult { record: hit.record }))
    }

    /// The merge's lookup hook over `levels` from `start_level` down (the levels below a compaction's output).
    pub(crate) fn hook(&self, levels: Levels, start_level: i32) -> SupersedeHook {
        SupersedeHook { lookup: self.clone(), levels, start_level }
    }

    /// A copy of `file`'s deletion vector, if it has one.
    pub(crate) fn vector_of(&self, file: &str) -> Result<Option<Arc<DeletionVector>>> {
        let st = self.lock()?;
        Ok(st.vectors.as_ref().and_then(|d| d.deletion_vector_of(file)).map(|d| Arc::new(d.clone())))
    }

    /// Whether `file` has a deletion vector.
    pub(crate) fn has_vector(&self, file: &str) -> Result<bool> {
        Ok(self.lock()?.vectors.as_ref().is_some_and(|d| d.deletion_vector_of(file).is_some()))
    }

    /// Forgets files a compaction replaced: their local lookup copies and, unless they only moved to another
    /// level (`moved`), their vectors.
    pub(crate) fn forget(&self, files: &[DataFileMeta], moved: bool) -> Result<()> {
        let mut st = self.lock()?;
        for f in files {
            st.lookup.drop_file(&f.file_name);
            if !moved {
                if let Some(dv) = st.vectors.as_mut() {
                    dv.remove_deletion_vector_of(&f.file_name);
                }
            }
        }
        Ok(())
    }

    /// The files at levels >= 1 whose deleted share (vector cardinality / rows) is at least `threshold` (every
    /// file with a non-empty vector when 0).
    pub(crate) fn files_past_delete_ratio(
        &self,
        files: Vec<DataFileMeta>,
        threshold: f64,
    ) -> Result<Vec<DataFileMeta>> {
        let st = self.lock()?;
        let Some(dv) = st.vectors.as_ref() else { return Ok(Vec::new()) };
        Ok(files
            .into_iter()
            .filter(|f| f.level > 0)
            .filter(|f| {
                dv.deletion_vector_of(&f.file_name)
                    .is_some_and(|d| !d.is_empty() && d.cardinality() as f64 >= threshold * f.row_count.max(1) as f64)
            })
            .collect())
    }

    /// In deletion-vector mode (`None` otherwise): writes the bucket's index file `index_dir/<name>` if its
    /// vectors changed in this cycle.
    pub(crate) fn flush_index_file(
        &self,
        io: &dyn FileIO,
        index_dir: &str,
        name: impl FnOnce() -> String,
    ) -> Result<Option<IndexFlush>> {
        let mut st = self.lock()?;
        let Some(dv) = st.vectors.as_mut() else { return Ok(None) };
        let base = dv.current_index_file().map(|f| f.file_name.clone());
        let change = dv.write_index_file(io, index_dir, &name())?;
        Ok(Some(IndexFlush { base, change }))
    }

    /// Runs `f` on the bucket's deletion vectors (`None` unless in deletion-vector mode).
    pub(crate) fn with_vectors<T>(&self, f: impl FnOnce(Option<&BucketedDvMaintainer>) -> T) -> Result<T> {
        Ok(f(self.lock()?.vectors.as_ref()))
    }
}

/// The lookup merge wrapper's hook (Paimon's `LookupMergeFunction` lookups): each key that only level 0
/// holds among a compaction's inputs supersedes its copy in the levels below the output.
pub(crate) struct SupersedeHook {
    lookup: BucketLookup,
    levels: Levels,
    start_level: i32,
}

impl LookupHook for SupersedeHook {
    fn lookup(&mut self, key: &[u8]) -> Result<Option<LookupResult>> {
        self.lookup.supersede(&self.levels, self.start_level, key)
    }
}
