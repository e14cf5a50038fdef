//! Executing one compaction unit (Paimon's `MergeTreeCompactTask` with the `LookupMergeTreeCompactRewriter`):
//! sections of overlapping files are merged into new files at the output level, running level-0 keys through
//! the lookup merge wrapper (older copies below the output marked in their files' deletion vectors); files
//! overlapping nothing move up unchanged where that is safe.

use std::sync::Arc;

use strata_format::{run_reader, DataFileRef, MergeIterator, Run};
use strata_io::{join, FileIO};
use strata_spec::{DataFileMeta, DataType, Error, FileSource, MergeEngine, Result, TypeRoot};

use super::pick::{plan_task, TaskFile, TaskStep};
use crate::bucket_lookup::{BucketLookup, SupersedeHook};
use crate::files::{remove_files, FileFactory};
use crate::levels::{LevelSortedRun, Levels};
use crate::options::WriterOptions;

/// One change a compaction makes to the levels.
#[derive(Debug)]
pub(crate) struct Applied {
    pub(crate) before: Vec<DataFileMeta>,
    pub(crate) after: Vec<DataFileMeta>,
    /// Changelog files the rewrite produced (`changelog-producer = lookup`).
    pub(crate) changelog: Vec<DataFileMeta>,
    /// `after` is `before` moved up a level, not rewritten.
    pub(crate) upgrade: bool,
}

/// A compaction unit with everything it needs, so that it can run on a compaction thread. It reads the
/// levels as they were when it was made: lookups only visit levels below its output, which nothing else
/// changes while it runs, and its results are applied to the writer's levels afterwards.
pub(crate) struct UnitJob {
    pub(crate) files: FileFactory,
    pub(crate) opts: WriterOptions,
    pub(crate) levels: Levels,
    pub(crate) lookup: BucketLookup,
    pub(crate) inputs: Vec<LevelSortedRun>,
    pub(crate) output: i32,
    pub(crate) drop_delete: bool,
    /// The inputs are the writer's last flush and nothing else: one run, each key once ([`crate::flush`]).
    pub(crate) last_flush_alone: bool,
    /// Set when the writer goes away: the job stops at the next batch and removes what it wrote.
    pub(crate) cancel: Arc<std::sync::atomic::AtomicBool>,
}

