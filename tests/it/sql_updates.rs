//! SQL `UPDATE` (issue 54): on append tables the matching rows change by position, in place when the table
//! has no deletion vectors and the rows stay in their partition and bucket (the bucket's order kept), else
//! as vectors plus new rows; on primary-key tables each matching key gets its new row. Each statement is one
//! OVERWRITE snapshot; the rows match a model in Strata, pypaimon 2.1.0, paimon-rust 0.4.0 and Java Paimon
//! 1.4.2; an update and a compaction of the same files never both land; bad values change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::append_compaction::{check_reads, create, Appends};
use crate::append_deletes::table_kinds;
use crate::append_writes::{open, sorted};
use crate::common;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{BooleanArray, Int64Array, RecordBatch};
use common::{json_rows, strata};
use serde_json::{json, Value};
use strata::spec::{CommitKind, ErrorKind};
use strata::{ReadBuilder, RowUpdate, TableWrite};

fn sql(warehouse: &str, statement: &str) -> String {
    let (code, out, err) = strata(&["sql", "--warehouse", warehouse, statement]);
    assert_eq!(code, 0, "{statement}: {err}");
    out
}

fn latest(path: &str) -> (i64, CommitKind) {
    let s = open(path).snapshot(None).unwrap().unwrap();
    (s.id, s.commit_kind)
}

/// Runs `statement`, an UPDATE of `want` rows, and checks it made one snapshot: an OVERWRITE of an append
/// table's rows, an APPEND of a primary-key table's new rows (as Paimon commits each).
fn update(warehouse: &str, path: &str, statement: &str, want: usize) {
    let (before, _) = latest(path);
    let out = sql(warehouse, statement);
    assert!(out.contains(&format!("| {want} ")), "{statement}: {want} rows updated: {out}");
    if want > 0 {
        let t = open(path);
        if t.schema().primary_keys.is_empty() {
            assert_eq!(latest(path), (before + 1, CommitKind::Overwrite), "{statement}");
        } else {
            // The rows, then (with deletion vectors) the compaction that marks the old ones.
            let first = t.snapshot(Some(before + 1)).unwrap().unwrap();
            assert_eq!(first.commit_kind, CommitKind::Append, "{statement}");
        }
    }
}

/// Applies `set` to the model's rows that `matches`, returning how many.
fn apply(model: &mut [Value], matches: impl Fn(&Value) -> bool, set: impl Fn(&mut Value)) -> usize {
    let mut n = 0;
    for r in model.iter_mut().filter(|r| matches(r)) {
        set(r);
        n += 1;
    }
    n
}

fn int(r: &Value, k: &str) -> i64 {
    r[k].as_i64().unwrap()
}

