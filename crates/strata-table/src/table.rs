//! A table: its directory, schema, snapshots and committer.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use strata_dv::{AppendDvMaintainer, BucketedDvMaintainer};
use strata_io::{join, FileIO};
pub use strata_spec::OptionPolicy;
use strata_spec::{external_path_within, option_rules, DELETION_VECTORS_INDEX};
use strata_spec::{
    BinaryRow, DataType, DeletionVectorMeta, Error, IndexFileMeta, IndexManifestEntry, ManifestEntry, Result, Snapshot,
    TableSchema,
};

use crate::commit::{FileStoreCommit, RetryPolicy};

/// Paimon's option naming the roots under which data files may live outside the table.
pub(crate) const EXTERNAL_PATHS_OPTION: &str = "data-file.external-paths";
use crate::meta::manifest_io::ManifestStore;
use crate::meta::paths::{partition_path, PathFactory};
use crate::meta::schema_manager::{SchemaHistoryCache, SchemaManager};
use crate::meta::snapshot_manager::SnapshotManager;
use strata_format::KeyValueLayout;

/// Where one data file's deletion vector is (Paimon's `DeletionFile`): the index file and the entry's range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletionFile {
    /// Path of the DV index file.
    pub path: String,
    /// Offset, length and cardinality of the entry.
    pub meta: DeletionVectorMeta,
}

impl DeletionFile {
    /// Reads the vector.
    pub fn read(&self, io: &dyn FileIO) -> Result<strata_dv::DeletionVector> {
        strata_dv::read_deletion_vector(io, &self.path, &self.meta)
    }
}

/// A snapshot's identity (id and manifest lists) and its live files.
type CachedFiles = (String, Arc<Vec<ManifestEntry>>);

/// An index manifest's name and its live entries.
type CachedIndex = (String, Arc<Vec<IndexManifestEntry>>);

/// A Paimon primary-key table (or append table, read-only for now) in a directory.
#[derive(Debug, Clone)]
pub struct Table {
    io: Arc<dyn FileIO>,
    path: String,
    schema: TableSchema,
    /// Live files of recently read snapshots (snapshots are immutable, so entries never go stale).
    files_cache: Arc<parking_lot::Mutex<Option<CachedFiles>>>,
    /// The index entries of the most recently read index manifest (immutable and uniquely named, so an entry
    /// never goes stale): repeated lookups on one snapshot read it once.
    index_cache: Arc<parking_lot::Mutex<Option<CachedIndex>>>,
    /// Parsed footers of the table's data files, kept by point lookups (files are immutable and uniquely
    /// named; shared by every view of the table, time travel included, which reads the same files).
    footers: strata_format::FooterCache,
    /// The snapshot whose deletion vectors were last checked against its predecessor's (the check reads two
    /// files; repeated point lookups on one snapshot pay it once).
    dv_checked: Arc<parking_lot::Mutex<Option<i64>>>,
    /// Every external-path root any schema named (read once, on first use).
    external_roots: Arc<std::sync::OnceLock<Option<String>>>,
    paths: Arc<PathFactory>,
    snapshots: SnapshotManager,
    schemas: SchemaManager,
    /// Every schema files were written with, read once each.
    history: Arc<SchemaHistoryCache>,
    /// How long a compaction by another engine keeps this handle's commits from compacting its buckets, when
    /// set on the handle (else the table option, read when a commit is made: a bad value never stops reads).
    foreign_compaction_window: Option<std::time::Duration>,
    /// The branch this handle reads and writes (`None`: main). A branch has snapshots, schemas, tags and
    /// consumers of its own under `branch/branch-<name>/`; manifests, index and data files are the table's.
    branch: Option<String>,
}

impl Table {
    /// Creates a table at `path` with `schema` (as schema 0). Fails with `AlreadyExists` if a table is there,
    /// and refuses option keys Strata does not know ([`Table::create_with_policy`] can keep them).
    pub fn create(io: Arc<dyn FileIO>, path: &str, schema: TableSchema) -> Result<Table> {
        Self::create_with_policy(io, path, schema, OptionPolicy::default())
    }

