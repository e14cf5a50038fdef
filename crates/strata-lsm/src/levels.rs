//! A bucket's levels (Paimon's `Levels`): level 0 holds overlapping files, newest first; every deeper level
//! is one sorted run of files with disjoint key ranges.

use strata_spec::{compare_rows, DataFileMeta, DataType, Datum, Error, Result};

/// A sorted run at a level: the unit the compaction picker reasons about.
#[derive(Debug, Clone)]
pub(crate) struct LevelSortedRun {
    /// Level of the run.
    pub level: i32,
    /// Its files, ordered by key (one file for a level-0 run).
    pub files: Vec<DataFileMeta>,
}

impl LevelSortedRun {
    /// Bytes in the run.
    pub(crate) fn total_size(&self) -> i64 {
        self.files.iter().map(|f| f.file_size).sum()
    }
}

/// The files of one (partition, bucket), by level.
#[derive(Debug, Clone)]
pub(crate) struct Levels {
    key_types: Vec<DataType>,
    level0: Vec<DataFileMeta>,
    levels: Vec<Vec<DataFileMeta>>,
}

/// A decoded key.
type Key = Vec<Option<Datum>>;

fn keys(f: &DataFileMeta, types: &[DataType]) -> Result<(Key, Key)> {
    Ok((f.min_key.to_datums(types)?, f.max_key.to_datums(types)?))
}

/// The deepest level a file may claim. Paimon's `num-levels` defaults to 5 (compaction trigger + 1); no
/// real table comes near this.
pub(crate) const MAX_LEVEL: i32 = 1024;

impl Levels {
    /// Levels holding `files`, with `num_levels` levels (0..num_levels), or more when `files` already reach
    /// deeper: `num-levels` (and the compaction trigger it defaults from) may be lowered on a table with
    /// data, and its files keep their levels (Paimon restores the same way).
    pub(crate) fn new(key_types: Vec<DataType>, files: Vec<DataFileMeta>, num_levels: usize) -> Result<Self> {
        // A level comes from a manifest: a crafted one (i32::MAX) must not size an allocation.
        if let Some(f) = files.iter().find(|f| f.level < 0 || f.level > MAX_LEVEL) {
            return Err(Error::corrupt(format!(
                "data file {} is at level {}, outside 0..={MAX_LEVEL}",
                f.file_name, f.level
            )));
        }
        let deepest = files.iter().map(|f| usize::try_from(f.level).unwrap_or(0) + 1).max().unwrap_or(0);
        let num_levels = num_levels.max(deepest).max(2);
        let mut l = Levels { key_types, level0: Vec::new(), levels: vec![Vec::new(); num_levels - 1] };
        l.update(&[], files)?;
        Ok(l)
    }

    /// Number of levels, level 0 included.
    pub(crate) fn num_levels(&self) -> usize {
        self.levels.len() + 1
    }

    /// The deepest level.
    pub(crate) fn max_level(&self) -> i32 {
        self.levels.len() as i32
    }

    /// Level-0 files, newest (largest sequence number) first.
    pub(crate) fn level0(&self) -> &[DataFileMeta] {
        &self.level0
    }

    /// Files of level `level` (>= 1), ordered by key.
    pub(crate) fn level(&self, level: i32) -> &[DataFileMeta] {
        usize::try_from(level - 1).ok().and_then(|i| self.levels.get(i)).map_or(&[], Vec::as_slice)
    }

    /// Every file.
    pub(crate) fn all_files(&self) -> Vec<DataFileMeta> {
        self.level0.iter().chain(self.levels.iter().flatten()).cloned().collect()
    }

    /// Largest sequence number of any file (-1 when empty).
    pub(crate) fn max_sequence_number(&self) -> i64 {
        self.level0.iter().chain(self.levels.iter().flatten()).map(|f| f.max_sequence_number).max().unwrap_or(-1)
    }

    /// Sorted runs: each level-0 file, then each non-empty level.
    pub(crate) fn sorted_runs(&self) -> Vec<LevelSortedRun> {
        let mut runs: Vec<LevelSortedRun> =
            self.level0.iter().map(|f| LevelSortedRun { level: 0, files: vec![f.clone()] }).collect();
        for (i, files) in self.levels.iter().enumerate() {
            if !files.is_empty() {
                runs.push(LevelSortedRun { level: i as i32 + 1, files: files.clone() });
            }
        }
        runs
    }

    /// Replaces `before` by `after` (a flush adds to level 0; a compaction swaps files).
    pub(crate) fn update(&mut self, before: &[DataFileMeta], after: Vec<DataFileMeta>) -> Result<()> {
        let gone = |f: &DataFileMeta| before.iter().any(|b| b.file_name == f.file_name && b.level == f.level);
        self.level0.retain(|f| !gone(f));
        for l in &mut self.levels {
            l.retain(|f| !gone(f));
        }
        for f in after {
            if f.level == 0 {
                self.level0.push(f);
            } else {
                let idx = usize::try_from(f.level - 1).ok().filter(|&i| i < self.levels.len()).ok_or_else(|| {
                    Error::corrupt(format!("file {} is at level {} of {}", f.file_name, f.level, self.num_levels()))
                })?;
                self.levels[idx].push(f);
            }
        }
        self.level0.sort_by(|a, b| {
            b.max_sequence_number.cmp(&a.max_sequence_number).then_with(|| a.file_name.cmp(&b.file_name))
        });
        for l in &mut self.levels {
            let mut keyed: Vec<(Key, DataFileMeta)> =
                l.drain(..).map(|f| Ok((keys(&f, &self.key_types)?.0, f))).collect::<Result<_>>()?;
            keyed.sort_by(|a, b| compare_rows(&a.0, &b.0));
            l.extend(keyed.into_iter().map(|(_, f)| f));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod level_bound_tests {
    use super::*;
    use strata_spec::BinaryRow;

    /// A crafted `_LEVEL` of i32::MAX sized a vector of 2^31 levels (about 51 GB) and aborted the process.
    #[test]
    fn a_level_beyond_the_bound_is_corrupt_not_an_allocation() {
        let f = crate::test_util::file_meta("data-x-0.parquet", i32::MAX, 10, BinaryRow::empty(), BinaryRow::empty());
        let e = Levels::new(vec![DataType::bigint()], vec![f], 5).unwrap_err();
        assert_eq!(e.kind(), strata_spec::ErrorKind::Corrupt);
    }
}
