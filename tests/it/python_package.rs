//! The Python package (python/) as part of the workspace's test run: `scripts/python-test.sh` builds it into
//! the test virtualenv with maturin and runs its pytest suite (types, model-based rows, the pypaimon and
//! paimon-rust cross-checks, spread writes and compactions with one committer, strata.ray on a local Ray
//! cluster). One Rust test, so that `cargo test --workspace` is still the one command that runs everything;
//! pytest's own summary line is printed, and the whole output when it fails.

use std::path::PathBuf;
use std::process::Command;

#[test]
#[allow(clippy::expect_used)]
fn the_python_package_builds_and_its_pytest_suite_passes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("scripts/python-test.sh"))
        .current_dir(&root)
        // The nested build is the workspace's own: none of this test binary's cargo variables. Those cargo
        // sets for a test run (CARGO_MANIFEST_DIR, CARGO_PKG_*, OUT_DIR, ...) are also what build scripts
        // such as ring's rerun on: left in, the nested cargo rebuilt ring and everything above it in the
        // shared target directory, under the hashes the outer build had used.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("OUT_DIR")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("CARGO_MANIFEST_PATH")
        .env_remove("CARGO_MANIFEST_LINKS")
        .env_remove("CARGO_CRATE_NAME")
        .env_remove("CARGO_PRIMARY_PACKAGE")
        .env_remove("CARGO_TARGET_TMPDIR")
        .env_remove("CARGO_RUSTC_CURRENT_DIR");
    for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("CARGO_PKG_") || k.starts_with("CARGO_BIN_")) {
        cmd.env_remove(key);
    }
    let out = cmd.output().expect("run scripts/python-test.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout.lines().rev().find(|l| l.contains("passed") || l.contains("failed")).unwrap_or("");
    eprintln!("pytest: {summary}");
    let tail: String = {
        let chars: Vec<char> = stderr.chars().collect();
        chars[chars.len().saturating_sub(8000)..].iter().collect()
    };
    assert!(
        out.status.success(),
        "python/tests failed ({}):\n--- stdout ---\n{stdout}\n--- stderr (its end) ---\n{tail}",
        out.status
    );
    assert!(summary.contains(" passed") && !summary.contains("failed"), "pytest ran no test: {stdout}");
}
