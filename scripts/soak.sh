#!/usr/bin/env bash
# Soak for SECONDS (default 600), in two halves:
# 1. random workloads replayed against a model (storage faults in 30% of the commits); shrunk failing
#    workloads land in soak-failures/;
# 2. processes (scripts/soak_processes.py): concurrent `strata write` processes and a compactor checked
#    against the landed writes in snapshot order, then random byte flips in every file kind, classified
#    error / harmless / silent / panic.
set -euo pipefail
seconds="${1:-600}"
half=$(( seconds / 2 ))
cd "$(dirname "$0")/.."
cargo build --release -q
./target/release/strata soak --seconds "$half" "${@:2}"
python3 scripts/soak_processes.py ./target/release/strata "$half"
