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
    let out = Command::new("bash")
        .arg(root.join("scripts/python-test.sh"))
        .current_dir(&root)
        // The nested build is the workspace's own: none of this test binary's cargo variables.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run scripts/python-test.sh");
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
