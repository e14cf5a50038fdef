#!/usr/bin/env bash
# Strata against Java Paimon 1.4.2, the reference, on one machine: the same workload, rows and keys
# (benches/java_peer.rs and benches/java/PaimonBench.java generate them with the same function), each engine
# in its own process, one after the other. Per engine: load a deletion-vector and a merge-on-read table
# (compaction included), full compaction of the DV table, scans of both, and TableQuery against Java's
# LocalTableQuery (Flink's lookup-join path). Each engine also scans and looks up the other's tables, so
# every read is measured on the same files too. Prints a table of seconds, CPU seconds and ratios; CPU time
# is the process's (user + system), so "per core" compares work done, whatever threads each engine used.
#
# Usage: scripts/bench-java.sh [ROWS] [ROUNDS] [BUCKETS]   (defaults 1000000 4 4)
# Needs a JDK 17+ and Maven (scripts/java-paimon.sh); builds Strata's side with `cargo bench` (release).
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-1000000}"
rounds="${2:-4}"
buckets="${3:-4}"
warm=200
keys=20000
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp="$(bash scripts/java-paimon.sh bench)"
cargo bench --bench java_peer --no-run -q 2>/dev/null || cargo bench --bench java_peer --no-run
strata() { cargo bench -q --bench java_peer -- "$@" 2>/dev/null; }
# The JVM as a service would run it: default collector, a heap large enough for a writer's buffers.
java_() { java -Xmx4g -cp "$cp" PaimonBench "$@" 2>>"$work/java.log"; }

for engine in strata java; do
  run=strata; [ "$engine" = java ] && run=java_
  for t in dv mor; do
    dv=true; [ "$t" = mor ] && dv=false
    $run load "$work/$engine/bench.db/$t" "$rows" "$rounds" "$buckets" "$dv" > "$work/$engine.load.$t.json"
  done
done
for engine in strata java; do
  run=strata; [ "$engine" = java ] && run=java_
  for owner in strata java; do
    for t in dv mor; do
      $run scan "$work/$owner/bench.db/$t" 3 > "$work/$engine.scan.$owner.$t.json"
    done
    $run lookup "$work/$owner/bench.db/dv" "$rows" "$warm" "$keys" > "$work/$engine.lookup.$owner.json"
  done
done
# Full compaction last (it rewrites the tables the reads above measured).
for engine in strata java; do
  run=strata; [ "$engine" = java ] && run=java_
  $run compact "$work/$engine/bench.db/dv" > "$work/$engine.compact.json"
done

python3 - "$work" "$rows" "$rounds" "$buckets" <<'PY'
import json, sys
d, rows, rounds, buckets = sys.argv[1:]
def j(name):
    return json.load(open(f"{d}/{name}.json"))
def line(what, s, jv, unit="s"):
    ratio = jv["seconds"] / s["seconds"]
    s_core = s["seconds"] and s["cpuSeconds"] / s["seconds"]
    j_core = jv["seconds"] and jv["cpuSeconds"] / jv["seconds"]
    per_core = (jv["cpuSeconds"] / s["cpuSeconds"]) if s["cpuSeconds"] > 0 else float("nan")
    print(f"| {what} | {s['seconds']:.2f} s ({s_core:.2f} cores) | {jv['seconds']:.2f} s ({j_core:.2f} cores) "
          f"| {ratio:.2f}x | {per_core:.2f}x |")
print(f"{rows} rows, {rounds} update rounds of 10%, {buckets} buckets; Java Paimon 1.4.2 on "
      f"{open('/proc/version').read().split()[2]}")
print("| operation | Strata | Java | Java / Strata, wall | Java / Strata, CPU (per core) |")
print("|---|---|---|---|---|")
for t in ("dv", "mor"):
    s, jv = j(f"strata.load.{t}"), j(f"java.load.{t}")
    assert s["rowsWritten"] == jv["rowsWritten"], (s, jv)
    line(f"load with compaction, {t} ({s['rowsWritten']} rows)", s, jv)
line("full compaction, dv", j("strata.compact"), j("java.compact"))
live = {(j(f"{e}.scan.{o}.{t}")["rows"], j(f"{e}.scan.{o}.{t}")["checksum"])
        for e in ("strata", "java") for o in ("strata", "java") for t in ("dv", "mor")}
# Both engines wrote the same rows: every table holds the same live rows and values, whoever reads it.
assert len(live) == 1, f"the tables differ in live rows or values (rows, checksum): {live}"
for owner in ("strata", "java"):
    for t in ("dv", "mor"):
        s, jv = j(f"strata.scan.{owner}.{t}"), j(f"java.scan.{owner}.{t}")
        line(f"scan, {t}, {owner}'s table ({s['rows']} rows)", s, jv)
for owner in ("strata", "java"):
    s, jv = j(f"strata.lookup.{owner}"), j(f"java.lookup.{owner}")
    line(f"{s['keys']} lookups after warm-up, {owner}'s dv table", s, jv)
    print(f"|   p50 / p99 | {s['p50Us']:.1f} / {s['p99Us']:.1f} us | {jv['p50Us']:.1f} / {jv['p99Us']:.1f} us | | |")
    print(f"|   warm-up ({200} keys) | {s['warmSeconds']:.2f} s | {jv['warmSeconds']:.2f} s | | |")
    print(f"|   keys found | {s['found']} | {jv['found']} | | |")
    print(f"|   Strata get_many of the same keys | {s['getManySeconds']:.2f} s, {s['getManyFound']} found | | | |")
PY
