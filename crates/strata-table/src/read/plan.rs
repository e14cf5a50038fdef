//! Planning a read: which files of a snapshot, grouped into splits how, with which deletion vectors.

use super::{bucket_filter, ReadBuilder};
use crate::table::DeletionFile;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use strata_format::{part_rows, parts_of, ColumnRange, KeyValueLayout, Predicate};
use strata_spec::{BinaryRow, DataFileMeta, DataType, ManifestEntry, Result, SimpleStats, Snapshot};

/// A unit of parallel reading.
#[derive(Debug, Clone)]
pub struct DataSplit {
    /// Partition of the files.
    pub partition: BinaryRow,
    /// Bucket of the files (raw splits may mix buckets; this is the first file's).
    pub bucket: i32,
    /// The files, with their paths.
    pub files: Vec<(String, DataFileMeta)>,
    /// Each file's deletion vector, if any (parallel to `files`).
    pub deletion_files: Vec<Option<DeletionFile>>,
    /// Read file by file without merging (deletion vectors applied), or merged.
    pub raw: bool,
    /// Of a raw split of one file: only the rows at these positions are read (a large file is read in parts
    /// by several threads, each fetching only its part's pages).
    pub rows: Option<std::ops::Range<u64>>,
    /// Of such a part: its rows that the file's deletion vector leaves (counted when planned).
    pub(crate) part_live_rows: Option<u64>,
}

impl DataSplit {
    /// Rows after deletion vectors, when known without reading (raw splits with recorded cardinalities).
    pub fn merged_row_count(&self) -> Option<u64> {
        if !self.raw {
            return None;
        }
        if self.rows.is_some() {
            return self.part_live_rows;
        }
        let mut n = 0u64;
        for ((_, f), df) in self.files.iter().zip(&self.deletion_files) {
            let deleted = match df {
                None => 0,
                Some(d) => u64::try_from(d.meta.cardinality?).ok()?,
            };
            n += (f.row_count.max(0) as u64).saturating_sub(deleted);
        }
        Some(n)
    }

    /// The bytes of files this split reads (a part of a file: its share of the file's size), for weighing
    /// splits against each other.
    pub fn weight(&self) -> i64 {
        let whole: i64 = self.files.iter().map(|(_, f)| f.file_size.max(1)).sum();
        match (&self.rows, self.files.first()) {
            (Some(part), Some((_, f))) if f.row_count > 0 => {
                let share = part.end.saturating_sub(part.start) as f64 / f.row_count as f64;
                ((whole as f64 * share) as i64).max(1)
            }
            _ => whole,
        }
    }
}

/// A planned read of one snapshot.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The snapshot.
    pub snapshot: Option<i64>,
    /// The splits.
    pub splits: Vec<DataSplit>,
}

fn stats_range(stats: &SimpleStats, types: &[DataType], i: usize, rows: i64) -> Option<ColumnRange> {
    let t = types.get(i)?.with_nullable(true);
    let nullable: Vec<DataType> = types.iter().map(|t| t.with_nullable(true)).collect();
    if stats.min_values.arity() != types.len() || stats.max_values.arity() != types.len() {
        return None;
    }
    let _ = t;
    Some(ColumnRange {
        min: stats.min_values.get(i, &nullable[i]).ok().flatten(),
        max: stats.max_values.get(i, &nullable[i]).ok().flatten(),
        null_count: stats.null_counts.as_ref().and_then(|n| n.get(i).copied().flatten()),
        row_count: rows,
    })
}

