//! The README's "Examples" block runs as written: every line in order, in a fresh directory, with `strata` on
//! the PATH (the three long ones at its end, `soak`, `bench` and `demo`, are only checked to be there). Each
//! command must exit 0; the block itself must name every subcommand `strata --help` lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Command;

/// The lines of the first ```sh block after "## Examples".
fn example_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let section = readme.split("## Examples").nth(1).expect("README has an Examples section");
    let block = section.split("```sh\n").nth(1).expect("an sh block").split("```").next().unwrap();
    block.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

#[test]
fn the_readme_examples_run_as_written_and_name_every_command() {
    let lines = example_lines();
    let (code, help, _) = common::strata(&["--help"]);
    assert_eq!(code, 0);
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() > 10, "{help}");
    for c in &commands {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("strata {c} ")) || l == &format!("strata {c}")),
            "the README's examples lack `strata {c}`"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_strata")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let workloads = common::root().join("tests/workloads/");
    for line in &lines {
        if ["strata soak", "strata bench", "strata demo"].iter().any(|long| line.starts_with(long)) {
            continue;
        }
        let line = line.replace("tests/workloads/", &workloads.to_string_lossy());
        let out = Command::new("sh").arg("-c").arg(&line).current_dir(dir.path()).env("PATH", &path).output().unwrap();
        assert!(
            out.status.success(),
            "`{line}` exited {:?}:\n{}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
