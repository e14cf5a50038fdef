#!/usr/bin/env bash
# Full scans against paimon-rust 0.4.0, as issue 21 measures them: one table of ROWS rows (default 1,000,000)
# of `id BIGINT` and 20 ten-character strings in 4 buckets, a load and 4 rounds updating 10% of the keys,
# written by the Rust API (benches/lookup.rs `make`; MODE mor, the default, leaves its merge-on-read
# compactions as they land; dv makes a deletion-vector table). Both sides read every row into memory in one
# process: Strata `scan TABLE ROWS` (7 scans, `read_plan`), paimon-rust `new_read().read(splits)`, a list of batches (5 reads);
# each prints its best and median, timed in process, and /usr/bin/time its peak memory. The sides alternate,
# RUNS times each (default 3).
# Figures: docs/BENCHMARKS.md ("Full scans against paimon-rust").
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-1000000}"
runs="${RUNS:-3}"
mode="${MODE:-mor}"
py="$(bash scripts/pypaimon-venv.sh)"
bench=$(bash scripts/bench-bin.sh lookup)
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$bench" make "$work/wh" "$rows" "$mode"
sync
cat > "$work/peer.py" <<'PY'
import json, statistics, sys, time
from pypaimon_rust.datafusion import PaimonCatalog
warehouse, rows = sys.argv[1], int(sys.argv[2])
times = []
for _ in range(5):
    started = time.perf_counter()
    table = PaimonCatalog({"warehouse": warehouse}).get_table("db.t")
    rb = table.new_read_builder()
    got = rb.new_read().read(rb.new_scan().plan().splits())
    times.append(time.perf_counter() - started)
    n = sum(b.num_rows for b in got)
    assert n == rows, (n, rows)
    del got
print(json.dumps({"scan_best_s": round(min(times), 3), "scan_p50_s": round(statistics.median(times), 3)}))
PY
for i in $(seq "$runs"); do
  s=$(/usr/bin/time -f '%M' -o "$work/time.s" "$bench" scan "$work/wh/db.db/t" "$rows")
  p=$(/usr/bin/time -f '%M' -o "$work/time.p" "$py" "$work/peer.py" "$work/wh" "$rows")
  ratio=$("$py" -c 'import json,sys; a,b=json.loads(sys.argv[1]),json.loads(sys.argv[2]); print(round(b["scan_p50_s"]/a["scan_p50_s"],2))' "$s" "$p")
  echo "run $i: strata $s peak $(($(tail -1 "$work/time.s") / 1024)) MiB; paimon-rust $p peak $(($(tail -1 "$work/time.p") / 1024)) MiB; strata ${ratio}x faster (medians)"
done
