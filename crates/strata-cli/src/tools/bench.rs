//! `strata bench`: the same workload into a deletion-vector table and a merge-on-read table, measured side
//! by side, with an arrow-rs scan of the deletion-vector table's parquet files (deletion vectors ignored) as
//! the physical limit.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata_format::{CmpOp, Predicate};
use strata_io::{FileIO, FileStatus, LocalFileIO};
use strata_spec::{DataType, Datum, Error, Result, TableSchema};
use strata_table::{get, ReadBuilder, Table, TableQuery, TableWriter};

/// `strata bench`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// Rows loaded first.
    #[arg(long, default_value_t = 2_000_000)]
    rows: usize,
    /// Update rounds after the load (10% of the keys each, 10% of them deletes).
    #[arg(long, default_value_t = 4)]
    rounds: usize,
    /// Buckets per table.
    #[arg(long, default_value_t = 4)]
    buckets: u32,
    /// Where the chart goes; the tables go into a fresh subdirectory that the run removes.
    #[arg(long, default_value = "strata-bench")]
    dir: String,
    /// Put the tables under this location instead (a local path or a store URI such as
    /// s3://bucket/prefix, reached with --store-option and the AWS_* environment); request counts per
    /// operation are reported for stores that count them.
    #[arg(long)]
    warehouse: Option<String>,
    /// A table option for both tables (KEY=VALUE, repeatable), e.g.
    /// strata.lookup-compact.size-ratio=true for Paimon's forced level-0 pick.
    #[arg(long = "table-option", value_name = "KEY=VALUE")]
    table_options: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `strata bench`, printing the report as JSON with `--json` (the chart goes under `--dir`).
pub(crate) fn main(ctx: &crate::context::Context, args: BenchArgs) -> Result<()> {
    let BenchArgs { rows, rounds, buckets, dir, warehouse, table_options, json } = args;
    if rows == 0 || buckets == 0 {
        return Err(Error::invalid("bench", "--rows and --buckets must be positive"));
    }
    let warehouse = warehouse.as_deref().map(crate::context::location).transpose()?;
    let store = match &warehouse {
        Some(w) => Some(BenchStore { warehouse: w, writer: ctx.io(), reader: ctx.reader_io()? }),
        None => None,
    };
    let options = crate::context::parse_options("--table-option", &table_options)?.into_iter().collect();
    let workload = Workload { rows, rounds, options };
    let report = run(&crate::context::absolute(&dir), store, &workload, buckets, json)?;
    if json {
        println!("{report}");
    }
    Ok(())
}

/// Counts bytes written through it.
#[derive(Debug)]
struct CountingIO {
    inner: Arc<dyn FileIO>,
    written: Arc<AtomicU64>,
}

impl FileIO for CountingIO {
    fn read(&self, path: &str) -> Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.inner.read_range(path, offset, len)
    }
    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> Result<Vec<Vec<u8>>> {
        self.inner.read_ranges(path, ranges)
    }
    fn size(&self, path: &str) -> Result<u64> {
        self.inner.size(path)
    }
    fn write(&self, path: &str, data: &[u8]) -> Result<()> {
        self.written.fetch_add(data.len() as u64, Ordering::Relaxed);
        self.inner.write(path, data)
    }
    fn create_sink(&self, path: &str) -> Result<Option<Box<dyn strata_io::FileSink>>> {
        let Some(sink) = self.inner.create_sink(path)? else { return Ok(None) };
        let written = self.written.clone();
        let count = move |b: &[u8]| {
            written.fetch_add(b.len() as u64, Ordering::Relaxed);
        };
        Ok(Some(Box::new(strata_io::InspectSink::new(sink, count))))
    }
    fn create_if_absent(&self, path: &str, data: &[u8]) -> Result<bool> {
        self.written.fetch_add(data.len() as u64, Ordering::Relaxed);
        self.inner.create_if_absent(path, data)
    }
    fn exists(&self, path: &str) -> Result<bool> {
        self.inner.exists(path)
    }
    fn file_exists(&self, path: &str) -> Result<bool> {
        self.inner.file_exists(path)
    }
    fn list(&self, dir: &str) -> Result<Vec<FileStatus>> {
        self.inner.list(dir)
    }
    fn delete(&self, path: &str) -> Result<()> {
        self.inner.delete(path)
    }
    fn delete_dir(&self, path: &str) -> Result<()> {
        self.inner.delete_dir(path)
    }
    fn mkdirs(&self, path: &str) -> Result<()> {
        self.inner.mkdirs(path)
    }
    fn request_counts(&self) -> Option<strata_io::RequestCounts> {
        self.inner.request_counts()
    }
}

