//! Workloads: a JSON-lines script of table operations (documented in docs/WORKLOADS.md), a seeded generator,
//! and a replayer that checks the table against a `BTreeMap` model and the LSM invariants after every
//! commit, optionally failing storage operations on the way.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use strata_io::{Fault, FaultyFileIO, FileIO, LocalFileIO, OpKind};
use strata_spec::{DataType, Datum, Error, Result, TableSchema};

use crate::maintenance::{expire_snapshots, ExpireOptions};
use crate::query::TableQuery;
use crate::read::{get, ReadBuilder};
use crate::table::Table;
use crate::write::TableWriter;

/// The table a workload runs on: `id BIGINT` key (plus `p STRING` when partitioned), `v BIGINT`, `s STRING`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Buckets.
    pub buckets: i32,
    /// Partitioned by `p`.
    #[serde(default)]
    pub partitioned: bool,
    /// `deletion-vectors.enabled` at creation.
    #[serde(default)]
    pub deletion_vectors: bool,
    /// `merge-engine`: deduplicate (default), partial-update, aggregation (`v` summed, `s` last non-null) or
    /// first-row.
    #[serde(default = "default_engine")]
    pub merge_engine: String,
    /// More table options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

fn default_engine() -> String {
    "deduplicate".to_string()
}

/// One row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Key.
    pub id: i64,
    /// Partition (partitioned tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// Value.
    #[serde(default)]
    pub v: Option<i64>,
    /// Value.
    #[serde(default)]
    pub s: Option<String>,
}

/// One key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    /// Key.
    pub id: i64,
    /// Partition (partitioned tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Upsert rows (buffered until `commit`).
    Put {
        /// Rows.
        rows: Vec<Row>,
    },
    /// Delete keys (buffered until `commit`).
    Delete {
        /// Keys.
        keys: Vec<Key>,
    },
    /// Commit what is buffered.
    Commit,
    /// Compact every bucket (universal picks).
    Compact,
    /// Fully compact every bucket.
    FullCompact,
    /// Scan and compare with the model.
    Scan,
    /// Look a key up and compare with the model.
    Get {
        /// The key.
        key: Key,
    },
    /// Expire down to `retain` snapshots.
    Expire {
        /// Snapshots kept.
        retain: u32,
    },
    /// Switch deletion vectors on or off (with the full compaction it needs).
    SwitchMode {
        /// The new setting.
        dv: bool,
    },
    /// The writer dies: what it buffered is lost.
    Crash,
    /// A new writer on the latest snapshot.
    Reopen,
}

/// A header and its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The table.
    pub header: Header,
    /// The steps.
    pub ops: Vec<Op>,
}

/// One line of a workload file.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Header { header: Header },
    Op(Op),
}

