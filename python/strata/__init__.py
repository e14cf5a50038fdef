"""Strata from Python: Apache Paimon primary-key tables with deletion vectors, written, compacted, scanned
and looked up by Strata's native engine.

Arrow data crosses into and out of the engine through the Arrow C stream interface, without copies:
``pyarrow`` tables, record batches and readers, polars and pandas frames (anything with
``__arrow_c_stream__``) go in; scans come out as ``pyarrow.Table`` or ``pyarrow.RecordBatchReader``.
Every call that reads or writes storage releases the GIL.

>>> import pyarrow as pa, strata
>>> catalog = strata.Catalog("/tmp/warehouse"); catalog.create_database("db")
>>> t = catalog.create_table("db.users", pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string())]),
...                          primary_keys=["id"], options={"bucket": "2", "deletion-vectors.enabled": "true"})
>>> t.write(pa.table({"id": [1, 2], "name": ["ada", "bob"]}))
>>> t.scan(filter=[("id", ">", 1)]).to_arrow()

Errors are ``StrataError`` subclasses by kind: ``NotFoundError``, ``AlreadyExistsError``, ``InvalidError``,
``CorruptError``, ``ConflictError`` (another commit won; nothing was committed: write again),
``UnsupportedError``, ``StrataIOError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _strata
from ._strata import (
    AlreadyExistsError,
    ConflictError,
    CorruptError,
    InvalidError,
    NotFoundError,
    StrataError,
    StrataIOError,
    UnsupportedError,
)

__version__ = _strata.__version__

__all__ = [
    "Catalog",
    "Table",
    "TableWrite",
    "Scan",
    "Query",
    "CommitMessages",
    "CommitResult",
    "BucketUnit",
    "StrataError",
    "StrataIOError",
    "NotFoundError",
    "AlreadyExistsError",
    "CorruptError",
    "InvalidError",
    "ConflictError",
    "UnsupportedError",
]

# A filter: a list of (column, op, value) terms, all of which hold; or a list of such lists, any of which
# holds (pyarrow.parquet's DNF convention). Ops: = == != <> < <= > >= in "not in" is_null is_not_null.
Filter = Union[Sequence[Tuple[Any, ...]], Sequence[Sequence[Tuple[Any, ...]]]]

_OPS = {"=", "==", "!=", "<>", "<", "<=", ">", ">=", "in", "not in", "is_null", "is_not_null"}


@dataclass(frozen=True)
class CommitResult:
    """The snapshots one commit made: ``append`` holds the written rows (``None`` when the commit only
    compacted), ``snapshot`` is the last one (the compaction's, when it compacted)."""

    append: Optional[int]
    snapshot: int


def _result(native: Optional[Tuple[Optional[int], int]]) -> Optional[CommitResult]:
    return None if native is None else CommitResult(append=native[0], snapshot=native[1])


@dataclass(frozen=True)
class CommitMessages:
    """Serialized commit messages of one writer or compactor (Paimon's ``CommitMessage``s, with a checksum):
    hand them, from any process, to ``Table.commit`` to commit, or to ``Table.abort`` to throw them away.
    Plain bytes inside, so they pickle and travel through Ray, queues or object stores."""

    data: bytes

    def __bytes__(self) -> bytes:
        return self.data


@dataclass(frozen=True)
class BucketUnit:
    """A bucket holding live files: the unit of a spread compaction. ``partition`` is Paimon's serialized
    ``BinaryRow`` of the partition values."""

    partition: bytes
    bucket: int
    files: int
    bytes: int


def _split_identifier(identifier: str) -> Tuple[str, str]:
    parts = identifier.split(".")
    if len(parts) != 2 or not all(parts):
        raise InvalidError(f"table identifier {identifier!r}: expected 'database.table'")
    return parts[0], parts[1]


def _as_stream(data: Any) -> Any:
    """``data`` as an object exporting an Arrow stream (``__arrow_c_stream__``), without copying where it
    already is one."""
    if hasattr(data, "__arrow_c_stream__"):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, dict):
        return pa.table(data)
    if isinstance(data, (list, tuple)) and data and all(isinstance(b, pa.RecordBatch) for b in data):
        return pa.Table.from_batches(list(data))
    try:
        import pandas  # noqa: F401  (only to recognise frames of pandas versions without the stream protocol)

        if isinstance(data, pandas.DataFrame):
            return pa.Table.from_pandas(data, preserve_index=False)
    except ImportError:
        pass
    raise InvalidError(
        f"cannot write a {type(data).__name__}: pass a pyarrow Table, RecordBatch or RecordBatchReader, a dict of "
        "columns, or any object exporting an Arrow stream (__arrow_c_stream__)"
    )