impl ReadBuilder {
    /// Raw splits reading `e`'s file in `parts` row ranges, each with its count of live rows (so that a
    /// count needs no read): the file's deletion vector is read here for that, one range read of its index
    /// file, as every part's read would.
    fn parts(&self, e: ManifestEntry, df: Option<DeletionFile>, parts: u64) -> Result<Vec<DataSplit>> {
        let path = self.table.data_file_path(&e)?;
        let rows = e.file.row_count.max(0) as u64;
        let dv = df.as_ref().map(|d| d.read(self.table.io().as_ref())).transpose()?;
        let mut out = Vec::with_capacity(parts as usize);
        for i in 0..parts {
            let range = part_rows(rows, i, parts);
            let deleted =
                dv.as_ref().map_or(0, |dv| dv.positions_from(range.start).take_while(|&p| p < range.end).count());
            out.push(DataSplit {
                partition: e.partition.clone(),
                bucket: e.bucket,
                files: vec![(path.clone(), e.file.clone())],
                deletion_files: vec![df.clone()],
                raw: true,
                part_live_rows: Some((range.end - range.start).saturating_sub(deleted as u64)),
                rows: Some(range),
            });
        }
        Ok(out)
    }

    /// Whether a file's manifest statistics allow a match of `pred`.
    pub(crate) fn file_may_match(&self, pred: &Predicate, e: &ManifestEntry, layout: &KeyValueLayout) -> bool {
        let f = &e.file;
        // Value statistics are the columns of the schema the file was written with: a column is found there
        // by field id, and only compared when stored as the type read (a widened column's old statistics
        // are of another type). Without that schema, nothing is pruned.
        let Ok(data) = layout.data_schema(f.schema_id) else { return true };
        let key_types: Vec<DataType> = layout.key_fields.iter().map(|k| k.data_type).collect();
        let value_cols: Vec<String> = match &f.value_stats_cols {
            None => data.fields.iter().map(|v| v.name.clone()).collect(),
            Some(c) => c.clone(),
        };
        let value_types: Vec<DataType> = value_cols
            .iter()
            .map(|c| data.fields.iter().find(|v| &v.name == c).map_or(DataType::bigint(), |v| v.data_type))
            .collect();
        let partition_fields = self.table.schema().partition_fields().unwrap_or_default();
        let partition_types: Vec<DataType> = partition_fields.iter().map(|p| p.data_type).collect();
        let partition_values = e.partition.to_datums(&partition_types).ok();
        pred.may_match(&|name: &str| {
            if let Some(i) = partition_fields.iter().position(|p| p.name == name) {
                let v = partition_values.as_ref()?.get(i)?.clone();
                return Some(ColumnRange {
                    min: v.clone(),
                    max: v.clone(),
                    null_count: Some(if v.is_none() { f.row_count } else { 0 }),
                    row_count: f.row_count,
                });
            }
            if let Some(i) = layout.key_fields.iter().position(|k| k.name == name) {
                return stats_range(&f.key_stats, &key_types, i, f.row_count);
            }
            let read = layout.value_fields.iter().find(|v| v.name == name)?;
            let stored = data.fields.iter().find(|d| d.id == read.id)?;
            if stored.data_type.root != read.data_type.root {
                return None;
            }
            let i = value_cols.iter().position(|c| *c == stored.name)?;
            stats_range(&f.value_stats, &value_types, i, f.row_count)
        })
    }

    /// The bucket-key hashes the filter pins, in a fixed-bucket table (dynamic and postpone tables place keys
    /// by their index or their writer, not by the hash).
    fn pinned_bucket_hashes(&self, table_buckets: i32) -> Option<Vec<i32>> {
        let filter = self.filter.as_ref().filter(|_| table_buckets > 0)?;
        let schema = self.table.schema();
        let keys = schema.bucket_keys();
        let types: Vec<DataType> =
            keys.iter().map(|k| schema.field(k).map(|f| f.data_type)).collect::<Result<_>>().ok()?;
        bucket_filter::pinned_bucket_hashes(filter, &keys, &types)
    }

    /// Plans the read: which files, grouped how, with which deletion vectors.
    pub fn plan(&self) -> Result<Plan> {
        if let Some(s) = &self.pinned {
            return self.plan_snapshot(s);
        }
        let Some(snapshot) = self.table.snapshot(self.snapshot)? else {
            return Ok(Plan { snapshot: None, splits: Vec::new() });
        };
        self.plan_snapshot(&snapshot)
    }

