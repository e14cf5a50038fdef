"""Reading an append table (no primary key) that pypaimon 2.1.0 wrote: Strata's Python package against
paimon-rust 0.4.0 (`pypaimon_rust`) and pypaimon, same files, same machine; and appending the same rows with
Strata and with pypaimon (issue 54).

    python scripts/bench_append.py WORK_DIR [ROWS]

The table: an int64 id, a partition-free unaware-bucket layout (Paimon's default for append tables), 20
strings of 9 characters, written by pypaimon in 4 commits. Each reader reads every row into Arrow, RUNS
times; the medians are printed as one JSON object, with the row count and a checksum each reader must match.
"""

import json
import os
import statistics
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

RUNS = 5
COLUMNS = 20


def rows_table(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    cols = {"id": pa.array(ids, pa.int64())}
    for c in range(COLUMNS):
        cols[f"s{c}"] = pa.array([format((i * 2654435761 + c * 40503) % (16**9), "09x") for i in ids], pa.string())
    return pa.table(cols)


def checksum(t: pa.Table) -> list:
    return [t.num_rows, pc.sum(t.column("id")).as_py()]


def timed(fn):
    times, out = [], None
    for _ in range(RUNS):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    work, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    from pypaimon import CatalogFactory, Schema

    warehouse = os.path.join(work, "wh")
    cat = CatalogFactory.create({"warehouse": warehouse})
    cat.create_database("db", True)
    schema = pa.schema([("id", pa.int64())] + [(f"s{c}", pa.string()) for c in range(COLUMNS)])
    cat.create_table("db.events", Schema.from_pyarrow_schema(schema, options={"bucket": "-1"}), False)
    table = cat.get_table("db.events")
    out = {"rows": n}
    # The same four Arrow tables for both writers, built before either clock starts.
    part = n // 4
    parts = [rows_table(k * part, part if k < 3 else n - 3 * part) for k in range(4)]
    start = time.perf_counter()
    for rows in parts:
        wb = table.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(rows)
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    out["pypaimon_write_s"] = time.perf_counter() - start

    import strata
    from pypaimon_rust.datafusion import PaimonCatalog

    # Strata appends the same rows to a table of its own (4 commits); pypaimon must read them back.
    written = strata.Catalog(warehouse).create_table("db.events_strata", schema, [], options={"bucket": "-1"})
    start = time.perf_counter()
    for rows in parts:
        written.write(rows)
    out["strata_write_s"] = time.perf_counter() - start
    out["pypaimon_write_over_strata"] = out["pypaimon_write_s"] / out["strata_write_s"]
    back = cat.get_table("db.events_strata").new_read_builder()
    assert checksum(back.new_read().to_arrow(back.new_scan().plan().splits())) == checksum(pa.concat_tables(parts))

    st = strata.Catalog(warehouse).get_table("db.events")
    rust = PaimonCatalog({"warehouse": warehouse}).get_table("db.events")

    def strata_read():
        return checksum(st.scan().to_arrow())

    def rust_read():
        rb = rust.new_read_builder()
        return checksum(pa.Table.from_batches(rb.new_read().read(rb.new_scan().plan().splits())))

    def pypaimon_read():
        rb = table.new_read_builder()
        return checksum(rb.new_read().to_arrow(rb.new_scan().plan().splits()))

    scans = {}
    for name, fn in (("strata", strata_read), ("paimon_rust", rust_read), ("pypaimon", pypaimon_read)):
        seconds, check = timed(fn)
        scans[name] = {"seconds": seconds, "check": check}
    checks = {json.dumps(v["check"]) for v in scans.values()}
    assert len(checks) == 1, f"the readers disagree: {scans}"
    out["scan"] = scans
    print(json.dumps(out))


if __name__ == "__main__":
    main()
