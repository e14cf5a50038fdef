#!/usr/bin/env bash
# Python against the Rust API, and against pypaimon: the same 1M rows (by default; ROWS=...) written in one
# commit into a fresh 4-bucket deletion-vector table and scanned, through Strata's Python package (a release
# build, `maturin develop --release` into the test virtualenv), through the Rust API (benches/python_peer.rs)
# and through pypaimon 2.1.0 (its own write of the rows; its read of Strata's table). Both Strata sides hand
# the writer the same single 1M-row batch. Each side runs RUNS times (default 5), each run a fresh process
# that writes three fresh tables and scans ten times and reports its best write and best scan (both
# Strata sides alike); the two sides alternate which runs first. The medians over runs are printed with the
# median of the runs' paired ratios and a distribution-free interval of at least 95% for it (`bench_python.py summary`).
# WORK=/dev/shm puts the tables on tmpfs, which takes the disk's write-back out of what is compared (the
# overhead is CPU on both sides). To show a 10% overhead on a 2-core VM, use RUNS=12 or more.
# Figures: docs/BENCHMARKS.md ("Python package").
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-1000000}"
runs="${RUNS:-5}"
buckets="${BUCKETS:-4}"
dv="${DV:-true}"
# pypaimon takes 30-60 s a write: it runs in the first PYPAIMON_RUNS runs only (its figure is not paired).
pypaimon_runs="${PYPAIMON_RUNS:-$runs}"
py="$(bash scripts/python-release.sh)"
# The Rust side's executable, built once (the runs do not rebuild it).
peer=$(bash scripts/bench-bin.sh python_peer)
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$py" scripts/bench_python.py gen "$rows" "$work/rows.parquet" >/dev/null
: > "$work/results"
rust_run() {
  "$peer" "$work/rows.parquet" "$work/wh-rust" "$buckets" "$dv" | tail -1
  rm -rf "$work/wh-rust"
}
python_run() { "$py" scripts/bench_python.py strata "$work/rows.parquet" "$work/wh" "$buckets" "$dv"; }
for i in $(seq 1 "$runs"); do
  rm -rf "$work/wh"
  # The two sides alternate which goes first, so neither always runs on the other's page cache and heat.
  if [ $((i % 2)) -eq 1 ]; then rust=$(rust_run); strata=$(python_run); else strata=$(python_run); rust=$(rust_run); fi
  pypaimon=null
  if [ "$i" -le "$pypaimon_runs" ]; then
    pypaimon=$("$py" scripts/bench_python.py pypaimon "$work/rows.parquet" "$work/wh" "$buckets" "$dv")
  fi
  echo "{\"run\": $i, \"rust\": $rust, \"python\": $strata, \"pypaimon\": $pypaimon}" | tee -a "$work/results"
done
"$py" scripts/bench_python.py summary "$work/results" "$rows"
