//! The process-wide compaction threads, and a compaction running on them: merge-on-read writers start one
//! per bucket at a time and apply its result on a later write, or abandon it when they go away.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use strata_io::FileIO;
use strata_spec::{Error, Result};

use super::job::{discard_outputs, Applied, UnitJob};

/// Tasks run by the compaction threads.
type PoolTask = Box<dyn FnOnce() + Send>;

/// The process-wide compaction threads (one per core, started on first use), fed through a channel.
/// `None` when no thread could be started; writers then compact in place.
pub(crate) fn compaction_pool() -> Option<&'static crossbeam::channel::Sender<PoolTask>> {
    static POOL: std::sync::OnceLock<Option<crossbeam::channel::Sender<PoolTask>>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = crossbeam::channel::unbounded::<PoolTask>();
        let threads = strata_io::cores();
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
    state: Mutex<SlotState>,
    done: Condvar,
    cancel: Arc<AtomicBool>,
    /// Where the job writes, to remove its outputs when the writer abandons it.
    io: Arc<dyn FileIO>,
    bucket_dir: String,
}

enum SlotState {
    Running,
    Finished(Result<Vec<Applied>>),
    /// The writer went away first: the job removes what it wrote.
    Abandoned,
}

/// A compaction unit running on a compaction thread.
pub(crate) struct BackgroundJob(Arc<JobSlot>);

/// Where a background job is.
pub(crate) enum Polled {
    /// Still running.
    Running(BackgroundJob),
    /// Done: the changes to apply, or the error (a failed job removed what it wrote).
    Finished(Result<Vec<Applied>>),
}

fn panicked() -> Error {
    Error::invalid("compaction", "a compaction thread panicked")
}

impl BackgroundJob {
    /// Starts `job` on the compaction threads (`None` when there are none).
    pub(crate) fn start(job: UnitJob) -> Result<Option<BackgroundJob>> {
        let Some(pool) = compaction_pool() else { return Ok(None) };
        let slot = Arc::new(JobSlot {
            state: Mutex::new(SlotState::Running),
            done: Condvar::new(),
            cancel: job.cancel.clone(),
            io: job.files.io.clone(),
            bucket_dir: job.files.bucket_dir.clone(),
        });
        let theirs = slot.clone();
        let task: PoolTask = Box::new(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job.run()))
                .unwrap_or_else(|_| Err(panicked()));
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
        Ok(Some(BackgroundJob(slot)))
    }

    /// The job's result if it finished; with `wait`, waits for it.
    pub(crate) fn poll(self, wait: bool) -> Result<Polled> {
        let slot = &self.0;
        let mut state = slot.state.lock().map_err(|_| panicked())?;
        loop {
            match std::mem::replace(&mut *state, SlotState::Running) {
                SlotState::Finished(result) => return Ok(Polled::Finished(result)),
                SlotState::Running if wait => state = slot.done.wait(state).map_err(|_| panicked())?,
                SlotState::Running => {
                    drop(state);
                    return Ok(Polled::Running(self));
                }
                // Only `abandon` sets it, which consumes the job.
                SlotState::Abandoned => return Ok(Polled::Finished(Ok(Vec::new()))),
            }
        }
    }

    /// Cancels the job and waits for it (it stops within a batch), then removes what it wrote: once the
    /// writer is gone, no file of an uncommitted compaction appears or remains.
    pub(crate) fn abandon(self) {
        let slot = &self.0;
        slot.cancel.store(true, Ordering::Relaxed);
        let Ok(mut state) = slot.state.lock() else { return };
        while matches!(*state, SlotState::Running) {
            match slot.done.wait(state) {
                Ok(s) => state = s,
                Err(_) => return,
            }
        }
        if let SlotState::Finished(Ok(applied)) = std::mem::replace(&mut *state, SlotState::Abandoned) {
            discard_outputs(&slot.io, &slot.bucket_dir, &applied);
        }
    }
}
