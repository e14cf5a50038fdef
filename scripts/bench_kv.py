"""Strata as an embedded key-value store against RocksDB (issue 53), both from Python, same rows, same machine.

    python scripts/bench_kv.py WORK_DIR [ROWS]

Rows: an int64 id key and 20 strings of 9 characters (the shape issue 53 tried). Strata: its Python package,
a 4-bucket deletion-vector table (one writer, each `write` one commit). RocksDB: `rocksdict` 0.3.29 in raw mode
(bytes keys, big-endian ids, so key order is id order; the value is the 20 strings joined, 180 bytes), default
options. Each figure is the median of REPEATS runs of the operation. RocksDB's reads return bytes, Strata's an
Arrow table of typed columns; RocksDB's writes go through its write-ahead log without fsync by default
(`sync=False`), Strata's commits are durable (files and snapshot synced): small commits are measured both ways
for RocksDB. Prints one JSON object.
"""

import json
import os
import random
import statistics
import struct
import sys
import time

import pyarrow as pa

import rocksdict
import strata

REPEATS = 5
COLUMNS = 20


def value(i: int, c: int, salt: int = 0) -> str:
    return format((i * 2654435761 + c * 40503 + salt * 97) % (16**9), "09x")


def rows_table(ids, salt: int = 0) -> pa.Table:
    cols = {"id": pa.array(ids, pa.int64())}
    for c in range(COLUMNS):
        cols[f"s{c}"] = pa.array([value(i, c, salt) for i in ids], pa.string())
    return pa.table(cols)


def rocks_value(t: pa.Table, row: int) -> bytes:
    return "".join(t.column(f"s{c}")[row].as_py() for c in range(COLUMNS)).encode()


def key(i: int) -> bytes:
    return struct.pack(">q", i)


def timed(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    work = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    rng = random.Random(7)
    ids = list(range(n))
    rng.shuffle(ids)
    data = rows_table(ids)
    # RocksDB's input, made before its clock starts as Strata's Arrow table is.
    rocks_rows = [(key(ids[r]), rocks_value(data, r)) for r in range(n)]
    out = {"rows": n}

    catalog = strata.Catalog(os.path.join(work, "strata"))
    catalog.create_database("db")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)] + [(f"s{c}", pa.string()) for c in range(COLUMNS)])
    table = catalog.create_table(
        "db.kv", schema, ["id"], options={"bucket": "4", "deletion-vectors.enabled": "true"}
    )
    opts = rocksdict.Options(raw_mode=True)
    db = rocksdict.Rdict(os.path.join(work, "rocks"), opts)

    t = time.perf_counter()
    table.write(data)
    out["load_s"] = {"strata": time.perf_counter() - t}
    t = time.perf_counter()
    wb = rocksdict.WriteBatch(raw_mode=True)
    for k, v in rocks_rows:
        wb.put(k, v)
    db.write(wb)
    db.flush()
    out["load_s"]["rocksdb"] = time.perf_counter() - t

    # A long-lived query, as an embedded store is opened once: its first lookup builds the local lookup
    # files of every data file it touches (here all of them), timed on its own.
    query = table.query()
    warm = rng.sample(range(n), 100)
    t = time.perf_counter()
    assert query.get(warm).num_rows == 100
    out["query_first_get_s"] = time.perf_counter() - t
    for count in (100, 10_000):
        keys = rng.sample(range(n), count)
        rkeys = [key(k) for k in keys]
        got = table.get(keys).num_rows
        assert got == count, (got, count)
        assert query.get(keys).to_pylist() == table.get(keys).to_pylist()
        assert sum(v is not None for v in db.get(rkeys)) == count
        out[f"get_many_{count}_s"] = {
            "strata_query": timed(lambda: query.get(keys)),
            "strata_table": timed(lambda: table.get(keys)),
            "rocksdb": timed(lambda: db.get(rkeys)),
        }

    lat = {"strata_get_row": [], "strata_get": [], "rocksdb": []}
    for _ in range(20_000):
        k = rng.randrange(n)
        t = time.perf_counter()
        query.get_row(k)
        lat["strata_get_row"].append(time.perf_counter() - t)
        t = time.perf_counter()
        query.get([k])
        lat["strata_get"].append(time.perf_counter() - t)
        rk = key(k)
        t = time.perf_counter()
        db.get(rk)
        lat["rocksdb"].append(time.perf_counter() - t)
    out["get_one_us"] = {
        side: {"p50": statistics.median(v) * 1e6, "p99": sorted(v)[len(v) * 99 // 100] * 1e6} for side, v in lat.items()
    }

    def strata_scan():
        assert table.scan().to_arrow().num_rows == n

    def rocks_scan():
        count = 0
        for _k, _v in db.items():
            count += 1
        assert count == n

    out["scan_s"] = {"strata": timed(strata_scan, 3), "rocksdb": timed(rocks_scan, 3)}

    sync = rocksdict.WriteOptions()
    sync.sync = True
    commits = {}
    for size in (1, 100, 10_000):
        batches = 20 if size < 10_000 else 5
        salt = size
        chunks = [[rng.randrange(n) for _ in range(size)] for _ in range(batches)]
        tables = [rows_table(c, salt) for c in chunks]
        t = time.perf_counter()
        for b in tables:
            table.write(b)
        strata_rate = batches / (time.perf_counter() - t)
        rates = {"strata": strata_rate}
        for name, wopt in (("rocksdb", None), ("rocksdb_sync", sync)):
            wbs = []
            for b in tables:
                wb = rocksdict.WriteBatch(raw_mode=True)
                for r in range(b.num_rows):
                    wb.put(key(b.column("id")[r].as_py()), rocks_value(b, r))
                wbs.append(wb)
            t = time.perf_counter()
            for wb in wbs:
                db.write(wb, wopt)
            rates[name] = batches / (time.perf_counter() - t)
        commits[str(size)] = rates
    out["commits_per_s"] = commits
    db.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
