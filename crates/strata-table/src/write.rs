//! Writing to a table: rows routed to (partition, bucket) writers with Paimon's bucket function, each a
//! merge-tree writer; `prepare_commit` turns their increments into commit messages, buckets in parallel.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use std::collections::BTreeMap;
use strata_format::arrow_types::{datum_at, normalize};
use strata_format::RowKind;
use strata_lsm::MergeTreeWriter;
use strata_spec::bucket::bucket_of;
use strata_spec::{BinaryRow, DataType, Error, ManifestEntry, Result, Snapshot};

use crate::commit::CommitMessage;
use crate::paths::partition_path;
use crate::table::Table;

/// The base snapshot's live files by (serialized partition, bucket).
type LiveByBucket = BTreeMap<(Vec<u8>, i32), Vec<ManifestEntry>>;

/// Writes rows into a table, for one commit at a time.
pub struct TableWrite {
    table: Table,
    base: Option<Snapshot>,
    live: Option<LiveByBucket>,
    writers: BTreeMap<(Vec<u8>, i32), (BinaryRow, MergeTreeWriter)>,
    /// Messages of buckets that prepared while another bucket failed: committed with the next prepare.
    carried: Vec<CommitMessage>,
    num_buckets: i32,
    partition_idx: Vec<usize>,
    partition_types: Vec<DataType>,
    bucket_idx: Vec<usize>,
    bucket_types: Vec<DataType>,
    rowkind_idx: Option<usize>,
    value_types: Vec<DataType>,
    /// The Arrow schema rows are conformed to (the table's columns).
    value_schema: arrow_schema::SchemaRef,
}

impl TableWrite {
    /// A writer on the table's latest snapshot.
    pub fn new(table: &Table) -> Result<Self> {
        let schema = table.schema();
        let options = schema.core_options();
        let num_buckets = options.bucket()?;
        if num_buckets <= 0 {
            return Err(Error::unsupported(format!(
                "writing bucket mode {num_buckets} (dynamic or postpone buckets); Strata writes fixed-bucket tables (bucket > 0)"
            )));
        }
        if schema.primary_keys.is_empty() {
            return Err(Error::unsupported("writing tables without a primary key"));
        }
        let producer = options.changelog_producer()?;
        use strata_spec::options::ChangelogProducer;
        if producer == ChangelogProducer::FullCompaction {
            // Writing without the changelog files such a table promises would silently starve its streaming
            // readers of these changes; refuse instead.
            return Err(Error::unsupported(format!(
                "writing a table with changelog-producer = {} (merge-engine {}): Strata produces changelog files for input and lookup, not full-compaction, so streaming readers would miss these changes (batch reads are unaffected)",
                options.get(strata_spec::options::CHANGELOG_PRODUCER).unwrap_or_default().trim(),
                options.get(strata_spec::options::MERGE_ENGINE).unwrap_or("deduplicate").trim()
            )));
        }
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
        let bucket_idx = idx(&schema.bucket_keys())?;
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
            live: None,
            writers: BTreeMap::new(),
            num_buckets,
            partition_types: partition_idx.iter().map(|&i| value_types[i]).collect(),
            bucket_types: bucket_idx.iter().map(|&i| value_types[i]).collect(),
            partition_idx,
            bucket_idx,
            rowkind_idx,
            value_types,
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

    fn writer(&mut self, partition: &BinaryRow, bucket: i32) -> Result<&mut MergeTreeWriter> {
        let key = (partition.serialize(), bucket);
        if !self.writers.contains_key(&key) {
            // A bucket writer starts from the latest snapshot, not from when this TableWrite was made: commits
            // (its own included) may have landed since, and expiration may have removed older snapshots.
            let latest = self.table.snapshot(None)?;
            if latest.as_ref().map(|s| s.id) != self.base.as_ref().map(|s| s.id) {
                self.base = latest;
                self.live = None;
            }
            let files: Vec<_> =
                self.live()?.get(&key).map(|v| v.iter().map(|e| e.file.clone()).collect()).unwrap_or_default();
            let bucket_dir = self.bucket_dir(partition, bucket)?;
            let schema = self.table.schema();
            let dv = if schema.core_options().deletion_vectors_enabled()? {
                Some(self.table.dv_maintainer(self.base.as_ref(), partition, bucket)?)
            } else {
                None
            };
            let w = MergeTreeWriter::new(
                self.table.io().clone(),
                schema,
                Some(self.table.schema_history()),
                bucket,
                bucket_dir,
                self.table.path_factory().index_dir(),
                files,
                dv,
            )?;
            self.writers.insert(key.clone(), (partition.clone(), w));
        }
        self.writers.get_mut(&key).map(|(_, w)| w).ok_or_else(|| Error::invalid("write", "writer vanished"))
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
        let schema = self.table.schema();
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields.len());
        for (f, t) in schema.fields.iter().zip(&self.value_types) {
            let col = match batch.column_by_name(&f.name) {
                Some(c) => normalize(c, t)?,
                None if t.nullable => {
                    arrow_array::new_null_array(&strata_format::arrow_types::to_arrow(t), batch.num_rows())
                }
                None => return Err(Error::invalid("rows", format!("column '{}' (NOT NULL) is missing", f.name))),
            };
            if !t.nullable && col.null_count() > 0 {
                return Err(Error::invalid(
                    "rows",
                    format!("column '{}' is NOT NULL but has {} nulls", f.name, col.null_count()),
                ));
            }
            cols.push(col);
        }
        RecordBatch::try_new(self.value_schema.clone(), cols).map_err(|e| Error::invalid("rows", e.to_string()))
    }

