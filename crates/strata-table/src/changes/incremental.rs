//! Incremental reads: what changed between two snapshots, `(start, end]`, as Paimon's incremental scans
//! return it (`IncrementalDeltaStartingScanner` under `incremental-between-scan-mode`, splits read as
//! streaming splits by `MergeFileSplitRead`'s no-merge reader).
//!
//! - **delta**: the new files (ADD entries of the delta manifest list) of every APPEND snapshot in the
//!   range. COMPACT snapshots only rewrite rows, and OVERWRITE snapshots are skipped as Paimon's incremental
//!   delta scan skips them (Paimon reads overwrites only in streaming reads with `streaming-read-overwrite`,
//!   which [`crate::changes::follow`] refuses). A commit that compacts its own write still has the write in its
//!   APPEND snapshot (see docs/ARCHITECTURE.md, "The commit").
//! - **changelog**: the changelog files (changelog manifest list) of every snapshot in the range but
//!   OVERWRITE ones, for tables with a `changelog-producer`.
//! - **auto** (Paimon's default): `incremental-between-scan-mode` if the table sets it, else changelog when
//!   `changelog-producer` is not `none`, else delta.
//!
//! Rows are not merged: each file is read as written, every row with its row kind in a leading `rowkind`
//! string column (`+I`, `-U`, `+U`, `-D`; Paimon's `$audit_log` convention), snapshot by snapshot in order,
//! so a key's changes come out in the order they were committed. Deletion vectors are not applied: a delta
//! is what was written, and a later compaction's vector on the same file does not undo that. Files written
//! under older schemas read through the table's schema history (by field id).
//!
//! A filter keeps the rows it matches. A retraction (`-U`, `-D`) of a delta or an `input` changelog holds
//! only what the writer gave (often just the key), so its value columns say nothing about the row it
//! retracts: it is kept when the filter's conditions on primary-key columns hold, the others taken as
//! unknown. `lookup` and `full-compaction` changelogs carry the full retracted row, which is filtered like
//! any other.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use strata_format::FileRead;
use strata_format::{KeyValueLayout, RowKind};
use strata_format::{Predicate, TypedPredicate};
use strata_spec::options::ChangelogProducer;
use strata_spec::CommitKind;
use strata_spec::{DataType, Error, ErrorKind, FileKind, ManifestEntry, Result, Snapshot};

use crate::read::ReadBuilder;
use crate::read::ScanResult;
use crate::table::Table;

/// The leading column of incremental and streaming reads: the row's kind as Paimon's short string.
pub(crate) const ROW_KIND_COLUMN: &str = "rowkind";

/// Paimon's option choosing what an incremental read returns.
pub(crate) const SCAN_MODE_OPTION: &str = "incremental-between-scan-mode";

/// What an incremental read returns (Paimon's `IncrementalBetweenScanMode`, without `diff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncrementalMode {
    /// The table's `incremental-between-scan-mode`, else changelog for tables with a changelog producer,
    /// else delta.
    #[default]
    Auto,
    /// New files of APPEND snapshots.
    Delta,
    /// Changelog files.
    Changelog,
}

/// Where an incremental read takes its rows from, once `auto` is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeSource {
    /// New files of APPEND snapshots.
    Delta,
    /// Changelog files.
    Changelog,
}

