//! Progress of long operations on stderr: on a terminal a spinner line (after a second) with rows, bytes
//! and rates; otherwise a plain line every ten seconds (`STRATA_PROGRESS_INTERVAL_MS` changes the period),
//! so logs of long batch jobs show they are alive while short commands print nothing.
//!
//! Bytes read and written come from [`CountingFileIO`], which every table the CLI opens goes through.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata_io::{FileIO, FileSink, FileStatus, InspectSink};
use strata_spec::Result;

static TABLE_READ: AtomicU64 = AtomicU64::new(0);
static TABLE_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// A [`FileIO`] that counts the bytes it reads and writes (for progress lines).
#[derive(Debug)]
pub(crate) struct CountingFileIO<F>(pub F);

impl<F: FileIO> FileIO for CountingFileIO<F> {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        let data = self.0.read(path)?;
        TABLE_READ.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(data)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let data = self.0.read_range(path, offset, len)?;
        TABLE_READ.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(data)
    }

    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        let data = self.0.read_ranges(path, ranges)?;
        TABLE_READ.fetch_add(data.iter().map(|d| d.len() as u64).sum(), Ordering::Relaxed);
        Ok(data)
    }

    fn size(&self, path: &str) -> Result<u64> {
        self.0.size(path)
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.0.write(path, data)?;
        TABLE_WRITTEN.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn FileSink>>> {
        let Some(sink) = self.0.create_sink(path)? else { return Ok(None) };
        let count = |b: &[u8]| {
            TABLE_WRITTEN.fetch_add(b.len() as u64, Ordering::Relaxed);
        };
        Ok(Some(Box::new(InspectSink::new(sink, count))))
    }

    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        let created = self.0.create_if_absent(path, data)?;
        if created {
            TABLE_WRITTEN.fetch_add(data.len() as u64, Ordering::Relaxed);
        }
        Ok(created)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        self.0.exists(path)
    }
    fn file_exists(&self, path: &str) -> Result<bool> {
        self.0.file_exists(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        self.0.list(dir)
    }

    fn delete(&self, path: &str) -> Result<()> {
        self.0.delete(path)
    }

    fn delete_dir(&self, path: &str) -> Result<()> {
        self.0.delete_dir(path)
    }

    fn mkdirs(&self, path: &str) -> Result<()> {
        self.0.mkdirs(path)
    }
    fn request_counts(&self) -> Option<strata_io::RequestCounts> {
        self.0.request_counts()
    }
}

/// Counters a running operation updates and the progress line shows.
#[derive(Default)]
struct Counters {
    rows: AtomicU64,
    input_bytes: AtomicU64,
}

/// Progress of one operation, shown until [`Progress::finish`].
pub(crate) struct Progress {
    done: Arc<AtomicBool>,
    counters: Arc<Counters>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `label` with the table bytes read and written since now.
    pub(crate) fn start(label: &'static str) -> Self {
        Self::spawn(label, false)
    }

    /// Like [`Progress::start`], also showing the rows and input bytes given to [`Progress::add`].
    pub(crate) fn counting(label: &'static str) -> Self {
        Self::spawn(label, true)
    }

    /// Counts rows read from an input and the input bytes they took.
    pub(crate) fn add(&self, rows: u64, input_bytes: u64) {
        self.counters.rows.fetch_add(rows, Ordering::Relaxed);
        self.counters.input_bytes.fetch_add(input_bytes, Ordering::Relaxed);
    }

    fn spawn(label: &'static str, rows: bool) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let (d, c) = (done.clone(), counters.clone());
        let terminal = std::io::stderr().is_terminal();
        let period = std::env::var("STRATA_PROGRESS_INTERVAL_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(Duration::from_secs(10), |ms| Duration::from_millis(ms.max(1)));
        let thread = std::thread::spawn(move || {
            let line = Line { label, rows, start: Instant::now(), read0: read(), written0: written() };
            if terminal {
                show_on_terminal(&d, &c, &line);
            } else {
                print_periodically(&d, &c, &line, period);
            }
        });
        Progress { done, counters, thread: Some(thread) }
    }

    /// Stops showing progress (a terminal line is cleared).
    pub(crate) fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            // The thread only prints; a panic in it is no reason to fail the command.
            let _ = t.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

fn read() -> u64 {
    TABLE_READ.load(Ordering::Relaxed)
}

fn written() -> u64 {
    TABLE_WRITTEN.load(Ordering::Relaxed)
}

/// What a progress line says.
struct Line {
    label: &'static str,
    rows: bool,
    start: Instant,
    read0: u64,
    written0: u64,
}

impl Line {
    fn text(&self, c: &Counters) -> String {
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        let mut parts = Vec::new();
        if self.rows {
            let rows = c.rows.load(Ordering::Relaxed);
            let input = c.input_bytes.load(Ordering::Relaxed);
            parts.push(format!(
                "{rows} rows, {} of input ({:.0} rows/s, {}/s)",
                bytes(input),
                rows as f64 / secs,
                bytes((input as f64 / secs) as u64)
            ));
        }
        let (r, w) = (read().saturating_sub(self.read0), written().saturating_sub(self.written0));
        parts.push(format!(
            "table: {} read, {} written ({}/s)",
            bytes(r),
            bytes(w),
            bytes(((r + w) as f64 / secs) as u64)
        ));
        format!("{}: {}, {:.0}s", self.label, parts.join("; "), secs)
    }
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A spinner with the line, from one second in (quick commands show nothing), cleared at the end.
fn show_on_terminal(done: &AtomicBool, c: &Counters, line: &Line) {
    std::thread::park_timeout(Duration::from_secs(1));
    if done.load(Ordering::SeqCst) {
        return;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    while !done.load(Ordering::SeqCst) {
        bar.set_message(line.text(c));
        bar.tick();
        std::thread::park_timeout(Duration::from_millis(200));
    }
    bar.finish_and_clear();
}

/// A plain line every `period` (nothing for operations shorter than that).
fn print_periodically(done: &AtomicBool, c: &Counters, line: &Line, period: Duration) {
    let mut next = Instant::now() + period;
    while !done.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= next {
            eprintln!("strata: {}", line.text(c));
            next = now + period;
            continue;
        }
        std::thread::park_timeout(next - now);
    }
}
