//! `strata alter` column changes: every Paimon rule (and Strata's refusal of narrowing type changes) is
//! refused with exit code 2, naming the column and the rule, and leaves the table as it was; accepted
//! changes write one schema that pypaimon 2.1.0 loads with the same field ids, names and types, and that
//! equals the schema pypaimon's own alter writes for the same changes. Reading data files written under an
//! older schema is the reader's concern and not tested here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use common::{oracle, strata};
use serde_json::{json, Value};
use strata::spec::{DataType, Datum, ErrorKind, SchemaChange};
use strata::{FileIO, LocalFileIO, Table, TableWriter};

fn io() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

/// `<tmp>/wh/db.db/<name>`: the layout pypaimon's filesystem catalog opens.
fn table_dir(tmp: &Path, name: &str) -> String {
    tmp.join("wh").join("db.db").join(name).to_str().unwrap().to_string()
}

/// `strata create` of `schema` with primary key `pk` and partition keys `partition`.
fn create(p: &str, schema: &str, pk: &str, partition: &str, extra: &[&str]) {
    let mut args = vec!["create", p, "--schema", schema];
    if !pk.is_empty() {
        args.extend(["--primary-key", pk]);
    }
    if !partition.is_empty() {
        args.extend(["--partition-keys", partition]);
    }
    for o in extra {
        args.extend(["--option", o]);
    }
    let (code, _, err) = strata(&args);
    assert_eq!(code, 0, "{err}");
}

/// The usual table: `id BIGINT (pk), p STRING (partition), v BIGINT, k STRING, d DOUBLE, n INT NOT NULL`.
fn create_usual(p: &str, extra: &[&str]) {
    create(
        p,
        "id BIGINT NOT NULL, p STRING NOT NULL, v BIGINT, k STRING, d DOUBLE, n INT NOT NULL",
        "id,p",
        "p",
        extra,
    );
}

fn alter(p: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["alter", p];
    all.extend(args);
    strata(&all)
}

/// The schema files, and the newest one's bytes.
fn schema_state(p: &str) -> (usize, Vec<u8>) {
    let dir = Path::new(p).join("schema");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort_by_key(|n| {
        n.file_name().unwrap().to_str().unwrap().trim_start_matches("schema-").parse::<i64>().unwrap_or(-1)
    });
    let newest = std::fs::read(names.last().unwrap()).unwrap();
    (names.len(), newest)
}

/// `strata alter P ARGS` must fail with exit code 2 and every needle in its message, and write nothing.
fn refused(p: &str, args: &[&str], needles: &[&str]) {
    let before = schema_state(p);
    let (code, out, err) = alter(p, args);
    assert_eq!(code, 2, "alter {args:?} exited {code}: {out}{err}");
    for n in needles {
        assert!(err.contains(n), "alter {args:?}: '{}' lacks '{n}'", err.trim());
    }
    assert!(schema_state(p) == before, "a refused alter {args:?} changed the schema files");
}

