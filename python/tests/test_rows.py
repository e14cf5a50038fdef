"""Rows through the Python package against a dict model: random upserts and deletes over many commits, in
deletion-vector and merge-on-read tables, partitioned or not; row kinds; merge engines; filters, projections,
limits, time travel; lookups. pypaimon reads every table equal to the model."""
import pyarrow as pa
import pytest

import strata
from conftest import by_key, model_rows, pypaimon_read

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), pa.field("p", pa.string(), False), ("name", pa.string()), ("v", pa.int64())])
COLUMNS = ["id", "p", "name", "v"]


@pytest.mark.parametrize("dv,partitioned,buckets", [(True, False, 1), (True, True, 3), (False, False, 2), (False, True, 1)])
def test_random_upserts_and_deletes_match_the_model(catalog, warehouse, rng, dv, partitioned, buckets):
    keys = ["id", "p"] if partitioned else ["id"]
    t = catalog.create_table(
        "db.t",
        SCHEMA,
        primary_keys=keys,
        partition_keys=["p"] if partitioned else [],
        options={"bucket": str(buckets), "deletion-vectors.enabled": str(dv).lower()},
    )
    model = {}
    history = []
    for commit in range(8):
        n = rng.randrange(1, 200)
        batch = []
        for _ in range(n):
            row = (rng.randrange(300), rng.choice("ab") if partitioned else "x", None if rng.random() < 0.1 else f"n{rng.randrange(1000)}", rng.randrange(-1000, 1000))
            batch.append(row)
        # Last write of a key in a commit wins (sequence order within the write).
        if rng.random() < 0.3 and model:
            victims = rng.sample(sorted(model), min(len(model), rng.randrange(1, 20)))
            if partitioned:
                t.delete(pa.table({"id": [k[0] for k in victims], "p": [k[1] for k in victims]}))
            else:
                t.delete([k[0] for k in victims])
            for k in victims:
                model.pop(k, None)
        data = pa.table({c: [r[i] for r in batch] for i, c in enumerate(COLUMNS)}, schema=SCHEMA)
        t.write(data)
        for r in batch:
            model[(r[0], r[1])] = r
        history.append((t.snapshot_id, dict(model)))
    expected = model_rows(model, COLUMNS)
    assert by_key(t.scan().to_arrow().to_pylist(), ("id", "p")) == expected
    assert by_key(pypaimon_read(warehouse, "db.t"), ("id", "p")) == expected
    assert t.scan().count() == len(expected)
    # Filters, projections and limits against the model.
    want = [r for r in expected if r["v"] is not None and r["v"] >= 0 and r["id"] < 150]
    got = t.scan(filter=[("v", ">=", 0), ("id", "<", 150)]).to_arrow().to_pylist()
    assert by_key(got, ("id", "p")) == want
    either = [r for r in expected if r["id"] in (1, 2, 3) or r["name"] is None]
    got = t.scan(filter=[[("id", "in", [1, 2, 3])], [("name", "is_null")]]).to_arrow().to_pylist()
    assert by_key(got, ("id", "p")) == either
    assert t.scan(columns=["v", "id"]).to_arrow().column_names == ["v", "id"]
    assert t.scan(limit=5).to_arrow().num_rows == min(5, len(expected))
    streamed = t.scan().to_reader(batch_size=64)
    assert isinstance(streamed, pa.RecordBatchReader)
    assert by_key(streamed.read_all().to_pylist(), ("id", "p")) == expected
    # Time travel: every snapshot that still exists reads as the model did then.
    for snapshot, then in history:
        assert by_key(t.scan(snapshot=snapshot).to_arrow().to_pylist(), ("id", "p")) == model_rows(then, COLUMNS)
    # Lookups, one-off and through a query.
    sample = rng.sample(range(300), 30)
    probe = [(k, "x") for k in sample] if not partitioned else [(k, p) for k in sample for p in "ab"]
    want = [dict(zip(COLUMNS, model[k])) for k in probe if k in model]
    if partitioned:
        keys_table = pa.table({"id": [k[0] for k in probe], "p": [k[1] for k in probe]})
        assert t.get(keys_table).to_pylist() == want
        assert t.query().get(keys_table).to_pylist() == want
        rows = [t.query().get_row(k) for k in probe]
    else:
        assert t.get([k[0] for k in probe]).to_pylist() == want
        assert t.query().get([k[0] for k in probe]).to_pylist() == want
        rows = [t.query().get_row(k[0]) for k in probe]
    # One key at a time, as Python values (every column here takes the plain road).
    assert [r for r in rows if r is not None] == want
    assert [r is not None for r in rows] == [k in model for k in probe]


