//! Reading and writing a table's manifests, manifest lists and index manifests, and replaying them into
//! the set of live files of a snapshot.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use strata_io::FileIO;
use strata_spec::{compare_rows, FileIdentifier};
use strata_spec::{
    BinaryRow, DataType, FileKind, IndexManifestEntry, ManifestEntry, ManifestFileMeta, Result, ResultExt, SimpleStats,
    Snapshot,
};

use crate::meta::paths::PathFactory;

/// Reads and writes the manifest files of one table.
#[derive(Debug, Clone)]
pub struct ManifestStore {
    io: Arc<dyn FileIO>,
    paths: Arc<PathFactory>,
    compression: String,
    target_file_size: u64,
    partition_types: Vec<DataType>,
    schema_id: i64,
}

/// The live files of a snapshot, keyed so that ADD and DELETE entries cancel.
pub(crate) type LiveFiles = BTreeMap<FileIdentifier, ManifestEntry>;

impl ManifestStore {
    /// A store writing with `compression`, rolling manifests at `target_file_size`.
    pub fn new(
        io: Arc<dyn FileIO>,
        paths: Arc<PathFactory>,
        compression: String,
        target_file_size: u64,
        partition_types: Vec<DataType>,
        schema_id: i64,
    ) -> Self {
        ManifestStore { io, paths, compression, target_file_size, partition_types, schema_id }
    }

    /// The path factory.
    pub fn paths(&self) -> &Arc<PathFactory> {
        &self.paths
    }

    /// Reads one manifest file.
    pub fn read_manifest(&self, name: &str) -> Result<Vec<ManifestEntry>> {
        let path = self.paths.manifest_path(name);
        let _span = tracing::debug_span!("read_manifest", name).entered();
        ManifestEntry::decode_file(&self.io.read(&path)?).in_file(&path)
    }

    /// Reads one manifest list.
    pub fn read_manifest_list(&self, name: &str) -> Result<Vec<ManifestFileMeta>> {
        self.read_manifest_list_sized(name, None)
    }

    /// Reads one manifest list, checking its size against `size`, what the snapshot naming it records.
    pub fn read_manifest_list_sized(&self, name: &str, size: Option<i64>) -> Result<Vec<ManifestFileMeta>> {
        let path = self.paths.manifest_path(name);
        ManifestFileMeta::decode_file(&self.read_sized(&path, size)?).in_file(&path)
    }

    /// Reads the manifest `meta` names, checking its size against the manifest list's record of it.
    pub fn read_manifest_of(&self, meta: &ManifestFileMeta) -> Result<Vec<ManifestEntry>> {
        let path = self.paths.manifest_path(&meta.file_name);
        let _span = tracing::debug_span!("read_manifest", name = meta.file_name).entered();
        ManifestEntry::decode_file(&self.read_sized(&path, Some(meta.file_size))?).in_file(&path)
    }

    /// Reads `path`, which metadata records as `size` bytes. Manifest names differ only in a counter, so a
    /// damaged name can point at another valid manifest: the recorded size catches most of those at no cost.
    fn read_sized(&self, path: &str, size: Option<i64>) -> Result<Vec<u8>> {
        let bytes = self.io.read(path)?;
        match size {
            Some(n) if n > 0 && bytes.len() as i64 != n => Err(strata_spec::Error::corrupt_file(
                path.to_string(),
                format!("is {} bytes, but the metadata naming it records {n}", bytes.len()),
            )),
            _ => Ok(bytes),
        }
    }

    /// Reads one index manifest.
    pub fn read_index_manifest(&self, name: &str) -> Result<Vec<IndexManifestEntry>> {
        let path = self.paths.manifest_path(name);
        IndexManifestEntry::decode_file(&self.io.read(&path)?).in_file(&path)
    }

