#!/usr/bin/env bash
# Runs `strata bench` in release mode; arguments go to it (e.g. --rows 500000 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -- bench "$@"