impl IncrementalMode {
    /// `auto`, `delta` or `changelog` (Paimon's `diff` is not supported).
    pub fn parse(s: &str) -> Result<IncrementalMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(IncrementalMode::Auto),
            "delta" => Ok(IncrementalMode::Delta),
            "changelog" => Ok(IncrementalMode::Changelog),
            "diff" => Err(Error::unsupported("incremental scan mode 'diff' (comparing two snapshots' data)")),
            other => Err(Error::invalid("incremental scan mode", format!("'{other}' is not auto, delta or changelog"))),
        }
    }

    /// What this mode reads in `table`. Changelog mode needs a changelog producer: without one there is no
    /// changelog, and an empty answer would look like "nothing changed".
    pub fn resolve(self, table: &Table) -> Result<ChangeSource> {
        let producer = table.schema().core_options().changelog_producer()?;
        let mode = match (self, table.options().get(SCAN_MODE_OPTION)) {
            (IncrementalMode::Auto, Some(v)) => {
                IncrementalMode::parse(v).map_err(|e| Error::invalid_from(format!("option '{SCAN_MODE_OPTION}'"), e))?
            }
            (m, _) => m,
        };
        match mode {
            IncrementalMode::Delta => Ok(ChangeSource::Delta),
            IncrementalMode::Auto if producer == ChangelogProducer::None => Ok(ChangeSource::Delta),
            IncrementalMode::Auto => Ok(ChangeSource::Changelog),
            IncrementalMode::Changelog if producer == ChangelogProducer::None => Err(Error::invalid(
                "changelog read",
                format!(
                    "{} has changelog-producer none, so it has no changelog; read its deltas instead",
                    table.path()
                ),
            )),
            IncrementalMode::Changelog => Ok(ChangeSource::Changelog),
        }
    }
}

/// The files one snapshot contributes to an incremental read.
#[derive(Debug, Clone)]
pub struct SnapshotChanges {
    /// The snapshot.
    pub snapshot: i64,
    /// Its commit kind.
    pub commit_kind: CommitKind,
    /// Its delta or changelog files (after pruning by the filter), in manifest order.
    pub files: Vec<ManifestEntry>,
}

/// A planned incremental read.
#[derive(Debug, Clone)]
pub struct IncrementalPlan {
    /// Exclusive start snapshot.
    pub start: i64,
    /// Inclusive end snapshot.
    pub end: i64,
    /// What is read.
    pub source: ChangeSource,
    /// The snapshots that contribute, in order (skipped ones are left out).
    pub snapshots: Vec<SnapshotChanges>,
}

/// An incremental read of the snapshots `(start, end]` (from [`ReadBuilder::incremental_between`]).
#[derive(Debug, Clone)]
pub struct IncrementalRead {
    rb: ReadBuilder,
    start: i64,
    end: i64,
    mode: IncrementalMode,
}

impl ReadBuilder {
    /// An incremental read of what snapshots `start` (exclusive) to `end` (inclusive) changed, with this
    /// builder's projection, filter and batch size (its snapshot and limit do not apply).
    pub fn incremental_between(&self, start: i64, end: i64) -> IncrementalRead {
        IncrementalRead { rb: self.clone(), start, end, mode: IncrementalMode::Auto }
    }
}

impl IncrementalRead {
    /// Reads deltas, changelogs, or what the table's options say (default).
    pub fn with_mode(mut self, mode: IncrementalMode) -> Self {
        self.mode = mode;
        self
    }

    /// The reader of changes this read uses.
    pub fn change_reader(&self) -> Result<ChangeReader> {
        ChangeReader::new(&self.rb, self.mode)
    }

    /// The schema of the batches: `rowkind`, then the projected columns.
    pub fn output_schema(&self) -> Result<SchemaRef> {
        Ok(self.change_reader()?.schema())
    }

    /// Checks the range and lists the contributing snapshots' files.
    pub fn plan(&self) -> Result<IncrementalPlan> {
        let reader = self.change_reader()?;
        let table = self.rb.table();
        let _span = tracing::info_span!("incremental_plan", start = self.start, end = self.end).entered();
        check_range(table, self.start, self.end)?;
        let mut snapshots = Vec::new();
        for id in self.start + 1..=self.end {
            let s = read_snapshot(table, id)?;
            if let Some(c) = reader.changes_of(&s).map_err(|e| expired_instead(table, id, e))? {
                snapshots.push(c);
            }
        }
        Ok(IncrementalPlan { start: self.start, end: self.end, source: reader.source(), snapshots })
    }