/// Peak resident memory since the last reset, in MiB (Linux; 0 elsewhere).
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

/// CPU time (user + system) of this process so far, in seconds (Linux; 0 elsewhere): what the benchmarks
/// that compare engines report beside wall time.
pub fn cpu_seconds() -> f64 {
    // Fields 14 and 15 of /proc/self/stat, after the parenthesised command name, in clock ticks (100 Hz).
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.split_whitespace().collect::<Vec<_>>();
            Some((rest.get(11)?.parse::<f64>().ok()? + rest.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(0.0)
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

const STRING_COLUMNS: usize = 20;

fn schema(dv: bool, buckets: u32, extra: &[(&str, &str)]) -> Result<TableSchema> {
    let mut cols = vec![("id".to_string(), DataType::not_null(strata_spec::TypeRoot::BigInt))];
    for i in 0..STRING_COLUMNS {
        cols.push((format!("s{i}"), DataType::string()));
    }
    let mut options = BTreeMap::from([
        ("bucket".to_string(), buckets.to_string()),
        ("deletion-vectors.enabled".to_string(), dv.to_string()),
    ]);
    for (k, v) in extra {
        options.insert(k.to_string(), v.to_string());
    }
    TableSchema::new(cols, vec![], vec!["id".into()], options, 0)
}

fn batch(ids: &[i64], round: usize) -> Result<RecordBatch> {
    let mut fields = vec![Field::new("id", ArrowType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    for c in 0..STRING_COLUMNS {
        fields.push(Field::new(format!("s{c}"), ArrowType::Utf8, true));
        // Ten hexadecimal characters, as Paimon's TableWriterBenchmark.
        cols.push(Arc::new(StringArray::from_iter_values(
            ids.iter()
                .map(|i| format!("{:010x}", (*i as u64).wrapping_mul(0x9E37_79B9) ^ (c as u64 * 7919 + round as u64))),
        )));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(|e| Error::internal_from("bench rows", e))
}

pub(crate) struct Workload {
    /// Rows loaded first.
    pub(crate) rows: usize,
    /// Update rounds after the load.
    pub(crate) rounds: usize,
    /// Options of both tables besides the bench's own (`--table-option`).
    pub(crate) options: Vec<(String, String)>,
}

/// Writes the workload; returns (seconds, rows written).
fn run_writes(table: &Table, w: &Workload, chunk: usize) -> Result<(f64, usize)> {
    let mut writer = TableWriter::new(table, "bench")?;
    let mut rng = StdRng::seed_from_u64(1);
    let started = Instant::now();
    let mut written = 0;
    let ids: Vec<i64> = (0..w.rows as i64).collect();
    for part in ids.chunks(chunk) {
        writer.write(&batch(part, 0)?)?;
        writer.commit()?;
        written += part.len();
    }
    for round in 1..=w.rounds {
        let n = (w.rows / 10).max(1);
        let mut keys: Vec<i64> = (0..n).map(|_| rng.random_range(0..w.rows as i64)).collect();
        keys.sort_unstable();
        keys.dedup();
        let kinds: Vec<i8> = keys.iter().map(|_| if rng.random_bool(0.1) { 3 } else { 0 }).collect();
        for (part, kinds) in keys.chunks(chunk).zip(kinds.chunks(chunk)) {
            writer.write_with_kinds(&batch(part, round)?, kinds)?;
        }
        writer.commit()?;
        written += keys.len();
    }
    Ok((started.elapsed().as_secs_f64(), written))
}

fn runs_per_bucket(table: &Table) -> Result<(usize, f64)> {
    let Some(s) = table.snapshot(None)? else { return Ok((0, 0.0)) };
    let mut levels: BTreeMap<(Vec<u8>, i32), (usize, std::collections::BTreeSet<i32>)> = BTreeMap::new();
    let mut files = 0;
    for e in table.live_files(&s)? {
        files += 1;
        let b = levels.entry((e.partition.serialize(), e.bucket)).or_default();
        if e.file.level == 0 {
            b.0 += 1;
        } else {
            b.1.insert(e.file.level);
        }
    }
    let runs: usize = levels.values().map(|(l0, deeper)| l0 + deeper.len()).sum();
    Ok((files, runs as f64 / levels.len().max(1) as f64))
}

/// Reads every live parquet file of `table` with arrow-rs directly, deletion vectors ignored.
fn raw_arrow_scan(table: &Table) -> Result<(usize, f64)> {
    let Some(s) = table.snapshot(None)? else { return Ok((0, 0.0)) };
    let paths: Vec<String> = table
        .live_files(&s)?
        .iter()
        .filter(|e| e.file.level > 0)
        .map(|e| table.data_file_path(e))
        .collect::<Result<_>>()?;
    let started = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let rows = AtomicU64::new(0);
    let threads = strata_io::cores();
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = paths.get(i) else { break };
                let Ok(bytes) = table.io().read(p) else { break };
                let Ok(b) =
                    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
                else {
                    break;
                };
                let Ok(r) = b.build() else { break };
                for batch in r.flatten() {
                    rows.fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
                }
            });
        }
    });
    Ok((rows.load(Ordering::Relaxed) as usize, started.elapsed().as_secs_f64()))
}

/// A full scan, streamed (batches counted and dropped, as the raw arrow-rs scan does): rows and seconds.
fn scan_rate(table: &Table) -> Result<(usize, f64)> {
    let started = Instant::now();
    let mut rows = 0;
    for b in ReadBuilder::new(table).stream()? {
        rows += b?.num_rows();
    }
    Ok((rows, started.elapsed().as_secs_f64()))
}

/// Where the bench's tables live, when not in a local directory: a warehouse location, the storage writers
/// use, and the storage readers use (another client, with no local copies of what the writers wrote, as a
/// reading process elsewhere would see the store).
pub(crate) struct BenchStore<'a> {
    /// The warehouse location (a local path or a store URI).
    pub warehouse: &'a str,
    /// The writers' storage.
    pub writer: Arc<dyn FileIO>,
    /// The readers' storage.
    pub reader: Arc<dyn FileIO>,
}

