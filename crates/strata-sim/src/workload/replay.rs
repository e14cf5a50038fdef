//! Replaying a workload against a fresh table and its model, and shrinking a failing one.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata_io::{FileIO, LocalFileIO};

use crate::{Fault, FaultyFileIO, OpKind};
use strata_spec::{ColumnMove, DataType, Error, Result, SchemaChange, TableSchema};

use super::runner::{apply_change, key_of, Model, Runner, Values};
use super::{Divergence, Evolution, FaultPlan, Key, Op, ReplayStats, Workload};
use strata_table::{expire_snapshots, get, ExpireOptions, Table, TableQuery};

/// Replays `w` in a fresh table under the local directory `dir`. Errors in the replayer itself (a bad
/// workload) are `Err` in the outer result; divergences from the model are the inner `Err`.
pub fn replay(
    dir: &str,
    w: &Workload,
    faults: Option<FaultPlan>,
) -> Result<std::result::Result<ReplayStats, Divergence>> {
    replay_on(Arc::new(LocalFileIO::new()), dir, w, faults)
}

/// [`replay`] on any storage: the table goes under `dir` of `io` (a local path, or a store URI such as
/// `s3://bucket/prefix`), behind the fault injector.
pub fn replay_on(
    io: Arc<dyn FileIO>,
    dir: &str,
    w: &Workload,
    faults: Option<FaultPlan>,
) -> Result<std::result::Result<ReplayStats, Divergence>> {
    let mut r = start(io, dir, w)?;
    let mut rng = faults.map(|f| StdRng::seed_from_u64(f.seed));
    let mut stats = ReplayStats::default();
    for (step, op) in w.ops.iter().enumerate() {
        stats.steps += 1;
        let divergence = match op {
            Op::Put { rows } => {
                for row in rows {
                    let values = r.row(row.id, row.p.clone(), row.v, row.s.clone());
                    r.writer()?.put(values)?;
                    r.pending.push((Key { id: row.id, p: row.p.clone() }, Some((row.v, row.s.clone()))));
                }
                None
            }
            Op::Delete { keys } => {
                for k in keys {
                    let key = r.key(k);
                    r.writer()?.delete(key)?;
                    r.pending.push((k.clone(), None));
                }
                None
            }
            Op::Crash => {
                r.writer = None;
                r.pending.clear();
                None
            }
            Op::Reopen => {
                r.reopen()?;
                None
            }
            Op::Commit => {
                let fault = pick_fault(&mut rng, faults);
                commit_step(&mut r, step, fault, &mut stats)?
            }
            Op::Compact | Op::FullCompact => compact_step(&mut r, step, matches!(op, Op::FullCompact))?,
            Op::Scan => r.check(step).err(),
            Op::Get { key } => get_step(&mut r, step, key)?,
            Op::Expire { retain } => {
                let n = (*retain).max(1);
                let opts = ExpireOptions {
                    retain_min: n,
                    retain_max: n,
                    time_retained: std::time::Duration::from_secs(3600),
                    dry_run: false,
                };
                expire_snapshots(&r.table, &opts)?;
                r.check(step).err()
            }
            Op::Evolve { change } => {
                // Buffered rows are lost with the writer a schema change replaces.
                r.writer = None;
                r.pending.clear();
                r.query = None;
                r.table = evolve(&r.table, change, &mut r.s_name)?;
                r.check(step).err()
            }
            Op::SwitchMode { dv } => {
                let set = BTreeMap::from([("deletion-vectors.enabled".to_string(), dv.to_string())]);
                // Buffered rows are lost with the writer a schema change replaces.
                r.writer = None;
                r.pending.clear();
                r.table = r.table.alter_options(&set, &[], true)?;
                r.query = None;
                r.check(step).err()
            }
        };
        if let Some(d) = divergence {
            return Ok(Err(d));
        }
    }
    Ok(Ok(stats))
}

/// A fresh table for `w` under `dir` of `io` (behind a `FaultyFileIO`), and its empty model.
fn start(io: Arc<dyn FileIO>, dir: &str, w: &Workload) -> Result<Runner> {
    let path = format!("{}/db.db/t", dir.trim_end_matches('/'));
    Table::delete_table_dir(&io, &path)?;
    let faulty = FaultyFileIO::new(io);
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
    Ok(Runner {
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
        s_name: "s".to_string(),
    })
}

/// The mutating operations a fault is drawn among: more than a commit makes. A clean commit of the
/// generated workloads made 18 at the median, 30 at p90 and 48 at most (1,034 commits of `strata soak`, a
/// data file being two operations, `create_sink` and `finish_sink`), so its last operations, the snapshot's,
/// are drawn too.
const FAULT_RANGE: u64 = 64;

/// The fault to inject into the next commit, if the plan draws one: (the mutating operation it hits, how).
fn pick_fault(rng: &mut Option<StdRng>, faults: Option<FaultPlan>) -> Option<(u64, Fault)> {
    let rng = rng.as_mut()?;
    let rate = faults.map_or(0.0, |f| f.rate);
    rng.random_bool(rate)
        .then(|| (rng.random_range(0..FAULT_RANGE), [Fault::Before, Fault::After, Fault::Torn][rng.random_range(0..3)]))
}

