//! Shared test helpers: the pypaimon oracle and the `strata` binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The python of the cached pypaimon 2.1.0 virtualenv (created on first use by scripts/pypaimon-venv.sh).
pub fn pypaimon_python() -> PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let out = Command::new("bash")
            .arg(root().join("scripts/pypaimon-venv.sh"))
            .output()
            .expect("run scripts/pypaimon-venv.sh");
        assert!(
            out.status.success(),
            "could not create the pypaimon 2.1.0 virtualenv (needs PyPI): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
    .clone()
}

/// Runs a subcommand of tests/py/paimon_oracle.py and parses its JSON output.
pub fn oracle(args: &[&str]) -> Value {
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

/// Runs the `strata` binary; returns (exit code, stdout, stderr).
pub fn strata(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata")).args(args).output().expect("run strata");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `strata inspect --json` of a table directory.
pub fn strata_inspect(dir: &Path) -> Value {
    let (code, out, err) = strata(&["inspect", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "strata inspect failed: {err}");
    serde_json::from_str(&out).unwrap()
}

pub mod fixtures;
