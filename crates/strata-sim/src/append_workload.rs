//! Append-table workloads: random appends, deletes and updates by a condition, compactions, crashes and
//! reopens of an append table (unaware or fixed buckets, partitioned or not, with or without deletion
//! vectors), checked after every step against a model of the committed rows, with storage faults injected
//! into commits, deletes, updates and compactions. A faulted step may have landed or not, so the table must
//! then read as the model before it or as the model after it, and nothing else; a fixed bucket keeps a key's
//! rows in the model's order (arrival order, but an update that cannot change rows in place moves them to
//! the end, as Paimon's does).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata_io::FileIO;
use strata_spec::{DataType, Error, Result, TableSchema};
use strata_table::{commit_batch, ReadBuilder, RowUpdate, Table, TableWrite, TableWriter};

use crate::workload::{Divergence, FaultPlan, ReplayStats};
use crate::{Fault, FaultyFileIO, OpKind};

/// An append workload's table: `n BIGINT` (each row's arrival number), `id BIGINT`, and `p STRING` when
/// partitioned; no primary key.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendHeader {
    /// `bucket`: -1 (unaware) or a fixed count with `bucket-key = id`.
    pub buckets: i32,
    /// Partitioned by `p`.
    pub partitioned: bool,
    /// `deletion-vectors.enabled`.
    pub deletion_vectors: bool,
    /// `compaction.min.file-num`.
    pub min_file_num: u32,
}

/// One appended row.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendRow {
    /// Its arrival number (unique).
    pub n: i64,
    /// The bucket key.
    pub id: i64,
    /// The partition, when partitioned.
    pub p: Option<String>,
}

/// One step of an append workload.
#[derive(Debug, Clone, PartialEq)]
pub enum AppendOp {
    /// Rows buffered by the writer.
    Append(Vec<AppendRow>),
    /// The writer commits what it buffered.
    Commit,
    /// Rows whose `id % modulo == rest` are deleted (by a writer of its own, committed at once).
    Delete {
        /// The modulus.
        modulo: i64,
        /// The remainder deleted.
        rest: i64,
    },
    /// Rows whose `id % modulo == rest` change (by a writer of its own, committed at once): `id` grows by 100
    /// (another key, and in fixed buckets maybe another bucket), or with `move_partition` `p` flips between
    /// a and b.
    Update {
        /// The modulus.
        modulo: i64,
        /// The remainder changed.
        rest: i64,
        /// Change the partition instead of the id.
        move_partition: bool,
    },
    /// The writer compacts (fully or not), committing what it buffered too.
    Compact {
        /// A full compaction.
        full: bool,
    },
    /// The writer dies: what it buffered is lost.
    Crash,
    /// The table is opened again, with a new writer.
    Reopen,
}

/// A table and its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendWorkload {
    /// The table.
    pub header: AppendHeader,
    /// The steps.
    pub ops: Vec<AppendOp>,
}

impl AppendWorkload {
    /// A random workload of about `commits` commits, from `seed`.
    pub fn generate(seed: u64, commits: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let header = AppendHeader {
            buckets: [-1, -1, 1, 2][rng.random_range(0..4)],
            partitioned: rng.random_bool(0.5),
            deletion_vectors: rng.random_bool(0.5),
            min_file_num: [2, 3, 5][rng.random_range(0..3)],
        };
        let (mut ops, mut next, mut pending, mut done) = (Vec::new(), 0i64, false, 0);
        while done < commits {
            match rng.random_range(0..100) {
                0..40 => {
                    let rows = (0..rng.random_range(1..30))
                        .map(|_| {
                            next += 1;
                            let p = header.partitioned.then(|| ["a", "b"][rng.random_range(0..2)].to_string());
                            AppendRow { n: next, id: rng.random_range(0..20), p }
                        })
                        .collect();
                    ops.push(AppendOp::Append(rows));
                    pending = true;
                }
                40..65 => {
                    ops.push(AppendOp::Commit);
                    (pending, done) = (false, done + 1);
                }
                65..77 if !pending => {
                    let modulo = rng.random_range(2..6);
                    let rest = rng.random_range(0..modulo);
                    ops.push(match rng.random_range(0..3) {
                        0 => AppendOp::Delete { modulo, rest },
                        k => AppendOp::Update { modulo, rest, move_partition: k == 2 && header.partitioned },
                    });
                    done += 1;
                }
                65..90 => {
                    ops.push(AppendOp::Compact { full: rng.random_bool(0.5) });
                    (pending, done) = (false, done + 1);
                }
                90..95 => {
                    ops.push(AppendOp::Crash);
                    pending = false;
                }
                _ => {
                    ops.push(AppendOp::Reopen);
                    pending = false;
                }
            }
        }
        AppendWorkload { header, ops }
    }
}

