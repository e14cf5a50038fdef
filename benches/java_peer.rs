//! Strata's side of `scripts/bench-java.sh`; Java Paimon 1.4.2's is `benches/java/PaimonBench.java`. Both
//! generate the same rows and keys with the same function (splitmix64 below) and run the same commands, each
//! printing one JSON line with wall and process CPU seconds:
//!
//! ```text
//! cargo bench --bench java_peer -- load TABLE ROWS ROUNDS BUCKETS DV [OPTION=VALUE ...]
//! cargo bench --bench java_peer -- compact TABLE         (full compaction of every bucket)
//! cargo bench --bench java_peer -- scan TABLE REPEATS    (every row of the latest snapshot, best of REPEATS)
//! cargo bench --bench java_peer -- lookup TABLE ROWS WARM KEYS   (TableQuery, then get_many of the same keys)
//! ```
//!
//! Schema: id BIGINT primary key, s0..s19 STRING (ten hexadecimal characters, Paimon's TableWriterBenchmark
//! shape). Load: ROWS rows in commits of [`CHUNK`] rows, then ROUNDS rounds of ROWS/10 keys each (a tenth
//! deletes), committed every CHUNK rows. Without arguments (a plain `cargo bench`) it says how to run it.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use strata::spec::{DataType, Datum, TableSchema, TypeRoot};
use strata::table::get_many;
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableQuery, TableWriter};
use strata_cli::cpu_seconds;

const STRING_COLUMNS: usize = 20;
const CHUNK: usize = 100_000;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// splitmix64's finalizer: the workload's only source of randomness, as in PaimonBench.java.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Column `c` of key `id` written in round `round`: ten hexadecimal characters.
fn value(id: i64, c: usize, round: usize) -> String {
    let seed = (id as u64).wrapping_mul(0x100_0000_01B3) ^ ((c as u64) << 48) ^ ((round as u64) << 56);
    format!("{:010x}", mix(seed) & 0xFF_FFFF_FFFF)
}

fn update_key(round: usize, j: u64, rows: u64) -> i64 {
    (mix(((round as u64) << 40) | j) % rows) as i64
}

fn is_delete(round: usize, j: u64) -> bool {
    mix(((round as u64) << 40) | j | (1 << 62)).is_multiple_of(10)
}

fn lookup_key(j: u64, rows: u64) -> i64 {
    (mix((1 << 60) | j) % rows) as i64
}

fn io() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

fn batch(rows: &[(i64, usize)]) -> Res<RecordBatch> {
    let mut fields = vec![Field::new("id", ArrowType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0)))];
    for c in 0..STRING_COLUMNS {
        fields.push(Field::new(format!("s{c}"), ArrowType::Utf8, true));
        cols.push(Arc::new(StringArray::from_iter_values(rows.iter().map(|(id, round)| value(*id, c, *round)))));
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}

/// Writes `rows` (key, round, delete) through `w` in commits of CHUNK rows.
fn write_chunks(w: &mut TableWriter, rows: &[(i64, usize, bool)]) -> Res<()> {
    for part in rows.chunks(CHUNK) {
        let keys: Vec<(i64, usize)> = part.iter().map(|r| (r.0, r.1)).collect();
        let kinds: Vec<i8> = part.iter().map(|r| if r.2 { 3 } else { 0 }).collect();
        w.write_with_kinds(&batch(&keys)?, &kinds)?;
        w.commit()?;
    }
    Ok(())
}

fn load(path: &str, rows: u64, rounds: usize, buckets: &str, dv: &str, extra: &[String]) -> Res<String> {
    let mut cols = vec![("id".to_string(), DataType::not_null(TypeRoot::BigInt))];
    cols.extend((0..STRING_COLUMNS).map(|c| (format!("s{c}"), DataType::string())));
    let mut options = BTreeMap::from([
        ("bucket".to_string(), buckets.to_string()),
        ("deletion-vectors.enabled".to_string(), dv.to_string()),
    ]);
    for kv in extra {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("option '{kv}' is not KEY=VALUE"))?;
        options.insert(k.to_string(), v.to_string());
    }
    let table = Table::create(io(), path, TableSchema::new(cols, vec![], vec!["id".into()], options, 0)?)?;
    // The keys are listed first (cheap); each chunk's strings are made inside the timed loop, as Java's are.
    // Commits as Java's: every CHUNK rows, and at the end of the load and of each round.
    let mut work: Vec<Vec<(i64, usize, bool)>> = vec![(0..rows as i64).map(|id| (id, 0, false)).collect()];
    for round in 1..=rounds {
        let n = (rows / 10).max(1);
        work.push((0..n).map(|j| (update_key(round, j, rows), round, is_delete(round, j))).collect());
    }
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let mut w = TableWriter::new(&table, "bench")?;
    for part in &work {
        write_chunks(&mut w, part)?;
    }
    if dv != "true" {
        // Merge-on-read compacts on background threads: the time includes finishing what they started.
        w.compact(false)?;
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(format!(
        "{{\"rowsWritten\": {}, \"seconds\": {secs:.4}, \"cpuSeconds\": {:.4}}}",
        work.iter().map(Vec::len).sum::<usize>(),
        cpu_seconds() - cpu0
    ))
}