    /// Reads a plan's files, snapshot after snapshot.
    pub fn read_plan(&self, plan: &IncrementalPlan) -> Result<ScanResult> {
        let reader = self.change_reader()?;
        let mut batches = Vec::new();
        for c in &plan.snapshots {
            batches.extend(reader.read(c).map_err(|e| expired_instead(self.rb.table(), c.snapshot, e))?);
        }
        Ok(ScanResult { snapshot: Some(plan.end), schema: reader.schema(), batches })
    }

    /// Plans and reads.
    pub fn read(&self) -> Result<ScanResult> {
        self.read_plan(&self.plan()?)
    }
}

/// Checks an incremental range `(start, end]` as Paimon does: `start <= end`, `end` at most the latest
/// snapshot, and `start` at least the earliest snapshot minus one (the range starts after `start`, so that
/// one may be gone); an earlier start is a [`Error::SnapshotExpired`] naming the first missing snapshot.
pub(crate) fn check_range(table: &Table, start: i64, end: i64) -> Result<()> {
    let what = || format!("snapshot range ({start}, {end}]");
    if start < 0 {
        return Err(Error::invalid(what(), "the start is negative (0 reads from the first snapshot)"));
    }
    if end < start {
        return Err(Error::invalid(what(), format!("the end snapshot {end} is before the start snapshot {start}")));
    }
    let sm = table.snapshot_manager();
    let latest = sm.latest_id()?.unwrap_or(0);
    if end > latest {
        return Err(Error::invalid(
            what(),
            if latest == 0 {
                "the table has no snapshot yet".to_string()
            } else {
                format!("snapshot {end} does not exist yet (the latest is {latest})")
            },
        ));
    }
    if start == end {
        return Ok(());
    }
    let earliest = sm.earliest_id()?.unwrap_or(0);
    if start + 1 < earliest {
        return Err(Error::SnapshotExpired {
            table: table.path().to_string(),
            snapshot: start + 1,
            earliest: Some(earliest),
        });
    }
    Ok(())
}

/// Reads snapshot `id`, which a reader needs: a missing one older than the earliest snapshot has expired.
pub(crate) fn read_snapshot(table: &Table, id: i64) -> Result<Snapshot> {
    table.snapshot_manager().snapshot(id).map_err(|e| expired_instead(table, id, e))
}

/// `e`, or [`Error::SnapshotExpired`] when `e` is a missing file and snapshot `id` is gone: expiration
/// removed it (and then its files) while it was read.
pub(crate) fn expired_instead(table: &Table, id: i64, e: Error) -> Error {
    if e.kind() != ErrorKind::NotFound || matches!(e, Error::SnapshotExpired { .. }) {
        return e;
    }
    let sm = table.snapshot_manager();
    match (sm.snapshot_exists(id), sm.earliest_id()) {
        (Ok(false), Ok(earliest)) if earliest.is_none_or(|first| first > id) => {
            Error::SnapshotExpired { table: table.path().to_string(), snapshot: id, earliest }
        }
        _ => e,
    }
}

/// Reads the changes of single snapshots: which files a snapshot contributes and their rows with row kinds.
/// Shared by [`IncrementalRead`] and [`crate::changes::follow::StreamScan`].
#[derive(Debug)]
pub struct ChangeReader {
    rb: ReadBuilder,
    source: ChangeSource,
    layout: Arc<KeyValueLayout>,
    /// Value columns read: the projection, then the filter's extra columns (`_VALUE_KIND` is added).
    read_cols: Vec<(String, DataType)>,
    /// Number of projected columns (the first of `read_cols`).
    projected: usize,
    schema: SchemaRef,
    /// The filter for rows that carry their whole row.
    filter: Option<Predicate>,
    /// The filter for retractions, when they carry only what the writer gave: the filter's conditions on
    /// primary-key columns (`None`: keep them all).
    retraction_filter: Option<Predicate>,
    /// Whether retractions are whole rows too (`lookup` and `full-compaction` changelogs).
    whole_retractions: bool,
    /// What may prune files and row groups: a filter every kept row satisfies.
    prune: Option<Predicate>,
}

