//! Tables whose schema pypaimon 2.1.0 evolved (add, drop, rename, widen; a renamed column's name reused),
//! before and after Strata compacts them: Strata's reads, gets and compactions, and pypaimon's and
//! paimon-rust's reads after them, all equal a model of the operations (kept by the oracle script from what
//! it wrote and changed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{oracle, paimon_rust, strata};
use serde_json::{json, Value};

/// Rows by id.
type Rows = BTreeMap<i64, Value>;

fn step(dir: &Path, spec: Value) -> Rows {
    let mut spec = spec;
    spec["warehouse"] = json!(dir.to_str().unwrap());
    spec["table"] = json!("t");
    spec["model"] = json!(dir.join("model.json").to_str().unwrap());
    let model = oracle(&["evolve", &spec.to_string()]);
    model["rows"].as_object().unwrap().values().map(|r| (r["id"].as_i64().unwrap(), r.clone())).collect()
}

fn by_id(rows: impl IntoIterator<Item = Value>) -> Rows {
    let mut out = Rows::new();
    for r in rows {
        let id = r["id"].as_i64().unwrap();
        assert!(out.insert(id, r).is_none(), "key {id} read twice");
    }
    out
}

fn strata_rows(table: &Path, extra: &[&str]) -> Rows {
    let mut args = vec!["scan", table.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = strata(&args);
    assert_eq!(code, 0, "strata scan {extra:?}: {err}");
    by_id(out.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()))
}

fn pypaimon_rows(table: &Path) -> Rows {
    by_id(oracle(&["read", table.to_str().unwrap()]).as_array().unwrap().iter().cloned())
}

fn paimon_rust_rows(table: &Path) -> Rows {
    let read = paimon_rust("read", &json!({"path": table.to_str().unwrap()}));
    by_id(read["rows"].as_array().unwrap().iter().cloned())
}

/// Fails with the first difference only (the tables have hundreds of rows).
fn same(got: &Rows, want: &Rows, what: &str) {
    if got == want {
        return;
    }
    let first = want.iter().find(|(k, v)| got.get(k) != Some(v)).map(|(k, v)| (k, Some(v), got.get(k)));
    let extra = got.keys().find(|k| !want.contains_key(k));
    panic!("{what}: {} rows, the model has {}; first difference {first:?}; extra key {extra:?}", got.len(), want.len());
}

/// Every reader against the model. `level0_only`: a deletion-vector table whose files pypaimon wrote and
/// nobody compacted, which deletion-vector readers (Strata's raw read, get, pypaimon) rightly see as empty
/// until a compaction: only a merge-on-read sees its rows.
fn check_all(table: &Path, model: &Rows, what: &str, level0_only: bool) {
    same(&strata_rows(table, &["--merge"]), model, &format!("{what}: strata scan --merge"));
    if level0_only {
        return;
    }
    same(&strata_rows(table, &[]), model, &format!("{what}: strata scan"));
    same(&pypaimon_rows(table), model, &format!("{what}: pypaimon read"));
    same(&paimon_rust_rows(table), model, &format!("{what}: paimon-rust read"));
    let keys: Vec<String> = model.keys().take(5).map(|k| k.to_string()).chain(["100000".to_string()]).collect();
    let mut args = vec!["get", table.to_str().unwrap()];
    args.extend(keys.iter().map(String::as_str));
    let (code, out, err) = strata(&args);
    assert_eq!(code, 0, "{what}: strata get: {err}");
    let got = by_id(out.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()));
    let want: Rows = model.iter().take(5).map(|(k, v)| (*k, v.clone())).collect();
    same(&got, &want, &format!("{what}: strata get"));
}

fn compact(table: &Path, full: bool) {
    let mut args = vec!["compact", table.to_str().unwrap()];
    if full {
        args.push("--full");
    }
    let (code, _, err) = strata(&args);
    assert_eq!(code, 0, "strata compact: {err}");
}

const EVOLVE: &str =
    r#"[["rename","a","x"],["type","x","BIGINT"],["drop","b"],["add","a","STRING"],["type","c","DOUBLE"]]"#;

/// Who changes the schema.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Alterer {
    Pypaimon,
    /// `strata alter` with the same changes (the oracle updates only its model).
    Strata,
}

fn evolved_by(alterer: Alterer, options: Value, compact_first: bool) {
    let what = format!("{alterer:?} alters, options {options}, compact before the change: {compact_first}");
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("db.db/t");
    step(dir.path(), json!({"step": "create", "options": options}));
    let model = step(dir.path(), json!({"step": "write", "commits": 3, "seed": 1}));
    if compact_first {
        compact(&table, true);
        check_all(&table, &model, &format!("{what}: schema 0 compacted"), false);
    }
    let changes = serde_json::from_str::<Value>(EVOLVE).unwrap();
    step(dir.path(), json!({"step": "alter", "changes": changes, "model_only": alterer == Alterer::Strata}));
    if alterer == Alterer::Strata {
        let t = table.to_str().unwrap();
        let args = [
            "alter",
            t,
            "--rename-column",
            "a=x",
            "--column-type",
            "x=BIGINT",
            "--drop-column",
            "b",
            "--add-column",
            "a STRING",
            "--column-type",
            "c=DOUBLE",
        ];
        let (code, _, err) = strata(&args);
        assert_eq!(code, 0, "strata alter: {err}");
        assert_eq!(oracle(&["schema", t])["fields"].as_array().map(Vec::len), Some(5), "pypaimon sees the new schema");
    }
    let model = step(dir.path(), json!({"step": "write", "commits": 2, "seed": 2}));
    // pypaimon writes level 0 only.
    let dv = options["deletion-vectors.enabled"] == "true";
    check_all(&table, &model, &format!("{what}: old and new files"), dv);
    compact(&table, false);
    check_all(&table, &model, &format!("{what}: after strata compact"), false);
    let model = step(dir.path(), json!({"step": "write", "commits": 1, "seed": 3}));
    compact(&table, true);
    check_all(&table, &model, &format!("{what}: after strata compact --full"), false);
}

#[test]
fn merge_on_read_tables_evolved_by_pypaimon_read_and_compact_exactly() {
    evolved_by(Alterer::Pypaimon, json!({}), false);
    evolved_by(Alterer::Pypaimon, json!({}), true);
}

#[test]
fn deletion_vector_tables_evolved_by_pypaimon_read_and_compact_exactly() {
    evolved_by(Alterer::Pypaimon, json!({"deletion-vectors.enabled": "true"}), false);
    evolved_by(Alterer::Pypaimon, json!({"deletion-vectors.enabled": "true"}), true);
}

/// The same changes made by `strata alter`, then written by pypaimon and read by everyone.
#[test]
fn tables_evolved_by_strata_alter_are_written_by_pypaimon_and_read_by_every_reader() {
    evolved_by(Alterer::Strata, json!({}), true);
    evolved_by(Alterer::Strata, json!({"deletion-vectors.enabled": "true"}), false);
}
