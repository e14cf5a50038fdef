#!/usr/bin/env bash
# Ingest against paimon-rust 0.4.0, as issue 21 measures it: ROWS rows (default 4,000,000) of `id BIGINT` and
# 20 ten-character strings into a 4-bucket merge-on-read table, a load and 4 rounds updating 10% of the keys,
# one commit per round. Both sides read the same Arrow IPC streams (benches/lookup.rs `input`, batches of
# 100,000 rows) batch by batch and hand each batch to their writer: Strata through `TableWrite` (its
# compactions included: every commit waits for them), paimon-rust through `write_arrow` (level 0 only, it
# never compacts). The sides alternate, RUNS times each (default 3); each run is a fresh process and table,
# timed in process (from the first batch read to the last commit) and whole (wall time and peak memory from
# /usr/bin/time). MODE (default mor) may be dv for Strata's deletion-vector table (paimon-rust writes the same).
# Figures: docs/BENCHMARKS.md ("Ingest against paimon-rust").
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-4000000}"
runs="${RUNS:-3}"
mode="${MODE:-mor}"
py="$(bash scripts/pypaimon-venv.sh)"
bench=$(bash scripts/bench-bin.sh lookup)
work="$(mktemp -d -p "${WORK:-${TMPDIR:-/tmp}}")"
trap 'rm -rf "$work"' EXIT
"$bench" input "$work/in" "$rows"
# The input's dirty pages go to disk now, not in the background of the first timed run.
sync
cat > "$work/peer.py" <<'PY'
import json, sys, time
import pyarrow as pa
from pypaimon_rust.datafusion import PaimonCatalog, SQLContext
warehouse, inputs, dv = sys.argv[1], sys.argv[2], sys.argv[3] == "dv"
ctx = SQLContext()
ctx.register_catalog("p", {"warehouse": warehouse})
ctx.sql("CREATE SCHEMA IF NOT EXISTS p.db")
cols = ", ".join(["id BIGINT NOT NULL"] + [f"s{i} STRING" for i in range(20)])
ctx.sql(f"CREATE TABLE p.db.t ({cols}, PRIMARY KEY (id)) WITH ('bucket' = '4', "
        f"'deletion-vectors.enabled' = '{str(dv).lower()}')")
table = PaimonCatalog({"warehouse": warehouse}).get_table("db.t")
started = time.perf_counter()
rows = 0
for r in range(5):
    wb = table.new_batch_write_builder()
    w = wb.new_write()
    with pa.ipc.open_stream(f"{inputs}/round-{r}.arrow") as reader:
        for batch in reader:
            rows += batch.num_rows
            w.write_arrow(batch)
    c = wb.new_commit()
    c.commit(w.prepare_commit())
    w.close()
    c.close()
print(json.dumps({"load_s": round(time.perf_counter() - started, 3), "rows": rows}))
PY
for i in $(seq "$runs"); do
  for side in strata paimon-rust; do
    rm -rf "$work/wh"
    mkdir -p "$work/wh"
    if [ "$side" = strata ]; then
      out=$(/usr/bin/time -f '%e %M' -o "$work/time" "$bench" load "$work/wh" "$work/in" "$mode")
    else
      out=$(/usr/bin/time -f '%e %M' -o "$work/time" "$py" "$work/peer.py" "$work/wh" "$work/in" "$mode")
    fi
    read -r wall kib < "$work/time"
    echo "run $i $side: $out wall ${wall}s peak $((kib / 1024)) MiB"
    echo "$side $out" >> "$work/results"
  done
done
"$py" - "$work/results" <<'PY'
import json, statistics, sys
times = {}
for line in open(sys.argv[1]):
    side, out = line.split(" ", 1)
    times.setdefault(side, []).append(json.loads(out)["load_s"])
s, p = statistics.median(times["strata"]), statistics.median(times["paimon-rust"])
print(f"medians: strata {s:.3f} s, paimon-rust {p:.3f} s: strata {p / s:.2f}x faster")
PY