/// The commit user of the replayer's writers.
const USER: &str = "append-replay";

struct Replay {
    faulty: FaultyFileIO,
    path: String,
    table: Table,
    writer: Option<TableWriter>,
    fixed: bool,
    deletion_vectors: bool,
    committed: Vec<AppendRow>,
    pending: Vec<AppendRow>,
}

/// Replays `w` in a fresh table under `dir` of `io` (behind a fault injector). Errors of the replayer itself
/// are the outer `Err`; a table that reads other than the model is the inner one.
pub fn replay_append(
    io: Arc<dyn FileIO>,
    dir: &str,
    w: &AppendWorkload,
    faults: Option<FaultPlan>,
) -> Result<std::result::Result<ReplayStats, Divergence>> {
    let mut r = start(io, dir, &w.header)?;
    let mut rng = faults.map(|f| StdRng::seed_from_u64(f.seed));
    let rate = faults.map_or(0.0, |f| f.rate);
    let mut stats = ReplayStats::default();
    for (step, op) in w.ops.iter().enumerate() {
        stats.steps += 1;
        let fault = rng
            .as_mut()
            .filter(|_| !matches!(op, AppendOp::Append(_) | AppendOp::Crash | AppendOp::Reopen))
            .and_then(|rng| {
                rng.random_bool(rate).then(|| {
                    (rng.random_range(0..48u64), [Fault::Before, Fault::After, Fault::Torn][rng.random_range(0..3)])
                })
            });
        if let Some((k, how)) = fault {
            r.faulty.fail_at(k, how, Some(OpKind::Mutate));
        }
        let before = r.committed.clone();
        let (result, after) = r.run(op);
        let injected = fault.is_some_and(|(k, _)| r.faulty.count() > k);
        r.faulty.disarm();
        stats.faults += usize::from(injected);
        let outcome = match result {
            Ok(()) => {
                stats.commits += usize::from(!matches!(op, AppendOp::Append(_) | AppendOp::Crash | AppendOp::Reopen));
                r.check(&after)
            }
            Err(e) if injected => {
                // The step failed under the fault: whatever it buffered is gone with its writer, and it landed
                // whole or not at all.
                stats.failed_commits += 1;
                r.writer = None;
                r.pending.clear();
                r.check(&after).or_else(|_| r.check(&before)).map_err(|m| format!("after a failed step ({e}): {m}"))
            }
            Err(e) => Err(format!("the step failed without a fault: {e}")),
        };
        match outcome {
            Ok(landed) => r.committed = landed,
            Err(message) => return Ok(Err(Divergence { step, message: format!("{op:?}: {message}") })),
        }
    }
    Ok(Ok(stats))
}

fn start(io: Arc<dyn FileIO>, dir: &str, h: &AppendHeader) -> Result<Replay> {
    let path = format!("{}/db.db/events", dir.trim_end_matches('/'));
    Table::delete_table_dir(&io, &path)?;
    let faulty = FaultyFileIO::new(io);
    let mut columns = vec![("n".to_string(), DataType::bigint()), ("id".to_string(), DataType::bigint())];
    let mut partition_keys = Vec::new();
    if h.partitioned {
        columns.push(("p".to_string(), DataType::string()));
        partition_keys.push("p".to_string());
    }
    let mut options = std::collections::BTreeMap::from([
        ("bucket".to_string(), h.buckets.to_string()),
        ("deletion-vectors.enabled".to_string(), h.deletion_vectors.to_string()),
        ("compaction.min.file-num".to_string(), h.min_file_num.to_string()),
    ]);
    if h.buckets > 0 {
        options.insert("bucket-key".into(), "id".into());
    }
    let schema = TableSchema::new(columns, partition_keys, Vec::new(), options, 0)?;
    let table = Table::create(Arc::new(faulty.clone()), &path, schema)?;
    Ok(Replay {
        faulty,
        path,
        table,
        writer: None,
        fixed: h.buckets > 0,
        deletion_vectors: h.deletion_vectors,
        committed: Vec::new(),
        pending: Vec::new(),
    })
}

impl Replay {
    fn writer(&mut self) -> Result<&mut TableWriter> {
        if self.writer.is_none() {
            self.writer = Some(TableWriter::new(&self.table, USER)?);
        }
        self.writer.as_mut().ok_or_else(|| Error::invalid("replay", "no writer"))
    }