impl ChangeReader {
    /// The reader of `rb`'s table, projection and filter, reading what `mode` says.
    pub fn new(rb: &ReadBuilder, mode: IncrementalMode) -> Result<ChangeReader> {
        let table = rb.table();
        if table
            .schema()
            .core_options()
            .get("data-evolution.enabled")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        {
            // Such a table's APPEND snapshots also hold updates of rows it has (files re-covering their row
            // ids), which a delta read would give as new rows.
            return Err(Error::unsupported(
                "incremental and streaming reads of a table with data-evolution.enabled (rows updated by row id)",
            ));
        }
        let source = mode.resolve(table)?;
        let layout = Arc::new(table.layout()?);
        let projection = rb.projection_indices(&layout)?;
        let read_cols = crate::read::value_columns(&layout, &rb.read_indices(&layout)?);
        let mut fields = vec![Field::new(ROW_KIND_COLUMN, ArrowType::Utf8, false)];
        for &i in &projection {
            let f = layout.value_schema.field(i);
            if f.name() == ROW_KIND_COLUMN {
                return Err(Error::invalid(
                    format!("column '{ROW_KIND_COLUMN}'"),
                    "it clashes with the row-kind column of incremental reads; project it out",
                ));
            }
            fields.push(f.clone());
        }
        let producer = table.schema().core_options().changelog_producer()?;
        // An append table's rows are all inserts, each a whole row.
        let whole_retractions = layout.append
            || source == ChangeSource::Changelog
                && matches!(producer, ChangelogProducer::Lookup | ChangelogProducer::FullCompaction);
        let filter = rb.filter().cloned();
        let keys = &table.schema().primary_keys;
        let retraction_filter = filter.as_ref().and_then(|f| on_columns(f, keys));
        let prune = if whole_retractions { filter.clone() } else { retraction_filter.clone() };
        Ok(ChangeReader {
            rb: rb.clone(),
            source,
            layout,
            projected: projection.len(),
            read_cols,
            schema: Arc::new(Schema::new(fields)),
            filter,
            retraction_filter,
            whole_retractions,
            prune,
        })
    }

    /// What this reader reads.
    pub fn source(&self) -> ChangeSource {
        self.source
    }

    /// The schema of its batches: `rowkind`, then the projected columns.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The read builder (table, projection, filter) behind it.
    pub fn read_builder(&self) -> &ReadBuilder {
        &self.rb
    }

    /// Whether this reader reads anything of `s` (Paimon's `DeltaFollowUpScanner` / `ChangelogFollowUpScanner`
    /// choice, without OVERWRITE snapshots).
    pub fn reads(&self, s: &Snapshot) -> bool {
        match self.source {
            ChangeSource::Delta => s.commit_kind == CommitKind::Append,
            ChangeSource::Changelog => s.commit_kind != CommitKind::Overwrite && s.changelog_manifest_list.is_some(),
        }
    }

    /// The files `s` contributes, or `None` when this reader skips it.
    pub fn changes_of(&self, s: &Snapshot) -> Result<Option<SnapshotChanges>> {
        if !self.reads(s) {
            return Ok(None);
        }
        let _span = tracing::debug_span!("snapshot_changes", snapshot = s.id).entered();
        let table = self.rb.table();
        let entries = match self.source {
            ChangeSource::Delta => delta_files(table, s)?,
            ChangeSource::Changelog => {
                table.changelog_files(s)?.into_iter().filter(|e| e.kind == FileKind::Add).collect()
            }
        };
        for e in &entries {
            self.layout.check_file(&e.file)?;
        }
        let files = match &self.prune {
            None => entries,
            Some(p) => entries.into_iter().filter(|e| self.rb.file_may_match(p, e, &self.layout)).collect(),
        };
        Ok(Some(SnapshotChanges { snapshot: s.id, commit_kind: s.commit_kind, files }))
    }

