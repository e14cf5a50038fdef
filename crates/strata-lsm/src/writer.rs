//! The merge-tree writer of one (partition, bucket) (Paimon's `MergeTreeWriter` with
//! `MergeTreeCompactManager`, `ForceUpLevel0Compaction` and the `LookupMergeTreeCompactRewriter`).
//!
//! Rows are buffered with fresh sequence numbers, sorted, merged and flushed to level-0 files. Compactions are
//! picked by the pure functions of [`crate::compaction`] and executed here. In deletion-vector mode level 0
//! is forced up after every flush; keys found only in level 0 are looked up in the deeper levels and their
//! older copies marked in those files' deletion vectors, and retractions never reach levels >= 1.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch};
use parking_lot_free::Shared;
use strata_dv::BucketedDvMaintainer;
use strata_format::bucket_read::{run_reader, DataFileRef};
use strata_format::merge::{LookupHook, LookupResult, MergeIterator, Run};
use strata_format::merge_function::MergeConfig;
use strata_format::{FileFormat, KeyValueLayout, KvFileWriter, WriterConfig};
use strata_io::{join, FileIO};
use strata_spec::options::{LookupCompactMode, MergeEngine};
use strata_spec::{DataFileMeta, DataType, Error, FileSource, IndexFileMeta, Result, TableSchema, TypeRoot};

use crate::compaction::{
    pick_force_up_level0, pick_full, plan_task, CompactUnit, ForceUpMode, TaskFile, TaskStep, UniversalCompaction,
};
use crate::levels::{LevelSortedRun, Levels};
use crate::lookup::{LookupCacheOptions, LookupLevels};
use crate::write_buffer::{SpillSettings, WriteBuffer};

/// A tiny `Arc<Mutex<T>>` on std, so the lookup hook and the writer share the bucket's lookup state.
mod parking_lot_free {
    use std::sync::{Arc, Mutex, MutexGuard};

    use strata_spec::{Error, Result};

    pub struct Shared<T>(Arc<Mutex<T>>);

    impl<T> Clone for Shared<T> {
        fn clone(&self) -> Self {
            Shared(self.0.clone())
        }
    }

    impl<T> Shared<T> {
        pub fn new(v: T) -> Self {
            Shared(Arc::new(Mutex::new(v)))
        }

        pub fn lock(&self) -> Result<MutexGuard<'_, T>> {
            self.0.lock().map_err(|_| Error::invalid("bucket writer", "a previous operation panicked"))
        }
    }
}

/// How a bucket writer behaves (from the table options).
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// `num-levels`.
    pub num_levels: usize,
    /// Universal compaction parameters.
    pub universal: UniversalCompaction,
    /// `deletion-vectors.enabled`.
    pub deletion_vectors: bool,
    /// Force level 0 up after writes (deletion vectors, `changelog-producer = lookup`, first-row).
    pub force_up_level0: bool,
    /// `lookup-compact`.
    pub force_up_mode: ForceUpMode,
    /// `write-buffer-size` in bytes.
    pub write_buffer_size: u64,
    /// `target-file-size`.
    pub target_file_size: u64,
    /// `file.format`.
    pub format: FileFormat,
    /// `file.compression`.
    pub compression: String,
    /// `compaction.delete-ratio-threshold`.
    pub delete_ratio_threshold: f64,
    /// The schema id written into file metadata.
    pub schema_id: i64,
    /// The merge engine configuration.
    pub merge: MergeConfig,
    /// Rows per batch in merges.
    pub batch_size: usize,
    /// Spilling of a full write buffer (`write-buffer-spillable`), `None` when it flushes instead.
    pub spill: Option<SpillSettings>,
    /// Bounds of the lookup index cache.
    pub lookup_cache: LookupCacheOptions,
    /// `num-sorted-run.stop-trigger`: past this many sorted runs, writes wait for compaction.
    pub stop_trigger: usize,
    /// `changelog-producer = input`: every written row also goes to changelog files.
    pub changelog_input: bool,
    /// `changelog-producer = lookup`: compactions of level 0 produce the changelog.
    pub changelog_lookup: bool,
}

