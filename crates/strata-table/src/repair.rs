//! Restoring deletes that deletion vectors recorded on files no longer live (`strata repair`).
//!
//! A Paimon 1.4 writer that compacts keeps its bucket's vectors in memory; after another compactor rewrote
//! the bucket, its next commit marks rows of the file that compactor removed and commits that vector as the
//! bucket's whole index (docs/ARCHITECTURE.md, "Two engines compacting one bucket"). The rows it meant to
//! delete still live, under the same key and sequence number, in the file the compaction wrote, and read
//! again. As long as the removed file is on disk (snapshot expiration or orphan cleanup has not removed it),
//! the marks say which rows they were.
//!
//! The repair reads every deletion vector the retained snapshots hold for files that are not live in the
//! latest one, reads the key and sequence number of each marked row from the removed file, and marks every
//! live row of the same bucket with that key and sequence number. That is exact: a vector marks a row that
//! a newer version of its key (or a delete) supersedes, and a copy of the row, sequence number included, is
//! superseded by the same version. A compaction that read the removed file before the mark never copies a
//! row it had marked, so vectors of files compacted in order find nothing. The bucket's new index (orphans
//! dropped) is one COMPACT commit, checked like any other.

use arrow_array::{Array, Int64Array};
use arrow_row::{RowConverter, SortField};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use strata_dv::{read_all_deletion_vectors, BucketedDvMaintainer, DeletionVector};
use strata_format::{open_data_file, read_positions, DataFileRef, SEQUENCE_NUMBER};
use strata_spec::{
    BinaryRow, CommitIncrement, CommitKind, CommitMessage, CompactIncrement, DataFileMeta, DataType, DvIndexBase,
    Error, ErrorKind, FileKind, Result, Snapshot, DELETION_VECTORS_INDEX,
};

use crate::paths::partition_path;
use crate::table::Table;

/// What the repair found in one bucket for one file that is no longer live.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleVector {
    /// The bucket.
    pub bucket: i32,
    /// The partition, as Paimon's path names it.
    pub partition: String,
    /// The removed data file the vector names.
    pub data_file: String,
    /// Rows the vector marks.
    pub marked: u64,
    /// Live rows (same key and sequence number) now marked too: the deletes restored.
    pub restored: u64,
    /// Why the marked rows could not be looked at (the file is gone), if they could not.
    pub unreadable: Option<String>,
}

/// The repair's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairReport {
    /// Vectors of files that are not live, from every retained snapshot.
    pub stale_vectors: Vec<StaleVector>,
    /// Deletes restored in all.
    pub restored: u64,
    /// The snapshot the repair committed (`None` on a dry run or when nothing changed).
    pub snapshot: Option<i64>,
    /// Whether nothing was committed by request.
    pub dry_run: bool,
}

type BucketKey = (Vec<u8>, i32);

/// A data file of a bucket: (serialized partition, bucket, file name).
type FileKey = (Vec<u8>, i32, String);

