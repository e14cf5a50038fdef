#!/usr/bin/env bash
# Replays random workloads (with storage faults in 30% of the commits) for SECONDS (default 600) and
# reports workloads/s, faults injected and divergences; shrunk failing workloads land in soak-failures/.
set -euo pipefail
seconds="${1:-600}"
cd "$(dirname "$0")/.."
cargo run --release -q -- soak --seconds "$seconds" "${@:2}"