def _value_array(value: Any, arrow_type: pa.DataType) -> pa.Array:
    try:
        return pa.array([value], type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as e:
        raise InvalidError(f"value {value!r} is not a {arrow_type}: {e}") from None


def _filter_dnf(schema: pa.Schema, filter: Optional[Filter]) -> Optional[List[List[Tuple[str, str, Any]]]]:
    """A filter as the native scan takes it: a list of conjunctions of (column, op, one-value array)."""
    if filter is None:
        return None
    if isinstance(filter, tuple):
        filter = [filter]
    filter = list(filter)
    if not filter:
        return None
    conjunctions = [list(c) for c in filter] if isinstance(filter[0], list) else [filter]
    dnf: List[List[Tuple[str, str, Any]]] = []
    for conjunction in conjunctions:
        terms: List[List[Tuple[str, str, Any]]] = [[]]
        for term in conjunction:
            if not isinstance(term, tuple) or len(term) not in (2, 3):
                raise InvalidError(f"filter term {term!r}: expected (column, op, value) or (column, 'is_null')")
            column, op = term[0], term[1]
            if op not in _OPS:
                raise InvalidError(f"filter term {term!r}: unknown operator {op!r}")
            if column not in schema.names:
                raise InvalidError(f"filter term {term!r}: the table has no column {column!r}")
            arrow_type = schema.field(column).type
            if op in ("is_null", "is_not_null"):
                for t in terms:
                    t.append((column, op, None))
                continue
            if len(term) != 3:
                raise InvalidError(f"filter term {term!r}: {op!r} needs a value")
            value = term[2]
            if op in ("in", "not in"):
                values = list(value)
                if op == "not in":
                    for t in terms:
                        t.extend((column, "!=", _value_array(v, arrow_type)) for v in values)
                else:
                    # An IN list multiplies the conjunction out: one conjunction per value.
                    terms = [t + [(column, "=", _value_array(v, arrow_type))] for t in terms for v in values]
                continue
            for t in terms:
                t.append((column, op, _value_array(value, arrow_type)))
        dnf.extend(terms)
    return dnf


class Catalog:
    """Databases and tables under a warehouse: a local directory or an object store URI (``s3://bucket/wh``,
    ``gs://``, ``az://``, ``oss://``). ``options`` are store options by Paimon's names (``s3.endpoint``,
    ``s3.access-key``, ``s3.secret-key``, ``s3.region``, ``s3.path-style-access``); credentials also come
    from the usual environment variables. Tables are ``<warehouse>/<db>.db/<table>``, as Paimon's
    filesystem catalog lays them out, so pypaimon, paimon-rust, Flink and Spark open them too."""

    def __init__(self, warehouse: str, options: Optional[Mapping[str, str]] = None) -> None:
        self._options = {str(k): str(v) for k, v in (options or {}).items()}
        self._native = _strata.NativeCatalog(str(warehouse), self._options)

    @property
    def warehouse(self) -> str:
        return self._native.warehouse

    def create_database(self, name: str, ignore_if_exists: bool = True) -> None:
        """Creates database ``name``."""
        self._native.create_database(name, ignore_if_exists)

    def list_databases(self) -> List[str]:
        return self._native.list_databases()

    def list_tables(self, database: str) -> List[str]:
        return self._native.list_tables(database)

    def create_table(
        self,
        identifier: str,
        schema: Union[pa.Schema, str],
        primary_keys: Sequence[str],
        partition_keys: Sequence[str] = (),
        options: Optional[Mapping[str, str]] = None,
        ignore_if_exists: bool = False,
        allow_unknown_options: bool = False,
    ) -> "Table":
        """Creates table ``"db.name"`` with the columns of ``schema`` (a ``pyarrow.Schema``, or a column list
        such as ``"id BIGINT NOT NULL, v STRING"``). Arrow types map to Paimon's (int64 to BIGINT, string to
        STRING, timestamp("us") to TIMESTAMP(6), a zoned timestamp to TIMESTAMP WITH LOCAL TIME ZONE,
        decimal128 to DECIMAL, ...); non-nullable fields are NOT NULL, and so are primary-key columns.
        Without ``primary_keys``, an append table (rows kept in arrival order, duplicates included).
        ``options`` are Paimon table options (``bucket``, default 1, or -1 for an append table;
        ``deletion-vectors.enabled``;
        ``merge-engine``; ...); unknown keys are refused unless ``allow_unknown_options``."""
        db, name = _split_identifier(identifier)
        native = self._native.create_table(
            db,
            name,
            schema,
            list(primary_keys),
            list(partition_keys),
            {str(k): str(v) for k, v in (options or {}).items()},
            ignore_if_exists,
            allow_unknown_options,
        )
        return Table(native)

    def get_table(self, identifier: str) -> "Table":
        """Opens table ``"db.name"``."""
        db, name = _split_identifier(identifier)
        return Table(self._native.get_table(db, name))

    def drop_table(self, identifier: str, ignore_if_not_exists: bool = False) -> None:
        """Removes table ``"db.name"`` and all its files (a directory holding no table is never touched)."""
        db, name = _split_identifier(identifier)
        self._native.drop_table(db, name, ignore_if_not_exists)


class Table:
    """A Paimon primary-key table. Each ``write``, ``delete`` and ``compact`` call is one commit; for a
    writer feeding a commit someone else makes (another process, a distributed job) use ``new_write``.
    A ``Table`` pickles as its path and store options, and opens again wherever it is unpickled."""

    def __init__(self, native: "_strata.NativeTable") -> None:
        self._native = native
        # A Table's schema is fixed (``reload`` opens a new one): made once, as lookups take microseconds.
        self._schema: Optional[pa.Schema] = None
        self._key_schema: Optional[pa.Schema] = None
        self._primary_keys: Optional[List[str]] = None

    @staticmethod
    def open(path: str, options: Optional[Mapping[str, str]] = None) -> "Table":
        """Opens the table at ``path`` (a directory or a store URI) directly, without a catalog."""
        return Table(_strata.NativeTable.open(str(path), {str(k): str(v) for k, v in (options or {}).items()}))

    def __reduce__(self) -> Tuple[Any, ...]:
        return (Table.open, (self._native.path, self._native.store_options))

    def __repr__(self) -> str:
        return f"strata.Table({self.path!r})"

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def schema(self) -> pa.Schema:
        """The rows' ``pyarrow.Schema`` (what scans return)."""
        if self._schema is None:
            self._schema = self._native.arrow_schema
        return self._schema

    @property
    def primary_keys(self) -> List[str]:
        if self._primary_keys is None:
            self._primary_keys = list(self._native.primary_keys)
        return list(self._primary_keys)

    @property
    def partition_keys(self) -> List[str]:
        return self._native.partition_keys

    @property
    def options(self) -> Dict[str, str]:
        return self._native.options

    @property
    def snapshot_id(self) -> Optional[int]:
        """The latest snapshot's id (``None`` before the first commit)."""
        return self._native.latest_snapshot_id()

    def reload(self) -> "Table":
        """The table opened again (after another process altered its schema)."""
        return Table.open(self._native.path, self._native.store_options)

    # Writing.

    def write(self, data: Any, row_kind: Optional[str] = None, row_kind_column: Optional[str] = None) -> Optional[CommitResult]:
        """Writes ``data`` (a pyarrow Table, RecordBatch or RecordBatchReader, a dict of columns, a polars or
        pandas frame: anything exporting an Arrow stream) and commits once. Columns go by name; nullable
        columns may be missing. Values are taken exactly or refused (an int64 value too large for an INT
        column, a fraction for a BIGINT, a string longer than VARCHAR(n): ``InvalidError``, and nothing is
        committed). Every row is an insert (``+I``) unless ``row_kind`` gives one kind for all rows
        (``"+I"``, ``"-U"``, ``"+U"``, ``"-D"``) or ``row_kind_column`` names a column of ``data`` holding each
        row's kind (strings, or int8 0-3; the column is not written), or the table sets ``rowkind.field``.
        The rows are flushed, compacted (deletion-vector tables: older copies marked in deletion vectors) and
        committed as Paimon does: an APPEND snapshot, then a COMPACT one. Returns the snapshots made."""
        return _result(self._native.write(_as_stream(data), row_kind, row_kind_column))

    def delete(self, keys: Any) -> Optional[CommitResult]:
        """Deletes the rows with the given primary keys and commits once. ``keys``: a list of key values
        (tuples for a key of several columns), or a table/dict with the primary-key columns."""
        return _result(self._native.delete(self._key_table(keys)))

    def new_write(self) -> "TableWrite":
        """A writer whose messages someone else commits (see ``TableWrite``)."""
        return TableWrite(self)

    def commit(
        self,
        messages: Iterable[Union[CommitMessages, bytes]],
        commit_user: Optional[str] = None,
        identifier: Optional[int] = None,
    ) -> Optional[CommitResult]:
        """Commits the messages of any number of writers and compactors, from any processes, in one commit
        (an APPEND snapshot with the rows, a COMPACT one with the compactions). Refused before anything is
        written (``InvalidError``) when two messages name one bucket (each bucket must be written by one
        writer per commit: route rows with ``TableWrite.unit_ids``), a bucket is not the table's, or a file a
        message adds is missing. On a conflict (``ConflictError``) nothing is committed and the messages'
        files are removed. With ``commit_user`` and ``identifier``, calling again after a lost outcome never
        commits twice."""
        return _result(self._native.commit([bytes(m) for m in messages], commit_user, identifier))

    def abort(self, messages: Iterable[Union[CommitMessages, bytes]]) -> None:
        """Throws messages away: removes the files they added that no snapshot references."""
        self._native.abort([bytes(m) for m in messages])

    # Compaction and maintenance.

    def compact(self, full: bool = False, delete_ratio_threshold: Optional[float] = None) -> Optional[CommitResult]:
        """Compacts every bucket and commits once: what the table's strategy picks, every level into one run
        per bucket with ``full``, and files at least ``delete_ratio_threshold`` deleted rewritten. This is
        what makes a deletion-vector table written by pypaimon (level 0 only) visible to readers. In a
        postpone-bucket table it also moves the postponed rows into real buckets."""
        return _result(self._native.compact(full, delete_ratio_threshold))

    def bucket_units(self, snapshot: Optional[int] = None) -> List[BucketUnit]:
        """The buckets with live files: the units a spread compaction hands out."""
        return [BucketUnit(*u) for u in self._native.bucket_units(snapshot)]

    def compact_units(self, units: Iterable[Union[BucketUnit, Tuple[bytes, int]]], full: bool = False) -> CommitMessages:
        """Compacts the given buckets and returns their messages, uncommitted (for ``commit``)."""
        pairs = [(u.partition, u.bucket) if isinstance(u, BucketUnit) else (bytes(u[0]), int(u[1])) for u in units]
        return CommitMessages(self._native.compact_units(pairs, full))

    def expire(
        self,
        retain_max: Optional[int] = None,
        retain_min: Optional[int] = None,
        older_than: Optional[str] = None,
        dry_run: bool = False,
    ) -> Dict[str, Any]:
        """Expires snapshots beyond ``retain_max`` or older than ``older_than`` ("1 h", "2 d"), keeping at
        least ``retain_min`` (defaults: the table's ``snapshot.*`` options), and the files only they held;
        tags and consumers are honoured. Returns what was (with ``dry_run``, would be) removed."""
        return self._native.expire(retain_max, retain_min, older_than, dry_run)

    def clean(self, older_than: str = "1 d", dry_run: bool = False) -> Dict[str, Any]:
        """Removes files of the table's layout that nothing references and that are older than
        ``older_than`` (files of failed or abandoned writes). Returns what was (would be) removed."""
        return self._native.clean(older_than, dry_run)

    def inspect(self, snapshot: Optional[int] = None) -> Dict[str, Any]:
        """The schema, snapshots and, per partition, bucket and level, the live files (``strata inspect``)."""
        return json.loads(self._native.inspect(snapshot))

    # Reading.

    def scan(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[Filter] = None,
        snapshot: Optional[int] = None,
        tag: Optional[str] = None,
        timestamp_millis: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> "Scan":
        """A read of the table: ``columns`` (all by default), rows matching ``filter`` (e.g.
        ``[("id", ">=", 10), ("v", "in", ["a", "b"])]``; a list of such lists is an OR of them), as of
        ``snapshot``, ``tag`` or ``timestamp_millis`` (the latest by default), at most ``limit`` rows.
        Deletion-vector tables are read without merging; others are merged on read."""
        return Scan(self, columns, filter, snapshot, tag, timestamp_millis, limit)

    def get(self, keys: Any, snapshot: Optional[int] = None) -> pa.Table:
        """The rows with the given primary keys (absent keys are skipped), in key order. ``keys``: a list of
        key values (tuples for a key of several columns), or a table/dict with the primary-key columns. For
        many repeated lookups, ``query()`` answers from local lookup files."""
        return pa.Table.from_batches([self._native.get(self._key_table(keys), snapshot)])

    def query(self, snapshot: Optional[int] = None) -> "Query":
        """A query for repeated lookups on one snapshot (local lookup files built as keys are looked up)."""
        return Query(self, self._native.query(snapshot))

    def _key_table(self, keys: Any) -> Any:
        """Keys as a table of the primary-key columns, typed by the table's schema."""
        if not self.primary_keys:
            # An append table: the native half refuses lookups with the reason.
            return pa.table({})
        if hasattr(keys, "__arrow_c_stream__") or isinstance(keys, (pa.RecordBatch, dict)):
            return _as_stream(keys)
        if self._key_schema is None:
            # Nullable, as keys given may hold None (a key of no row: nothing is found for it).
            self._key_schema = pa.schema([self.schema.field(k).with_nullable(True) for k in self.primary_keys])
        key_schema = self._key_schema
        pk = key_schema.names
        rows = list(keys)
        if len(pk) == 1:
            columns = [[r[0] if isinstance(r, tuple) and len(r) == 1 else r for r in rows]]
        else:
            for r in rows:
                if not isinstance(r, tuple) or len(r) != len(pk):
                    raise InvalidError(f"key {r!r}: expected a tuple of {len(pk)} values ({', '.join(pk)})")
            columns = [[r[i] for r in rows] for i in range(len(pk))]
        for v, f in zip(columns, key_schema):
            # pyarrow would truncate 1.5 to 1 and look up another key.
            if pa.types.is_integer(f.type) and any(isinstance(x, float) for x in v):
                raise InvalidError(f"keys do not fit the primary key ({', '.join(pk)}): {f.name} holds integers")
        try:
            arrays = [pa.array(v, type=f.type) for v, f in zip(columns, key_schema)]
            return pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=key_schema)])
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as e:
            raise InvalidError(f"keys do not fit the primary key ({', '.join(pk)}): {e}") from None