/// Commits the buffered rows (with the fault `plan` injected), then checks the table against the model.
fn commit_step(
    r: &mut Runner,
    step: usize,
    plan: Option<(u64, Fault)>,
    stats: &mut ReplayStats,
) -> Result<Option<Divergence>> {
    let div = |message: String| Divergence { step, message };
    let mut after = r.model.clone();
    for (k, v) in &r.pending {
        apply_change(&mut after, &r.engine, key_of(k), v.clone());
    }
    if let Some((k, fault)) = plan {
        r.faulty.fail_at(k, fault, Some(OpKind::Mutate));
    }
    let before_latest = r.table.snapshot_manager().latest_id()?;
    let identifier = r.writer()?.next_identifier();
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
            stats.failed_commits += 1;
            match recover_failed_commit(r, &e, after, before_latest, identifier)? {
                Ok(half_landed) => stats.half_landed_commits += usize::from(half_landed),
                Err(message) => return Ok(Some(div(message))),
            }
        }
        Err(e) => return Ok(Some(div(format!("commit failed without a fault: {e}")))),
    }
    Ok(r.check(step).err())
}

/// Compacts (fully with `full`), committing the buffered rows too, then checks the table.
fn compact_step(r: &mut Runner, step: usize, full: bool) -> Result<Option<Divergence>> {
    let div = |message: String| Divergence { step, message };
    // Buffered rows are committed first, as a compaction commits them too.
    let mut after = r.model.clone();
    for (k, v) in r.pending.drain(..) {
        apply_change(&mut after, &r.engine, key_of(&k), v);
    }
    match r.writer()?.compact(full) {
        Ok(_) => r.model = after,
        Err(e) => return Ok(Some(div(format!("compaction failed: {e}")))),
    }
    if full {
        let s = r.table.snapshot(None)?;
        if let Some(s) = s {
            if !r.table.deletion_files(&s)?.is_empty() {
                return Ok(Some(div("a full compaction left deletion vectors".into())));
            }
        }
    }
    Ok(r.check(step).err())
}

/// Looks `key` up with a one-off `get` and with the long-lived `TableQuery`; both must equal the model.
fn get_step(r: &mut Runner, step: usize, key: &Key) -> Result<Option<Divergence>> {
    let div = |message: String| Divergence { step, message };
    let values = |got: Option<arrow_array::RecordBatch>| -> std::result::Result<Option<Values>, String> {
        let Some(b) = got else { return Ok(None) };
        use arrow_array::Array;
        let v = b.column_by_name("v").and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>());
        let s = b.column_by_name(&r.s_name).and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>());
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
            Err(m) => return Ok(Some(div(m))),
        };
        if got != r.model.get(&key_of(key)).cloned() {
            return Ok(Some(div(format!(
                "{how} {key:?} returned {got:?}, the model has {:?}",
                r.model.get(&key_of(key))
            ))));
        }
    }
    Ok(None)
}

/// Applies `change` to `table` (tracking the name of `s` in `s_name`).
fn evolve(table: &Table, change: &Evolution, s_name: &mut String) -> Result<Table> {
    let columns = |c: SchemaChange| table.alter_columns(&[c]);
    match change {
        Evolution::AddColumn { name, after_v } => {
            let mut add = SchemaChange::add_column(name.clone(), DataType::int());
            if *after_v {
                if let SchemaChange::AddColumn { position, .. } = &mut add {
                    *position = Some(ColumnMove::After("v".to_string()));
                }
            }
            columns(add)
        }
        Evolution::DropColumn { name } => columns(SchemaChange::drop_column(name.clone())),
        Evolution::WidenColumn { name } => columns(SchemaChange::update_column_type(name.clone(), DataType::bigint())),
        Evolution::RenameS { to } => {
            let t = columns(SchemaChange::rename_column(s_name.clone(), to.clone()))?;
            *s_name = to.clone();
            Ok(t)
        }
        Evolution::ThinMode { on } => {
            let set = BTreeMap::from([("data-file.thin-mode".to_string(), on.to_string())]);
            table.alter_options(&set, &[], false)
        }
    }
}

/// After a commit that failed under an injected fault: reopens the table and decides whether the commit
/// landed, from the merge-on-read view (level 0 included), since after a half-landed commit of a
/// deletion-vector table the rows are committed but in level 0, which raw reads skip. The model moves to
/// `after` when it landed. When the APPEND snapshot landed without a COMPACT one (a half-landed commit, or a
/// write that compacted nothing), compacts: level 0 must be taken up, making raw reads and the lookup
/// changelog whole again. Returns whether it was so (`Err` inside: the divergence found).
fn recover_failed_commit(
    r: &mut Runner,
    e: &Error,
    after: Model,
    before_latest: Option<i64>,
    identifier: i64,
) -> Result<std::result::Result<bool, String>> {
    r.reopen()?;
    let latest = r.table.snapshot_manager().latest_id()?;
    let merged = r.scan_merged().map_err(|e| Error::internal_from("replay", e))?;
    if latest != before_latest && merged == after {
        r.model = after;
    } else if merged != r.model {
        return Ok(Err(format!("after a failed commit ({e}) the table is neither at the previous nor the new state")));
    }
    let landed = r.table.new_commit(super::runner::REPLAY_USER)?.landed(identifier)?;
    if landed.append.is_none() || landed.compact.is_some() {
        return Ok(Ok(false));
    }
    if let Err(e) = r.writer()?.compact(false) {
        return Ok(Err(format!("the compaction after a half-landed commit failed: {e}")));
    }
    Ok(Ok(true))
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
