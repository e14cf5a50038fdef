//! Writing to a table: rows routed to (partition, bucket) writers, each a merge-tree writer, by the table's
//! bucket mode (`crate::bucket::mode`): Paimon's bucket function for fixed buckets, the partition's hash index
//! for dynamic buckets (`crate::bucket::dynamic`); `prepare_commit` turns the writers' increments into commit
//! messages, buckets in parallel. A compaction of a postpone-bucket table also replays its postponed rows
//! into real buckets (`crate::bucket::postpone`).

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use strata_format::RowKind;
use strata_lsm::MergeTreeWriter;
use strata_spec::{
    bucket_of, BinaryRow, DataType, Error, IndexManifestEntry, ManifestEntry, Result, Snapshot, HASH_INDEX,
};

use crate::bucket::dynamic::DynamicBuckets;
use crate::bucket::mode::{check_writable, BucketMode, WritePurpose, POSTPONE_BUCKET};
use crate::meta::paths::partition_path;
use crate::table::Table;
use strata_spec::CommitMessage;

mod bucket_files;
mod conform;
mod delete;
pub(crate) mod distributed;
mod route;
pub(crate) mod table_writer;
mod update;

use bucket_files::BucketFiles;
pub use update::RowUpdate;

/// The base snapshot's live files by (serialized partition, bucket).
type LiveByBucket = BTreeMap<(Vec<u8>, i32), Vec<ManifestEntry>>;

/// One open (partition, bucket).
struct BucketWriter {
    partition: BinaryRow,
    writer: BucketFiles,
    /// What its commit messages record as `_TOTAL_BUCKETS` (-1 for dynamic buckets).
    total_buckets: i32,
    /// The snapshot it was opened on.
    opened_at: Option<i64>,
}

impl BucketWriter {
    /// An append writer opened on another snapshot than `now` that holds nothing uncommitted: it may be
    /// dropped and opened again on the latest snapshot.
    fn is_stale_append(&self, now: Option<i64>) -> bool {
        matches!(self.writer, BucketFiles::Append(_)) && self.opened_at != now && !self.writer.has_changes()
    }
}

/// How rows find their bucket.
#[derive(Debug)]
enum Routing {
    /// The bucket-key hash modulo this many buckets.
    Fixed(i32),
    /// An append table's unaware bucket: every row of a partition goes to bucket 0.
    Unaware,
    /// The partition's hash index.
    Dynamic(DynamicBuckets),
    /// A postpone-bucket table being compacted: the bucket-key hash modulo the partition's real bucket count
    /// (serialized partition -> count; `crate::bucket::postpone::bucket_counts`).
    Postpone(HashMap<Vec<u8>, i32>),
}

/// What a prepare does with the bucket writers' compactions.
#[derive(Debug, Clone, Copy)]
enum Prepare {
    /// A commit between writes: compactions as the writers' options say, not waited for.
    Commit,
    /// A batch's last commit: compactions as the options say, waited for.
    Waiting,
    /// An explicit compaction (full, or with a delete-ratio rewrite), `write-only` or not.
    Compaction { full: bool, delete_ratio: Option<f64> },
}

/// Writes rows into a table, for one commit at a time.
pub struct TableWrite {
    table: Table,
    purpose: WritePurpose,
    base: Option<Snapshot>,
    live: Option<LiveByBucket>,
    /// The base snapshot's index manifest, read when a dynamic-bucket partition is first loaded.
    base_index: Option<Vec<IndexManifestEntry>>,
    writers: BTreeMap<(Vec<u8>, i32), BucketWriter>,
    /// Messages of buckets that prepared while another bucket failed: committed with the next prepare.
    carried: Vec<CommitMessage>,
    routing: Routing,
    partition_idx: Vec<usize>,
    partition_types: Vec<DataType>,
    bucket_idx: Vec<usize>,
    bucket_types: Vec<DataType>,
    rowkind_idx: Option<usize>,
    value_types: Vec<DataType>,
    /// The Arrow schema rows are conformed to (the table's columns).
    value_schema: arrow_schema::SchemaRef,
    /// `write-buffer-size`: the memory of all bucket writers' buffers together.
    write_buffer_size: u64,
    /// `write-buffer-spillable`.
    spillable: bool,
    /// What every row a row-level change takes satisfies: files whose statistics rule it out are not read.
    row_filter: Option<strata_format::Predicate>,
    /// An append table's writers were checked against the latest snapshot in this commit cycle.
    append_writers_checked: bool,
}