    /// Runs `op`; returns its result and the committed rows if it lands.
    fn run(&mut self, op: &AppendOp) -> (Result<()>, Vec<AppendRow>) {
        let landed_with_pending = || [self.committed.clone(), self.pending.clone()].concat();
        match op {
            AppendOp::Append(rows) => {
                let batch = self.batch(rows);
                let done = batch.and_then(|b| self.writer()?.write(&b));
                if done.is_ok() {
                    self.pending.extend(rows.iter().cloned());
                }
                (done, self.committed.clone())
            }
            AppendOp::Commit => {
                let after = landed_with_pending();
                let done = self.writer().and_then(|w| w.commit()).map(|_| ());
                if done.is_ok() {
                    self.pending.clear();
                }
                (done, after)
            }
            AppendOp::Compact { full } => {
                let after = landed_with_pending();
                let done = self.writer().and_then(|w| w.compact(*full)).map(|_| ());
                if done.is_ok() {
                    self.pending.clear();
                }
                (done, after)
            }
            AppendOp::Delete { modulo, rest } => {
                let after: Vec<AppendRow> = self.committed.iter().filter(|r| r.id % modulo != *rest).cloned().collect();
                (self.delete(*modulo, *rest), after)
            }
            AppendOp::Update { modulo, rest, move_partition } => {
                let after = self.updated(*modulo, *rest, *move_partition);
                (self.update(*modulo, *rest, *move_partition), after)
            }
            AppendOp::Crash => {
                self.writer = None;
                self.pending.clear();
                (Ok(()), self.committed.clone())
            }
            AppendOp::Reopen => {
                self.writer = None;
                self.pending.clear();
                let opened = Table::open(Arc::new(self.faulty.clone()), &self.path).map(|t| self.table = t);
                (opened, self.committed.clone())
            }
        }
    }

    /// Deletes the rows whose `id % modulo == rest` in a commit of their own.
    fn delete(&mut self, modulo: i64, rest: i64) -> Result<()> {
        let mut w = TableWrite::new(&self.table)?;
        let deleted = w.delete_matching(&mut |b: &RecordBatch| {
            let ids = b.column_by_name("id").ok_or_else(|| Error::invalid("replay", "no id column"))?;
            Ok(ids.as_primitive::<Int64Type>().iter().map(|v| v.map(|v| v % modulo == rest)).collect::<BooleanArray>())
        })?;
        if deleted > 0 {
            let messages = w.prepare_commit_waiting()?;
            commit_batch(USER, &self.table, &mut w, messages, None)?;
        }
        Ok(())
    }

    /// The committed rows after an update: changed in place when the table rewrites files in place (no
    /// deletion vectors, rows staying in their partition and bucket), else moved to the end in their order.
    fn updated(&self, modulo: i64, rest: i64, move_partition: bool) -> Vec<AppendRow> {
        let change = |r: &AppendRow| {
            let mut r = r.clone();
            if move_partition {
                r.p = r.p.map(|p| if p == "a" { "b".to_string() } else { "a".to_string() });
            } else {
                r.id += 100;
            }
            r
        };
        let matched = |r: &AppendRow| r.id % modulo == rest;
        if !self.deletion_vectors && !move_partition && !self.fixed {
            return self.committed.iter().map(|r| if matched(r) { change(r) } else { r.clone() }).collect();
        }
        let (changed, kept): (Vec<&AppendRow>, Vec<&AppendRow>) = self.committed.iter().partition(|r| matched(r));
        kept.into_iter().cloned().chain(changed.into_iter().map(change)).collect()
    }

    /// Changes the rows whose `id % modulo == rest` (see [`AppendOp::Update`]) in a commit of their own.
    fn update(&mut self, modulo: i64, rest: i64, move_partition: bool) -> Result<()> {
        let mut w = TableWrite::new(&self.table)?;
        let mut matches = |b: &RecordBatch| -> Result<BooleanArray> {
            let ids = b.column_by_name("id").ok_or_else(|| Error::invalid("replay", "no id column"))?;
            Ok(ids.as_primitive::<Int64Type>().iter().map(|v| v.map(|v| v % modulo == rest)).collect())
        };
        let mut assign = |b: &RecordBatch| -> Result<RecordBatch> {
            let mut columns = b.columns().to_vec();
            if move_partition {
                let p = b.column_by_name("p").ok_or_else(|| Error::invalid("replay", "no p column"))?;
                let flipped: StringArray =
                    p.as_string::<i32>().iter().map(|v| v.map(|v| if v == "a" { "b" } else { "a" })).collect();
                columns[2] = Arc::new(flipped);
            } else {
                let ids = b.column(1).as_primitive::<Int64Type>();
                columns[1] = Arc::new(ids.iter().map(|v| v.map(|v| v + 100)).collect::<Int64Array>());
            }
            RecordBatch::try_new(b.schema(), columns).map_err(|e| Error::internal_from("replay", e))
        };
        let column = if move_partition { "p" } else { "id" };
        let changes = RowUpdate { matches: &mut matches, assign: &mut assign, columns: vec![column.to_string()] };
        if w.update_matching(changes)? > 0 {
            let messages = w.prepare_commit_waiting()?;
            commit_batch(USER, &self.table, &mut w, messages, None)?;
        }
        Ok(())
    }