impl Workload {
    /// Parses JSON lines: a `{"header": …}` line, then one step per line. Empty lines and `#` comments are
    /// skipped.
    pub fn parse(text: &str) -> Result<Self> {
        let mut header = None;
        let mut ops = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parsed: Line = serde_json::from_str(line)
                .map_err(|e| Error::invalid(format!("workload line {}", n + 1), e.to_string()))?;
            match parsed {
                Line::Header { header: h } => {
                    if header.replace(h).is_some() {
                        return Err(Error::invalid(format!("workload line {}", n + 1), "a second header"));
                    }
                }
                Line::Op(op) => ops.push(op),
            }
        }
        let header = header.ok_or_else(|| Error::invalid("workload", "no header line"))?;
        Ok(Workload { header, ops })
    }

    /// The JSON-lines form.
    pub fn to_text(&self) -> String {
        let mut out = serde_json::to_string(&Line::Header { header: self.header.clone() }).unwrap_or_default();
        out.push('\n');
        for op in &self.ops {
            out.push_str(&serde_json::to_string(op).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// A random workload: `commits` commits of puts and deletes over a uniform or zipfian key space, with
    /// compactions, scans, gets, expirations, crashes and mode switches mixed in.
    pub fn generate(seed: u64, commits: usize) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let partitioned = rng.random_bool(0.3);
        let engine =
            ["deduplicate", "deduplicate", "partial-update", "aggregation", "first-row"][rng.random_range(0..5)];
        let mut header = Header {
            buckets: rng.random_range(1..=3),
            partitioned,
            deletion_vectors: engine != "first-row" && rng.random_bool(0.5),
            merge_engine: engine.to_string(),
            options: BTreeMap::from([
                ("num-sorted-run.compaction-trigger".to_string(), rng.random_range(2..=5).to_string()),
                ("target-file-size".to_string(), format!("{} kb", rng.random_range(4..=64))),
            ]),
        };
        let key_space: i64 = [20, 200, 2000][rng.random_range(0..3)];
        let zipf = rng.random_bool(0.5);
        let key = |rng: &mut StdRng| -> Key {
            let id = if zipf {
                // Zipf-ish: small keys far more often.
                ((key_space as f64).powf(rng.random::<f64>()) as i64 - 1).clamp(0, key_space - 1)
            } else {
                rng.random_range(0..key_space)
            };
            Key { id, p: partitioned.then(|| ["a", "b"][rng.random_range(0..2)].to_string()) }
        };
        let delete_ratio = [0.0, 0.1, 0.4][rng.random_range(0..3)];
        let mut ops = Vec::new();
        for _ in 0..commits {
            for _ in 0..rng.random_range(1..4) {
                let n = rng.random_range(1..40);
                if rng.random_bool(delete_ratio) {
                    ops.push(Op::Delete { keys: (0..n).map(|_| key(&mut rng)).collect() });
                } else {
                    let rows = (0..n)
                        .map(|_| {
                            let k = key(&mut rng);
                            Row {
                                id: k.id,
                                p: k.p,
                                v: rng.random_bool(0.9).then(|| rng.random_range(-1000..1000)),
                                s: rng.random_bool(0.8).then(|| format!("s{}", rng.random_range(0..100))),
                            }
                        })
                        .collect();
                    ops.push(Op::Put { rows });
                }
            }
            if rng.random_bool(0.05) {
                ops.push(Op::Crash);
            }
            ops.push(Op::Commit);
            match rng.random_range(0..40) {
                0..=2 => ops.push(Op::Compact),
                3 => ops.push(Op::FullCompact),
                4..=6 => ops.push(Op::Expire { retain: rng.random_range(1..4) }),
                // First-row tables cannot have deletion vectors.
                7 if engine != "first-row" => ops.push(Op::SwitchMode { dv: rng.random_bool(0.5) }),
                8 => ops.push(Op::Reopen),
                9..=12 => ops.push(Op::Get { key: key(&mut rng) }),
                _ => {}
            }
        }
        ops.push(Op::Scan);
        // Changelog producers, drawn from a generator of their own so that earlier seeds keep their workloads.
        let mut changelog_rng = StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(17));
        if changelog_rng.random_bool(0.4) {
            // Input changelog is every input row: it folds to the table only where the last row wins.
            let producer = if matches!(engine, "deduplicate" | "first-row") {
                ["input", "lookup"][changelog_rng.random_range(0..2)]
            } else {
                "lookup"
            };
            header.options.insert("changelog-producer".to_string(), producer.to_string());
        }
        Workload { header, ops }
    }
}

/// Where a replay diverged.
#[derive(Debug, Clone)]
pub struct Divergence {
    /// Index of the step (0-based) after which the check failed.
    pub step: usize,
    /// What differed.
    pub message: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "divergence at step {}: {}", self.step, self.message)
    }
}

/// Counts of a replay.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayStats {
    /// Steps run.
    pub steps: usize,
    /// Commits acknowledged.
    pub commits: usize,
    /// Faults injected.
    pub faults: usize,
    /// Commits that failed under a fault (and were found landed or not).
    pub failed_commits: usize,
}

/// A row's values (`v`, `s`).
type Values = (Option<i64>, Option<String>);

type Model = BTreeMap<(String, i64), Values>;

