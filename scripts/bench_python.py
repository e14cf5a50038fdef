"""The Python side of scripts/bench-python.sh. Subcommands (each prints one JSON line):

  gen ROWS FILE            makes the rows (id BIGINT key, v BIGINT, d DOUBLE, six 10-character strings), in a
                           random key order, into an uncompressed parquet file
  strata FILE DIR B DV     Strata's Python package: the file's rows written in one call (one commit) into a
                           fresh table with B buckets, the best of three such writes; then scanned into a
                           pyarrow.Table (to_arrow) and streamed (to_reader), the best of ten scans each
  pypaimon FILE DIR B DV   pypaimon 2.1.0: the same rows written in one batch write and commit into a fresh
                           table, and Strata's table (from the strata run, in DIR) read back
  summary RESULTS ROWS     the medians and paired ratios of a results file (one JSON line per run, as
                           scripts/bench-python.sh writes them), with a distribution-free interval for the
                           median ratio

Timings cover only the call measured: reading the parquet file is outside them.
"""
import json
import statistics
import sys
import time
from math import comb

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# Writes (each into a fresh table) and scans per process; the best of each is reported, on both sides.
WRITES = 3
SCANS = 10


def gen(rows, path):
    rng = np.random.default_rng(7)
    cols = {"id": pa.array(rng.permutation(rows).astype(np.int64)), "v": pa.array(rng.integers(-10**9, 10**9, rows)),
            "d": pa.array(rng.random(rows))}
    offsets = pa.py_buffer(np.arange(0, 10 * (rows + 1), 10, dtype=np.int32).tobytes())
    for i in range(6):
        data = pa.py_buffer(rng.integers(97, 123, size=10 * rows, dtype=np.uint8).tobytes())
        cols[f"s{i}"] = pa.StringArray.from_buffers(rows, offsets, data)
    pq.write_table(pa.table(cols), path, compression="none")
    return {"rows": rows}


def schema_of(table):
    fields = [pa.field(f.name, f.type, nullable=f.name != "id") for f in table.schema]
    return pa.schema(fields)


def run_strata(path, work, buckets, dv):
    import strata

    # One batch, as the Rust side writes it (pyarrow reads the file in several chunks).
    data = pq.read_table(path)
    data = data.cast(schema_of(data)).combine_chunks()
    catalog = strata.Catalog(work)
    catalog.create_database("db")
    # The best of three writes, each into a fresh table, as the Rust side measures.
    write_s = float("inf")
    for i in range(WRITES):
        t = catalog.create_table(f"db.py{i}", schema_of(data), primary_keys=["id"],
                                 options={"bucket": buckets, "deletion-vectors.enabled": dv})
        started = time.perf_counter()
        t.write(data)
        write_s = min(write_s, time.perf_counter() - started)
    # The best of ten scans of each kind, as the Rust side measures.
    scan_s = stream_s = float("inf")
    out = None
    for _ in range(SCANS):
        out = None  # the last result is freed outside the timing, as on the Rust side
        started = time.perf_counter()
        out = t.scan().to_arrow()
        scan_s = min(scan_s, time.perf_counter() - started)
        started = time.perf_counter()
        streamed = sum(b.num_rows for b in t.scan().to_reader())
        stream_s = min(stream_s, time.perf_counter() - started)
    assert out.num_rows == data.num_rows == streamed
    return {"write_s": round(write_s, 4), "scan_s": round(scan_s, 4), "stream_s": round(stream_s, 4), "rows": out.num_rows}


def run_pypaimon(path, work, buckets, dv):
    from pypaimon import CatalogFactory, Schema

    data = pq.read_table(path)
    data = data.cast(schema_of(data))
    cat = CatalogFactory.create({"warehouse": work})
    cat.create_database("db", True)
    schema = Schema.from_pyarrow_schema(schema_of(data), primary_keys=["id"],
                                        options={"bucket": buckets, "deletion-vectors.enabled": dv})
    cat.create_table("db.pypaimon", schema, False)
    table = cat.get_table("db.pypaimon")
    started = time.perf_counter()
    wb = table.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()
    write_s = time.perf_counter() - started
    # pypaimon reads the table Strata wrote (compacted: what a deletion-vector reader sees).
    strata_table = cat.get_table(f"db.py{WRITES - 1}")
    started = time.perf_counter()
    rb = strata_table.new_read_builder()
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    scan_s = time.perf_counter() - started
    assert out.num_rows == data.num_rows, (out.num_rows, data.num_rows)
    return {"write_s": round(write_s, 4), "scan_s": round(scan_s, 4), "rows": out.num_rows}


def median_interval(xs, level=0.95):
    """A distribution-free interval for the median of xs: its order statistics k and n-1-k (0-based), k the
    largest for which the binomial tail leaves at most (1 - level) / 2 on each side; and its coverage."""
    xs, n = sorted(xs), len(xs)
    tail = lambda k: sum(comb(n, i) for i in range(k + 1)) / 2**n
    k = 0
    while k + 1 < n - 2 - k and tail(k + 1) <= (1 - level) / 2:
        k += 1
    return xs[k], xs[n - 1 - k], 1 - 2 * tail(k)


def summary(path, rows):
    runs = [json.loads(line) for line in open(path) if line.startswith("{")]
    def med(side, k):
        xs = [r[side][k] for r in runs if r.get(side)]
        return statistics.median(xs) if xs else None
    print(f"\n{rows} rows, medians of {len(runs)} runs (seconds; rows/s in parentheses)")
    print(f"{'':22}{'write':>18}{'scan (to_arrow)':>22}")
    for side, name in [("rust", "Rust API"), ("python", "Strata Python"), ("pypaimon", "pypaimon 2.1.0")]:
        w, s = med(side, "write_s"), med(side, "scan_s")
        if w is not None:
            print(f"{name:22}{w:>8.3f} ({rows / w / 1e6:4.2f}M/s){s:>11.3f} ({rows / s / 1e6:5.2f}M/s)")
    print(f"{'Strata Python stream':22}{'':>18}{med('python', 'stream_s'):>11.3f}")
    for k, name in [("write_s", "write"), ("scan_s", "scan")]:
        ratios = [r["python"][k] / r["rust"][k] - 1 for r in runs]
        lo, hi, cover = median_interval(ratios)
        print(f"Python over Rust, {name}: median of the runs' ratios {statistics.median(ratios):+.1%}"
              f" ({cover:.0%} interval for it {lo:+.1%} .. {hi:+.1%}; runs {' '.join(f'{x:+.0%}' for x in ratios)})")
    if med("pypaimon", "write_s") is not None:
        print(f"Strata Python vs pypaimon: write {med('pypaimon', 'write_s') / med('python', 'write_s'):.1f}x faster, "
              f"scan {med('pypaimon', 'scan_s') / med('python', 'scan_s'):.1f}x faster")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        print(json.dumps(gen(int(args[0]), args[1])))
    elif cmd == "strata":
        print(json.dumps(run_strata(*args)))
    elif cmd == "pypaimon":
        print(json.dumps(run_pypaimon(*args)))
    elif cmd == "summary":
        summary(args[0], int(args[1]))
    else:
        sys.exit(f"unknown subcommand {cmd}")
