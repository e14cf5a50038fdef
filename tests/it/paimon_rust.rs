//! paimon-rust 0.4.0 (PyPI `pypaimon-rust`, through tests/py/paimon_rust_oracle.py) as Strata's second
//! oracle, both directions.
//!
//! paimon-rust writes key-value files in thin mode (`_SEQUENCE_NUMBER, _VALUE_KIND, <value columns>`, no
//! `_KEY_*` columns): Strata must scan, look up and compact them, alone and mixed with its own full-layout files
//! in one bucket. Tables Strata writes must read in paimon-rust: full scans, projections, filters, SQL and
//! incremental (delta) scans. Every read, by Strata, paimon-rust or pypaimon 2.1.0, is compared to a model: the
//! last write per key of the rows the writer was given (paimon-rust's oracle reports the rows it generated and
//! wrote; Strata's rows are generated here), never to what another reader returns.
//!
//! Tables: id BIGINT NOT NULL, [p STRING NOT NULL,] name STRING, v BIGINT, d DOUBLE, rk STRING; primary key
//! (id[, p]); `rowkind.field` = rk, so a row whose rk is '-D' deletes its key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;

use common::{oracle, paimon_rust, strata, strata_inspect};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

type Key = (String, i64);
type Model = BTreeMap<Key, Value>;

/// Ids are drawn from 0..KEYS (and partitions from a, b, c).
const KEYS: i64 = 150;

fn key_of(r: &Value) -> Key {
    (r.get("p").and_then(Value::as_str).unwrap_or("").to_string(), r["id"].as_i64().expect("an id"))
}

/// Applies rows in order: the last row of a key wins; '-D' removes it.
fn apply(model: &mut Model, rows: &[Value]) {
    for r in rows {
        if r["rk"] == "-D" {
            model.remove(&key_of(r));
        } else {
            model.insert(key_of(r), r.clone());
        }
    }
}

/// The rows by key; a key read twice fails.
fn keyed(what: &str, rows: &[Value]) -> Model {
    let mut m = Model::new();
    for r in rows {
        let k = key_of(r);
        assert!(m.insert(k.clone(), r.clone()).is_none(), "{what}: key {k:?} read twice");
    }
    m
}

fn same(what: &str, got: &Model, want: &Model) {
    if got == want {
        return;
    }
    let missing: Vec<&Key> = want.keys().filter(|k| !got.contains_key(*k)).take(5).collect();
    let extra: Vec<&Key> = got.keys().filter(|k| !want.contains_key(*k)).take(5).collect();
    let differ: Vec<(&Value, &Value)> =
        want.iter().filter_map(|(k, v)| got.get(k).filter(|g| *g != v).map(|g| (g, v))).take(3).collect();
    panic!(
        "{what}: {} rows read, the model has {}; missing {missing:?}; extra {extra:?}; differing (read, model) \
         {differ:?}",
        got.len(),
        want.len()
    );
}

fn rows_of(v: &Value) -> Vec<Value> {
    v.as_array().expect("rows").clone()
}

/// The model's rows with only `columns`.
fn project(model: &Model, columns: &[&str], keep: impl Fn(&Value) -> bool) -> Model {
    model
        .iter()
        .filter(|(_, r)| keep(r))
        .map(|(k, r)| (k.clone(), Value::Object(columns.iter().map(|c| (c.to_string(), r[*c].clone())).collect())))
        .collect()
}

struct Cfg {
    dv: bool,
    partitioned: bool,
    buckets: u32,
    format: &'static str,
    seed: u64,
}

/// A table at <tmp>/wh/db.db/t.
struct Table {
    dir: tempfile::TempDir,
    path: String,
    warehouse: String,
    partitioned: bool,
    orc: bool,
}

impl Table {
    fn new(partitioned: bool, format: &str) -> Table {
        let dir = tempfile::tempdir().unwrap();
        let warehouse = dir.path().join("wh").to_str().unwrap().to_string();
        let path = format!("{warehouse}/db.db/t");
        Table { dir, path, warehouse, partitioned, orc: format == "orc" }
    }

    fn create_paimon_rust(c: &Cfg) -> Table {
        let t = Table::new(c.partitioned, c.format);
        let spec = json!({"path": t.path, "partitioned": c.partitioned, "buckets": c.buckets, "format": c.format,
                          "options": {"deletion-vectors.enabled": c.dv.to_string()}});
        let created = paimon_rust("create", &spec);
        assert_eq!(created["options"]["rowkind.field"], "rk", "{created}");
        t
    }

