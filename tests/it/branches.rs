//! Branches (issue 56), Paimon's layout (`branch/branch-<name>/` with its own snapshots, schemas and tags;
//! manifests and data files shared with the table): a branch pypaimon 2.1.0 creates from a tag and writes is
//! read by Strata (the library and SQL's `t$branch_dev`, with time travel and system tables on it), written by
//! Strata's SQL and read back by pypaimon, while the main branch stays as it was; maintenance that deletes
//! files stays refused while branches exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use common::{json_rows, oracle, strata};
use serde_json::{json, Value};
use strata::{FileIO, LocalFileIO, ReadBuilder, Table};

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|r| r["id"].as_i64());
    rows
}

fn rows(pairs: &[(i64, &str)]) -> Vec<Value> {
    pairs.iter().map(|(id, v)| json!({"id": id, "v": v})).collect()
}

fn sql_rows(warehouse: &str, query: &str) -> Vec<Value> {
    let (code, out, err) = strata(&["sql", "--warehouse", warehouse, "--format", "jsonl", query]);
    assert_eq!(code, 0, "{query}: {err}");
    sorted(out.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
}

#[test]
fn branches_pass_between_pypaimon_and_strata() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().to_str().unwrap();
    oracle(&["branch_setup", &json!({"warehouse": warehouse}).to_string()]);
    let main = rows(&[(1, "a"), (2, "b"), (3, "c")]);
    let dev = rows(&[(1, "a"), (2, "B"), (3, "c"), (4, "D")]);

    let path = dir.path().join("db.db").join("t");
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let t = Table::open_branch(io.clone(), path.to_str().unwrap(), "dev").unwrap();
    assert_eq!(t.branch(), Some("dev"));
    assert_eq!(sorted(json_rows(&ReadBuilder::new(&t).read().unwrap().batches)), dev);
    let m = Table::open_branch(io.clone(), path.to_str().unwrap(), "main").unwrap();
    assert_eq!(sorted(json_rows(&ReadBuilder::new(&m).read().unwrap().batches)), main);
    let missing = Table::open_branch(io.clone(), path.to_str().unwrap(), "nope").unwrap_err();
    assert_eq!(missing.kind(), strata::spec::ErrorKind::NotFound, "{missing}");
    assert!(Table::open_branch(io, path.to_str().unwrap(), "../x").is_err());

    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_dev\""), dev);
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.t"), main);
    let (code, _, err) =
        strata(&["sql", "--warehouse", warehouse, "INSERT INTO db.\"t$branch_dev\" VALUES (5, 'E'), (1, 'A')"]);
    assert_eq!(code, 0, "{err}");
    let dev_now = rows(&[(1, "A"), (2, "B"), (3, "c"), (4, "D"), (5, "E")]);
    // The branch's own history: the tag's snapshot, pypaimon's write, Strata's.
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_dev$snapshot=2\""), dev);
    let snapshots = sql_rows(warehouse, "SELECT snapshot_id AS id FROM db.\"t$branch_dev$snapshots\"");
    assert_eq!(snapshots.len(), 3, "{snapshots:?}");
    let theirs = oracle(&["branch_read", &json!({"warehouse": warehouse}).to_string()]);
    assert_eq!(sorted(theirs["dev"].as_array().unwrap().clone()), dev_now, "pypaimon reads Strata's branch write");
    assert_eq!(sorted(theirs["main"].as_array().unwrap().clone()), main, "main is as it was");
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.t"), main);

    // The CLI's --branch: write, scan and tag the branch; SQL names the branch in the table name instead.
    let table = path.to_str().unwrap();
    let more = dir.path().join("more.jsonl");
    std::fs::write(&more, "{\"id\":6,\"v\":\"F\"}\n").unwrap();
    for args in [
        vec!["--branch", "dev", "write", table, more.to_str().unwrap()],
        vec!["tag", "create", table, "on-dev", "--branch", "dev"],
    ] {
        let (code, _, err) = strata(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let (code, out, err) = strata(&["scan", table, "--branch", "dev"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), dev_now.len() + 1, "{out}");
    assert!(path.join("branch").join("branch-dev").join("tag").join("tag-on-dev").exists());
    let (code, out, _) = strata(&["scan", table]);
    assert_eq!((code, out.lines().count()), (0, main.len()), "main has no row of the branch: {out}");
    let (code, _, err) = strata(&["--branch", "dev", "sql", "--warehouse", warehouse, "SELECT 1"]);
    assert!(code != 0 && err.contains("branch"), "{err}");

    // Files are shared with the branch: the table's expiration and orphan cleanup keep what the branch and its
    // tags reference (the branch reads whole after them, in Strata and pypaimon); on the branch they are refused.
    for args in [vec!["expire", table, "--retain-max", "1"], vec!["clean", table, "--older-than", "0 s"]] {
        let (code, _, err) = strata(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let dev_all = [dev_now.clone(), rows(&[(6, "F")])].concat();
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_dev\""), dev_all);
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_dev$tag=t1\""), main, "the tag the branch began at");
    let theirs = oracle(&["branch_read", &json!({"warehouse": warehouse}).to_string()]);
    assert_eq!(sorted(theirs["dev"].as_array().unwrap().clone()), dev_all, "pypaimon reads the branch after cleanup");
    assert_eq!(sorted(theirs["main"].as_array().unwrap().clone()), main);
    for args in [vec!["--branch", "dev", "expire", table], vec!["--branch", "dev", "clean", table]] {
        let (code, _, err) = strata(&args);
        assert!(code != 0 && err.contains("branch 'dev'"), "{args:?}: {err}");
    }
}

