//! Which files of an append table a compaction rewrites: pure functions over file metadata, run elsewhere
//! (`crate::append`).
//!
//! A fixed bucket keeps its rows in sequence order, so its picks are runs of consecutive files by sequence
//! number (Paimon's `BucketedAppendCompactManager`: `pickCompactBefore` after writes, `FullCompactTask` when
//! asked). An unaware bucket has no order to keep: a partition's small files are packed into groups by size
//! (Paimon's `AppendCompactCoordinator`), and files with deletion vectors are grouped by the index file
//! holding their vectors, so that one compaction replaces each index file it touches.

use std::collections::BTreeMap;
use std::ops::Range;

use strata_spec::{DataFileMeta, Error, Result, TableSchema};

/// A full compaction of a fixed bucket without deletion vectors leaves fewer files than this alone.
const FULL_COMPACT_MIN_FILES: usize = 3;

/// The options of append-table compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendCompactOptions {
    /// `compaction.min.file-num` (default 5).
    pub min_file_num: usize,
    /// `target-file-size` (default 256 MB for append tables).
    pub target_file_size: u64,
    /// Files from 70% of the target size count as compacted (Paimon's `compactionFileSize`).
    pub compaction_file_size: u64,
    /// `source.split.open-file-cost`: what each file adds when packing (default 4 MB).
    pub open_file_cost: u64,
    /// `compaction.delete-ratio-threshold` (default 0.2 for append tables): a file with more of its rows
    /// deleted is rewritten even when it is large.
    pub delete_ratio: f64,
    /// `compaction.force-rewrite-all-files`.
    pub force_rewrite_all: bool,
}

impl AppendCompactOptions {
    /// The options of `schema` (an append table).
    pub fn from_schema(schema: &TableSchema) -> Result<Self> {
        let o = schema.core_options();
        let target_file_size = append_target_file_size(schema)?;
        let min_file_num = match o.parsed::<usize>("compaction.min.file-num")? {
            None => 5,
            Some(n) if n >= 1 => n,
            Some(n) => {
                return Err(Error::invalid(
                    "option 'compaction.min.file-num'",
                    format!("'{n}' is not a positive count"),
                ))
            }
        };
        let delete_ratio = match o.get(strata_spec::options::COMPACTION_DELETE_RATIO_THRESHOLD) {
            None => 0.2,
            Some(_) => o.delete_ratio_threshold()?,
        };
        let force_rewrite_all = o.bool_opt("compaction.force-rewrite-all-files", false)?;
        Ok(AppendCompactOptions {
            min_file_num,
            target_file_size,
            compaction_file_size: target_file_size / 10 * 7,
            open_file_cost: o.split_open_file_cost()?,
            delete_ratio,
            force_rewrite_all,
        })
    }
}

/// `target-file-size` of an append table: Paimon's default is 256 MB there (128 MB with a primary key).
pub(crate) fn append_target_file_size(schema: &TableSchema) -> Result<u64> {
    let o = schema.core_options();
    match o.get(strata_spec::options::TARGET_FILE_SIZE) {
        None => Ok(256 << 20),
        Some(_) => o.target_file_size(),
    }
}

fn size(f: &DataFileMeta) -> u64 {
    u64::try_from(f.file_size).unwrap_or(0)
}

/// After a write (Paimon's `pickCompactBefore`): the first window of consecutive files (`files` in sequence
/// order) that reaches `min_file_num` files (at least two) while holding less than twice the target size; a window that
/// grows past that size drops its oldest file.
pub fn pick_after_write(files: &[DataFileMeta], opts: &AppendCompactOptions) -> Option<Range<usize>> {
    let (mut start, mut total) = (0usize, 0u64);
    // (A window of one file would rewrite it as it is: at least two.)
    let min = opts.min_file_num.max(2);
    for (end, f) in files.iter().enumerate() {
        total += size(f);
        if end + 1 - start >= min {
            return Some(start..end + 1);
        }
        if total >= opts.target_file_size.saturating_mul(2) {
            total -= size(&files[start]);
            start += 1;
        }
    }
    None
}