    /// The index files live in `snapshot` (its index manifest is a full listing).
    pub fn index_entries(&self, snapshot: &Snapshot) -> Result<Vec<IndexManifestEntry>> {
        match &snapshot.index_manifest {
            None => Ok(Vec::new()),
            Some(name) => Ok(self.read_index_manifest(name)?.into_iter().filter(|e| e.kind == FileKind::Add).collect()),
        }
    }

    /// Every manifest file a snapshot's base and delta lists name, in order (the two lists read side by side).
    pub fn data_manifests(&self, snapshot: &Snapshot) -> Result<Vec<ManifestFileMeta>> {
        let lists = [
            (&snapshot.base_manifest_list, snapshot.base_manifest_list_size),
            (&snapshot.delta_manifest_list, snapshot.delta_manifest_list_size),
        ];
        let mut metas = Vec::new();
        for read in strata_io::parallel_map(&lists, 2, |(name, size)| self.read_manifest_list_sized(name, *size)) {
            metas.extend(read?);
        }
        Ok(metas)
    }

    /// The live data files of `snapshot`; its manifests are read side by side (up to
    /// [`strata_io::READ_AHEAD`] at once) and applied in order.
    pub fn live_files(&self, snapshot: &Snapshot) -> Result<LiveFiles> {
        let _span = tracing::debug_span!("live_files", snapshot = snapshot.id).entered();
        let metas = self.data_manifests(snapshot)?;
        let mut live = LiveFiles::new();
        for entries in strata_io::parallel_map(&metas, strata_io::READ_AHEAD, |m| self.read_manifest_of(m)) {
            merge_into(&mut live, entries?);
        }
        Ok(live)
    }

    /// The live data files of `snapshot` in the order the snapshot's manifests add them (the order of the
    /// commits that added them), where [`ManifestStore::live_files`] orders them by name: what orders an append
    /// table's files whose sequence numbers tie (pypaimon 2.1.0 writes every append file at sequence 0).
    pub fn live_files_in_order(&self, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
        let metas = self.data_manifests(snapshot)?;
        let mut entries: Vec<Option<ManifestEntry>> = Vec::new();
        let mut at: HashMap<FileIdentifier, usize> = HashMap::new();
        for read in strata_io::parallel_map(&metas, strata_io::READ_AHEAD, |m| self.read_manifest_of(m)) {
            for e in read? {
                let id = e.identifier();
                match e.kind {
                    FileKind::Add => {
                        at.insert(id, entries.len());
                        entries.push(Some(e));
                    }
                    FileKind::Delete => {
                        if let Some(i) = at.remove(&id) {
                            entries[i] = None;
                        }
                    }
                }
            }
        }
        Ok(entries.into_iter().flatten().collect())
    }

