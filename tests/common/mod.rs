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
        // The script's stderr (pip's progress on the first run, its errors) goes straight to the terminal.
        let out = Command::new("bash")
            .arg(root().join("scripts/pypaimon-venv.sh"))
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run scripts/pypaimon-venv.sh");
        assert!(
            out.status.success(),
            "could not create the oracle virtualenv with pypaimon 2.1.0 and pypaimon-rust 0.4.0 (needs PyPI; \
             pip's output is above)"
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
    .clone()
}

/// Runs a subcommand of tests/py/paimon_oracle.py and parses its JSON output.
pub(crate) fn oracle(args: &[&str]) -> Value {
    let out = Command::new(pypaimon_python())
        .arg(root().join("tests/py/paimon_oracle.py"))
        .args(args)
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
    let out = Command::new(pypaimon_python())
        .arg(root().join("tests/py/paimon_rust_oracle.py"))
        .args([cmd, &spec.to_string()])
        .output()
        .expect("run paimon-rust oracle");
    assert!(out.status.success(), "paimon-rust oracle {cmd} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("paimon-rust oracle prints JSON")
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

/// `strata inspect --json` of a table directory.
pub(crate) fn strata_inspect(dir: &Path) -> Value {
    let (code, out, err) = strata(&["inspect", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "strata inspect failed: {err}");
    serde_json::from_str(&out).unwrap()
}

pub(crate) mod change_model;
pub(crate) mod fixtures;
pub(crate) mod tag_fixtures;