/// A full compaction of a fixed bucket (Paimon's `FullCompactTask`; `files` in sequence order): leading
/// files already at the compacted size stay unless they carry deletions; with deletion vectors the rest is
/// rewritten, otherwise only when small files outnumber large ones among at least three.
pub fn pick_full(
    files: &[DataFileMeta],
    opts: &AppendCompactOptions,
    dv_mode: bool,
    has_deletions: impl Fn(&DataFileMeta) -> bool,
) -> Option<Range<usize>> {
    if files.is_empty() || (!opts.force_rewrite_all && !dv_mode && files.len() < FULL_COMPACT_MIN_FILES) {
        return None;
    }
    let start = if opts.force_rewrite_all {
        0
    } else {
        files.iter().position(|f| size(f) < opts.compaction_file_size || has_deletions(f)).unwrap_or(files.len())
    };
    let rest = &files[start..];
    if rest.is_empty() {
        return None;
    }
    if opts.force_rewrite_all {
        return Some(start..files.len());
    }
    if dv_mode {
        // (Paimon rewrites even one clean file; that changes nothing and would repeat on every full compaction.)
        let pointless = rest.len() == 1 && !has_deletions(&rest[0]);
        return (!pointless).then_some(start..files.len());
    }
    let big = rest.iter().filter(|f| size(f) >= opts.compaction_file_size).count();
    let small = rest.len() - big;
    (small > big && rest.len() >= FULL_COMPACT_MIN_FILES).then_some(start..files.len())
}

/// What an unaware partition's packing needs to know of a file's deletion vector.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDeletions {
    /// The index file holding the vector.
    pub index_file: String,
    /// Rows it deletes (`None` when the index manifest does not say).
    pub cardinality: Option<u64>,
}

/// The compactions of an unaware bucket's partition (Paimon's `AppendCompactCoordinator`, one batch plan):
/// files below the compacted size, or deleted past the delete ratio, packed smallest first into groups of
/// at least two files and twice the target size; what is left forms one more group if it has
/// `min_file_num` files. With deletion vectors, files holding one are grouped by their index file, and each
/// such group is compacted (their vectors must go), packed together while small.
pub fn pack_unaware(
    files: &[DataFileMeta],
    opts: &AppendCompactOptions,
    dv_mode: bool,
    deletions: impl Fn(&DataFileMeta) -> Option<FileDeletions>,
) -> Vec<Vec<DataFileMeta>> {
    let too_deleted = |f: &DataFileMeta, d: &Option<FileDeletions>| match d {
        Some(FileDeletions { cardinality: None, .. }) => true,
        Some(FileDeletions { cardinality: Some(c), .. }) => {
            (*c as f64) > (f.row_count.max(0) as f64) * opts.delete_ratio
        }
        None => false,
    };
    let candidates: Vec<(&DataFileMeta, Option<FileDeletions>)> = files
        .iter()
        .map(|f| (f, deletions(f)))
        .filter(|(f, d)| size(f) < opts.compaction_file_size || dv_mode && too_deleted(f, d))
        .collect();
    if !dv_mode {
        return pack(candidates.into_iter().map(|(f, _)| f).collect(), opts);
    }
    let mut by_index: BTreeMap<String, Vec<&DataFileMeta>> = BTreeMap::new();
    let mut rest = Vec::new();
    for (f, d) in candidates {
        match d {
            Some(d) => by_index.entry(d.index_file).or_default().push(f),
            None => rest.push(f),
        }
    }
    let mut groups: Vec<Vec<&DataFileMeta>> = by_index.into_values().collect();
    groups.sort_by_key(|g| g.iter().map(|f| size(f)).sum::<u64>());
    let mut out = Vec::new();
    let mut bin = Bin::default();
    for g in groups {
        for f in g {
            bin.add(f, opts);
        }
        if bin.enough_content(opts) {
            out.push(bin.drain());
        }
    }
    if !bin.files.is_empty() {
        out.push(bin.drain());
    }
    if rest.len() > 1 {
        out.extend(pack(rest, opts));
    }
    out
}

/// Packs files smallest first (Paimon's `SubCoordinator.pack`).
fn pack(mut files: Vec<&DataFileMeta>, opts: &AppendCompactOptions) -> Vec<Vec<DataFileMeta>> {
    files.sort_by_key(|f| (size(f), f.file_name.clone()));
    let mut out = Vec::new();
    let mut bin = Bin::default();
    for f in files {
        bin.add(f, opts);
        if bin.enough_content(opts) {
            out.push(bin.drain());
        }
    }
    if bin.files.len() >= opts.min_file_num.max(2) {
        out.push(bin.drain());
    }
    out
}

#[derive(Default)]
struct Bin {
    files: Vec<DataFileMeta>,
    bytes: u64,
}

impl Bin {
    fn add(&mut self, f: &DataFileMeta, opts: &AppendCompactOptions) {
        self.bytes += size(f) + opts.open_file_cost;
        self.files.push(f.clone());
    }

    fn enough_content(&self, opts: &AppendCompactOptions) -> bool {
        self.files.len() > 1 && self.bytes >= opts.target_file_size.saturating_mul(2)
    }

