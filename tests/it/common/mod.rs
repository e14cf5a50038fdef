//! Shared test helpers: the pypaimon oracle and the `strata` binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The repository root.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The python of the cached oracle virtualenv, holding pypaimon 2.1.0 and paimon-rust 0.4.0 (created, or given
/// a missing pinned package, on first use by scripts/pypaimon-venv.sh). Panics when it cannot be made: a test
/// that needs an oracle fails rather than passing unchecked.
pub(crate) fn pypaimon_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        PathBuf::from(prepared_by(
            &["scripts/pypaimon-venv.sh"],
            "could not create the oracle virtualenv with pypaimon 2.1.0 and pypaimon-rust 0.4.0 (needs PyPI; \
             pip's output is above)",
        ))
    })
    .clone()
}

/// What the preparing script `script[0]` (with arguments `script[1..]`) prints (its stdout, trimmed); its
/// stderr (a first run's progress, its errors) goes straight to the terminal. Panics with `failed` when the
/// script fails: a test that needs what it prepares fails rather than passing unchecked. Callers keep the
/// answer in a `OnceLock`.
pub(crate) fn prepared_by(script: &[&str], failed: &str) -> String {
    let out = Command::new("bash")
        .arg(root().join(script[0]))
        .args(&script[1..])
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("run {script:?}: {e}"));
    assert!(out.status.success(), "{failed}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Runs a subcommand of tests/py/paimon_oracle.py and parses its JSON output.
pub(crate) fn oracle(args: &[&str]) -> Value {
    oracle_with(args, &[])
}

/// [`oracle`] with extra environment (`PAIMON_CATALOG_OPTIONS` for tables on S3).
pub(crate) fn oracle_with(args: &[&str], env: &[(&str, String)]) -> Value {
    let out = Command::new(pypaimon_python())
        .arg(root().join("tests/py/paimon_oracle.py"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run pypaimon oracle");
    assert!(
        out.status.success(),
        "pypaimon oracle {:?} failed: {}",
        args.first(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

/// Runs a subcommand of tests/py/paimon_rust_oracle.py (paimon-rust 0.4.0) with its JSON spec; parses its JSON
/// output.
pub(crate) fn paimon_rust(cmd: &str, spec: &Value) -> Value {
    paimon_rust_with(cmd, spec, &[])
}

/// [`paimon_rust`] with extra environment.
pub(crate) fn paimon_rust_with(cmd: &str, spec: &Value, env: &[(&str, String)]) -> Value {
    let out = Command::new(pypaimon_python())
        .arg(root().join("tests/py/paimon_rust_oracle.py"))
        .args([cmd, &spec.to_string()])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run paimon-rust oracle");
    assert!(out.status.success(), "paimon-rust oracle {cmd} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("paimon-rust oracle prints JSON")
}

/// Runs the `strata` binary with extra environment; returns (exit code, stdout, stderr).
pub(crate) fn strata_with(args: &[&str], env: &[(&str, String)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run strata");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the `strata` binary; returns (exit code, stdout, stderr).
pub(crate) fn strata(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata")).args(args).output().expect("run strata");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `strata create DIR --schema SCHEMA --primary-key KEYS`, an `--option` per entry of `options`, then
/// `extra`; returns (exit code, stdout, stderr).
pub(crate) fn strata_create(
    dir: &str,
    schema: &str,
    primary_key: &str,
    options: &[&str],
    extra: &[&str],
) -> (i32, String, String) {
    let mut args = vec!["create", dir, "--schema", schema, "--primary-key", primary_key];
    for o in options {
        args.extend(["--option", o]);
    }
    args.extend(extra);
    strata(&args)
}

/// Batches as JSON objects, one per row (nulls as null).
pub(crate) fn json_rows(batches: &[arrow_array::RecordBatch]) -> Vec<Value> {
    let mut buf = Vec::new();
    let mut w = arrow_json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    String::from_utf8(buf).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `strata inspect --json` of a table directory.
pub(crate) fn strata_inspect(dir: &Path) -> Value {
    let (code, out, err) = strata(&["inspect", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "strata inspect failed: {err}");
    serde_json::from_str(&out).unwrap()
}

/// The parquet data files (`data-*.parquet`) anywhere under `dir`.
pub(crate) fn parquet_data_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                dirs.push(p);
            } else if name.starts_with("data-") && name.ends_with(".parquet") {
                files.push(p);
            }
        }
    }
    files
}

pub(crate) mod change_model;
pub(crate) mod fixtures;
pub(crate) mod java;
pub(crate) mod place;
pub(crate) mod s3;
pub(crate) mod spark;
pub(crate) mod tag_fixtures;