/// The storage of one run: writers and readers count what they do apart.
struct Storage {
    writer: Arc<CountingIO>,
    reader: Arc<CountingIO>,
}

impl Storage {
    fn reader_io(&self) -> Arc<dyn FileIO> {
        self.reader.clone()
    }
}

/// Runs the benchmark; prints a table (or JSON) and writes `scan_vs_runs.svg` into `dir`.
///
/// The tables go into a fresh subdirectory of `dir` (or of `store`'s warehouse) that this run creates and
/// removes (whatever happens), so nothing already there is touched but the chart file.
pub(crate) fn run(
    dir: &str,
    store: Option<BenchStore<'_>>,
    w: &Workload,
    buckets: u32,
    json_out: bool,
) -> Result<Value> {
    let counting = |inner: Arc<dyn FileIO>| Arc::new(CountingIO { inner, written: Arc::default() });
    let (root, storage) = match store {
        Some(s) => (s.warehouse.to_string(), Storage { writer: counting(s.writer), reader: counting(s.reader) }),
        None => {
            let local = counting(Arc::new(LocalFileIO::new()));
            (dir.to_string(), Storage { writer: local.clone(), reader: local })
        }
    };
    let io = storage.writer.clone();
    let work = format!("{root}/strata-bench-{}", uuid::Uuid::new_v4());
    io.mkdirs(&work)?;
    let result = run_in(&storage, &work, dir, w, buckets, json_out);
    let removed = io.delete_dir(&work);
    let report = result?;
    removed?;
    Ok(report)
}

