//! Compaction picking as pure functions of the level state (Paimon's `UniversalCompaction` and
//! `ForceUpLevel0Compaction`). Nothing here does I/O; the writer executes what is picked.

use crate::levels::LevelSortedRun;

/// What to compact: a prefix of the sorted runs, into `output_level`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompactUnit {
    /// Level the output goes to.
    pub output_level: i32,
    /// How many of the sorted runs (a prefix) take part.
    pub run_count: usize,
}

/// Universal compaction options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UniversalCompaction {
    /// `compaction.max-size-amplification-percent`.
    pub max_size_amp: u32,
    /// `compaction.size-ratio`.
    pub size_ratio: u32,
    /// `num-sorted-run.compaction-trigger`.
    pub num_run_compaction_trigger: usize,
}

impl UniversalCompaction {
    /// The universal pick: size amplification, then size ratio, then the number of runs.
    pub(crate) fn pick(&self, num_levels: usize, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        let max_level = num_levels as i32 - 1;
        if let Some(u) = self.pick_for_size_amp(max_level, runs) {
            return Some(u);
        }
        if let Some(u) = self.pick_for_size_ratio(max_level, runs) {
            return Some(u);
        }
        if runs.len() > self.num_run_compaction_trigger {
            let candidates = runs.len() - self.num_run_compaction_trigger + 1;
            return self.pick_for_size_ratio_from(max_level, runs, candidates, false);
        }
        None
    }

    fn pick_for_size_amp(&self, max_level: i32, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        if runs.len() < self.num_run_compaction_trigger || runs.is_empty() {
            return None;
        }
        let candidate: i64 = runs[..runs.len() - 1].iter().map(LevelSortedRun::total_size).sum();
        let earliest = runs[runs.len() - 1].total_size();
        if candidate as f64 * 100.0 > f64::from(self.max_size_amp) * earliest as f64 {
            return Some(CompactUnit { output_level: max_level, run_count: runs.len() });
        }
        None
    }

    fn pick_for_size_ratio(&self, max_level: i32, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        if runs.len() < self.num_run_compaction_trigger {
            return None;
        }
        self.pick_for_size_ratio_from(max_level, runs, 1, false)
    }

    /// Extends the first `candidates` runs while the next run is not much larger than them all.
    pub(crate) fn pick_for_size_ratio_from(
        &self,
        max_level: i32,
        runs: &[LevelSortedRun],
        mut candidates: usize,
        force: bool,
    ) -> Option<CompactUnit> {
        let mut size: i64 = runs[..candidates.min(runs.len())].iter().map(LevelSortedRun::total_size).sum();
        for next in runs.iter().skip(candidates) {
            if size as f64 * (100.0 + f64::from(self.size_ratio)) / 100.0 < next.total_size() as f64 {
                break;
            }
            size += next.total_size();
            candidates += 1;
        }
        if force || candidates > 1 {
            Some(create_unit(runs, max_level, candidates))
        } else {
            None
        }
    }
}

/// The unit of the first `run_count` runs: output just above the next run's level (never level 0), or the
/// max level when every run takes part.
pub(crate) fn create_unit(runs: &[LevelSortedRun], max_level: i32, mut run_count: usize) -> CompactUnit {
    run_count = run_count.min(runs.len());
    let mut output_level = if run_count == runs.len() { max_level } else { (runs[run_count].level - 1).max(0) };
    if output_level == 0 {
        // Never output to level 0: take runs until the first run at a deeper level, and output there.
        while run_count < runs.len() {
            let next = &runs[run_count];
            run_count += 1;
            if next.level != 0 {
                output_level = next.level;
                break;
            }
        }
    }
    if run_count == runs.len() {
        output_level = max_level;
    }
    CompactUnit { output_level, run_count }
}

/// When `lookup-compact` is gentle, level 0 is forced up only every this many triggers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ForceUpMode {
    /// On every trigger (the default).
    Radical,
    /// Every `max_interval` triggers.
    Gentle {
        /// `lookup-compact.max-interval`.
        max_interval: u32,
    },
}