/// Appends, updates of a value column, then updates that move rows to another partition (and, in fixed
/// buckets, another bucket), on unaware and fixed-bucket tables with and without deletion vectors: after
/// each statement Strata reads the model (a fixed bucket's rows of a key in arrival order while no row
/// moved), and every engine does at the end, before and after Java compacts the table.
#[test]
fn sql_updates_on_append_tables_leave_the_models_rows_in_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let warehouse = wh.to_str().unwrap();
    let mut java = common::java::JavaPaimon::start();
    for (seed, (name, options)) in table_kinds().into_iter().enumerate() {
        let path = wh.join("db.db").join(name).to_str().unwrap().to_string();
        create(&path, &options);
        let (code, _, err) = strata(&["alter", &path, "--add-column", "v BIGINT"]);
        assert_eq!(code, 0, "{err}");
        let fixed = name.starts_with("fixed");
        let mut a = Appends::new(580 + seed as u64);
        let with_v = |model: &mut Vec<Value>| {
            for r in model.iter_mut().filter(|r| r.get("v").is_none()) {
                r["v"] = Value::Null;
            }
        };
        for round in 0..5i64 {
            a.commit(&path, 1, 40);
            with_v(&mut a.model);
            let (k, low) = (2 + round % 3, round * 25);
            let matches = |r: &Value| int(r, "id") % k == 0 && int(r, "n") > low && int(r, "n") <= low + 70;
            let want = apply(&mut a.model, matches, |r| r["v"] = json!(int(r, "n") * 10 + round));
            update(
                warehouse,
                &path,
                &format!(
                    "UPDATE db.{name} SET v = n * 10 + {round} WHERE id % {k} = 0 AND n > {low} AND n <= {}",
                    low + 70
                ),
                want,
            );
            if round == 2 {
                let (code, _, err) = strata(&["compact", &path]);
                assert_eq!(code, 0, "{name}: {err}");
            }
            let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
            assert_eq!(sorted(&got), sorted(&a.model), "{name}: round {round}");
        }
        // In place, a fixed bucket's rows keep their order; with vectors the new rows come last (as Paimon's).
        let in_place = fixed && !name.ends_with("_dv");
        check_reads(&mut java, &path, &a.model, in_place, &format!("{name} after Strata's updates"));

        // Rows move: to a new partition, and in fixed buckets to another bucket of their key.
        let want = apply(&mut a.model, |r| r["p"] == "a" && int(r, "id") % 5 == 1, |r| r["p"] = json!("c"));
        update(warehouse, &path, &format!("UPDATE db.{name} SET p = 'c' WHERE p = 'a' AND id % 5 = 1"), want);
        let want = apply(&mut a.model, |r| int(r, "id") % 4 == 3, |r| r["id"] = json!(int(r, "id") + 100));
        update(warehouse, &path, &format!("UPDATE db.{name} SET id = id + 100 WHERE id % 4 = 3"), want);
        check_reads(&mut java, &path, &a.model, false, &format!("{name} after updates that move rows"));

        if fixed {
            let more = a.rows(30);
            with_v(&mut a.model);
            java.call(&json!({"op": "write", "path": path, "writer": name, "rows": more, "compact": "full"}));
            java.call(&json!({"op": "close_writer", "writer": name}));
            // Java's writer has stopped: Strata may change the vectors of the buckets it compacted.
            let (code, _, err) = strata(&["alter", &path, "--set", "strata.foreign-compaction.window=0s"]);
            assert_eq!(code, 0, "{err}");
        } else {
            java.call(&json!({"op": "compact_unaware", "path": path}));
        }
        let want = apply(&mut a.model, |r| int(r, "n") % 3 == 0, |r| r["v"] = json!(-int(r, "n")));
        update(warehouse, &path, &format!("UPDATE db.{name} SET v = -n WHERE n % 3 = 0"), want);
        check_reads(&mut java, &path, &a.model, false, &format!("{name} after Strata's update over Java's files"));
    }
}