/// Failing storage operations during commits: with probability `rate`, a commit gets one fault at a
/// random mutating operation.
#[derive(Debug, Clone, Copy)]
pub struct FaultPlan {
    /// Chance that a commit is faulted.
    pub rate: f64,
    /// Seed of the choices.
    pub seed: u64,
}

/// Folds one buffered change into the model as the merge engine does.
fn apply_change(model: &mut Model, engine: &str, key: (String, i64), change: Option<Values>) {
    match (engine, change) {
        ("first-row", None) => {}
        ("first-row", Some(v)) => {
            model.entry(key).or_insert(v);
        }
        (_, None) => {
            model.remove(&key);
        }
        ("partial-update", Some((v, s))) => {
            let cur = model.entry(key).or_insert((None, None));
            if v.is_some() {
                cur.0 = v;
            }
            if s.is_some() {
                cur.1 = s;
            }
        }
        ("aggregation", Some((v, s))) => {
            let cur = model.entry(key).or_insert((None, None));
            if let Some(x) = v {
                cur.0 = Some(cur.0.unwrap_or(0).wrapping_add(x));
            }
            if s.is_some() {
                cur.1 = s;
            }
        }
        (_, Some(v)) => {
            model.insert(key, v);
        }
    }
}

struct Runner {
    faulty: FaultyFileIO,
    path: String,
    table: Table,
    writer: Option<TableWriter>,
    /// A point-query handle kept across gets (dropped when the table is reopened or altered).
    query: Option<TableQuery>,
    model: Model,
    pending: Vec<(Key, Option<Values>)>,
    partitioned: bool,
    engine: String,
    /// The changelog folded so far: up to which snapshot, and the rows it gives.
    changelog: std::cell::RefCell<(i64, Model)>,
}

fn key_of(k: &Key) -> (String, i64) {
    (k.p.clone().unwrap_or_default(), k.id)
}

impl Runner {
    fn writer(&mut self) -> Result<&mut TableWriter> {
        if self.writer.is_none() {
            self.writer = Some(TableWriter::new(&self.table, "replay")?);
        }
        self.writer.as_mut().ok_or_else(|| Error::invalid("replay", "no writer"))
    }

    fn row(&self, id: i64, p: Option<String>, v: Option<i64>, s: Option<String>) -> Vec<Option<Datum>> {
        let mut r = vec![Some(Datum::BigInt(id))];
        if self.partitioned {
            r.push(Some(Datum::String(p.unwrap_or_default())));
        }
        r.push(v.map(Datum::BigInt));
        r.push(s.map(Datum::String));
        r
    }

    fn key(&self, k: &Key) -> Vec<Option<Datum>> {
        let mut r = vec![Some(Datum::BigInt(k.id))];
        if self.partitioned {
            r.push(Some(Datum::String(k.p.clone().unwrap_or_default())));
        }
        r
    }

    fn reopen(&mut self) -> Result<()> {
        self.writer = None;
        self.query = None;
        self.pending.clear();
        self.table = Table::open(Arc::new(self.faulty.clone()), &self.path)?;
        Ok(())
    }

