//! Postpone-bucket tables (`bucket = -2`): Paimon writers put rows in a `bucket-postpone` directory per
//! partition (bucket -2, `_TOTAL_BUCKETS` -2, level 0, rows in arrival order, each writer numbering its rows
//! from 0), and batch reads skip those files (Paimon's `FileStoreScan.onlyReadRealBuckets`). A compaction
//! moves them into real buckets: Strata replays the postponed rows, in the order they were committed, into
//! the partition's real bucket writers, which merge them with the table's merge engine under fresh sequence
//! numbers above the bucket's (what Paimon's `PostponeBucketCompactOperator` does: it writes the replayed rows
//! through an ordinary fixed-bucket writer), and the same commit removes the postponed files.
//!
//! The postponed files' own sequence numbers cannot order rows across files (every writer starts at 0), so
//! files are replayed by the snapshot that added them (commit order), then creation time and first sequence
//! number (a writer's files in the order it wrote them). Paimon orders by creation time alone, which
//! pypaimon records in whole seconds; a file whose adding snapshot has expired goes first, since it is older
//! than every file whose snapshot is still there.

use std::collections::{HashMap, HashSet};

use arrow_array::cast::AsArray;
use arrow_array::types::Int8Type;
use arrow_array::RecordBatch;
use strata_format::{FileRead, SEQUENCE_NUMBER, VALUE_KIND};
use strata_spec::{CoreOptions, DataType, Error, FileKind, ManifestEntry, Result, Snapshot, TypeRoot};

use crate::bucket::mode::POSTPONE_BUCKET;
use crate::table::Table;

/// Rows per batch when replaying a postponed file.
const REPLAY_BATCH_ROWS: usize = 4096;

/// The number of real buckets each partition (serialized) with postponed files gets, as Paimon's
/// `PostponeUtils` resolves it: what the partition's real buckets already record as `_TOTAL_BUCKETS`, else
/// `postpone.default-bucket-num`, else its postponed rows over `postpone.target-row-num-per-bucket` or its
/// postponed bytes over `postpone.target-size-per-bucket` (1 GB), rounded up.
pub(crate) fn bucket_counts(live: &[ManifestEntry], options: &CoreOptions) -> Result<HashMap<Vec<u8>, i32>> {
    let mut known: HashMap<Vec<u8>, i32> = HashMap::new();
    let mut postponed: HashMap<Vec<u8>, (i64, i64)> = HashMap::new();
    for e in live {
        let key = e.partition.serialize();
        if e.bucket == POSTPONE_BUCKET {
            let (rows, bytes) = postponed.entry(key).or_default();
            *rows += e.file.row_count;
            *bytes += e.file.file_size;
        } else if e.bucket >= 0 && e.total_buckets > 0 {
            match known.insert(key, e.total_buckets) {
                Some(n) if n != e.total_buckets => {
                    return Err(Error::unsupported(format!(
                        "a partition whose real buckets record {n} and {} buckets (a rescale in progress?)",
                        e.total_buckets
                    )))
                }
                _ => {}
            }
        }
    }
    let default = options.postpone_default_bucket_num()?;
    let per_rows = options.postpone_target_row_num_per_bucket()?;
    let per_bytes = options.postpone_target_size_per_bucket()? as i64;
    for (key, (rows, bytes)) in postponed {
        if known.contains_key(&key) {
            continue;
        }
        let n = match (default, per_rows) {
            (Some(n), _) => n,
            (None, Some(target)) => ceil_div(rows, target),
            (None, None) => ceil_div(bytes, per_bytes),
        };
        known.insert(key, n);
    }
    Ok(known)
}

/// Paimon's `computeBucketNum`: at least 1, `value` over `target` rounded up.
fn ceil_div(value: i64, target: i64) -> i32 {
    if value <= 0 || target <= 0 {
        return 1;
    }
    i32::try_from((value - 1) / target + 1).unwrap_or(i32::MAX)
}