/// UPDATE on primary-key tables (deduplicate, with and without deletion vectors) writes each matching key's
/// new row; Java reads the result. Keys, partitions and other merge engines are refused with nothing
/// committed, as are values that do not fit their column.
#[test]
fn sql_updates_on_primary_key_tables_replace_the_keys_rows() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let warehouse = wh.to_str().unwrap();
    let mut java = common::java::JavaPaimon::start();
    for (name, extra) in [("plain", None), ("dv", Some("deletion-vectors.enabled=true"))] {
        let path = wh.join("db.db").join(name).to_str().unwrap().to_string();
        let mut args = vec![
            "create",
            &path,
            "--schema",
            "id BIGINT NOT NULL, p STRING NOT NULL, v STRING, c INT",
            "--primary-key",
            "id,p",
            "--partition-keys",
            "p",
            "--option",
            "bucket=2",
        ];
        if let Some(o) = extra {
            args.extend(["--option", o]);
        }
        let (code, _, err) = strata(&args);
        assert_eq!(code, 0, "{err}");
        let values: Vec<String> = (0..40).map(|i| format!("({i}, '{}', 'v{i}', {i})", ["a", "b"][i % 2])).collect();
        sql(warehouse, &format!("INSERT INTO db.{name} VALUES {}", values.join(", ")));
        let mut model: Vec<Value> = (0..40i64)
            .map(|i| json!({"id": i, "p": if i % 2 == 0 { "a" } else { "b" }, "v": format!("v{i}"), "c": i}))
            .collect();
        let want = apply(
            &mut model,
            |r| int(r, "id") % 3 == 0,
            |r| {
                r["v"] = json!(format!("{}!", r["v"].as_str().unwrap()));
                r["c"] = json!(int(r, "c") + 1000);
            },
        );
        update(
            warehouse,
            &path,
            &format!("UPDATE db.{name} SET v = concat(v, '!'), c = c + 1000 WHERE id % 3 = 0"),
            want,
        );
        let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
        assert_eq!(sorted(&got), sorted(&model), "{name}");
        let theirs: Vec<Value> = java
            .read(&path, json!({}))
            .into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("_kind");
                r
            })
            .collect();
        assert_eq!(sorted(&theirs), sorted(&model), "{name}: Java's read");

        let before = latest(&path);
        for (statement, says) in [
            (format!("UPDATE db.{name} SET id = id + 1 WHERE id = 1"), "primary-key or partition column 'id'"),
            (format!("UPDATE db.{name} SET p = 'c' WHERE id = 1"), "primary-key or partition column 'p'"),
            (format!("UPDATE db.{name} SET c = 3000000000 WHERE id = 1"), "3000000000"),
            (format!("UPDATE db.{name} SET nope = 1"), "nope"),
        ] {
            let (code, _, err) = strata(&["sql", "--warehouse", warehouse, &statement]);
            assert!(code != 0 && err.contains(says), "{statement}: {err}");
        }
        assert_eq!(latest(&path), before, "{name}: a refused update commits nothing");
    }
    let path = wh.join("db.db").join("agg").to_str().unwrap().to_string();
    let (code, _, err) = strata(&[
        "create",
        &path,
        "--schema",
        "id BIGINT NOT NULL, c BIGINT",
        "--primary-key",
        "id",
        "--option",
        "merge-engine=aggregation",
        "--option",
        "fields.c.aggregate-function=sum",
    ]);
    assert_eq!(code, 0, "{err}");
    sql(warehouse, "INSERT INTO db.agg VALUES (1, 5)");
    let (code, _, err) = strata(&["sql", "--warehouse", warehouse, "UPDATE db.agg SET c = 7"]);
    assert!(code != 0 && err.contains("only deduplicate tables"), "{err}");
}

/// A NULL for a NOT NULL column or a value that does not fit its type fails the statement; nothing is
/// committed and the rows read as before.
#[test]
fn an_update_with_bad_values_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let warehouse = wh.to_str().unwrap();
    for options in [vec![], vec!["--option", "deletion-vectors.enabled=true"]] {
        let path = wh.join("db.db").join("t").to_str().unwrap().to_string();
        let _ = std::fs::remove_dir_all(&path);
        let mut args = vec!["create", &path, "--schema", "n BIGINT NOT NULL, small INT, s STRING"];
        args.extend(options.iter().copied());
        let (code, _, err) = strata(&args);
        assert_eq!(code, 0, "{err}");
        sql(warehouse, "INSERT INTO db.t VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')");
        let before = (latest(&path), json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches));
        for (statement, says) in [
            ("UPDATE db.t SET n = NULL WHERE n > 1", "NOT NULL"),
            ("UPDATE db.t SET small = CAST(n AS BIGINT) * 3000000000 WHERE n > 1", "Cast error"),
        ] {
            let (code, _, err) = strata(&["sql", "--warehouse", warehouse, statement]);
            assert!(code != 0 && err.contains(says), "{options:?}: {statement}: {err}");
        }
        let after = (latest(&path), json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches));
        assert_eq!(after, before, "{options:?}");
        let file_count = std::fs::read_dir(std::path::Path::new(&path).join("bucket-0")).unwrap().count();
        assert_eq!(file_count, 1, "{options:?}: a failed update leaves no files behind");
    }
}

