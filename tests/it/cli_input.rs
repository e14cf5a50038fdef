//! `strata write` takes exactly what its input files give or refuses them: fields by name, no lossy
//! conversion, no value silently dropped or nulled. Every refusal exits 2 with one line naming the file,
//! the line (parquet: row), the column and the value, and leaves the table as it was (snapshots and
//! files).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use common::strata;
use serde_json::{json, Value};

/// A table made by `strata create` in a temporary directory.
struct T {
    dir: tempfile::TempDir,
    path: String,
}

fn table(schema: &str, options: &[&str]) -> T {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t").to_str().unwrap().to_string();
    let mut args = vec!["create", &path, "--schema", schema, "--primary-key", "id"];
    for o in options {
        args.extend(["--option", o]);
    }
    let (code, _, err) = strata(&args);
    assert_eq!(code, 0, "create: {err}");
    T { dir, path }
}

impl T {
    fn file(&self, name: &str, content: impl AsRef<[u8]>) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        p.to_str().unwrap().to_string()
    }

    fn parquet(&self, name: &str, columns: Vec<(&str, ArrayRef)>) -> String {
        let p = self.dir.path().join(name);
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&p).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        p.to_str().unwrap().to_string()
    }

    fn write(&self, extra: &[&str]) -> (i32, String, String) {
        let mut args = vec!["write", self.path.as_str()];
        args.extend(extra);
        strata(&args)
    }

    fn written(&self, extra: &[&str]) {
        let (code, out, err) = self.write(extra);
        assert_eq!(code, 0, "write {extra:?}: {out} {err}");
    }

    /// The rows, by `strata scan`.
    fn rows(&self) -> Vec<Value> {
        let (code, out, err) = strata(&["scan", &self.path]);
        assert_eq!(code, 0, "scan: {err}");
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// Every file under the table directory with its size: what a refused write must not change.
    fn state(&self) -> Vec<(PathBuf, u64)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64)>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    walk(&e.path(), out);
                } else {
                    out.push((e.path(), e.metadata().unwrap().len()));
                }
            }
        }
        let mut out = Vec::new();
        walk(Path::new(&self.path), &mut out);
        out.sort();
        out
    }

    /// Runs a write that must be refused (exit 2, one line holding every needle) and leave the table as it was.
    fn refused(&self, extra: &[&str], needles: &[&str]) -> String {
        self.refused_with(2, extra, needles)
    }

    fn refused_with(&self, code: i32, extra: &[&str], needles: &[&str]) -> String {
        let before = self.state();
        let (got, out, err) = self.write(extra);
        assert_eq!(got, code, "write {extra:?}: stdout {out} stderr {err}");
        assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{n:?} missing from: {err}");
        }
        assert_eq!(self.state(), before, "a refused write changed the table: {err}");
        err
    }
}

const SCHEMA: &str = "id BIGINT NOT NULL, name STRING, v BIGINT";

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap()
}

#[test]
fn csv_columns_go_by_header_name_not_position() {
    let t = table(SCHEMA, &[]);
    let f = t.file("a.csv", "v,name,id\n10,a,1\n20,b,2\n");
    t.written(&[&f]);
    assert_eq!(t.rows(), vec![json!({"id": 1, "name": "a", "v": 10}), json!({"id": 2, "name": "b", "v": 20})]);
}

#[test]
fn csv_without_header_is_refused_unless_columns_are_given() {
    let t = table(SCHEMA, &[]);
    let f = t.file("noheader.csv", "1,a,10\n2,b,20\n");
    t.refused(&[&f], &["noheader.csv", "line 1", "'1' is not a column", "--columns"]);
    t.written(&[&f, "--columns", "id,name,v"]);
    assert_eq!(t.rows(), vec![json!({"id": 1, "name": "a", "v": 10}), json!({"id": 2, "name": "b", "v": 20})]);
}

