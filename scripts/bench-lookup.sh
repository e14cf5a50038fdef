#!/usr/bin/env bash
# Key lookups against paimon-rust 0.4.0, as issue 21 measures them, on one table: ROWS rows (default
# 1,000,000) of `id BIGINT` and 20 ten-character strings in 4 buckets with deletion vectors, a load and 4
# rounds updating 10% of the keys, written by the Rust API (benches/lookup.rs `make`).
#
# In process: Strata's one-off get of 1 key (p50/p99 of 200), get_many of 100 and 10,000 random keys, and a
# TableQuery (warm-up, then p50/p99 of 20,000 lookups), with the bytes each read, and a full scan's time
# and bytes beside a one-key filtered scan's bytes (benches/lookup.rs `measure`); paimon-rust's read of 1,
# 100 and 10,000 keys with an `in` filter on the key, timed inside its process (best of 3). Whole
# process: `strata get` of 1, 100 and 10,000 keys against a Python process running that paimon-rust read
# (median of RUNS, default 3).
# Figures: docs/BENCHMARKS.md ("Key lookups against paimon-rust").
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-1000000}"
runs="${RUNS:-3}"
py="$(bash scripts/pypaimon-venv.sh)"
cargo build --release -q --bin strata >&2
bench=$(bash scripts/bench-bin.sh lookup)
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$bench" make "$work/wh" "$rows"
table="$work/wh/db.db/t"
"$py" - "$work" "$rows" <<'PY'
import random, sys
work, rows = sys.argv[1], int(sys.argv[2])
for n in (1, 100, 10000):
    open(f"{work}/keys-{n}", "w").write(" ".join(map(str, random.Random(n).sample(range(rows), n))))
PY
cat > "$work/peer.py" <<'PY'
import json, sys, time
from pypaimon_rust.datafusion import PaimonCatalog
keys = [int(k) for k in open(sys.argv[2]).read().split()]
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 1
best = float("inf")
for _ in range(repeat):
    started = time.perf_counter()
    table = PaimonCatalog({"warehouse": sys.argv[1]}).get_table("db.t")
    rb = table.new_read_builder().with_filter({"method": "in", "field": "id", "literals": keys})
    rows = sum(b.num_rows for b in rb.new_read().read(rb.new_scan().plan().splits()))
    best = min(best, time.perf_counter() - started)
    assert rows == len(keys), (rows, len(keys))
print(json.dumps({"keys": len(keys), "best_s": round(best, 4)}))
PY
echo "Strata in process: $("$bench" measure "$table" "$rows")"
for n in 1 100 10000; do
  echo "paimon-rust in process, $n keys: $("$py" "$work/peer.py" "$work/wh" "$work/keys-$n" 3)"
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in 1 100 10000; do
  s=$(for _ in $(seq "$runs"); do /usr/bin/time -f %e target/release/strata get "$table" $(cat "$work/keys-$n") --json 2>&1 >/dev/null | tail -1; done | median)
  p=$(for _ in $(seq "$runs"); do /usr/bin/time -f %e "$py" "$work/peer.py" "$work/wh" "$work/keys-$n" 2>&1 >/dev/null | tail -1; done | median)
  found=$(target/release/strata get "$table" $(cat "$work/keys-$n") --json | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(len(d["rows"]), len(d["notFound"]))')
  echo "whole process, get of $n keys: strata ${s}s, paimon-rust ${p}s (strata found/not found: $found)"
done
