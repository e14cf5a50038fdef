//! The runtime object-store requests run on, and the bridge from Strata's blocking calls to it.
//!
//! Strata's storage seam is synchronous: readers and writers run on their own threads and block on I/O.
//! Object-store clients are asynchronous, so every request is a task on one process-wide runtime, and the
//! calling thread waits for its answer on a channel. Many threads waiting at once are many requests in
//! flight, which is how scans hide the latency of a remote store. Waiting on a channel (rather than
//! `Runtime::block_on`) also works from a thread of another runtime, such as a query engine's.

use std::future::Future;
use std::sync::OnceLock;

use strata_spec::{Error, Result};

/// Worker threads of the I/O runtime: requests mostly wait on the network, so a few serve many.
const WORKER_THREADS: usize = 4;

fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(WORKER_THREADS)
                .thread_name("strata-io")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::io("object store runtime", std::io::Error::other(e.clone())))
}

/// Runs `request` on the I/O runtime and waits for its answer.
pub(crate) fn block_on<T: Send + 'static>(request: impl Future<Output = T> + Send + 'static) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime()?.spawn(async move {
        // The caller may have given up (it never does today); a lost answer is then nobody's business.
        let _ = tx.send(request.await);
    });
    rx.recv().map_err(|_| Error::io("object store", std::io::Error::other("a request task ended without an answer")))
}

/// Runs `task` on the I/O runtime without waiting for it (best-effort cleanup from a `drop`).
pub(crate) fn spawn_detached(task: impl Future<Output = ()> + Send + 'static) {
    match runtime() {
        Ok(rt) => {
            rt.spawn(task);
        }
        Err(e) => tracing::warn!(error = %e, "no runtime for a cleanup request"),
    }
}