    fn plan_snapshot(&self, snapshot: &Snapshot) -> Result<Plan> {
        let _span = tracing::info_span!("plan", snapshot = snapshot.id).entered();
        let layout = self.layout()?;
        // An append table's files are all level 0 and are read as they are (deletion vectors applied).
        let append = layout.append;
        let raw_mode = self.raw_mode()?;
        let (deletion_files, live) = self.read_manifests(snapshot, append)?;
        let buckets = self.files_by_bucket(&live, &layout, raw_mode)?;
        let key_filter = self.key_filter();
        let deletion_file =
            |e: &ManifestEntry| deletion_files.get(&(e.partition.clone(), e.bucket, e.file.file_name.clone())).cloned();
        let mut raw_files: Vec<(ManifestEntry, Option<DeletionFile>)> = Vec::new();
        let mut splits = Vec::new();
        for (_, mut entries) in buckets {
            let raw_bucket =
                append || raw_mode && entries.iter().all(|e| e.file.level > 0 && e.file.delete_row_count == Some(0));
            if append {
                check_row_ranges(&entries)?;
                // Appended rows read in the order they were appended: a bucket's files by sequence (Paimon's
                // bucketed append reads sort them so), ties in the order their commits added them (a stable
                // sort of files listed in that order).
                entries.sort_by_key(|e| e.file.min_sequence_number);
            }
            if raw_bucket {
                let kept = entries
                    .into_iter()
                    .filter(|e| self.filter.as_ref().is_none_or(|p| self.file_may_match(p, e, &layout)));
                raw_files.extend(kept.map(|e| {
                    let df = deletion_file(&e);
                    (e, df)
                }));
                continue;
            }
            let kept: Vec<ManifestEntry> = match &key_filter {
                None => entries,
                Some(p) => entries.into_iter().filter(|e| self.file_may_match(p, e, &layout)).collect(),
            };
            let Some(first) = kept.first() else { continue };
            let mut split = DataSplit {
                partition: first.partition.clone(),
                bucket: first.bucket,
                files: Vec::new(),
                deletion_files: Vec::new(),
                raw: false,
                rows: None,
                part_live_rows: None,
            };
            for e in &kept {
                split.files.push((self.table.data_file_path(e)?, e.file.clone()));
                split.deletion_files.push(deletion_file(e));
            }
            splits.push(split);
        }
        splits.extend(self.pack_raw_files(raw_files)?);
        Ok(Plan { snapshot: Some(snapshot.id), splits })
    }

    /// The snapshot's deletion files by (partition, bucket, file) and its live files: the index manifest
    /// and the data manifests read side by side (each a request away on a store). An append table's files
    /// come in the order their commits added them (they break sequence ties).
    fn read_manifests(&self, snapshot: &Snapshot, append: bool) -> Result<(DeletionFiles, Arc<Vec<ManifestEntry>>)> {
        let (deletion_files, live) = std::thread::scope(|s| {
            let dvs = s.spawn(|| self.table.deletion_files(snapshot));
            let live = match append {
                true => self.table.manifest_store().and_then(|m| m.live_files_in_order(snapshot)).map(Arc::new),
                false => self.table.live_files_shared(snapshot),
            };
            (dvs.join(), live)
        });
        let deletion_files = deletion_files
            .map_err(|_| strata_spec::Error::invalid("plan", "reading the deletion vectors' index panicked"))??;
        Ok((deletion_files, live?))
    }

    /// The live files the read may need, by (partition, bucket): without the level-0 files a raw read or
    /// `skip_level0` leaves out (never an append table's: level 0 holds all its files), postponed files
    /// (bucket -2 stays unread until a compaction moves them into real buckets, as Paimon's batch scans of
    /// postpone-bucket tables), and buckets the read's bucket filter rules out.
    fn files_by_bucket(&self, live: &[ManifestEntry], layout: &KeyValueLayout, raw_mode: bool) -> Result<BucketFiles> {
        let skip_level0 = !layout.append && (raw_mode || self.skip_level0);
        let table_buckets = self.table.schema().core_options().bucket()?;
        let postpone = table_buckets == crate::bucket::mode::POSTPONE_BUCKET;
        let bucket_hashes = self.pinned_bucket_hashes(table_buckets);
        let mut buckets = BucketFiles::new();
        for e in live.iter().cloned() {
            layout.check_file(&e.file)?;
            if skip_level0 && e.file.level == 0 || postpone && e.bucket < 0 {
                continue;
            }
            if let Some(h) = &bucket_hashes {
                if !bucket_filter::bucket_may_match(h, e.bucket, e.total_buckets, table_buckets) {
                    continue;
                }
            }
            buckets.entry((e.partition.serialize(), e.bucket)).or_default().push(e);
        }
        Ok(buckets)
    }