    fn create_strata(c: &Cfg) -> Table {
        let t = Table::new(c.partitioned, c.format);
        let schema = if c.partitioned {
            "id BIGINT NOT NULL, p STRING NOT NULL, name STRING, v BIGINT, d DOUBLE, rk STRING"
        } else {
            "id BIGINT NOT NULL, name STRING, v BIGINT, d DOUBLE, rk STRING"
        };
        let bucket = format!("bucket={}", c.buckets);
        let format = format!("file.format={}", c.format);
        let dv = format!("deletion-vectors.enabled={}", c.dv);
        let mut args = vec!["create", &t.path, "--schema", schema, "--primary-key"];
        args.push(if c.partitioned { "id,p" } else { "id" });
        if c.partitioned {
            args.extend(["--partition-keys", "p"]);
        }
        for o in [bucket.as_str(), "rowkind.field=rk", &format, &dv] {
            args.extend(["--option", o]);
        }
        let (code, _, err) = strata(&args);
        assert_eq!(code, 0, "strata create: {err}");
        t
    }

    /// `commits` commits of random upserts and deletes by paimon-rust, applied to `model`.
    /// In ORC tables v stays within 24 bits: paimon-rust 0.4.0's ORC writer (orc-rust 0.8) panics on some runs
    /// of wider BIGINTs, as Strata's (orc-rust 0.9) does (see `strata_writes_any_bigint_run_to_orc`).
    fn write_paimon_rust(&self, model: &mut Model, commits: u32, seed: u64) {
        let spec = json!({"path": self.path, "commits": commits, "ops_per_commit": 120, "key_space": KEYS,
                          "delete_ratio": 0.2, "null_ratio": 0.1, "seed": seed, "name_prefix": format!("pr{seed}-"),
                          "v_bits": if self.orc { 24 } else { 41 }});
        let out = paimon_rust("write", &spec);
        for commit in out["commits"].as_array().unwrap() {
            apply(model, &rows_of(commit));
        }
        assert_eq!(out["snapshots"].as_array().map(Vec::len), Some(commits as usize), "one snapshot per commit");
    }

    /// `n` random rows of Strata's (distinct keys when `distinct`); v within 24 bits in ORC tables, as in
    /// `write_paimon_rust`, so that only `strata_writes_any_bigint_run_to_orc` meets that ORC writer bug.
    fn strata_rows(&self, rng: &mut StdRng, n: usize, tag: &str, distinct: bool) -> Vec<Value> {
        let mut rows: Vec<Value> = Vec::new();
        while rows.len() < n {
            let mut r = json!({"id": rng.random_range(0..KEYS)});
            if self.partitioned {
                r["p"] = json!(["a", "b", "c"][rng.random_range(0..3)]);
            }
            if distinct && rows.iter().any(|o| key_of(o) == key_of(&r)) {
                continue;
            }
            let null = |rng: &mut StdRng| rng.random_bool(0.1);
            r["name"] = if null(rng) { Value::Null } else { json!(format!("{tag}-{}", rows.len())) };
            let half: i64 = if self.orc { 1 << 23 } else { 1 << 40 };
            r["v"] = if null(rng) { Value::Null } else { json!(rng.random_range(-half..half)) };
            r["d"] =
                if null(rng) { Value::Null } else { json!(rng.random_range(-1_000_000i64..1_000_000) as f64 / 64.0) };
            r["rk"] = json!(["+I", "+I", "+U", "-D"][rng.random_range(0..4)]);
            rows.push(r);
        }
        rows
    }

    /// One `strata write` of `rows` (applied to `model`); the snapshot it made.
    fn write_strata(&self, model: &mut Model, rows: &[Value]) -> i64 {
        static INPUTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = INPUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let input = self.dir.path().join(format!("rows-{n}.jsonl"));
        let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&input, text).unwrap();
        let (code, out, err) = strata(&["write", &self.path, "--input", input.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "strata write: {err}");
        apply(model, rows);
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        v["lastSnapshot"].as_i64().unwrap_or_else(|| panic!("strata write made no snapshot: {out}"))
    }

    fn compact(&self, full: bool) {
        let mut args = vec!["compact", &self.path, "--json"];
        if full {
            args.push("--full");
        }
        let (code, out, err) = strata(&args);
        assert_eq!(code, 0, "strata compact (full: {full}): {err}");
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        assert!(v["snapshot"].as_i64().is_some(), "strata compact (full: {full}) did nothing: {out}");
    }