    /// Reads the files of `changes` (in parallel, in order): their rows as written, with row kinds.
    pub fn read(&self, changes: &SnapshotChanges) -> Result<Vec<RecordBatch>> {
        let _span =
            tracing::info_span!("read_changes", snapshot = changes.snapshot, files = changes.files.len()).entered();
        let table = self.rb.table();
        let tasks: Vec<(String, &ManifestEntry)> =
            changes.files.iter().map(|e| Ok((table.data_file_path(e)?, e))).collect::<Result<_>>()?;
        crate::read::read_in_parallel(&tasks, || false, |(path, e)| self.read_file(path, e))
    }

    /// One file's rows (no deletion vector: a delta is what was written), filtered, with row kinds.
    fn read_file(&self, path: &str, e: &ManifestEntry) -> Result<Vec<RecordBatch>> {
        let file = self.layout.file_ref(path.to_string(), e.file.clone(), None)?;
        let mut cols = self.read_cols.clone();
        // An append table's files hold no kind column: every row is an insert.
        if !self.layout.append {
            cols.push((strata_format::VALUE_KIND.to_string(), DataType::not_null(strata_spec::TypeRoot::TinyInt)));
        }
        let prune: Option<TypedPredicate> = self.prune.as_ref().map(|p| {
            let types = self.rb.table().schema().fields.iter().map(|f| (f.name.clone(), f.data_type)).collect();
            Arc::new((p.clone(), types))
        });
        let batches =
            FileRead::new(cols).batch_size(self.rb.batch_size()).prune(prune).open(self.rb.table().io(), &file)?;
        let mut out = Vec::new();
        for b in batches {
            out.push(self.finish(&b?).map_err(|err| err.in_file(path))?);
        }
        Ok(out)
    }

    /// A decoded batch (read columns, then `_VALUE_KIND`) as output: filtered, `rowkind` first, projected.
    fn finish(&self, b: &RecordBatch) -> Result<RecordBatch> {
        let n = self.read_cols.len();
        let inserts;
        let kinds: &[i8] = if self.layout.append {
            inserts = vec![RowKind::Insert.to_byte(); b.num_rows()];
            &inserts
        } else {
            b.column(n)
                .as_primitive_opt::<Int8Type>()
                .ok_or_else(|| Error::corrupt("its _VALUE_KIND column is not TINYINT"))?
                .values()
        };
        let mut names = Vec::with_capacity(b.num_rows());
        for k in kinds.iter() {
            names.push(row_kind_name(RowKind::from_byte(*k)?));
        }
        let values = b.project(&(0..n).collect::<Vec<_>>()).map_err(|e| Error::internal_from("read", e))?;
        let mut columns: Vec<ArrayRef> = vec![Arc::new(StringArray::from(names))];
        columns.extend(values.columns()[..self.projected].iter().cloned());
        let out = RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| Error::internal_from("read", e))?;
        match self.keep_mask(&values, kinds)? {
            None => Ok(out),
            Some(mask) => {
                arrow_select::filter::filter_record_batch(&out, &mask).map_err(|e| Error::internal_from("filter", e))
            }
        }
    }

    /// Which rows of `values` (with kinds `kinds`) the filter keeps; `None` without a filter.
    fn keep_mask(&self, values: &RecordBatch, kinds: &[i8]) -> Result<Option<BooleanArray>> {
        let Some(filter) = &self.filter else { return Ok(None) };
        let fields = &self.rb.table().schema().fields;
        let types_of = |name: &str| fields.iter().find(|f| f.name == name).map(|f| f.data_type);
        let whole = filter.evaluate(values, &types_of)?;
        if self.whole_retractions || !kinds.iter().any(|k| RowKind::byte_is_retract(*k)) {
            return Ok(Some(whole));
        }
        let retraction = match &self.retraction_filter {
            Some(p) => Some(p.evaluate(values, &types_of)?),
            None => None,
        };
        let holds = |m: &BooleanArray, i: usize| m.is_valid(i) && m.value(i);
        Ok(Some(
            kinds
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    Some(if RowKind::byte_is_retract(*k) {
                        retraction.as_ref().is_none_or(|m| holds(m, i))
                    } else {
                        holds(&whole, i)
                    })
                })
                .collect(),
        ))
    }

    /// `batch` (projected columns, as a [`ReadBuilder`] returns them) with a leading `rowkind` of `kind`.
    pub fn with_row_kind(&self, batch: &RecordBatch, kind: RowKind) -> Result<RecordBatch> {
        let kinds: ArrayRef = Arc::new(StringArray::from(vec![row_kind_name(kind); batch.num_rows()]));
        let mut columns = vec![kinds];
        columns.extend(batch.columns().iter().cloned());
        RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| Error::internal_from("read", e))
    }
}