    fn batch(&self, rows: &[AppendRow]) -> Result<RecordBatch> {
        let mut columns: Vec<(&str, ArrayRef)> = vec![
            ("n", Arc::new(Int64Array::from(rows.iter().map(|r| r.n).collect::<Vec<_>>()))),
            ("id", Arc::new(Int64Array::from(rows.iter().map(|r| r.id).collect::<Vec<_>>()))),
        ];
        if rows.iter().any(|r| r.p.is_some()) {
            columns.push(("p", Arc::new(StringArray::from(rows.iter().map(|r| r.p.clone()).collect::<Vec<_>>()))));
        }
        RecordBatch::try_from_iter(columns).map_err(|e| Error::internal_from("replay", e))
    }

    /// `Ok(want)` if the table reads exactly `want` (a fixed bucket's rows of a key in the model's order),
    /// else what differs.
    fn check(&self, want: &[AppendRow]) -> std::result::Result<Vec<AppendRow>, String> {
        let read = ReadBuilder::new(&self.table).read().map_err(|e| format!("read: {e}"))?;
        let mut got = Vec::new();
        for b in &read.batches {
            let col = |name: &str| b.column_by_name(name).map(|c| c.as_primitive::<Int64Type>().clone());
            let (Some(n), Some(id)) = (col("n"), col("id")) else { return Err("no n or id column".into()) };
            let p = b.column_by_name("p").map(|c| c.as_string::<i32>().clone());
            for i in 0..b.num_rows() {
                let p = p.as_ref().filter(|p| p.is_valid(i)).map(|p| p.value(i).to_string());
                got.push(AppendRow { n: n.value(i), id: id.value(i), p });
            }
        }
        if self.fixed {
            let by_key = |rows: &[AppendRow]| {
                let mut keys: std::collections::BTreeMap<(Option<String>, i64), Vec<i64>> = Default::default();
                rows.iter().for_each(|r| keys.entry((r.p.clone(), r.id)).or_default().push(r.n));
                keys
            };
            let (read, model) = (by_key(&got), by_key(want));
            if let Some((key, order)) = read.iter().find(|(k, order)| model.get(*k).is_some_and(|m| m != *order)) {
                return Err(format!("key {key:?} reads rows {order:?}, the model has {:?}", model.get(key)));
            }
        }
        let rows = |rows: &[AppendRow]| {
            let mut out: Vec<(i64, i64, Option<String>)> = rows.iter().map(|r| (r.n, r.id, r.p.clone())).collect();
            out.sort_unstable();
            out
        };
        let (sorted_got, sorted_want) = (rows(&got), rows(want));
        if sorted_got != sorted_want {
            let missing: Vec<_> = sorted_want.iter().filter(|r| sorted_got.binary_search(r).is_err()).take(5).collect();
            let extra: Vec<_> = sorted_got.iter().filter(|r| sorted_want.binary_search(r).is_err()).take(5).collect();
            return Err(format!(
                "read {} rows, the model has {} (missing {missing:?}, extra {extra:?})",
                sorted_got.len(),
                sorted_want.len()
            ));
        }
        Ok(want.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_io::LocalFileIO;

    /// Random append workloads, some faulted, read as their models after every step.
    #[test]
    fn append_workloads_read_as_their_models_under_faults() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
        let (mut faults, mut failed) = (0, 0);
        for seed in 0..24u64 {
            let w = AppendWorkload::generate(seed, 12);
            let plan = (seed % 2 == 1).then_some(FaultPlan { rate: 0.4, seed });
            let d = dir.path().join(seed.to_string());
            match replay_append(io.clone(), &d.to_string_lossy(), &w, plan) {
                Ok(Ok(stats)) => {
                    faults += stats.faults;
                    failed += stats.failed_commits;
                }
                Ok(Err(d)) => panic!("seed {seed}: {d}\n{w:#?}"),
                Err(e) => panic!("seed {seed}: {e}"),
            }
        }
        assert!(faults > 5 && failed > 0, "{faults} faults, {failed} failed steps: the faults must bite");
    }
}