fn run_in(storage: &Storage, work: &str, dir: &str, w: &Workload, buckets: u32, json_out: bool) -> Result<Value> {
    let dyn_io: Arc<dyn FileIO> = storage.writer.clone();
    let rows = w.rows;
    let mut report = serde_json::Map::new();
    let mut lines = Vec::new();
    let (ingest, line) = bench_ingest(&dyn_io, work, rows)?;
    report.insert("ingest".into(), ingest);
    lines.push(line);
    for (name, dv) in [("dv", true), ("mor", false)] {
        let (entry, table_lines) = bench_table(storage, work, name, dv, w, buckets)?;
        report.insert(name.to_string(), entry);
        lines.extend(table_lines);
    }
    let dv = report["dv"]["scanRowsPerSec"].as_f64().unwrap_or(0.0);
    let mor = report["mor"]["scanRowsPerSec"].as_f64().unwrap_or(1.0);
    let dvw = report["dv"]["writeSeconds"].as_f64().unwrap_or(0.0);
    let morw = report["mor"]["writeSeconds"].as_f64().unwrap_or(1.0);
    lines.push(format!("DV scan / MOR scan: {:.2}x; DV write / MOR write: {:.2}x", dv / mor, dvw / morw));
    report.insert("dvOverMorScan".into(), json!(dv / mor));
    report.insert("dvOverMorWrite".into(), json!(dvw / morw));

    let (series, line) = bench_runs(&dyn_io, work, dir, rows, buckets)?;
    lines.push(line);
    lines.push(format!("chart: {dir}/scan_vs_runs.svg"));
    report.insert("scanVsRuns".into(), Value::Array(series));
    if !json_out {
        for l in &lines {
            println!("{l}");
        }
    }
    Ok(Value::Object(report))
}

/// Ingest in the shape of Paimon's TableWriterBenchmark; the report entry and its line.
fn bench_ingest(dyn_io: &Arc<dyn FileIO>, work: &str, rows: usize) -> Result<(Value, String)> {
    // Ingest in the shape of Paimon's TableWriterBenchmark: one bucket (so one writer thread), random keys,
    // one commit, compaction included; rows generated before the clock starts. Measured first, before the
    // other phases leave gigabytes of dirty pages for the kernel to write back while it runs.
    let ingest = Table::create(dyn_io.clone(), &format!("{work}/bench.db/ingest"), schema(false, 1, &[])?)?;
    let mut rng = StdRng::seed_from_u64(7);
    let batches: Vec<RecordBatch> = (0..rows)
        .step_by(100_000)
        .map(|start| {
            let ids: Vec<i64> =
                (start..(start + 100_000).min(rows)).map(|_| rng.random_range(0..i64::from(i32::MAX))).collect();
            batch(&ids, 0)
        })
        .collect::<Result<_>>()?;
    reset_peak();
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let mut writer = TableWriter::new(&ingest, "ingest")?;
    for b in &batches {
        writer.write(b)?;
    }
    writer.commit()?;
    let ingest_secs = started.elapsed().as_secs_f64();
    let ingest_cpu = cpu_seconds() - cpu_before;
    let ingest_mem = peak_mib();
    let line = format!(
        "ingest (1 bucket, random keys, one commit, MOR): {rows} rows in {ingest_secs:.2}s ({:.0} rows/s), {ingest_cpu:.2} CPU seconds ({:.2} cores busy), peak {ingest_mem:.0} MiB",
        rows as f64 / ingest_secs,
        ingest_cpu / ingest_secs
    );
    drop(batches);
    let entry = json!({"rows": rows, "seconds": ingest_secs, "rowsPerSec": rows as f64 / ingest_secs,
           "cpuSeconds": ingest_cpu, "peakMiB": ingest_mem});
    Ok((entry, line))
}

