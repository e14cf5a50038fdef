//! Restoring deletes that two compactors lost (`strata repair`).
//!
//! A Paimon 1.4 writer that compacts keeps its bucket's vectors in memory; after another compactor rewrote
//! the bucket, its next commit marks rows of the files that compactor removed and commits its vectors as the
//! bucket's whole index (docs/ARCHITECTURE.md, "Two engines compacting one bucket"). Two kinds of marks are
//! lost then, and the retained snapshots still hold both:
//! - marks on live files that the other compactor's commits had made and the stale index left out: a live
//!   file's vector only grows, so every mark any retained index file listed for it is restored;
//! - marks the stale writer made on removed files, after their removal: the rows they mean still live, under
//!   the same key and sequence number, in the files the compaction wrote. Only the marks an index file
//!   committed at or after the file's removal added to what was listed while the file was live count (a
//!   compaction applies the marks it read, so those rows are gone); they are read from the removed file while
//!   it is on disk (expiration and orphan cleanup remove it), and the live rows of the bucket with the same
//!   key and sequence number are marked. A mark means a newer version of the key (or a delete) supersedes the
//!   row, so it supersedes a copy with the same sequence number too.
//!
//! Files removed before the earliest retained snapshot or by an overwrite are not looked at. The bucket's
//! new index (orphans dropped) is one COMPACT commit, under the same checks as any other.

mod history;

use std::collections::{HashMap, HashSet};

use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_row::{RowConverter, SortField};
use serde::Serialize;
use strata_dv::BucketedDvMaintainer;
use strata_format::{DataFileRef, FileRead, KeyValueLayout, SEQUENCE_NUMBER};
use strata_spec::{
    BinaryRow, CommitIncrement, CommitKind, CommitMessage, CompactIncrement, DataFileMeta, DataType, DvIndexBase,
    Error, ErrorKind, FileKind, ManifestEntry, Result,
};

use crate::meta::paths::partition_path;
use crate::table::Table;
use history::{added, FileKey, History};

/// What the repair found for one data file's vector.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LostDeletes {
    /// The partition, as its directory is named.
    pub partition: String,
    /// The bucket.
    pub bucket: i32,
    /// The data file the marks were made on.
    pub data_file: String,
    /// Whether that file is live (its own marks were dropped) or removed (marks made after its removal).
    pub live: bool,
    /// Marks lost.
    pub lost: u64,
    /// Live rows marked now.
    pub restored: u64,
    /// Why the marked rows could not be read (the removed file is gone), if they could not.
    pub unreadable: Option<String>,
}

/// The repair's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairReport {
    /// Every vector that lost marks.
    pub lost: Vec<LostDeletes>,
    /// Deletes restored in all.
    pub restored: u64,
    /// The snapshot the repair committed (`None` on a dry run or when nothing changed).
    pub snapshot: Option<i64>,
    /// Whether nothing was committed by request.
    pub dry_run: bool,
}

/// A live bucket: its partition, bucket count and files.
struct Bucket {
    partition: BinaryRow,
    bucket: i32,
    total_buckets: i32,
    files: Vec<DataFileMeta>,
}