/// `strata branch create` (from a tag, and empty), `list` and `delete`: pypaimon reads what Strata writes on
/// the branches it creates, names Paimon refuses are refused, and once the last branch is gone the table may
/// be expired and cleaned again.
#[test]
fn strata_creates_lists_and_deletes_branches_pypaimon_reads() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().to_str().unwrap();
    let table = dir.path().join("db.db").join("t").to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let (code, out, err) = strata(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    ok(&["create", &table, "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id"]);
    ok(&["sql", "--warehouse", warehouse, "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')"]);
    ok(&["tag", "create", &table, "first"]);
    ok(&["sql", "--warehouse", warehouse, "INSERT INTO db.t VALUES (3, 'c')"]);
    ok(&["branch", "create", &table, "dev", "--tag", "first"]);
    ok(&["branch", "create", &table, "empty"]);
    // A create that stopped after copying the tag runs again.
    let half = std::path::Path::new(&table).join("branch").join("branch-retry").join("tag");
    std::fs::create_dir_all(&half).unwrap();
    std::fs::copy(std::path::Path::new(&table).join("tag").join("tag-first"), half.join("tag-first")).unwrap();
    ok(&["branch", "create", &table, "retry", "--tag", "first"]);
    ok(&["branch", "delete", &table, "retry"]);
    let listed: Value = serde_json::from_str(ok(&["branch", "list", &table, "--json"]).trim()).unwrap();
    assert_eq!(listed, json!(["dev", "empty"]));
    for name in ["main", "123", "dev", "a/b", ".x"] {
        let (code, _, err) = strata(&["branch", "create", &table, name]);
        assert!(code != 0, "branch {name:?} was created: {err}");
    }
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_dev\""), rows(&[(1, "a"), (2, "b")]));
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_empty\""), Vec::<Value>::new());
    ok(&["sql", "--warehouse", warehouse, "INSERT INTO db.\"t$branch_dev\" VALUES (2, 'B')"]);
    ok(&["sql", "--warehouse", warehouse, "INSERT INTO db.\"t$branch_empty\" VALUES (4, 'd')"]);
    let spec = json!({"warehouse": warehouse, "tables": ["db.t", "db.t$branch_dev", "db.t$branch_empty"]});
    let theirs = oracle(&["branch_read", &spec.to_string()]);
    let read = |name: &str| sorted(theirs[name].as_array().unwrap().clone());
    assert_eq!(read("db.t"), rows(&[(1, "a"), (2, "b"), (3, "c")]));
    assert_eq!(read("db.t$branch_dev"), rows(&[(1, "a"), (2, "B")]));
    assert_eq!(read("db.t$branch_empty"), rows(&[(4, "d")]));

    // The branch began at tag first: with the tag gone and main compacted, expiring main's early snapshots
    // would delete the files the branch still reads, but for the branch's references.
    ok(&["compact", &table, "--full"]);
    ok(&["tag", "delete", &table, "first"]);
    ok(&["expire", &table, "--retain-max", "1"]);
    ok(&["clean", &table, "--older-than", "0 s"]);
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.\"t$branch_dev\""), rows(&[(1, "a"), (2, "B")]));
    let theirs = oracle(&["branch_read", &json!({"warehouse": warehouse, "tables": ["db.t$branch_dev"]}).to_string()]);
    assert_eq!(sorted(theirs["db.t$branch_dev"].as_array().unwrap().clone()), rows(&[(1, "a"), (2, "B")]));
    ok(&["branch", "delete", &table, "dev"]);
    ok(&["branch", "delete", &table, "empty"]);
    let (code, _, _) = strata(&["branch", "delete", &table, "dev"]);
    assert!(code != 0, "a deleted branch is gone");
    assert!(ok(&["branch", "list", &table]).contains("no branches"));
    ok(&["expire", &table, "--retain-max", "1"]);
    ok(&["clean", &table, "--older-than", "1d"]);
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.t"), rows(&[(1, "a"), (2, "b"), (3, "c")]));
}

