#!/usr/bin/env bash
# Key lookups, whole process against whole process, as issue 21 measures them: `strata get` (release build)
# of 1, 100 and 10,000 random existing keys, against paimon-rust 0.4.0 reading the same keys of the same table
# (a read with an `in` filter on the key, through pypaimon_rust). The table: ROWS rows (default 1,000,000)
# of scripts/bench_python.py's shape written by Strata's Python package into 4 buckets with deletion vectors,
# then 4 rounds updating 10% of the keys. Each figure is the median of RUNS runs (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${ROWS:-1000000}"
runs="${RUNS:-3}"
py="$(bash scripts/pypaimon-venv.sh)"
venv="$(cd "$(dirname "$py")/.." && pwd)"
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
maturin develop --release --manifest-path python/Cargo.toml >&2
cargo build --release -q >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$py" scripts/bench_python.py gen "$rows" "$work/rows.parquet" >/dev/null
"$py" - "$work" "$rows" <<'PY'
import random, sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
import strata
work, rows = sys.argv[1], int(sys.argv[2])
data = pq.read_table(f"{work}/rows.parquet")
schema = pa.schema([pa.field(f.name, f.type, nullable=f.name != "id") for f in data.schema])
cat = strata.Catalog(f"{work}/wh"); cat.create_database("db")
t = cat.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "4", "deletion-vectors.enabled": "true"})
t.write(data.cast(schema))
rng = np.random.default_rng(3)
for _ in range(4):
    ids = rng.choice(rows, rows // 10, replace=False)
    t.write(data.cast(schema).take(pa.array(np.argsort(data.column("id").to_numpy())[ids])).set_column(1, "v", pa.array(rng.integers(0, 10**9, rows // 10))))
for n in (1, 100, 10000):
    keys = random.Random(n).sample(range(rows), n)
    open(f"{work}/keys-{n}", "w").write(" ".join(map(str, keys)))
PY
cat > "$work/peer.py" <<'PY'
import sys
from pypaimon_rust.datafusion import PaimonCatalog
keys = [int(k) for k in open(sys.argv[2]).read().split()]
table = PaimonCatalog({"warehouse": sys.argv[1]}).get_table("db.t")
rb = table.new_read_builder().with_filter({"method": "in", "field": "id", "literals": keys})
rows = sum(b.num_rows for b in rb.new_read().read(rb.new_scan().plan().splits()))
assert rows == len(keys), (rows, len(keys))
PY
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in 1 100 10000; do
  s=$(for _ in $(seq "$runs"); do /usr/bin/time -f %e target/release/strata get "$work/wh/db.db/t" $(cat "$work/keys-$n") --json 2>&1 >/dev/null | tail -1; done | median)
  p=$(for _ in $(seq "$runs"); do /usr/bin/time -f %e "$py" "$work/peer.py" "$work/wh" "$work/keys-$n" 2>&1 >/dev/null | tail -1; done | median)
  found=$(target/release/strata get "$work/wh/db.db/t" $(cat "$work/keys-$n") --json | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(len(d["rows"]), len(d["notFound"]))')
  echo "get of $n keys: strata ${s}s, paimon-rust ${p}s (strata found/not found: $found)"
done