/// Restores lost deletes (see the module docs) and drops orphan vectors, committing as `commit_user` unless
/// `dry_run`.
pub fn repair_deletion_vectors(table: &Table, commit_user: &str, dry_run: bool) -> Result<RepairReport> {
    let _span = tracing::info_span!("repair_deletion_vectors", path = table.path()).entered();
    let mut report = RepairReport { lost: Vec::new(), restored: 0, snapshot: None, dry_run };
    // Without deletion vectors (merge-on-read) no row is ever marked: nothing to restore.
    if !table.schema().core_options().deletion_vectors_enabled()? {
        return Ok(report);
    }
    let Some(latest) = table.snapshot(None)? else { return Ok(report) };
    let mut buckets: HashMap<(Vec<u8>, i32), Bucket> = HashMap::new();
    for e in table.live_files(&latest)? {
        let b = buckets.entry((e.partition.serialize(), e.bucket)).or_insert_with(|| Bucket {
            partition: e.partition.clone(),
            bucket: e.bucket,
            total_buckets: e.total_buckets,
            files: Vec::new(),
        });
        b.files.push(e.file);
    }
    let live: HashSet<FileKey> =
        buckets.iter().flat_map(|((p, b), k)| k.files.iter().map(|f| (p.clone(), *b, f.file_name.clone()))).collect();
    let history = history::read(table, &latest, &live)?;
    let mut messages = Vec::new();
    let mut keys: Vec<&(Vec<u8>, i32)> = buckets.keys().collect();
    keys.sort();
    for key in keys {
        let bucket = &buckets[key];
        let mut maintainer = table.dv_maintainer(Some(&latest), &bucket.partition, bucket.bucket)?;
        let base = maintainer.current_index_file().map(|f| f.file_name.clone());
        report.lost.extend(repair_bucket(table, &history, key, bucket, &mut maintainer)?);
        if dry_run || !maintainer.is_modified() {
            continue;
        }
        let paths = table.path_factory();
        let Some(change) =
            maintainer.write_index_file(table.io().as_ref(), &paths.index_dir(), &paths.new_index_file_name())?
        else {
            continue;
        };
        let compact = CompactIncrement {
            new_index_files: vec![change.new_file],
            deleted_index_files: change.old_file.into_iter().collect(),
            ..Default::default()
        };
        let increment =
            CommitIncrement { compact, dv_index_base: DvIndexBase::of(base.as_deref()), ..Default::default() };
        messages.push(CommitMessage::new(bucket.partition.clone(), bucket.bucket, bucket.total_buckets, increment));
    }
    report.restored = report.lost.iter().map(|l| l.restored).sum();
    if !messages.is_empty() {
        let c =
            crate::Committable { identifier: i64::MAX, messages, kind: Some(CommitKind::Compact), properties: None };
        report.snapshot = table.new_commit(commit_user)?.commit(&c)?.snapshot_id();
    }
    Ok(report)
}

/// Restores one bucket's lost marks into `maintainer`.
fn repair_bucket(
    table: &Table,
    history: &History,
    (p, b): &(Vec<u8>, i32),
    bucket: &Bucket,
    maintainer: &mut BucketedDvMaintainer,
) -> Result<Vec<LostDeletes>> {
    let schema = table.schema();
    let fields = schema.partition_fields()?;
    let partition = partition_path(&bucket.partition, &fields, schema.core_options().partition_default_name())?;
    let layout = table.layout()?;
    let key_cols: Vec<(String, DataType)> =
        strata_format::file_columns(&layout)[..layout.key_fields.len() + 1].to_vec();
    let mut out = Vec::new();
    let mut wanted: HashMap<RowId, usize> = HashMap::new();
    let mut names: Vec<&FileKey> = history.vectors.keys().filter(|(kp, kb, _)| kp == p && kb == b).collect();
    names.sort();
    for key in names {
        let h = &history.vectors[key];
        let live = bucket.files.iter().any(|f| f.file_name == key.2);
        let lost = match (live, &h.after_removal) {
            (true, _) => h.while_live.as_ref().map(|v| added(v, maintainer.deletion_vector_of(&key.2))),
            (false, Some(after)) => Some(added(after, h.while_live.as_ref())),
            (false, None) => None,
        };
        let Some(lost) = lost.filter(|l| !l.is_empty()) else { continue };
        let mut entry = LostDeletes {
            partition: partition.clone(),
            bucket: bucket.bucket,
            data_file: key.2.clone(),
            live,
            lost: lost.len() as u64,
            restored: 0,
            unreadable: None,
        };
        if live {
            for &position in &lost {
                entry.restored += u64::from(maintainer.notify_new_deletion(&key.2, position)?);
            }
        } else if let Some(removal) = history.removals.get(key) {
            let at = (&bucket.partition, bucket.bucket);
            match marked_rows(table, &layout, at, &key_cols, &removal.meta, lost) {
                Ok(rows) => wanted.extend(rows.into_iter().map(|id| (id, out.len()))),
                Err(e) if e.kind() == ErrorKind::NotFound => entry.unreadable = Some(e.to_string()),
                Err(e) => return Err(e),
            }
        }
        out.push(entry);
    }
    if !wanted.is_empty() {
        let at = (&bucket.partition, bucket.bucket);
        mark_copies(table, &layout, at, &key_cols, &bucket.files, &wanted, maintainer, &mut out)?;
    }
    Ok(out)
}

/// A row's key (row-encoded) and sequence number.
type RowId = (Vec<u8>, i64);