impl TableWrite {
    /// A writer on the table's latest snapshot; refuses tables Strata cannot write, with an unsupported error
    /// saying why.
    pub fn new(table: &Table) -> Result<Self> {
        Self::with_purpose(table, WritePurpose::Rows)
    }

    /// A writer that only compacts (`open_all_buckets`, then a prepare): it also takes postpone-bucket tables,
    /// whose postponed rows the compaction moves into real buckets. Writing rows through it is refused.
    pub fn for_compaction(table: &Table) -> Result<Self> {
        Self::with_purpose(table, WritePurpose::Compaction)
    }

    fn with_purpose(table: &Table, purpose: WritePurpose) -> Result<Self> {
        let schema = table.schema();
        check_writable(schema, purpose)?;
        let options = schema.core_options();
        let routing = match BucketMode::of(schema)? {
            BucketMode::Fixed(n) => Routing::Fixed(n),
            BucketMode::Unaware => Routing::Unaware,
            BucketMode::Dynamic => Routing::Dynamic(DynamicBuckets::new(&options)?),
            BucketMode::Postpone => Routing::Postpone(HashMap::new()),
            BucketMode::CrossPartition => return Err(Error::unsupported("cross-partition update tables")),
        };
        let idx = |names: &[String]| -> Result<Vec<usize>> {
            names
                .iter()
                .map(|n| {
                    schema
                        .fields
                        .iter()
                        .position(|f| &f.name == n)
                        .ok_or_else(|| Error::invalid("column", format!("'{n}'")))
                })
                .collect()
        };
        let partition_idx = idx(&schema.partition_keys)?;
        // Dynamic buckets index the trimmed primary key's hash (Paimon's `trimmedPrimaryKey().hashCode()`).
        // An unaware bucket has no key (every row of a partition goes to bucket 0).
        let bucket_keys = match routing {
            Routing::Dynamic(_) => schema.trimmed_primary_keys(),
            Routing::Unaware => Vec::new(),
            _ => schema.bucket_keys(),
        };
        let bucket_idx = idx(&bucket_keys)?;
        let rowkind_idx = match options.rowkind_field() {
            None => None,
            Some(f) => Some(idx(std::slice::from_ref(&f))?[0]),
        };
        let value_types: Vec<DataType> = schema.fields.iter().map(|f| f.data_type).collect();
        let value_schema = strata_format::KeyValueLayout::new(schema)?.value_schema;
        Ok(TableWrite {
            carried: Vec::new(),
            value_schema,
            base: table.snapshot(None)?,
            table: table.clone(),
            purpose,
            live: None,
            base_index: None,
            writers: BTreeMap::new(),
            routing,
            partition_types: partition_idx.iter().map(|&i| value_types[i]).collect(),
            bucket_types: bucket_idx.iter().map(|&i| value_types[i]).collect(),
            partition_idx,
            bucket_idx,
            rowkind_idx,
            value_types,
            write_buffer_size: options.write_buffer_size()?,
            spillable: options.write_buffer_spillable()?,
            row_filter: None,
            append_writers_checked: true,
        })
    }

    /// The table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The Arrow schema of the table's rows.
    pub fn value_schema(&self) -> &arrow_schema::SchemaRef {
        &self.value_schema
    }

    fn live(&mut self) -> Result<&LiveByBucket> {
        if self.live.is_none() {
            let mut m = LiveByBucket::new();
            if let Some(s) = &self.base {
                for e in self.table.live_files(s)? {
                    m.entry((e.partition.serialize(), e.bucket)).or_default().push(e);
                }
            }
            self.live = Some(m);
        }
        self.live.as_ref().ok_or_else(|| Error::invalid("write", "live files not loaded"))
    }