def test_row_kinds_uniform_and_per_row(catalog):
    t = catalog.create_table("db.k", SCHEMA, primary_keys=["id"], options={"deletion-vectors.enabled": "true"})
    t.write(pa.table({"id": [1, 2, 3], "p": ["x"] * 3, "name": ["a", "b", "c"], "v": [1, 2, 3]}, schema=SCHEMA))
    t.write(pa.table({"id": [2], "p": ["x"], "name": [None], "v": [None]}, schema=SCHEMA), row_kind="-D")
    assert [r["id"] for r in by_key(t.scan().to_arrow().to_pylist())] == [1, 3]
    ops = pa.table({"id": [1, 3, 4], "p": ["x"] * 3, "name": ["A", None, "d"], "v": [10, None, 4], "op": ["+U", "-D", "+I"]})
    t.write(ops, row_kind_column="op")
    assert by_key(t.scan().to_arrow().to_pylist()) == [
        {"id": 1, "p": "x", "name": "A", "v": 10},
        {"id": 4, "p": "x", "name": "d", "v": 4},
    ]
    codes = pa.table({"id": [4], "p": ["x"], "name": [None], "v": [None], "op": pa.array([3], pa.int8())})
    t.write(codes, row_kind_column="op")
    assert [r["id"] for r in t.scan().to_arrow().to_pylist()] == [1]
    with pytest.raises(strata.InvalidError):
        t.write(ops, row_kind="+X")
    with pytest.raises(strata.InvalidError):
        t.write(ops, row_kind="-D", row_kind_column="op")
    with pytest.raises(strata.InvalidError, match="nope"):
        t.write(ops, row_kind_column="nope")


@pytest.mark.parametrize("dv", [True, False])
def test_merge_engines(catalog, warehouse, dv):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("a", pa.int64()), ("b", pa.string())])
    dvo = {"deletion-vectors.enabled": str(dv).lower()}
    pu = catalog.create_table("db.pu", schema, primary_keys=["id"], options={"merge-engine": "partial-update", **dvo})
    pu.write({"id": [1, 2], "a": [10, 20], "b": [None, "x"]})
    pu.write({"id": [1, 2], "a": [None, 21], "b": ["y", None]})
    assert by_key(pu.scan().to_arrow().to_pylist()) == [{"id": 1, "a": 10, "b": "y"}, {"id": 2, "a": 21, "b": "x"}]
    agg = catalog.create_table(
        "db.agg", schema, primary_keys=["id"],
        options={"merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "last_non_null_value", **dvo},
    )
    for i in range(3):
        agg.write({"id": [1, 2], "a": [i, 10 * i], "b": [None, f"v{i}"]})
    assert by_key(agg.scan().to_arrow().to_pylist()) == [{"id": 1, "a": 3, "b": None}, {"id": 2, "a": 30, "b": "v2"}]
    first = catalog.create_table("db.first", schema, primary_keys=["id"], options={"merge-engine": "first-row"})
    first.write({"id": [1], "a": [1], "b": ["first"]})
    first.write({"id": [1, 2], "a": [2, 2], "b": ["second", "second"]})
    assert by_key(first.scan().to_arrow().to_pylist()) == [{"id": 1, "a": 1, "b": "first"}, {"id": 2, "a": 2, "b": "second"}]
    for name, table in [("pu", pu), ("agg", agg), ("first", first)]:
        assert by_key(pypaimon_read(warehouse, f"db.{name}")) == by_key(table.scan().to_arrow().to_pylist()), name


def test_polars_and_pandas_frames_and_readers_go_in(catalog):
    import pandas as pd
    import polars as pl

    t = catalog.create_table("db.frames", SCHEMA, primary_keys=["id"])
    t.write(pl.DataFrame({"id": [1], "p": ["x"], "name": ["pl"], "v": [1]}))
    t.write(pd.DataFrame({"id": [2], "p": ["x"], "name": ["pd"], "v": [2]}))
    reader = pa.RecordBatchReader.from_batches(SCHEMA, pa.table({"id": [3, 4], "p": ["x", "x"], "name": ["r", "r"], "v": [3, 4]}, schema=SCHEMA).to_batches(max_chunksize=1))
    t.write(reader)
    t.write(pa.record_batch({"id": [5], "p": ["x"], "name": ["b"], "v": [5]}, schema=SCHEMA))
    assert [r["id"] for r in by_key(t.scan().to_arrow().to_pylist())] == [1, 2, 3, 4, 5]
    assert t.scan().to_pandas().shape == (5, 4)
    assert t.scan(filter=("id", "=", 3)).to_polars().height == 1