fn compact(path: &str) -> Res<String> {
    let table = Table::open(io(), path)?;
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let mut w = TableWriter::new(&table, "bench-compactor")?;
    w.compact(true)?;
    let secs = started.elapsed().as_secs_f64();
    Ok(format!("{{\"seconds\": {secs:.4}, \"cpuSeconds\": {:.4}}}", cpu_seconds() - cpu0))
}

/// The scan's content check, as PaimonBench.java computes it: the sum over rows of `id * 31 + s0[0]` (the
/// first byte of column s0), wrapping; equal sums say both engines read the same rows and values.
fn checksum(b: &RecordBatch) -> Res<u64> {
    let ids = b.column(0).as_any().downcast_ref::<Int64Array>().ok_or("id is not BIGINT")?;
    let s0 = b.column(1).as_any().downcast_ref::<StringArray>().ok_or("s0 is not STRING")?;
    Ok((0..b.num_rows()).fold(0u64, |acc, i| {
        let first = if s0.is_null(i) { 0 } else { s0.value(i).as_bytes().first().copied().unwrap_or(0) as u64 };
        acc.wrapping_add((ids.value(i) as u64).wrapping_mul(31).wrapping_add(first))
    }))
}

fn scan(path: &str, repeats: usize) -> Res<String> {
    let table = Table::open(io(), path)?;
    let (mut best, mut best_cpu, mut rows, mut check) = (f64::MAX, 0.0, 0, 0);
    for _ in 0..repeats {
        let cpu0 = cpu_seconds();
        let started = Instant::now();
        let (mut n, mut sum) = (0, 0u64);
        for b in ReadBuilder::new(&table).stream()? {
            let b = b?;
            n += b.num_rows();
            sum = sum.wrapping_add(checksum(&b)?);
        }
        let secs = started.elapsed().as_secs_f64();
        if secs < best {
            (best, best_cpu) = (secs, cpu_seconds() - cpu0);
        }
        (rows, check) = (n, sum);
    }
    Ok(format!("{{\"rows\": {rows}, \"checksum\": {check}, \"seconds\": {best:.4}, \"cpuSeconds\": {best_cpu:.4}}}"))
}

fn lookup(path: &str, rows: u64, warm: u64, keys: u64) -> Res<String> {
    let table = Table::open(io(), path)?;
    let key = |j: u64| vec![Some(Datum::BigInt(lookup_key(j, rows)))];
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let query = TableQuery::new(&table)?;
    let mut found = 0;
    for j in 0..warm {
        found += usize::from(query.get(&key(j))?.is_some_and(|b| b.num_rows() > 0));
    }
    let warm_secs = started.elapsed().as_secs_f64();
    let cpu1 = cpu_seconds();
    let started = Instant::now();
    let mut lat = Vec::with_capacity(keys as usize);
    for j in warm..warm + keys {
        let t = Instant::now();
        found += usize::from(query.get(&key(j))?.is_some_and(|b| b.num_rows() > 0));
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu1;
    drop(query);
    lat.sort_by(f64::total_cmp);
    // The same keys through get_many: one call, no long-lived state (a batch of lookups from cold).
    let batch: Vec<Vec<Option<Datum>>> = (warm..warm + keys).map(key).collect();
    let cpu2 = cpu_seconds();
    let started = Instant::now();
    let many = get_many(&table, &batch, None)?;
    let many_secs = started.elapsed().as_secs_f64();
    let many_cpu = cpu_seconds() - cpu2;
    let many_found = many.iter().filter(|b| b.as_ref().is_some_and(|b| b.num_rows() > 0)).count();
    Ok(format!(
        "{{\"warmSeconds\": {warm_secs:.4}, \"warmCpuSeconds\": {:.4}, \"keys\": {keys}, \"found\": {found}, \
         \"seconds\": {secs:.4}, \"cpuSeconds\": {cpu:.4}, \"p50Us\": {:.2}, \"p99Us\": {:.2}, \
         \"getManySeconds\": {many_secs:.4}, \"getManyCpuSeconds\": {many_cpu:.4}, \"getManyFound\": {many_found}}}",
        cpu1 - cpu0,
        lat[lat.len() / 2],
        lat[lat.len() * 99 / 100]
    ))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let arg = |i: usize| args.get(i).map(String::as_str).ok_or("missing argument (see benches/java_peer.rs)");
    let number = |i: usize| -> Res<u64> { Ok(arg(i)?.parse::<u64>()?) };
    let Some(op) = args.first() else {
        eprintln!("java_peer: run through scripts/bench-java.sh (it runs Java Paimon on the same workload)");
        return Ok(());
    };
    let out = match op.as_str() {
        "load" => load(arg(1)?, number(2)?, number(3)? as usize, arg(4)?, arg(5)?, args.get(6..).unwrap_or_default())?,
        "compact" => compact(arg(1)?)?,
        "scan" => scan(arg(1)?, number(2)? as usize)?,
        "lookup" => lookup(arg(1)?, number(2)?, number(3)?, number(4)?)?,
        other => return Err(format!("unknown command {other}").into()),
    };
    println!("{out}");
    Ok(())
}