/// Writes `w` into a fresh table (deletion vectors or merge-on-read), then scans, filters, counts and looks
/// keys up; the report entry and its lines.
fn bench_table(
    storage: &Storage,
    work: &str,
    name: &str,
    dv: bool,
    w: &Workload,
    buckets: u32,
) -> Result<(Value, Vec<String>)> {
    let io = &storage.writer;
    let dyn_io: Arc<dyn FileIO> = io.clone();
    let rows = w.rows;
    let mut lines = Vec::new();
    let path = format!("{work}/bench.db/{name}");
    let options: Vec<(&str, &str)> = w.options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let table = Table::create(dyn_io.clone(), &path, schema(dv, buckets, &options)?)?;
    reset_peak();
    let before = io.written.load(Ordering::Relaxed);
    let requests = Requests::start(io.as_ref());
    let (write_secs, written) = run_writes(&table, w, 200_000)?;
    let write_requests = requests.take(io.as_ref());
    let write_mem = peak_mib();
    let bytes = io.written.load(Ordering::Relaxed) - before;
    let (files, runs) = runs_per_bucket(&table)?;
    // Reads go through the readers' storage, which holds no copy of what the writers wrote.
    let table = Table::open(storage.reader_io(), &path)?;
    let io = &storage.reader;
    reset_peak();
    let requests = Requests::start(io.as_ref());
    let (scan_rows, scan_secs) = scan_rate(&table)?;
    let scan_requests = requests.take(io.as_ref());
    let scan_mem = peak_mib();
    let started = Instant::now();
    let filtered = ReadBuilder::new(&table)
        .with_filter(Predicate::cmp("id", CmpOp::Lt, Datum::BigInt((rows / 10) as i64)))
        .read()?
        .num_rows();
    let filter_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let count = ReadBuilder::new(&table).count()?;
    let count_secs = started.elapsed().as_secs_f64();
    let lk = lookups(&table, rows, io.as_ref())?;
    let mut entry = json!({
        "writeSeconds": write_secs, "rowsWritten": written, "writeRowsPerSec": written as f64 / write_secs,
        "bytesWritten": bytes, "writeAmplification": bytes as f64 / (written as f64 * 230.0),
        "files": files, "sortedRunsPerBucket": runs,
        "scanRows": scan_rows, "scanSeconds": scan_secs, "scanRowsPerSec": scan_rows as f64 / scan_secs,
        "filteredRows": filtered, "filteredSeconds": filter_secs, "countStar": count, "countSeconds": count_secs,
        "getP50Ms": lk.get_p50, "getP99Ms": lk.get_p99, "peakMiBWrite": write_mem, "peakMiBScan": scan_mem,
        "queryWarmSeconds": lk.warm_secs, "queryP50Us": lk.query_p50, "queryP99Us": lk.query_p99, "peakMiBQuery": lk.peak_mib,
        "queryCacheMiBMemory": lk.cache_memory_mib, "queryCacheMiBDisk": lk.cache_disk_mib,
    });
    if let (Some(wr), Some(sr)) = (write_requests, scan_requests) {
        let commits = (w.rounds + rows.div_ceil(200_000)).max(1) as f64;
        entry["requests"] = json!({
            "write": counts_json(&wr), "perCommit": wr.total() as f64 / commits,
            "scan": counts_json(&sr), "getPerKey": lk.get_requests.map(|r| r.total() as f64 / 200.0),
            "queryWarmUp": lk.warm_requests.map(|r| counts_json(&r)),
            "queryAfterWarmUp": lk.query_requests.map(|r| counts_json(&r)),
        });
        lines.push(format!(
            "{name:>4} requests: write {wr} ({:.1} a commit); full scan {sr}; get {:.1} a key; TableQuery warm-up {}, then {} for 20,000 lookups",
            wr.total() as f64 / commits,
            lk.get_requests.map_or(0.0, |r| r.total() as f64 / 200.0),
            lk.warm_requests.map(|r| r.to_string()).unwrap_or_default(),
            lk.query_requests.map(|r| r.to_string()).unwrap_or_default(),
        ));
    }
    lines.push(format!(
        "{name:>4}: write {written} rows in {write_secs:.2}s ({:.0} rows/s, compaction included), {:.1} MiB written, {files} files, {runs:.1} sorted runs/bucket; full scan {scan_rows} rows {:.0} rows/s; filtered {filtered} rows {filter_secs:.3}s; COUNT(*) {count} in {count_secs:.4}s; get p50 {:.2} ms p99 {:.2} ms; TableQuery warm-up {:.2}s, p50 {:.1} us p99 {:.1} us, local files {:.0} MiB in memory {:.0} MiB on disk; peak MiB write {write_mem:.0} scan {scan_mem:.0} query {:.0}",
        written as f64 / write_secs,
        bytes as f64 / (1 << 20) as f64,
        scan_rows as f64 / scan_secs,
        lk.get_p50,
        lk.get_p99,
        lk.warm_secs,
        lk.query_p50,
        lk.query_p99,
        lk.cache_memory_mib,
        lk.cache_disk_mib,
        lk.peak_mib,
    ));
    if dv {
        let (raw_rows, raw_secs) = raw_arrow_scan(&table)?;
        // Same files, same bytes: the DV scan's speed relative to arrow-rs is the ratio of the times.
        lines.push(format!(
            " raw: arrow-rs scan of the DV table's parquet files (vectors ignored): {raw_rows} rows in {raw_secs:.3}s ({:.0} rows/s); the DV scan of the same files took {scan_secs:.3}s: {:.2}x the raw speed",
            raw_rows as f64 / raw_secs,
            raw_secs / scan_secs
        ));
        entry["rawArrowRows"] = json!(raw_rows);
        entry["rawArrowSeconds"] = json!(raw_secs);
        entry["rawArrowRowsPerSec"] = json!(raw_rows as f64 / raw_secs);
        entry["dvScanSpeedVsRaw"] = json!(raw_secs / scan_secs);
    }
    Ok((entry, lines))
}