impl WriterOptions {
    /// Options of `schema`.
    pub fn from_schema(schema: &TableSchema) -> Result<Self> {
        let o = schema.core_options();
        let dv = o.deletion_vectors_enabled()?;
        let engine = o.merge_engine()?;
        let lookup = dv
            || o.changelog_producer()? == strata_spec::options::ChangelogProducer::Lookup
            || engine == MergeEngine::FirstRow;
        let trigger = o.num_sorted_run_compaction_trigger()?;
        let mode = match o.lookup_compact()? {
            LookupCompactMode::Radical => ForceUpMode::Radical,
            LookupCompactMode::Gentle => {
                let interval = match o.get(strata_spec::options::LOOKUP_COMPACT_MAX_INTERVAL) {
                    Some(v) => v.trim().parse::<u32>().map_err(|_| {
                        Error::invalid("option 'lookup-compact.max-interval'", format!("cannot parse '{v}'"))
                    })?,
                    None => trigger * 2,
                };
                ForceUpMode::Gentle { max_interval: interval.max(trigger) }
            }
        };
        Ok(WriterOptions {
            num_levels: o.num_levels()? as usize,
            universal: UniversalCompaction {
                max_size_amp: o.max_size_amplification_percent()?,
                size_ratio: o.size_ratio()?,
                num_run_compaction_trigger: trigger as usize,
            },
            deletion_vectors: dv,
            force_up_level0: lookup,
            force_up_mode: mode,
            write_buffer_size: o.write_buffer_size()?,
            target_file_size: o.target_file_size()?,
            format: FileFormat::from_option(&o.file_format())?,
            compression: o.file_compression(),
            delete_ratio_threshold: o.delete_ratio_threshold()?,
            schema_id: schema.id,
            merge: MergeConfig::from_schema(schema)?,
            batch_size: o.read_batch_size()?.unwrap_or(strata_format::reader::DEFAULT_BATCH_SIZE),
            spill: if o.write_buffer_spillable()? {
                Some(SpillSettings {
                    compression: o.spill_compression()?,
                    max_disk_size: o.write_buffer_spill_max_disk_size()?,
                    max_runs: o.local_sort_max_num_file_handles()?,
                })
            } else {
                None
            },
            stop_trigger: o.num_sorted_run_stop_trigger()? as usize,
            changelog_input: o.changelog_producer()? == strata_spec::options::ChangelogProducer::Input,
            changelog_lookup: o.changelog_producer()? == strata_spec::options::ChangelogProducer::Lookup,
            lookup_cache: LookupCacheOptions {
                max_memory: o.lookup_cache_max_memory_size()?,
                max_disk: o.lookup_cache_max_disk_size()?,
                bloom_fpp: o.lookup_bloom_filter_fpp()?,
            },
        })
    }
}

/// What one bucket contributes to a commit.
#[derive(Debug, Clone, Default)]
pub struct CommitIncrement {
    /// New level-0 files still live.
    pub new_files: Vec<DataFileMeta>,
    /// Committed files compacted away.
    pub compact_before: Vec<DataFileMeta>,
    /// Files compactions produced that are live.
    pub compact_after: Vec<DataFileMeta>,
    /// The bucket's new deletion-vector index file.
    pub new_index_files: Vec<IndexFileMeta>,
    /// Changelog files of this cycle's flushes (`changelog-producer = input`): part of the APPEND snapshot.
    pub changelog_files: Vec<DataFileMeta>,
    /// Changelog files of this cycle's compactions (`changelog-producer = lookup`): part of the COMPACT
    /// snapshot, like Paimon's `CompactIncrement.changelogFiles`.
    pub compact_changelog_files: Vec<DataFileMeta>,
    /// In deletion-vector mode: the bucket's DV index file this cycle started from (`None` inside when the
    /// bucket had none). The commit refuses to go ahead if another commit replaced it meanwhile, since this
    /// writer's compactions and vectors were computed against it.
    pub dv_index_base: Option<Option<String>>,
    /// The first sequence number this cycle gave a written row (`None` when the cycle wrote none). The
    /// commit refuses the increment when the bucket holds a row from another writer at or above it: this
    /// writer's rows would then sort below rows that committed earlier, and be shadowed by them.
    pub first_new_sequence: Option<i64>,
}

impl CommitIncrement {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.new_files.is_empty()
            && self.compact_before.is_empty()
            && self.compact_after.is_empty()
            && self.new_index_files.is_empty()
            && self.changelog_files.is_empty()
            && self.compact_changelog_files.is_empty()
    }
}

