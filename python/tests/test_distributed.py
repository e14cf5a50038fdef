"""Writes and compactions spread over processes, committed once: serialized commit messages made by worker
processes and committed by one committer; what a committer must refuse (two writers of one bucket, a message
of another table, flipped bytes); abort; idempotent recommit."""
import multiprocessing

import pyarrow as pa
import pytest

import strata
from conftest import by_key, model_rows, pypaimon_read

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), pa.field("p", pa.string(), False), ("v", pa.int64())])


def _worker_write(table, rows):
    """A worker process: writes its rows and returns the serialized messages (nothing committed)."""
    with table.new_write() as w:
        w.write(pa.table(rows, schema=SCHEMA))
        return w.prepare_commit()


def _worker_compact(table, units):
    return table.compact_units(units, full=True)


def _snapshot_kinds(table, after):
    return [s["commitKind"] for s in table.inspect()["snapshots"] if s["id"] > after]


@pytest.mark.parametrize("dv", [True, False])
def test_worker_processes_write_and_compact_one_committer_commits_once(catalog, warehouse, rng, dv):
    t = catalog.create_table(
        "db.t", SCHEMA, primary_keys=["id", "p"], partition_keys=["p"],
        options={"bucket": "4", "deletion-vectors.enabled": str(dv).lower()},
    )
    model = {}
    first = [(i, rng.choice("ab"), i) for i in range(400)]
    t.write(pa.table({c: [r[k] for r in first] for k, c in enumerate(SCHEMA.names)}, schema=SCHEMA))
    for r in first:
        model[(r[0], r[1])] = r
    # New rows routed to units; each unit's rows to one of three workers.
    rows = [(rng.randrange(600), rng.choice("ab"), rng.randrange(10**6)) for _ in range(900)]
    data = pa.table({c: [r[k] for r in rows] for k, c in enumerate(SCHEMA.names)}, schema=SCHEMA)
    with t.new_write() as router:
        ids = router.unit_ids(data).to_pylist()
    units = sorted(set(ids))
    assert 2 <= len(units) <= 8
    shares = [[] for _ in range(3)]
    for i, r in zip(ids, rows):
        shares[units.index(i) % 3].append(r)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        messages = pool.starmap(
            _worker_write, [(t, {c: [r[k] for r in share] for k, c in enumerate(SCHEMA.names)}) for share in shares]
        )
    before = t.snapshot_id
    result = t.commit(messages)
    # One commit: its APPEND snapshot and, in deletion-vector mode, the workers' level-0 compactions.
    assert _snapshot_kinds(t, before) == (["APPEND", "COMPACT"] if dv else ["APPEND"])
    assert result.append == before + 1
    for r in rows:
        model[(r[0], r[1])] = r
    expected = model_rows(model, SCHEMA.names)
    assert by_key(t.scan().to_arrow().to_pylist(), ("id", "p")) == expected
    assert by_key(pypaimon_read(warehouse, "db.t"), ("id", "p")) == expected
    # pypaimon adds level-0 files (it never compacts); then a spread compaction: units split over two
    # workers, one commit.
    from conftest import pypaimon_write
    from pypaimon import CatalogFactory

    pt = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
    for _ in range(2):
        more = [(rng.randrange(600), rng.choice("ab"), -rng.randrange(10**6)) for _ in range(300)]
        pypaimon_write(pt, pa.table({c: [r[k] for r in more] for k, c in enumerate(SCHEMA.names)}, schema=SCHEMA))
        for r in more:
            model[(r[0], r[1])] = r
    expected = model_rows(model, SCHEMA.names)
    bucket_units = t.bucket_units()
    assert any(u.files > 1 for u in bucket_units)
    halves = [bucket_units[0::2], bucket_units[1::2]]
    with ctx.Pool(2) as pool:
        messages = pool.starmap(_worker_compact, [(t, h) for h in halves])
    before = t.snapshot_id
    t.commit(messages)
    assert _snapshot_kinds(t, before) == ["COMPACT"]
    assert all(u.files == 1 for u in t.bucket_units())
    assert by_key(t.scan().to_arrow().to_pylist(), ("id", "p")) == expected
    assert by_key(pypaimon_read(warehouse, "db.t"), ("id", "p")) == expected


def test_two_writers_of_one_bucket_are_refused_and_abort_removes_their_files(catalog, tmp_path):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "p"], options={"bucket": "1"})
    a, b = t.new_write(), t.new_write()
    a.write({"id": [1], "p": ["x"], "v": [1]})
    b.write({"id": [1], "p": ["x"], "v": [2]})
    ma, mb = a.prepare_commit(), b.prepare_commit()
    with pytest.raises(strata.InvalidError, match="one writer"):
        t.commit([ma, mb])
    assert t.snapshot_id is None
    files = lambda: sorted(p.name for p in (tmp_path / "wh" / "db.db" / "t").rglob("data-*"))
    assert len(files()) >= 2
    t.abort([ma, mb])
    assert files() == []
    a.close(), b.close()


def test_bad_messages_are_refused_before_anything_is_written(catalog):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "p"])
    other = catalog.create_table("db.other", SCHEMA, primary_keys=["id", "p"])
    with other.new_write() as w:
        w.write({"id": [1], "p": ["x"], "v": [1]})
        foreign = w.prepare_commit()
    with pytest.raises(strata.InvalidError, match="does not exist"):
        t.commit([foreign])
    raw = bytearray(foreign.data)
    for at in (0, 9, 13, len(raw) // 2, len(raw) - 1):
        bad = bytearray(raw)
        bad[at] ^= 0x10
        with pytest.raises((strata.CorruptError, strata.UnsupportedError)):
            other.commit([bytes(bad)])
    assert t.snapshot_id is None and other.snapshot_id is None
    assert other.commit([foreign]).append == 1


def test_a_commit_with_user_and_identifier_lands_once(catalog):
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "p"], options={"deletion-vectors.enabled": "true"})
    with t.new_write() as w:
        w.write({"id": [1, 2], "p": ["x", "x"], "v": [1, 2]})
        m = w.prepare_commit()
    first = t.commit([m], commit_user="job-7", identifier=42)
    again = t.commit([m], commit_user="job-7", identifier=42)
    assert again.snapshot == first.snapshot
    assert len(t.inspect()["snapshots"]) == 2
    with pytest.raises(strata.InvalidError):
        t.commit([m], identifier=43)
