#!/usr/bin/env bash
# SQL timings, Strata's DataFusion (`strata sql`) against paimon-rust 0.4.0's DataFusion (the wheel
# pypaimon-rust's SQLContext, from the cached test virtualenv), on the same tables: a deletion-vector and a
# merge-on-read table of ROWS rows (id BIGINT key, name, v, d; 4 buckets, 2 MB files) loaded by `strata
# write`, a tenth of the keys updated and compacted. Per query: the best and the median of RUNS runs, rows
# collected and not printed, in one process per engine; Strata's line also shows the data files its scans
# read. Run it under the build lock so nothing else disturbs it: flock /tmp/strata-cargo.lock ./scripts/bench-sql.sh
# Usage: scripts/bench-sql.sh [ROWS] [RUNS]   (defaults 2000000 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-2000000}"
runs="${2:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo build --release -q --bin strata
strata=target/release/strata
py="$(bash scripts/pypaimon-venv.sh)"
wh="$work/wh"

# Input: ids 0..ROWS in random order (so every file spans a narrow key range only after compaction), then an
# update of a tenth of them.
"$py" - "$rows" "$work" <<'PY'
import sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
n, work = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(18)
def table(ids, tag):
    return pa.table({'id': pa.array(ids, pa.int64()),
                     'name': pa.array([f'{tag}-{i}' for i in ids], pa.string()),
                     'v': pa.array(rng.integers(-10**9, 10**9, len(ids)), pa.int64()),
                     'd': pa.array(rng.random(len(ids)), pa.float64())})
pq.write_table(table(rng.permutation(n), 'load'), f'{work}/load.parquet')
pq.write_table(table(rng.choice(n, n // 10, replace=False), 'update'), f'{work}/update.parquet')
PY

key=$((rows / 2 + 17))
lo=$((rows / 3))
queries=(
  "full scan|SELECT * FROM {db}.T"
  "key = $key|SELECT * FROM {db}.T WHERE id = $key"
  "1000-key range|SELECT * FROM {db}.T WHERE id BETWEEN $lo AND $((lo + 999))"
  "COUNT(*)|SELECT count(*) FROM {db}.T"
  "filtered SUM|SELECT sum(v) FROM {db}.T WHERE d < 0.1"
)
for t in dv mor; do
  "$strata" create "$wh/db.db/$t" --schema "id BIGINT NOT NULL, name STRING, v BIGINT, d DOUBLE" --primary-key id \
    --option bucket=4 --option target-file-size=2mb --option "deletion-vectors.enabled=$([ $t = dv ] && echo true || echo false)" >/dev/null
  "$strata" write "$wh/db.db/$t" --input "$work/load.parquet" >/dev/null
  "$strata" compact "$wh/db.db/$t" --full >/dev/null
  "$strata" write "$wh/db.db/$t" --input "$work/update.parquet" >/dev/null
  # The deletion-vector table compacts the update (deletion vectors mark the rows it replaced); the
  # merge-on-read table keeps it as a level-0 run that reads merge.
  if [ $t = dv ]; then "$strata" compact "$wh/db.db/$t" >/dev/null; fi
done

printf '%-5s %-16s %12s %12s %10s %6s   %14s %14s %10s\n' table query "strata best" "median" rows files \
  "paimon-rust best" "median" rows
for t in dv mor; do
  # Strata: every query RUNS times in one `strata sql` process; --verbose prints one line per statement.
  sql=""
  strata_q=()
  oracle_q=()
  for q in "${queries[@]}"; do
    text="${q#*|}"
    text="${text//\{db\}.T/db.$t}"
    for _ in $(seq "$runs"); do sql+="$text;"; done
    strata_q+=("$text")
    oracle_q+=("${text//db.$t/p.db.$t}")
  done
  "$strata" sql --warehouse "$wh" --discard --verbose "$sql" 2> "$work/strata.$t.txt" >/dev/null
  spec="$("$py" -c 'import json, sys; print(json.dumps({"warehouse": sys.argv[1], "runs": int(sys.argv[2]), "queries": sys.argv[3:]}))' \
    "$wh" "$runs" "${oracle_q[@]}")"
  (cd tests/py && "$py" paimon_rust_oracle.py sql_bench "$spec") > "$work/paimon.$t.json"
  python3 - "$t" "$runs" "$work/strata.$t.txt" "$work/paimon.$t.json" "${queries[@]}" <<'PY'
import json, re, statistics, sys
t, runs, strata, paimon, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
line = re.compile(r'^(\d+) rows, (\d+) data files read by (\d+) Strata scans, in ([\d.]+) s$')
ours = [line.match(l).groups() for l in open(strata) if line.match(l)]
theirs = json.load(open(paimon))
assert len(ours) == runs * len(names), (len(ours), open(strata).read())
for i, name in enumerate(names):
    mine = ours[i * runs:(i + 1) * runs]
    secs = sorted(float(m[3]) for m in mine)
    p = theirs[i]
    print(f"{t:<5} {name.split('|')[0]:<16} {secs[0]:>11.4f}s {statistics.median(secs):>11.4f}s {mine[0][0]:>10} "
          f"{mine[0][1]:>6}   {p['best']:>13.4f}s {p['median']:>13.4f}s {p['rows']:>10}")
PY
done