#[test]
fn jsonl_fraction_into_bigint_is_refused() {
    let t = table(SCHEMA, &[]);
    let f = t.file("frac.jsonl", "{\"id\": 1, \"v\": 10}\n{\"id\": 2, \"v\": 1.9}\n");
    t.refused(&[&f], &["frac.jsonl", "line 2", "column 'v'", "1.9", "whole number"]);
    assert!(t.rows().is_empty());
}

#[test]
fn parquet_string_that_is_not_a_number_into_bigint_is_refused() {
    let t = table(SCHEMA, &[]);
    let f = t.parquet(
        "str.parquet",
        vec![
            ("id", Arc::new(arrow_array::Int64Array::from(vec![1, 2])) as ArrayRef),
            ("v", Arc::new(arrow_array::StringArray::from(vec!["5", "abc"]))),
        ],
    );
    t.refused(&[&f], &["str.parquet", "row 2", "column 'v'", "abc", "not a number"]);
}

#[test]
fn parquet_bigint_overflowing_int_is_refused() {
    let t = table("id BIGINT NOT NULL, i INT", &[]);
    let f = t.parquet(
        "big.parquet",
        vec![
            ("id", Arc::new(arrow_array::Int64Array::from(vec![1, 2])) as ArrayRef),
            ("i", Arc::new(arrow_array::Int64Array::from(vec![7, 1 << 40]))),
        ],
    );
    t.refused(&[&f], &["big.parquet", "row 2", "column 'i'", "1099511627776", "INT"]);
    // In range, a wider parquet type is taken.
    let ok = t.parquet(
        "small.parquet",
        vec![
            ("id", Arc::new(arrow_array::Int64Array::from(vec![1, 2])) as ArrayRef),
            ("i", Arc::new(arrow_array::Int64Array::from(vec![7, -(1 << 31)]))),
        ],
    );
    t.written(&[&ok]);
    assert_eq!(t.rows(), vec![json!({"id": 1, "i": 7}), json!({"id": 2, "i": -(1i64 << 31)})]);
}

#[test]
fn jsonl_misspelled_field_is_refused_with_a_suggestion_or_dropped_on_request() {
    let t = table(SCHEMA, &[]);
    let f = t.file("typo.jsonl", "{\"id\": 1, \"nmae\": \"x\"}\n");
    t.refused(&[&f], &["typo.jsonl", "line 1", "'nmae'", "did you mean 'name'?", "--ignore-unknown-fields"]);
    t.written(&[&f, "--ignore-unknown-fields"]);
    assert_eq!(t.rows(), vec![json!({"id": 1, "name": null, "v": null})]);
}

#[test]
fn jsonl_miscased_column_is_refused_naming_the_column() {
    let t = table(SCHEMA, &[]);
    let f = t.file("case.jsonl", "{\"ID\": 1, \"name\": \"x\"}\n");
    t.refused(&[&f], &["case.jsonl", "line 1", "'ID'", "did you mean 'id'?", "case-sensitive"]);
    // Dropped on request, the NOT NULL column is missing: said so, with the line.
    t.refused(&[&f, "--ignore-unknown-fields"], &["case.jsonl", "line 1", "no field 'id'", "NOT NULL"]);
}

#[test]
fn a_utf8_byte_order_mark_is_accepted() {
    let t = table(SCHEMA, &[]);
    let csv = t.file("bom.csv", "\u{feff}v,id,name\n5,1,a\n");
    let jsonl = t.file("bom.jsonl", "\u{feff}{\"id\": 2, \"name\": \"b\", \"v\": 6}\n");
    t.written(&[&csv, &jsonl]);
    assert_eq!(t.rows(), vec![json!({"id": 1, "name": "a", "v": 5}), json!({"id": 2, "name": "b", "v": 6})]);
}

#[test]
fn a_missing_input_is_not_found() {
    let t = table(SCHEMA, &[]);
    let missing = t.dir.path().join("nope.jsonl");
    t.refused_with(3, &[missing.to_str().unwrap()], &["not found", "nope.jsonl"]);
}