    fn strata_scan(&self, merge: bool) -> Model {
        let mut args = vec!["scan", &self.path, "--format", "jsonl"];
        if merge {
            args.push("--merge");
        }
        let (code, out, err) = strata(&args);
        assert_eq!(code, 0, "strata scan (merge: {merge}): {err}");
        let rows: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        keyed(&format!("strata scan (merge: {merge})"), &rows)
    }

    /// Keys to look up: present, deleted and never written ones, in every partition.
    fn probe_keys(&self, step: i64) -> Vec<Key> {
        let parts: &[&str] = if self.partitioned { &["a", "b", "c"] } else { &[""] };
        (0..KEYS + 3).step_by(step as usize).flat_map(|id| parts.iter().map(move |p| (p.to_string(), id))).collect()
    }

    /// `strata get` of `keys` prints the visible rows of those keys, in the order asked.
    fn check_get(&self, keys: &[Key], visible: &Model, step: &str) {
        let mut args = vec!["get".to_string(), self.path.clone()];
        args.extend(keys.iter().map(|(p, id)| if self.partitioned { format!("{id},{p}") } else { id.to_string() }));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = strata(&args);
        assert_eq!(code, 0, "{step}: strata get: {err}");
        let got: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let want: Vec<Value> = keys.iter().filter_map(|k| visible.get(k).cloned()).collect();
        assert_eq!(got, want, "{step}: strata get of {} keys", keys.len());
    }

    fn paimon_rust_rows(&self) -> Model {
        let out = paimon_rust("read", &json!({"path": self.path}));
        keyed("paimon-rust read", &rows_of(&out["rows"]))
    }

    fn pypaimon_rows(&self) -> Model {
        keyed("pypaimon read", &rows_of(&oracle(&["read", &self.path])))
    }

    /// What every reader must see: `visible` through the table's own visibility (level 0 is not visible in
    /// deletion-vector mode) and `model` through `strata scan --merge`, which reads every level.
    fn check(&self, visible: &Model, model: &Model, step: &str) {
        same(&format!("{step}: strata scan --merge"), &self.strata_scan(true), model);
        same(&format!("{step}: strata scan"), &self.strata_scan(false), visible);
        self.check_get(&self.probe_keys(37), visible, step);
        self.check_get(&self.probe_keys(4), visible, step);
        same(&format!("{step}: paimon-rust read"), &self.paimon_rust_rows(), visible);
        same(&format!("{step}: pypaimon read"), &self.pypaimon_rows(), visible);
    }

    fn inspect_files(&self) -> Vec<(usize, i64, usize)> {
        // (bucket entry index, level, files) of every non-empty level.
        let report = strata_inspect(std::path::Path::new(&self.path));
        let mut out = Vec::new();
        for (i, b) in report["buckets"].as_array().unwrap().iter().enumerate() {
            for l in b["levels"].as_array().unwrap() {
                let files = l["files"].as_array().map_or(0, Vec::len);
                if files > 0 {
                    out.push((i, l["level"].as_i64().unwrap(), files));
                }
            }
        }
        out
    }

    /// Every parquet data file of the table is in thin mode: `_SEQUENCE_NUMBER, _VALUE_KIND` and the table's
    /// columns, no `_KEY_*` copies of the key (what paimon-rust 0.4.0 writes, whatever `data-file.thin-mode`).
    fn assert_all_thin(&self) {
        let files = common::parquet_data_files(std::path::Path::new(&self.path));
        assert!(!files.is_empty(), "no parquet data files under {}", self.path);
        let mut want = vec!["_SEQUENCE_NUMBER", "_VALUE_KIND", "id"];
        if self.partitioned {
            want.push("p");
        }
        want.extend(["name", "v", "d", "rk"]);
        for f in files {
            use parquet::file::reader::{FileReader, SerializedFileReader};
            let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
            let schema = reader.metadata().file_metadata().schema_descr_ptr();
            let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
            assert_eq!(names, want, "{f:?} is not a thin-mode file");
        }
    }

