"""paimon-rust 0.4.0 (PyPI `pypaimon-rust`, module `pypaimon_rust`) as Strata's second compatibility oracle.

Run with the interpreter of the cached virtualenv that scripts/pypaimon-venv.sh creates (it holds pypaimon
2.1.0 and pypaimon-rust 0.4.0). Every subcommand takes one JSON argument and prints JSON on stdout. Nothing
here is Strata code and nothing here goes through pypaimon: only pypaimon_rust's public API (its catalog,
read and write builders, and its DataFusion SQL context).

Tables have the columns id BIGINT NOT NULL, [p STRING NOT NULL,] name STRING, v BIGINT, d DOUBLE, rk STRING,
primary key (id[, p]), partitioned by p when `partitioned`, and `rowkind.field` = rk, which is how rows are
deleted: a row whose rk is '-D' deletes its key (paimon-rust takes no row-kind column in write_arrow).
"""
import json
import random
import sys

import pyarrow as pa

from oracle_common import catalog_options, json_rows, split_table_path


def _catalog(warehouse):
    from pypaimon_rust.datafusion import PaimonCatalog
    return PaimonCatalog(catalog_options(warehouse))


def _table_at(path):
    warehouse, db, table = split_table_path(path)
    return _catalog(warehouse).get_table(f"{db}.{table}")


def _sql_context(warehouse):
    from pypaimon_rust.datafusion import SQLContext
    ctx = SQLContext()
    ctx.register_catalog('p', catalog_options(warehouse))
    return ctx


def _arrow_schema(partitioned):
    fields = [pa.field('id', pa.int64(), nullable=False)]
    if partitioned:
        fields.append(pa.field('p', pa.string(), nullable=False))
    fields += [pa.field('name', pa.string()), pa.field('v', pa.int64()), pa.field('d', pa.float64()),
               pa.field('rk', pa.string())]
    return pa.schema(fields)


def cmd_create(spec):
    """Creates a table through SQL: spec {path, partitioned, buckets, format, options}."""
    warehouse, db, table = split_table_path(spec['path'])
    ctx = _sql_context(warehouse)
    ctx.sql(f"CREATE SCHEMA IF NOT EXISTS p.{db}")
    partitioned = spec.get('partitioned', False)
    cols = 'id BIGINT NOT NULL, ' + ('p STRING NOT NULL, ' if partitioned else '')
    cols += 'name STRING, v BIGINT, d DOUBLE, rk STRING, PRIMARY KEY (' + ('id, p' if partitioned else 'id') + ')'
    options = {'bucket': str(spec.get('buckets', 1)), 'file.format': spec.get('format', 'parquet'),
               'rowkind.field': 'rk'}
    if options['file.format'] == 'orc':
        # paimon-rust 0.4.0 writes ORC only uncompressed ("ORC compression 'zstd' is not supported").
        options['file.compression'] = 'none'
    options.update(spec.get('options', {}))
    with_ = ', '.join(f"'{k}' = '{v}'" for k, v in options.items())
    ctx.sql(f"CREATE TABLE p.{db}.{table} ({cols})" + (' PARTITIONED BY (p)' if partitioned else '')
            + f" WITH ({with_})")
    return {'ok': True, 'options': _table_at(spec['path']).schema().options()}


def cmd_write(spec):
    """Writes `commits` commits of random upserts and deletes into the table at `path`, one
    batch write + commit each. Returns the rows written, commit by commit (input order), and the latest
    snapshot id after each commit, so that the caller keeps its own model of the table.

    spec: path, commits, ops_per_commit, key_space, delete_ratio, null_ratio, seed, key_offset (default 0),
    name_prefix (default 'r'), v_bits (v is drawn from [-2^(v_bits-1), 2^(v_bits-1)), default 41).
    """
    table = _table_at(spec['path'])
    partitioned = bool(table.schema().partition_keys())
    schema = _arrow_schema(partitioned)
    rng = random.Random(spec.get('seed', 0))
    null_ratio = spec.get('null_ratio', 0.1)
    prefix = spec.get('name_prefix', 'r')
    v_half = 2 ** (spec.get('v_bits', 41) - 1)
    written, snapshots = [], []
    for c in range(spec['commits']):
        rows = {f.name: [] for f in schema}
        for i in range(spec['ops_per_commit']):
            rows['id'].append(spec.get('key_offset', 0) + rng.randrange(spec.get('key_space', 100)))
            if partitioned:
                rows['p'].append(rng.choice(['a', 'b', 'c']))
            delete = rng.random() < spec.get('delete_ratio', 0.0)
            rows['name'].append(None if rng.random() < null_ratio else f"{prefix}{c}-{i}")
            rows['v'].append(None if rng.random() < null_ratio else rng.randrange(-v_half, v_half))
            rows['d'].append(None if rng.random() < null_ratio else rng.randrange(-10**6, 10**6) / 64.0)
            rows['rk'].append('-D' if delete else rng.choice(['+I', '+I', '+U']))
        wb = table.new_batch_write_builder()
        w = wb.new_write()
        w.write_arrow(pa.RecordBatch.from_pydict(rows, schema=schema))
        msgs = w.prepare_commit()
        c_ = wb.new_commit()
        c_.commit(msgs)
        w.close()
        c_.close()
        written.append([{k: rows[k][i] for k in rows} for i in range(spec['ops_per_commit'])])
        snapshots.append(table.latest_snapshot().id())
    return {'commits': written, 'snapshots': snapshots}


