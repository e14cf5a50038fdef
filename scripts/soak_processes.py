#!/usr/bin/env python3
"""Process-level soak for `strata` (called by scripts/soak.sh; stdlib only).

Phase 1, concurrent writers: per round a fresh table (deletion vectors or merge-on-read, drawn at random),
N `strata write` processes on overlapping keys and one `strata compact` loop. Each landed write's snapshot
id and rows are recorded; the table must equal the landed writes applied in snapshot order, and no data or
index file may be left unreferenced (`strata clean --older-than 0s --dry-run`).

Phase 2, byte flips: a table with history (both modes, parquet and orc data files); one byte of one file
of a chosen kind is flipped, `strata scan` runs, and the outcome is classified against the clean scan:
error (non-zero exit with a message), harmless (same rows), silent (different rows, exit 0) or panic
(exit 101). The file is restored after each flip.

With --warehouse URI (an object store location such as s3://bucket/soak, reached through the AWS_*
environment), phase 1 runs on the store for the whole time: racing writer processes whose commits only the
store's conditional create decides; phase 2 (flipping bytes of local files) is skipped.

Usage: soak_processes.py STRATA_BINARY SECONDS [--seed N] [--warehouse URI] [--json]
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def create(binary, table, dv, fmt="parquet", buckets=2):
    code, _, err = run(binary, "create", table, "--schema", "id BIGINT NOT NULL, v BIGINT, s STRING",
                       "--primary-key", "id", "--option", f"bucket={buckets}",
                       "--option", f"deletion-vectors.enabled={'true' if dv else 'false'}",
                       "--option", f"file.format={fmt}")
    if code != 0:
        raise SystemExit(f"create failed: {err}")


def scan(binary, table):
    code, out, err = run(binary, "scan", table, "--format", "jsonl")
    if code != 0:
        return code, None, err
    rows = {}
    for line in out.splitlines():
        r = json.loads(line)
        if r["id"] in rows:
            return 0, "duplicate key", ""
        rows[r["id"]] = (r["v"], r["s"])
    return 0, rows, ""


def commit_count_failures(binary, table, landed_ids):
    """Lost or duplicated commits: every landed write's snapshot is an APPEND snapshot of the table, and every
    APPEND snapshot is a landed write's (the compactor commits COMPACT snapshots only), each exactly once."""
    code, out, err = run(binary, "inspect", table, "--json")
    if code != 0:
        return [f"inspect exited {code}: {err.strip()}"]
    report = json.loads(out)
    earliest = report.get("earliestSnapshot") or 0
    appends = [s["id"] for s in report["snapshots"] if s["commitKind"] == "APPEND"]
    kept = sorted(i for i in landed_ids if i >= earliest)
    out = []
    if len(set(landed_ids)) != len(landed_ids):
        out.append(f"two writes reported one snapshot: {sorted(landed_ids)}")
    if sorted(appends) != kept:
        out.append(f"APPEND snapshots {sorted(appends)} are not the landed writes' {kept}")
    return out

def concurrent_round(binary, work, rng, writers, writes_each, keys, warehouse=None):
    table = f"{warehouse}/r{rng.randrange(1 << 40)}/db.db/t" if warehouse else os.path.join(work, "t")
    dv = rng.random() < 0.5
    create(binary, table, dv)
    landed, failures, lock = [], [], threading.Lock()
    stop = threading.Event()

    def writer(w):
        for i in range(writes_each):
            rows = {rng.randrange(keys): (w * 100000 + i, f"w{w}-{i}") for _ in range(rng.randrange(1, 80))}
            path = os.path.join(work, f"in-{w}-{i}.jsonl")
            with open(path, "w") as f:
                for k, (v, s) in rows.items():
                    f.write(json.dumps({"id": k, "v": v, "s": s}) + "\n")
            code, out, err = run(binary, "write", table, "--input", path, "--json")
            with lock:
                if code == 0:
                    landed.append((json.loads(out)["snapshot"], rows))
                elif "conflict" not in err:
                    failures.append(f"write exited {code}: {err.strip()}")

    def compactor():
        while not stop.is_set():
            code, _, err = run(binary, "compact", table)
            if code != 0 and "conflict" not in err:
                with lock:
                    failures.append(f"compact exited {code}: {err.strip()}")
            time.sleep(rng.random() * 0.05)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    c = threading.Thread(target=compactor)
    c.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    c.join()
    model = {}
    for _, rows in sorted(landed, key=lambda x: x[0]):
        model.update(rows)
    code, got, err = scan(binary, table)
    if got != model:
        failures.append(f"divergence ({'dv' if dv else 'mor'}): scan {code} {err.strip()} differs from the model of "
                        f"{len(landed)} landed writes")
    failures.extend(commit_count_failures(binary, table, [sid for sid, _ in landed]))
    code, out, err = run(binary, "clean", table, "--older-than", "0s", "--dry-run", "--json")
    if code != 0:
        failures.append(f"clean exited {code}: {err.strip()}")
    else:
        report = json.loads(out)
        if report.get("dataFiles") or report.get("indexFiles"):
            failures.append(f"files left behind: {report}")
    if not warehouse:
        shutil.rmtree(table)
    return len(landed), writers * writes_each, failures