    /// Writes rows (every column of the table by name; nullable columns may be missing). Row kinds come from
    /// `rowkind.field` when the table sets it, else every row is an insert.
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let kinds = match self.rowkind_idx {
            None => vec![RowKind::Insert.to_byte(); batch.num_rows()],
            Some(i) => {
                let name = &self.table.schema().fields[i].name;
                let col = batch
                    .column_by_name(name)
                    .ok_or_else(|| Error::invalid("rows", format!("rowkind.field column '{name}' is missing")))?;
                let col = arrow_cast::cast(col, &arrow_schema::DataType::Utf8)
                    .map_err(|e| Error::invalid("rows", e.to_string()))?;
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

    /// Writes rows with explicit row kinds (`RowKind` bytes).
    pub fn write_with_kinds(&mut self, batch: &RecordBatch, kinds: &[i8]) -> Result<()> {
        if kinds.len() != batch.num_rows() {
            return Err(Error::invalid("rows", format!("{} kinds for {} rows", kinds.len(), batch.num_rows())));
        }
        let batch = self.conform(batch)?;
        let mut groups: BTreeMap<(Vec<u8>, i32), (BinaryRow, Vec<u32>)> = BTreeMap::new();
        if self.partition_idx.is_empty() && self.num_buckets == 1 {
            // One partition, one bucket: every row goes to the same writer, as it is.
            return self.writer(&BinaryRow::from_datums(&[], &[])?, 0)?.write(&batch, kinds);
        }
        for r in 0..batch.num_rows() {
            let part = self
                .partition_idx
                .iter()
                .map(|&i| datum_at(batch.column(i).as_ref(), r))
                .collect::<Result<Vec<_>>>()?;
            let partition = BinaryRow::from_datums(&part, &self.partition_types)?;
            let key =
                self.bucket_idx.iter().map(|&i| datum_at(batch.column(i).as_ref(), r)).collect::<Result<Vec<_>>>()?;
            let bucket = bucket_of(&key, &self.bucket_types, self.num_buckets)?;
            groups.entry((partition.serialize(), bucket)).or_insert_with(|| (partition, Vec::new())).1.push(r as u32);
        }
        for ((_, bucket), (partition, rows)) in groups {
            if rows.len() == batch.num_rows() {
                // Every row in one group, in order: no copy.
                self.writer(&partition, bucket)?.write(&batch, kinds)?;
                continue;
            }
            let idx = UInt32Array::from(rows.clone());
            let part = arrow_select::take::take_record_batch(&batch, &idx)
                .map_err(|e| Error::invalid("rows", e.to_string()))?;
            let k: Vec<i8> = rows.iter().map(|&r| kinds[r as usize]).collect();
            self.writer(&partition, bucket)?.write(&part, &k)?;
        }
        Ok(())
    }

    /// Opens a writer for each of `buckets` (partition, bucket), so a compaction reaches them.
    pub fn open_buckets(&mut self, buckets: &[(BinaryRow, i32)]) -> Result<()> {
        for (p, b) in buckets {
            self.writer(p, *b)?;
        }
        Ok(())
    }

    /// Opens a writer for every bucket that has files, so a compaction reaches all of them.
    pub fn open_all_buckets(&mut self) -> Result<()> {
        let keys: Vec<(BinaryRow, i32)> =
            self.live()?.values().filter_map(|v| v.first()).map(|e| (e.partition.clone(), e.bucket)).collect();
        for (p, b) in keys {
            self.writer(&p, b)?;
        }
        Ok(())
    }

    /// Flushes, compacts and collects every bucket's changes (buckets in parallel). `full` adds a full
    /// compaction; `delete_ratio` rewrites files at least that deleted.
    pub fn prepare_commit_with(&mut self, full: bool, delete_ratio: Option<f64>) -> Result<Vec<CommitMessage>> {
        self.prepare(full, delete_ratio, true)
    }

    /// Flushes and collects every bucket's changes without waiting for background compactions of
    /// merge-on-read buckets (they land in a later commit): what a writer that commits again and again wants.
    pub fn prepare_commit(&mut self) -> Result<Vec<CommitMessage>> {
        self.prepare(false, None, false)
    }

    /// Like [`prepare_commit`](Self::prepare_commit), but waits for compaction, so nothing is left running:
    /// what a batch job's last commit wants (Paimon's batch writers wait for compaction at commit too).
    pub fn prepare_commit_waiting(&mut self) -> Result<Vec<CommitMessage>> {
        self.prepare(false, None, true)
    }

    fn prepare(&mut self, full: bool, delete_ratio: Option<f64>, wait: bool) -> Result<Vec<CommitMessage>> {
        let _span = tracing::info_span!("prepare_commit", buckets = self.writers.len()).entered();
        let paths = self.table.path_factory().clone();
        let num_buckets = self.num_buckets;
        let mut writers: Vec<&mut (BinaryRow, MergeTreeWriter)> = self.writers.values_mut().collect();
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).max(1);
        let chunk = writers.len().div_ceil(threads).max(1);
        // Each bucket's outcome on its own: one bucket failing must not lose what the others handed over.
        let results: Vec<(Vec<CommitMessage>, Option<Error>)> = std::thread::scope(|s| {
            let handles: Vec<_> = writers
                .chunks_mut(chunk)
                .map(|group| {
                    let paths = paths.clone();
                    s.spawn(move || {
                        let mut out = Vec::new();
                        let mut failed = None;
                        for entry in group.iter_mut() {
                            let (partition, w) = &mut **entry;
                            let inc = if full || delete_ratio.is_some() {
                                w.prepare_commit_after(full, delete_ratio, || paths.new_index_file_name())
                            } else if wait {
                                w.prepare_commit_waiting(|| paths.new_index_file_name())
                            } else {
                                w.prepare_commit(|| paths.new_index_file_name())
                            };
                            let inc = match inc {
                                Ok(inc) => inc,
                                Err(e) => {
                                    failed.get_or_insert(e);
                                    continue;
                                }
                            };
                            if !inc.is_empty() {
                                out.push(CommitMessage {
                                    partition: partition.clone(),
                                    bucket: w.bucket(),
                                    total_buckets: num_buckets,
                                    new_files: inc.new_files,
                                    compact_before: inc.compact_before,
                                    compact_after: inc.compact_after,
                                    new_index_files: inc.new_index_files,
                                    deleted_index_files: Vec::new(),
                                    expected_dv_index: inc.dv_index_base,
                                    changelog_files: inc.changelog_files,
                                    compact_changelog_files: inc.compact_changelog_files,
                                    first_new_sequence: inc.first_new_sequence,
                                });
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
        });
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
        match first_error {
            Some(e) => Err(e),
            None => Ok(std::mem::take(&mut self.carried)),
        }
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
                self.writers.clear();
                self.live = None;
                self.base = None;
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
            let ours = |f: &&strata_spec::DataFileMeta| !named(&m.compact_before, f) || named(&m.new_files, f);
            let data = m
                .new_files
                .iter()
                .chain(&m.changelog_files)
                .chain(&m.compact_changelog_files)
                .chain(m.compact_after.iter().filter(ours));
            let unreferenced = |name: &String| !referenced.contains(name);
            let mut paths: Vec<String> =
                data.map(|f| &f.file_name).filter(|n| unreferenced(n)).map(|n| strata_io::join(&dir, n)).collect();
            paths.extend(
                m.new_index_files
                    .iter()
                    .filter(|f| unreferenced(&f.file_name))
                    .filter_map(|f| self.table.index_file_path(f).ok()),
            );
            for path in paths {
                if let Err(e) = self.table.io().delete(&path) {
                    tracing::warn!(path, error = %e, "cannot remove a file of a discarded commit");
                }
            }
        }
        self.writers.clear();
        self.live = None;
        self.base = None;
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

/// A key-value writer for programs embedding Strata: single rows (`put`, `delete`) and Arrow batches, then
/// `commit` (one snapshot per commit, identifiers increasing per writer so a restarted writer can tell
/// what landed).
pub struct TableWriter {
    write: TableWrite,
    commit_user: String,
    next_identifier: i64,
    rows: Vec<Vec<Option<strata_spec::Datum>>>,
    kinds: Vec<i8>,
    /// A commit that failed: its files are written and the bucket writers count them as committed, so it
    /// is committed again (under its identifier, so never twice) before anything else.
    pending: Option<crate::commit::Committable>,
}

impl TableWriter {
    /// A writer committing as `commit_user`; its identifiers continue after the user's last commit.
    pub fn new(table: &Table, commit_user: &str) -> Result<Self> {
        let committer = table.new_commit(commit_user)?;
        let next_identifier = committer.latest_identifier_of_user()?.map_or(1, |l| l.saturating_add(1));
        Ok(TableWriter {
            write: TableWrite::new(table)?,
            commit_user: commit_user.to_string(),
            next_identifier,
            rows: Vec::new(),
            pending: None,
            kinds: Vec::new(),
        })
    }

    /// The identifier the next commit gets (with the commit user, what identifies its snapshots).
    pub fn next_identifier(&self) -> i64 {
        self.next_identifier
    }

    fn push(&mut self, row: Vec<Option<strata_spec::Datum>>, kind: RowKind) -> Result<()> {
        let n = self.write.table().schema().fields.len();
        if row.len() != n {
            return Err(Error::invalid("row", format!("{} values for {n} columns", row.len())));
        }
        self.rows.push(row);
        self.kinds.push(kind.to_byte());
        if self.rows.len() >= 4096 {
            self.flush_rows()?;
        }
        Ok(())
    }

    /// Inserts or replaces a row (a value for every column, in schema order).
    pub fn put(&mut self, row: Vec<Option<strata_spec::Datum>>) -> Result<()> {
        self.push(row, RowKind::Insert)
    }

    /// Deletes the row whose primary key is `key` (values of the primary-key columns, in key order).
    pub fn delete(&mut self, key: Vec<Option<strata_spec::Datum>>) -> Result<()> {
        let schema = self.write.table().schema();
        if key.len() != schema.primary_keys.len() {
            return Err(Error::invalid(
                "key",
                format!("{} values for primary key {:?}", key.len(), schema.primary_keys),
            ));
        }
        let mut row = vec![None; schema.fields.len()];
        for (k, v) in schema.primary_keys.iter().zip(key) {
            let i = schema.fields.iter().position(|f| &f.name == k).ok_or_else(|| Error::invalid("key", k.clone()))?;
            row[i] = v;
        }
        // Non-null columns other than the key get a placeholder: a delete carries only its key.
        for (i, f) in schema.fields.iter().enumerate() {
            if row[i].is_none() && !f.data_type.nullable {
                row[i] = Some(placeholder(&f.data_type));
            }
        }
        self.push(row, RowKind::Delete)
    }

    fn flush_rows(&mut self) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let schema = self.write.table().schema().clone();
        let mut cols = Vec::with_capacity(schema.fields.len());
        for (i, f) in schema.fields.iter().enumerate() {
            let values: Vec<Option<strata_spec::Datum>> = self.rows.iter().map(|r| r[i].clone()).collect();
            cols.push(strata_format::arrow_types::array_of(&f.data_type, &values)?);
        }
        let batch = RecordBatch::try_new(self.write.value_schema().clone(), cols)
            .map_err(|e| Error::invalid("rows", e.to_string()))?;
        let kinds = std::mem::take(&mut self.kinds);
        self.rows.clear();
        self.write.write_with_kinds(&batch, &kinds)
    }

    /// Writes a batch of rows (row kinds from `rowkind.field`, else inserts).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.flush_rows()?;
        self.write.write_batch(batch)
    }

    /// Writes a batch with explicit row kinds.
    pub fn write_with_kinds(&mut self, batch: &RecordBatch, kinds: &[i8]) -> Result<()> {
        self.flush_rows()?;
        self.write.write_with_kinds(batch, kinds)
    }

    /// Flushes, compacts and commits everything written since the last commit; the new snapshot's id
    /// (`None` when there was nothing to commit). When a commit fails (an I/O error, say), calling `commit`
    /// again first retries it: the failed commit's rows are not lost, and never land twice.
    ///
    /// A [`Conflict`](strata_spec::ErrorKind::Conflict) is different: another commit changed a bucket this
    /// one touches in a way no retry of the same files can fix (it added rows that would otherwise shadow
    /// these, or compacted files this commit replaces). Nothing was committed, the commit's files are
    /// removed and the writer starts again from the latest snapshot: write everything written since the
    /// last successful commit again (rows still buffered are dropped too) and commit.
    pub fn commit(&mut self) -> Result<Option<i64>> {
        let retried = self.commit_pending()?;
        self.flush_rows()?;
        let messages = self.write.prepare_commit()?;
        let c = crate::commit::Committable { identifier: self.next_identifier, messages, kind: None, properties: None };
        Ok(self.commit_or_keep(c)?.or(retried))
    }

    /// Commits `c`; on failure keeps it for the next call to retry.
    fn commit_or_keep(&mut self, c: crate::commit::Committable) -> Result<Option<i64>> {
        match self.write.table().new_commit(&self.commit_user).and_then(|committer| committer.commit(&c)) {
            Ok(outcome) => {
                if outcome.snapshot_id().is_some() {
                    self.next_identifier += 1;
                }
                if let crate::commit::CommitOutcome::CompactionDropped(id) = outcome {
                    return Ok(self.compact_again(&c).or(Some(id)));
                }
                Ok(outcome.snapshot_id())
            }
            // A conflict never lands (the commit checks before it creates the snapshot, and looks for its own
            // identifier before giving up): its files are garbage, and the bucket writers' state is stale.
            Err(e) if e.kind() == strata_spec::ErrorKind::Conflict => {
                self.write.discard(&c.messages);
                // Everything since the last successful commit goes, rows still buffered included, so that
                // writing it all again neither loses nor doubles a row.
                self.rows.clear();
                self.kinds.clear();
                Err(e)
            }
            Err(e) => {
                self.pending = Some(c);
                Err(e)
            }
        }
    }

    /// After the compaction of `c` was dropped (its APPEND snapshot landed, its COMPACT half conflicted with
    /// another commit): its files are garbage and the bucket writers, which counted it as done, are stale.
    /// Discards them and compacts `c`'s buckets again from the latest snapshot, so the rows the APPEND
    /// snapshot left in level 0 reach deletion-vector readers (which skip level 0) now, not at some later
    /// commit. Best effort: the rows are committed either way, and a failed compaction is the next one's to
    /// do. Returns the new snapshot, if one was made.
    fn compact_again(&mut self, c: &crate::commit::Committable) -> Option<i64> {
        self.write.discard(&compaction_increments(c));
        let buckets: Vec<(BinaryRow, i32)> = c.messages.iter().map(|m| (m.partition.clone(), m.bucket)).collect();
        let compacted =
            self.write.open_buckets(&buckets).and_then(|()| self.write.prepare_commit_waiting()).and_then(|messages| {
                let again = crate::commit::Committable {
                    identifier: self.next_identifier,
                    messages,
                    kind: None,
                    properties: None,
                };
                self.commit_or_keep(again)
            });
        match compacted {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(error = %e, "compacting again after a dropped compaction failed; the next compaction takes the rows up");
                None
            }
        }
    }

    /// Retries a commit that failed earlier, unless it landed after all (its identifier is committed).
    fn commit_pending(&mut self) -> Result<Option<i64>> {
        let Some(c) = self.pending.take() else { return Ok(None) };
        let committer = match self.write.table().new_commit(&self.commit_user) {
            Ok(committer) => committer,
            Err(e) => {
                self.pending = Some(c);
                return Err(e);
            }
        };
        // Commits only the halves (APPEND, COMPACT) that did not land, so nothing lands twice.
        match committer.recommit(&c) {
            Ok(crate::commit::CommitOutcome::AlreadyCommitted(_)) => {
                // It landed although the call reported an error: nothing to do (its snapshot is not this
                // call's).
                self.next_identifier = self.next_identifier.max(c.identifier + 1);
                Ok(None)
            }
            Ok(crate::commit::CommitOutcome::CompactionDropped(id)) => {
                self.next_identifier = self.next_identifier.max(c.identifier + 1);
                Ok(self.compact_again(&c).or(Some(id)))
            }
            Ok(outcome) => {
                self.next_identifier = self.next_identifier.max(c.identifier + 1);
                Ok(outcome.snapshot_id())
            }
            Err(e) if e.kind() == strata_spec::ErrorKind::Conflict => {
                // Neither half landed (a landed APPEND half makes a conflicting compaction `CompactionDropped`).
                self.write.discard(&c.messages);
                self.rows.clear();
                self.kinds.clear();
                Err(e)
            }
            Err(e) => {
                self.pending = Some(c);
                Err(e)
            }
        }
    }

    /// A full compaction of every bucket, committed.
    pub fn compact(&mut self, full: bool) -> Result<Option<i64>> {
        self.commit_pending()?;
        self.flush_rows()?;
        self.write.open_all_buckets()?;
        let messages = self.write.prepare_commit_with(full, None)?;
        // Rows still buffered get their APPEND snapshot; the compaction its COMPACT one.
        let c = crate::commit::Committable { identifier: self.next_identifier, messages, kind: None, properties: None };
        self.commit_or_keep(c)
    }
}

impl Drop for TableWriter {
    /// A commit that failed and was never retried: if it did not land, remove its files (best effort), so
    /// that a writer giving up after a failure (a full disk, say) does not leave the disk full of orphans.
    fn drop(&mut self) {
        let Some(c) = self.pending.take() else { return };
        let landed =
            self.write.table().new_commit(&self.commit_user).and_then(|committer| committer.landed(c.identifier));
        // When it cannot be told what landed, nothing is removed (orphans at worst).
        if let Ok(landed) = landed {
            self.write.discard(&uncommitted_messages(&c, landed));
        }
    }
}

/// The compaction halves of `c`'s messages (what a dropped compaction leaves as garbage).
pub fn compaction_increments(c: &crate::commit::Committable) -> Vec<CommitMessage> {
    c.messages.iter().map(CommitMessage::compact_increment).collect()
}

/// The parts of `c` no snapshot holds, given which halves `landed`: what a commit given up on leaves to
/// remove.
pub fn uncommitted_messages(c: &crate::commit::Committable, landed: crate::commit::Landed) -> Vec<CommitMessage> {
    match c.kind {
        Some(kind) if landed.of(kind).is_some() => Vec::new(),
        Some(_) => c.messages.clone(),
        None => {
            let mut out = Vec::new();
            if landed.append.is_none() {
                out.extend(c.messages.iter().map(CommitMessage::data_increment));
            }
            if landed.compact.is_none() {
                out.extend(compaction_increments(c));
            }
            out
        }
    }
}

fn placeholder(t: &DataType) -> strata_spec::Datum {
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

impl std::fmt::Debug for TableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("write", &self.write)
            .field("commit_user", &self.commit_user)
            .field("next_identifier", &self.next_identifier)
            .field("pending_rows", &self.rows.len())
            .finish()
    }
}