    fn writer(&mut self, partition: &BinaryRow, bucket: i32) -> Result<&mut BucketFiles> {
        let key = (partition.serialize(), bucket);
        if !self.writers.contains_key(&key) {
            // A bucket writer starts from the latest snapshot, not from when this TableWrite was made: commits
            // (its own included) may have landed since, and expiration may have removed older snapshots.
            self.refresh_base()?;
            let files: Vec<_> =
                self.live()?.get(&key).map(|v| v.iter().map(|e| e.file.clone()).collect()).unwrap_or_default();
            let bucket_dir = self.bucket_dir(partition, bucket)?;
            let writer = if self.table.schema().primary_keys.is_empty() {
                BucketFiles::Append(Box::new(self.new_append_writer(partition, bucket, bucket_dir, files)?))
            } else {
                BucketFiles::MergeTree(Box::new(self.new_merge_tree_writer(partition, bucket, bucket_dir, files)?))
            };
            let total_buckets = self.total_buckets(&key.0)?;
            let opened_at = self.base.as_ref().map(|b| b.id);
            self.writers
                .insert(key.clone(), BucketWriter { partition: partition.clone(), writer, total_buckets, opened_at });
        }
        self.writers.get_mut(&key).map(|b| &mut b.writer).ok_or_else(|| Error::invalid("write", "writer vanished"))
    }

    /// A primary-key bucket's writer, on the base snapshot's `files`.
    fn new_merge_tree_writer(
        &self,
        partition: &BinaryRow,
        bucket: i32,
        bucket_dir: String,
        files: Vec<strata_spec::DataFileMeta>,
    ) -> Result<MergeTreeWriter> {
        let schema = self.table.schema();
        let dv = if schema.core_options().deletion_vectors_enabled()? {
            Some(self.table.dv_maintainer(self.base.as_ref(), partition, bucket)?)
        } else {
            None
        };
        let mut w = MergeTreeWriter::new(
            self.table.io().clone(),
            schema,
            Some(self.table.schema_history()),
            bucket,
            bucket_dir,
            self.table.path_factory().index_dir(),
            files,
            dv,
        )?;
        if let Some(foreign) = self.compacted_elsewhere(partition, bucket)? {
            // Its compactions would be refused at commit (see `foreign_compaction`): the rows go to level 0
            // for that engine's compactor, as a `write-only` writer's do, and other buckets still compact.
            tracing::warn!(bucket, foreign, "another engine compacts this bucket: writing it without compacting");
            w.set_write_only(true);
        }
        Ok(w)
    }

    /// For a writer of rows into a deletion-vector bucket: the latest COMPACT snapshot of another engine that
    /// changed the bucket within the foreign-compaction window, if any.
    fn compacted_elsewhere(&self, partition: &BinaryRow, bucket: i32) -> Result<Option<i64>> {
        let Some(base) = &self.base else { return Ok(None) };
        if self.purpose != WritePurpose::Rows || !self.table.schema().core_options().deletion_vectors_enabled()? {
            return Ok(None);
        }
        crate::commit::foreign_compaction::compacted_by_another_engine(&self.table, base, partition, bucket)
    }

    /// Moves the base to the latest snapshot and drops the append writers opened on an older one that hold
    /// nothing uncommitted (a delete or another engine may have rewritten their files and vectors since):
    /// reopened, they start from what is committed now. An append writer keeps no state beyond its files.
    fn drop_stale_append_writers(&mut self) -> Result<()> {
        self.refresh_base()?;
        let now = self.base.as_ref().map(|s| s.id);
        self.writers.retain(|_, w| !w.is_stale_append(now));
        Ok(())
    }

    /// At the first write of a commit cycle of an append table: if another writer committed since an idle
    /// bucket writer was opened (a delete or update rewrote its files, or appended rows numbered after its
    /// own), that writer starts again from the latest snapshot, so the rows it writes now number after the
    /// bucket's. One read of the latest snapshot's id per cycle.
    fn check_append_writers(&mut self) -> Result<()> {
        if self.append_writers_checked || !self.table.schema().primary_keys.is_empty() {
            return Ok(());
        }
        self.append_writers_checked = true;
        let now = self.table.snapshot_manager().latest_id()?;
        if self.writers.values().any(|w| w.is_stale_append(now)) {
            self.drop_stale_append_writers()?;
        }
        Ok(())
    }

