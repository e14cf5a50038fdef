#!/usr/bin/env bash
# Installs a release build of Strata's Python package (`maturin develop --release`) into the test virtualenv
# (scripts/pypaimon-venv.sh) and prints the path of that virtualenv's python: what the Python benchmarks
# (bench-kv.sh, bench-append.sh, bench-python.sh) measure with. Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
py="$(bash scripts/pypaimon-venv.sh)"
venv="$(cd "$(dirname "$py")/.." && pwd)"
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release --manifest-path python/Cargo.toml >&2
echo "$py"
