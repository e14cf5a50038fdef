//! Schema evolution by either engine on a table both write (issue 52): Java adds a column, renames one and
//! widens a type; Strata writes on, then adds and renames in turn; Java writes and compacts on. Files of
//! every schema live side by side and are read by field id; each read, Java's and Strata's, is compared with
//! a model that applies the same changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Map, Value};
use strata::spec::{DataType, Datum, SchemaChange};
use strata::{ReadBuilder, TableWriter};

use super::java_paimon::open_after_java;
use crate::common::java::JavaPaimon;
use crate::common::json_rows;

/// id -> the row's columns by name.
type Model = BTreeMap<i64, Map<String, Value>>;

fn keyed(rows: Vec<Value>, who: &str) -> Model {
    let mut out = Model::new();
    for r in rows {
        let mut m = r.as_object().unwrap().clone();
        m.remove("_kind");
        let id = m["id"].as_i64().unwrap();
        assert!(out.insert(id, m).is_none(), "{who} read key {id} twice");
    }
    out
}

fn check(java: &mut JavaPaimon, path: &str, what: &str, model: &Model) {
    let strata = keyed(json_rows(&ReadBuilder::new(&open_after_java(path)).read().unwrap().batches), "Strata");
    assert_eq!(&strata, model, "{what}: Strata's read");
    let java_read = keyed(java.read(path, json!({})), "Java");
    assert_eq!(&java_read, model, "{what}: Java's read");
}

/// Java writes `rows` (objects by column name) with a writer it closes, compacting as asked.
fn java_write(java: &mut JavaPaimon, path: &str, rows: Vec<Value>, compact: &str, model: &mut Model) {
    for r in &rows {
        model.insert(r["id"].as_i64().unwrap(), r.as_object().unwrap().clone());
    }
    java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": compact}));
    java.call(&json!({"op": "close_writer", "writer": "app"}));
}

/// Applies a rename to every row of the model.
fn rename(model: &mut Model, from: &str, to: &str) {
    for row in model.values_mut() {
        let v = row.remove(from).unwrap_or(Value::Null);
        row.insert(to.to_string(), v);
    }
}

fn add(model: &mut Model, column: &str) {
    for row in model.values_mut() {
        row.insert(column.to_string(), Value::Null);
    }
}

fn evolve_by_both(deletion_vectors: bool) {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db/t").to_str().unwrap().to_string();
    java.call(&json!({
        "op": "create", "path": path,
        "columns": [["id", "BIGINT NOT NULL"], ["a", "INT"], ["b", "STRING"]],
        "primary_keys": ["id"],
        "options": {"bucket": "2", "deletion-vectors.enabled": deletion_vectors.to_string()},
    }));
    let mut model = Model::new();
    let rows = (0..40).map(|id| json!({"id": id, "a": id, "b": format!("j{id}")})).collect();
    java_write(&mut java, &path, rows, "minor", &mut model);

    java.call(&json!({"op": "alter", "path": path, "changes": [["add", "c", "BIGINT"], ["rename", "b", "name"], ["type", "a", "BIGINT"]]}));
    add(&mut model, "c");
    rename(&mut model, "b", "name");
    let rows = (30..60).map(|id| json!({"id": id, "a": id * 2, "name": format!("k{id}"), "c": id})).collect();
    java_write(&mut java, &path, rows, "minor", &mut model);
    check(&mut java, &path, "after Java's changes", &model);

    let changes = [
        SchemaChange::AddColumn { name: "d".into(), data_type: DataType::string(), position: None, comment: None },
        SchemaChange::RenameColumn { from: "a".into(), to: "amount".into() },
    ];
    let t = open_after_java(&path).alter_columns(&changes).unwrap();
    add(&mut model, "d");
    rename(&mut model, "a", "amount");
    let mut t = t;
    t.set_foreign_compaction_window(Duration::ZERO);
    let mut w = TableWriter::new(&t, "strata").unwrap();
    for id in 50..80 {
        // Columns in the table's order: id, amount, name, c, d.
        w.put(vec![
            Some(Datum::BigInt(id)),
            Some(Datum::BigInt(id * 3)),
            Some(Datum::String(format!("s{id}"))),
            None,
            Some(Datum::String(format!("d{id}"))),
        ])
        .unwrap();
        model.insert(
            id,
            json!({"id": id, "amount": id * 3, "name": format!("s{id}"), "c": null, "d": format!("d{id}")})
                .as_object()
                .unwrap()
                .clone(),
        );
    }
    for id in 0..5 {
        w.delete(vec![Some(Datum::BigInt(id))]).unwrap();
        model.remove(&id);
    }
    w.commit().unwrap();
    w.compact(true).unwrap();
    check(&mut java, &path, "after Strata's changes, writes and full compaction", &model);

    let rows = (70..90)
        .map(|id| json!({"id": id, "amount": id, "name": format!("x{id}"), "c": id, "d": format!("e{id}")}))
        .collect();
    java_write(&mut java, &path, rows, "full", &mut model);
    check(&mut java, &path, "after Java's writes and full compaction on Strata's schema", &model);
}

#[test]
fn deletion_vector_tables_evolved_by_both_engines_read_exactly() {
    evolve_by_both(true);
}

#[test]
fn merge_on_read_tables_evolved_by_both_engines_read_exactly() {
    evolve_by_both(false);
}