/// Restores the deletes recorded on files that are no longer live (see the module docs) and drops orphan
/// vectors, committing as `commit_user` unless `dry_run`.
pub fn repair_deletion_vectors(table: &Table, commit_user: &str, dry_run: bool) -> Result<RepairReport> {
    let _span = tracing::info_span!("repair_deletion_vectors", path = table.path()).entered();
    let mut report = RepairReport { stale_vectors: Vec::new(), restored: 0, snapshot: None, dry_run };
    // Without deletion vectors (merge-on-read) no row is ever marked: nothing to restore.
    if !table.schema().core_options().deletion_vectors_enabled()? {
        return Ok(report);
    }
    let Some(latest) = table.snapshot(None)? else { return Ok(report) };
    let live = table.live_files(&latest)?;
    let mut buckets: HashMap<BucketKey, (BinaryRow, i32, Vec<DataFileMeta>)> = HashMap::new();
    for e in &live {
        let slot =
            buckets.entry((e.partition.serialize(), e.bucket)).or_insert_with(|| (e.partition.clone(), 0, vec![]));
        slot.1 = e.total_buckets;
        slot.2.push(e.file.clone());
    }
    let stale = stale_vectors(table, &latest, &buckets)?;
    let metas = removed_file_metas(table, &latest, &stale)?;
    let layout = table.layout()?;
    let (fields, options) = (table.schema().partition_fields()?, table.schema().core_options());
    let key_cols: Vec<(String, DataType)> =
        strata_format::file_columns(&layout)[..layout.key_fields.len() + 1].to_vec();
    let mut messages = Vec::new();
    let mut by_bucket: BTreeMap<BucketKey, Vec<(String, DeletionVector)>> = BTreeMap::new();
    for ((p, b, name), dv) in stale {
        by_bucket.entry((p, b)).or_default().push((name, dv));
    }
    for (key, vectors) in by_bucket {
        let Some((partition, total_buckets, files)) = buckets.get(&key) else { continue };
        let mut maintainer = table.dv_maintainer(Some(&latest), partition, key.1)?;
        let base = maintainer.current_index_file().map(|f| f.file_name.clone());
        let partition_name = partition_path(partition, &fields, options.partition_default_name())?;
        for (name, dv) in vectors {
            let mut found = StaleVector {
                bucket: key.1,
                partition: partition_name.clone(),
                data_file: name.clone(),
                marked: dv.cardinality(),
                restored: 0,
                unreadable: None,
            };
            let marked = match metas.get(&(key.0.clone(), key.1, name.clone())) {
                None => Err(Error::NotFound { path: format!("{name}: no retained snapshot lists it") }),
                Some(meta) => marked_rows(table, &layout, (partition, key.1), &key_cols, meta, &dv),
            };
            match marked {
                Ok(marked) => {
                    found.restored =
                        mark_copies(table, &layout, (partition, key.1), &key_cols, files, &marked, &mut maintainer)?
                }
                Err(e) if e.kind() == ErrorKind::NotFound => found.unreadable = Some(e.to_string()),
                Err(e) => return Err(e),
            }
            report.restored += found.restored;
            report.stale_vectors.push(found);
        }
        if dry_run || !maintainer.is_modified() {
            continue;
        }
        let index_dir = table.path_factory().index_dir();
        let Some(change) = maintainer.write_index_file(
            table.io().as_ref(),
            &index_dir,
            &table.path_factory().new_index_file_name(),
        )?
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
        messages.push(CommitMessage::new(partition.clone(), key.1, *total_buckets, increment));
    }
    if !messages.is_empty() {
        let c =
            crate::Committable { identifier: i64::MAX, messages, kind: Some(CommitKind::Compact), properties: None };
        report.snapshot = table.new_commit(commit_user)?.commit(&c)?.snapshot_id();
    }
    Ok(report)
}

