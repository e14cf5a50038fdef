#!/usr/bin/env bash
# Creates (once, cached) a virtualenv holding pypaimon 2.1.0 from PyPI, Strata's compatibility oracle,
# and prints the path of its python. Tests call this; nothing of pypaimon is vendored.
set -euo pipefail
venv="${STRATA_PYPAIMON_VENV:-$HOME/.cache/strata/pypaimon-2.1.0}"
py="$venv/bin/python"
if [ -x "$py" ] && "$py" -c 'import pypaimon, pyarrow' >/dev/null 2>&1; then
  echo "$py"
  exit 0
fi
mkdir -p "$(dirname "$venv")"
lock="$venv.lock"
exec 9>"$lock"
flock 9
if ! { [ -x "$py" ] && "$py" -c 'import pypaimon, pyarrow' >/dev/null 2>&1; }; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$py" -m pip install --quiet --disable-pip-version-check 'pypaimon==2.1.0' >&2
fi
echo "$py"
