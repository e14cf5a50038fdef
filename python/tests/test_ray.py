"""strata.ray on a local Ray cluster of several workers: a 4-bucket table written by pypaimon compacted as
Ray tasks in one commit, equal to the model; a worker killed mid-task leaves no commit (and no files of the
tasks that finished) and a rerun succeeds; a Ray Dataset written with rows routed to their buckets, one commit."""
import os

import pyarrow as pa
import pytest

ray = pytest.importorskip("ray")

import strata  # noqa: E402
import strata.ray  # noqa: E402
from conftest import by_key, model_rows, pypaimon_create, pypaimon_read, pypaimon_write  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("v", pa.int64())])


@pytest.fixture(scope="module", autouse=True)
def cluster():
    # Loopback only; workers import this module's hooks from the tests directory.
    ray.init(
        num_cpus=4,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        _node_ip_address="127.0.0.1",
        runtime_env={"env_vars": {"PYTHONPATH": os.path.dirname(os.path.abspath(__file__))}},
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def pypaimon_table(warehouse, rng, dv=True):
    pt = pypaimon_create(warehouse, "db.t", SCHEMA, ["id"], options={"bucket": "4", "deletion-vectors.enabled": str(dv).lower()})
    model = {}
    for _ in range(4):
        rows = [(rng.randrange(2000), f"n{rng.randrange(10**6)}", rng.randrange(10**6)) for _ in range(500)]
        pypaimon_write(pt, pa.table({c: [r[k] for r in rows] for k, c in enumerate(SCHEMA.names)}, schema=SCHEMA))
        for r in rows:
            model[r[0]] = r
    return strata.Table.open(f"{warehouse}/db.db/t"), model_rows(model, SCHEMA.names)


def kinds_after(table, snapshot):
    return [s["commitKind"] for s in table.inspect()["snapshots"] if s["id"] > snapshot]


class RecordPid:
    """A before_task hook: notes which worker process ran each task."""

    def __init__(self, directory):
        self.directory = directory

    def __call__(self, units):
        with open(os.path.join(self.directory, f"pid-{os.getpid()}-{units[0].bucket}"), "w") as f:
            f.write(str(len(units)))


class KillOn:
    """A before_task hook: the worker process dies (no exception, no cleanup) when its task holds `bucket`;
    with `once`, only the first time (a marker file remembers)."""

    def __init__(self, bucket, marker=None):
        self.bucket, self.marker = bucket, marker

    def __call__(self, units):
        if any(u.bucket == self.bucket for u in units):
            if self.marker is None or not os.path.exists(self.marker):
                if self.marker is not None:
                    open(self.marker, "w").close()
                os._exit(9)


def test_ray_compacts_a_pypaimon_table_in_one_commit(warehouse, rng, tmp_path):
    table, expected = pypaimon_table(warehouse, rng)
    assert pypaimon_read(warehouse, "db.t") == []  # level 0 only: invisible to deletion-vector readers
    before = table.snapshot_id
    pids = tmp_path / "pids"
    pids.mkdir()
    result = strata.ray.compact(table, num_tasks=4, before_task=RecordPid(str(pids)))
    assert kinds_after(table, before) == ["COMPACT"] and result.snapshot == before + 1
    assert len({p.name.split("-")[1] for p in pids.iterdir()}) >= 2, "the buckets were compacted by several workers"
    assert by_key(pypaimon_read(warehouse, "db.t")) == expected
    assert by_key(table.scan().to_arrow().to_pylist()) == expected
    strata.ray.compact(table, full=True)  # nothing or a full rewrite: the rows stay the same
    assert by_key(pypaimon_read(warehouse, "db.t")) == expected


def test_a_killed_worker_leaves_no_commit_and_a_rerun_succeeds(warehouse, rng, tmp_path):
    table, expected = pypaimon_table(warehouse, rng)
    before = table.snapshot_id
    with pytest.raises(Exception):
        strata.ray.compact(table, num_tasks=4, max_retries=0, before_task=KillOn(bucket=2))
    assert table.snapshot_id == before
    assert pypaimon_read(warehouse, "db.t") == []
    # The tasks that finished had their files removed: nothing in the table is unreferenced.
    leftover = table.clean(older_than="0 s", dry_run=True)
    assert leftover["data_files"] == [] and leftover["index_files"] == []
    # A rerun succeeds; so does a job whose killed task Ray retries.
    strata.ray.compact(table, num_tasks=4)
    assert kinds_after(table, before) == ["COMPACT"]
    assert by_key(pypaimon_read(warehouse, "db.t")) == expected


def test_a_killed_worker_retried_by_ray_still_commits_once(warehouse, rng, tmp_path):
    table, expected = pypaimon_table(warehouse, rng, dv=False)
    before = table.snapshot_id
    strata.ray.compact(table, num_tasks=4, full=True, max_retries=2, before_task=KillOn(bucket=1, marker=str(tmp_path / "killed")))
    assert (tmp_path / "killed").exists()
    assert kinds_after(table, before) == ["COMPACT"]
    assert by_key(pypaimon_read(warehouse, "db.t")) == expected


@pytest.mark.parametrize("dv", [True, False])
def test_ray_writes_a_dataset_routed_by_bucket_in_one_commit(catalog, warehouse, rng, dv):
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("p", pa.string(), False), ("v", pa.int64())])
    t = catalog.create_table("db.w", schema, primary_keys=["id", "p"], partition_keys=["p"], options={"bucket": "4", "deletion-vectors.enabled": str(dv).lower()})
    t.write({"id": [1, 2], "p": ["a", "b"], "v": [-1, -2]})
    model = {(1, "a"): (1, "a", -1), (2, "b"): (2, "b", -2)}
    rows = [(rng.randrange(3000), rng.choice("abc"), rng.randrange(10**6)) for _ in range(4000)]
    # Keys written once each, so the model does not depend on the order rows of one key reach their writer.
    rows = list({(r[0], r[1]): r for r in rows}.values())
    data = pa.table({c: [r[k] for r in rows] for k, c in enumerate(schema.names)}, schema=schema)
    ds = ray.data.from_arrow(data).repartition(8)
    before = t.snapshot_id
    result = strata.ray.write(ds, t)
    assert kinds_after(t, before) == (["APPEND", "COMPACT"] if dv else ["APPEND"])
    assert result.append == before + 1
    for r in rows:
        model[(r[0], r[1])] = r
    expected = model_rows(model, schema.names)
    assert by_key(t.scan().to_arrow().to_pylist(), ("id", "p")) == expected
    assert by_key(pypaimon_read(warehouse, "db.w"), ("id", "p")) == expected