    /// [`Table::create`], with `policy` deciding about unknown option keys.
    pub fn create_with_policy(
        io: Arc<dyn FileIO>,
        path: &str,
        schema: TableSchema,
        policy: OptionPolicy,
    ) -> Result<Table> {
        let _span = tracing::info_span!("create_table", path).entered();
        option_rules::check_keys(schema.options.keys(), policy)?;
        schema.validate()?;
        option_rules::check_options(&schema)?;
        // A table every write would refuse is not created (an append table, a cross-partition one, ...).
        crate::bucket::mode::check_writable(&schema, crate::bucket::mode::WritePurpose::Rows)?;
        let schemas = SchemaManager::new(io.clone(), path);
        if !schemas.list_ids()?.is_empty() {
            return Err(Error::AlreadyExists { path: path.to_string() });
        }
        // Orphan cleanup owns the table directory's Paimon layout; a directory that already holds other
        // files is someone else's, and creating a table there would mix the two. (A `schema` directory alone
        // is what a create interrupted before its first schema file leaves.)
        let foreign: Vec<String> = io
            .list(path)?
            .into_iter()
            .filter(|e| !(e.is_dir && e.name() == "schema"))
            .map(|e| e.name().to_string())
            .collect();
        if !foreign.is_empty() {
            return Err(Error::invalid(
                format!("table directory {path}"),
                format!(
                    "it is not empty and holds no Paimon table (found {}); create a table in a new or empty directory",
                    foreign.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let schema = TableSchema { id: 0, ..schema };
        schemas.create(&schema)?;
        Self::open(io, path)
    }

    /// Deletes the table at `path` and everything under it, for tools that own a scratch table (the demo, the
    /// workload replayer). A missing or empty directory is fine; a non-empty directory that holds no Paimon
    /// table is refused, so a mistyped path never deletes someone's files.
    pub fn delete_table_dir(io: &Arc<dyn FileIO>, path: &str) -> Result<()> {
        if !SchemaManager::new(io.clone(), path).list_ids()?.is_empty() || io.list(path)?.is_empty() {
            return io.delete_dir(path);
        }
        Err(Error::invalid(
            format!("table directory {path}"),
            "it holds files but no Paimon table; refusing to delete it".to_string(),
        ))
    }

    /// Opens the table at `path` with its newest schema.
    pub fn open(io: Arc<dyn FileIO>, path: &str) -> Result<Table> {
        Self::open_at(io, path, None)
    }

    /// Opens branch `branch` of the table at `path` (Paimon's `branch/branch-<name>/`; "main" is the table
    /// itself), with the branch's newest schema.
    pub fn open_branch(io: Arc<dyn FileIO>, path: &str, branch: &str) -> Result<Table> {
        if branch.eq_ignore_ascii_case(MAIN_BRANCH) {
            return Self::open(io, path);
        }
        crate::branch::check_path_part(branch)?;
        Self::open_at(io, path, Some(branch.to_string()))
    }

    fn open_at(io: Arc<dyn FileIO>, path: &str, branch: Option<String>) -> Result<Table> {
        let path = path.trim_end_matches('/').to_string();
        let root = crate::branch::branch_root(&path, branch.as_deref());
        let schemas = SchemaManager::new(io.clone(), &root);
        let schema = schemas.latest()?.ok_or_else(|| match &branch {
            None => Error::NotFound { path: format!("{path} (no table: schema/schema-N missing)") },
            Some(b) => Error::NotFound { path: format!("{path}: branch '{b}' (no {root}/schema/schema-N)") },
        })?;
        schema.validate().map_err(|e| e.in_file(&schemas.schema_path(schema.id)))?;
        Ok(Table {
            files_cache: Arc::new(parking_lot::Mutex::new(None)),
            index_cache: Arc::new(parking_lot::Mutex::new(None)),
            footers: strata_format::FooterCache::new(strata_format::FOOTER_CACHE_BYTES),
            dv_checked: Arc::new(parking_lot::Mutex::new(None)),
            foreign_compaction_window: None,
            external_roots: Arc::new(std::sync::OnceLock::new()),
            snapshots: SnapshotManager::new(io.clone(), &root),
            paths: Arc::new(PathFactory::new(&path)),
            history: Arc::new(SchemaHistoryCache::new(schemas.clone())),
            io,
            path,
            schema,
            schemas,
            branch,
        })
    }

    /// The branch this handle reads and writes, `None` for main.
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// Where the handle's snapshots, schemas, tags and consumers are: the table directory, or the branch's.
    pub fn metadata_root(&self) -> String {
        crate::branch::branch_root(&self.path, self.branch.as_deref())
    }

    /// The table opened again (its newest schema), on the same branch.
    pub fn reopen(&self) -> Result<Table> {
        Self::open_at(self.io.clone(), &self.path, self.branch.clone())
    }

    /// The key-value layout of this table's files under its schema, reading files written under older
    /// schemas through the table's schema history.
    pub fn layout(&self) -> Result<KeyValueLayout> {
        Ok(KeyValueLayout::new(&self.schema)?.with_history(self.history.clone()))
    }

    /// The table's schema history (every schema its files were written with).
    pub fn schema_history(&self) -> Arc<dyn strata_format::SchemaHistory> {
        self.history.clone()
    }

    /// This table as snapshot `snapshot` reads (time travel): with the schema that snapshot was written
    /// under, so a column added since is not there and a renamed one has its old name. `None`: as it is.
    pub fn as_of(&self, snapshot: Option<i64>) -> Result<Table> {
        match snapshot.map(|id| self.snapshot(Some(id))).transpose()?.flatten() {
            Some(s) => self.as_of_snapshot(&s),
            None => Ok(self.clone()),
        }
    }

    /// [`as_of`](Self::as_of) for a snapshot value, which need not be in `snapshot/` any more (a tag's).
    pub fn as_of_snapshot(&self, snapshot: &Snapshot) -> Result<Table> {
        self.at_schema(snapshot.schema_id)
    }

    /// This table read as of schema `id` (time travel to a snapshot written under an older schema): its
    /// fields and options are that schema's.
    pub fn at_schema(&self, id: i64) -> Result<Table> {
        if id == self.schema.id {
            return Ok(self.clone());
        }
        let schema = strata_format::SchemaHistory::schema(self.history.as_ref(), id)?;
        schema.validate().map_err(|e| e.in_file(&self.schemas.schema_path(id)))?;
        Ok(Table {
            schema: (*schema).clone(),
            files_cache: Arc::new(parking_lot::Mutex::new(None)),
            index_cache: Arc::new(parking_lot::Mutex::new(None)),
            dv_checked: Arc::new(parking_lot::Mutex::new(None)),
            ..self.clone()
        })
    }

    /// The parsed footers point lookups keep for this table's data files.
    pub(crate) fn footers(&self) -> &strata_format::FooterCache {
        &self.footers
    }

    /// The table directory.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The storage.
    pub fn io(&self) -> &Arc<dyn FileIO> {
        &self.io
    }

    /// The current schema.
    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// The schema manager.
    pub fn schema_manager(&self) -> &SchemaManager {
        &self.schemas
    }

    /// The snapshot manager.
    pub fn snapshot_manager(&self) -> &SnapshotManager {
        &self.snapshots
    }

    /// The path factory.
    pub fn path_factory(&self) -> &Arc<PathFactory> {
        &self.paths
    }

    /// Types of the partition columns.
    pub fn partition_types(&self) -> Result<Vec<DataType>> {
        Ok(self.schema.partition_fields()?.iter().map(|f| f.data_type).collect())
    }

    /// Types of the trimmed primary key.
    pub fn key_types(&self) -> Result<Vec<DataType>> {
        Ok(self.schema.trimmed_primary_key_fields()?.iter().map(|f| f.data_type).collect())
    }

    /// Reads and writes this table's manifests.
    pub fn manifest_store(&self) -> Result<ManifestStore> {
        let options = self.schema.core_options();
        Ok(ManifestStore::new(
            self.io.clone(),
            self.paths.clone(),
            options.manifest_compression()?,
            options.manifest_target_file_size()?,
            self.partition_types()?,
            self.schema.id,
        ))
    }

    /// Sets how long a compaction committed by another engine keeps this handle's commits from compacting the
    /// buckets it changed (`strata.foreign-compaction.window`, 1 hour by default); zero turns the check off,
    /// for when that engine's compactor is known to have stopped.
    pub fn set_foreign_compaction_window(&mut self, window: std::time::Duration) {
        self.foreign_compaction_window = Some(window);
    }

    /// A committer acting as `commit_user`.
    pub fn new_commit(&self, commit_user: &str) -> Result<FileStoreCommit> {
        let options = self.schema.core_options();
        let retry = RetryPolicy {
            max_retries: options.commit_max_retries()?,
            timeout: options.commit_timeout()?,
            min_wait: options.commit_min_retry_wait()?,
            max_wait: options.commit_max_retry_wait()?,
        };
        Ok(FileStoreCommit::new(
            self.io.clone(),
            self.snapshots.clone(),
            self.manifest_store()?,
            commit_user.to_string(),
            self.schema.id,
            self.key_types()?,
            retry,
        )
        .with_foreign_compaction_window(self.foreign_compaction_window()?)
        .with_dv_index_by_name(
            crate::bucket::mode::BucketMode::of(&self.schema)? == crate::bucket::mode::BucketMode::Unaware,
        ))
    }

    /// How long a compaction by another engine keeps this handle's commits from compacting its buckets.
    /// Never for an unaware-bucket append table: Paimon compacts those in tasks that read the vectors of the
    /// snapshot they start from, and its commit checks that every index file it replaces is still there
    /// (`ConflictDetection`'s unaware-bucket check), so a vector Strata wrote meanwhile fails that commit
    /// instead of being lost.
    pub(crate) fn foreign_compaction_window(&self) -> Result<std::time::Duration> {
        if crate::bucket::mode::BucketMode::of(&self.schema)? == crate::bucket::mode::BucketMode::Unaware {
            return Ok(std::time::Duration::ZERO);
        }
        match self.foreign_compaction_window {
            Some(window) => Ok(window),
            None => self.schema.core_options().foreign_compaction_window(),
        }
    }

    /// The snapshot `id`, or the latest when `None`; `Ok(None)` for a table with no snapshot yet.
    pub fn snapshot(&self, id: Option<i64>) -> Result<Option<Snapshot>> {
        match id {
            Some(id) => self.snapshots.snapshot(id).map(Some),
            None => self.snapshots.latest(),
        }
    }

    /// The changelog files a snapshot added (its changelog manifest list), in commit order; empty when the
    /// table produces no changelog.
    pub fn changelog_files(&self, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
        let Some(list) = &snapshot.changelog_manifest_list else { return Ok(Vec::new()) };
        let store = self.manifest_store()?;
        let mut out = Vec::new();
        for m in store.read_manifest_list_sized(list, snapshot.changelog_manifest_list_size)? {
            out.extend(store.read_manifest_of(&m)?);
        }
        Ok(out)
    }

    /// The live data files of a snapshot, ordered by partition, bucket, level and name.
    pub fn live_files(&self, snapshot: &Snapshot) -> Result<Vec<ManifestEntry>> {
        Ok(self.live_files_shared(snapshot)?.as_ref().clone())
    }

    /// [`live_files`](Self::live_files), shared and cached for the most recent snapshot read (keyed by the
    /// snapshot's manifest lists, which identify its content).
    pub fn live_files_shared(&self, snapshot: &Snapshot) -> Result<Arc<Vec<ManifestEntry>>> {
        let key = format!("{}|{}|{}", snapshot.id, snapshot.base_manifest_list, snapshot.delta_manifest_list);
        if let Some((k, files)) = self.files_cache.lock().as_ref() {
            if *k == key {
                return Ok(files.clone());
            }
        }
        let files: Arc<Vec<ManifestEntry>> =
            Arc::new(self.manifest_store()?.live_files(snapshot)?.into_values().collect());
        *self.files_cache.lock() = Some((key, files.clone()));
        Ok(files)
    }

    /// The live index files of a snapshot.
    pub fn index_files(&self, snapshot: &Snapshot) -> Result<Vec<IndexManifestEntry>> {
        let Some(name) = &snapshot.index_manifest else { return Ok(Vec::new()) };
        if let Some((k, entries)) = self.index_cache.lock().as_ref() {
            if k == name {
                return Ok(entries.as_ref().clone());
            }
        }
        let entries = self.manifest_store()?.index_entries(snapshot)?;
        *self.index_cache.lock() = Some((name.clone(), Arc::new(entries.clone())));
        Ok(entries)
    }

    /// The deletion vectors of (`partition`, `bucket`) as of `snapshot` (none when `snapshot` is `None`),
    /// ready to take new deletions (Paimon's `BucketedDvMaintainer.create_or_restore`).
    pub fn dv_maintainer(
        &self,
        snapshot: Option<&Snapshot>,
        partition: &BinaryRow,
        bucket: i32,
    ) -> Result<BucketedDvMaintainer> {
        let bitmap64 = self.schema.core_options().deletion_vectors_bitmap64()?;
        let index_file = match snapshot {
            None => None,
            Some(s) => {
                let mut of_bucket = self.bucket_dv_index_files(s, partition, bucket)?;
                // One index file per bucket is what a primary-key table's writers keep; restoring from one of
                // several would commit the bucket without the vectors of the others.
                if of_bucket.len() > 1 {
                    return Err(Error::unsupported(format!(
                        "bucket {bucket} has {} deletion-vector index files (a primary-key table's bucket keeps one)",
                        of_bucket.len()
                    )));
                }
                of_bucket.pop()
            }
        };
        let path = index_file.as_ref().map(|f| self.index_file_path(f)).transpose()?;
        let mut maintainer =
            BucketedDvMaintainer::restore(self.io.as_ref(), index_file.as_ref().zip(path.as_deref()), bitmap64)?;
        if let (Some(s), Some(_)) = (snapshot, &index_file) {
            // Only what reads classify as orphans: a damaged name is an error there, and dropping it here would
            // commit the live file it belongs to without its vector.
            // (Without the vanished-vector check, which compares with the previous snapshot: `strata repair`
            // restores what a stale writer's commit dropped, and reads still refuse such a snapshot.)
            let orphans: std::collections::HashSet<String> = self
                .deletion_files_and_orphans(s, false)?
                .1
                .into_iter()
                .filter(|(p, b, _)| p == partition && *b == bucket)
                .map(|(_, _, name)| name)
                .collect();
            let dropped = maintainer.retain_live(|name| !orphans.contains(name));
            if !dropped.is_empty() {
                tracing::info!(bucket, ?dropped, "dropping deletion vectors of files that are no longer live");
            }
        }
        Ok(maintainer)
    }

    /// The deletion-vector index files of (partition, bucket) in `snapshot`.
    fn bucket_dv_index_files(
        &self,
        snapshot: &Snapshot,
        partition: &BinaryRow,
        bucket: i32,
    ) -> Result<Vec<IndexFileMeta>> {
        Ok(self
            .index_files(snapshot)?
            .into_iter()
            .filter(|e| {
                &e.partition == partition && e.bucket == bucket && e.index_file.index_type == DELETION_VECTORS_INDEX
            })
            .map(|e| e.index_file)
            .collect())
    }

    /// The deletion vectors of an append table's (partition, bucket) as of `snapshot`, from all of its index
    /// files (an unaware bucket's partition may hold several).
    pub fn append_dv_maintainer(
        &self,
        snapshot: Option<&Snapshot>,
        partition: &BinaryRow,
        bucket: i32,
    ) -> Result<AppendDvMaintainer> {
        let bitmap64 = self.schema.core_options().deletion_vectors_bitmap64()?;
        let files = match snapshot {
            None => Vec::new(),
            Some(s) => self
                .bucket_dv_index_files(s, partition, bucket)?
                .into_iter()
                .map(|f| self.index_file_path(&f).map(|path| (f, path)))
                .collect::<Result<Vec<_>>>()?,
        };
        let vectors = AppendDvMaintainer::restore(self.io.as_ref(), &files, bitmap64)?;
        // A fixed bucket keeps one index file, which commits replace whole; an unaware partition keeps many.
        Ok(match crate::bucket::mode::BucketMode::of(&self.schema)? {
            crate::bucket::mode::BucketMode::Unaware => vectors,
            _ => vectors.whole_bucket(),
        })
    }

    /// The data file path of a manifest entry: under the bucket directory by its name (checked to be a plain
    /// name when the manifest was decoded), or at its external path when that lies under one of the roots of
    /// `data-file.external-paths`. Scans, lookups, compactions, expiration and orphan cleanup all resolve data
    /// files here, so no metadata can make any of them read or delete a file outside the table's roots.
    pub fn data_file_path(&self, e: &ManifestEntry) -> Result<String> {
        if let Some(p) = &e.file.external_path {
            return external_path_within(p, self.external_path_roots(), "data file _EXTERNAL_PATH")
                .map_err(|err| err.in_file(&format!("manifest entry of {}", e.file.file_name)));
        }
        let fields = self.schema().partition_fields()?;
        let part = partition_path(&e.partition, &fields, self.schema().core_options().partition_default_name())?;
        Ok(join(&self.path_factory().bucket_dir(&part, e.bucket), &e.file.file_name))
    }

    /// Where an index file is: under `index/` by its name, or at its external path when that lies under one of
    /// the roots of `data-file.external-paths` (anything else is a corrupt-table error).
    pub fn index_file_path(&self, f: &IndexFileMeta) -> Result<String> {
        match &f.external_path {
            Some(p) => external_path_within(p, self.external_path_roots(), "index file _EXTERNAL_PATH")
                .map_err(|e| e.in_file(&format!("index manifest entry of {}", f.file_name))),
            None => Ok(self.paths.index_path(&f.file_name)),
        }
    }

    /// The roots under which metadata may place files outside the table: every `data-file.external-paths`
    /// any schema of the table named (the option may be altered, and files keep the paths they were written
    /// at), comma-separated; `None` when no schema names one.
    pub fn external_path_roots(&self) -> Option<&str> {
        self.external_roots
            .get_or_init(|| {
                let mut roots: Vec<String> = Vec::new();
                let current = self.schema.options.get(EXTERNAL_PATHS_OPTION).cloned();
                let older = self.schemas.list_ids().unwrap_or_default().into_iter().filter(|&id| id != self.schema.id);
                // An older schema that does not read names no roots: reading then fails closed (a corrupt
                // error for files under roots only it named), never open.
                let older =
                    older.filter_map(|id| self.schemas.schema(id).ok()?.options.get(EXTERNAL_PATHS_OPTION).cloned());
                for value in current.into_iter().chain(older) {
                    for root in value.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                        if !roots.iter().any(|r| r == root) {
                            roots.push(root.to_string());
                        }
                    }
                }
                (!roots.is_empty()).then(|| roots.join(","))
            })
            .as_deref()
    }

    /// Where each data file's deletion vector is in `snapshot`: data file name → (index file path, range).
    ///
    /// The index manifest is cross-checked against the snapshot's files, which costs no I/O: every vector must
    /// name a live data file of its bucket, delete at most that file's rows, and lie inside its index file. A
    /// corrupted entry would otherwise attach a vector to the wrong file or none (keys read twice).
    pub fn deletion_files(&self, snapshot: &Snapshot) -> Result<HashMap<(BinaryRow, i32, String), DeletionFile>> {
        Ok(self.deletion_files_and_orphans(snapshot, true)?.0)
    }

    /// The deletion vectors of `snapshot` that name no live data file of their bucket, as (partition, bucket,
    /// data file name): orphans, which reads skip (see `check_deletion_files`).
    pub fn orphan_deletion_vectors(&self, snapshot: &Snapshot) -> Result<Vec<(BinaryRow, i32, String)>> {
        Ok(self.deletion_files_and_orphans(snapshot, true)?.1)
    }

    /// [`deletion_files`](Self::deletion_files) without the orphans, and the orphans.
    #[allow(clippy::type_complexity)]
    fn deletion_files_and_orphans(
        &self,
        snapshot: &Snapshot,
        check_vanished: bool,
    ) -> Result<(HashMap<(BinaryRow, i32, String), DeletionFile>, Vec<(BinaryRow, i32, String)>)> {
        let mut out = HashMap::new();
        let mut sizes: HashMap<String, i64> = HashMap::new();
        for e in self.index_files(snapshot)? {
            if e.index_file.index_type != DELETION_VECTORS_INDEX {
                continue;
            }
            let path = self.index_file_path(&e.index_file)?;
            sizes.insert(path.clone(), e.index_file.file_size);
            // A deletion-vector index file always lists its vectors; none at all means the field did not
            // decode (a damaged name in the manifest's header reads as an absent optional field), and
            // reading on would drop every vector of the bucket.
            let Some(ranges) = e.index_file.dv_ranges else {
                return Err(Error::corrupt_file(
                    path.clone(),
                    "its index manifest entry lists no deletion vector ranges",
                ));
            };
            for m in ranges {
                out.insert(
                    (e.partition.clone(), e.bucket, m.data_file_name.clone()),
                    DeletionFile { path: path.clone(), meta: m },
                );
            }
        }
        let orphans = if out.is_empty() { Vec::new() } else { self.check_deletion_files(snapshot, &out, &sizes)? };
        for orphan in &orphans {
            out.remove(orphan);
        }
        if check_vanished {
            self.check_no_vector_vanished(snapshot, &out)?;
        }
        Ok((out, orphans))
    }

    /// A live file's deletion vector only grows until a compaction rewrites the file (under a new name), so a
    /// vector the previous snapshot had for a file still live in `snapshot` cannot be missing from it: a
    /// corrupted snapshot or index manifest dropped it, and the rows it deleted would reappear. Costs the
    /// previous snapshot and its index manifest, in deletion-vector tables only; skipped once it is expired.
    fn check_no_vector_vanished(
        &self,
        snapshot: &Snapshot,
        dvs: &HashMap<(BinaryRow, i32, String), DeletionFile>,
    ) -> Result<()> {
        if snapshot.id <= 1
            || !self.schema.core_options().deletion_vectors_enabled()?
            || *self.dv_checked.lock() == Some(snapshot.id)
        {
            return Ok(());
        }
        let not_found = |r: Result<()>| match r {
            Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => Ok(()),
            other => other,
        };
        not_found((|| {
            let previous = self.snapshots.snapshot(snapshot.id - 1)?;
            if previous.index_manifest.is_none() {
                return Ok(());
            }
            let files = self.live_files_shared(snapshot)?;
            let live: std::collections::HashSet<(&BinaryRow, i32, &str)> =
                files.iter().map(|e| (&e.partition, e.bucket, e.file.file_name.as_str())).collect();
            for e in self.index_files(&previous)? {
                if e.index_file.index_type != DELETION_VECTORS_INDEX {
                    continue;
                }
                for m in e.index_file.dv_ranges.iter().flatten() {
                    let name = m.data_file_name.as_str();
                    if live.contains(&(&e.partition, e.bucket, name))
                        && !dvs.contains_key(&(e.partition.clone(), e.bucket, name.to_string()))
                    {
                        return Err(Error::corrupt_file(
                            self.snapshots.snapshot_path(snapshot.id),
                            format!(
                                "the deletion vector of {name} (bucket {}) in snapshot {} is missing although the \
                                 file is still live",
                                e.bucket, previous.id
                            ),
                        ));
                    }
                }
            }
            *self.dv_checked.lock() = Some(snapshot.id);
            Ok(())
        })())
    }

    /// Checks the vectors that name live files (each deletes at most its file's rows and lies inside its index
    /// file) and returns the ones that name no live file of their bucket: orphans, which readers skip as
    /// Paimon's do. Paimon 1.4 leaves them behind (a full compaction after a minor one in its dedicated
    /// compaction, Paimon #8778; a stale writer's vectors after another engine's compaction) and its readers
    /// look vectors up by the live files' names. A damaged name is not an orphan: one that names a live file of
    /// another bucket (a damaged bucket or partition) or differs by one byte from a live file of its own
    /// bucket (a damaged name), or that is no data file's name at all, is corrupt, since the vector it belongs
    /// to is then missing from a live file and deleted rows would read again.
    fn check_deletion_files(
        &self,
        snapshot: &Snapshot,
        dvs: &HashMap<(BinaryRow, i32, String), DeletionFile>,
        index_sizes: &HashMap<String, i64>,
    ) -> Result<Vec<(BinaryRow, i32, String)>> {
        let files = self.live_files_shared(snapshot)?;
        let mut matched = 0usize;
        for e in files.iter() {
            let Some(df) = dvs.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone())) else {
                continue;
            };
            matched += 1;
            let m = &df.meta;
            if m.cardinality.is_some_and(|c| c < 0 || c > e.file.row_count) {
                return Err(Error::corrupt_file(
                    df.path.clone(),
                    format!(
                        "deletion vector of {} deletes {:?} rows of a file of {}",
                        m.data_file_name, m.cardinality, e.file.row_count
                    ),
                ));
            }
            let size = index_sizes.get(&df.path).copied().unwrap_or(i64::MAX);
            if m.offset < 1 || m.length < 0 || i64::from(m.offset) + i64::from(m.length) > size {
                return Err(Error::corrupt_file(
                    df.path.clone(),
                    format!(
                        "deletion vector of {} at offset {} length {} lies outside the index file of {size} bytes",
                        m.data_file_name, m.offset, m.length
                    ),
                ));
            }
        }
        if matched == dvs.len() {
            return Ok(Vec::new());
        }
        let live = crate::read::orphan_vectors::LiveNames::new(&files);
        let options = self.schema.core_options();
        let mut prefixes = vec!["data-"];
        prefixes.extend(options.get("data-file.prefix").filter(|p| !p.is_empty()));
        let mut orphans = Vec::new();
        for ((p, b, name), df) in dvs.iter().filter(|((p, b, n), _)| !live.contains((p, *b), n)) {
            if let Some(why) = crate::read::orphan_vectors::damage(name, (p, *b), &live, &prefixes) {
                return Err(Error::corrupt_file(
                    df.path.clone(),
                    format!(
                        "deletion vector names {name} (bucket {b}), not a live data file of its bucket, and {why}: \
                         a damaged name"
                    ),
                ));
            }
            orphans.push((p.clone(), *b, name.clone()));
        }
        orphans.sort_by(|a, b| (a.1, &a.2).cmp(&(b.1, &b.2)));
        Ok(orphans)
    }

    /// The options as stored.
    pub fn options(&self) -> &BTreeMap<String, String> {
        &self.schema.options
    }
}

impl Table {
    /// Whether every bucket of `snapshot` is one sorted run at a level >= 1 without deletion vectors (what a
    /// full compaction leaves).
    pub fn is_fully_compacted(&self, snapshot: &Snapshot) -> Result<bool> {
        let mut levels: BTreeMap<(Vec<u8>, i32), std::collections::BTreeSet<i32>> = BTreeMap::new();
        for e in self.live_files(snapshot)? {
            levels.entry((e.partition.serialize(), e.bucket)).or_default().insert(e.file.level);
        }
        if levels.values().any(|l| l.len() > 1 || l.contains(&0)) {
            return Ok(false);
        }
        Ok(self.deletion_files(snapshot)?.is_empty())
    }
}

/// The name Paimon gives the table's own branch.
pub(crate) const MAIN_BRANCH: &str = "main";