    /// Raw files as splits: bin-packed by size across buckets (`source.split.target-size`,
    /// `open-file-cost`), with splits no larger than a quarter of an even share per core, so that the work
    /// queue balances files of very different sizes. With the target alone, a table of a few target sizes
    /// made as few splits, cut wherever the sizes fell: on 2 cores, a 230 MB table read as a 128 MB and a
    /// 100 MB split, one core idle for a quarter of the scan (and 6% larger files tipped it to 30% slower).
    fn pack_raw_files(&self, raw_files: Vec<(ManifestEntry, Option<DeletionFile>)>) -> Result<Vec<DataSplit>> {
        let options = self.table.schema().core_options();
        let open_cost = options.split_open_file_cost()? as i64;
        let total: i64 = raw_files.iter().map(|(e, _)| e.file.file_size.max(open_cost)).sum();
        let cores = strata_io::cores() as i64;
        let configured = options.split_target_size()? as i64;
        let target = configured.min((total + 4 * cores - 1) / (4 * cores)).max(1);
        let mut splits = Vec::new();
        let mut current: Option<DataSplit> = None;
        let mut weight = 0i64;
        for (e, df) in raw_files {
            let w = e.file.file_size.max(open_cost);
            let parts = parts_of(&e.file, w, target);
            if parts > 1 {
                // A file larger than a split is read in row ranges, so that one large file (a bucket compacted
                // into one) is still read by every core.
                splits.extend(self.parts(e, df, parts as u64)?);
                continue;
            }
            if current.as_ref().is_some_and(|_| weight + w > target) {
                splits.extend(current.take());
                weight = 0;
            }
            let path = self.table.data_file_path(&e)?;
            let split = current.get_or_insert_with(|| DataSplit {
                partition: e.partition.clone(),
                bucket: e.bucket,
                files: Vec::new(),
                deletion_files: Vec::new(),
                raw: true,
                rows: None,
                part_live_rows: None,
            });
            split.files.push((path, e.file));
            split.deletion_files.push(df);
            weight += w;
        }
        splits.extend(current);
        Ok(splits)
    }
}

/// A snapshot's deletion files by (partition, bucket, data file name).
type DeletionFiles = HashMap<(BinaryRow, i32, String), DeletionFile>;

/// Live files by (serialized partition, bucket).
type BucketFiles = BTreeMap<(Vec<u8>, i32), Vec<ManifestEntry>>;

/// Refuses a bucket of an append table whose files hold the same rows: Paimon's data-evolution tables update
/// rows by row id, writing files that cover rows other files hold (some of their columns, or all of them)
/// and that a reader must merge by row id. Read as they are, those rows would come twice, or fail on the
/// missing columns; Strata does not merge them yet. (Files of distinct row ids read as any append file.)
fn check_row_ranges(entries: &[ManifestEntry]) -> Result<()> {
    let refused = |file: &str, why: String| {
        strata_spec::Error::unsupported(format!(
            "data file {file} {why}: rows updated by row id (a data-evolution table), which Strata does not merge yet"
        ))
    };
    let mut ranges: Vec<(i64, i64, &str)> = entries
        .iter()
        .filter_map(|e| {
            e.file.first_row_id.map(|first| (first, first.saturating_add(e.file.row_count), e.file.file_name.as_str()))
        })
        .collect();
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        if let [(_, end, a), (start, _, b)] = pair {
            if start < end {
                return Err(refused(b, format!("holds rows of {a} (row ids from {start})")));
            }
        }
    }
    Ok(())
}