/// Paimon's `ForceUpLevel0Compaction`: the universal pick, or else all level-0 runs into the level just
/// above the next run (merged with that run only when it sits at level 1, since nothing goes to level 0).
///
/// The first `flush_parts` runs are the parts of one flush (its rows and its retractions, disjoint by key:
/// [`crate::flush`]) and count as the one sorted run they are.
///
/// Paimon's forced pick goes on to take in every next run not much larger than the runs taken so far
/// (`compaction.size-ratio`), with or without the number of runs that triggers the universal pick. After
/// every write of equal size that is a binary counter over the levels: each write rewrites the runs of
/// the writes before it whenever they add up to its size, which cost deletion-vector writes about half again
/// the bytes a merge-on-read write costs (docs/BENCHMARKS.md, issue 53). Here level 0 takes a free level
/// and the runs wait, as a merge-on-read write's level-0 runs do, for the universal pick to merge them once
/// `num-sorted-run.compaction-trigger` runs pile up: deletion-vector writes then rewrite what merge-on-read
/// writes rewrite, and a write that overlaps nothing deeper leaves level 0 without a rewrite. The price is
/// read-side: superseded rows wait longer in the older runs, marked deleted, and a scan decodes them
/// (docs/BENCHMARKS.md). `size_ratio` (`strata.lookup-compact.size-ratio`) picks as Paimon does.
pub(crate) fn pick_force_up_level0(
    universal: &UniversalCompaction,
    mode: ForceUpMode,
    size_ratio: bool,
    trigger_count: u32,
    num_levels: usize,
    runs: &[LevelSortedRun],
    flush_parts: usize,
) -> Option<CompactUnit> {
    let parts = flush_parts.min(runs.iter().take_while(|r| r.level == 0).count());
    if parts > 1 {
        let mut view = Vec::with_capacity(runs.len() - parts + 1);
        view.push(LevelSortedRun { level: 0, files: runs[..parts].iter().flat_map(|r| r.files.clone()).collect() });
        view.extend_from_slice(&runs[parts..]);
        let unit = pick_force_up_level0(universal, mode, size_ratio, trigger_count, num_levels, &view, 1)?;
        return Some(CompactUnit { run_count: unit.run_count + parts - 1, ..unit });
    }
    if let Some(u) = universal.pick(num_levels, runs) {
        return Some(u);
    }
    if let ForceUpMode::Gentle { max_interval } = mode {
        if !trigger_count.is_multiple_of(max_interval.max(1)) {
            return None;
        }
    }
    let level0 = runs.iter().take_while(|r| r.level == 0).count();
    if level0 == 0 {
        return None;
    }
    if size_ratio {
        return universal.pick_for_size_ratio_from(num_levels as i32 - 1, runs, level0, true);
    }
    Some(create_unit(runs, num_levels as i32 - 1, level0))
}

/// A merge-on-read bucket's first large write moved out of level 0: when every sorted run of the bucket is
/// in level 0 and together they hold at least `min_file_size` bytes, all of them go to the max level.
///
/// The universal pick would leave them in level 0 until `num-sorted-run.compaction-trigger` runs, and then,
/// as nothing lies deeper, merge every run (the large write and the small updates since) into the max level:
/// the whole bucket rewritten for a few updates. Taken up now, a write's own files are disjoint and large,
/// so the task upgrades them without a rewrite ([`plan_task`]), and later updates merge among themselves
/// above them. Runs that overlap are merged, as the universal pick would merge them later.
pub(crate) fn pick_level0_alone_up(
    num_levels: usize,
    runs: &[LevelSortedRun],
    min_file_size: i64,
) -> Option<CompactUnit> {
    if num_levels < 2 || runs.is_empty() || runs.iter().any(|r| r.level != 0) {
        return None;
    }
    let size: i64 = runs.iter().map(LevelSortedRun::total_size).sum();
    (size >= min_file_size).then(|| CompactUnit { output_level: num_levels as i32 - 1, run_count: runs.len() })
}

/// A full compaction: every run into the max level.
pub(crate) fn pick_full(num_levels: usize, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
    if runs.is_empty() {
        return None;
    }
    Some(CompactUnit { output_level: num_levels as i32 - 1, run_count: runs.len() })
}

/// One input file of a compaction unit, as the task planner sees it.
#[derive(Debug, Clone)]
pub(crate) struct TaskFile<K> {
    /// Index of the sorted run it belongs to (runs newest first, as the unit lists them).
    pub run: usize,
    /// Smallest key.
    pub min: K,
    /// Largest key.
    pub max: K,
    /// Bytes.
    pub size: i64,
}

/// One step of executing a compaction unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TaskStep {
    /// Merge these sections into new files at the output level. Sections are disjoint and in key order; each
    /// is a list of sorted runs (in run order), each a list of file indices in key order.
    Rewrite(Vec<Vec<Vec<usize>>>),
    /// Move this file to the output level unchanged, if the executor finds that safe (else rewrite it alone).
    Upgrade(usize),
}