    /// Writes `entries` into one or more manifest files (rolled at the target size), returning their
    /// metadata and recording each path written in `written`.
    pub fn write_manifests(
        &self,
        entries: &[ManifestEntry],
        written: &mut Vec<String>,
    ) -> Result<Vec<ManifestFileMeta>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let _span = tracing::debug_span!("write_manifests", entries = entries.len()).entered();
        // Estimate the encoded size per entry from one encoding, then cut into chunks under the target.
        let whole = ManifestEntry::encode_file(entries, &self.compression)?;
        let chunks = (whole.len() as u64).div_ceil(self.target_file_size.max(1)).max(1) as usize;
        let per_chunk = entries.len().div_ceil(chunks);
        let mut metas = Vec::new();
        for chunk in entries.chunks(per_chunk) {
            let bytes = if chunks == 1 { whole.clone() } else { ManifestEntry::encode_file(chunk, &self.compression)? };
            let name = self.paths.new_manifest_name();
            let path = self.paths.manifest_path(&name);
            written.push(path.clone());
            self.io.write(&path, &bytes)?;
            metas.push(self.meta_of(name, bytes.len() as i64, chunk)?);
        }
        Ok(metas)
    }

    fn meta_of(&self, file_name: String, file_size: i64, entries: &[ManifestEntry]) -> Result<ManifestFileMeta> {
        let added = entries.iter().filter(|e| e.kind == FileKind::Add).count() as i64;
        let partition_stats = partition_stats(entries, &self.partition_types)?;
        Ok(ManifestFileMeta {
            file_name,
            file_size,
            num_added_files: added,
            num_deleted_files: entries.len() as i64 - added,
            partition_stats,
            schema_id: self.schema_id,
            min_bucket: entries.iter().map(|e| e.bucket).min(),
            max_bucket: entries.iter().map(|e| e.bucket).max(),
            min_level: entries.iter().map(|e| e.file.level).min(),
            max_level: entries.iter().map(|e| e.file.level).max(),
            min_row_id: None,
            max_row_id: None,
        })
    }

    /// Writes a manifest list, returning its name and size.
    pub fn write_manifest_list(&self, metas: &[ManifestFileMeta], written: &mut Vec<String>) -> Result<(String, i64)> {
        let bytes = ManifestFileMeta::encode_file(metas, &self.compression)?;
        let name = self.paths.new_manifest_list_name();
        let path = self.paths.manifest_path(&name);
        written.push(path.clone());
        self.io.write(&path, &bytes)?;
        Ok((name, bytes.len() as i64))
    }

    /// Writes an index manifest, returning its name.
    pub fn write_index_manifest(&self, entries: &[IndexManifestEntry], written: &mut Vec<String>) -> Result<String> {
        let bytes = IndexManifestEntry::encode_file(entries, &self.compression)?;
        let name = self.paths.new_index_manifest_name();
        let path = self.paths.manifest_path(&name);
        written.push(path.clone());
        self.io.write(&path, &bytes)?;
        Ok(name)
    }
}

/// Applies entries in order: ADD inserts a file, DELETE removes an earlier ADD of it.
pub(crate) fn merge_into(live: &mut LiveFiles, entries: Vec<ManifestEntry>) {
    for e in entries {
        let id = e.identifier();
        match e.kind {
            FileKind::Add => {
                live.insert(id, e);
            }
            FileKind::Delete => {
                live.remove(&id);
            }
        }
    }
}

/// Min/max/null counts of the partitions in `entries` (Paimon's `_PARTITION_STATS`).
pub(crate) fn partition_stats(entries: &[ManifestEntry], types: &[DataType]) -> Result<SimpleStats> {
    if types.is_empty() {
        return Ok(SimpleStats::empty());
    }
    let mut distinct: HashMap<&BinaryRow, ()> = HashMap::new();
    for e in entries {
        distinct.insert(&e.partition, ());
    }
    let mut min: Option<Vec<Option<strata_spec::Datum>>> = None;
    let mut max: Option<Vec<Option<strata_spec::Datum>>> = None;
    let mut nulls = vec![0i64; types.len()];
    for row in distinct.keys() {
        let values = row.to_datums(types)?;
        for (i, v) in values.iter().enumerate() {
            if v.is_none() {
                nulls[i] += 1;
            }
        }
        let merge = |acc: &mut Option<Vec<Option<strata_spec::Datum>>>, want_less: bool| match acc {
            None => *acc = Some(values.clone()),
            Some(cur) => {
                for (i, v) in values.iter().enumerate() {
                    let Some(v) = v else { continue };
                    let replace = match &cur[i] {
                        None => true,
                        Some(c) => {
                            let o = compare_rows(&[Some(v.clone())], &[Some(c.clone())]);
                            if want_less {
                                o.is_lt()
                            } else {
                                o.is_gt()
                            }
                        }
                    };
                    if replace {
                        cur[i] = Some(v.clone());
                    }
                }
            }
        };
        merge(&mut min, true);
        merge(&mut max, false);
    }
    let all_null = vec![None; types.len()];
    Ok(SimpleStats {
        min_values: BinaryRow::from_datums(min.as_deref().unwrap_or(&all_null), types)?,
        max_values: BinaryRow::from_datums(max.as_deref().unwrap_or(&all_null), types)?,
        null_counts: Some(nulls.into_iter().map(Some).collect()),
    })
}
