#!/usr/bin/env bash
# Builds Strata's Python package into the test virtualenv (scripts/pypaimon-venv.sh) with `maturin develop`
# and runs its pytest suite (python/tests): round trips of every type, the model-based row tests, pypaimon
# and paimon-rust cross-checks, spread writes and compactions with one committer, and strata.ray on a local
# Ray cluster bound to 127.0.0.1. The build is the dev profile, in the workspace's target directory, so it
# reuses what `cargo test --workspace` compiled. Arguments go to pytest (`-k ray`, `-x`, ...).
# `cargo test --workspace` runs this (tests/it/python_package.rs); run it alone to iterate on the package.
set -euo pipefail
cd "$(dirname "$0")/.."
py="$(bash scripts/pypaimon-venv.sh)"
venv="$(cd "$(dirname "$py")/.." && pwd)"
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
# maturin's own output (cargo's progress, the wheel it installed) goes to stderr; only pytest's to stdout.
maturin develop --manifest-path python/Cargo.toml >&2
cd python
exec "$py" -m pytest -q -p no:cacheprovider -p no:warnings tests "$@"
