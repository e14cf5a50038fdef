#!/usr/bin/env bash
# The cost of Strata's data-file checksums: one data file of ROWS rows (default 1,000,000) written and read
# whole, parquet and ORC, by this tree's strata-format and by BEFORE's (a commit, default HEAD~1), alternating
# ROUNDS times (default 3), each a process of RUNS runs (default 7; median and best of each).
# Both sides run crates/strata-format/examples/file_rw.rs (copied into BEFORE's tree if it lacks it), in
# WORK (default /dev/shm: the checksums are CPU, and a disk's write-back would be noise). Figures:
# docs/BENCHMARKS.md ("Checksums of ORC and Avro files").
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-1000000}"; runs="${RUNS:-7}"; rounds="${ROUNDS:-3}"; before="${BEFORE:-HEAD~1}"
work="$(mktemp -d -p "${WORK:-/dev/shm}")"
trap 'git worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/before" "$before"
mkdir -p "$work/before/crates/strata-format/examples"
cp -n crates/strata-format/examples/file_rw.rs "$work/before/crates/strata-format/examples/" || true
(cd "$work/before" && CARGO_TARGET_DIR="${BEFORE_TARGET:-target-before}" cargo build -q --release -p strata-format --example file_rw)
cargo build -q --release -p strata-format --example file_rw
old="$work/before/${BEFORE_TARGET:-target-before}/release/examples/file_rw"
case "${BEFORE_TARGET:-}" in /*) old="$BEFORE_TARGET/release/examples/file_rw";; esac
new=target/release/examples/file_rw
mkdir -p "$work/files"
for r in $(seq "$rounds"); do
  for format in parquet orc; do
    echo "before $("$old" "$format" "$rows" "$runs" "$work/files")"
    echo "after  $("$new" "$format" "$rows" "$runs" "$work/files")"
  done
done