fn accepted(p: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = alter(p, &all);
    assert_eq!(code, 0, "alter {args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn every_rule_is_refused_by_name_and_leaves_the_table_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let p = table_dir(tmp.path(), "t");
    let p = p.as_str();
    create_usual(p, &["sequence.field=v"]);
    // Added columns.
    refused(p, &["--add-column", "c INT NOT NULL"], &["'c'", "cannot be NOT NULL"]);
    refused(p, &["--add-column", "v INT"], &["'v'", "already exists"]);
    refused(p, &["--add-column", "K INT"], &["'K'", "only in case", "did you mean 'k'?"]);
    refused(p, &["--add-column", "c INT", "--after", "nope"], &["'nope'", "no such column"]);
    refused(p, &["--add-column", "_KEY_c INT"], &["_KEY_"]);
    refused(p, &["--add-column", "_SEQUENCE_NUMBER BIGINT"], &["system field"]);
    refused(p, &["--add-column", "_VALUE_KIND TINYINT"], &["system field"]);
    refused(p, &["--first"], &["--first", "must follow an --add-column"]);
    // Dropped columns.
    refused(p, &["--drop-column", "p"], &["'p'", "cannot drop a partition column"]);
    refused(p, &["--drop-column", "id"], &["'id'", "cannot drop a primary-key column"]);
    refused(p, &["--drop-column", "v"], &["'v'", "option 'sequence.field' names it"]);
    refused(p, &["--drop-column", "ID"], &["'ID'", "did you mean 'id'?"]);
    // Renamed columns.
    refused(p, &["--rename-column", "p=q"], &["'p'", "cannot rename a partition column"]);
    refused(p, &["--rename-column", "k=v"], &["'v'", "already exists"]);
    refused(p, &["--rename-column", "k=V"], &["'V'", "only in case"]);
    refused(p, &["--rename-column", "k=rowkind"], &["'rowkind'", "system field"]);
    refused(p, &["--rename-column", "k="], &["--rename-column", "OLD=NEW"]);
    // Type changes.
    refused(p, &["--column-type", "id=DECIMAL(38, 0)"], &["'id'", "type of a primary-key column"]);
    refused(p, &["--column-type", "p=VARCHAR(10)"], &["'p'", "type of a partition column"]);
    refused(p, &["--column-type", "v=INT"], &["'v'", "BIGINT to INT", "not a widening"]);
    refused(p, &["--column-type", "k=INT"], &["'k'", "STRING to INT", "not a widening"]);
    refused(p, &["--column-type", "d=FLOAT"], &["'d'", "DOUBLE to FLOAT", "not a widening"]);
    refused(p, &["--column-type", "v=DOUBLE"], &["'v'", "rounded"]);
    refused(p, &["--column-type", "k=VARCHAR(10)"], &["'k'", "longer than 10", "narrowing"]);
    refused(p, &["--column-type", "v=BIGINT NOT NULL"], &["'v'", "nulls"]);
    // One bad change refuses the whole alter, options included.
    refused(p, &["--set", "bucket=3", "--add-column", "c INT", "--drop-column", "p"], &["'p'"]);
    // (Dropping the last column, refused too, cannot be reached from a primary-key table, the only kind
    // `create` makes: strata-spec's schema_change tests cover it.)
}

#[test]
fn accepted_changes_are_the_schema_pypaimon_reads_and_would_write() {
    let tmp = tempfile::tempdir().unwrap();
    let p = table_dir(tmp.path(), "t");
    let twin = table_dir(tmp.path(), "twin");
    create_usual(&p, &["sequence.field=v"]);
    create_usual(&twin, &["sequence.field=v"]);
    let out = accepted(
        &p,
        &[
            "--add-column",
            "price DECIMAL(10, 2) COMMENT 'in euros'",
            "--first",
            "--add-column",
            "note STRING",
            "--after",
            "id",
            "--rename-column",
            "id=key",
            "--rename-column",
            "v=version",
            "--column-type",
            "version=DECIMAL(20, 0)",
            "--column-type",
            "n=BIGINT",
            "--column-type",
            "d=DOUBLE",
            "--drop-column",
            "k",
            "--add-column",
            "k VARCHAR(5)",
        ],
    );
    let pypaimon_changes = json!([
        {"add": "price", "type": "DECIMAL(10, 2)", "comment": "in euros", "first": true},
        {"add": "note", "type": "STRING", "after": "id"},
        {"rename": "id", "to": "key"},
        {"rename": "v", "to": "version"},
        {"retype": "version", "type": "DECIMAL(20, 0)"},
        {"retype": "n", "type": "BIGINT"},
        {"retype": "d", "type": "DOUBLE"},
        {"drop": "k"},
        {"add": "k", "type": "VARCHAR(5)"},
    ]);
    let theirs = oracle(&["alter", &twin, &pypaimon_changes.to_string()]);
    let ours = oracle(&["schema", &p]);
    assert_eq!(ours, theirs, "pypaimon reads Strata's schema differently from the one it writes itself");
    assert_eq!(ours["id"], 1);
    assert_eq!(ours["highestFieldId"], 8);
    let fields: Vec<String> = ours["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {} {}", f["id"], f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            "6 price DECIMAL(10, 2)",
            "0 key BIGINT NOT NULL",
            "7 note STRING",
            "1 p STRING NOT NULL",
            "2 version DECIMAL(20, 0)",
            "4 d DOUBLE",
            "5 n BIGINT",
            "8 k VARCHAR(5)",
        ]
    );
    assert_eq!(ours["fields"][0]["description"], "in euros");
    assert_eq!(ours["primaryKeys"], json!(["key", "p"]));
    assert_eq!(ours["options"]["sequence.field"], "version");
    // What `strata alter --json` reports is the schema pypaimon loads.
    assert_eq!(out["schemaId"], 1);
    assert_eq!(out["highestFieldId"], ours["highestFieldId"]);
    assert_eq!(out["primaryKeys"], ours["primaryKeys"]);
    for (a, b) in out["fields"].as_array().unwrap().iter().zip(ours["fields"].as_array().unwrap()) {
        assert_eq!((&a["id"], &a["name"], &a["type"]), (&b["id"], &b["name"], &b["type"]));
    }
    assert_eq!(out["columnChanges"].as_array().unwrap().len(), 9);
}