    fn scan(&self) -> Result<Model> {
        let r = ReadBuilder::new(&self.table).read()?;
        let mut out = Model::new();
        for b in &r.batches {
            let ids = b.column_by_name("id").and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>());
            let vs = b.column_by_name("v").and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>());
            let ss = b.column_by_name("s").and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>());
            let ps = b.column_by_name("p").and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>());
            let (Some(ids), Some(vs), Some(ss)) = (ids, vs, ss) else {
                return Err(Error::invalid("replay", "scan returned unexpected columns"));
            };
            use arrow_array::Array;
            for i in 0..b.num_rows() {
                let p = ps.map(|p| p.value(i).to_string()).unwrap_or_default();
                let row = (vs.is_valid(i).then(|| vs.value(i)), ss.is_valid(i).then(|| ss.value(i).to_string()));
                if out.insert((p.clone(), ids.value(i)), row).is_some() {
                    return Err(Error::Corrupt {
                        path: self.path.clone(),
                        message: format!("key ({p}, {}) read twice", ids.value(i)),
                    });
                }
            }
        }
        Ok(out)
    }

    /// The LSM and deletion-vector invariants of the latest snapshot.
    fn invariants(&self) -> std::result::Result<(), String> {
        let sm = self.table.snapshot_manager();
        let ids = sm.list_ids().map_err(|e| e.to_string())?;
        if let (Some(first), Some(last)) = (ids.first(), ids.last()) {
            if ids.len() as i64 != last - first + 1 {
                return Err(format!("snapshot ids are not consecutive: {ids:?}"));
            }
        }
        let Some(s) = self.table.snapshot(None).map_err(|e| e.to_string())? else { return Ok(()) };
        let live = self.table.live_files(&s).map_err(|e| e.to_string())?;
        let names: BTreeSet<&str> = live.iter().map(|e| e.file.file_name.as_str()).collect();
        let dfs = self.table.deletion_files(&s).map_err(|e| e.to_string())?;
        for ((_, _, file), df) in &dfs {
            if !names.contains(file.as_str()) {
                return Err(format!("a deletion vector names {file}, which is not in snapshot {}", s.id));
            }
            let e = live.iter().find(|e| &e.file.file_name == file).ok_or("vanished")?;
            let dv = df.read(self.table.io().as_ref()).map_err(|e| e.to_string())?;
            if dv.positions().any(|p| p as i64 >= e.file.row_count) {
                return Err(format!("a deletion vector position is beyond the rows of {file}"));
            }
        }
        if self.table.schema().core_options().deletion_vectors_enabled().unwrap_or(false) {
            for e in live.iter().filter(|e| e.file.level > 0) {
                if e.file.delete_row_count.unwrap_or(0) > 0 {
                    return Err(format!("{} at level {} holds retract rows", e.file.file_name, e.file.level));
                }
            }
        }
        Ok(())
    }

    /// With a changelog producer: the changelog of every snapshot since the last check, folded into the
    /// rows before it, gives the rows of the latest snapshot (each -U or -D of the lookup producer must carry
    /// the row it replaces). Expired snapshots take their changelog along: after such a gap the fold starts
    /// again from the latest snapshot.
    fn check_changelog(&self, scanned: &Model) -> std::result::Result<(), String> {
        use arrow_array::Array;
        use strata_spec::options::ChangelogProducer;
        let options = self.table.schema().core_options();
        let producer = options.changelog_producer().map_err(|e| e.to_string())?;
        // Input changelog of a first-row table is every input row, not the rows kept: nothing to fold.
        if producer == ChangelogProducer::None || producer == ChangelogProducer::Input && self.engine == "first-row" {
            return Ok(());
        }
        let sm = self.table.snapshot_manager();
        let (Some(latest), Some(earliest)) =
            (sm.latest_id().map_err(|e| e.to_string())?, sm.earliest_id().map_err(|e| e.to_string())?)
        else {
            return Ok(());
        };
        let mut state = self.changelog.borrow_mut();
        let (upto, folded) = &mut *state;
        if *upto + 1 < earliest {
            *folded = scanned.clone();
            *upto = latest;
            return Ok(());
        }
        let layout = self.table.layout().map_err(|e| e.to_string())?;
        let col = |name: &str| layout.value_fields.iter().position(|f| f.name == name).map(|i| layout.value_index(i));
        let (Some(id_col), Some(v_col), Some(s_col)) = (col("id"), col("v"), col("s")) else {
            return Err("changelog files lack the table's columns".to_string());
        };
        let p_col = col("p");
        for id in (*upto + 1)..=latest {
            let s = self.table.snapshot(Some(id)).map_err(|e| e.to_string())?.ok_or("a snapshot vanished")?;
            for e in self.table.changelog_files(&s).map_err(|e| e.to_string())? {
                let path = crate::scan::data_file_path(&self.table, &e).map_err(|e| e.to_string())?;
                let file = layout.file_ref(path, e.file.clone(), None).map_err(|e| e.to_string())?;
                let columns = strata_format::bucket_read::file_columns(&layout);
                let batches =
                    strata_format::bucket_read::open_data_file(self.table.io().as_ref(), &file, columns, false, 1024)
                        .map_err(|e| e.to_string())?;
                for b in batches {
                    let b = b.map_err(|e| e.to_string())?;
                    let int = |c: usize| b.column(c).as_any().downcast_ref::<arrow_array::Int64Array>().cloned();
                    let string = |c: usize| b.column(c).as_any().downcast_ref::<arrow_array::StringArray>().cloned();
                    let kinds =
                        b.column(layout.kind_index()).as_any().downcast_ref::<arrow_array::Int8Array>().cloned();
                    let (Some(kinds), Some(ids), Some(vs), Some(ss)) = (kinds, int(id_col), int(v_col), string(s_col))
                    else {
                        return Err("changelog columns of unexpected types".to_string());
                    };
                    let ps = p_col.and_then(string);
                    for i in 0..b.num_rows() {
                        let key = (ps.as_ref().map(|p| p.value(i).to_string()).unwrap_or_default(), ids.value(i));
                        let row =
                            (vs.is_valid(i).then(|| vs.value(i)), ss.is_valid(i).then(|| ss.value(i).to_string()));
                        match kinds.value(i) {
                            0 | 2 => {
                                folded.insert(key, row);
                            }
                            k => {
                                if producer == ChangelogProducer::Lookup && folded.get(&key) != Some(&row) {
                                    return Err(format!(
                                        "snapshot {id}: changelog row of kind {k} for key {key:?} carries {row:?}, but the key holds {:?}",
                                        folded.get(&key)
                                    ));
                                }
                                if k == 3 {
                                    folded.remove(&key);
                                }
                            }
                        }
                    }
                }
            }
        }
        *upto = latest;
        if folded != scanned {
            let differing: Vec<_> = scanned.iter().filter(|(k, v)| folded.get(*k) != Some(*v)).take(3).collect();
            let extra: Vec<_> = folded.iter().filter(|(k, _)| !scanned.contains_key(*k)).take(3).collect();
            return Err(format!(
                "the changelog up to snapshot {latest} folds to {} rows, the table holds {}; differing: {differing:?}; only in the changelog: {extra:?}",
                folded.len(),
                scanned.len()
            ));
        }
        Ok(())
    }

    fn check(&self, step: usize) -> std::result::Result<(), Divergence> {
        let div = |message: String| Divergence { step, message };
        self.invariants().map_err(div)?;
        let got = self.scan().map_err(|e| div(e.to_string()))?;
        self.check_changelog(&got).map_err(div)?;
        if got != self.model {
            let missing: Vec<_> = self.model.iter().filter(|(k, v)| got.get(*k) != Some(*v)).take(3).collect();
            let extra: Vec<_> = got.iter().filter(|(k, _)| !self.model.contains_key(*k)).take(3).collect();
            return Err(div(format!(
                "scan has {} rows, the model {}; differing: {missing:?}; unexpected: {extra:?}",
                got.len(),
                self.model.len()
            )));
        }
        Ok(())
    }
}

