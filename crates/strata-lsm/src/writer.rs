//! The merge-tree writer of one (partition, bucket) (Paimon's `MergeTreeWriter` with
//! `MergeTreeCompactManager` and `ForceUpLevel0Compaction`).
//!
//! Rows are buffered with fresh sequence numbers, sorted, merged and flushed to level-0 files. Compactions are
//! picked by the pure functions of [`crate::compact::pick`] and executed by [`crate::compact::job`], here
//! or on the compaction threads. In deletion-vector mode level 0 is forced up after every flush; keys found
//! only in level 0 are looked up in the deeper levels and their older copies marked in those files' deletion
//! vectors ([`crate::bucket_lookup`]), and retractions never reach levels >= 1.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch};
use strata_dv::BucketedDvMaintainer;
use strata_format::{run_reader, KeyValueLayout, KvFileWriter, MergeIterator};
use strata_io::{join, FileIO};
use strata_spec::{DataFileMeta, DataType, Error, FileSource, MergeEngine, Result, TableSchema};

use crate::bucket_lookup::BucketLookup;
use crate::compact::job::{Applied, UnitJob};
use crate::compact::pool::{compaction_pool, BackgroundJob, Polled};
use crate::compact::{pick_force_up_level0, pick_full, pick_level0_alone_up, CompactUnit, ForceUpMode};
use crate::files::{remove_files, FileFactory};
use crate::flush::FlushWriter;
use crate::levels::{LevelSortedRun, Levels};
use crate::lookup::LookupLevels;
use crate::options::WriterOptions;
use crate::write_buffer::WriteBuffer;
use strata_spec::{CommitIncrement, DvIndexBase};

/// Writes one (partition, bucket).
pub struct MergeTreeWriter {
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    opts: WriterOptions,
    bucket_dir: String,
    index_dir: String,
    file_prefix: String,
    file_counter: Arc<std::sync::atomic::AtomicU64>,
    levels: Levels,
    lookup: BucketLookup,
    buffer: WriteBuffer,
    next_seq: i64,
    /// `next_seq` when the current commit cycle began.
    cycle_start_seq: i64,
    trigger_count: u32,
    increment: CommitIncrement,
    bucket: i32,
    /// Files written in this commit cycle (not yet handed over): dropping the writer removes them.
    uncommitted: Vec<String>,
    /// A compaction running on a compaction thread (merge-on-read writers only), at most one per bucket.
    in_flight: Option<BackgroundJob>,
    /// The files of the last flush: one sorted run, each key once ([`crate::flush`]).
    last_flush: Vec<String>,
}

