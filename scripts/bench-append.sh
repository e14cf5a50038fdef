#!/usr/bin/env bash
# Reading an append table pypaimon wrote, and appending its rows with Strata and with pypaimon (issue 54):
# Strata's Python package (a release build, `maturin develop --release` into the test virtualenv) against
# paimon-rust 0.4.0 and pypaimon 2.1.0 on the same files
# (scripts/bench_append.py). Usage: scripts/bench-append.sh [ROWS] (default 1000000). Figures:
# docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-1000000}"
py="$(bash scripts/python-release.sh)"
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$py" scripts/bench_append.py "$work" "$rows"