impl UnitJob {
    fn check_cancelled(&self) -> Result<()> {
        if self.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::invalid("compaction", "cancelled: the bucket writer was closed"));
        }
        Ok(())
    }

    /// Runs the unit; on failure the files it wrote are removed again.
    pub(crate) fn run(&self) -> Result<Vec<Applied>> {
        let _span = tracing::debug_span!(
            "compact",
            dir = self.files.bucket_dir,
            runs = self.inputs.len(),
            output = self.output
        )
        .entered();
        let mut done = Vec::new();
        match self.run_steps(&mut done) {
            Ok(()) => Ok(done),
            Err(e) => {
                discard_outputs(&self.files.io, &self.files.bucket_dir, &done);
                Err(e)
            }
        }
    }

    fn run_steps(&self, done: &mut Vec<Applied>) -> Result<()> {
        if self.is_flushed_run_alone() {
            return self.move_flushed_run(done);
        }
        let key_types: Vec<DataType> = self.files.layout.key_fields.iter().map(|f| f.data_type).collect();
        // Sections of overlapping files are merged; a file overlapping nothing may move up unchanged.
        let indexed: Vec<(usize, &DataFileMeta)> =
            self.inputs.iter().enumerate().flat_map(|(r, run)| run.files.iter().map(move |f| (r, f))).collect();
        let task_files: Vec<TaskFile<Vec<Option<strata_spec::Datum>>>> = indexed
            .iter()
            .map(|(r, f)| {
                Ok(TaskFile {
                    run: *r,
                    min: f.min_key.to_datums(&key_types)?,
                    max: f.max_key.to_datums(&key_types)?,
                    size: f.file_size,
                })
            })
            .collect::<Result<_>>()?;
        for step in plan_task(&task_files, self.opts.min_file_size(), |a, b| strata_spec::compare_rows(a, b)) {
            match step {
                TaskStep::Upgrade(i) => {
                    let (r, f) = indexed[i];
                    match self.try_upgrade(f)? {
                        Some(a) => done.push(a),
                        None => done.push(self.rewrite(vec![vec![(self.inputs[r].level, vec![f.clone()])]])?),
                    }
                }
                TaskStep::Rewrite(sections) => {
                    let sections = sections
                        .into_iter()
                        .map(|runs| {
                            runs.into_iter()
                                .map(|run| {
                                    let level = run.first().map_or(0, |&i| self.inputs[indexed[i].0].level);
                                    (level, run.into_iter().map(|i| indexed[i].1.clone()).collect())
                                })
                                .collect()
                        })
                        .collect();
                    done.push(self.rewrite(sections)?);
                }
            }
        }
        Ok(())
    }

    /// `f` moved to the output level without rewriting, when that is safe: nothing to drop from it, no
    /// deletion vector on it, and a merge engine for which a lone row is already its merged result. `None`
    /// when it must be rewritten instead.
    fn try_upgrade(&self, f: &DataFileMeta) -> Result<Option<Applied>> {
        if f.level == self.output {
            return Ok(Some(Applied { before: Vec::new(), after: Vec::new(), changelog: Vec::new(), upgrade: true }));
        }
        let has_deletes = f.delete_row_count.is_none_or(|d| d > 0);
        let plain_engine =
            self.opts.merge.engine == MergeEngine::Deduplicate && self.opts.merge.sequence_fields.is_empty();
        let has_dv = self.lookup.has_vector(&f.file_name)?;
        // With the lookup changelog, level-0 rows must pass through the merge that produces it.
        let changelog = self.opts.changelog_lookup && f.level == 0;
        if (self.drop_delete && has_deletes) || !plain_engine || has_dv || changelog {
            return Ok(None);
        }
        // A manifest's delete count is another writer's claim (pypaimon 2.1.0 records 0 for level-0 files that
        // hold deletes): moving such a file up would keep its retractions where deletion-vector readers take
        // every row as live. What decides is the file's own `_VALUE_KIND` column, read here (one byte a row).
        if self.drop_delete && self.holds_retractions(f)? {
            return Ok(None);
        }
        if self.opts.deletion_vectors && f.level == 0 && self.output < self.levels.max_level() {
            // Its keys still supersede older copies below: mark those.
            self.mark_older_copies(f)?;
        }
        let mut moved = f.clone();
        moved.level = self.output;
        Ok(Some(Applied { before: vec![f.clone()], after: vec![moved], changelog: Vec::new(), upgrade: true }))
    }

    fn hook(&self) -> SupersedeHook {
        self.lookup.hook(self.levels.clone(), self.output + 1)
    }

    /// Merges `sections` (disjoint, in key order; each a list of (level, files) sorted runs) into new files
    /// at the output level, running level-0 keys through the lookup wrapper where older copies may sit deeper.
    fn rewrite(&self, sections: Vec<Vec<(i32, Vec<DataFileMeta>)>>) -> Result<Applied> {
        let lookup_engine = self.opts.deletion_vectors || self.opts.merge.engine == MergeEngine::FirstRow;
        let changelog_mode = self.opts.changelog_lookup;
        let mut w = self.files.writer(&self.opts, self.output, FileSource::Compact);
        let mut cw = changelog_mode.then(|| self.files.changelog_writer(&self.opts, self.output));
        let mut before = Vec::new();
        for runs in sections {
            let refs: Vec<Vec<DataFileRef>> = runs
                .iter()
                .map(|(_, files)| {
                    files
                        .iter()
                        .map(|f| {
                            let dv = self.lookup.vector_of(&f.file_name)?;
                            self.files.layout.file_ref(self.files.path(f), f.clone(), dv)
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<_>>()?;
            let run_levels: Vec<i32> = runs.iter().map(|(level, _)| *level).collect();
            let readers: Vec<Run> = refs
                .into_iter()
                .map(|files| run_reader(self.files.io.clone(), &self.files.layout, files, self.opts.batch_size))
                .collect();
            let mut merged = MergeIterator::new(
                self.files.layout.clone(),
                readers,
                self.opts.merge.clone(),
                self.drop_delete,
                self.opts.batch_size,
            )?
            .with_run_levels(run_levels.clone());
            // The lookup wrapper: deletion vectors mark older copies; first-row drops later copies.
            let has_level0 = run_levels.contains(&0);
            if has_level0 && (changelog_mode || lookup_engine && self.output < self.levels.max_level()) {
                // (At the max level the lookup finds nothing below; it still runs for the changelog.)
                merged = merged.with_lookup(run_levels, Box::new(self.hook()));
            }
            if changelog_mode {
                merged = merged.with_changelog();
            }
            let mut written = Ok(());
            while let Some(b) = merged.next() {
                written = self.check_cancelled().and_then(|()| w.write(&b?));
                if written.is_ok() {
                    if let Some(cw) = cw.as_mut() {
                        written = merged.take_changelog().iter().try_for_each(|c| cw.write(c));
                    }
                }
                if written.is_err() {
                    break;
                }
            }
            if written.is_ok() {
                if let Some(cw) = cw.as_mut() {
                    written = merged.take_changelog().iter().try_for_each(|c| cw.write(c));
                }
            }
            if let Err(e) = written {
                // Files this rewrite already rolled are nobody's: remove them (the open ones were never written).
                let mut paths = w.written_paths();
                paths.extend(cw.as_ref().map(|c| c.written_paths()).unwrap_or_default());
                remove_files(&self.files.io, &paths);
                return Err(e);
            }
            before.extend(runs.into_iter().flat_map(|(_, files)| files));
        }
        let after = w.close()?;
        let changelog = match cw {
            None => Vec::new(),
            Some(cw) => match cw.close() {
                Ok(files) => files,
                Err(e) => {
                    remove_files(&self.files.io, &after.iter().map(|f| self.files.path(f)).collect::<Vec<_>>());
                    return Err(e);
                }
            },
        };
        Ok(Applied { before, after, changelog, upgrade: false })
    }

    /// Runs `file`'s keys through the lookup so their older copies below the output are marked deleted.
    /// Whether `file` holds a retraction row (-U or -D), from its `_VALUE_KIND` column.
    fn holds_retractions(&self, file: &DataFileMeta) -> Result<bool> {
        let r = self.files.layout.file_ref(self.files.path(file), file.clone(), None)?;
        let column = vec![(strata_format::VALUE_KIND.to_string(), DataType::not_null(TypeRoot::TinyInt))];
        for b in strata_format::FileRead::new(column).batch_size(self.opts.batch_size).open(&self.files.io, &r)? {
            self.check_cancelled()?;
            if strata_format::has_retraction(&b?, 0, &r.path)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Runs `file`'s keys through the lookup so their older copies below the output are marked deleted;
    /// returns its rows and retraction rows, counted from its own `_VALUE_KIND` column as it goes.
    fn mark_older_copies(&self, file: &DataFileMeta) -> Result<(usize, usize)> {
        let look_up = self.output < self.levels.max_level();
        let layout = &self.files.layout;
        let r = layout.file_ref(self.files.path(file), file.clone(), None)?;
        let mut columns: Vec<(String, DataType)> = strata_format::file_columns(layout);
        columns.truncate(layout.key_arity());
        columns.push((strata_format::VALUE_KIND.to_string(), DataType::not_null(TypeRoot::TinyInt)));
        let keys = strata_format::lookup::KeyEncoder::new(layout)?;
        let (mut rows_seen, mut retractions) = (0, 0);
        for b in strata_format::FileRead::new(columns).batch_size(self.opts.batch_size).open(&self.files.io, &r)? {
            self.check_cancelled()?;
            let b = b?;
            rows_seen += b.num_rows();
            retractions += strata_format::count_retractions(&b, layout.key_arity(), &r.path)?;
            if look_up {
                let rows = keys.rows(&b).map_err(|e| Error::corrupt(e.to_string()))?;
                for i in 0..rows.num_rows() {
                    self.lookup.supersede(&self.levels, self.output + 1, rows.row(i).as_ref())?;
                }
            }
        }
        Ok((rows_seen, retractions))
    }

    /// Whether the unit is the writer's last flush alone, going up out of level 0 where its files may leave
    /// unmerged ([`WriterOptions::moves_level0_unmerged`]).
    fn is_flushed_run_alone(&self) -> bool {
        self.last_flush_alone && self.opts.moves_level0_unmerged() && self.drop_delete && self.output > 0
    }

    /// Takes the last flush's run out of level 0 without merging it: its files hold each key once, so each
    /// file's keys mark their older copies below the output, then a file without retractions moves up
    /// unchanged and a file of retractions only goes (a rewrite would drop every row of it). A file holding
    /// both (another writer's) or carrying a deletion vector is rewritten alone.
    fn move_flushed_run(&self, done: &mut Vec<Applied>) -> Result<()> {
        let _span = tracing::debug_span!("move_flushed_run", runs = self.inputs.len()).entered();
        for f in self.inputs.iter().flat_map(|r| r.files.iter()) {
            let (rows, retractions) = self.mark_older_copies(f)?;
            if self.lookup.has_vector(&f.file_name)? || (retractions > 0 && retractions < rows) {
                done.push(self.rewrite(vec![vec![(f.level, vec![f.clone()])]])?);
            } else if retractions == 0 {
                let mut moved = f.clone();
                moved.level = self.output;
                done.push(Applied {
                    before: vec![f.clone()],
                    after: vec![moved],
                    changelog: Vec::new(),
                    upgrade: true,
                });
            } else {
                done.push(Applied {
                    before: vec![f.clone()],
                    after: Vec::new(),
                    changelog: Vec::new(),
                    upgrade: false,
                });
            }
        }
        Ok(())
    }
}

/// Removes the files compactions wrote but whose results are not going to be applied (moved files stay).
pub(crate) fn discard_outputs(io: &Arc<dyn FileIO>, bucket_dir: &str, applied: &[Applied]) {
    for a in applied {
        for f in &a.changelog {
            let _ = io.delete(&join(bucket_dir, &f.file_name));
        }
    }
    for a in applied.iter().filter(|a| !a.upgrade) {
        for f in &a.after {
            // Best effort: an unreferenced file is an orphan that `strata clean` removes.
            let _ = io.delete(&join(bucket_dir, &f.file_name));
        }
    }
}