/// Requests counted over one phase, where the storage counts them.
struct Requests(Option<strata_io::RequestCounts>);

impl Requests {
    fn start(io: &dyn FileIO) -> Self {
        Requests(io.request_counts())
    }

    fn take(self, io: &dyn FileIO) -> Option<strata_io::RequestCounts> {
        Some(io.request_counts()?.since(&self.0?))
    }
}

fn counts_json(c: &strata_io::RequestCounts) -> Value {
    json!({"get": c.get, "put": c.put, "list": c.list, "head": c.head, "delete": c.delete, "total": c.total()})
}

/// Point-lookup figures of one table.
struct Lookups {
    get_requests: Option<strata_io::RequestCounts>,
    warm_requests: Option<strata_io::RequestCounts>,
    query_requests: Option<strata_io::RequestCounts>,
    get_p50: f64,
    get_p99: f64,
    warm_secs: f64,
    query_p50: f64,
    query_p99: f64,
    cache_memory_mib: f64,
    cache_disk_mib: f64,
    peak_mib: f64,
}

/// One-off `get` latencies (200 random keys), then a long-lived `TableQuery`: warm-up over 200 keys (it
/// builds local lookup files for every file they land in), then 20,000 local lookups.
fn lookups(table: &Table, rows: usize, io: &dyn FileIO) -> Result<Lookups> {
    let mut rng = StdRng::seed_from_u64(9);
    let requests = Requests::start(io);
    let mut lat: Vec<f64> = (0..200)
        .map(|_| {
            let k = rng.random_range(0..rows as i64);
            let t = Instant::now();
            let _ = get(table, &[Some(Datum::BigInt(k))], None);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let get_requests = requests.take(io);
    lat.sort_by(|a, b| a.total_cmp(b));
    let p50 = lat[lat.len() / 2];
    let p99 = lat[lat.len() * 99 / 100];
    // A long-lived query: the first lookups build local lookup files (timed as warm-up, reading every
    // file the keys land in), then lookups are local.
    reset_peak();
    let requests = Requests::start(io);
    let started = Instant::now();
    let query = TableQuery::new(table)?;
    for _ in 0..200 {
        query.get(&[Some(Datum::BigInt(rng.random_range(0..rows as i64)))])?;
    }
    let warm_secs = started.elapsed().as_secs_f64();
    let warm_requests = requests.take(io);
    let requests = Requests::start(io);
    let mut qlat: Vec<f64> = Vec::with_capacity(20_000);
    for _ in 0..20_000 {
        let k = rng.random_range(0..rows as i64);
        let t = Instant::now();
        query.get(&[Some(Datum::BigInt(k))])?;
        qlat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let query_requests = requests.take(io);
    let query_mem = peak_mib();
    let (cache_memory, cache_disk) = query.cache_bytes();
    let (cache_memory, cache_disk) = (cache_memory as f64 / (1 << 20) as f64, cache_disk as f64 / (1 << 20) as f64);
    drop(query);
    qlat.sort_by(|a, b| a.total_cmp(b));
    let (q50, q99) = (qlat[qlat.len() / 2], qlat[qlat.len() * 99 / 100]);
    Ok(Lookups {
        get_requests,
        warm_requests,
        query_requests,
        get_p50: p50,
        get_p99: p99,
        warm_secs,
        query_p50: q50,
        query_p99: q99,
        cache_memory_mib: cache_memory,
        cache_disk_mib: cache_disk,
        peak_mib: query_mem,
    })
}

/// Scan rate against the number of sorted runs (a merge-on-read table that never compacts, beside a
/// deletion-vector one), written as a chart to `dir/scan_vs_runs.svg`; the series and its line.
fn bench_runs(
    dyn_io: &Arc<dyn FileIO>,
    work: &str,
    dir: &str,
    rows: usize,
    buckets: u32,
) -> Result<(Vec<Value>, String)> {
    // Scan rate against the number of sorted runs: a merge-on-read table that never compacts.
    let small = Workload { rows: (rows / 4).max(1000), rounds: 0, options: Vec::new() };
    let mor = Table::create(
        dyn_io.clone(),
        &format!("{work}/bench.db/runs_mor"),
        schema(
            false,
            buckets,
            &[("num-sorted-run.compaction-trigger", "100"), ("num-sorted-run.stop-trigger", "200")],
        )?,
    )?;
    let dvt = Table::create(dyn_io.clone(), &format!("{work}/bench.db/runs_dv"), schema(true, buckets, &[])?)?;
    let mut series = Vec::new();
    let mut wm = TableWriter::new(&mor, "runs")?;
    let mut wd = TableWriter::new(&dvt, "runs")?;
    let mut rng = StdRng::seed_from_u64(3);
    for runs in 1..=8usize {
        let ids: Vec<i64> = if runs == 1 {
            (0..small.rows as i64).collect()
        } else {
            let mut k: Vec<i64> = (0..small.rows / 5).map(|_| rng.random_range(0..small.rows as i64)).collect();
            k.sort_unstable();
            k.dedup();
            k
        };
        for t in [&mut wm, &mut wd] {
            t.write(&batch(&ids, runs)?)?;
            t.commit()?;
        }
        let (_, mor_runs) = runs_per_bucket(&mor)?;
        let (r1, s1) = scan_rate(&mor)?;
        let (r2, s2) = scan_rate(&dvt)?;
        let (r3, s3) = raw_arrow_scan(&dvt)?;
        series.push(
            json!({"runs": runs, "morSortedRunsPerBucket": mor_runs, "mor": r1 as f64 / s1, "dv": r2 as f64 / s2,
            "raw": r3 as f64 / s3, "morSeconds": s1, "dvSeconds": s2, "rawSeconds": s3}),
        );
    }
    let at5 = &series[4];
    let line = format!(
        "at 5 sorted runs/bucket (MOR {:.1} runs): DV {:.0} rows/s, MOR {:.0} rows/s ({:.2}x), raw {:.0} rows/s (DV at {:.2}x raw speed)",
        at5["morSortedRunsPerBucket"].as_f64().unwrap_or(0.0),
        at5["dv"].as_f64().unwrap_or(0.0),
        at5["mor"].as_f64().unwrap_or(0.0),
        at5["dv"].as_f64().unwrap_or(0.0) / at5["mor"].as_f64().unwrap_or(1.0),
        at5["raw"].as_f64().unwrap_or(0.0),
        at5["rawSeconds"].as_f64().unwrap_or(0.0) / at5["dvSeconds"].as_f64().unwrap_or(1.0)
    );
    let svg = chart(&series);
    let svg_path = format!("{dir}/scan_vs_runs.svg");
    std::fs::write(&svg_path, svg).map_err(|e| Error::io(&svg_path, e))?;
    Ok((series, line))
}

/// A line chart of scan rows/s (DV, MOR, raw) against sorted runs, as SVG.
fn chart(series: &[Value]) -> String {
    let (w, h, pad) = (640.0, 360.0, 50.0);
    let max =
        series.iter().flat_map(|p| ["dv", "mor", "raw"].map(|k| p[k].as_f64().unwrap_or(0.0))).fold(1.0f64, f64::max);
    let x = |i: usize| pad + (w - 2.0 * pad) * i as f64 / (series.len().max(2) - 1) as f64;
    let y = |v: f64| h - pad - (h - 2.0 * pad) * v / max;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    svg.push_str(&format!(r#"<rect width="{w}" height="{h}" fill="white"/><line x1="{pad}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{pad}" y1="{pad}" x2="{pad}" y2="{}" stroke="black"/>"#, h - pad, w - pad, h - pad, h - pad));
    svg.push_str(&format!(
        r#"<text x="{}" y="{}" text-anchor="middle">sorted runs per bucket (merge-on-read table)</text>"#,
        w / 2.0,
        h - 12.0
    ));
    svg.push_str(&format!(
        r#"<text x="12" y="{}" transform="rotate(-90 12 {})" text-anchor="middle">scan rows/s (max {:.2} M)</text>"#,
        h / 2.0,
        h / 2.0,
        max / 1e6
    ));
    for (i, p) in series.iter().enumerate() {
        svg.push_str(&format!(
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            x(i),
            h - pad + 16.0,
            p["runs"]
        ));
    }
    for (key, color) in [("dv", "#1f77b4"), ("mor", "#d62728"), ("raw", "#2ca02c")] {
        let pts: Vec<String> = series
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p[key].as_f64().unwrap_or(0.0))))
            .collect();
        svg.push_str(&format!(
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        ));
        let last = series.len().saturating_sub(1);
        if let Some(p) = series.last() {
            svg.push_str(&format!(
                r#"<text x="{:.1}" y="{:.1}" fill="{color}">{key}</text>"#,
                x(last) + 6.0,
                y(p[key].as_f64().unwrap_or(0.0))
            ));
        }
    }
    svg.push_str("</svg>");
    svg
}