    /// Its messages landed as the `count` snapshots up to `last`: a bucket writer opened on the snapshot just
    /// before them has seen every commit since (they were all its own), and is as current as one opened now.
    pub(crate) fn note_committed(&mut self, last: i64, count: i64) {
        for w in self.writers.values_mut() {
            if w.opened_at.unwrap_or(0).checked_add(count) == Some(last) {
                w.opened_at = Some(last);
            }
        }
    }

    /// Moves the base to the latest snapshot.
    fn refresh_base(&mut self) -> Result<()> {
        let latest = self.table.snapshot(None)?;
        if latest.as_ref().map(|s| s.id) != self.base.as_ref().map(|s| s.id) {
            self.base = latest;
            self.live = None;
            self.base_index = None;
        }
        Ok(())
    }

    /// What the messages of a bucket of `partition` (serialized) record as the table's bucket count.
    fn total_buckets(&self, partition: &[u8]) -> Result<i32> {
        match &self.routing {
            Routing::Fixed(n) => Ok(*n),
            Routing::Dynamic(_) | Routing::Unaware => Ok(-1),
            Routing::Postpone(counts) => counts
                .get(partition)
                .copied()
                .ok_or_else(|| Error::invalid("write", "a postpone-bucket partition without a bucket count")),
        }
    }

    /// Loads a dynamic-bucket partition's hash indexes as of the latest snapshot (which becomes the base).
    fn load_dynamic_partition(&mut self, partition: &BinaryRow) -> Result<()> {
        self.refresh_base()?;
        let key = partition.serialize();
        let data_buckets: BTreeSet<i32> =
            self.live()?.keys().filter(|(p, b)| *p == key && *b >= 0).map(|(_, b)| *b).collect();
        if self.base_index.is_none() {
            self.base_index = Some(match &self.base {
                Some(s) => self.table.index_files(s)?,
                None => Vec::new(),
            });
        }
        let entries = self.base_index.as_deref().unwrap_or_default();
        match &mut self.routing {
            Routing::Dynamic(d) => d.load(&self.table, partition, entries, &data_buckets),
            _ => Ok(()),
        }
    }

    /// The directory of a bucket's data files.
    fn bucket_dir(&self, partition: &BinaryRow, bucket: i32) -> Result<String> {
        let schema = self.table.schema();
        let fields = schema.partition_fields()?;
        let part_path = partition_path(partition, &fields, schema.core_options().partition_default_name())?;
        Ok(self.table.path_factory().bucket_dir(&part_path, bucket))
    }

    /// Casts `batch`'s columns (matched by name) to the table's types.
    fn conform(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        conform::conform_rows(self.table.schema(), &self.value_types, &self.value_schema, batch)
    }

