#!/usr/bin/env bash
# Python against the Rust API, and against pypaimon: the same 1M rows (by default; ROWS=...) written in one
# commit into a fresh 4-bucket deletion-vector table and scanned, through Strata's Python package (a release
# build, `maturin develop --release` into the test virtualenv), through the Rust API (benches/python_peer.rs)
# and through pypaimon 2.1.0 (its own write of the rows; its read of Strata's table). Both Strata sides hand
# the writer the same single 1M-row batch. Each side runs RUNS times (default 5), each run a fresh process
# that writes three fresh tables and scans five times and reports its best write and best scan (both
# Strata sides alike); the medians over runs are printed with the ratios. WORK=/dev/shm puts the tables on
# tmpfs, which takes the disk's write-back out of what is compared (the overhead is CPU on both sides).
# Figures: docs/BENCHMARKS.md ("Python package").
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-1000000}"
runs="${RUNS:-5}"
buckets="${BUCKETS:-4}"
dv="${DV:-true}"
py="$(bash scripts/pypaimon-venv.sh)"
venv="$(cd "$(dirname "$py")/.." && pwd)"
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
maturin develop --release --manifest-path python/Cargo.toml >&2
# The Rust side's executable, built once (the runs do not rebuild it).
peer=$(cargo bench --bench python_peer --no-run --message-format=json 2>/dev/null | "$py" -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("executable") and m.get("target", {}).get("name") == "python_peer":
        print(m["executable"])')
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$py" scripts/bench_python.py gen "$rows" "$work/rows.parquet" >/dev/null
: > "$work/results"
for i in $(seq 1 "$runs"); do
  rm -rf "$work/wh"
  rust=$("$peer" "$work/rows.parquet" "$work/wh-rust-$i" "$buckets" "$dv" | tail -1)
  rm -rf "$work/wh-rust-$i"
  strata=$("$py" scripts/bench_python.py strata "$work/rows.parquet" "$work/wh" "$buckets" "$dv")
  pypaimon=$("$py" scripts/bench_python.py pypaimon "$work/rows.parquet" "$work/wh" "$buckets" "$dv")
  echo "{\"run\": $i, \"rust\": $rust, \"python\": $strata, \"pypaimon\": $pypaimon}" | tee -a "$work/results"
done
"$py" - "$work/results" "$rows" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
med = lambda side, k: statistics.median(r[side][k] for r in runs)
rows = int(sys.argv[2])
print(f"\n{rows} rows, medians of {len(runs)} runs (seconds; rows/s in parentheses)")
print(f"{'':22}{'write':>18}{'scan (to_arrow)':>22}")
for side, name in [("rust", "Rust API"), ("python", "Strata Python"), ("pypaimon", "pypaimon 2.1.0")]:
    w, s = med(side, "write_s"), med(side, "scan_s")
    print(f"{name:22}{w:>8.3f} ({rows / w / 1e6:4.2f}M/s){s:>11.3f} ({rows / s / 1e6:5.2f}M/s)")
print(f"{'Strata Python stream':22}{'':>18}{med('python', 'stream_s'):>11.3f}")
paired = lambda k: statistics.median(r["python"][k] / r["rust"][k] for r in runs) - 1
print(f"Python over Rust (median of the runs' ratios): write {paired('write_s'):+.1%}, scan {paired('scan_s'):+.1%}")
print(f"Strata Python vs pypaimon: write {med('pypaimon', 'write_s') / med('python', 'write_s'):.1f}x faster, scan {med('pypaimon', 'scan_s') / med('python', 'scan_s'):.1f}x faster")
PY
