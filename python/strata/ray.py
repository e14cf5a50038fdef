"""Strata on Ray: a table's buckets compacted as Ray tasks, and Ray Datasets written with each row routed to
its bucket's writer, each job committed once by the driver (as Paimon's Flink and Spark jobs run writer
operators feeding one committer).

What runs where:

- Workers open the table themselves (a ``strata.Table`` pickles as its path and store options), so the
  table must be reachable from every node: an object store URI, or a shared file system.
- Each unit of work (one bucket; for rows of a dynamic-bucket table, one partition) is written or compacted
  by exactly one task, which returns serialized commit messages and commits nothing.
- The driver commits every task's messages in one commit. If a task fails (an error, a killed worker with no
  retry left), nothing is committed: the other tasks run to their end and their messages are aborted (their
  files removed), and a killed task's partial files are orphans that ``Table.clean`` removes. Running the job
  again is safe. A concurrent commit that compacted the same buckets makes the commit a ``ConflictError``.

Requires ``ray`` (``pip install 'strata[ray]'``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import pyarrow as pa
import ray

from . import BucketUnit, CommitMessages, CommitResult, Table

UNIT_COLUMN = "__strata_unit__"


def _balance(units: Sequence[BucketUnit], tasks: int) -> List[List[BucketUnit]]:
    """``units`` in at most ``tasks`` groups of about equal bytes (largest first, each to the lightest group)."""
    groups: List[List[BucketUnit]] = [[] for _ in range(max(1, min(tasks, len(units))))]
    weights = [0] * len(groups)
    for u in sorted(units, key=lambda u: u.bytes, reverse=True):
        i = weights.index(min(weights))
        groups[i].append(u)
        weights[i] += max(u.bytes, 1)
    return [g for g in groups if g]


def _compact_task(table: Table, units: List[BucketUnit], full: bool, before: Optional[Callable[[List[BucketUnit]], None]]) -> bytes:
    if before is not None:
        before(units)
    return table.compact_units(units, full=full).data


def _gather(table: Table, refs: List["ray.ObjectRef"]) -> List[CommitMessages]:
    """Every task's messages; when one fails, whatever the others wrote is aborted and the failure raised. The
    others are waited for, not cancelled: a task killed while it runs leaves the files it wrote behind, with
    no messages to abort them by."""
    done: List[CommitMessages] = []
    failure: Optional[BaseException] = None
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        try:
            done.append(CommitMessages(ray.get(ready[0])))
        except BaseException as e:  # noqa: BLE001 (a task's failure, whatever it is, ends the job)
            if failure is None:
                failure = e
    if failure is not None:
        table.abort(done)
        raise failure
    return done


def compact(
    table: Table,
    *,
    full: bool = False,
    num_tasks: Optional[int] = None,
    max_retries: int = 3,
    ray_remote_args: Optional[Dict[str, Any]] = None,
    before_task: Optional[Callable[[List[BucketUnit]], None]] = None,
) -> Optional[CommitResult]:
    """Compacts every bucket of ``table`` as Ray tasks (``num_tasks``, default one per CPU of the cluster,
    buckets balanced by bytes) and commits once: one COMPACT snapshot. ``full`` compacts every level of a
    bucket into one run. A task killed with no retry left (``max_retries``) fails the job with nothing
    committed. ``before_task`` runs in each task before it compacts (a hook for instrumentation and fault
    tests). Returns the commit's snapshots, ``None`` when there was nothing to compact."""
    units = table.bucket_units()
    if not units:
        return None
    tasks = num_tasks or max(1, int(ray.cluster_resources().get("CPU", 1)))
    remote = ray.remote(_compact_task).options(max_retries=max_retries, **(ray_remote_args or {}))
    refs = [remote.remote(table, group, full, before_task) for group in _balance(units, tasks)]
    return table.commit(_gather(table, refs))


def write(
    dataset: "ray.data.Dataset",
    table: Table,
    *,
    row_kind: Optional[str] = None,
    row_kind_column: Optional[str] = None,
) -> Optional[CommitResult]:
    """Writes a Ray Dataset into ``table`` and commits once. Each row is routed by Paimon's bucket function to
    its unit (partition and bucket; a whole partition in a dynamic-bucket table), the rows of each unit are
    grouped, and one task writes each group (flush, and in deletion-vector mode the level-0 compaction) and
    returns its messages; the driver commits them all: an APPEND snapshot with every row, then a COMPACT one.
    ``row_kind`` and ``row_kind_column`` are as in ``Table.write``. If the job fails nothing is committed
    (files of finished groups are then orphans that ``Table.clean`` removes)."""

    def add_unit(batch: pa.Table) -> pa.Table:
        with table.new_write() as w:
            return batch.append_column(UNIT_COLUMN, w.unit_ids(batch))

    def write_group(group: pa.Table) -> pa.Table:
        with table.new_write() as w:
            w.write(group.drop_columns([UNIT_COLUMN]), row_kind=row_kind, row_kind_column=row_kind_column)
            messages = w.prepare_commit()
        return pa.table({"messages": pa.array([messages.data], pa.binary())})

    routed = dataset.map_batches(add_unit, batch_format="pyarrow")
    written = routed.groupby(UNIT_COLUMN).map_groups(write_group, batch_format="pyarrow")
    messages = [CommitMessages(row["messages"]) for row in written.take_all()]
    # A commit that fails without landing removes the messages' files itself.
    return table.commit(messages) if messages else None