/// An update prepared while a compaction of the same files lands (and the other way round) is refused as a
/// conflict, with and without deletion vectors; the table then holds what the one that landed left.
#[test]
fn an_update_and_a_compaction_of_the_same_files_never_both_land() {
    for options in
        [vec!["deletion-vectors.enabled=true", "compaction.min.file-num=2"], vec!["compaction.min.file-num=2"]]
    {
        for update_first in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("db.db").join("events").to_str().unwrap().to_string();
            create(&path, &options);
            let mut a = Appends::new(590);
            a.commit(&path, 3, 30);
            let t = open(&path);
            let mut compaction = TableWrite::for_compaction(&t).unwrap();
            compaction.open_all_buckets().unwrap();
            let compacted = compaction.prepare_commit_with(false, None).unwrap();
            let mut write = TableWrite::new(&t).unwrap();
            let mut even = |b: &RecordBatch| -> strata::Result<BooleanArray> {
                let n = b.column_by_name("n").unwrap().as_primitive::<Int64Type>();
                Ok(n.iter().map(|v| v.map(|v| v % 2 == 0)).collect())
            };
            let mut negate = |b: &RecordBatch| -> strata::Result<RecordBatch> {
                let n = b.column_by_name("n").unwrap().as_primitive::<Int64Type>();
                let negated: Int64Array = n.iter().map(|v| v.map(|v| -v)).collect();
                let mut columns = b.columns().to_vec();
                columns[0] = std::sync::Arc::new(negated);
                Ok(RecordBatch::try_new(b.schema(), columns).unwrap())
            };
            let changes = RowUpdate { matches: &mut even, assign: &mut negate, columns: vec!["n".into()] };
            assert_eq!(write.update_matching(changes).unwrap(), 45);
            let updated = write.prepare_commit().unwrap();
            let commit = |messages, id| {
                t.new_commit("test").unwrap().commit(&strata::table::Committable {
                    identifier: id,
                    messages,
                    ..Default::default()
                })
            };
            let (first, second) = if update_first { (updated, compacted) } else { (compacted, updated) };
            commit(first, 1).unwrap();
            let err = commit(second, 2).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{options:?}, update first: {update_first}: {err}");
            let mut want = a.model.clone();
            if update_first {
                apply(&mut want, |r| int(r, "n") % 2 == 0, |r| r["n"] = json!(-int(r, "n")));
            }
            let got = json_rows(&ReadBuilder::new(&open(&path)).read().unwrap().batches);
            assert_eq!(sorted(&got), sorted(&want), "{options:?}, update first: {update_first}");
        }
    }
}

/// A DELETE or UPDATE reads only the files its condition may match (by partition and file statistics, from
/// the conjuncts that translate): with partition b's files unreadable, changes confined to partition a go
/// through and leave the model's rows there, while one that may touch b fails without committing.
#[test]
fn row_level_changes_read_only_the_files_their_condition_may_match() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let warehouse = wh.to_str().unwrap();
    let path = wh.join("db.db").join("events").to_str().unwrap().to_string();
    create(&path, &[]);
    let mut a = Appends::new(595);
    a.commit(&path, 3, 40);
    for f in std::fs::read_dir(std::path::Path::new(&path).join("p=b").join("bucket-0")).unwrap() {
        std::fs::write(f.unwrap().path(), b"not a parquet file").unwrap();
    }
    let mut model: Vec<Value> = a.model.iter().filter(|r| r["p"] == "a").cloned().collect();
    let before = model.len();
    model.retain(|r| int(r, "n") % 2 != 0);
    let out = sql(warehouse, "DELETE FROM db.events WHERE p = 'a' AND n % 2 = 0");
    assert!(out.contains(&format!("| {} ", before - model.len())), "{out}");
    let want = apply(&mut model, |r| int(r, "n") > 60, |r| r["id"] = json!(-1));
    update(warehouse, &path, "UPDATE db.events SET id = -1 WHERE p = 'a' AND n > 60", want);
    let at = latest(&path);
    let (code, _, err) = strata(&["sql", "--warehouse", warehouse, "DELETE FROM db.events WHERE n % 5 = 0"]);
    assert!(code != 0, "a delete that may touch partition b reads its files: {err}");
    assert_eq!(latest(&path), at, "and commits nothing");
    let only_a = strata::Predicate::cmp("p", strata::CmpOp::Eq, strata::spec::Datum::String("a".into()));
    let got = json_rows(&ReadBuilder::new(&open(&path)).with_filter(only_a).read().unwrap().batches);
    assert_eq!(sorted(&got), sorted(&model));
}