/// Rows of the usual table under its current schema: the keys, `n` = 1, nulls elsewhere.
fn write_rows(p: &str, keys: std::ops::Range<i64>) {
    let t = Table::open(io(), p).unwrap();
    let mut w = TableWriter::new(&t, "app").unwrap();
    for k in keys {
        let row = t
            .schema()
            .fields
            .iter()
            .map(|f| match f.name.as_str() {
                "id" => Some(Datum::BigInt(k)),
                "p" => Some(Datum::String(if k % 2 == 0 { "a" } else { "b" }.into())),
                "n" => Some(Datum::Int(1)),
                _ => None,
            })
            .collect();
        w.put(row).unwrap();
    }
    w.commit().unwrap();
}

#[test]
fn options_and_columns_change_together_in_one_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let p = table_dir(tmp.path(), "t");
    let p = p.as_str();
    create_usual(p, &[]);
    // The option is set first, then the rename carries it along, as in Paimon.
    let out = accepted(p, &["--set", "sequence.field=v", "--rename-column", "v=ts", "--add-column", "c INT"]);
    assert_eq!(out["schemaId"], 1);
    assert_eq!(out["options"]["sequence.field"], "ts");
    assert_eq!(schema_state(p).0, 2, "one alter, one schema");
    // Nothing to change: no schema.
    let out = accepted(p, &["--column-type", "ts=BIGINT"]);
    assert_eq!((out["changed"].as_bool(), schema_state(p).0), (Some(false), 2));
    // Once there is data, a frozen option refuses the whole alter; column changes alone still go through,
    // and renaming the sequence field is no change of `sequence.field`.
    write_rows(p, 0..10);
    refused(p, &["--add-column", "e INT", "--set", "bucket=4"], &["'bucket'", "once the table has data"]);
    refused(p, &["--add-column", "e INT", "--set", "sequence.field=c"], &["'sequence.field'"]);
    let out = accepted(p, &["--add-column", "e INT", "--rename-column", "ts=version", "--column-type", "c=BIGINT"]);
    assert_eq!(out["schemaId"], 2);
    assert_eq!(out["options"]["sequence.field"], "version");
    // Options the changes would make invalid are refused as for an options alter.
    refused(p, &["--set", "bucket-key=k"], &["bucket-key"]);
}

#[test]
fn concurrent_column_changes_of_one_schema_let_exactly_one_through() {
    let tmp = tempfile::tempdir().unwrap();
    let p = table_dir(tmp.path(), "t");
    create_usual(&p, &[]);
    // A table opened before another alter landed cannot build on the schema it saw.
    let stale = Table::open(io(), &p).unwrap();
    let fresh =
        Table::open(io(), &p).unwrap().alter_columns(&[SchemaChange::add_column("a", DataType::int())]).unwrap();
    assert_eq!(fresh.schema().id, 1);
    let e = stale.alter_columns(&[SchemaChange::add_column("b", DataType::int())]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert!(e.is_retryable());
    // Racing alters of one schema: one writes schema-2, the others conflict.
    let racers = 4;
    let barrier = Arc::new(Barrier::new(racers));
    let handles: Vec<_> = (0..racers)
        .map(|i| {
            let (p, barrier) = (p.clone(), barrier.clone());
            std::thread::spawn(move || {
                let t = Table::open(io(), &p);
                barrier.wait();
                t?.alter_columns(&[SchemaChange::add_column(format!("c{i}"), DataType::string())])
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners: Vec<&Table> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(
        winners.len(),
        1,
        "{:?}",
        results.iter().map(|r| r.as_ref().err().map(|e| e.to_string())).collect::<Vec<_>>()
    );
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    }
    let now = Table::open(io(), &p).unwrap();
    assert_eq!(now.schema().id, 2);
    let added: Vec<&str> = now.schema().fields.iter().map(|f| f.name.as_str()).filter(|n| n.starts_with('c')).collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(now.schema().field("a").unwrap().id, 6, "the first alter is kept");
    // Refusals through the API are typed too.
    let e = now.alter_columns(&[SchemaChange::drop_column("p")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
}