/// Every vector the retained snapshots hold for a file not live in `latest`, by (partition, bucket, file),
/// merged over the snapshots (a file's vector only grows while it is listed).
fn stale_vectors(
    table: &Table,
    latest: &Snapshot,
    buckets: &HashMap<BucketKey, (BinaryRow, i32, Vec<DataFileMeta>)>,
) -> Result<BTreeMap<FileKey, DeletionVector>> {
    let live: HashSet<(Vec<u8>, i32, &str)> = buckets
        .iter()
        .flat_map(|((p, b), (_, _, files))| files.iter().map(move |f| (p.clone(), *b, f.file_name.as_str())))
        .collect();
    let sm = table.snapshot_manager();
    let earliest = sm.earliest_id()?.unwrap_or(latest.id);
    let manifests = table.manifest_store()?;
    let mut seen_index_files = HashSet::new();
    let mut out: BTreeMap<FileKey, DeletionVector> = BTreeMap::new();
    for id in earliest..=latest.id {
        let s = match sm.snapshot(id) {
            Ok(s) => s,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for e in manifests.index_entries(&s)? {
            if e.index_file.index_type != DELETION_VECTORS_INDEX
                || !seen_index_files.insert(e.index_file.file_name.clone())
            {
                continue;
            }
            let p = e.partition.serialize();
            let ranges: Vec<_> = e
                .index_file
                .dv_ranges
                .iter()
                .flatten()
                .filter(|m| !live.contains(&(p.clone(), e.bucket, m.data_file_name.as_str())))
                .cloned()
                .collect();
            if ranges.is_empty() {
                continue;
            }
            let path = table.index_file_path(&e.index_file)?;
            let vectors = match read_all_deletion_vectors(table.io().as_ref(), &path, &ranges) {
                Ok(v) => v,
                // An index file expiration removed: its snapshot goes with it.
                Err(err) if err.kind() == ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            };
            for (name, dv) in vectors {
                match out.entry((p.clone(), e.bucket, name)) {
                    std::collections::btree_map::Entry::Vacant(v) => {
                        v.insert(dv);
                    }
                    std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().merge(&dv)?,
                }
            }
        }
    }
    Ok(out)
}

/// The manifest entries of the removed files `stale` names, from the retained snapshots' deltas (the commit
/// that removed a file lists it whole).
fn removed_file_metas(
    table: &Table,
    latest: &Snapshot,
    stale: &BTreeMap<FileKey, DeletionVector>,
) -> Result<HashMap<FileKey, DataFileMeta>> {
    let mut out = HashMap::new();
    if stale.is_empty() {
        return Ok(out);
    }
    let sm = table.snapshot_manager();
    let manifests = table.manifest_store()?;
    let earliest = sm.earliest_id()?.unwrap_or(latest.id);
    for id in (earliest..=latest.id).rev() {
        let s = match sm.snapshot(id) {
            Ok(s) => s,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for meta in manifests.read_manifest_list_sized(&s.delta_manifest_list, s.delta_manifest_list_size)? {
            for e in manifests.read_manifest_of(&meta)? {
                let key = (e.partition.serialize(), e.bucket, e.file.file_name.clone());
                if stale.contains_key(&key) && (e.kind == FileKind::Delete || !out.contains_key(&key)) {
                    out.insert(key, e.file);
                }
            }
        }
        if out.len() == stale.len() {
            break;
        }
    }
    Ok(out)
}

/// A row's key (row-encoded) and sequence number.
type RowId = (Vec<u8>, i64);

fn converter(key_cols: &[(String, DataType)]) -> Result<RowConverter> {
    let fields = key_cols[..key_cols.len() - 1]
        .iter()
        .map(|(_, t)| SortField::new(strata_format::to_arrow(t)))
        .collect::<Vec<_>>();
    RowConverter::new(fields).map_err(|e| Error::invalid("repair", e.to_string()))
}

/// The key and sequence number of the rows `dv` marks in the removed file `meta`.
fn marked_rows(
    table: &Table,
    layout: &strata_format::KeyValueLayout,
    at: (&BinaryRow, i32),
    key_cols: &[(String, DataType)],
    meta: &DataFileMeta,
    dv: &DeletionVector,
) -> Result<HashSet<RowId>> {
    let positions: Vec<u64> = dv.positions().filter(|&p| p < meta.row_count.max(0) as u64).collect();
    let file = file_ref(table, layout, at, meta)?;
    let mut out = HashSet::new();
    let conv = converter(key_cols)?;
    for b in read_positions(table.io(), &file, key_cols.to_vec(), positions)? {
        let b = b?;
        let keys = conv
            .convert_columns(&b.columns()[..key_cols.len() - 1])
            .map_err(|e| Error::invalid("repair", e.to_string()))?;
        let seqs = sequence_numbers(&b, key_cols.len() - 1, &file.path)?;
        for r in 0..b.num_rows() {
            out.insert((keys.row(r).data().to_vec(), seqs.value(r)));
        }
    }
    Ok(out)
}

/// Marks, in `maintainer`, the rows of the live `files` whose key and sequence number `marked` holds;
/// returns how many were newly marked.
fn mark_copies(
    table: &Table,
    layout: &strata_format::KeyValueLayout,
    at: (&BinaryRow, i32),
    key_cols: &[(String, DataType)],
    files: &[DataFileMeta],
    marked: &HashSet<RowId>,
    maintainer: &mut BucketedDvMaintainer,
) -> Result<u64> {
    if marked.is_empty() {
        return Ok(0);
    }
    let conv = converter(key_cols)?;
    let mut restored = 0;
    for meta in files {
        let file = file_ref(table, layout, at, meta)?;
        for b in open_data_file(table.io().as_ref(), &file, key_cols.to_vec(), true, strata_format::DEFAULT_BATCH_SIZE)?
        {
            let b = b?;
            let keys = conv
                .convert_columns(&b.columns()[..key_cols.len() - 1])
                .map_err(|e| Error::invalid("repair", e.to_string()))?;
            let seqs = sequence_numbers(&b, key_cols.len() - 1, &file.path)?;
            let positions = b
                .column(b.num_columns() - 1)
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(|| Error::invalid("repair", "row positions missing"))?;
            for r in 0..b.num_rows() {
                if marked.contains(&(keys.row(r).data().to_vec(), seqs.value(r)))
                    && maintainer.notify_new_deletion(&meta.file_name, positions.value(r) as u64)?
                {
                    restored += 1;
                }
            }
        }
    }
    Ok(restored)
}

fn sequence_numbers<'a>(b: &'a arrow_array::RecordBatch, at: usize, path: &str) -> Result<&'a Int64Array> {
    b.column(at).as_any().downcast_ref::<Int64Array>().ok_or_else(|| Error::Corrupt {
        path: path.to_string(),
        message: format!("{SEQUENCE_NUMBER} is not a BIGINT column"),
    })
}

fn file_ref(
    table: &Table,
    layout: &strata_format::KeyValueLayout,
    (partition, bucket): (&BinaryRow, i32),
    meta: &DataFileMeta,
) -> Result<DataFileRef> {
    let entry = strata_spec::ManifestEntry {
        kind: FileKind::Add,
        partition: partition.clone(),
        bucket,
        total_buckets: 0,
        file: meta.clone(),
    };
    layout.file_ref(table.data_file_path(&entry)?, meta.clone(), None)
}