/// The state the lookup hook shares with the writer.
struct LookupState {
    lookup: LookupLevels,
    dv: Option<BucketedDvMaintainer>,
}

struct Hook {
    state: Shared<LookupState>,
    levels: Levels,
    start_level: i32,
}

impl LookupHook for Hook {
    fn lookup(&mut self, key: &[u8]) -> Result<Option<LookupResult>> {
        let mut st = self.state.lock()?;
        let st = &mut *st;
        let Some(hit) = st.lookup.lookup(&self.levels, self.start_level, key, st.dv.as_ref())? else {
            return Ok(None);
        };
        if let Some(dv) = st.dv.as_mut() {
            dv.notify_new_deletion(&hit.file_name, hit.position)?;
        }
        Ok(Some(LookupResult { record: hit.record }))
    }
}

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
    state: Shared<LookupState>,
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
    in_flight: Option<Arc<JobSlot>>,
}

impl MergeTreeWriter {
    /// A writer over the bucket's committed `files` and deletion vectors `dv` (in deletion-vector mode). Files
    /// written under older schemas are read through `history`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        io: Arc<dyn FileIO>,
        schema: &TableSchema,
        history: Option<Arc<dyn strata_format::evolution::SchemaHistory>>,
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
        let lookup =
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
            state: Shared::new(LookupState { lookup, dv }),
            buffer: WriteBuffer::new(layout.clone(), spill),
            layout,
            trigger_count: 0,
            increment: CommitIncrement::default(),
            bucket,
            uncommitted: Vec::new(),
            in_flight: None,
        })
    }

    /// The bucket number (from the bucket directory name).
    pub fn bucket(&self) -> i32 {
        self.bucket
    }

    /// The writer's current levels.
    pub fn levels(&self) -> &Levels {
        &self.levels
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
        if self.buffer.memory_bytes() < self.opts.write_buffer_size {
            return Ok(());
        }
        let spilled = self.buffer.try_spill(self.opts.batch_size).unwrap_or_else(|e| {
            tracing::warn!(dir = self.bucket_dir, error = %e, "spilling the write buffer failed; flushing to level 0");
            false
        });
        if spilled {
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
                let mut cw = self.file_factory().changelog_writer(&self.opts);
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
        let mut w = self.file_writer(0, FileSource::Append);
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
        self.increment.changelog_files.extend(changelog);
        for f in &files {
            self.uncommitted.push(f.file_name.clone());
        }
        self.levels.update(&[], files.clone())?;
        self.increment.new_files.extend(files);
        Ok(())
    }

    /// Runs compactions until nothing more is picked (in force-up mode: until level 0 is empty). With `full`,
    /// compacts every run into the max level once (and so leaves no deletion vectors).
    pub fn compact(&mut self, full: bool) -> Result<()> {
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
                    self.trigger_count,
                    self.levels.num_levels(),
                    &runs,
                )
            } else {
                self.opts.universal.pick(self.levels.num_levels(), &runs)
            };
            let Some(unit) = unit else { break };
            self.run_unit(unit, false)?;
        }
        Ok(())
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
        if !self.compacts_in_background() {
            return self.compact(false);
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
        let Some(unit) = self.opts.universal.pick(self.levels.num_levels(), &runs) else { return Ok(false) };
        let Some(job) = self.unit_job(unit, false) else { return Ok(false) };
        let Some(pool) = compaction_pool() else { return Ok(false) };
        let slot = Arc::new(JobSlot {
            state: std::sync::Mutex::new(SlotState::Running),
            done: std::sync::Condvar::new(),
            cancel: job.cancel.clone(),
        });
        let theirs = slot.clone();
        let task: PoolTask = Box::new(move || {
            let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run())) {
                Ok(r) => r,
                Err(_) => Err(Error::invalid("compaction", "a compaction thread panicked")),
            };
            let Ok(mut state) = theirs.state.lock() else { return };
            if matches!(*state, SlotState::Abandoned) {
                // The writer is gone: nobody will commit these files.
                if let Ok(applied) = &result {
                    discard_outputs(&job.files.io, &job.files.bucket_dir, applied);
                }
            } else {
                *state = SlotState::Finished(result);
                theirs.done.notify_all();
            }
        });
        pool.send(task).map_err(|_| Error::invalid("compaction", "the compaction threads are gone"))?;
        self.in_flight = Some(slot);
        Ok(true)
    }

    /// Applies the running background compaction's result if it finished (with `wait`, waits for it). A
    /// compaction that failed changed nothing (it removed what it wrote): its error is logged and returned
    /// as `Some` for the caller to judge, since compaction is redone on the next trigger anyway.
    fn finish_background(&mut self, wait: bool) -> Result<Option<Error>> {
        let Some(slot) = self.in_flight.take() else { return Ok(None) };
        let poisoned = || Error::invalid("compaction", "a compaction thread panicked");
        let mut state = slot.state.lock().map_err(|_| poisoned())?;
        loop {
            match std::mem::replace(&mut *state, SlotState::Running) {
                SlotState::Finished(Ok(applied)) => {
                    drop(state);
                    self.apply_all(applied)?;
                    return Ok(None);
                }
                SlotState::Finished(Err(e)) => {
                    tracing::warn!(dir = self.bucket_dir, error = %e, "background compaction failed; it will be retried");
                    return Ok(Some(e));
                }
                SlotState::Running if wait => state = slot.done.wait(state).map_err(|_| poisoned())?,
                SlotState::Running => {
                    drop(state);
                    self.in_flight = Some(slot);
                    return Ok(None);
                }
                SlotState::Abandoned => return Ok(None),
            }
        }
    }

    /// Applies a finished unit's changes in order; rewritten files are new and uncommitted.
    fn apply_all(&mut self, applied: Vec<Applied>) -> Result<()> {
        for a in applied {
            self.increment.compact_changelog_files.extend(a.changelog);
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
        Some(UnitJob {
            files: self.file_factory(),
            opts: self.opts.clone(),
            levels: self.levels.clone(),
            state: self.state.clone(),
            inputs,
            output,
            drop_delete,
            cancel: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        })
    }

    /// Records a compaction: levels, deletion vectors, lookup caches, the commit increment, and removal of
    /// files that never got committed.
    fn apply(&mut self, before: Vec<DataFileMeta>, after: Vec<DataFileMeta>, upgrade: bool) -> Result<()> {
        self.levels.update(&before, after.clone())?;
        let mut st = self.state.lock()?;
        for f in &before {
            st.lookup.drop_file(&f.file_name);
            if !upgrade {
                if let Some(dv) = st.dv.as_mut() {
                    dv.remove_deletion_vector_of(&f.file_name);
                }
            }
        }
        drop(st);
        let same = |x: &DataFileMeta, f: &DataFileMeta| x.file_name == f.file_name && x.level == f.level;
        for f in before {
            if self.increment.new_files.iter().any(|x| same(x, &f)) {
                // Flushed in this cycle: it stays a new file, so the commit's APPEND snapshot adds it and
                // streaming readers see the write, and its COMPACT snapshot deletes it again (Paimon's
                // `MergeTreeWriter` keeps such a file in both `newFiles` and `compactBefore`). It stays on
                // disk: the APPEND snapshot references it, expiration removes it later.
                self.increment.compact_before.push(f);
            } else if let Some(i) = self.increment.compact_after.iter().position(|x| same(x, &f)) {
                // An output of an earlier compaction of this cycle (or a file this cycle moved up a level),
                // compacted again: it disappears from the commit. A rewritten output is an intermediate file
                // no snapshot will ever name, so it goes from disk too; a moved file stays, since a snapshot
                // names it at its old level (it is in `compact_before` or `new_files` under that name).
                self.increment.compact_after.remove(i);
                let named_elsewhere = self
                    .increment
                    .compact_before
                    .iter()
                    .chain(&self.increment.new_files)
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
                self.increment.compact_before.push(f);
            }
        }
        for a in after {
            if !self.increment.compact_after.iter().any(|x| same(x, &a)) {
                self.increment.compact_after.push(a);
            }
        }
        Ok(())
    }

    /// Rewrites files whose deleted ratio (deletion-vector cardinality / rows) is at least `threshold`
    /// (all files with a vector when 0), each into a new file at its level without the deleted rows.
    pub fn rewrite_files_with_deletions(&mut self, threshold: f64) -> Result<()> {
        let candidates: Vec<DataFileMeta> = {
            let st = self.state.lock()?;
            let Some(dv) = st.dv.as_ref() else { return Ok(()) };
            self.levels
                .all_files()
                .into_iter()
                .filter(|f| f.level > 0)
                .filter(|f| {
                    dv.deletion_vector_of(&f.file_name).is_some_and(|d| {
                        !d.is_empty() && d.cardinality() as f64 >= threshold * f.row_count.max(1) as f64
                    })
                })
                .collect()
        };
        for f in candidates {
            let dv = self
                .state
                .lock()?
                .dv
                .as_ref()
                .and_then(|d| d.deletion_vector_of(&f.file_name))
                .map(|d| d.boxed_clone());
            let r = self.layout.file_ref(join(&self.bucket_dir, &f.file_name), f.clone(), dv.map(Arc::from))?;
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
        self.compact(false)?;
        self.finish_prepare(new_index_file_name)
    }

    fn finish_prepare(&mut self, new_index_file_name: impl FnOnce() -> String) -> Result<CommitIncrement> {
        if self.opts.deletion_vectors {
            // Files whose deleted share reached `compaction.delete-ratio-threshold` are rewritten without the
            // deleted rows, so vectors do not grow without bound.
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
        let mut st = self.state.lock()?;
        let mut dv_base = None;
        let mut new_index = None;
        if let Some(dv) = st.dv.as_mut() {
            dv_base = Some(dv.current_index_file().map(|f| f.file_name.clone()));
            new_index = dv.write_index_file(self.io.as_ref(), &self.index_dir, &new_index_file_name())?;
        }
        drop(st);
        // Taken only now: if writing the index failed, the increment stays for the next prepare to retry.
        let mut inc = std::mem::take(&mut self.increment);
        inc.dv_index_base = dv_base;
        inc.new_index_files.extend(new_index.map(|change| change.new_file));
        inc.first_new_sequence = (self.next_seq > self.cycle_start_seq).then_some(self.cycle_start_seq);
        self.cycle_start_seq = self.next_seq;
        self.uncommitted.clear();
        Ok(inc)
    }

    /// The bucket's deletion vectors (deletion-vector mode).
    pub fn with_deletion_vectors<T>(&self, f: impl FnOnce(Option<&BucketedDvMaintainer>) -> T) -> Result<T> {
        let st = self.state.lock()?;
        Ok(f(st.dv.as_ref()))
    }
}

/// Makes the bucket's data-file writers (names from the writer's prefix and counter); cloneable into a
/// compaction thread.
#[derive(Clone)]
struct FileFactory {
    io: Arc<dyn FileIO>,
    layout: Arc<KeyValueLayout>,
    bucket_dir: String,
    /// `<uuid>-`: what names this writer's files apart from other writers'.
    prefix: String,
    counter: Arc<std::sync::atomic::AtomicU64>,
}

impl FileFactory {
    /// A writer of data files (`data-<uuid>-<n>`) at `level`.
    fn writer(&self, opts: &WriterOptions, level: i32, source: FileSource) -> KvFileWriter {
        self.named_writer("data-", opts, level, source)
    }

    /// A writer of changelog files (`changelog-<uuid>-<n>`, level 0), as Paimon names them.
    fn changelog_writer(&self, opts: &WriterOptions) -> KvFileWriter {
        self.named_writer("changelog-", opts, 0, FileSource::Append)
    }

    fn named_writer(&self, kind: &str, opts: &WriterOptions, level: i32, source: FileSource) -> KvFileWriter {
        let prefix = format!("{kind}{}", self.prefix);
        let ext = opts.format.extension();
        let counter = self.counter.clone();
        KvFileWriter::new(
            self.io.clone(),
            self.bucket_dir.clone(),
            Box::new(move || format!("{prefix}{}.{ext}", counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed))),
            self.layout.clone(),
            WriterConfig {
                format: opts.format,
                compression: opts.compression.clone(),
                target_file_size: opts.target_file_size,
                schema_id: opts.schema_id,
                level,
                file_source: source,
            },
        )
    }

    fn path(&self, f: &DataFileMeta) -> String {
        join(&self.bucket_dir, &f.file_name)
    }
}

/// One change a compaction makes to the levels.
#[derive(Debug)]
struct Applied {
    before: Vec<DataFileMeta>,
    after: Vec<DataFileMeta>,
    /// Changelog files the rewrite produced (`changelog-producer = lookup`).
    changelog: Vec<DataFileMeta>,
    /// `after` is `before` moved up a level, not rewritten.
    upgrade: bool,
}

/// A compaction unit with everything it needs, so that it can run on a compaction thread. It reads the
/// levels as they were when it was made: lookups only visit levels below its output, which nothing else
/// changes while it runs, and its results are applied to the writer's levels afterwards.
struct UnitJob {
    files: FileFactory,
    opts: WriterOptions,
    levels: Levels,
    state: Shared<LookupState>,
    inputs: Vec<LevelSortedRun>,
    output: i32,
    drop_delete: bool,
    /// Set when the writer goes away: the job stops at the next batch and removes what it wrote.
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

impl UnitJob {
    fn check_cancelled(&self) -> Result<()> {
        if self.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::invalid("compaction", "cancelled: the bucket writer was closed"));
        }
        Ok(())
    }

    /// Runs the unit; on failure the files it wrote are removed again.
    fn run(&self) -> Result<Vec<Applied>> {
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
        let min_file_size = (self.opts.target_file_size / 10 * 7) as i64;
        for step in plan_task(&task_files, min_file_size, |a, b| strata_spec::binary_row::compare_rows(a, b)) {
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
        let has_dv = self.state.lock()?.dv.as_ref().and_then(|d| d.deletion_vector_of(&f.file_name)).is_some();
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
        if self.opts.deletion_vectors && f.level == 0 {
            // Its keys still supersede older copies below: mark those.
            self.mark_older_copies(f)?;
        }
        let mut moved = f.clone();
        moved.level = self.output;
        Ok(Some(Applied { before: vec![f.clone()], after: vec![moved], changelog: Vec::new(), upgrade: true }))
    }

    fn hook(&self) -> Hook {
        Hook { state: self.state.clone(), levels: self.levels.clone(), start_level: self.output + 1 }
    }

    /// Merges `sections` (disjoint, in key order; each a list of (level, files) sorted runs) into new files
    /// at the output level, running level-0 keys through the lookup wrapper where older copies may sit deeper.
    fn rewrite(&self, sections: Vec<Vec<(i32, Vec<DataFileMeta>)>>) -> Result<Applied> {
        let lookup_engine = self.opts.deletion_vectors || self.opts.merge.engine == MergeEngine::FirstRow;
        let changelog_mode = self.opts.changelog_lookup;
        let mut w = self.files.writer(&self.opts, self.output, FileSource::Compact);
        let mut cw = changelog_mode.then(|| self.files.changelog_writer(&self.opts));
        let mut before = Vec::new();
        for runs in sections {
            let dvs = self.state.lock()?;
            let refs: Vec<Vec<DataFileRef>> = runs
                .iter()
                .map(|(_, files)| {
                    files
                        .iter()
                        .map(|f| {
                            let dv = dvs
                                .dv
                                .as_ref()
                                .and_then(|d| d.deletion_vector_of(&f.file_name))
                                .map(|d| Arc::from(d.boxed_clone()));
                            self.files.layout.file_ref(self.files.path(f), f.clone(), dv)
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<_>>()?;
            drop(dvs);
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
        let column = vec![(strata_format::kv::VALUE_KIND.to_string(), DataType::not_null(TypeRoot::TinyInt))];
        for b in
            strata_format::bucket_read::open_data_file(self.files.io.as_ref(), &r, column, false, self.opts.batch_size)?
        {
            self.check_cancelled()?;
            if strata_format::verify::has_retraction(&b?, 0, &r.path)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn mark_older_copies(&self, file: &DataFileMeta) -> Result<()> {
        if self.output >= self.levels.max_level() {
            return Ok(());
        }
        let layout = &self.files.layout;
        let r = layout.file_ref(self.files.path(file), file.clone(), None)?;
        let columns = strata_format::bucket_read::file_columns(layout);
        let keys = crate::lookup::KeyEncoder::new(layout)?;
        let mut hook = self.hook();
        for b in strata_format::bucket_read::open_data_file(
            self.files.io.as_ref(),
            &r,
            columns,
            false,
            self.opts.batch_size,
        )? {
            self.check_cancelled()?;
            let b = b?;
            let rows = keys.rows(&b).map_err(|e| Error::corrupt(e.to_string()))?;
            for i in 0..rows.num_rows() {
                hook.lookup(rows.row(i).as_ref())?;
            }
        }
        Ok(())
    }
}

/// Removes files nothing references (best effort: an unreferenced file is an orphan that `strata clean`
/// removes later).
fn remove_files(io: &Arc<dyn FileIO>, paths: &[String]) {
    for p in paths {
        let _ = io.delete(p);
    }
}

/// Removes the files compactions wrote but whose results are not going to be applied (moved files stay).
fn discard_outputs(io: &Arc<dyn FileIO>, bucket_dir: &str, applied: &[Applied]) {
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

/// Tasks run by the compaction threads.
type PoolTask = Box<dyn FnOnce() + Send>;

/// The process-wide compaction threads (one per core, started on first use), fed through a channel.
/// `None` when no thread could be started; writers then compact in place.
fn compaction_pool() -> Option<&'static crossbeam::channel::Sender<PoolTask>> {
    static POOL: std::sync::OnceLock<Option<crossbeam::channel::Sender<PoolTask>>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = crossbeam::channel::unbounded::<PoolTask>();
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let started = (0..threads)
            .filter(|i| {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("strata-compaction-{i}"))
                    .spawn(move || {
                        for task in rx {
                            task();
                        }
                    })
                    .is_ok()
            })
            .count();
        (started > 0).then_some(tx)
    })
    .as_ref()
}

/// Where a background compaction leaves its result.
struct JobSlot {
    state: std::sync::Mutex<SlotState>,
    done: std::sync::Condvar,
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

enum SlotState {
    Running,
    Finished(Result<Vec<Applied>>),
    /// The writer went away first: the job removes what it wrote.
    Abandoned,
}

impl Drop for MergeTreeWriter {
    fn drop(&mut self) {
        // Files of a cycle that was never handed over (a failed prepare, a writer given up on) are
        // referenced by nothing: remove them, best effort, so a failed write leaves no orphans behind.
        let unclaimed: Vec<String> = self
            .uncommitted
            .iter()
            .chain(self.increment.changelog_files.iter().map(|f| &f.file_name))
            .chain(self.increment.compact_changelog_files.iter().map(|f| &f.file_name))
            .map(|name| join(&self.bucket_dir, name))
            .collect();
        remove_files(&self.io, &unclaimed);
        // Cancel a running compaction and wait for it (it stops within a batch), so that once the writer is
        // gone no file of an uncommitted compaction appears or remains.
        if let Some(slot) = self.in_flight.take() {
            slot.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            let Ok(mut state) = slot.state.lock() else { return };
            while matches!(*state, SlotState::Running) {
                match slot.done.wait(state) {
                    Ok(s) => state = s,
                    Err(_) => return,
                }
            }
            if let SlotState::Finished(Ok(applied)) = std::mem::replace(&mut *state, SlotState::Abandoned) {
                discard_outputs(&self.io, &self.bucket_dir, &applied);
            }
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
        w.increment.new_files.push(e0.clone());
        // Upgrade c to level 3, then compact c@3 and e@0 into d@3.
        let c3 = meta("c.parquet", 3, 0, 5);
        w.apply(vec![c0.clone()], vec![c3.clone()], true).unwrap();
        let d3 = meta("d.parquet", 3, 0, 9);
        w.uncommitted.push(d3.file_name.clone());
        w.apply(vec![c3, e0.clone()], vec![d3.clone()], false).unwrap();
        let names = |v: &[DataFileMeta]| v.iter().map(|f| (f.file_name.clone(), f.level)).collect::<Vec<_>>();
        assert_eq!(names(&w.increment.compact_before), names(&[c0, e0.clone()]));
        assert_eq!(names(&w.increment.compact_after), names(&[d3]));
        assert_eq!(names(&w.increment.new_files), names(&[e0]));
        assert!(io.exists("/t/bucket-0/c.parquet").unwrap(), "the committed file was deleted");
        assert!(
            io.exists("/t/bucket-0/e.parquet").unwrap(),
            "the flushed file, which the APPEND snapshot adds, was deleted"
        );
    }
}