/// `strata branch fast-forward`: the table becomes the branch (its later write on main gone, the branch's
/// rows and history in), pypaimon reads the same, and writes on the table go on from the branch's snapshots.
#[test]
fn fast_forward_makes_the_table_what_the_branch_is() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().to_str().unwrap();
    oracle(&["branch_setup", &json!({"warehouse": warehouse}).to_string()]);
    let table = dir.path().join("db.db").join("t").to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let (code, out, err) = strata(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    ok(&["sql", "--warehouse", warehouse, "INSERT INTO db.t VALUES (9, 'z')"]);
    let (code, _, _) = strata(&["branch", "fast-forward", &table, "nope"]);
    assert!(code != 0, "an unknown branch");
    let report: Value = serde_json::from_str(ok(&["branch", "fast-forward", &table, "dev", "--json"]).trim()).unwrap();
    assert_eq!(report["from_snapshot"], 1, "{report}");
    assert_eq!(report["removed_snapshots"], json!([1, 2]), "{report}");
    let dev = rows(&[(1, "a"), (2, "B"), (3, "c"), (4, "D")]);
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.t"), dev);
    let theirs = oracle(&["branch_read", &json!({"warehouse": warehouse}).to_string()]);
    assert_eq!(sorted(theirs["main"].as_array().unwrap().clone()), dev, "pypaimon reads the fast-forwarded table");
    ok(&["sql", "--warehouse", warehouse, "INSERT INTO db.t VALUES (5, 'e')"]);
    let after = rows(&[(1, "a"), (2, "B"), (3, "c"), (4, "D"), (5, "e")]);
    assert_eq!(sql_rows(warehouse, "SELECT * FROM db.t"), after);
    let snapshots = sql_rows(warehouse, "SELECT snapshot_id AS id FROM db.\"t$snapshots\"");
    assert_eq!(snapshots.len(), 3, "the branch's two snapshots, then the new write: {snapshots:?}");
    let theirs = oracle(&["branch_read", &json!({"warehouse": warehouse}).to_string()]);
    assert_eq!(sorted(theirs["main"].as_array().unwrap().clone()), after);
}