/// Replays `w` in a fresh table under `dir`. Errors in the replayer itself (a bad workload) are `Err` in
/// the outer result; divergences from the model are the inner `Err`.
pub fn replay(
    dir: &str,
    w: &Workload,
    faults: Option<FaultPlan>,
) -> Result<std::result::Result<ReplayStats, Divergence>> {
    let local: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let path = format!("{}/db.db/t", dir.trim_end_matches('/'));
    Table::delete_table_dir(&local, &path)?;
    let faulty = FaultyFileIO::new(local);
    let mut columns = vec![("id".to_string(), DataType::bigint())];
    let mut pk = vec!["id".to_string()];
    let mut partition_keys = Vec::new();
    if w.header.partitioned {
        columns.push(("p".to_string(), DataType::string()));
        pk.push("p".to_string());
        partition_keys.push("p".to_string());
    }
    columns.push(("v".to_string(), DataType::bigint()));
    columns.push(("s".to_string(), DataType::string()));
    let mut options = w.header.options.clone();
    options.insert("bucket".into(), w.header.buckets.to_string());
    options.insert("merge-engine".into(), w.header.merge_engine.clone());
    match w.header.merge_engine.as_str() {
        "partial-update" => {
            options.insert("partial-update.remove-record-on-delete".into(), "true".into());
        }
        "aggregation" => {
            options.insert("fields.v.aggregate-function".into(), "sum".into());
            options.insert("aggregation.remove-record-on-delete".into(), "true".into());
        }
        _ => {}
    }
    options.insert("deletion-vectors.enabled".into(), w.header.deletion_vectors.to_string());
    let schema = TableSchema::new(columns, partition_keys, pk, options, 0)?;
    let table = Table::create(Arc::new(faulty.clone()), &path, schema)?;
    let mut r = Runner {
        faulty,
        path,
        table,
        writer: None,
        query: None,
        model: Model::new(),
        pending: Vec::new(),
        partitioned: w.header.partitioned,
        engine: w.header.merge_engine.clone(),
        changelog: std::cell::RefCell::new((0, Model::new())),
    };
    let mut rng = faults.map(|f| StdRng::seed_from_u64(f.seed));
    let mut stats = ReplayStats::default();
    for (step, op) in w.ops.iter().enumerate() {
        stats.steps += 1;
        let div = |message: String| Divergence { step, message };
        match op {
            Op::Put { rows } => {
                for row in rows {
                    let values = r.row(row.id, row.p.clone(), row.v, row.s.clone());
                    r.writer()?.put(values)?;
                    r.pending.push((Key { id: row.id, p: row.p.clone() }, Some((row.v, row.s.clone()))));
                }
            }
            Op::Delete { keys } => {
                for k in keys {
                    let key = r.key(k);
                    r.writer()?.delete(key)?;
                    r.pending.push((k.clone(), None));
                }
            }
            Op::Crash => {
                r.writer = None;
                r.pending.clear();
            }
            Op::Reopen => r.reopen()?,
            Op::Commit => {
                let mut after = r.model.clone();
                for (k, v) in &r.pending {
                    apply_change(&mut after, &r.engine, key_of(k), v.clone());
                }
                let plan = rng.as_mut().and_then(|rng| {
                    let rate = faults.map_or(0.0, |f| f.rate);
                    rng.random_bool(rate).then(|| {
                        (rng.random_range(0..40u64), [Fault::Before, Fault::After, Fault::Torn][rng.random_range(0..3)])
                    })
                });
                if let Some((k, fault)) = plan {
                    r.faulty.fail_at(k, fault, Some(OpKind::Mutate));
                }
                let before_latest = r.table.snapshot_manager().latest_id()?;
                let result = r.writer()?.commit();
                let injected = plan.is_some() && r.faulty.count() > plan.map_or(0, |p| p.0);
                r.faulty.disarm();
                if injected {
                    stats.faults += 1;
                }
                match result {
                    Ok(_) => {
                        r.model = after;
                        r.pending.clear();
                        stats.commits += 1;
                    }
                    Err(e) if injected => {
                        // The commit may or may not have landed: reopen and see which.
                        stats.failed_commits += 1;
                        r.reopen()?;
                        let latest = r.table.snapshot_manager().latest_id()?;
                        let got = r.scan().map_err(|e| Error::invalid("replay", e.to_string()))?;
                        if latest != before_latest && got == after {
                            r.model = after;
                        } else if got != r.model {
                            return Ok(Err(div(format!(
                                "after a failed commit ({e}) the table is neither at the previous nor the new state"
                            ))));
                        }
                    }
                    Err(e) => return Ok(Err(div(format!("commit failed without a fault: {e}")))),
                }
                if let Err(d) = r.check(step) {
                    return Ok(Err(d));
                }
            }
            Op::Compact | Op::FullCompact => {
                let full = matches!(op, Op::FullCompact);
                // Buffered rows are committed first, as a compaction commits them too.
                let mut after = r.model.clone();
                for (k, v) in r.pending.drain(..) {
                    apply_change(&mut after, &r.engine, key_of(&k), v);
                }
                match r.writer()?.compact(full) {
                    Ok(_) => r.model = after,
                    Err(e) => return Ok(Err(div(format!("compaction failed: {e}")))),
                }
                if full {
                    let s = r.table.snapshot(None)?;
                    if let Some(s) = s {
                        if !r.table.deletion_files(&s)?.is_empty() {
                            return Ok(Err(div("a full compaction left deletion vectors".into())));
                        }
                    }
                }
                if let Err(d) = r.check(step) {
                    return Ok(Err(d));
                }
            }
            Op::Scan => {
                if let Err(d) = r.check(step) {
                    return Ok(Err(d));
                }
            }
            Op::Get { key } => {
                let values = |got: Option<arrow_array::RecordBatch>| -> std::result::Result<Option<Values>, String> {
                    let Some(b) = got else { return Ok(None) };
                    use arrow_array::Array;
                    let v = b.column_by_name("v").and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>());
                    let s = b.column_by_name("s").and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>());
                    match (v, s) {
                        (Some(v), Some(s)) => {
                            Ok(Some((v.is_valid(0).then(|| v.value(0)), s.is_valid(0).then(|| s.value(0).to_string()))))
                        }
                        _ => Err("get returned unexpected columns".into()),
                    }
                };
                let one_shot = values(get(&r.table, &r.key(key), None)?);
                // The long-lived query, moved to the latest snapshot: it keeps local files across gets.
                if r.query.is_none() {
                    r.query = Some(TableQuery::new(&r.table)?);
                }
                let query = r.query.as_ref().ok_or_else(|| Error::invalid("replay", "no query"))?;
                query.refresh()?;
                let queried = values(query.get(&r.key(key))?);
                for (how, got) in [("get", one_shot), ("TableQuery::get", queried)] {
                    let got = match got {
                        Ok(got) => got,
                        Err(m) => return Ok(Err(div(m))),
                    };
                    if got != r.model.get(&key_of(key)).cloned() {
                        return Ok(Err(div(format!(
                            "{how} {key:?} returned {got:?}, the model has {:?}",
                            r.model.get(&key_of(key))
                        ))));
                    }
                }
            }
            Op::Expire { retain } => {
                let n = (*retain).max(1);
                let opts = ExpireOptions {
                    retain_min: n,
                    retain_max: n,
                    time_retained: std::time::Duration::from_secs(3600),
                    dry_run: false,
                };
                expire_snapshots(&r.table, &opts)?;
                if let Err(d) = r.check(step) {
                    return Ok(Err(d));
                }
            }
            Op::SwitchMode { dv } => {
                let set = BTreeMap::from([("deletion-vectors.enabled".to_string(), dv.to_string())]);
                // Buffered rows are lost with the writer a schema change replaces.
                r.writer = None;
                r.pending.clear();
                r.table = r.table.alter_options(&set, &[], true)?;
                r.query = None;
                if let Err(d) = r.check(step) {
                    return Ok(Err(d));
                }
            }
        }
    }
    Ok(Ok(stats))
}

/// Shrinks a failing workload: drops chunks of steps while it still diverges (at most `budget` replays).
pub fn shrink(dir: &str, w: &Workload, faults: Option<FaultPlan>, budget: usize) -> Workload {
    let fails = |c: &Workload| matches!(replay(dir, c, faults), Ok(Err(_)));
    let mut best = w.clone();
    let mut tries = 0;
    let mut chunk = (best.ops.len() / 2).max(1);
    while chunk >= 1 && tries < budget {
        let mut i = 0;
        let mut progressed = false;
        while i < best.ops.len() && tries < budget {
            let mut candidate = best.clone();
            let end = (i + chunk).min(candidate.ops.len());
            candidate.ops.drain(i..end);
            tries += 1;
            if !candidate.ops.is_empty() && fails(&candidate) {
                best = candidate;
                progressed = true;
            } else {
                i += chunk;
            }
        }
        if !progressed {
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
    }
    best
}