#[test]
fn inputs_are_positional_or_repeated_flags_and_the_table_comes_first() {
    let t = table(SCHEMA, &[]);
    let a = t.file("a.jsonl", "{\"id\": 1}\n");
    let b = t.file("b.jsonl", "{\"id\": 2}\n");
    let c = t.file("c.jsonl", "{\"id\": 3}\n");
    t.written(&[&a, &b]);
    t.written(&["--input", &c, "--input", &a]);
    t.written(&["--input", &b]);
    assert_eq!(t.rows().len(), 3);
    // `--input` takes one file: written before the table, the files are not mistaken for a table.
    let before = t.state();
    let (code, _, err) = strata(&["write", "--input", &a, &b, &t.path]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the table comes first") && err.contains(base_name(&b)), "{err}");
    assert_eq!(t.state(), before);
    let (code, _, err) = strata(&["write", &t.path]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no input files"), "{err}");
}

#[test]
fn nulls_in_not_null_columns_name_the_line() {
    let t = table(SCHEMA, &[]);
    let j = t.file("n.jsonl", "{\"id\": 1}\n{\"id\": null}\n");
    t.refused(&[&j], &["n.jsonl", "line 2", "column 'id'", "null", "NOT NULL"]);
    let c = t.file("n.csv", "id,name\n1,a\n,b\n");
    t.refused(&[&c], &["n.csv", "line 3", "column 'id'", "empty field", "NOT NULL"]);
    let no_id = t.file("noid.csv", "name,v\na,1\n");
    t.refused(&[&no_id], &["noid.csv", "line 1", "no field 'id'", "NOT NULL"]);
}

#[test]
fn csv_quoting_empty_fields_and_structure() {
    let t = table("id BIGINT NOT NULL, name STRING, v BIGINT, d DOUBLE", &[]);
    let ok = t.file("q.csv", "id,name,v,d\n1,\"\",,\"\"\n2,,3,\n3,\"a \"\"b\"\",\nc\",4, 1.5 \n4,\" x \",5,-0\n");
    t.written(&[&ok]);
    assert_eq!(
        t.rows(),
        vec![
            json!({"id": 1, "name": "", "v": null, "d": null}),
            json!({"id": 2, "name": null, "v": 3, "d": null}),
            json!({"id": 3, "name": "a \"b\",\nc", "v": 4, "d": 1.5}),
            json!({"id": 4, "name": " x ", "v": 5, "d": -0.0}),
        ]
    );
    let bad = [
        ("fields.csv", "id,name\n1,a\n2,b,c\n", vec!["line 3", "3 fields", "header has 2"]),
        ("quote.csv", "id,name\n1,a\"b\n", vec!["line 2", "quote inside an unquoted"]),
        ("after.csv", "id,name\n1,\"a\"b\n", vec!["line 2", "after its closing quote"]),
        ("open.csv", "id,name\n1,a\n2,\"b\n3,c\n", vec!["line 3", "not closed"]),
        ("dup.csv", "id,id\n1,1\n", vec!["line 1", "'id' is given twice"]),
        ("empty.csv", "", vec!["header"]),
    ];
    for (name, content, needles) in bad {
        let f = t.file(name, content);
        let mut all = vec![name];
        all.extend(needles);
        t.refused(&[&f], &all);
    }
    let latin1 = t.file("l1.csv", b"id,name\n1,caf\xe9\n");
    t.refused(&[&latin1], &["l1.csv", "line 2", "not UTF-8"]);
}

#[test]
fn jsonl_structure_errors_name_the_line() {
    let t = table(SCHEMA, &[]);
    let cases = [
        ("two.jsonl", "{\"id\": 1}\n{\"id\": 2}{\"id\": 3}\n", vec!["line 2", "not one JSON object"]),
        ("array.jsonl", "\n[{\"id\": 1}]\n", vec!["line 2", "not one JSON object"]),
        ("broken.jsonl", "{\"id\": 1, \"name\": \"a}\n", vec!["line 1", "not one JSON object"]),
        ("dup.jsonl", "{\"id\": 1, \"id\": 2}\n", vec!["line 1", "'id' is given twice"]),
        (
            "nested.jsonl",
            "{\"id\": 1, \"name\": {\"a\": 1}}\n",
            vec!["line 1", "column 'name'", "{\"a\": 1}", "nested"],
        ),
    ];
    for (name, content, needles) in cases {
        let f = t.file(name, content);
        let mut all = vec![name];
        all.extend(needles);
        t.refused(&[&f], &all);
    }
    let invalid = t.file("bytes.jsonl", b"{\"id\": 1}\n{\"id\": 2, \"name\": \"\xff\"}\n");
    t.refused(&[&invalid], &["bytes.jsonl", "line 2", "not UTF-8"]);
    // Escapes, blank lines and CRLF line ends are fine.
    let ok = t.file("ok.jsonl", "{\"id\": 1, \"name\": \"\\u00e9\\\"\\n\"}\r\n\r\n  \n{\"id\": 2}\n");
    t.written(&[&ok]);
    assert_eq!(t.rows(), vec![json!({"id": 1, "name": "é\"\n", "v": null}), json!({"id": 2, "name": null, "v": null})]);
}

/// Every table type against values that do not fit it (jsonl, then the same text as csv) and values that do.
#[test]
fn each_type_takes_exact_values_and_refuses_the_rest() {
    // (column type, jsonl value, a needle of the refusal); the csv form of the value is its text.
    let refused: &[(&str, &str, &str)] = &[
        ("TINYINT", "128", "out of range for TINYINT"),
        ("SMALLINT", "-32769", "out of range for SMALLINT"),
        ("INT", "2147483648", "out of range for INT"),
        ("BIGINT", "9223372036854775808", "out of range for BIGINT"),
        ("BIGINT", "1e-2", "whole number"),
        ("INT", "\"12abc\"", "not a number"),
        ("FLOAT", "1e39", "out of range for FLOAT"),
        ("DOUBLE", "1e-400", "too small"),
        ("DECIMAL(5, 2)", "1.234", "more than 2 digits after the point"),
        ("DECIMAL(5, 2)", "1234", "more than 3 digits before the point"),
        ("BOOLEAN", "\"yes\"", "not a boolean"),
        ("BOOLEAN", "1", "is a number"),
        ("STRING", "12", "is a number"),
        ("VARCHAR(3)", "\"abcd\"", "4 characters, more than VARCHAR(3)"),
        ("CHAR(2)", "\"abc\"", "more than CHAR(2)"),
        ("BYTES", "\"xyz\"", "not hexadecimal"),
        ("VARBINARY(2)", "\"010203\"", "3 bytes, more than VARBINARY(2)"),
        ("DATE", "\"2023-02-29\"", "not a valid date"),
        ("DATE", "19000", "is a number"),
        ("TIME(0)", "\"10:11:12.5\"", "more fractional digits than TIME(0)"),
        ("TIMESTAMP(3)", "\"2024-01-01 10:00:00.0001\"", "more fractional digits than TIMESTAMP(3)"),
        ("TIMESTAMP(6)", "\"2024-01-01T10:00:00Z\"", "has a time zone offset"),
        ("TIMESTAMP(6) WITH LOCAL TIME ZONE", "\"2024-01-01T10:00:00\"", "no time zone offset"),
        ("TIMESTAMP(9)", "\"2300-01-01T00:00:00\"", "out of range"),
    ];
    for (i, (ty, value, needle)) in refused.iter().enumerate() {
        let t = table(&format!("id BIGINT NOT NULL, c {ty}"), &[]);
        let j = t.file(&format!("v{i}.jsonl"), format!("{{\"id\": 1, \"c\": null}}\n{{\"id\": 2, \"c\": {value}}}\n"));
        let shown = value.trim_matches('"');
        t.refused(&[&j], &[&format!("v{i}.jsonl"), "line 2", "column 'c'", shown, needle]);
        if needle.contains("is a number") {
            continue; // csv has no numbers apart from text
        }
        let c = t.file(&format!("v{i}.csv"), format!("id,c\n1,\n2,{shown}\n"));
        t.refused(&[&c], &[&format!("v{i}.csv"), "line 3", "column 'c'", shown, needle]);
    }
    let accepted: &[(&str, &str, Value)] = &[
        ("BIGINT", "1.0e2", json!(100)),
        ("BIGINT", "\" 42 \"", json!(42)),
        ("BOOLEAN", "\"TRUE\"", json!(true)),
        ("DECIMAL(5, 2)", "1.5", json!(1.5)),
        ("DECIMAL(5, 2)", "\"-999.99\"", json!(-999.99)),
        ("FLOAT", "0.1", json!(0.1)),
        ("BYTES", "\"68656C6c6f\"", json!("68656c6c6f")),
        ("DATE", "\"2024-02-29\"", json!("2024-02-29")),
        ("TIME(3)", "\"10:11:12.345\"", json!("10:11:12.345")),
        ("TIMESTAMP(6)", "\"2024-01-01 10:00:00.123456\"", json!("2024-01-01T10:00:00.123456")),
        ("TIMESTAMP(6) WITH LOCAL TIME ZONE", "\"2024-01-01T12:00:00+02:00\"", json!("2024-01-01T10:00:00Z")),
    ];
    for (i, (ty, value, want)) in accepted.iter().enumerate() {
        let t = table(&format!("id BIGINT NOT NULL, c {ty}"), &[]);
        let j = t.file(&format!("a{i}.jsonl"), format!("{{\"id\": 1, \"c\": {value}}}\n"));
        t.written(&[&j]);
        assert_eq!(t.rows()[0]["c"], *want, "{ty} {value}");
    }
}

/// Parquet columns: lossless casts are taken, lossy ones refused naming the row.
#[test]
fn parquet_casts_are_exact() {
    use arrow_array::*;
    let ts = |v: Vec<i64>| Arc::new(TimestampNanosecondArray::from(v)) as ArrayRef;
    let cases: Vec<(&str, ArrayRef, Option<&str>)> = vec![
        ("INT", Arc::new(Float64Array::from(vec![1.0, 1.5])), Some("1.5")),
        ("BIGINT", Arc::new(UInt64Array::from(vec![1, u64::MAX])), Some("18446744073709551615")),
        ("FLOAT", Arc::new(Float64Array::from(vec![0.5, 0.1])), Some("0.1")),
        ("DOUBLE", Arc::new(Int64Array::from(vec![1, (1 << 53) + 1])), Some("9007199254740993")),
        (
            "DECIMAL(10, 2)",
            Arc::new(Decimal128Array::from(vec![1000, 1234]).with_precision_and_scale(10, 3).unwrap()),
            Some("1.234"),
        ),
        (
            "DECIMAL(3, 2)",
            Arc::new(Decimal128Array::from(vec![100, 10000]).with_precision_and_scale(10, 2).unwrap()),
            Some("100.00"),
        ),
        ("TIMESTAMP(3)", ts(vec![1_000_000, 1_000_001]), Some("1970-01-01T00:00:00.001000001")),
        ("TIMESTAMP(6) WITH LOCAL TIME ZONE", ts(vec![0, 1]), None),
        ("STRING", Arc::new(Int64Array::from(vec![1, 2])), None),
        ("DATE", Arc::new(Date64Array::from(vec![0, 86_400_000 + 1])), Some("1970-01-02")),
        ("VARCHAR(2)", Arc::new(LargeStringArray::from(vec!["ab", "abc"])), Some("abc")),
    ];
    for (i, (ty, values, bad_value)) in cases.into_iter().enumerate() {
        let t = table(&format!("id BIGINT NOT NULL, c {ty}"), &[]);
        let f = t.parquet(
            &format!("p{i}.parquet"),
            vec![("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef), ("c", values)],
        );
        let name = format!("p{i}.parquet");
        match bad_value {
            Some(v) => {
                t.refused(&[&f], &[&name, "row 2", "column 'c'", v]);
            }
            None => {
                t.refused(&[&f], &[&name, "column 'c'"]);
            }
        }
    }
    // Lossless ones.
    let t = table("id BIGINT NOT NULL, i INT, d DOUBLE, dec DECIMAL(10, 2), ts TIMESTAMP(6), ltz TIMESTAMP(3) WITH LOCAL TIME ZONE, s VARCHAR(3)", &[]);
    let f = t.parquet(
        "ok.parquet",
        vec![
            (
                "s",
                Arc::new(
                    StringArray::from(vec!["abc"])
                        .into_iter()
                        .collect::<DictionaryArray<arrow_array::types::Int32Type>>(),
                ) as ArrayRef,
            ),
            ("id", Arc::new(Int32Array::from(vec![1]))),
            ("i", Arc::new(Int8Array::from(vec![-5]))),
            ("d", Arc::new(Float32Array::from(vec![0.1f32]))),
            ("dec", Arc::new(Decimal128Array::from(vec![12_300]).with_precision_and_scale(12, 3).unwrap())),
            ("ts", ts(vec![1_000_000_000])),
            ("ltz", Arc::new(TimestampMicrosecondArray::from(vec![2_000_000]).with_timezone("+02:00"))),
        ],
    );
    t.written(&[&f]);
    assert_eq!(
        t.rows(),
        vec![
            json!({"id": 1, "i": -5, "d": 0.1f32 as f64, "dec": 12.3, "ts": "1970-01-01T00:00:01", "ltz": "1970-01-01T00:00:02Z", "s": "abc"})
        ]
    );
}

#[test]
fn row_kinds_come_from_the_rowkind_field() {
    let t = table("id BIGINT NOT NULL, rk STRING, v BIGINT", &["rowkind.field=rk"]);
    let a = t.file("a.jsonl", "{\"id\": 1, \"rk\": \"+I\", \"v\": 1}\n{\"id\": 2, \"rk\": \"+I\", \"v\": 2}\n");
    t.written(&[&a]);
    let b = t.file("b.csv", "rk,id,v\n-D,1,1\n+U,2,20\n");
    t.written(&[&b]);
    assert_eq!(t.rows(), vec![json!({"id": 2, "rk": "+U", "v": 20})]);
}

/// A refusal deep in an input larger than the write buffer: rows before it were already flushed to files,
/// which go again; the table is as it was.
#[test]
fn a_refusal_after_the_buffer_spilled_leaves_no_files() {
    let t = table(SCHEMA, &["write-buffer-size=64kb", "write-buffer-spillable=false"]);
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!("{{\"id\": {i}, \"name\": \"row {i}\", \"v\": {i}}}\n"));
    }
    let first = t.file("first.jsonl", &text);
    text.push_str("{\"id\": 20000, \"name\": \"last\", \"v\": \"x\"}\n");
    let f = t.file("big.jsonl", &text);
    t.refused(&[&first, &f], &["big.jsonl", "line 20001", "column 'v'", "x"]);
    assert!(t.rows().is_empty());
}

#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let t = table(SCHEMA, &[]);
    let rows: String = (0..5000).map(|i| format!("{{\"id\": {i}}}\n")).collect();
    let f = t.file("p.jsonl", rows);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["write", &t.path, &f])
        .env("STRATA_PROGRESS_INTERVAL_MS", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.lines().any(|l| l.starts_with("strata: writing: ") && l.contains(" rows, ")), "{err}");
    // Without the setting, a short write prints nothing on stderr.
    let (code, _, err) = t.write(&[&f]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
}