    fn deletion_vectors(&self) -> usize {
        let report = strata_inspect(std::path::Path::new(&self.path));
        report["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["indexFile"]["deletionVectors"].as_array().map(Vec::len))
            .sum()
    }
}

// ---- paimon-rust writes (thin files), Strata reads and compacts ----

fn paimon_rust_writes_strata_reads_and_compacts(c: Cfg) {
    let t = Table::create_paimon_rust(&c);
    let mut model = Model::new();
    // Five commits: five sorted runs in each bucket, enough for a universal compaction of merge-on-read ones.
    t.write_paimon_rust(&mut model, 5, c.seed);
    assert!(model.len() >= 60, "only {} rows", model.len());
    if c.format == "parquet" {
        t.assert_all_thin();
    }
    // Deletion-vector readers see no level-0 file: nothing until a compaction.
    let visible = if c.dv { Model::new() } else { model.clone() };
    t.check(&visible, &model, "paimon-rust's level-0 files");

    t.compact(false);
    t.check(&model, &model, "after strata compact");

    // More paimon-rust writes: thin level-0 files over Strata's compacted files, in the same buckets.
    let before = model.clone();
    t.write_paimon_rust(&mut model, 2, c.seed + 100);
    let visible = if c.dv { before } else { model.clone() };
    t.check(&visible, &model, "paimon-rust's files over Strata's");

    t.compact(true);
    t.check(&model, &model, "after strata compact --full");
    let files = t.inspect_files();
    let mut buckets: Vec<usize> = files.iter().map(|(b, _, _)| *b).collect();
    buckets.dedup();
    assert_eq!(buckets.len(), files.len(), "a full compaction left more than one level in a bucket: {files:?}");
    assert_eq!(t.deletion_vectors(), 0, "a full compaction left deletion vectors");
}

#[test]
fn paimon_rust_merge_on_read_table_reads_and_compacts_in_strata() {
    paimon_rust_writes_strata_reads_and_compacts(Cfg {
        dv: false,
        partitioned: false,
        buckets: 2,
        format: "parquet",
        seed: 1,
    });
}

#[test]
fn paimon_rust_partitioned_orc_merge_on_read_table_reads_and_compacts_in_strata() {
    paimon_rust_writes_strata_reads_and_compacts(Cfg {
        dv: false,
        partitioned: true,
        buckets: 1,
        format: "orc",
        seed: 2,
    });
}

#[test]
fn paimon_rust_deletion_vector_table_reads_and_compacts_in_strata() {
    paimon_rust_writes_strata_reads_and_compacts(Cfg {
        dv: true,
        partitioned: false,
        buckets: 1,
        format: "parquet",
        seed: 3,
    });
}

#[test]
fn paimon_rust_partitioned_deletion_vector_table_reads_and_compacts_in_strata() {
    paimon_rust_writes_strata_reads_and_compacts(Cfg {
        dv: true,
        partitioned: true,
        buckets: 2,
        format: "parquet",
        seed: 4,
    });
}

// ---- Strata writes, paimon-rust reads ----

/// paimon-rust reads exactly the model: a full scan, a projection with a filter, a filter alone, SQL with a
/// WHERE clause and aggregates; pypaimon too.
///
/// `filters` is false only for ORC files with deletion vectors: paimon-rust 0.4.0 panics on any filter pushed
/// down to them (orc-rust's `RowSelection::and_then` is given the predicate's selection of the whole stripe
/// where it takes one of only the rows the deletion vector keeps: "selection exceeds the number of selected
/// rows"). There the projection is read without a filter, and the test checks that a filtered read still
/// fails that way, so that this exemption ends when the pinned paimon-rust no longer needs it.
fn paimon_rust_reads(t: &Table, model: &Model, step: &str, filters: bool) {
    same(&format!("{step}: paimon-rust read"), &t.paimon_rust_rows(), model);
    same(&format!("{step}: pypaimon read"), &t.pypaimon_rows(), model);

    // Projection (out of table order), with a filter on the key and a value column.
    let mut columns = vec!["v", "id"];
    if t.partitioned {
        columns.push("p");
    }
    let filter = json!({"method": "and", "children": [
        {"method": "greaterOrEqual", "field": "id", "literals": [KEYS / 3]},
        {"method": "greaterThan", "field": "v", "literals": [0]}]});
    let mut spec = json!({"path": t.path, "projection": columns});
    if filters {
        spec["filter"] = filter.clone();
    }
    let out = paimon_rust("read", &spec);
    for names in out["columns"].as_array().unwrap() {
        assert_eq!(names, &json!(columns), "{step}: projected columns");
    }
    let pass = |r: &Value| !filters || (r["id"].as_i64() >= Some(KEYS / 3) && r["v"].as_i64() > Some(0));
    let want = project(model, &columns, pass);
    assert!(want.len() >= 10, "{step}: only {} rows pass the filter", want.len());
    same(&format!("{step}: paimon-rust projection (filter: {filters})"), &keyed(step, &rows_of(&out["rows"])), &want);

    let query = "SELECT COUNT(*) AS n, COUNT(name) AS names, SUM(v) AS total FROM p.db.t";
    let out = paimon_rust("sql", &json!({"warehouse": t.warehouse, "query": query}));
    let names = model.values().filter(|r| !r["name"].is_null()).count();
    let total: i64 = model.values().filter_map(|r| r["v"].as_i64()).sum();
    assert_eq!(out["rows"], json!([{"n": model.len(), "names": names, "total": total}]), "{step}: {query}");

    if !filters {
        let err = paimon_rust_failure("read", &json!({"path": t.path, "filter": filter}));
        assert!(err.contains("selection exceeds the number of selected rows"), "{step}: {err}");
        return;
    }
    let filter = json!({"method": "or", "children": [
        {"method": "isNull", "field": "name"}, {"method": "lessThan", "field": "d", "literals": [0.0]}]});
    let out = paimon_rust("read", &json!({"path": t.path, "filter": filter}));
    let want: Model = model
        .iter()
        .filter(|(_, r)| r["name"].is_null() || r["d"].as_f64().is_some_and(|d| d < 0.0))
        .map(|(k, r)| (k.clone(), r.clone()))
        .collect();
    assert!(want.len() >= 10 && want.len() < model.len(), "{step}: {} rows pass the filter", want.len());
    same(&format!("{step}: paimon-rust filter (or)"), &keyed(step, &rows_of(&out["rows"])), &want);

    let p = if t.partitioned { "p, " } else { "" };
    let query = format!("SELECT id, {p}name, v FROM p.db.t WHERE v > 0 AND name IS NOT NULL");
    let out = paimon_rust("sql", &json!({"warehouse": t.warehouse, "query": query}));
    let mut columns = vec!["id", "name", "v"];
    if t.partitioned {
        columns.insert(1, "p");
    }
    let want = project(model, &columns, |r| r["v"].as_i64() > Some(0) && !r["name"].is_null());
    assert!(!want.is_empty());
    same(&format!("{step}: paimon-rust SQL {query}"), &keyed(step, &rows_of(&out["rows"])), &want);
}

/// The stderr of a paimon-rust oracle command that must fail.
fn paimon_rust_failure(cmd: &str, spec: &Value) -> String {
    let out = std::process::Command::new(common::pypaimon_python())
        .arg(common::root().join("tests/py/paimon_rust_oracle.py"))
        .args([cmd, &spec.to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "paimon-rust oracle {cmd} succeeded: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Strata writes `writes` commits (a full compaction after each index in `compact_after`); paimon-rust reads.
fn strata_writes_paimon_rust_reads(c: Cfg, writes: usize, compact_after: &[usize]) -> (Table, Model, StdRng) {
    let t = Table::create_strata(&c);
    let mut rng = StdRng::seed_from_u64(c.seed);
    let mut model = Model::new();
    for i in 0..writes {
        let rows = t.strata_rows(&mut rng, 100, &format!("s{i}"), false);
        t.write_strata(&mut model, &rows);
        if compact_after.contains(&i) {
            t.compact(true);
        }
    }
    assert!(model.len() >= 60, "only {} rows", model.len());
    let files = t.inspect_files();
    if c.dv {
        assert!(files.iter().all(|(_, level, _)| *level > 0), "level 0 left in deletion-vector mode: {files:?}");
        assert!(t.deletion_vectors() > 0, "no deletion vectors to read");
    } else {
        // Several levels in one bucket, level 0 among them: a merge on read.
        let deep = |b: usize| files.iter().filter(|(fb, _, _)| *fb == b).count() >= 2;
        assert!(files.iter().any(|(b, level, _)| *level == 0 && deep(*b)), "no bucket with several levels: {files:?}");
    }
    let step = format!("Strata's {} {} table", c.format, if c.dv { "DV" } else { "MOR" });
    paimon_rust_reads(&t, &model, &step, !(c.dv && c.format == "orc"));
    (t, model, rng)
}

#[test]
fn strata_partitioned_deletion_vector_table_reads_in_paimon_rust() {
    let c = Cfg { dv: true, partitioned: true, buckets: 2, format: "parquet", seed: 11 };
    strata_writes_paimon_rust_reads(c, 4, &[]);
}

#[test]
fn strata_orc_deletion_vector_table_reads_in_paimon_rust() {
    let c = Cfg { dv: true, partitioned: false, buckets: 2, format: "orc", seed: 12 };
    strata_writes_paimon_rust_reads(c, 4, &[]);
}

#[test]
fn strata_partitioned_merge_on_read_table_with_several_levels_reads_in_paimon_rust() {
    let c = Cfg { dv: false, partitioned: true, buckets: 2, format: "parquet", seed: 13 };
    let (t, mut model, mut rng) = strata_writes_paimon_rust_reads(c, 4, &[1]);
    // An incremental (delta) scan of one more write (the only level-0 file: no compaction in its commit): its
    // rows, with their row kinds.
    t.compact(true);
    let rows = t.strata_rows(&mut rng, 60, "inc", true);
    let snapshot = t.write_strata(&mut model, &rows);
    let out = paimon_rust("incremental", &json!({"path": t.path, "start": snapshot - 1, "end": snapshot}));
    let got = keyed("paimon-rust incremental scan", &rows_of(&out["rows"]));
    same("paimon-rust incremental scan of Strata's write", &got, &delta_of(&rows));
    paimon_rust_reads(&t, &model, "after the incremental write", true);
}

#[test]
fn strata_orc_merge_on_read_table_with_several_levels_reads_in_paimon_rust() {
    let c = Cfg { dv: false, partitioned: false, buckets: 1, format: "orc", seed: 14 };
    strata_writes_paimon_rust_reads(c, 5, &[2]);
}

// ---- Strata's full-layout files and paimon-rust's thin files in one bucket ----

fn mixed_layouts(dv: bool) {
    let c = Cfg { dv, partitioned: false, buckets: 1, format: "parquet", seed: 21 + u64::from(dv) };
    let t = Table::create_strata(&c);
    let mut rng = StdRng::seed_from_u64(c.seed);
    let mut model = Model::new();
    for i in 0..3 {
        let rows = t.strata_rows(&mut rng, 100, &format!("s{i}"), false);
        t.write_strata(&mut model, &rows);
    }
    t.compact(true);
    t.check(&model, &model, "Strata's compacted table");

    // Two paimon-rust commits: thin level-0 files over Strata's full-layout run.
    let before = model.clone();
    t.write_paimon_rust(&mut model, 2, c.seed);
    let files = t.inspect_files();
    assert!(files.iter().any(|(_, l, _)| *l == 0) && files.iter().any(|(_, l, _)| *l > 0), "{files:?}");
    t.check(if dv { &before } else { &model }, &model, "paimon-rust's thin files over Strata's");

    // Strata writes on top of both (its sequence numbers must continue after paimon-rust's); in deletion-vector
    // mode its write compacts level 0, paimon-rust's thin files with it.
    let rows = t.strata_rows(&mut rng, 100, "s3", false);
    t.write_strata(&mut model, &rows);
    if dv {
        assert!(t.inspect_files().iter().all(|(_, l, _)| *l > 0), "a DV write left level 0: {:?}", t.inspect_files());
    }
    t.check(&model, &model, "Strata's write over mixed files");

    // One more paimon-rust commit: five sorted runs in merge-on-read mode, so a (universal) compaction picks.
    let before = model.clone();
    t.write_paimon_rust(&mut model, 1, c.seed + 1);
    t.check(if dv { &before } else { &model }, &model, "paimon-rust's second write over mixed files");
    t.compact(false);
    t.check(&model, &model, "after strata compact of mixed files");

    t.write_paimon_rust(&mut model, 1, c.seed + 2);
    t.compact(true);
    t.check(&model, &model, "after strata compact --full of mixed files");
    paimon_rust_reads(&t, &model, "mixed layouts, fully compacted", true);
}

#[test]
fn mixed_full_and_thin_files_in_one_merge_on_read_bucket() {
    mixed_layouts(false);
}

#[test]
fn mixed_full_and_thin_files_in_one_deletion_vector_bucket() {
    mixed_layouts(true);
}

// ---- Strata bug: writes that only a compaction commits are invisible to incremental readers ----

/// The rows a delta (incremental) scan of Strata's write of `rows` must return: the last row per key, with its
/// row kind.
fn delta_of(rows: &[Value]) -> Model {
    let mut out = Model::new();
    for r in rows {
        let mut r = r.clone();
        r["rowkind"] = r["rk"].clone();
        out.insert(key_of(&r), r);
    }
    out
}

/// Paimon commits a write's new files in an APPEND snapshot even when the same commit compacts them away
/// (Java's MergeTreeWriter reports them both as new files and as compaction inputs; the commit makes APPEND
/// then COMPACT), and incremental and streaming readers read APPEND snapshots' delta files (paimon-rust's delta
/// scan and pypaimon's streaming delta reads are both checked here). Strata used to drop files
/// created and compacted within one commit from the commit and wrote one COMPACT snapshot, so the write's
/// changes are in no delta a reader follows: here, the fifth write of a merge-on-read table (five sorted runs
/// reach `num-sorted-run.compaction-trigger`), and in deletion-vector mode every write.
///
/// Then every range of snapshots `(a, b]`: paimon-rust's delta scan and `strata scan --from a --to b` return
/// the rows of every write whose APPEND snapshot is in it, unmerged (paimon-rust groups a range's files by
/// bucket and reads them without merging, as Java's incremental delta scan does, so a key written twice comes
/// twice; its order across snapshots is the files', so rows are compared as multisets).
fn incremental_reads_of_strata_writes(dv: bool) {
    let c = Cfg { dv, partitioned: false, buckets: 1, format: "parquet", seed: 31 };
    let t = Table::create_strata(&c);
    let mut rng = StdRng::seed_from_u64(c.seed);
    let mut model = Model::new();
    let mut previous = 0;
    let mut writes = Vec::new();
    for i in 0..5 {
        let rows = t.strata_rows(&mut rng, 40, &format!("w{i}"), false);
        let snapshot = t.write_strata(&mut model, &rows);
        writes.push(delta_of(&rows));
        if previous > 0 {
            let out = paimon_rust("incremental", &json!({"path": t.path, "start": previous, "end": snapshot}));
            let kinds = paimon_rust("snapshots", &json!({"path": t.path}));
            same(
                &format!("paimon-rust's delta scan of Strata's write {i} (snapshots {kinds})"),
                &keyed("incremental", &rows_of(&out["rows"])),
                &delta_of(&rows),
            );
            // pypaimon 2.1.0's streaming reader (its delta follow-up scanner reads APPEND snapshots only).
            let theirs = oracle(&["delta", &t.path, &previous.to_string(), &snapshot.to_string()]);
            let renamed: Vec<Value> = rows_of(&theirs["rows"])
                .into_iter()
                .map(|mut r| {
                    r["rowkind"] = r["_row_kind"].take();
                    r
                })
                .collect();
            let columns = ["id", "v", "rowkind"];
            same(
                &format!("pypaimon's delta read of Strata's write {i} (snapshot kinds {})", theirs["kinds"]),
                &project(&keyed("pypaimon delta", &renamed), &columns, |_| true),
                &project(&delta_of(&rows), &columns, |_| true),
            );
        }
        previous = snapshot;
    }
    same("paimon-rust read", &t.paimon_rust_rows(), &model);
    every_range_of_strata_writes(&t, &writes, previous);
}

/// Rows as comparable text, sorted (a multiset), with only `columns`.
fn multiset(rows: &[Value], columns: &[&str]) -> Vec<String> {
    let mut out: Vec<String> =
        rows.iter().map(|r| columns.iter().map(|c| r[*c].to_string()).collect::<Vec<_>>().join("|")).collect();
    out.sort();
    out
}

fn every_range_of_strata_writes(t: &Table, writes: &[Model], latest: i64) {
    let snapshots = paimon_rust("snapshots", &json!({"path": t.path}));
    let appends: Vec<i64> =
        rows_of(&snapshots).iter().filter(|s| s["commitKind"] == "APPEND").map(|s| s["id"].as_i64().unwrap()).collect();
    assert_eq!(appends.len(), writes.len(), "one APPEND snapshot per write: {snapshots}");
    let ranges: Vec<(i64, i64)> = (0..latest).flat_map(|a| (a + 1..=latest).map(move |b| (a, b))).collect();
    let theirs = paimon_rust("incremental_ranges", &json!({"path": t.path, "ranges": ranges}));
    let columns = ["rowkind", "id", "name", "v", "d", "rk"];
    for (i, &(a, b)) in ranges.iter().enumerate() {
        let want: Vec<Value> = appends
            .iter()
            .zip(writes)
            .filter(|(id, _)| a < **id && **id <= b)
            .flat_map(|(_, rows)| rows.values().cloned())
            .collect();
        let want = multiset(&want, &columns);
        assert_eq!(multiset(&rows_of(&theirs[i]["rows"]), &columns), want, "paimon-rust delta scan of ({a}, {b}]");
        let (code, out, err) = common::strata(&["scan", &t.path, "--from", &a.to_string(), "--to", &b.to_string()]);
        assert_eq!(code, 0, "{err}");
        let ours: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(multiset(&ours, &columns), want, "strata scan --from {a} --to {b}");
    }
}

#[test]
fn strata_write_compacted_in_its_own_commit_reaches_incremental_readers_merge_on_read() {
    incremental_reads_of_strata_writes(false);
}

#[test]
fn strata_writes_reach_incremental_readers_in_deletion_vector_mode() {
    incremental_reads_of_strata_writes(true);
}

// ---- ORC writes of BIGINT runs with a few wide values (orc-rust 0.9.0 encoder bug, patched in vendor/) ----

/// orc-rust 0.9.0's RLEv2 encoder chooses patched-base encoding for these values (zigzagged, their 90th
/// percentile is 40 bits wide and their largest 48 once rounded to an encodable width), then computed the patch
/// width as the exact bit width of the largest base-reduced value (41) minus the 95th percentile's width, which
/// it rounds up to an encodable width (48): `attempt to subtract with overflow` in debug builds,
/// `unreachable!()` in release ones, and every `strata write` of such a run failed. Strata builds a patched
/// copy (vendor/README.md); the file must read back exactly in Strata, paimon-rust (orc-rust 0.8) and
/// pypaimon (pyarrow's ORC reader).
#[test]
fn strata_writes_any_bigint_run_to_orc() {
    let values: [i64; 10] = [
        -37_847_551_376,
        -107_111_627_993,
        -393_103_020_060,
        -535_039_895_098,
        -43_881_840_636,
        630_607_725_216,
        -238_965_684_747,
        -390_639_123_736,
        104_274_811_753,
        161_117_756_276,
    ];
    let c = Cfg { dv: false, partitioned: false, buckets: 1, format: "orc", seed: 0 };
    let t = Table::create_strata(&c);
    let rows: Vec<Value> =
        values.iter().enumerate().map(|(i, v)| json!({"id": i, "name": null, "v": v, "d": null, "rk": "+I"})).collect();
    let mut model = Model::new();
    t.write_strata(&mut model, &rows);
    same("strata scan", &t.strata_scan(false), &model);
    same("paimon-rust read", &t.paimon_rust_rows(), &model);
    same("pypaimon read", &t.pypaimon_rows(), &model);
}

// ---- Dynamic-bucket tables (bucket = -1, Paimon's default for primary-key tables) ----

/// paimon-rust creates and writes a dynamic-bucket table (its hash index files assign keys to buckets), Strata
/// writes into it, paimon-rust writes again, and Strata compacts: every reader equals the model, and no key
/// is ever in two buckets (a merge-on-read scan merges per bucket, so it would read such a key twice).
#[test]
fn dynamic_bucket_table_written_by_paimon_rust_and_strata_in_turn() {
    let t = Table::new(false, "parquet");
    let spec = json!({"path": t.path, "partitioned": false, "buckets": -1, "format": "parquet",
                      "options": {"dynamic-bucket.target-row-num": "40"}});
    let created = paimon_rust("create", &spec);
    assert_eq!(created["options"]["bucket"], "-1", "{created}");
    let mut model = Model::new();
    let mut rng = StdRng::seed_from_u64(31);
    t.write_paimon_rust(&mut model, 2, 31);
    t.check(&model, &model, "paimon-rust's dynamic-bucket table");
    let rows = t.strata_rows(&mut rng, 150, "s0", false);
    t.write_strata(&mut model, &rows);
    t.check(&model, &model, "Strata's write into paimon-rust's buckets");
    t.write_paimon_rust(&mut model, 1, 32);
    t.check(&model, &model, "paimon-rust's write after Strata's");
    t.compact(true);
    t.check(&model, &model, "after strata compact --full");
    let buckets: std::collections::BTreeSet<usize> = t.inspect_files().iter().map(|(b, _, _)| *b).collect();
    assert!(buckets.len() > 1, "a target of 40 rows per bucket spreads {} keys over buckets: {buckets:?}", model.len());
}