    fn drain(&mut self) -> Vec<DataFileMeta> {
        self.bytes = 0;
        std::mem::take(&mut self.files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::file_meta;
    use proptest::prelude::*;
    use strata_spec::BinaryRow;

    fn opts(min_file_num: usize, target: u64) -> AppendCompactOptions {
        AppendCompactOptions {
            min_file_num,
            target_file_size: target,
            compaction_file_size: target / 10 * 7,
            open_file_cost: 0,
            delete_ratio: 0.2,
            force_rewrite_all: false,
        }
    }

    fn files(sizes: &[i64]) -> Vec<DataFileMeta> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let mut f = file_meta(&format!("f{i}"), 0, s, BinaryRow::empty(), BinaryRow::empty());
                f.min_sequence_number = i as i64 * 10;
                f.max_sequence_number = i as i64 * 10 + 9;
                f
            })
            .collect()
    }

    #[test]
    fn after_write_picks_the_first_window_of_enough_small_files() {
        // Paimon's BucketedAppendCompactManagerTest cases, with target 1024 (window limit 2048).
        let o = opts(4, 1024);
        assert_eq!(pick_after_write(&files(&[100, 100, 100]), &o), None);
        assert_eq!(pick_after_write(&files(&[100, 100, 100, 100, 100]), &o), Some(0..4));
        // A large file first slides the window past it.
        assert_eq!(pick_after_write(&files(&[3000, 100, 100, 100, 100]), &o), Some(1..5));
        // Large files in the middle keep pushing the window on.
        assert_eq!(pick_after_write(&files(&[100, 2000, 100, 2000, 100, 100]), &o), None);
        assert_eq!(pick_after_write(&files(&[100, 2000, 100, 100, 100, 100]), &o), Some(2..6));
    }

    #[test]
    fn a_full_compaction_keeps_leading_large_files_and_wants_small_ones_to_outnumber() {
        let o = opts(4, 1000);
        assert_eq!(pick_full(&files(&[100, 100]), &o, false, |_| false), None, "fewer than three files");
        assert_eq!(pick_full(&files(&[800, 100, 100, 100]), &o, false, |_| false), Some(1..4));
        assert_eq!(pick_full(&files(&[800, 100, 900, 900]), &o, false, |_| false), None, "large files outnumber");
        assert_eq!(pick_full(&files(&[800, 900]), &o, true, |f| f.file_name == "f1"), Some(1..2), "deleted rows");
        assert_eq!(pick_full(&files(&[800, 100]), &o, true, |_| false), None, "one clean file");
        assert_eq!(pick_full(&files(&[800, 100, 100]), &o, true, |_| false), Some(1..3));
        let all = AppendCompactOptions { force_rewrite_all: true, ..o };
        assert_eq!(pick_full(&files(&[900]), &all, false, |_| false), Some(0..1));
    }

    #[test]
    fn unaware_packing_groups_small_files_and_every_file_with_deletions() {
        let o = opts(3, 100);
        // Two small files are too few; the 80-byte file is compacted size already.
        assert!(pack_unaware(&files(&[10, 20, 80]), &o, false, |_| None).is_empty());
        let groups = pack_unaware(&files(&[50, 60, 70, 10, 20]), &o, false, |_| None);
        let names: Vec<Vec<&str>> = groups.iter().map(|g| g.iter().map(|f| f.file_name.as_str()).collect()).collect();
        // Smallest first until twice the target (200 bytes): f3 f4 f0 f1 = 140 < 200; with f2 nothing is left
        // over, f2 is not small (70 >= 70).
        assert_eq!(names, vec![vec!["f3", "f4", "f0", "f1"]]);
        // With deletion vectors: a large file deleted past the ratio is compacted with its index file's group.
        let dels = |f: &DataFileMeta| {
            (f.file_name == "f0").then(|| FileDeletions { index_file: "index-a".into(), cardinality: Some(5) })
        };
        let groups = pack_unaware(&files(&[900, 900]), &o, true, dels);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0][0].file_name, "f0");
    }

    proptest! {
        /// Picks are windows of consecutive files of at least the minimum count (after writes) and never
        /// pass over a file (full); packs never take a file twice.
        #[test]
        fn picks_are_consecutive_and_packs_disjoint(sizes in proptest::collection::vec(1i64..3000, 0..20), min in 1usize..6) {
            let fs = files(&sizes);
            let o = opts(min, 1000);
            if let Some(r) = pick_after_write(&fs, &o) {
                prop_assert_eq!(r.len(), min.max(2));
                prop_assert!(r.end <= fs.len());
            }
            if let Some(r) = pick_full(&fs, &o, false, |_| false) {
                prop_assert_eq!(r.end, fs.len());
                prop_assert!(fs[..r.start].iter().all(|f| f.file_size >= 700));
            }
            let packed = pack_unaware(&fs, &o, false, |_| None);
            let mut seen = std::collections::HashSet::new();
            for g in &packed {
                prop_assert!(g.len() >= 2);
                for f in g {
                    prop_assert!(seen.insert(f.file_name.clone()));
                    prop_assert!(f.file_size < 700);
                }
            }
        }
    }
}
