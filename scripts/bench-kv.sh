#!/usr/bin/env bash
# Strata as an embedded key-value store against RocksDB (issue 53): scripts/bench_kv.py runs both from
# Python on the same rows (bulk load, multi-gets of 100 and 10,000 keys, one-key gets, a full scan, commits
# of 1, 100 and 10,000 rows), Strata through its Python package (a release build, `maturin develop --release`
# into the test virtualenv) and RocksDB through `rocksdict` 0.3.29 (installed into that virtualenv here).
# Usage: scripts/bench-kv.sh [ROWS]   (default 1000000). Figures: docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-1000000}"
py="$(bash scripts/python-release.sh)"
"$py" -m pip install --disable-pip-version-check -q rocksdict==0.3.29 >&2
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$py" scripts/bench_kv.py "$work" "$rows"
