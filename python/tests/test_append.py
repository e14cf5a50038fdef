"""Append tables (no primary key) that pypaimon 2.1.0 wrote, read through the Python package: every row (ids
repeat), in append order, with filters, projections and counts; lookups refused. Append tables the package
writes, read by pypaimon."""
import pyarrow as pa
import pytest

import strata
from conftest import pypaimon_create, pypaimon_read, pypaimon_write

SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string()), ("v", pa.float64())])


@pytest.mark.parametrize("bucket,partitioned", [("-1", False), ("-1", True), ("2", True)])
def test_append_table_written_by_pypaimon_reads_the_same(catalog, warehouse, rng, bucket, partitioned):
    options = {"bucket": bucket}
    if bucket != "-1":
        options["bucket-key"] = "id"
    pt = pypaimon_create(warehouse, "db.logs", SCHEMA, [], ["p"] if partitioned else [], options)
    written = []
    for _ in range(3):
        rows = [{"id": rng.randrange(50), "p": rng.choice("ab"), "v": rng.random() - 0.5} for _ in range(40)]
        pypaimon_write(pt, pa.Table.from_pylist(rows, schema=SCHEMA))
        written.extend(rows)
    t = catalog.get_table("db.logs")
    assert t.primary_keys == []
    key = lambda r: (r["id"], r["p"], r["v"])
    got = t.scan().to_arrow().to_pylist()
    assert sorted(got, key=key) == sorted(written, key=key)
    assert sorted(pypaimon_read(warehouse, "db.logs"), key=key) == sorted(written, key=key)
    if bucket == "-1" and not partitioned:
        # One bucket, files in commit order: the rows come out as they were appended.
        assert got == written
    assert t.scan().count() == len(written)
    want = [{"v": r["v"]} for r in written if r["v"] > 0 and r["p"] == "a"]
    got = t.scan(columns=["v"], filter=[("v", ">", 0.0), ("p", "==", "a")]).to_arrow().to_pylist()
    assert sorted(got, key=lambda r: r["v"]) == sorted(want, key=lambda r: r["v"])
    with pytest.raises(strata.UnsupportedError, match="append"):
        t.get([1])
    with pytest.raises(strata.UnsupportedError, match="append"):
        t.query()


def test_append_table_written_by_the_package_reads_the_same_in_pypaimon(catalog, warehouse, rng):
    t = catalog.create_table("db.events", SCHEMA, [], ["p"])
    assert t.options["bucket"] == "-1"
    written = []
    for _ in range(3):
        rows = [{"id": rng.randrange(20), "p": rng.choice("ab"), "v": rng.random()} for _ in range(30)]
        t.write(pa.Table.from_pylist(rows, schema=SCHEMA))
        written.extend(rows)
    got = t.reload().scan().to_arrow().to_pylist()
    for p in "ab":
        # Each partition's rows in the order they were appended.
        assert [r for r in got if r["p"] == p] == [r for r in written if r["p"] == p]
    key = lambda r: (r["id"], r["p"], r["v"])
    assert sorted(pypaimon_read(warehouse, "db.events"), key=key) == sorted(written, key=key)
    with pytest.raises(strata.InvalidError, match="inserts only"):
        t.write(pa.Table.from_pylist(written[:1], schema=SCHEMA), row_kind="-D")