    /// Writes rows (every column of the table by name; nullable columns may be missing, columns the table
    /// lacks are refused). Row kinds come from
    /// `rowkind.field` when the table sets it, else every row is an insert.
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let kinds = match self.rowkind_idx {
            None => vec![RowKind::Insert.to_byte(); batch.num_rows()],
            Some(i) => {
                let name = &self.table.schema().fields[i].name;
                let col = batch
                    .column_by_name(name)
                    .ok_or_else(|| Error::invalid("rows", format!("rowkind.field column '{name}' is missing")))?;
                let col =
                    arrow_cast::cast(col, &arrow_schema::DataType::Utf8).map_err(|e| Error::invalid_from("rows", e))?;
                let s = col.as_string::<i32>();
                (0..s.len())
                    .map(|r| {
                        if s.is_null(r) {
                            Err(Error::invalid("rows", format!("rowkind.field '{name}' is null in row {r}")))
                        } else {
                            RowKind::from_short_string(s.value(r)).map(RowKind::to_byte)
                        }
                    })
                    .collect::<Result<Vec<_>>>()?
            }
        };
        self.write_with_kinds(batch, &kinds)
    }

    /// Deletes the rows whose primary keys are the rows of `keys` (key columns by name; other columns are
    /// ignored): each becomes a delete row that carries its key, NULL in the nullable columns and a
    /// placeholder in the other NOT NULL ones (a delete's values are never read).
    pub fn delete_keys(&mut self, keys: &RecordBatch) -> Result<()> {
        let schema = self.table.schema().clone();
        let n = keys.num_rows();
        let (mut fields, mut cols) = (Vec::new(), Vec::new());
        for (f, t) in schema.fields.iter().zip(&self.value_types) {
            let col = if schema.primary_keys.contains(&f.name) {
                keys.column_by_name(&f.name)
                    .cloned()
                    .ok_or_else(|| Error::invalid("delete", format!("key column '{}' is missing", f.name)))?
            } else if !t.nullable {
                strata_format::array_of(t, &vec![Some(placeholder(t)); n])?
            } else {
                continue;
            };
            fields.push(arrow_schema::Field::new(f.name.clone(), col.data_type().clone(), true));
            cols.push(col);
        }
        let batch = RecordBatch::try_new(std::sync::Arc::new(arrow_schema::Schema::new(fields)), cols)
            .map_err(|e| Error::invalid_from("delete", e))?;
        self.write_with_kinds(&batch, &vec![RowKind::Delete.to_byte(); n])
    }

    /// Writes rows with explicit row kinds (`RowKind` bytes).
    pub fn write_with_kinds(&mut self, batch: &RecordBatch, kinds: &[i8]) -> Result<()> {
        if self.purpose == WritePurpose::Compaction {
            return Err(Error::invalid(
                "write",
                "this writer was opened for compaction only (TableWrite::for_compaction)",
            ));
        }
        self.write_rows(batch, kinds)
    }

    /// For each row of `batch`, the unit of work that must write it when rows are spread over many writers
    /// (processes or machines) committed by one committer: its serialized partition and its bucket by
    /// Paimon's bucket function. In a dynamic-bucket table the unit is the whole partition (bucket -1): one
    /// writer's assigner places a partition's keys. Two writers must never write one unit in one commit
    /// (`crate::commit_foreign_messages` refuses it); rows of one unit may all go to one writer in any order.
    pub fn units_of(&self, batch: &RecordBatch) -> Result<Vec<(Vec<u8>, i32)>> {
        let batch = self.conform(batch)?;
        (0..batch.num_rows())
            .map(|r| {
                let (partition, key) = self.partition_and_bucket_key(&batch, r)?;
                let bucket = match &self.routing {
                    Routing::Fixed(n) => bucket_of(&key, &self.bucket_types, *n)?,
                    Routing::Unaware => 0,
                    Routing::Dynamic(_) => -1,
                    Routing::Postpone(_) => {
                        return Err(Error::invalid("write", "a postpone-bucket table takes no rows"))
                    }
                };
                Ok((partition.serialize(), bucket))
            })
            .collect()
    }

    /// Opens a writer for each of `buckets` (partition, bucket), so a compaction reaches them.
    pub fn open_buckets(&mut self, buckets: &[(BinaryRow, i32)]) -> Result<()> {
        for (p, b) in buckets {
            self.writer(p, *b)?;
        }
        Ok(())
    }

    /// Opens a writer for every bucket that has files, so a compaction reaches all of them.
    ///
    /// In a postpone-bucket table the postponed files' rows are replayed, in commit order, into the real
    /// buckets of their partition and the postponed files are removed by the same commit (Paimon's postpone
    /// compaction, `crate::bucket::postpone`): batch reads see those rows from then on.
    pub fn open_all_buckets(&mut self) -> Result<()> {
        let postpone = matches!(self.routing, Routing::Postpone(_));
        if postpone {
            // One snapshot for the bucket counts, the writers and the postponed files.
            self.refresh_base()?;
            let live: Vec<ManifestEntry> = self.live()?.values().flatten().cloned().collect();
            self.routing =
                Routing::Postpone(crate::bucket::postpone::bucket_counts(&live, &self.table.schema().core_options())?);
        }
        if self.table.schema().primary_keys.is_empty() {
            self.drop_stale_append_writers()?;
        }
        let keys: Vec<(BinaryRow, i32)> = self
            .live()?
            .values()
            .filter_map(|v| v.first())
            .filter(|e| e.bucket >= 0)
            .map(|e| (e.partition.clone(), e.bucket))
            .collect();
        for (p, b) in keys {
            self.writer(&p, b)?;
        }
        // Append writers opened for rows only (an unaware bucket's) now compact: they need their vectors.
        for bw in self.writers.values_mut() {
            if let BucketFiles::Append(w) = &mut bw.writer {
                if !w.may_compact() {
                    w.set_vectors(self.table.append_dv_maintainer(self.base.as_ref(), &bw.partition, w.bucket())?);
                }
            }
        }
        if postpone {
            self.move_postponed_rows()?;
        }
        Ok(())
    }

    /// Replays the base snapshot's postponed files into real buckets and carries their removal.
    fn move_postponed_rows(&mut self) -> Result<()> {
        let Some(snapshot) = self.base.clone() else { return Ok(()) };
        let live: Vec<ManifestEntry> = self.live()?.values().flatten().cloned().collect();
        let files = crate::bucket::postpone::postponed_in_replay_order(&self.table, &snapshot, &live)?;
        let _span = tracing::info_span!("move_postponed_rows", files = files.len()).entered();
        let table = self.table.clone();
        let mut removed: BTreeMap<Vec<u8>, CommitMessage> = BTreeMap::new();
        for e in files {
            crate::bucket::postpone::read_postponed(&table, &e, &mut |values, kinds| self.write_rows(&values, &kinds))?;
            removed
                .entry(e.partition.serialize())
                .or_insert_with(|| CommitMessage {
                    partition: e.partition.clone(),
                    bucket: POSTPONE_BUCKET,
                    total_buckets: e.total_buckets,
                    ..Default::default()
                })
                .increment
                .compact
                .compact_before
                .push(e.file);
        }
        for m in removed.into_values() {
            self.carry(m);
        }
        Ok(())
    }

    /// Flushes, compacts and collects every bucket's changes (buckets in parallel). `full` adds a full
    /// compaction; `delete_ratio` rewrites files at least that deleted.
    pub fn prepare_commit_with(&mut self, full: bool, delete_ratio: Option<f64>) -> Result<Vec<CommitMessage>> {
        self.prepare(Prepare::Compaction { full, delete_ratio })
    }

    /// Flushes and collects every bucket's changes without waiting for background compactions of
    /// merge-on-read buckets (they land in a later commit): what a writer that commits again and again wants.
    pub fn prepare_commit(&mut self) -> Result<Vec<CommitMessage>> {
        self.prepare(Prepare::Commit)
    }

    /// Like [`prepare_commit`](Self::prepare_commit), but waits for compaction, so nothing is left running:
    /// what a batch job's last commit wants (Paimon's batch writers wait for compaction at commit too).
    pub fn prepare_commit_waiting(&mut self) -> Result<Vec<CommitMessage>> {
        self.prepare(Prepare::Waiting)
    }

    fn prepare(&mut self, how: Prepare) -> Result<Vec<CommitMessage>> {
        let _span = tracing::info_span!("prepare_commit", buckets = self.writers.len()).entered();
        self.observe_landed_hash_indexes()?;
        let results = self.prepare_buckets(how);
        // What buckets handed over is theirs no longer: keep it for the commit, even when another bucket
        // failed (then it waits for the next prepare, which retries the failed bucket).
        let mut first_error = None;
        for (messages, failed) in results {
            for m in messages {
                self.carry(m);
            }
            if let Some(e) = failed {
                first_error.get_or_insert(e);
            }
        }
        if let Err(e) = self.attach_hash_indexes() {
            first_error.get_or_insert(e);
        }
        if let Routing::Dynamic(d) = &mut self.routing {
            d.forget_idle_partitions();
        }
        if matches!(self.routing, Routing::Postpone(_)) {
            for m in self.carried.iter_mut() {
                crate::bucket::postpone::as_compaction(&self.table, m);
            }
        }
        self.append_writers_checked = false;
        match first_error {
            Some(e) => Err(e),
            None => Ok(std::mem::take(&mut self.carried)),
        }
    }

    /// Dynamic buckets: learns which hash index files handed over earlier have landed, so that the next new
    /// keys are checked against the snapshot they landed in.
    fn observe_landed_hash_indexes(&mut self) -> Result<()> {
        let Routing::Dynamic(d) = &mut self.routing else { return Ok(()) };
        if d.awaits_commits() {
            if let Some(s) = self.table.snapshot(None)? {
                d.observe(&self.table.index_files(&s)?);
            }
        }
        Ok(())
    }

    /// Dynamic buckets: every carried message of a bucket that gained key hashes gets the bucket's new hash
    /// index file, so that no commit adds a bucket's keys without its index listing them. A message that
    /// already had one (from a prepare that failed elsewhere) has it replaced; that file was never committed.
    fn attach_hash_indexes(&mut self) -> Result<()> {
        let Routing::Dynamic(d) = &mut self.routing else { return Ok(()) };
        let paths = self.table.path_factory().clone();
        for m in self.carried.iter_mut() {
            let Some((file, based_on)) =
                d.write_if_modified(&self.table, &m.partition, m.bucket, || paths.new_index_file_name())?
            else {
                continue;
            };
            let index_files = &mut m.increment.data.new_index_files;
            for old in index_files.iter().filter(|f| f.index_type == HASH_INDEX) {
                if let Err(e) = self.table.io().delete(&paths.index_path(&old.file_name)) {
                    tracing::warn!(file = old.file_name, error = %e, "cannot remove a replaced hash index file");
                }
            }
            index_files.retain(|f| f.index_type != HASH_INDEX);
            index_files.push(file);
            m.expected_hash_index.get_or_insert(based_on);
        }
        Ok(())
    }

    /// Every open bucket's increment as a message (buckets in parallel), with each chunk's first error.
    fn prepare_buckets(&mut self, how: Prepare) -> Vec<(Vec<CommitMessage>, Option<Error>)> {
        let paths = self.table.path_factory().clone();
        let mut writers: Vec<&mut BucketWriter> = self.writers.values_mut().collect();
        let threads = strata_io::cores().max(1);
        let chunk = writers.len().div_ceil(threads).max(1);
        // Each bucket's outcome on its own: one bucket failing must not lose what the others handed over.
        std::thread::scope(|s| {
            let handles: Vec<_> = writers
                .chunks_mut(chunk)
                .map(|group| {
                    let paths = paths.clone();
                    s.spawn(move || {
                        let mut out = Vec::new();
                        let mut failed = None;
                        for entry in group.iter_mut() {
                            let BucketWriter { partition, writer: w, total_buckets, .. } = &mut **entry;
                            let name = || paths.new_index_file_name();
                            let inc = w.prepare(how, name);
                            let inc = match inc {
                                Ok(inc) => inc,
                                Err(e) => {
                                    failed.get_or_insert(e);
                                    continue;
                                }
                            };
                            if !inc.is_empty() {
                                out.push(CommitMessage::new(partition.clone(), w.bucket(), *total_buckets, inc));
                            }
                        }
                        (out, failed)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| (Vec::new(), Some(Error::invalid("write", "a bucket writer panicked"))))
                })
                .collect()
        })
    }
}