# (name prefix, name suffix, kind) of the files a flip may hit; the first that fits a name decides.
FILE_KINDS = [
    ("data-", ".parquet", "data-parquet"),
    ("data-", ".orc", "data-orc"),
    ("index-manifest-", "", "index-manifest"),
    ("index-", "", "dv-index"),
    ("manifest-list-", "", "manifest-list"),
    ("manifest-", "", "manifest"),
    ("snapshot-", "", "snapshot"),
    ("schema-", "", "schema"),
]


def file_kinds(table):
    kinds = {}
    for root, _, files in os.walk(table):
        for f in files:
            k = next((k for prefix, suffix, k in FILE_KINDS if f.startswith(prefix) and f.endswith(suffix)), None)
            if k is not None:
                kinds.setdefault(k, []).append(os.path.join(root, f))
    return kinds


def flip_tables(binary, work, rng):
    tables = []
    for dv, fmt in [(True, "parquet"), (False, "parquet"), (True, "orc")]:
        table = os.path.join(work, f"flip-{'dv' if dv else 'mor'}-{fmt}")
        create(binary, table, dv, fmt, buckets=1)
        for i in range(3):
            path = os.path.join(work, f"flip-in-{i}.jsonl")
            with open(path, "w") as f:
                for k in range(0, 400, i + 1):
                    f.write(json.dumps({"id": k, "v": i * 1000 + k, "s": f"r{i}-{k}"}) + "\n")
            code, _, err = run(binary, "write", table, "--input", path)
            if code != 0:
                raise SystemExit(f"write failed: {err}")
        tables.append((table, scan(binary, table)[1]))
    return tables


def flip_once(binary, rng, tables, counts):
    table, clean = rng.choice(tables)
    kinds = file_kinds(table)
    kind = rng.choice(sorted(kinds))
    path = rng.choice(kinds[kind])
    with open(path, "rb") as f:
        original = f.read()
    if not original:
        return
    at = rng.randrange(len(original))
    flipped = bytearray(original)
    flipped[at] ^= 1 << rng.randrange(8)
    with open(path, "wb") as f:
        f.write(flipped)
    try:
        code, rows, err = scan(binary, table)
    finally:
        with open(path, "wb") as f:
            f.write(original)
    c = counts.setdefault(kind, {"error": 0, "harmless": 0, "silent": 0, "panic": 0})
    # 101 is Rust's exit code for a panic that escaped; a contained one is a corrupt-file error (exit 5).
    if code == 101:
        c["panic"] += 1
    elif code != 0:
        c["error"] += 1
    elif rows == clean:
        c["harmless"] += 1
    else:
        c["silent"] += 1


def main():
    binary, seconds = sys.argv[1], float(sys.argv[2])
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    warehouse = sys.argv[sys.argv.index("--warehouse") + 1] if "--warehouse" in sys.argv else None
    rng = random.Random(seed)
    started = time.time()
    work = tempfile.mkdtemp(prefix="strata-soak-processes-")
    failures, rounds, landed, attempted = [], 0, 0, 0
    try:
        # Half the time on concurrent writers, half on flips (on a store, all of it on writers).
        writing = seconds if warehouse else seconds / 2
        while time.time() - started < writing:
            l, a, f = concurrent_round(binary, work, rng, writers=4, writes_each=4, keys=200, warehouse=warehouse)
            rounds, landed, attempted = rounds + 1, landed + l, attempted + a
            failures += f
        counts, flips = {}, 0
        if not warehouse:
            tables = flip_tables(binary, work, rng)
            while time.time() - started < seconds:
                flip_once(binary, rng, tables, counts)
                flips += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    silent = sum(c["silent"] for c in counts.values())
    panics = sum(c["panic"] for c in counts.values())
    summary = {"seconds": round(time.time() - started, 1), "concurrentRounds": rounds, "writesLanded": landed,
               "writesAttempted": attempted, "failures": failures, "flips": flips, "flipOutcomes": counts,
               "silentFlips": silent, "panics": panics}
    if "--json" in sys.argv:
        print(json.dumps(summary))
    else:
        print(f"concurrent writers: {rounds} rounds, {landed}/{attempted} writes landed, {len(failures)} failures")
        for f in failures[:10]:
            print(f"  {f}")
        print(f"byte flips: {flips} (error / harmless / silent / panic per file kind)")
        for k, c in sorted(counts.items()):
            print(f"  {k:15} {c['error']:5} {c['harmless']:5} {c['silent']:5} {c['panic']:5}")
    # Divergences, leftovers, panics and silent flips (a flipped byte read as other rows) fail the soak.
    sys.exit(1 if failures or panics or silent else 0)


if __name__ == "__main__":
    main()
