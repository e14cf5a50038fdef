//! The CLI speaks to people (issue 14, section 3): plain messages instead of Rust debug output, the exit
//! codes `--help` lists, keys that are not found named, keys holding commas expressible, and invalid
//! maintenance arguments refused with the valid range instead of being bent into one; `strata sql` (issue 18)
//! with the output formats of `scan`, a prompt reading from a pipe, and the same exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::strata;

fn table_with_rows(dir: &std::path::Path, schema: &str, keys: &str, rows: &str) -> String {
    let t = dir.join("t").to_string_lossy().into_owned();
    let (code, _, err) = strata(&["create", &t, "--schema", schema, "--primary-key", keys]);
    assert_eq!(code, 0, "{err}");
    let input = dir.join("rows.jsonl");
    std::fs::write(&input, rows).unwrap();
    let (code, _, err) = strata(&["write", &t, "--input", input.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    t
}

#[test]
fn help_lists_the_exit_codes_that_errors_return() {
    let (code, out, _) = strata(&["--help"]);
    assert_eq!(code, 0);
    for line in ["2  invalid input", "3  not found", "4  already exists", "5  corrupt data", "6  commit conflict"] {
        assert!(out.contains(line), "--help lacks '{line}':\n{out}");
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-table");
    let (code, _, err) = strata(&["scan", missing.to_str().unwrap()]);
    assert_eq!(code, 3, "a missing table is 'not found': {err}");
}

#[test]
fn get_names_the_keys_it_did_not_find() {
    let dir = tempfile::tempdir().unwrap();
    let t = table_with_rows(dir.path(), "id BIGINT NOT NULL, v STRING", "id", "{\"id\":1,\"v\":null}\n");
    let (code, out, err) = strata(&["get", &t, "5", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), r#"{"id":1,"v":null}"#);
    assert_eq!(err.trim(), "not found: 5");
    let (code, out, err) = strata(&["get", &t, "5", "1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, serde_json::json!({"rows": [{"id": 1, "v": null}], "notFound": ["5"]}));
}

#[test]
fn string_keys_may_hold_commas() {
    let dir = tempfile::tempdir().unwrap();
    let rows = "{\"k\":\"a,b\",\"j\":7,\"v\":\"x\"}\n{\"k\":\"say \\\"hi\\\"\",\"j\":8,\"v\":\"y\"}\n";
    let t = table_with_rows(dir.path(), "k STRING NOT NULL, j INT NOT NULL, v STRING", "k,j", rows);
    let (code, out, err) = strata(&["get", &t, "\"a,b\",7", "\"say \"\"hi\"\"\", 8", "a,7", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"], serde_json::json!([{"k": "a,b", "j": 7, "v": "x"}, {"k": "say \"hi\"", "j": 8, "v": "y"}]));
    assert_eq!(v["notFound"], serde_json::json!(["a,7"]));
    let (code, _, err) = strata(&["get", &t, "a,b,7"]);
    assert_eq!(code, 2, "three values for a two-column key: {err}");
    assert!(err.contains("quote a value holding a comma"), "{err}");

    // A one-column string key is the whole argument, commas and all.
    let dir = tempfile::tempdir().unwrap();
    let t = table_with_rows(dir.path(), "k STRING NOT NULL, v INT", "k", "{\"k\":\"x,y\",\"v\":1}\n");
    let (code, out, err) = strata(&["get", &t, "x,y"]);
    assert_eq!((code, out.trim()), (0, r#"{"k":"x,y","v":1}"#), "{err}");
}

#[test]
fn maintenance_arguments_out_of_range_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = table_with_rows(dir.path(), "id BIGINT NOT NULL, v STRING", "id", "{\"id\":1,\"v\":\"a\"}\n");
    for args in [
        vec!["expire", &t, "--retain-max", "0"],
        vec!["expire", &t, "--retain-min", "0"],
        vec!["expire", &t, "--retain-min", "3", "--retain-max", "2"],
        vec!["expire", &t, "--older-than", "5"],
        vec!["clean", &t, "--older-than", "7"],
        vec!["clean", &t, "--older-than", "soon"],
    ] {
        let (code, out, err) = strata(&args);
        assert_eq!(code, 2, "{args:?} must be refused: {out}{err}");
        assert!(err.contains("retain") || err.contains("older-than"), "{args:?}: the message names the flag: {err}");
    }
    let (code, out, err) = strata(&["expire", &t, "--retain-max", "1", "--older-than", "0 s"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("expired: "), "{out}");
}

#[test]
fn messages_say_what_happened_without_debug_output() {
    let dir = tempfile::tempdir().unwrap();
    let t = table_with_rows(dir.path(), "id BIGINT NOT NULL, v STRING", "id", "{\"id\":1,\"v\":\"a\"}\n");
    let (code, out, err) = strata(&["compact", &t]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "nothing to compact");
    let workload = common::root().join("tests/workloads");
    let first = std::fs::read_dir(&workload).unwrap().next().unwrap().unwrap().path();
    let (code, out, err) = strata(&["replay", first.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for (what, text) in [("compact", "nothing to compact"), ("replay", out.as_str())] {
        assert!(!text.contains("Some(") && !text.contains("None") && !text.contains(" { "), "{what}: {text}");
    }
    assert!(out.starts_with("ok: "), "{out}");
}

/// `strata sql --warehouse WH ARGS...` with `stdin` piped in; returns (exit code, stdout, stderr).
fn sql(wh: &str, args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["sql", "--warehouse", wh])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

/// A warehouse holding `db.t` (id BIGINT NOT NULL, name STRING, v BIGINT; key id), made by `strata create`.
fn warehouse(dir: &std::path::Path) -> String {
    let wh = dir.join("wh").to_string_lossy().into_owned();
    let t = format!("{wh}/db.db/t");
    let (code, _, err) =
        strata(&["create", &t, "--schema", "id BIGINT NOT NULL, name STRING, v BIGINT", "--primary-key", "id"]);
    assert_eq!(code, 0, "{err}");
    wh
}

#[test]
fn sql_inserts_then_selects_in_the_formats_of_scan() {
    let dir = tempfile::tempdir().unwrap();
    let wh = warehouse(dir.path());
    let insert = "INSERT INTO db.t VALUES (1, 'a', 10), (2, 'b', 20), (3, NULL, 30)";
    let (code, out, err) = sql(&wh, &["--json", insert], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "{\"count\":3}\n");
    // An upsert by key, then a query: each statement prints its own rows.
    let two = "INSERT INTO db.t VALUES (2, 'B', 21); SELECT id, name, v FROM db.t WHERE v > 15 ORDER BY id";
    let (code, out, err) = sql(&wh, &["--json", two], "");
    assert_eq!(code, 0, "{err}");
    let want = "{\"count\":1}\n{\"id\":2,\"name\":\"B\",\"v\":21}\n{\"id\":3,\"name\":null,\"v\":30}\n";
    assert_eq!(out, want);
    let (code, out, err) = sql(&wh, &["--format", "csv", "SELECT id, name FROM db.t ORDER BY id"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "id,name\n1,a\n2,B\n3,\n");
    let (code, out, err) = sql(&wh, &["SELECT count(*) AS n, sum(v) AS s FROM db.t"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "+---+----+\n| n | s  |\n+---+----+\n| 3 | 61 |\n+---+----+\n");
    // Deletes by key; a key filter reads one data file, which --verbose reports.
    let (code, out, err) =
        sql(&wh, &["--json", "-v", "DELETE FROM db.t WHERE id = 1; SELECT id FROM db.t WHERE id = 3"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "{\"count\":1}\n{\"id\":3}\n");
    assert!(err.lines().nth(1).is_some_and(|l| l.starts_with("1 rows, 1 data files read by 1 Strata scans")), "{err}");
}

#[test]
fn sql_reads_statements_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let wh = warehouse(dir.path());
    let script = "INSERT INTO db.t\n  VALUES (7, 'x', 70), (8, 'y', 80);\n\nSELECT name\nFROM db.t\nWHERE id = 8;\nSELECT sum(v) AS s FROM db.t\n";
    let (code, out, err) = sql(&wh, &["--format", "csv"], script);
    assert_eq!(code, 0, "{err}");
    // The last statement needs no `;`; nothing is prompted when stdin is not a terminal.
    assert_eq!(out, "count\n2\nname\ny\ns\n150\n");
    assert_eq!(err, "");
}

#[test]
fn sql_errors_are_typed_and_end_a_piped_script() {
    let dir = tempfile::tempdir().unwrap();
    let wh = warehouse(dir.path());
    for (query, code) in [("SELEC 1", 2), ("SELECT nope FROM db.t", 2), ("SELECT * FROM db.missing", 3)] {
        let (got, out, err) = sql(&wh, &[query], "");
        assert_eq!(got, code, "{query}: {err}");
        assert_eq!(out, "", "{query}");
        assert!(err.starts_with("strata: error: ") && !err.contains("panicked"), "{query}: {err}");
    }
    // A piped script stops at its first error: the INSERT after it does not run.
    let script = "SELECT 1 AS one;\nSELECT * FROM db.missing;\nINSERT INTO db.t VALUES (1, 'a', 1);\n";
    let (code, out, err) = sql(&wh, &["--json"], script);
    assert_eq!(code, 3, "{err}");
    assert_eq!(out, "{\"one\":1}\n");
    let (code, out, _) = sql(&wh, &["--json", "SELECT count(*) AS n FROM db.t"], "");
    assert_eq!((code, out.as_str()), (0, "{\"n\":0}\n"));
}

#[test]
fn inspect_says_an_append_table_has_no_keys_and_option_errors_name_their_flag() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("events").to_string_lossy().into_owned();
    assert_eq!(strata(&["create", &t, "--schema", "id BIGINT, v STRING"]).0, 0);
    let (code, out, err) = strata(&["inspect", &t]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("keys      none: an append table"), "{out}");
    let (code, _, err) = strata(&["alter", &t, "--set", "noequals"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid --set: 'noequals' is not KEY=VALUE"), "{err}");
    let (code, _, err) = strata(&["--store-option", "s3.region", "inspect", &t]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid --store-option:"), "{err}");
}
