#!/usr/bin/env bash
# Soak on S3 for SECONDS (default 600), against the loopback S3 server (scripts/s3_server.py), in two halves:
# 1. `strata soak --warehouse s3://soak/...`: random workloads replayed against a model on the store, with
#    storage faults in 30% of the commits;
# 2. scripts/soak_processes.py --warehouse: racing `strata write` processes and a compactor on one table on
#    the store, whose commits only its conditional create decides, checked against the landed writes.
set -euo pipefail
seconds="${1:-600}"
half=$(( seconds / 2 ))
cd "$(dirname "$0")/.."
cargo build --release -q
py="$(bash scripts/pypaimon-venv.sh)"
work="$(mktemp -d)"
"$py" scripts/s3_server.py "$work/port" & server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do [ -s "$work/port" ] && break; sleep 0.1; done
export AWS_ENDPOINT="http://127.0.0.1:$(cat "$work/port")" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=soak AWS_SECRET_ACCESS_KEY=soak
curl -sf -X PUT "$AWS_ENDPOINT/soak" >/dev/null
./target/release/strata soak --seconds "$half" --warehouse s3://soak/workloads "${@:2}"
python3 scripts/soak_processes.py ./target/release/strata "$half" --warehouse s3://soak/processes
