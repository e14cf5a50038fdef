#!/usr/bin/env bash
# Creates (once, cached) the test virtualenv from PyPI: Strata's compatibility oracles, pypaimon 2.1.0 and
# paimon-rust 0.4.0 (the wheel pypaimon-rust, module pypaimon_rust), moto 5.2.5's S3 server with the
# Flask it serves with (scripts/s3_server.py, the loopback S3 store of the object-storage tests), and what the
# Python package's tests need (maturin 1.16.0 to build it, pytest 9.2.0, Ray 2.60.0 with Ray Data for
# strata.ray); prints the path of its python. Tests and .ci/run call this; nothing of them is vendored. A cached virtualenv that lacks one of the pinned packages
# (or holds another version) gets it installed in place; one that is broken is made anew.
set -euo pipefail
venv="${STRATA_PYPAIMON_VENV:-$HOME/.cache/strata/pypaimon-2.1.0}"
py="$venv/bin/python"
pins=('pypaimon==2.1.0' 'pypaimon-rust==0.4.0' 'moto[s3]==5.2.5' 'flask==3.1.3' 'flask-cors==6.0.5'
      'maturin==1.16.0' 'pytest==9.2.0' 'ray[data]==2.60.0')
check='
import importlib.metadata as m
import pyarrow, pypaimon, pypaimon_rust.datafusion, moto.server, flask, flask_cors, pytest, ray.data
assert m.version("pypaimon") == "2.1.0", m.version("pypaimon")
assert m.version("maturin") == "1.16.0", m.version("maturin")
assert m.version("pytest") == "9.2.0", m.version("pytest")
assert m.version("ray") == "2.60.0", m.version("ray")
assert m.version("pypaimon-rust") == "0.4.0", m.version("pypaimon-rust")
assert m.version("moto") == "5.2.5", m.version("moto")
'
ready() { [ -x "$py" ] && "$py" -c "$check" >/dev/null 2>&1; }
# pip's own progress goes to stderr, which the tests pass through: the first run downloads about 330 MB
# (pyarrow, pandas, polars and numpy come with pypaimon, whose reader imports them; boto3 and werkzeug with
# moto; Ray's wheel is about 70 MB) and takes about 1.5 GB.
install() {
  echo "strata tests: installing ${pins[*]} into $venv (once; about 330 MB to download, 1.5 GB on disk)" >&2
  "$py" -m pip install --disable-pip-version-check "${pins[@]}" >&2
}

if ready; then
  echo "$py"
  exit 0
fi
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ! ready; then
  # Upgrade a working virtualenv in place (pip installs only what is missing or of another version).
  if ! { [ -x "$py" ] && "$py" -c 'import pip' >/dev/null 2>&1 && install && ready; }; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    install
  fi
fi
if ! ready; then
  echo "the virtualenv $venv does not import the pinned ${pins[*]}:" >&2
  "$py" -c "$check" >&2 || true
  exit 1
fi
echo "$py"