class TableWrite:
    """A writer of one table whose messages someone else commits: a worker of a distributed job writes
    (``write``, ``delete``), then ``prepare_commit`` hands its serialized messages out; one committer passes
    every worker's messages to ``Table.commit``. Each bucket must be written by one writer per commit:
    ``unit_ids`` gives each row's unit (its partition and bucket), and rows of a unit all go to one writer.
    Use as a context manager, or call ``close``: files flushed and never handed over are removed."""

    def __init__(self, table: Table) -> None:
        self._native = _strata.NativeWrite(table._native)

    def write(self, data: Any, row_kind: Optional[str] = None, row_kind_column: Optional[str] = None) -> None:
        """Writes rows (as ``Table.write``, without committing)."""
        self._native.write(_as_stream(data), row_kind, row_kind_column)

    def delete(self, keys: Any) -> None:
        """Deletes rows by primary key (a table/dict with the primary-key columns), without committing."""
        self._native.delete(_as_stream(keys))

    def unit_ids(self, data: Any) -> pa.Array:
        """Each row's unit of work, as uint64 ids: rows with one id must be written by one writer."""
        return pa.array(self._native.unit_ids(_as_stream(data)))

    def prepare_commit(self) -> CommitMessages:
        """Flushes and compacts what was written and returns the messages to commit."""
        return CommitMessages(self._native.prepare_commit())

    def close(self) -> None:
        self._native.close()

    def __enter__(self) -> "TableWrite":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Scan:
    """A planned read: ``to_arrow()`` collects it into a ``pyarrow.Table``; ``to_reader()`` streams it as a
    ``pyarrow.RecordBatchReader`` (batches as Strata's threads decode them; memory stays bounded)."""

    def __init__(self, table: Table, columns, filter, snapshot, tag, timestamp_millis, limit) -> None:
        self._table = table
        self._args = dict(
            columns=None if columns is None else list(columns),
            filter=_filter_dnf(table.schema, filter),
            snapshot=snapshot,
            tag=tag,
            timestamp_millis=timestamp_millis,
            limit=limit,
        )

    def to_reader(self, batch_size: Optional[int] = None) -> pa.RecordBatchReader:
        return self._table._native.scan(**self._args, batch_size=batch_size)

    def to_arrow(self) -> pa.Table:
        return self._table._native.scan(**self._args, collect=True).read_all()

    def to_batches(self) -> List[pa.RecordBatch]:
        return self.to_arrow().to_batches()

    def to_pandas(self, **kwargs: Any):
        return self.to_arrow().to_pandas(**kwargs)

    def to_polars(self):
        import polars

        return polars.from_arrow(self.to_arrow())

    def count(self) -> int:
        """The number of rows the scan returns (from metadata alone where the table allows)."""
        a = self._args
        if a["tag"] is not None or a["timestamp_millis"] is not None or a["limit"] is not None:
            return self.to_arrow().num_rows
        return self._table._native.count(a["filter"], a["snapshot"])


class Query:
    """Repeated point lookups on one snapshot through local lookup files (built for the files keys touch)."""

    def __init__(self, table: Table, native: "_strata.NativeQuery") -> None:
        self._table = table
        self._native = native

    @property
    def snapshot_id(self) -> Optional[int]:
        return self._native.snapshot_id

    def get(self, keys: Any) -> pa.Table:
        """The rows with the given primary keys (as ``Table.get``), looked up together: each file is
        probed and read once for all the keys it may hold."""
        return pa.Table.from_batches([self._native.get(self._table._key_table(keys))])

    def get_row(self, key: Any) -> Optional[Dict[str, Any]]:
        """The row of one primary key (a value, or a tuple for a key of several columns) as a dict of
        column name to Python value, ``None`` when absent or deleted: ``get([key]).to_pylist()`` without an
        Arrow table at either end (the fastest single-key lookup)."""
        return self._native.get_row(key)

    def refresh(self) -> Optional[int]:
        """Moves to the latest snapshot if newer; the snapshot read."""
        return self._native.refresh()