/// Paimon's `MergeTreeCompactTask`: splits a unit's files into sections of transitively overlapping key
/// ranges. A section with several runs must be merged. A section that is one file needs no merge: when the
/// file is at least `min_file_size` (Paimon: 70% of `target-file-size`) it is upgraded in place, so
/// sequential-key ingestion never rewrites data; smaller ones are merged with their neighbours to keep the
/// file count down. Steps come in key order.
pub(crate) fn plan_task<K>(
    files: &[TaskFile<K>],
    min_file_size: i64,
    cmp: impl Fn(&K, &K) -> std::cmp::Ordering,
) -> Vec<TaskStep> {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| cmp(&files[a].min, &files[b].min).then_with(|| cmp(&files[a].max, &files[b].max)));
    // Sections: a file joins the current one when it starts at or before the section's largest key.
    let mut sections: Vec<Vec<usize>> = Vec::new();
    let mut bound: Option<usize> = None;
    for i in order {
        match bound {
            Some(b) if cmp(&files[i].min, &files[b].max).is_le() => {
                if cmp(&files[i].max, &files[b].max).is_gt() {
                    bound = Some(i);
                }
                if let Some(last) = sections.last_mut() {
                    last.push(i);
                }
            }
            _ => {
                sections.push(vec![i]);
                bound = Some(i);
            }
        }
    }
    let as_runs = |section: &[usize]| -> Vec<Vec<usize>> {
        let mut runs: Vec<(usize, Vec<usize>)> = Vec::new();
        for &i in section {
            match runs.iter_mut().find(|(r, _)| *r == files[i].run) {
                Some((_, v)) => v.push(i),
                None => runs.push((files[i].run, vec![i])),
            }
        }
        runs.sort_by_key(|(r, _)| *r);
        runs.into_iter().map(|(_, v)| v).collect()
    };
    let mut steps = Vec::new();
    let mut candidate: Vec<Vec<Vec<usize>>> = Vec::new();
    let flush = |candidate: &mut Vec<Vec<Vec<usize>>>, steps: &mut Vec<TaskStep>| {
        match candidate.as_slice() {
            [] => {}
            // A lone single-file section: nothing to merge it with.
            [only] if only.len() == 1 && only[0].len() == 1 => steps.push(TaskStep::Upgrade(only[0][0])),
            _ => steps.push(TaskStep::Rewrite(std::mem::take(candidate))),
        }
        candidate.clear();
    };
    for section in sections {
        let runs = as_runs(&section);
        if runs.len() == 1 && runs[0].len() == 1 && files[runs[0][0]].size >= min_file_size {
            flush(&mut candidate, &mut steps);
            steps.push(TaskStep::Upgrade(runs[0][0]));
        } else {
            candidate.push(runs);
        }
    }
    flush(&mut candidate, &mut steps);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use strata_spec::BinaryRow;

    fn run(level: i32, size: i64) -> LevelSortedRun {
        let name = format!("f{level}-{size}");
        LevelSortedRun {
            level,
            files: vec![crate::test_util::file_meta(&name, level, size, BinaryRow::empty(), BinaryRow::empty())],
        }
    }

    fn universal() -> UniversalCompaction {
        UniversalCompaction { max_size_amp: 200, size_ratio: 1, num_run_compaction_trigger: 5 }
    }

    /// Runs as the levels produce them: level-0 runs first, then strictly increasing deeper levels.
    fn runs_strategy() -> impl Strategy<Value = Vec<LevelSortedRun>> {
        (proptest::collection::vec(1i64..1000, 0..8), proptest::collection::btree_map(1i32..6, 1i64..100_000, 0..5))
            .prop_map(|(l0, deeper)| {
                l0.into_iter().map(|s| run(0, s)).chain(deeper.into_iter().map(|(l, s)| run(l, s))).collect()
            })
    }

    #[test]
    fn few_runs_pick_nothing_and_many_runs_compact() {
        let u = universal();
        assert_eq!(u.pick(6, &[run(0, 10), run(0, 10), run(5, 1000)]), None);
        let many: Vec<_> = (0..6).map(|_| run(0, 10)).collect();
        let unit = u.pick(6, &many).unwrap();
        assert_eq!(unit, CompactUnit { output_level: 5, run_count: 6 });
        // Size amplification: the newer runs outweigh the oldest by more than 200%.
        let amp = vec![run(0, 100), run(0, 100), run(0, 100), run(1, 100), run(5, 100)];
        assert_eq!(u.pick(6, &amp), Some(CompactUnit { output_level: 5, run_count: 5 }));
    }

    #[test]
    fn level0_alone_goes_up_once_it_is_large() {
        // Nothing deeper and enough bytes: every level-0 run to the max level.
        assert_eq!(
            pick_level0_alone_up(6, &[run(0, 60), run(0, 50)], 100),
            Some(CompactUnit { output_level: 5, run_count: 2 })
        );
        // Too small yet, or something deeper already (the universal pick decides then), or one level only.
        assert_eq!(pick_level0_alone_up(6, &[run(0, 60), run(0, 30)], 100), None);
        assert_eq!(pick_level0_alone_up(6, &[run(0, 1000), run(5, 10)], 100), None);
        assert_eq!(pick_level0_alone_up(6, &[], 0), None);
        assert_eq!(pick_level0_alone_up(1, &[run(0, 1000)], 100), None);
        // Updates above a moved write: the universal pick merges them among themselves, above it.
        let after: Vec<_> = (0..4).map(|_| run(0, 10)).chain([run(5, 1000)]).collect();
        assert_eq!(pick_level0_alone_up(6, &after, 100), None);
        assert_eq!(universal().pick(6, &after), Some(CompactUnit { output_level: 4, run_count: 4 }));
    }

    #[test]
    fn force_up_moves_level0_above_the_next_level() {
        let u = universal();
        let runs = vec![run(0, 10), run(0, 10), run(3, 100_000), run(5, 1_000_000)];
        let unit = pick_force_up_level0(&u, ForceUpMode::Radical, false, 1, 6, &runs, 0).unwrap();
        assert_eq!(unit, CompactUnit { output_level: 2, run_count: 2 });
        let gentle = ForceUpMode::Gentle { max_interval: 10 };
        assert_eq!(pick_force_up_level0(&u, gentle, false, 3, 6, &runs, 0), None);
        assert!(pick_force_up_level0(&u, gentle, false, 10, 6, &runs, 0).is_some());
        assert_eq!(pick_force_up_level0(&u, ForceUpMode::Radical, false, 1, 6, &[run(4, 5)], 0), None);
        // Level 0 takes the free level above the next run even when that run is no larger (Paimon's forced
        // pick would merge the two); at level 1 there is no free level, and the two merge.
        let same_size = vec![run(0, 100), run(5, 100)];
        let unit = pick_force_up_level0(&u, ForceUpMode::Radical, false, 1, 6, &same_size, 0).unwrap();
        assert_eq!(unit, CompactUnit { output_level: 4, run_count: 1 });
        let paimon = pick_force_up_level0(&u, ForceUpMode::Radical, true, 1, 6, &same_size, 0).unwrap();
        assert_eq!(paimon, CompactUnit { output_level: 5, run_count: 2 });
        let at_one = vec![run(0, 10), run(1, 1000), run(5, 5000)];
        let unit = pick_force_up_level0(&u, ForceUpMode::Radical, false, 1, 6, &at_one, 0).unwrap();
        assert_eq!(unit, CompactUnit { output_level: 1, run_count: 2 });
    }

    #[test]
    fn the_parts_of_one_flush_count_as_one_run() {
        let u = universal();
        // Four runs with the flush's two parts as one: fewer than the universal pick needs, so level 0 goes up
        // alone.
        let runs = vec![run(0, 2), run(0, 10), run(3, 100), run(4, 1000), run(5, 500)];
        let unit = pick_force_up_level0(&u, ForceUpMode::Radical, false, 1, 6, &runs, 2).unwrap();
        assert_eq!(unit, CompactUnit { output_level: 2, run_count: 2 });
        // Counted as two runs, they make five, and the size amplification rewrites everything.
        let unit = pick_force_up_level0(&u, ForceUpMode::Radical, false, 1, 6, &runs, 0).unwrap();
        assert_eq!(unit, CompactUnit { output_level: 5, run_count: 5 });
    }

    proptest! {
        #[test]
        fn picks_are_well_formed(runs in runs_strategy(), trigger in 0u32..20, parts in 0usize..4, ratio: bool) {
            let u = universal();
            let forced = pick_force_up_level0(&u, ForceUpMode::Radical, ratio, trigger, 6, &runs, parts);
            for unit in [u.pick(6, &runs), forced, pick_full(6, &runs)]
                .into_iter()
                .flatten()
            {
                // A non-empty prefix, into a level >= 1 and >= every input level, and above every run left out.
                prop_assert!(unit.run_count >= 1 && unit.run_count <= runs.len());
                prop_assert!(unit.output_level >= 1 && unit.output_level <= 5);
                for r in &runs[..unit.run_count] {
                    prop_assert!(r.level <= unit.output_level);
                }
                for r in &runs[unit.run_count..] {
                    prop_assert!(r.level > unit.output_level);
                }
            }
            // Level 0 always leaves level 0 under force-up when nothing else is picked.
            let level0 = runs.iter().filter(|r| r.level == 0).count();
            if level0 > 0 {
                let unit = pick_force_up_level0(&u, ForceUpMode::Radical, ratio, trigger, 6, &runs, parts).unwrap();
                prop_assert!(unit.run_count >= level0);
            }
        }
    }

    fn tf(run: usize, min: i64, max: i64, size: i64) -> TaskFile<i64> {
        TaskFile { run, min, max, size }
    }

    #[test]
    fn non_overlapping_large_files_are_upgraded_and_overlaps_rewritten() {
        // Sequential ingestion: three level-0 files with disjoint keys, all large: nothing is rewritten.
        let files = vec![tf(0, 200, 299, 100), tf(1, 100, 199, 100), tf(2, 0, 99, 100)];
        assert_eq!(
            plan_task(&files, 70, i64::cmp),
            vec![TaskStep::Upgrade(2), TaskStep::Upgrade(1), TaskStep::Upgrade(0)]
        );
        // An overlap (file 0 and file 2 share key 50) forms one section of two runs; file 1 stays apart.
        let files = vec![tf(0, 50, 60, 100), tf(1, 100, 199, 100), tf(2, 0, 99, 100)];
        assert_eq!(
            plan_task(&files, 70, i64::cmp),
            vec![TaskStep::Rewrite(vec![vec![vec![0], vec![2]]]), TaskStep::Upgrade(1)]
        );
        // Small disjoint files are merged together, not upgraded one by one; a lone small file is upgraded.
        let files = vec![tf(0, 0, 9, 10), tf(1, 10, 19, 10), tf(2, 20, 29, 100)];
        assert_eq!(
            plan_task(&files, 70, i64::cmp),
            vec![TaskStep::Rewrite(vec![vec![vec![0]], vec![vec![1]]]), TaskStep::Upgrade(2)]
        );
        assert_eq!(plan_task(&[tf(0, 0, 9, 10)], 70, i64::cmp), vec![TaskStep::Upgrade(0)]);
    }

    proptest! {
        #[test]
        fn task_steps_cover_every_file_once_and_upgrade_only_what_overlaps_nothing(
            raw in proptest::collection::vec((0usize..4, 0i64..100, 0i64..20, 1i64..200), 0..24)
        ) {
            // Files of one sorted run never overlap: keep each run's files disjoint.
            let mut files: Vec<TaskFile<i64>> = Vec::new();
            for &(r, lo, w, sz) in &raw {
                if !files.iter().any(|f| f.run == r && f.min <= lo + w && lo <= f.max) {
                    files.push(tf(r, lo, lo + w, sz));
                }
            }
            let steps = plan_task(&files, 70, i64::cmp);
            let mut seen = vec![0usize; files.len()];
            let overlaps = |a: usize, b: usize| files[a].min <= files[b].max && files[b].min <= files[a].max;
            let mut last_max: Option<i64> = None;
            for step in &steps {
                let ids: Vec<usize> = match step {
                    TaskStep::Upgrade(i) => {
                        // An upgraded file overlaps no other input file.
                        for j in 0..files.len() {
                            prop_assert!(j == *i || !overlaps(*i, j));
                        }
                        vec![*i]
                    }
                    TaskStep::Rewrite(sections) => {
                        prop_assert!(!sections.is_empty());
                        for runs in sections {
                            for run in runs {
                                // Each run holds files of one input run, in key order, not overlapping.
                                prop_assert!(run.iter().all(|&i| files[i].run == files[run[0]].run));
                                for w in run.windows(2) {
                                    prop_assert!(files[w[0]].max < files[w[1]].min);
                                }
                            }
                        }
                        sections.iter().flatten().flatten().copied().collect()
                    }
                };
                // Steps are disjoint and in key order.
                let lo = ids.iter().map(|&i| files[i].min).min().unwrap_or(0);
                let hi = ids.iter().map(|&i| files[i].max).max().unwrap_or(0);
                if let Some(m) = last_max {
                    prop_assert!(m < lo);
                }
                last_max = Some(hi);
                for i in ids {
                    seen[i] += 1;
                }
            }
            prop_assert!(seen.iter().all(|&n| n == 1));
        }
    }
}
