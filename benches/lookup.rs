//! Strata's side of `scripts/bench-lookup.sh`: key lookups in process, on the table shape issue 21 measures
//! (`id BIGINT` key and 20 ten-character strings, 4 buckets, deletion vectors, a load and 4 rounds updating
//! 10% of the keys).
//!
//! `cargo bench --bench lookup -- make DIR ROWS [mor|dv] [BUCKETS]` writes that table to `DIR/db.db/t`
//! (merge-on-read with `mor`, its compactions left as they land; BUCKETS buckets, 4 by default; one commit
//! for the load, one per round). `cargo bench --bench lookup -- measure TABLE ROWS` prints one JSON line:
//! - `get1_p50_ms`, `get1_p99_ms`: 200 one-off [`strata::get`] calls of random keys (each reads the
//!   snapshot's metadata and the candidate files' pages, no warm state);
//! - `many100_s`, `many10000_s`: [`strata::table::get_many`] of 100 and 10,000 random keys (best of 3);
//! - `query_warm_s`, `query_p50_us`, `query_p99_us`: a [`strata::TableQuery`] warmed by 200 lookups, then
//!   20,000 lookups of random keys;
//! - `scan_full_s`, `scan_kept_s`: a full scan, and a scan with a filter keeping every row (best of 3);
//! - `*_bytes`: bytes read from the table's files by each kind of lookup (one `get`, one `get_many` of each
//!   size), from a counting file system.
//!
//! Ingest (scripts/bench-load.sh): `input DIR ROWS` writes the rows `make` writes as Arrow IPC streams
//! (`DIR/round-K.arrow`), and `load WAREHOUSE INPUT_DIR [mor|dv] [BUCKETS]` writes the table from them, one
//! commit per round with its compactions, printing the time; paimon-rust loads the same files.
//!
//! `TABLE_OPTIONS="KEY=VALUE;..."` adds table options to the table `make` and `load` create.
//!
//! Without arguments (a plain `cargo bench`) it says how to run it.
#![allow(missing_docs)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType as ArrowType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::io::FileStatus;
use strata::spec::{DataType, Datum, TableSchema, TypeRoot};
use strata::table::{commit_batch, get_many};
use strata::{FileIO, LocalFileIO, Predicate, ReadBuilder, Table, TableQuery, TableWrite};

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const STRINGS: usize = 20;
const ROUNDS: usize = 4;

/// Local files, counting the bytes read.
#[derive(Debug)]
struct CountingIO {
    inner: LocalFileIO,
    read: AtomicU64,
}

impl CountingIO {
    fn count(&self, n: usize) {
        self.read.fetch_add(n as u64, Ordering::Relaxed);
    }
}

