#!/usr/bin/env bash
# Soak for SECONDS (default 600), in two halves, then a flip sweep:
# 1. random workloads replayed against a model (storage faults in 30% of the commits); shrunk failing
#    workloads land in soak-failures/;
# 2. processes (scripts/soak_processes.py): concurrent `strata write` processes and a compactor checked
#    against the landed writes in snapshot order, then random byte flips in every file kind, classified
#    error / harmless / silent / panic;
# 3. the corruption sweep (tests/it/corruption_sweep.rs) over every file kind Strata writes, flipping every
#    byte of files up to SWEEP_WHOLE_UP_TO bytes (default 16384) and SWEEP_OFFSETS offsets (default 400) of
#    larger ones (about 10 minutes in a release build): any silent flip or panic fails it.
set -euo pipefail
seconds="${1:-600}"
half=$(( seconds / 2 ))
cd "$(dirname "$0")/.."
cargo build --release -q
./target/release/strata soak --seconds "$half" "${@:2}"
python3 scripts/soak_processes.py ./target/release/strata "$half"
STRATA_SWEEP_WHOLE_UP_TO="${SWEEP_WHOLE_UP_TO:-16384}" STRATA_SWEEP_OFFSETS="${SWEEP_OFFSETS:-400}" \
  cargo test --release -q --test it corruption_sweep::one_byte -- --nocapture