impl TableWrite {
    /// Throws away messages that will never be committed (their commit was refused as a conflict, so no
    /// snapshot references them): removes the data, changelog and index files they added, best effort, and
    /// drops every bucket writer, since their state counted those files as committed. The next write starts
    /// from the latest snapshot.
    pub fn discard(&mut self, messages: &[CommitMessage]) {
        // What the latest snapshot references is never removed, whatever the messages say: a commit that
        // landed although its call failed, and whose snapshot expired before a retry, looks uncommitted. If
        // the snapshot cannot be read, nothing is removed (orphans at worst).
        let referenced = match self.referenced_names() {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the latest snapshot; keeping the files of a discarded commit");
                self.reset();
                return;
            }
        };
        for m in messages {
            let dir = match self.bucket_dir(&m.partition, m.bucket) {
                Ok(dir) => dir,
                Err(e) => {
                    tracing::warn!(bucket = m.bucket, error = %e, "cannot locate the files of a discarded commit");
                    continue;
                }
            };
            // A compaction output named in `compact_before` too is an upgrade: a committed file, not ours,
            // unless it is one of the message's new files moved up.
            let named = |v: &[strata_spec::DataFileMeta], f: &strata_spec::DataFileMeta| {
                v.iter().any(|b| b.file_name == f.file_name)
            };
            let (new, compact) = (&m.increment.data, &m.increment.compact);
            let ours = |f: &&strata_spec::DataFileMeta| !named(&compact.compact_before, f) || named(&new.new_files, f);
            let data = new
                .new_files
                .iter()
                .chain(&new.changelog_files)
                .chain(&compact.changelog_files)
                .chain(compact.compact_after.iter().filter(ours));
            let unreferenced = |name: &String| !referenced.contains(name);
            let mut paths: Vec<String> =
                data.map(|f| &f.file_name).filter(|n| unreferenced(n)).map(|n| strata_io::join(&dir, n)).collect();
            paths.extend(
                new.new_index_files
                    .iter()
                    .chain(&compact.new_index_files)
                    .filter(|f| unreferenced(&f.file_name))
                    .filter_map(|f| self.table.index_file_path(f).ok()),
            );
            for path in paths {
                if let Err(e) = self.table.io().delete(&path) {
                    tracing::warn!(path, error = %e, "cannot remove a file of a discarded commit");
                }
            }
        }
        self.reset();
    }

    /// Drops every bucket writer and what the dynamic-bucket assignment learnt: the next write starts from the
    /// latest snapshot.
    fn reset(&mut self) {
        self.writers.clear();
        self.live = None;
        self.base = None;
        self.base_index = None;
        if let Routing::Dynamic(d) = &mut self.routing {
            d.clear();
        }
    }

    /// Names of the data, changelog and index files the latest snapshot references.
    fn referenced_names(&self) -> Result<std::collections::HashSet<String>> {
        let mut names = std::collections::HashSet::new();
        if let Some(s) = self.table.snapshot(None)? {
            names.extend(self.table.live_files(&s)?.into_iter().map(|e| e.file.file_name));
            names.extend(self.table.changelog_files(&s)?.into_iter().map(|e| e.file.file_name));
            names.extend(self.table.index_files(&s)?.into_iter().map(|e| e.index_file.file_name));
        }
        Ok(names)
    }

    /// Keeps `m` for the commit; a bucket that already handed over a message (it prepared while another
    /// bucket failed) gets one message folding both, so that a file it added then and compacted since is
    /// neither deleted before it was ever committed nor left behind.
    fn carry(&mut self, m: CommitMessage) {
        let Some(earlier) = self.carried.iter_mut().find(|c| c.partition == m.partition && c.bucket == m.bucket) else {
            self.carried.push(m);
            return;
        };
        let (partition, bucket) = (m.partition.clone(), m.bucket);
        let dropped = earlier.absorb(m);
        let paths = self.table.path_factory().clone();
        let data_files: Vec<String> = match self.bucket_dir(&partition, bucket) {
            Ok(dir) => dropped.data_files.iter().map(|f| strata_io::join(&dir, f)).collect(),
            Err(e) => {
                tracing::warn!(bucket, error = %e, "cannot locate the bucket of files compacted away before their commit");
                Vec::new()
            }
        };
        let unreferenced = data_files.into_iter().chain(dropped.index_files.iter().map(|f| paths.index_path(f)));
        for path in unreferenced {
            // Best effort: a file left behind is an orphan, which `strata clean` removes.
            if let Err(e) = self.table.io().delete(&path) {
                tracing::warn!(path, error = %e, "cannot remove a file compacted away before its commit");
            }
        }
    }
}

impl std::fmt::Debug for TableWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWrite")
            .field("table", &self.table.path())
            .field("open_buckets", &self.writers.len())
            .finish()
    }
}

/// A value for a NOT NULL column of a delete row (its values are never read, only its key).
pub(crate) fn placeholder(t: &DataType) -> strata_spec::Datum {
    use strata_spec::{Datum as D, TypeRoot as R};
    match t.root {
        R::Boolean => D::Boolean(false),
        R::TinyInt => D::TinyInt(0),
        R::SmallInt => D::SmallInt(0),
        R::Int => D::Int(0),
        R::BigInt => D::BigInt(0),
        R::Float => D::Float(0.0),
        R::Double => D::Double(0.0),
        R::Decimal { .. } => D::Decimal(0),
        R::Char(_) | R::VarChar(_) => D::String(String::new()),
        R::Binary(_) | R::VarBinary(_) => D::Bytes(Vec::new()),
        R::Date => D::Date(0),
        R::Time(_) => D::Time(0),
        R::Timestamp(_) | R::LocalZonedTimestamp(_) => D::Timestamp { millis: 0, nanos: 0 },
    }
}