impl MergeTreeWriter {
    /// A writer over the bucket's committed `files` and deletion vectors `dv` (in deletion-vector mode). Files
    /// written under older schemas are read through `history`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        io: Arc<dyn FileIO>,
        schema: &TableSchema,
        history: Option<Arc<dyn strata_format::SchemaHistory>>,
        bucket: i32,
        bucket_dir: String,
        index_dir: String,
        files: Vec<DataFileMeta>,
        dv: Option<BucketedDvMaintainer>,
    ) -> Result<Self> {
        let opts = WriterOptions::from_schema(schema)?;
        let layout = KeyValueLayout::new(schema)?;
        let layout = Arc::new(match history {
            Some(h) => layout.with_history(h),
            None => layout,
        });
        let spill = opts.spill.clone();
        let key_types: Vec<DataType> = layout.key_fields.iter().map(|f| f.data_type).collect();
        let levels = Levels::new(key_types, files, opts.num_levels)?;
        // Partial-update and aggregation merge with the old value; the lookup changelog emits it.
        let need_values = opts.merge.engine != MergeEngine::Deduplicate
            || !opts.merge.sequence_fields.is_empty()
            || opts.changelog_lookup;
        let lookup_levels =
            LookupLevels::new(io.clone(), layout.clone(), bucket_dir.clone(), need_values, opts.lookup_cache.clone())?;
        let dv =
            if opts.deletion_vectors { Some(dv.unwrap_or_else(|| BucketedDvMaintainer::new(false))) } else { None };
        Ok(MergeTreeWriter {
            next_seq: levels.max_sequence_number() + 1,
            cycle_start_seq: levels.max_sequence_number() + 1,
            io,
            opts,
            bucket_dir,
            index_dir,
            file_prefix: format!("{}-", uuid::Uuid::new_v4()),
            file_counter: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            levels,
            lookup: BucketLookup::new(lookup_levels, dv),
            buffer: WriteBuffer::new(layout.clone(), spill),
            layout,
            trigger_count: 0,
            increment: CommitIncrement::default(),
            bucket,
            uncommitted: Vec::new(),
            in_flight: None,
            last_flush: Vec::new(),
        })
    }

    /// The bucket number (from the bucket directory name).
    pub fn bucket(&self) -> i32 {
        self.bucket
    }

    /// The next sequence number to assign.
    pub fn next_sequence_number(&self) -> i64 {
        self.next_seq
    }

    /// The layout of the bucket's files.
    pub fn layout(&self) -> &Arc<KeyValueLayout> {
        &self.layout
    }

    /// Buffers rows: `values` holds every column of the table, `kinds` each row's kind byte.
    pub fn write(&mut self, values: &RecordBatch, kinds: &[i8]) -> Result<()> {
        let n = values.num_rows();
        if n == 0 {
            return Ok(());
        }
        if kinds.len() != n {
            return Err(Error::invalid("write", format!("{} row kinds for {n} rows", kinds.len())));
        }
        let mut cols: Vec<ArrayRef> = self.layout.key_in_value.iter().map(|&i| values.column(i).clone()).collect();
        cols.push(Arc::new(Int64Array::from_iter_values(self.next_seq..self.next_seq + n as i64)));
        cols.push(Arc::new(Int8Array::from(kinds.to_vec())));
        cols.extend(values.columns().iter().cloned());
        let batch = RecordBatch::try_new(self.layout.file_schema.clone(), cols)
            .map_err(|e| Error::invalid("write", format!("rows do not match the table: {e}")))?;
        self.next_seq += n as i64;
        self.buffer.push(batch);
        if self.buffer.memory_bytes() < self.memory_limit() || self.spill() {
            return Ok(());
        }
        if let Err(e) = self.flush() {
            // Not accepted: the batch leaves the buffer again (earlier rows stay buffered for the next flush).
            self.buffer.pop_last();
            self.next_seq -= n as i64;
            return Err(e);
        }
        // The rows are in level-0 files now; a compaction error below does not undo that.
        self.trigger_compaction()
    }

    /// Bytes of rows the memory part of the buffer may hold: all of `write-buffer-size` when the buffer
    /// flushes, half when it spills, since a spill holds its rows until they are on disk while the other half
    /// fills (so the rows held stay within the size).
    fn memory_limit(&self) -> u64 {
        if self.opts.spill.is_some() {
            self.opts.write_buffer_size / 2
        } else {
            self.opts.write_buffer_size
        }
    }

    /// Waits for the write buffer's spill being written, if any (its rows are on disk or, if it failed,
    /// back in memory, where the next release or flush takes them).
    pub fn settle_spill(&mut self) {
        if let Err(e) = self.buffer.settle() {
            tracing::warn!(dir = self.bucket_dir, error = %e, "spilling the write buffer failed; its rows stay buffered");
        }
    }

    /// Whether the write buffer is writing a spill.
    pub fn spilling(&self) -> bool {
        self.buffer.spilling()
    }

    /// Bytes the write buffer holds in memory and has not handed to a spill (what `write-buffer-size`
    /// bounds; a spill being written holds its rows until they are on disk, at most one per bucket).
    pub fn buffered_bytes(&self) -> u64 {
        self.buffer.memory_bytes()
    }

    /// Empties the memory part of the write buffer: spilled as a sorted run where the buffer may spill, else
    /// flushed to level 0 (and compaction triggered). The rows stay buffered if that fails.
    pub fn release_buffer(&mut self) -> Result<()> {
        if self.buffer.memory_bytes() == 0 || self.spill() {
            return Ok(());
        }
        self.flush()?;
        self.trigger_compaction()
    }

    /// Spills the memory part if the buffer may spill and within its limits; whether it did.
    fn spill(&mut self) -> bool {
        self.buffer.try_spill(self.opts.batch_size).unwrap_or_else(|e| {
            tracing::warn!(dir = self.bucket_dir, error = %e, "spilling the write buffer failed; flushing to level 0");
            false
        })
    }

    fn file_factory(&self) -> FileFactory {
        FileFactory {
            io: self.io.clone(),
            layout: self.layout.clone(),
            bucket_dir: self.bucket_dir.clone(),
            prefix: self.file_prefix.clone(),
            counter: self.file_counter.clone(),
        }
    }

    fn file_writer(&self, level: i32, source: FileSource) -> KvFileWriter {
        self.file_factory().writer(&self.opts, level, source)
    }

    /// Sorts, merges and writes the buffer (memory and spilled runs) as one level-0 run.
    pub fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        // A failed spill's rows are back in memory and are flushed with the rest.
        self.settle_spill();
        let _span = tracing::debug_span!(
            "flush",
            dir = self.bucket_dir,
            rows_in_memory = self.buffer.memory_rows(),
            spilled_runs = self.buffer.spilled_runs()
        )
        .entered();
        // With `changelog-producer = input` every buffered row, retractions included, is also the changelog:
        // one sorted file per run (runs hold ascending sequence ranges, so file order is sequence order).
        let memory = self.buffer.sorted_memory(self.opts.batch_size)?;
        let mut changelog = Vec::new();
        if self.opts.changelog_input {
            for run in self.buffer.runs_with(memory.clone())? {
                let mut cw = self.file_factory().changelog_writer(&self.opts, 0);
                let written = run.into_iter().try_for_each(|b| cw.write(&b?)).and_then(|()| cw.close());
                match written {
                    Ok(files) => changelog.extend(files),
                    Err(e) => {
                        let paths: Vec<String> =
                            changelog.iter().map(|f| join(&self.bucket_dir, &f.file_name)).collect();
                        remove_files(&self.io, &paths);
                        return Err(e);
                    }
                }
            }
        }
        // The buffer (memory and spilled runs) is released only once the level-0 files are written: a
        // failed flush leaves it whole, so a retried commit writes the same rows again.
        let runs = self.buffer.runs_with(memory)?;
        let merged =
            MergeIterator::new(self.layout.clone(), runs, self.opts.merge.clone(), false, self.opts.batch_size)?;
        let mut w = FlushWriter::new(self.file_factory(), &self.opts);
        let written = merged.into_iter().try_for_each(|b| w.write(&b?));
        let mut orphans: Vec<String> = changelog.iter().map(|f| join(&self.bucket_dir, &f.file_name)).collect();
        let closed = match written {
            Ok(()) => w.close(),
            Err(e) => {
                orphans.extend(w.written_paths());
                Err(e)
            }
        };
        let files = match closed {
            Ok(files) => files,
            Err(e) => {
                remove_files(&self.io, &orphans);
                return Err(e);
            }
        };
        self.buffer.clear();
        self.increment.data.changelog_files.extend(changelog);
        for f in &files {
            self.uncommitted.push(f.file_name.clone());
        }
        self.levels.update(&[], files.clone())?;
        self.last_flush = files.iter().map(|f| f.file_name.clone()).collect();
        self.increment.data.new_files.extend(files);
        Ok(())
    }

    /// Runs compactions until nothing more is picked (in force-up mode: until level 0 is empty). With `full`,
    /// compacts every run into the max level once (and so leaves no deletion vectors).
    pub fn compact(&mut self, full: bool) -> Result<()> {
        self.compact_in(full, false)
    }

    /// [`compact`](Self::compact); with `background`, a deletion-vector writer hands a unit that leaves level 0
    /// alone (the universal pick merging deeper runs) to a compaction thread and stops there: level 0 is
    /// empty by then, which is all a commit waits for (`lookup-wait`), and the unit's result goes into a
    /// later commit. Nothing else in the bucket marks or drops a deletion vector until that unit is applied:
    /// the next flush's compaction, any explicit compaction and the delete-ratio rewrite wait for it first.
    fn compact_in(&mut self, full: bool, background: bool) -> Result<()> {
        self.finish_background(true)?;
        if full {
            let runs = self.levels.sorted_runs();
            let unit = pick_full(self.levels.num_levels(), &runs);
            if let Some(unit) = unit {
                let only_max = runs.len() == 1 && runs[0].level == self.levels.max_level();
                if only_max {
                    // Only the max level is left: rewrite just its files that carry deletion vectors.
                    self.rewrite_files_with_deletions(0.0)?;
                } else {
                    self.run_unit(unit, true)?;
                }
            }
            return Ok(());
        }
        // Bounded: every unit strictly reduces the number of runs or moves data deeper.
        for _ in 0..64 {
            let runs = self.levels.sorted_runs();
            self.trigger_count += 1;
            let unit = if self.opts.force_up_level0 {
                pick_force_up_level0(
                    &self.opts.universal,
                    self.opts.force_up_mode,
                    self.opts.force_up_size_ratio,
                    self.trigger_count,
                    self.levels.num_levels(),
                    &runs,
                    self.flush_parts(&runs),
                )
            } else {
                self.pick_universal(&runs)
            };
            let Some(unit) = unit else { break };
            let leaves_level0 = runs[..unit.run_count.min(runs.len())].iter().all(|r| r.level > 0);
            if background && leaves_level0 && self.opts.deletion_vectors && compaction_pool().is_some() {
                if let Some(job) = self.unit_job(unit.clone(), false) {
                    if let Some(job) = BackgroundJob::start(job)? {
                        self.in_flight = Some(job);
                        break;
                    }
                }
            }
            self.run_unit(unit, false)?;
        }
        Ok(())
    }

    /// How many of the first `runs` are the parts of the last flush (level-0 files of one run, disjoint by
    /// key), when all of them are there.
    fn flush_parts(&self, runs: &[LevelSortedRun]) -> usize {
        let parts = runs
            .iter()
            .take_while(|r| r.level == 0 && r.files.iter().all(|f| self.last_flush.contains(&f.file_name)))
            .count();
        if parts == self.last_flush.len() {
            parts
        } else {
            0
        }
    }

    /// Merge-on-read's pick: the universal pick, else level 0 taken up while nothing lies deeper.
    fn pick_universal(&self, runs: &[LevelSortedRun]) -> Option<CompactUnit> {
        let levels = self.levels.num_levels();
        self.opts.universal.pick(levels, runs).or_else(|| pick_level0_alone_up(levels, runs, self.opts.min_file_size()))
    }

    /// Executes one compaction unit here and now.
    fn run_unit(&mut self, unit: CompactUnit, full: bool) -> Result<()> {
        let Some(job) = self.unit_job(unit, full) else { return Ok(()) };
        let applied = job.run()?;
        self.apply_all(applied)
    }

    /// Whether compactions may run on compaction threads: merge-on-read writers without lookups. Writers that
    /// look up (deletion vectors, first-row, lookup changelog) compact in place, because their commits must
    /// wait for level 0 to be empty anyway (`lookup-wait`).
    fn compacts_in_background(&self) -> bool {
        !self.opts.force_up_level0 && compaction_pool().is_some()
    }

    /// After a flush: in lookup mode, compacts until nothing is picked; otherwise applies a finished
    /// background compaction, starts the next one if one is picked, and makes writes wait for compaction
    /// while the bucket has more than `num-sorted-run.stop-trigger` sorted runs (Paimon's back-pressure).
    fn trigger_compaction(&mut self) -> Result<()> {
        if self.opts.write_only {
            return Ok(());
        }
        if !self.compacts_in_background() {
            return self.compact_in(false, true);
        }
        self.finish_background(false)?;
        self.start_background()?;
        while self.levels.sorted_runs().len() > self.opts.stop_trigger {
            let started_here = self.in_flight.is_none() && self.start_background()?;
            if self.in_flight.is_none() {
                break;
            }
            if let Some(e) = self.finish_background(true)? {
                if started_here {
                    // Writes may not outrun a compaction that keeps failing.
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Starts a universal compaction on a compaction thread if none runs and one is picked.
    fn start_background(&mut self) -> Result<bool> {
        if self.in_flight.is_some() {
            return Ok(false);
        }
        let runs = self.levels.sorted_runs();
        let Some(unit) = self.pick_universal(&runs) else { return Ok(false) };
        let Some(job) = self.unit_job(unit, false) else { return Ok(false) };
        let Some(job) = BackgroundJob::start(job)? else { return Ok(false) };
        self.in_flight = Some(job);
        Ok(true)
    }

    /// Applies the running background compaction's result if it finished (with `wait`, waits for it). A
    /// compaction that failed changed nothing (it removed what it wrote): its error is logged and returned
    /// as `Some` for the caller to judge, since compaction is redone on the next trigger anyway.
    fn finish_background(&mut self, wait: bool) -> Result<Option<Error>> {
        let Some(job) = self.in_flight.take() else { return Ok(None) };
        match job.poll(wait)? {
            Polled::Running(job) => self.in_flight = Some(job),
            Polled::Finished(Ok(applied)) => self.apply_all(applied)?,
            Polled::Finished(Err(e)) => {
                tracing::warn!(dir = self.bucket_dir, error = %e, "background compaction failed; it will be retried");
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    /// Applies a finished unit's changes in order; rewritten files are new and uncommitted.
    fn apply_all(&mut self, applied: Vec<Applied>) -> Result<()> {
        for a in applied {
            self.increment.compact.changelog_files.extend(a.changelog);
            if !a.upgrade {
                self.uncommitted.extend(a.after.iter().map(|f| f.file_name.clone()));
            }
            self.apply(a.before, a.after, a.upgrade)?;
        }
        Ok(())
    }

    /// The job of compacting `unit` of the current levels (`None` when it holds no file).
    fn unit_job(&self, unit: CompactUnit, full: bool) -> Option<UnitJob> {
        let runs = self.levels.sorted_runs();
        let inputs: Vec<LevelSortedRun> = runs[..unit.run_count.min(runs.len())].to_vec();
        if inputs.iter().all(|r| r.files.is_empty()) {
            return None;
        }
        let output = unit.output_level;
        let highest_untouched = runs[unit.run_count.min(runs.len())..].iter().map(|r| r.level).max();
        // Retractions may go once nothing older can sit below the output.
        let drop_delete = output != 0 && (self.opts.deletion_vectors || highest_untouched.is_none() || full);
        let parts = self.flush_parts(&runs);
        Some(UnitJob {
            files: self.file_factory(),
            opts: self.opts.clone(),
            levels: self.levels.clone(),
            lookup: self.lookup.clone(),
            inputs,
            output,
            drop_delete,
            last_flush_alone: parts > 0 && unit.run_count == parts,
            cancel: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        })
    }

    /// Records a compaction: levels, deletion vectors, lookup caches, the commit increment, and removal of
    /// files that never got committed.
    fn apply(&mut self, before: Vec<DataFileMeta>, after: Vec<DataFileMeta>, upgrade: bool) -> Result<()> {
        self.levels.update(&before, after.clone())?;
        self.lookup.forget(&before, upgrade)?;
        let same = |x: &DataFileMeta, f: &DataFileMeta| x.file_name == f.file_name && x.level == f.level;
        for f in before {
            if self.increment.data.new_files.iter().any(|x| same(x, &f)) {
                // Flushed in this cycle: it stays a new file, so the commit's APPEND snapshot adds it and
                // streaming readers see the write, and its COMPACT snapshot deletes it again (Paimon's
                // `MergeTreeWriter` keeps such a file in both `newFiles` and `compactBefore`). It stays on
                // disk: the APPEND snapshot references it, expiration removes it later.
                self.increment.compact.compact_before.push(f);
            } else if let Some(i) = self.increment.compact.compact_after.iter().position(|x| same(x, &f)) {
                // An output of an earlier compaction of this cycle (or a file this cycle moved up a level),
                // compacted again: it disappears from the commit. A rewritten output is an intermediate file
                // no snapshot will ever name, so it goes from disk too; a moved file stays, since a snapshot
                // names it at its old level (it is in `compact_before` or `new_files` under that name).
                self.increment.compact.compact_after.remove(i);
                let named_elsewhere = self
                    .increment
                    .compact
                    .compact_before
                    .iter()
                    .chain(&self.increment.data.new_files)
                    .chain(&after)
                    .any(|x| x.file_name == f.file_name);
                if !named_elsewhere {
                    self.uncommitted.retain(|x| x != &f.file_name);
                    // Best effort: failing here would leave this record of the compaction half-applied;
                    // an undeleted file is an orphan that `strata clean` removes.
                    if let Err(e) = self.io.delete(&join(&self.bucket_dir, &f.file_name)) {
                        tracing::warn!(file = f.file_name, error = %e, "cannot delete an intermediate compaction output");
                    }
                }
            } else {
                self.increment.compact.compact_before.push(f);
            }
        }
        for a in after {
            if !self.increment.compact.compact_after.iter().any(|x| same(x, &a)) {
                self.increment.compact.compact_after.push(a);
            }
        }
        Ok(())
    }

    /// Rewrites files whose deleted ratio (deletion-vector cardinality / rows) is at least `threshold`
    /// (all files with a vector when 0), each into a new file at its level without the deleted rows.
    pub fn rewrite_files_with_deletions(&mut self, threshold: f64) -> Result<()> {
        self.finish_background(true)?;
        let candidates = self.lookup.files_past_delete_ratio(self.levels.all_files(), threshold)?;
        for f in candidates {
            let dv = self.lookup.vector_of(&f.file_name)?;
            let r = self.layout.file_ref(join(&self.bucket_dir, &f.file_name), f.clone(), dv)?;
            let reader = run_reader(self.io.clone(), &self.layout, vec![r], self.opts.batch_size);
            let mut w = self.file_writer(f.level, FileSource::Compact);
            for b in reader {
                w.write(&b?)?;
            }
            let after = w.close()?;
            for a in &after {
                self.uncommitted.push(a.file_name.clone());
            }
            self.apply(vec![f], after, false)?;
        }
        Ok(())
    }

    /// Flushes and compacts (in force-up mode until level 0 is empty, Paimon's `lookup-wait`), writes the
    /// bucket's deletion-vector index file if it changed, and hands over what this bucket contributes to
    /// the commit. The writer then starts a new commit cycle.
    pub fn prepare_commit(&mut self, new_index_file_name: impl FnOnce() -> String) -> Result<CommitIncrement> {
        self.flush()?;
        self.trigger_compaction()?;
        self.finish_prepare(new_index_file_name)
    }

    /// Like [`prepare_commit`](Self::prepare_commit), but also waits for a background compaction and
    /// compacts until nothing more is picked, so the commit leaves nothing running (what a batch job's last
    /// commit wants: Paimon's batch writers wait for compaction at commit too).
    pub fn prepare_commit_waiting(&mut self, new_index_file_name: impl FnOnce() -> String) -> Result<CommitIncrement> {
        self.flush()?;
        if !self.opts.write_only {
            self.compact(false)?;
        }
        self.finish_prepare(new_index_file_name)
    }

    fn finish_prepare(&mut self, new_index_file_name: impl FnOnce() -> String) -> Result<CommitIncrement> {
        if self.opts.write_only {
            return self.finish_cycle(new_index_file_name);
        }
        if self.opts.deletion_vectors && self.in_flight.is_none() {
            // Files whose deleted share reached `compaction.delete-ratio-threshold` are rewritten without the
            // deleted rows, so vectors do not grow without bound (after a running compaction, at a later
            // commit: it may be rewriting them).
            self.rewrite_files_with_deletions(self.opts.delete_ratio_threshold)?;
        }
        if self.opts.force_up_level0
            && !self.levels.level0().is_empty()
            && self.opts.force_up_mode == ForceUpMode::Radical
        {
            return Err(Error::invalid("compaction", "level 0 is not empty after a forced compaction"));
        }
        self.finish_cycle(new_index_file_name)
    }

    /// An explicit compaction's prepare: a full compaction or a delete-ratio rewrite
    /// ([`prepare_commit_after`](Self::prepare_commit_after)), else compaction until nothing more is picked
    /// ([`prepare_commit_waiting`](Self::prepare_commit_waiting)), `write-only` or not.
    pub fn prepare_compaction(
        &mut self,
        full: bool,
        delete_ratio: Option<f64>,
        new_index_file_name: impl FnOnce() -> String,
    ) -> Result<CommitIncrement> {
        if full || delete_ratio.is_some() {
            return self.prepare_commit_after(full, delete_ratio, new_index_file_name);
        }
        let write_only = std::mem::replace(&mut self.opts.write_only, false);
        let prepared = self.prepare_commit_waiting(new_index_file_name);
        self.opts.write_only = write_only;
        prepared
    }

    /// Like [`prepare_commit`](Self::prepare_commit) after a full compaction (or a delete-ratio rewrite).
    pub fn prepare_commit_after(
        &mut self,
        full: bool,
        delete_ratio: Option<f64>,
        new_index_file_name: impl FnOnce() -> String,
    ) -> Result<CommitIncrement> {
        self.flush()?;
        self.compact(false)?;
        if full {
            self.compact(true)?;
        }
        if let Some(t) = delete_ratio {
            self.rewrite_files_with_deletions(t)?;
        }
        self.finish_cycle(new_index_file_name)
    }

    fn finish_cycle(&mut self, new_index_file_name: impl FnOnce() -> String) -> Result<CommitIncrement> {
        let flushed = self.lookup.flush_index_file(self.io.as_ref(), &self.index_dir, new_index_file_name)?;
        // Taken only now: if writing the index failed, the increment stays for the next prepare to retry.
        let mut inc = std::mem::take(&mut self.increment);
        if let Some(flushed) = flushed {
            inc.dv_index_base = DvIndexBase::of(flushed.base.as_deref());
            if let Some(change) = flushed.change {
                // The maintainer knows which file the new one replaces: it travels with the message, so the
                // commit removes exactly that file.
                inc.compact.new_index_files.push(change.new_file);
                inc.compact.deleted_index_files.extend(change.old_file);
            }
        }
        inc.first_new_sequence = (self.next_seq > self.cycle_start_seq).then_some(self.cycle_start_seq);
        self.cycle_start_seq = self.next_seq;
        self.uncommitted.clear();
        Ok(inc)
    }

    /// Makes automatic compactions stop (or start again): with `write_only`, writes only add level-0 files, as
    /// with the `write-only` option; explicit compactions ([`compact`](Self::compact),
    /// [`prepare_commit_after`](Self::prepare_commit_after)) still run.
    pub fn set_write_only(&mut self, write_only: bool) {
        self.opts.write_only = write_only;
    }

    /// The bucket's deletion vectors (deletion-vector mode).
    pub fn with_deletion_vectors<T>(&self, f: impl FnOnce(Option<&BucketedDvMaintainer>) -> T) -> Result<T> {
        self.lookup.with_vectors(f)
    }
}

impl Drop for MergeTreeWriter {
    fn drop(&mut self) {
        // Files of a cycle that was never handed over (a failed prepare, a writer given up on) are
        // referenced by nothing: remove them, best effort, so a failed write leaves no orphans behind.
        let unclaimed: Vec<String> = self
            .uncommitted
            .iter()
            .chain(self.increment.data.changelog_files.iter().map(|f| &f.file_name))
            .chain(self.increment.compact.changelog_files.iter().map(|f| &f.file_name))
            .map(|name| join(&self.bucket_dir, name))
            .collect();
        remove_files(&self.io, &unclaimed);
        // Cancel a running compaction and wait for it (it stops within a batch), so that once the writer is
        // gone no file of an uncommitted compaction appears or remains.
        if let Some(job) = self.in_flight.take() {
            job.abandon();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_io::MemoryFileIO;
    use strata_spec::{BinaryRow, Datum};

    fn meta(name: &str, level: i32, min: i64, max: i64) -> DataFileMeta {
        let key = |k: i64| BinaryRow::from_datums(&[Some(Datum::BigInt(k))], &[DataType::bigint()]).unwrap();
        crate::test_util::file_meta(name, level, 100, key(min), key(max))
    }

    /// Within one commit cycle, a committed file moved up a level and then compacted with another file
    /// leaves one delete (at its committed level) and the compaction's output; it is not deleted from disk,
    /// since the last snapshot holds it. A file flushed in the cycle and compacted away stays a new file (the
    /// APPEND snapshot adds it) and is deleted by the compaction (the COMPACT snapshot): it stays on disk.
    #[test]
    fn a_committed_file_upgraded_then_compacted_in_one_cycle_is_deleted_once_at_its_committed_level() {
        let schema = crate::test_util::schema("v", DataType::bigint());
        let io: Arc<dyn FileIO> = Arc::new(MemoryFileIO::new());
        for f in ["c.parquet", "e.parquet"] {
            io.write(&join("/t/bucket-0", f), b"data").unwrap();
        }
        let c0 = meta("c.parquet", 0, 0, 5);
        let mut w = MergeTreeWriter::new(
            io.clone(),
            &schema,
            None,
            0,
            "/t/bucket-0".into(),
            "/t/index".into(),
            vec![c0.clone()],
            None,
        )
        .unwrap();
        // A flush in this cycle.
        let e0 = meta("e.parquet", 0, 6, 9);
        w.uncommitted.push(e0.file_name.clone());
        w.levels.update(&[], vec![e0.clone()]).unwrap();
        w.increment.data.new_files.push(e0.clone());
        // Upgrade c to level 3, then compact c@3 and e@0 into d@3.
        let c3 = meta("c.parquet", 3, 0, 5);
        w.apply(vec![c0.clone()], vec![c3.clone()], true).unwrap();
        let d3 = meta("d.parquet", 3, 0, 9);
        w.uncommitted.push(d3.file_name.clone());
        w.apply(vec![c3, e0.clone()], vec![d3.clone()], false).unwrap();
        let names = |v: &[DataFileMeta]| v.iter().map(|f| (f.file_name.clone(), f.level)).collect::<Vec<_>>();
        assert_eq!(names(&w.increment.compact.compact_before), names(&[c0, e0.clone()]));
        assert_eq!(names(&w.increment.compact.compact_after), names(&[d3]));
        assert_eq!(names(&w.increment.data.new_files), names(&[e0]));
        assert!(io.exists("/t/bucket-0/c.parquet").unwrap(), "the committed file was deleted");
        assert!(
            io.exists("/t/bucket-0/e.parquet").unwrap(),
            "the flushed file, which the APPEND snapshot adds, was deleted"
        );
    }
}
