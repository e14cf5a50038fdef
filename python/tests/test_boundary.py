"""The boundary between Python and the engine: Arrow buffers cross without copies, the GIL is released while
the engine works, errors arrive as exceptions by kind, and names cannot leave the warehouse."""
import threading
import time

import pyarrow as pa
import pytest

import strata

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string()), ("v", pa.float64())])


def big_table(n):
    return pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array([f"row-{i}" for i in range(n)]), "v": pa.array([i * 0.5 for i in range(n)])})


def test_input_buffers_are_imported_without_copies():
    data = big_table(10_000).combine_chunks()
    seen = strata._strata.import_addresses(data)
    expected = [[b.address for b in col.chunk(0).buffers() if b is not None] for col in data.columns]
    assert [[a for a in col if a] for col in seen] == expected


def test_scans_come_out_without_copies_into_pyarrow(catalog):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2", "deletion-vectors.enabled": "true"})
    t.write(big_table(50_000))
    before = pa.total_allocated_bytes()
    out = t.scan().to_arrow()
    reader_rows = sum(b.num_rows for b in t.scan().to_reader())
    # Every buffer of the result was allocated by the engine and handed over: pyarrow's own pool grew by
    # nothing, although the result holds megabytes.
    assert out.num_rows == 50_000 and reader_rows == 50_000
    assert out.nbytes > 1_000_000
    assert pa.total_allocated_bytes() - before < 64 * 1024


def test_the_gil_is_released_while_the_engine_writes_and_reads(catalog):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    data = big_table(200_000)
    done = threading.Event()
    ticks = 0

    def work():
        t.write(data)
        t.scan().to_arrow()
        done.set()

    worker = threading.Thread(target=work)
    started = time.monotonic()
    worker.start()
    while not done.is_set():
        ticks += 1
    worker.join()
    elapsed = time.monotonic() - started
    # Holding the GIL for the whole call would leave this loop a handful of turns (one per switch interval
    # at most: 5 ms); released, it spins freely the whole time.
    assert ticks > 200 * max(1.0, elapsed / 0.005) or ticks > 100_000, (ticks, elapsed)


def test_errors_arrive_by_kind(catalog, warehouse):
    assert issubclass(strata.ConflictError, strata.StrataError)
    with pytest.raises(strata.NotFoundError):
        catalog.get_table("db.missing")
    with pytest.raises(strata.NotFoundError):
        catalog.create_table("nodb.t", SCHEMA, primary_keys=["id"])
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    with pytest.raises(strata.AlreadyExistsError):
        catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    assert catalog.create_table("db.t", SCHEMA, primary_keys=["id"], ignore_if_exists=True).path.endswith("db.db/t")
    with pytest.raises(strata.InvalidError, match="did you mean"):
        catalog.create_table("db.u", SCHEMA, primary_keys=["id"], options={"buckett": "2"})
    with pytest.raises(strata.InvalidError):
        catalog.create_table("db.u", SCHEMA, primary_keys=["nope"])
    t = catalog.get_table("db.t")
    with pytest.raises(strata.InvalidError, match="NOT NULL"):
        t.write({"s": ["no id"]})
    with pytest.raises(strata.InvalidError):
        t.scan(filter=[("nope", "=", 1)])
    with pytest.raises(strata.InvalidError):
        t.scan(filter=[("id", "~", 1)])
    with pytest.raises(strata.InvalidError):
        t.scan(filter=[("id", "=", "not a number")])
    with pytest.raises(strata.NotFoundError):
        t.scan(snapshot=99).to_arrow()
    with pytest.raises(strata.InvalidError):
        t.get([("too", "many")])
    with pytest.raises(strata.InvalidError):
        t.write([1, 2, 3])


@pytest.mark.parametrize("name", ["../x.t", "db.../x", "db./etc", ".hidden.t", "db.t.u", "db."])
def test_names_cannot_leave_the_warehouse(catalog, name):
    with pytest.raises(strata.InvalidError):
        catalog.create_table(name, SCHEMA, primary_keys=["id"])
    with pytest.raises(strata.InvalidError):
        catalog.get_table(name)
    with pytest.raises(strata.InvalidError):
        catalog.drop_table(name)


def test_drop_table_removes_a_table_and_nothing_else(catalog, warehouse, tmp_path):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    t.write({"id": [1], "s": ["a"], "v": [1.0]})
    (tmp_path / "wh" / "db.db" / "notatable").mkdir()
    (tmp_path / "wh" / "db.db" / "notatable" / "precious.txt").write_text("keep me")
    catalog.drop_table("db.t")
    assert catalog.list_tables("db") == []
    with pytest.raises(strata.InvalidError):
        catalog.drop_table("db.notatable")
    assert (tmp_path / "wh" / "db.db" / "notatable" / "precious.txt").read_text() == "keep me"
    with pytest.raises(strata.NotFoundError):
        catalog.drop_table("db.t")
    catalog.drop_table("db.t", ignore_if_not_exists=True)


def test_maintenance_and_a_pickled_table_reopens(catalog):
    import pickle

    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"snapshot.num-retained.min": "1"})
    for i in range(4):
        t.write({"id": [i], "s": [str(i)], "v": [float(i)]})
    assert t.snapshot_id == 4  # merge-on-read: one APPEND snapshot per write
    report = t.expire(retain_max=2, retain_min=1, dry_run=True)
    assert report["dry_run"] and report["snapshots"] == [1, 2]
    assert t.expire(retain_max=2, retain_min=1)["snapshots"] == [1, 2]
    assert [s["id"] for s in t.inspect()["snapshots"]] == [3, 4]
    assert t.clean(older_than="0 s", dry_run=True)["dry_run"]
    again = pickle.loads(pickle.dumps(t))
    assert again.path == t.path and again.scan().count() == 4
    assert catalog.list_tables("db") == ["t"] and "db" in catalog.list_databases()


def test_a_column_the_table_lacks_is_refused_not_dropped(catalog):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"])
    with pytest.raises(strata.InvalidError, match="did you mean 's'"):
        t.write({"id": [1], "S": ["typo"], "v": [1.0]})
    with pytest.raises(strata.InvalidError, match="not a column"):
        t.write({"id": [1], "s": ["a"], "extra": [1]})
    assert t.snapshot_id is None