/// Reads rows' keys and sequence numbers from batches of the key columns, then the sequence number.
struct RowIds {
    conv: RowConverter,
    keys: usize,
}

impl RowIds {
    fn new(key_cols: &[(String, DataType)]) -> Result<Self> {
        let keys = key_cols.len() - 1;
        let fields = key_cols[..keys].iter().map(|(_, t)| SortField::new(strata_format::to_arrow(t))).collect();
        let conv = RowConverter::new(fields).map_err(|e| Error::internal_from("repair", e))?;
        Ok(RowIds { conv, keys })
    }

    fn of(&self, batch: &RecordBatch, path: &str) -> Result<Vec<RowId>> {
        let corrupt = |message: String| Error::corrupt_file(path.to_string(), message);
        if batch.num_columns() <= self.keys {
            return Err(corrupt(format!("{} columns read where {} were asked", batch.num_columns(), self.keys + 1)));
        }
        let keys =
            self.conv.convert_columns(&batch.columns()[..self.keys]).map_err(|e| Error::internal_from("repair", e))?;
        let seqs = batch
            .column(self.keys)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| corrupt(format!("{SEQUENCE_NUMBER} is not a BIGINT column")))?;
        Ok((0..batch.num_rows()).map(|r| (keys.row(r).data().to_vec(), seqs.value(r))).collect())
    }
}

/// The key and sequence number of the rows at `positions` of the removed file `meta`.
fn marked_rows(
    table: &Table,
    layout: &KeyValueLayout,
    at: (&BinaryRow, i32),
    key_cols: &[(String, DataType)],
    meta: &DataFileMeta,
    positions: Vec<u64>,
) -> Result<Vec<RowId>> {
    let rows = u64::try_from(meta.row_count).unwrap_or(0);
    let positions: Vec<u64> = positions.into_iter().filter(|&p| p < rows).collect();
    let file = file_ref(table, layout, at, meta)?;
    let ids = RowIds::new(key_cols)?;
    let mut out = Vec::new();
    for b in FileRead::new(key_cols.to_vec()).batch_size(1024).at_positions(positions).open(table.io(), &file)? {
        out.extend(ids.of(&b?, &file.path)?);
    }
    Ok(out)
}

/// Marks, in `maintainer`, the rows of the live `files` whose key and sequence number `wanted` holds, and
/// counts each in `restored` at the index `wanted` gives (the removed file the mark was made on).
#[allow(clippy::too_many_arguments)]
fn mark_copies(
    table: &Table,
    layout: &KeyValueLayout,
    at: (&BinaryRow, i32),
    key_cols: &[(String, DataType)],
    files: &[DataFileMeta],
    wanted: &HashMap<RowId, usize>,
    maintainer: &mut BucketedDvMaintainer,
    restored: &mut [LostDeletes],
) -> Result<()> {
    let ids = RowIds::new(key_cols)?;
    let (low, high) = wanted.keys().fold((i64::MAX, i64::MIN), |(l, h), (_, s)| (l.min(*s), h.max(*s)));
    for meta in files.iter().filter(|f| f.min_sequence_number <= high && f.max_sequence_number >= low) {
        let file = file_ref(table, layout, at, meta)?;
        for b in FileRead::new(key_cols.to_vec()).with_positions().open(table.io(), &file)? {
            let b = b?;
            let positions = b
                .column(b.num_columns() - 1)
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(|| Error::invalid("repair", "row positions missing"))?;
            for (r, id) in ids.of(&b, &file.path)?.iter().enumerate() {
                let Some(&entry) = wanted.get(id) else { continue };
                let position = u64::try_from(positions.value(r))
                    .map_err(|_| Error::invalid("repair", "a negative row position"))?;
                if maintainer.notify_new_deletion(&meta.file_name, position)? {
                    if let Some(e) = restored.get_mut(entry) {
                        e.restored += 1;
                    }
                }
            }
        }
    }
    Ok(())
}

fn file_ref(
    table: &Table,
    layout: &KeyValueLayout,
    (partition, bucket): (&BinaryRow, i32),
    meta: &DataFileMeta,
) -> Result<DataFileRef> {
    let entry = ManifestEntry {
        kind: FileKind::Add,
        partition: partition.clone(),
        bucket,
        total_buckets: 0,
        file: meta.clone(),
    };
    layout.file_ref(table.data_file_path(&entry)?, meta.clone(), None)
}