impl FileIO for CountingIO {
    fn read(&self, path: &str) -> strata::Result<Vec<u8>> {
        let b = self.inner.read(path)?;
        self.count(b.len());
        Ok(b)
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> strata::Result<Vec<u8>> {
        let b = self.inner.read_range(path, offset, len)?;
        self.count(b.len());
        Ok(b)
    }
    fn read_ranges(&self, path: &str, ranges: &[std::ops::Range<u64>]) -> strata::Result<Vec<Vec<u8>>> {
        let b = self.inner.read_ranges(path, ranges)?;
        self.count(b.iter().map(Vec::len).sum());
        Ok(b)
    }
    fn size(&self, path: &str) -> strata::Result<u64> {
        self.inner.size(path)
    }
    fn write(&self, path: &str, data: &[u8]) -> strata::Result<()> {
        self.inner.write(path, data)
    }
    fn create_if_absent(&self, path: &str, data: &[u8]) -> strata::Result<bool> {
        self.inner.create_if_absent(path, data)
    }
    fn exists(&self, path: &str) -> strata::Result<bool> {
        self.inner.exists(path)
    }
    fn file_exists(&self, path: &str) -> strata::Result<bool> {
        self.inner.file_exists(path)
    }
    fn list(&self, dir: &str) -> strata::Result<Vec<FileStatus>> {
        self.inner.list(dir)
    }
    fn delete(&self, path: &str) -> strata::Result<()> {
        self.inner.delete(path)
    }
    fn delete_dir(&self, path: &str) -> strata::Result<()> {
        self.inner.delete_dir(path)
    }
    fn mkdirs(&self, path: &str) -> strata::Result<()> {
        self.inner.mkdirs(path)
    }
}

fn rows(ids: &[i64], round: usize) -> Res<RecordBatch> {
    let mut fields = vec![Field::new("id", ArrowType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    for c in 0..STRINGS {
        fields.push(Field::new(format!("s{c}"), ArrowType::Utf8, true));
        cols.push(Arc::new(StringArray::from_iter_values(
            ids.iter()
                .map(|i| format!("{:010x}", (*i as u64).wrapping_mul(0x9E37_79B9) ^ (c as u64 * 7919 + round as u64))),
        )));
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}

/// The ids of each round: every key in round 0 (the load), then 10% of the keys at random, sorted and
/// deduplicated, in each update round.
fn round_ids(n: usize) -> Vec<Vec<i64>> {
    let mut rng = StdRng::seed_from_u64(1);
    let mut out = vec![(0..n as i64).collect::<Vec<i64>>()];
    for _ in 0..ROUNDS {
        let mut ids: Vec<i64> = (0..n / 10).map(|_| rng.random_range(0..n as i64)).collect();
        ids.sort_unstable();
        ids.dedup();
        out.push(ids);
    }
    out
}

/// Creates the bench table at `DIR/db.db/t`; `dv` false makes it merge-on-read.
fn create(dir: &str, dv: bool, buckets: usize) -> Res<Table> {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let mut cols = vec![("id".to_string(), DataType::not_null(TypeRoot::BigInt))];
    cols.extend((0..STRINGS).map(|i| (format!("s{i}"), DataType::string())));
    let buckets = buckets.to_string();
    let options = [("bucket", buckets.as_str()), ("deletion-vectors.enabled", if dv { "true" } else { "false" })];
    let mut options: std::collections::BTreeMap<String, String> =
        options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    // More table options for an experiment: `TABLE_OPTIONS="write-buffer-size=64 mb;target-file-size=32 mb"`.
    for pair in std::env::var("TABLE_OPTIONS").unwrap_or_default().split(';').filter(|p| !p.trim().is_empty()) {
        let (k, v) = pair.split_once('=').ok_or("TABLE_OPTIONS holds KEY=VALUE pairs separated by ;")?;
        options.insert(k.trim().to_string(), v.trim().to_string());
    }
    let schema = TableSchema::new(cols, vec![], vec!["id".into()], options, 0)?;
    Ok(Table::create(io, &format!("{dir}/db.db/t"), schema)?)
}

/// Writes one round's batches as one commit (waiting for its compactions, as a batch writer does).
fn write_round(table: &Table, batches: impl Iterator<Item = Res<RecordBatch>>) -> Res<()> {
    let started = Instant::now();
    let mut write = TableWrite::new(table)?;
    for batch in batches {
        write.write_batch(&batch?)?;
    }
    let written = started.elapsed().as_secs_f64();
    let messages = write.prepare_commit_waiting()?;
    let prepared = started.elapsed().as_secs_f64();
    commit_batch("bench", table, &mut write, messages, None)?;
    if std::env::var_os("LOAD_PHASES").is_some() {
        eprintln!(
            "write {written:.3} s, prepare {:.3} s, commit {:.3} s",
            prepared - written,
            started.elapsed().as_secs_f64() - prepared
        );
    }
    Ok(())
}

/// Writes the bench table; `dv` false makes it merge-on-read (its background compaction left as it lands).
fn make(dir: &str, n: usize, dv: bool, buckets: usize) -> Res<()> {
    let table = create(dir, dv, buckets)?;
    for (round, ids) in round_ids(n).iter().enumerate() {
        write_round(&table, ids.chunks(100_000).map(|part| rows(part, round)))?;
    }
    Ok(())
}

/// Writes the rows `make` writes as Arrow IPC streams, `DIR/round-K.arrow` (batches of 100,000 rows), the
/// input of `load` here and of the paimon-rust side of scripts/bench-load.sh.
fn input(dir: &str, n: usize) -> Res<()> {
    std::fs::create_dir_all(dir)?;
    for (round, ids) in round_ids(n).iter().enumerate() {
        let file = std::io::BufWriter::new(std::fs::File::create(format!("{dir}/round-{round}.arrow"))?);
        let mut w = StreamWriter::try_new(file, &rows(&[], round)?.schema())?;
        for part in ids.chunks(100_000) {
            w.write(&rows(part, round)?)?;
        }
        w.finish()?;
    }
    Ok(())
}

/// Loads the table from `input`'s files, one commit per round, and prints the time in seconds (the clock
/// runs from the first batch read to the last commit; reading the input is in it, as in the peer's).
fn load(dir: &str, inputs: &str, dv: bool, buckets: usize) -> Res<()> {
    let table = create(dir, dv, buckets)?;
    let started = Instant::now();
    let mut loaded = 0usize;
    for round in 0..=ROUNDS {
        let file = std::io::BufReader::new(std::fs::File::open(format!("{inputs}/round-{round}.arrow"))?);
        let reader = StreamReader::try_new(file, None)?;
        let batches =
            reader.map(|b| b.map_err(Into::into)).inspect(|b| loaded += b.as_ref().map_or(0, RecordBatch::num_rows));
        write_round(&table, batches)?;
    }
    println!("{{\"load_s\": {:.3}, \"rows\": {loaded}}}", started.elapsed().as_secs_f64());
    Ok(())
}

fn key(k: i64) -> Vec<Option<Datum>> {
    vec![Some(Datum::BigInt(k))]
}

fn percentile(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[(v.len() * p / 100).min(v.len() - 1)]
}

fn measure(path: &str, n: usize) -> Res<()> {
    let io = Arc::new(CountingIO { inner: LocalFileIO::new(), read: AtomicU64::new(0) });
    let table = Table::open(io.clone(), path)?;
    let mut rng = StdRng::seed_from_u64(9);
    let mut random_keys =
        |count: usize| -> Vec<Vec<Option<Datum>>> { (0..count).map(|_| key(rng.random_range(0..n as i64))).collect() };
    // One-off gets: every call starts from nothing (snapshot, manifests, candidate files' pages).
    let mut lat = Vec::new();
    let before = io.read.load(Ordering::Relaxed);
    for k in random_keys(200) {
        let t = Instant::now();
        let row = strata::get(&table, &k, None)?;
        lat.push(t.elapsed().as_secs_f64() * 1e3);
        if row.is_none() {
            return Err(format!("key {k:?} not found").into());
        }
    }
    let get1_bytes = (io.read.load(Ordering::Relaxed) - before) / 200;
    let (get1_p50, get1_p99) = (percentile(&mut lat, 50), percentile(&mut lat, 99));
    let mut many = |count: usize| -> Res<(f64, u64)> {
        let keys = random_keys(count);
        let (mut best, mut bytes) = (f64::MAX, 0);
        for _ in 0..3 {
            let before = io.read.load(Ordering::Relaxed);
            let t = Instant::now();
            let found = get_many(&table, &keys, None)?;
            best = best.min(t.elapsed().as_secs_f64());
            bytes = io.read.load(Ordering::Relaxed) - before;
            if found.iter().any(Option::is_none) {
                return Err("a key was not found".into());
            }
        }
        Ok((best, bytes))
    };
    let (many100, many100_bytes) = many(100)?;
    let (many10000, many10000_bytes) = many(10_000)?;
    let t = Instant::now();
    let query = TableQuery::new(&table)?;
    for k in random_keys(200) {
        query.get(&k)?;
    }
    let warm = t.elapsed().as_secs_f64();
    let mut qlat = Vec::with_capacity(20_000);
    for k in random_keys(20_000) {
        let t = Instant::now();
        let row = query.get(&k)?;
        qlat.push(t.elapsed().as_secs_f64() * 1e6);
        if row.is_none() {
            return Err(format!("key {k:?} not found by the query").into());
        }
    }
    let (q50, q99) = (percentile(&mut qlat, 50), percentile(&mut qlat, 99));
    // Bytes a full scan reads against a scan filtered to one key (row groups and pages pruned by the key).
    // (bytes read, rows, best time of 3).
    let scan = |filter: Option<Predicate>| -> Res<(u64, usize, f64)> {
        let (mut bytes, mut rows, mut best) = (0, 0, f64::MAX);
        for _ in 0..3 {
            let before = io.read.load(Ordering::Relaxed);
            let t = Instant::now();
            let mut read = ReadBuilder::new(&table);
            if let Some(f) = filter.clone() {
                read = read.with_filter(f);
            }
            rows = read.read_plan(&read.plan()?)?.batches.iter().map(RecordBatch::num_rows).sum();
            best = best.min(t.elapsed().as_secs_f64());
            bytes = io.read.load(Ordering::Relaxed) - before;
        }
        Ok((bytes, rows, best))
    };
    let (full_bytes, full_rows, full_s) = scan(None)?;
    let (key_bytes, key_rows, _) = scan(Some(Predicate::eq("id", Datum::BigInt(n as i64 / 3))))?;
    // A filter keeping every row: a filtered scan reads by ranges, which must not cost a scan that keeps much.
    let (_, kept_rows, kept_s) = scan(Some(Predicate::cmp("id", strata::CmpOp::GtEq, Datum::BigInt(0))))?;
    if kept_rows != n {
        return Err(format!("a filter keeping every row returned {kept_rows}").into());
    }
    if full_rows != n || key_rows != 1 {
        return Err(format!("scans returned {full_rows} and {key_rows} rows, not {n} and 1").into());
    }
    println!(
        "{{\"get1_p50_ms\": {get1_p50:.3}, \"get1_p99_ms\": {get1_p99:.3}, \"get1_bytes\": {get1_bytes}, \
         \"many100_s\": {many100:.4}, \"many100_bytes\": {many100_bytes}, \"many10000_s\": {many10000:.4}, \
         \"many10000_bytes\": {many10000_bytes}, \"query_warm_s\": {warm:.3}, \"query_p50_us\": {q50:.1}, \
         \"query_p99_us\": {q99:.1}, \"scan_full_s\": {full_s:.3}, \"scan_full_bytes\": {full_bytes}, \"scan_key_bytes\": {key_bytes}, \"scan_kept_s\": {kept_s:.3}}}"
    );
    Ok(())
}

/// One-off gets alone (for a profile): `count` calls of random keys; prints p50 and p99 in milliseconds.
fn get_only(path: &str, n: usize, count: usize) -> Res<()> {
    let table = Table::open(Arc::new(LocalFileIO::new()), path)?;
    let mut rng = StdRng::seed_from_u64(9);
    let mut lat = Vec::with_capacity(count);
    for _ in 0..count {
        let k = key(rng.random_range(0..n as i64));
        let t = Instant::now();
        strata::get(&table, &k, None)?.ok_or("a key was not found")?;
        lat.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("{{\"get1_p50_ms\": {:.3}, \"get1_p99_ms\": {:.3}}}", percentile(&mut lat, 50), percentile(&mut lat, 99));
    Ok(())
}

/// `get_many` alone (for a profile): 7 calls of `count` random keys; prints the best and the median.
fn many_only(path: &str, n: usize, count: usize) -> Res<()> {
    let table = Table::open(Arc::new(LocalFileIO::new()), path)?;
    let mut rng = StdRng::seed_from_u64(9);
    let keys: Vec<Vec<Option<Datum>>> = (0..count).map(|_| key(rng.random_range(0..n as i64))).collect();
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let found = get_many(&table, &keys, None)?;
        times.push(t.elapsed().as_secs_f64());
        if found.iter().any(Option::is_none) {
            return Err("a key was not found".into());
        }
    }
    let best = times.iter().copied().fold(f64::MAX, f64::min);
    println!("{{\"keys\": {count}, \"best_s\": {best:.4}, \"p50_s\": {:.4}}}", percentile(&mut times, 50));
    Ok(())
}

/// `TableQuery` lookups alone (for a profile): warm-up, then 100,000 lookups; prints p50 and p99.
fn query_only(path: &str, n: usize) -> Res<()> {
    let table = Table::open(Arc::new(LocalFileIO::new()), path)?;
    let mut rng = StdRng::seed_from_u64(9);
    let query = TableQuery::new(&table)?;
    for _ in 0..200 {
        query.get(&key(rng.random_range(0..n as i64)))?;
    }
    let mut qlat = Vec::with_capacity(100_000);
    for _ in 0..100_000 {
        let k = key(rng.random_range(0..n as i64));
        let t = Instant::now();
        query.get(&k)?.ok_or("a key was not found by the query")?;
        qlat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "{{\"query_p50_us\": {:.1}, \"query_p99_us\": {:.1}}}",
        percentile(&mut qlat, 50),
        percentile(&mut qlat, 99)
    );
    Ok(())
}

/// Full scans alone (for a profile, or to compare file layouts): `count` scans; prints the best and the
/// median in seconds.
fn scan_only(path: &str, n: usize, count: usize) -> Res<()> {
    let table = Table::open(Arc::new(LocalFileIO::new()), path)?;
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let t = Instant::now();
        let read = ReadBuilder::new(&table);
        let rows: usize = read.read_plan(&read.plan()?)?.batches.iter().map(RecordBatch::num_rows).sum();
        times.push(t.elapsed().as_secs_f64());
        if rows != n {
            return Err(format!("a scan returned {rows} rows, not {n}").into());
        }
    }
    let best = times.iter().copied().fold(f64::MAX, f64::min);
    println!("{{\"scan_best_s\": {best:.3}, \"scan_p50_s\": {:.3}}}", percentile(&mut times, 50));
    Ok(())
}

/// Filtered scans on a value column no statistics can prune (random strings): one value (one row's), and
/// `s0 >= "8"` (about half the rows); `count` scans of each, the median in seconds and the rows kept.
fn filter_only(path: &str, n: usize, count: usize) -> Res<()> {
    let table = Table::open(Arc::new(LocalFileIO::new()), path)?;
    let one = rows(&[n as i64 / 3], 0)?;
    let value = one.column(1).as_any().downcast_ref::<StringArray>().ok_or("s0 is not a string")?.value(0).to_string();
    let mut out = Vec::new();
    for (name, filter) in [
        ("one_value", Predicate::eq("s0", Datum::String(value))),
        ("half", Predicate::cmp("s0", strata::CmpOp::GtEq, Datum::String("8".into()))),
    ] {
        let mut times = Vec::with_capacity(count);
        let mut kept = 0;
        for _ in 0..count {
            let t = Instant::now();
            let read = ReadBuilder::new(&table).with_filter(filter.clone());
            kept = read.read_plan(&read.plan()?)?.batches.iter().map(RecordBatch::num_rows).sum::<usize>();
            times.push(t.elapsed().as_secs_f64());
        }
        out.push(format!("\"{name}_p50_s\": {:.3}, \"{name}_rows\": {kept}", percentile(&mut times, 50)));
    }
    println!("{{{}}}", out.join(", "));
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match (arg(0), arg(1), arg(2).map(str::parse::<usize>)) {
        (Some("make"), Some(dir), Some(Ok(n))) => {
            let buckets = arg(4).map(str::parse).transpose()?.unwrap_or(4);
            make(dir, n, arg(3) != Some("mor"), buckets)
        }
        (Some("input"), Some(dir), Some(Ok(n))) => input(dir, n),
        (Some("load"), Some(dir), Some(_)) => {
            let inputs = arg(2).ok_or("load DIR INPUT_DIR [mor|dv] [BUCKETS]")?;
            let buckets = arg(4).map(str::parse).transpose()?.unwrap_or(4);
            load(dir, inputs, arg(3) != Some("mor"), buckets)
        }
        (Some("measure"), Some(table), Some(Ok(n))) => measure(table, n),
        (Some("query"), Some(table), Some(Ok(n))) => query_only(table, n),
        (Some("get"), Some(table), Some(Ok(n))) => get_only(table, n, 1000),
        (Some("many"), Some(table), Some(Ok(n))) => {
            many_only(table, n, arg(3).map(str::parse).transpose()?.unwrap_or(10_000))
        }
        (Some("scan"), Some(table), Some(Ok(n))) => scan_only(table, n, 7),
        (Some("filter"), Some(table), Some(Ok(n))) => filter_only(table, n, 7),
        _ => {
            eprintln!(
                "lookup: run through scripts/bench-lookup.sh (make DIR ROWS [mor|dv] [BUCKETS] | input DIR ROWS | load DIR INPUT_DIR [mor|dv] [BUCKETS] | measure TABLE ROWS | query TABLE ROWS | get TABLE ROWS | many TABLE ROWS [KEYS] | scan TABLE ROWS | filter TABLE ROWS)"
            );
            Ok(())
        }
    }
}
