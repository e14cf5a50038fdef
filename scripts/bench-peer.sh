#!/usr/bin/env bash
# The peer benchmark: `strata bench` builds a deletion-vector and a merge-on-read table, then pypaimon 2.1.0
# (from the cached virtualenv) reads the same tables, and both readers' rows/s are printed side by side.
# pypaimon merges the MOR table on read and reads the DV table through Strata's DV index files.
# Usage: scripts/bench-peer.sh [--rows N] [--rounds K] ...   (arguments go to strata bench)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(mktemp -d)/bench"
cargo run --release -q -- bench --dir "$dir" --json "$@" > "$dir.json"
py="$(bash scripts/pypaimon-venv.sh)"
for t in dv mor; do
  "$py" tests/py/paimon_oracle.py time_read "$dir/bench.db/$t" > "$dir.$t.peer.json"
done
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
strata = json.load(open(d + ".json"))
for t in ("dv", "mor"):
    peer = json.load(open(f"{d}.{t}.peer.json"))
    ours = strata[t]
    ours_rate = ours["scanRows"] / ours["scanSeconds"]
    peer_rate = peer["rows"] / peer["seconds"]
    print(f"{t:>3}: strata {ours['scanRows']} rows {ours_rate:,.0f} rows/s; pypaimon {peer['rows']} rows "
          f"{peer_rate:,.0f} rows/s; strata / pypaimon = {ours_rate / peer_rate:.2f}x")
PY
