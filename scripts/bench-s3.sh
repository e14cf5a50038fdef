#!/usr/bin/env bash
# strata bench on S3 beside the same bench on local disk: starts the loopback S3 server
# (scripts/s3_server.py) with LATENCY_MS of added latency per request (default 20), runs
# `strata bench --warehouse s3://bench/wh` against it and `strata bench` on local disk, and prints both
# (JSON into OUT_DIR, default ./bench-s3-out). Rows, rounds and buckets: ROWS (500000), ROUNDS (4), BUCKETS (4).
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-500000}"; rounds="${ROUNDS:-4}"; buckets="${BUCKETS:-4}"; latency="${LATENCY_MS:-20}"
out="${OUT_DIR:-bench-s3-out}"
mkdir -p "$out"
bin="${STRATA_BIN:-target/release/strata}"
[ -x "$bin" ] || cargo build --release --bin strata
py="$(bash scripts/pypaimon-venv.sh)"
work="$(mktemp -d)"
"$py" scripts/s3_server.py "$work/port" & server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do [ -s "$work/port" ] && break; sleep 0.1; done
endpoint="http://127.0.0.1:$(cat "$work/port")"
curl -sf -X PUT "$endpoint/bench" >/dev/null
curl -sf -X POST -d "$latency" "$endpoint/_strata/latency" >/dev/null
echo "S3 server on $endpoint with $latency ms per request"
store=(--store-option "s3.endpoint=$endpoint" --store-option s3.access-key=bench --store-option s3.secret-key=bench
  --store-option s3.region=us-east-1 --store-option s3.path-style-access=true)
"$bin" bench --rows "$rows" --rounds "$rounds" --buckets "$buckets" --dir "$out" --warehouse s3://bench/wh "${store[@]}" \
  --json > "$out/s3.json"
"$bin" bench --rows "$rows" --rounds "$rounds" --buckets "$buckets" --dir "$out" --json > "$out/local.json"
"$py" - "$out/local.json" "$out/s3.json" <<'PY'
import json, sys
local, s3 = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{'':34}{'local':>14}{'s3':>14}{'s3/local':>10}")
for t in ("dv", "mor"):
    for k, better in (("writeRowsPerSec", "up"), ("scanRowsPerSec", "up"), ("getP50Ms", "down"),
                      ("queryWarmSeconds", "down"), ("queryP50Us", "down"), ("queryP99Us", "down")):
        a, b = local[t][k], s3[t][k]
        print(f"{t + ' ' + k:34}{a:>14.4g}{b:>14.4g}{b / a:>10.2f}")
    r = s3[t].get("requests", {})
    print(f"{t} requests: {json.dumps(r)}")
PY