/// Paimon's short string of a row kind.
pub(crate) fn row_kind_name(kind: RowKind) -> &'static str {
    match kind {
        RowKind::Insert => "+I",
        RowKind::UpdateBefore => "-U",
        RowKind::UpdateAfter => "+U",
        RowKind::Delete => "-D",
    }
}

/// The new files of `s`: the ADD entries of its delta manifest list, less files the same delta deletes
/// (Paimon merges a delta's entries before reading it).
fn delta_files(table: &Table, s: &Snapshot) -> Result<Vec<ManifestEntry>> {
    let store = table.manifest_store()?;
    let mut entries = Vec::new();
    for m in store.read_manifest_list_sized(&s.delta_manifest_list, s.delta_manifest_list_size)? {
        entries.extend(store.read_manifest_of(&m)?);
    }
    let deleted: std::collections::HashSet<_> =
        entries.iter().filter(|e| e.kind == FileKind::Delete).map(|e| e.identifier()).collect();
    Ok(entries.into_iter().filter(|e| e.kind == FileKind::Add && !deleted.contains(&e.identifier())).collect())
}

/// The part of `p` that reads only `columns`, the rest taken as unknown (true): every row `p` keeps, this
/// keeps too. `None` when nothing of `p` is left (keep everything).
fn on_columns(p: &Predicate, columns: &[String]) -> Option<Predicate> {
    match p {
        Predicate::And(ps) => {
            let kept: Vec<Predicate> = ps.iter().filter_map(|c| on_columns(c, columns)).collect();
            match kept.len() {
                0 => None,
                1 => kept.into_iter().next(),
                _ => Some(Predicate::And(kept)),
            }
        }
        // One unknown branch makes the whole disjunction unknown.
        Predicate::Or(ps) => ps.iter().map(|c| on_columns(c, columns)).collect::<Option<Vec<_>>>().map(Predicate::Or),
        leaf => leaf.columns().iter().all(|c| columns.contains(c)).then(|| leaf.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_spec::Datum;

    #[test]
    fn retraction_filter_keeps_only_key_conditions() {
        let keys = vec!["id".to_string(), "p".to_string()];
        let id = Predicate::cmp("id", strata_format::CmpOp::Gt, Datum::BigInt(3));
        let v = Predicate::eq("v", Datum::BigInt(1));
        let p = Predicate::eq("p", Datum::String("a".into()));
        assert_eq!(on_columns(&Predicate::And(vec![id.clone(), v.clone()]), &keys), Some(id.clone()));
        assert_eq!(on_columns(&v, &keys), None);
        assert_eq!(on_columns(&Predicate::Or(vec![id.clone(), v.clone()]), &keys), None);
        assert_eq!(
            on_columns(&Predicate::Or(vec![id.clone(), p.clone()]), &keys),
            Some(Predicate::Or(vec![id.clone(), p.clone()]))
        );
        let nested = Predicate::And(vec![Predicate::Or(vec![id.clone(), v.clone()]), p.clone(), v]);
        assert_eq!(on_columns(&nested, &keys), Some(p));
    }
}
