#!/usr/bin/env bash
# Builds one of the workspace's benchmark targets (release profile) and prints its executable's path:
# `bash scripts/bench-bin.sh lookup`. The bench-*.sh scripts run that executable directly, so their runs do
# not rebuild it.
set -euo pipefail
cd "$(dirname "$0")/.."
py="$(bash scripts/pypaimon-venv.sh)"
cargo bench --bench "$1" --no-run --message-format=json 2>/dev/null | "$py" -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("executable") and m.get("target", {}).get("name") == sys.argv[1]:
        print(m["executable"])' "$1"