/// The postponed files of `live` (the files of `snapshot`) in the order their rows must be replayed: by the
/// snapshot whose delta added them, then creation time, first sequence number and name.
pub(crate) fn postponed_in_replay_order(
    table: &Table,
    snapshot: &Snapshot,
    live: &[ManifestEntry],
) -> Result<Vec<ManifestEntry>> {
    let mut files: Vec<ManifestEntry> = live.iter().filter(|e| e.bucket == POSTPONE_BUCKET).cloned().collect();
    if files.is_empty() {
        return Ok(files);
    }
    let _span = tracing::info_span!("order_postponed_files", files = files.len()).entered();
    let mut missing: HashSet<String> = files.iter().map(|e| e.file.file_name.clone()).collect();
    let mut added_in: HashMap<String, i64> = HashMap::new();
    let manifests = table.manifest_store()?;
    let earliest = table.snapshot_manager().earliest_id()?.unwrap_or(1);
    // Newest first: the search ends as soon as every file's adding snapshot is found.
    for id in (earliest..=snapshot.id).rev() {
        if missing.is_empty() {
            break;
        }
        let s = match table.snapshot_manager().snapshot(id) {
            Ok(s) => s,
            // Expired while we looked: its files sort first, as the oldest.
            Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for meta in manifests.read_manifest_list_sized(&s.delta_manifest_list, s.delta_manifest_list_size)? {
            if meta.max_bucket.is_some_and(|b| b >= 0) && meta.min_bucket.is_some_and(|b| b >= 0) {
                continue;
            }
            for e in manifests.read_manifest_of(&meta)? {
                if e.kind == FileKind::Add && e.bucket == POSTPONE_BUCKET && missing.remove(&e.file.file_name) {
                    added_in.insert(e.file.file_name, id);
                }
            }
        }
    }
    files.sort_by_cached_key(|e| {
        (
            added_in.get(&e.file.file_name).copied().unwrap_or(0),
            e.file.creation_time.unwrap_or(0),
            e.file.min_sequence_number,
            e.file.file_name.clone(),
        )
    });
    Ok(files)
}

/// Reads a postponed file's rows in file order and hands each batch to `sink` as the table's columns with
/// their row kinds. Postponed rows are not sorted by key, so the manifest's min/max key (first and last row)
/// bounds nothing and the key columns are not read; the values hold the key columns anyway.
pub(crate) fn read_postponed(
    table: &Table,
    e: &ManifestEntry,
    sink: &mut dyn FnMut(RecordBatch, Vec<i8>) -> Result<()>,
) -> Result<()> {
    // Files written under an older schema read through the table's schema history, by field id.
    let layout = table.layout()?;
    let mut columns: Vec<(String, DataType)> = vec![
        (SEQUENCE_NUMBER.to_string(), DataType::not_null(TypeRoot::BigInt)),
        (VALUE_KIND.to_string(), DataType::not_null(TypeRoot::TinyInt)),
    ];
    columns.extend(layout.value_fields.iter().map(|f| (f.name.clone(), f.data_type)));
    let path = table.data_file_path(e)?;
    let _span = tracing::debug_span!("read_postponed", path, rows = e.file.row_count).entered();
    let file = layout.file_ref(path.clone(), e.file.clone(), None)?;
    for batch in FileRead::new(columns).batch_size(REPLAY_BATCH_ROWS).open(table.io(), &file)? {
        let batch = batch?;
        let kinds: Vec<i8> = batch
            .column(1)
            .as_primitive_opt::<Int8Type>()
            .ok_or_else(|| Error::corrupt_file(path.clone(), "_VALUE_KIND is not TINYINT"))?
            .values()
            .to_vec();
        let values = RecordBatch::try_new(layout.value_schema.clone(), batch.columns()[2..].to_vec())
            .map_err(|err| Error::corrupt_file(path.clone(), err.to_string()))?;
        sink(values, kinds)?;
    }
    Ok(())
}

/// Makes a postpone compaction's messages for real buckets compaction results, as Paimon's
/// `PostponeBucketCommittableRewriter` does ("compactor only produce compact snapshots"): the rows moved out of
/// the postponed files were already in an APPEND snapshot (the one that added those files, which streaming
/// readers follow), so an APPEND snapshot of them again would hand them to incremental readers twice. Files the
/// moved rows were flushed to become compaction outputs; those the same compaction already replaced are
/// nobody's and are removed (best effort: an orphan at worst).
pub(crate) fn as_compaction(table: &Table, m: &mut strata_spec::CommitMessage) {
    let inc = &mut m.increment;
    if m.bucket < 0 || inc.data.new_files.is_empty() && inc.data.changelog_files.is_empty() {
        return;
    }
    let replaced: HashSet<String> = inc.compact.compact_before.iter().map(|f| f.file_name.clone()).collect();
    let (intermediate, kept): (Vec<_>, Vec<_>) =
        std::mem::take(&mut inc.data.new_files).into_iter().partition(|f| replaced.contains(&f.file_name));
    inc.compact.compact_before.retain(|f| !intermediate.iter().any(|x| x.file_name == f.file_name));
    inc.compact.compact_after.extend(kept);
    inc.compact.changelog_files.append(&mut inc.data.changelog_files);
    inc.first_new_sequence = None;
    let fields = table.schema().partition_fields().unwrap_or_default();
    let default_name = table.schema().core_options().partition_default_name().to_string();
    let Ok(partition) = crate::meta::paths::partition_path(&m.partition, &fields, &default_name) else { return };
    let dir = table.path_factory().bucket_dir(&partition, m.bucket);
    // A file the compaction moved up a level unchanged is its own output, under the same name: it stays.
    let moved: HashSet<String> = inc.compact.compact_after.iter().map(|f| f.file_name.clone()).collect();
    for f in intermediate.into_iter().filter(|f| !moved.contains(&f.file_name)) {
        if let Err(e) = table.io().delete(&strata_io::join(&dir, &f.file_name)) {
            tracing::warn!(file = f.file_name, error = %e, "cannot remove a file a postpone compaction replaced");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use strata_spec::{BinaryRow, DataFileMeta, SimpleStats};

    fn entry(bucket: i32, total: i32, rows: i64, size: i64) -> ManifestEntry {
        named(bucket, total, rows, size, "f", None)
    }

    fn named(bucket: i32, total: i32, rows: i64, size: i64, name: &str, created: Option<i64>) -> ManifestEntry {
        let file = DataFileMeta {
            file_name: name.into(),
            file_size: size,
            row_count: rows,
            min_key: BinaryRow::empty(),
            max_key: BinaryRow::empty(),
            key_stats: SimpleStats::empty(),
            value_stats: SimpleStats::empty(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id: 0,
            level: 0,
            extra_files: vec![],
            creation_time: created,
            delete_row_count: None,
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            write_cols_sequences: None,
        };
        ManifestEntry { kind: FileKind::Add, partition: BinaryRow::empty(), bucket, total_buckets: total, file }
    }

    /// Commit order decides, not creation times (whole seconds in pypaimon, so often equal) nor names.
    #[test]
    fn postponed_files_replay_in_commit_order() {
        let io: std::sync::Arc<dyn strata_io::FileIO> = std::sync::Arc::new(strata_io::MemoryFileIO::new());
        let schema = strata_spec::TableSchema::new(
            vec![("id".into(), DataType::bigint())],
            vec![],
            vec!["id".into()],
            BTreeMap::from([("bucket".to_string(), "1".to_string())]),
            0,
        )
        .unwrap();
        let table = Table::create(io, "/t", schema).unwrap();
        // Committed c, b, a (names sort the other way); a's creation time is the earliest of all.
        for (i, (name, created)) in [("c", 5000), ("b", 5000), ("a", 1000)].into_iter().enumerate() {
            let e = named(POSTPONE_BUCKET, POSTPONE_BUCKET, 1, 1, name, Some(created));
            let data = strata_lsm::DataIncrement { new_files: vec![e.file], ..Default::default() };
            let message =
                strata_spec::CommitMessage::new(BinaryRow::empty(), POSTPONE_BUCKET, POSTPONE_BUCKET, data.into());
            let c =
                crate::commit::Committable { identifier: i as i64 + 1, messages: vec![message], ..Default::default() };
            table.new_commit("u").unwrap().commit(&c).unwrap();
        }
        let snapshot = table.snapshot(None).unwrap().unwrap();
        let live = table.live_files(&snapshot).unwrap();
        let order = postponed_in_replay_order(&table, &snapshot, &live).unwrap();
        let names: Vec<&str> = order.iter().map(|e| e.file.file_name.as_str()).collect();
        assert_eq!(names, ["c", "b", "a"]);
    }

    fn counts(live: &[ManifestEntry], options: &[(&str, &str)]) -> Option<i32> {
        let map: BTreeMap<String, String> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        bucket_counts(live, &CoreOptions::new(map)).unwrap().get(&BinaryRow::empty().serialize()).copied()
    }

    #[test]
    fn bucket_counts_follow_paimon() {
        let postponed = [entry(-2, -2, 10, 3 << 30)];
        // Known real buckets win; then the default; then rows; then bytes (1 GB per bucket).
        assert_eq!(
            counts(&[postponed[0].clone(), entry(1, 4, 1, 1)], &[("postpone.default-bucket-num", "2")]),
            Some(4)
        );
        assert_eq!(counts(&postponed, &[("postpone.default-bucket-num", "2")]), Some(2));
        assert_eq!(counts(&postponed, &[("postpone.target-row-num-per-bucket", "3")]), Some(4));
        assert_eq!(counts(&postponed, &[]), Some(3));
        assert_eq!(counts(&[entry(-2, -2, 0, 0)], &[]), Some(1));
        assert!(bucket_counts(&[entry(0, 2, 1, 1), entry(1, 3, 1, 1)], &CoreOptions::default()).is_err());
    }
}