def _rows(batches):
    """The rows of a list of record batches (none when the list is empty), as JSON objects."""
    out = []
    for b in batches:
        out.extend(json_rows(b.to_pylist()))
    return out


def _columns(batches):
    return [b.schema.names for b in batches]


def cmd_read(spec):
    """Reads the latest snapshot of the table at `path` (or the one the dynamic `options` choose, such as
    scan.tag-name): spec {path, options?, projection?, filter?, row_kind?}. `filter` is pypaimon-rust's
    predicate dict ({method, field, literals} or {method: and|or, children}).
    Returns {rows, columns (per batch), splits, snapshot}."""
    table = _table_at(spec['path'])
    rb = table.new_read_builder(spec.get('options'))
    if spec.get('projection') is not None:
        rb = rb.with_projection(spec['projection'])
    if spec.get('filter') is not None:
        rb = rb.with_filter(spec['filter'])
    if spec.get('row_kind'):
        rb = rb.with_include_row_kind(True)
    plan = rb.new_scan().plan()
    splits = plan.splits()
    batches = rb.new_read().read(splits)
    return {'rows': _rows(batches), 'columns': _columns(batches), 'splits': len(splits),
            'snapshot': plan.snapshot_id()}


def cmd_incremental(spec):
    """Reads what snapshots (start, end] of the table at `path` appended (`mode` delta), with row kinds."""
    table = _table_at(spec['path'])
    rb = table.new_read_builder().with_include_row_kind(True)
    splits = rb.new_incremental_scan(spec['start'], spec['end'], spec.get('mode', 'delta')).plan().splits()
    return {'rows': _rows(rb.new_read().read(splits)), 'splits': len(splits)}


def cmd_incremental_ranges(spec):
    """`incremental` for many ranges in one process: spec {path, ranges: [[start, end], ...], mode?}; returns
    one {rows, splits} per range, in order."""
    return [cmd_incremental({'path': spec['path'], 'start': a, 'end': b, 'mode': spec.get('mode', 'delta')})
            for a, b in spec['ranges']]


def cmd_sql(spec):
    """Runs `query` through a SQLContext with the warehouse registered as catalog `p`."""
    batches = _sql_context(spec['warehouse']).sql(spec['query'])
    return {'rows': _rows(batches), 'columns': _columns(batches)}


def cmd_sql_many(spec):
    """Runs each of `queries` through one SQLContext with the warehouse registered as catalog `p`: one
    {rows, columns} per query, or {error} when paimon-rust refuses it (the message, for the caller to show)."""
    ctx = _sql_context(spec['warehouse'])
    out = []
    for query in spec['queries']:
        try:
            batches = ctx.sql(query)
        except Exception as e:  # pypaimon_rust raises its own exception types; the caller decides.
            out.append({'error': f"{type(e).__name__}: {e}"})
            continue
        out.append({'rows': _rows(batches), 'columns': [f.name for f in batches[0].schema] if batches else []})
    return out


def cmd_sql_bench(spec):
    """Times each of `queries` (spec {warehouse, queries, runs}): the best and the median of `runs` runs in
    seconds, rows collected included, and the rows of the last run."""
    import time
    ctx = _sql_context(spec['warehouse'])
    out = []
    for query in spec['queries']:
        times, rows = [], 0
        for _ in range(spec.get('runs', 3)):
            started = time.perf_counter()
            batches = ctx.sql(query)
            times.append(time.perf_counter() - started)
            rows = sum(b.num_rows for b in batches)
        times.sort()
        out.append({'query': query, 'best': times[0], 'median': times[len(times) // 2], 'rows': rows})
    return out


def cmd_snapshots(spec):
    """paimon-rust's view of the table's snapshots, oldest first."""
    table = _table_at(spec['path'])
    snaps = sorted(table.list_snapshots(), key=lambda s: s.id())
    return [{'id': s.id(), 'commitKind': s.commit_kind(), 'totalRecordCount': s.total_record_count(),
             'deltaRecordCount': s.delta_record_count()} for s in snaps]


def cmd_tags(spec):
    """paimon-rust's view of the table's tags: name and snapshot id, by name."""
    table = _table_at(spec['path'])
    return sorted(({'name': t.name(), 'snapshotId': t.snapshot_id()} for t in table.list_tags()),
                  key=lambda t: t['name'])


COMMANDS = {'create': cmd_create, 'write': cmd_write, 'read': cmd_read, 'incremental': cmd_incremental,
            'incremental_ranges': cmd_incremental_ranges,
            'sql': cmd_sql, 'sql_many': cmd_sql_many, 'sql_bench': cmd_sql_bench, 'snapshots': cmd_snapshots,
            'tags': cmd_tags}


def main():
    cmd = sys.argv[1]
    if cmd not in COMMANDS:
        raise SystemExit(f"unknown command {cmd}")
    json.dump(COMMANDS[cmd](json.loads(sys.argv[2])), sys.stdout)


if __name__ == '__main__':
    main()
