"""pypaimon 2.1.0 as Strata's compatibility oracle.

Run with the interpreter of the cached virtualenv that scripts/pypaimon-venv.sh creates. Every subcommand
prints JSON on stdout. Nothing here is Strata code: it only uses pypaimon's public pieces to write tables and
to say what pypaimon sees in tables, manifests and bucket assignments.
"""
import base64
import datetime
import decimal
import json
import random
import sys

import pyarrow as pa

from oracle_common import catalog_options, json_rows, split_table_path


def _catalog(warehouse):
    from pypaimon import CatalogFactory
    return CatalogFactory.create(catalog_options(warehouse))


def _table_at(path):
    """Opens the table in directory `path` (<warehouse>/<db>.db/<table>)."""
    warehouse, db, table = split_table_path(path)
    return _catalog(warehouse).get_table(f"{db}.{table}")


def _write_commit(table, columns, pa_schema):
    """One batch write of `columns` (name: values) and its commit."""
    wb = table.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(pa.Table.from_pydict(columns, schema=pa_schema))
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def _arrow_rows(t):
    """The rows of a pyarrow table (none when pypaimon read nothing), as JSON objects."""
    return [] if t is None else json_rows(t.to_pylist())


def cmd_write(spec):
    """Creates a table and writes `commits` commits of random upserts into it."""
    from pypaimon import Schema
    cat = _catalog(spec['warehouse'])
    cat.create_database(spec.get('database', 'db'), True)
    fields = [('id', pa.int64()), ('name', pa.string()), ('v', pa.int64())]
    partition_keys, primary_keys = [], ['id']
    if spec.get('partitioned'):
        fields.insert(1, ('p', pa.string()))
        partition_keys, primary_keys = ['p'], ['id', 'p']
    if spec.get('append'):
        # An append table: no primary key (rows with the same id all stay).
        primary_keys = []
    pa_schema = pa.schema(fields)
    options = {'bucket': str(spec['buckets']), 'file.format': spec['format']}
    options.update(spec.get('options', {}))
    schema = Schema.from_pyarrow_schema(pa_schema, partition_keys=partition_keys, primary_keys=primary_keys,
                                        options=options)
    ident = f"{spec.get('database', 'db')}.{spec['table']}"
    cat.create_table(ident, schema, False)
    table = cat.get_table(ident)
    rng = random.Random(spec.get('seed', 0))
    for _ in range(spec['commits']):
        n = spec['rows_per_commit']
        data = {
            'id': [rng.randrange(spec.get('key_space', 1000)) for _ in range(n)],
            'name': [None if rng.random() < 0.1 else f"n{rng.randrange(10**6)}" for _ in range(n)],
            'v': [rng.randrange(-10**9, 10**9) for _ in range(n)],
        }
        if spec.get('partitioned'):
            data['p'] = [rng.choice(['a', 'b', 'c']) for _ in range(n)]
        _write_commit(table, data, pa_schema)
    return {'ok': True}


def cmd_workload(spec):
    """Creates a table and writes a random workload of upserts (and deletes through rowkind.field).

    spec: warehouse, table, format, buckets, partitioned, partitions (values of p, default a, b, c), engine
    (deduplicate | partial-update | aggregation | first-row), commits, ops_per_commit, key_space, delete_ratio,
    null_ratio, seed, options, create (false: write into the existing table), ops_out (file for the rows).
    """
    from pypaimon import Schema
    cat = _catalog(spec['warehouse'])
    cat.create_database('db', True)
    engine = spec.get('engine', 'deduplicate')
    deletes = spec.get('delete_ratio', 0) > 0
    fields = [('id', pa.int64()), ('name', pa.string()), ('v', pa.int64()), ('d', pa.float64())]
    partition_keys, primary_keys = [], ['id']
    if spec.get('partitioned'):
        fields.insert(1, ('p', pa.string()))
        partition_keys, primary_keys = ['p'], ['id', 'p']
    if deletes:
        fields.append(('rk', pa.string()))
    pa_schema = pa.schema(fields)
    options = {'bucket': str(spec['buckets']), 'file.format': spec['format'], 'merge-engine': engine}
    if deletes:
        options['rowkind.field'] = 'rk'
    if engine == 'aggregation':
        options.update({'fields.v.aggregate-function': 'sum', 'fields.d.aggregate-function': 'max',
                        'fields.name.aggregate-function': 'last_non_null_value'})
    if engine in ('partial-update', 'aggregation') and deletes:
        options[f"{engine}.remove-record-on-delete"] = 'true'
    options.update(spec.get('options', {}))
    schema = Schema.from_pyarrow_schema(pa_schema, partition_keys=partition_keys, primary_keys=primary_keys,
                                        options=options)
    ident = f"db.{spec['table']}"
    if spec.get('create', True):
        cat.create_table(ident, schema, False)
    table = cat.get_table(ident)
    rng = random.Random(spec.get('seed', 0))
    null_ratio = spec.get('null_ratio', 0.1)
    written = []
    for _ in range(spec['commits']):
        n = spec['ops_per_commit']
        rows = {name: [] for name, _ in fields}
        for _ in range(n):
            rows['id'].append(rng.randrange(spec.get('key_space', 1000)))
            rows['name'].append(None if rng.random() < null_ratio else f"n{rng.randrange(10**4)}")
            rows['v'].append(None if rng.random() < null_ratio else rng.randrange(-1000, 1000))
            rows['d'].append(None if rng.random() < null_ratio else rng.randrange(-10**6, 10**6) / 64.0)
            if spec.get('partitioned'):
                rows['p'].append(rng.choice(spec.get('partitions', ['a', 'b', 'c'])))
            if deletes:
                rows['rk'].append('-D' if rng.random() < spec['delete_ratio'] else '+I')
        _write_commit(table, rows, pa_schema)
        written.append([{k: rows[k][i] for k in rows} for i in range(n)])
    if spec.get('ops_out'):
        with open(spec['ops_out'], 'w') as f:
            json.dump(written, f)
    return {'ok': True}


def cmd_read(path):
    """Every row pypaimon reads from the latest snapshot, as JSON objects."""
    table = _table_at(path)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    return _arrow_rows(rb.new_read().to_arrow(splits))


def cmd_changelog(path, snapshot_id):
    """The changelog rows pypaimon's streaming reader reads for snapshot `snapshot_id` (a follow-up plan over
    the snapshot's changelog manifest list), each with its row kind ("+I", "-U", "+U", "-D"), in read order."""
    table = _table_at(path)
    rb = table.new_stream_read_builder().with_include_row_kind(True)
    scan = rb.new_streaming_scan()
    snapshot = table.snapshot_manager().get_snapshot_by_id(int(snapshot_id))
    plan = scan._create_changelog_plan(snapshot)
    return _arrow_rows(rb.new_read().to_arrow(plan.splits()))


def cmd_delta(path, start, end):
    """What pypaimon's streaming reader reads for snapshots (start, end] of a table without a changelog
    producer: the delta plan (new files of the snapshot's delta manifest list) of every snapshot its
    `DeltaFollowUpScanner` follows (APPEND snapshots only), rows with their row kind, plus the kinds seen."""
    table = _table_at(path)
    rb = table.new_stream_read_builder().with_include_row_kind(True)
    scan = rb.new_streaming_scan()
    follow_up = scan._create_follow_up_scanner()
    rows, kinds = [], []
    for snapshot_id in range(int(start) + 1, int(end) + 1):
        snapshot = table.snapshot_manager().get_snapshot_by_id(snapshot_id)
        kinds.append(snapshot.commit_kind)
        if not follow_up.should_scan(snapshot):
            continue
        rows.extend(_arrow_rows(rb.new_read().to_arrow(scan._create_delta_plan(snapshot).splits())))
    return {'rows': rows, 'kinds': kinds}


def cmd_delta_snapshots(path, ids):
    """`delta` of single snapshots, many in one process: for each id in the JSON list `ids`, what pypaimon's
    streaming reader reads for that snapshot alone (its delta follow-up scanner: APPEND snapshots only)."""
    return [cmd_delta(path, int(i) - 1, int(i)) for i in json.loads(ids)]


def cmd_between(path, ranges):
    """pypaimon's batch incremental read (`incremental-between-timestamp`) for each [start, end] snapshot range
    in the JSON list `ranges`: the start and end snapshots' commit times as the window. pypaimon resolves a
    window to snapshots by time (the latest snapshot at or before each end), so snapshots committed in the same
    millisecond resolve to the later one: each result reports the (start, end] range pypaimon read. Its batch
    reader gives no row kinds (rows carry only their columns)."""
    table = _table_at(path)
    sm = table.snapshot_manager()
    out = []
    for a, b in json.loads(ranges):
        start = sm.get_snapshot_by_id(a).time_millis if a > 0 else 0
        end = sm.get_snapshot_by_id(b).time_millis
        t = table.copy({'incremental-between-timestamp': f'{start},{end}'})
        rb = t.new_read_builder()
        scan = rb.new_scan()
        splits = scan.plan().splits()
        resolved = getattr(scan, '_incremental_snapshot_range', None)
        rows = _arrow_rows(rb.new_read().to_arrow(splits))
        out.append({'rows': rows, 'resolved': list(resolved) if resolved is not None else None})
    return out


def cmd_consumer(path, consumer_id):
    """pypaimon's ConsumerManager view of consumer `consumer_id`: its nextSnapshot, or null."""
    from pypaimon.consumer.consumer_manager import ConsumerManager
    table = _table_at(path)
    c = ConsumerManager(table.file_io, table.table_path).consumer(consumer_id)
    return None if c is None else c.next_snapshot


def cmd_set_consumer(path, consumer_id, next_snapshot):
    """Records consumer `consumer_id` at `next_snapshot` through pypaimon's ConsumerManager."""
    from pypaimon.consumer.consumer import Consumer
    from pypaimon.consumer.consumer_manager import ConsumerManager
    table = _table_at(path)
    ConsumerManager(table.file_io, table.table_path).reset_consumer(consumer_id, Consumer(int(next_snapshot)))
    return {'ok': True}


def cmd_time_read(path):
    """Reads the latest snapshot of the table at `path` with pypaimon; returns rows and seconds (best of 3)."""
    import time
    table = _table_at(path)
    best, rows = None, 0
    for _ in range(3):
        started = time.perf_counter()
        rb = table.new_read_builder()
        t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
        secs = time.perf_counter() - started
        rows = 0 if t is None else t.num_rows
        best = secs if best is None else min(best, secs)
    return {'rows': rows, 'seconds': best}


def _b64(b):
    return None if b is None else base64.b64encode(bytes(b)).decode()


def _entry_json(e):
    f = e.file
    return {
        'kind': e.kind, 'partition': _b64(e.partition.data if hasattr(e.partition, 'data') else None),
        'partitionValues': [str(v) for v in e.partition.values] if hasattr(e.partition, 'values') else None,
        'bucket': e.bucket, 'totalBuckets': e.total_buckets,
        'fileName': f.file_name, 'fileSize': f.file_size, 'rowCount': f.row_count,
        'minKey': [str(v) for v in f.min_key.values] if hasattr(f.min_key, 'values') else None,
        'maxKey': [str(v) for v in f.max_key.values] if hasattr(f.max_key, 'values') else None,
        'minSequenceNumber': f.min_sequence_number, 'maxSequenceNumber': f.max_sequence_number,
        'schemaId': f.schema_id, 'level': f.level, 'extraFiles': list(f.extra_files or []),
        'deleteRowCount': f.delete_row_count, 'fileSource': f.file_source,
        'externalPath': f.external_path, 'firstRowId': f.first_row_id,
        'creationTime': f.creation_time_epoch_millis() if f.creation_time is not None else None,
    }


def _manifest_meta_json(m):
    return {
        'fileName': m.file_name, 'fileSize': m.file_size, 'numAddedFiles': m.num_added_files,
        'numDeletedFiles': m.num_deleted_files, 'schemaId': m.schema_id,
        'minBucket': m.min_bucket, 'maxBucket': m.max_bucket, 'minLevel': m.min_level, 'maxLevel': m.max_level,
        'partitionMin': [str(v) for v in m.partition_stats.min_values.values]
        if hasattr(m.partition_stats.min_values, 'values') else None,
        'partitionMax': [str(v) for v in m.partition_stats.max_values.values]
        if hasattr(m.partition_stats.max_values, 'values') else None,
        'partitionNullCounts': list(m.partition_stats.null_counts or []),
    }


def _index_entry_json(e):
    f = e.index_file
    ranges = getattr(f, 'dv_ranges', None) or getattr(f, 'deletion_vectors_ranges', None) or {}
    if isinstance(ranges, dict):
        ranges = [{'dataFile': k, 'offset': v.offset, 'length': v.length, 'cardinality': v.cardinality}
                  for k, v in ranges.items()]
    return {'kind': e.kind, 'bucket': e.bucket, 'indexType': f.index_type, 'fileName': f.file_name,
            'fileSize': f.file_size, 'rowCount': f.row_count, 'ranges': ranges}


def cmd_meta(path):
    """What pypaimon sees in a table: schema, every snapshot, and the live files of the latest."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager
    table = _table_at(path)
    sm = table.snapshot_manager() if callable(getattr(table, 'snapshot_manager', None)) else None
    if sm is None:
        from pypaimon.snapshot.snapshot_manager import SnapshotManager
        sm = SnapshotManager(table)
    snaps = sm.list_snapshots()
    out = {
        'schema': {
            'fields': [{'id': f.id, 'name': f.name, 'type': str(f.type)} for f in table.table_schema.fields],
            'partitionKeys': list(table.table_schema.partition_keys),
            'primaryKeys': list(table.table_schema.primary_keys),
            'options': dict(table.table_schema.options),
        },
        'snapshots': [{
            'id': s.id, 'schemaId': s.schema_id, 'commitKind': s.commit_kind, 'commitUser': s.commit_user,
            'commitIdentifier': s.commit_identifier, 'totalRecordCount': s.total_record_count,
            'deltaRecordCount': s.delta_record_count, 'indexManifest': s.index_manifest,
        } for s in sorted(snaps, key=lambda s: s.id)],
        'files': [],
    }
    latest = sm.get_latest_snapshot()
    if latest is not None:
        live = {}
        mfm = ManifestFileManager(table)
        for meta in ManifestListManager(table).read_all(latest):
            for e in mfm.read(meta.file_name, drop_stats=False):
                key = (_b64(e.partition.to_bytes() if hasattr(e.partition, 'to_bytes') else None),
                       tuple(str(v) for v in getattr(e.partition, 'values', [])), e.bucket, e.file.level,
                       e.file.file_name)
                if e.kind == 0:
                    live[key] = e
                else:
                    live.pop(key, None)
        out['files'] = sorted((_entry_json(e) for e in live.values()),
                              key=lambda f: (str(f['partitionValues']), f['bucket'], f['level'], f['fileName']))
    return out


def cmd_schema(path):
    """The latest schema as pypaimon loads it: ids, names, types and comments of the fields, keys, options."""
    schema = _table_at(path).table_schema
    return {
        'id': schema.id,
        'highestFieldId': schema.highest_field_id,
        'fields': [{'id': f.id, 'name': f.name, 'type': str(f.type), 'description': f.description}
                   for f in schema.fields],
        'partitionKeys': list(schema.partition_keys),
        'primaryKeys': list(schema.primary_keys),
        'options': dict(schema.options),
    }


def cmd_alter(path, changes):
    """Alters the table with pypaimon's own schema manager, then prints `schema`. Each change is one of
    {"add": name, "type": T, "comment": c, "first": true | "after": x}, {"drop": name},
    {"rename": old, "to": new}, {"retype": name, "type": T}."""
    from pypaimon.schema.data_types import DataTypeParser
    from pypaimon.schema.schema_change import Move, SchemaChange
    out = []
    for c in changes:
        if 'add' in c:
            move = None
            if c.get('first'):
                move = Move.first(c['add'])
            elif 'after' in c:
                move = Move.after(c['add'], c['after'])
            out.append(SchemaChange.add_column(c['add'], DataTypeParser.parse_data_type(c['type']),
                                               comment=c.get('comment'), move=move))
        elif 'drop' in c:
            out.append(SchemaChange.drop_column(c['drop']))
        elif 'rename' in c:
            out.append(SchemaChange.rename_column(c['rename'], c['to']))
        elif 'retype' in c:
            out.append(SchemaChange.update_column_type(c['retype'], DataTypeParser.parse_data_type(c['type'])))
        else:
            raise SystemExit(f"unknown change {c}")
    warehouse, db, table = split_table_path(path)
    _catalog(warehouse).alter_table(f"{db}.{table}", out)
    return cmd_schema(path)


def cmd_manifest(path, kind, name):
    """How pypaimon decodes one manifest file, manifest list or index manifest of the table at `path`."""
    table = _table_at(path)
    if kind == 'manifest':
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager
        return [_entry_json(e) for e in ManifestFileManager(table).read(name, drop_stats=False)]
    if kind == 'list':
        from pypaimon.manifest.manifest_list_manager import ManifestListManager
        return [_manifest_meta_json(m) for m in ManifestListManager(table).read(name)]
    if kind == 'index':
        from pypaimon.manifest.index_manifest_file import IndexManifestFile
        return [_index_entry_json(e) for e in IndexManifestFile(table).read(name)]
    raise SystemExit(f"unknown manifest kind {kind}")


def _py_value(type_str, v):
    t = type_str.upper()
    if t.startswith('DECIMAL'):
        return decimal.Decimal(v)
    if t.startswith(('BYTES', 'VARBINARY', 'BINARY')):
        return bytes.fromhex(v)
    if t.startswith('DATE'):
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=v)
    if t.startswith('TIMESTAMP'):
        micros = v
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=micros)
    if t.startswith(('FLOAT', 'DOUBLE')):
        return float(v)
    return v


def cmd_bucket(spec):
    """Buckets pypaimon's fixed-bucket extractor assigns to keys: {types, buckets, keys: [[v, ...], ...]}."""
    from pypaimon.schema.data_types import AtomicType, DataField
    from pypaimon.write import row_key_extractor as rke
    fields = [DataField(i, f"k{i}", AtomicType(t)) for i, t in enumerate(spec['types'])]
    out = []
    for key in spec['keys']:
        values = tuple(_py_value(t, v) for t, v in zip(spec['types'], key))
        h = rke.RowKeyExtractor._binary_row_hash_code(values, fields)
        out.append(rke._bucket_from_hash(h, spec['buckets']))
    return out


def cmd_dv_read(spec):
    """Positions pypaimon reads from DV index file entries: {path, entries: [{offset, length, cardinality}]}."""
    from pypaimon.deletionvectors.deletion_vector import DeletionVector
    from pypaimon.filesystem.local_file_io import LocalFileIO
    from pypaimon.table.source.deletion_file import DeletionFile
    io = LocalFileIO(spec['path'])
    out = []
    for e in spec['entries']:
        dv = DeletionVector.read(io, DeletionFile(spec['path'], e['offset'], e['length'], e.get('cardinality')))
        out.append(sorted(int(p) for p in dv.bit_map()))
    return out


def cmd_dv_write(spec):
    """Entries pypaimon's BitmapDeletionVector serializes for each list of positions, base64."""
    from pypaimon.deletionvectors.bitmap_deletion_vector import BitmapDeletionVector
    out = []
    for positions in spec['positions']:
        dv = BitmapDeletionVector()
        for p in positions:
            dv.delete(p)
        out.append(_b64(dv.serialize()))
    return out


def cmd_bitmap64(spec):
    """pyroaring's portable 64-bit Roaring format (Iceberg's layout): decode given payloads, encode given sets."""
    from pyroaring import BitMap64
    decoded = [sorted(BitMap64.deserialize(base64.b64decode(b))) for b in spec.get('decode', [])]
    encoded = [_b64(BitMap64(ps).serialize()) for ps in spec.get('encode', [])]
    return {'decoded': decoded, 'encoded': encoded}


_EVOLVE_TYPES = {'BIGINT': pa.int64(), 'INT': pa.int32(), 'STRING': pa.string(), 'DOUBLE': pa.float64(),
                 'FLOAT': pa.float32()}


def _evolve_value(rng, type_name, n):
    return {'BIGINT': n * 10_000_000_000, 'INT': n, 'STRING': f"s{n}", 'DOUBLE': n / 4.0, 'FLOAT': n / 2.0}[type_name]


def cmd_evolve(spec):
    """One step of a table's life under pypaimon, with a model of its rows kept in spec['model'] (JSON file:
    the columns as [name, type] and the rows by id). Steps: 'create' (id BIGINT key, a INT, b STRING, c FLOAT,
    rk STRING as rowkind.field), 'write' (random upserts and deletes over the current columns), 'alter' (the
    schema changes in spec['changes'], applied to the model by their meaning: rename keeps values, drop
    forgets them, add starts null, a type change widens the stored values; with spec['model_only'] the table
    is left alone, for another tool to make the same change)."""
    from pypaimon import Schema
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange
    cat = _catalog(spec['warehouse'])
    ident = f"db.{spec['table']}"
    rng = random.Random(spec.get('seed', 0))
    if spec['step'] == 'create':
        cat.create_database('db', True)
        columns = [['id', 'BIGINT'], ['a', 'INT'], ['b', 'STRING'], ['c', 'FLOAT'], ['rk', 'STRING']]
        pa_schema = pa.schema([(n, _EVOLVE_TYPES[t]) for n, t in columns])
        options = {'bucket': str(spec.get('buckets', 2)), 'file.format': spec.get('format', 'parquet'),
                   'rowkind.field': 'rk'}
        options.update(spec.get('options', {}))
        cat.create_table(ident, Schema.from_pyarrow_schema(pa_schema, primary_keys=['id'], options=options), False)
        model = {'columns': columns, 'rows': {}}
    else:
        with open(spec['model']) as f:
            model = json.load(f)
    columns, rows = model['columns'], model['rows']
    if spec['step'] == 'write':
        table = cat.get_table(ident)
        pa_schema = pa.schema([(n, _EVOLVE_TYPES[t]) for n, t in columns])
        for _ in range(spec.get('commits', 1)):
            batch = {n: [] for n, _ in columns}
            for _ in range(spec.get('rows', 200)):
                key = rng.randrange(spec.get('key_space', 500))
                delete = rng.random() < spec.get('delete_ratio', 0.1)
                n = rng.randrange(-1000, 1000)
                row = {}
                for name, type_name in columns:
                    if name == 'id':
                        row[name] = key
                    elif name == 'rk':
                        row[name] = '-D' if delete else '+I'
                    else:
                        row[name] = None if rng.random() < 0.1 else _evolve_value(rng, type_name, n)
                for name in batch:
                    batch[name].append(row[name])
                if delete:
                    rows.pop(str(key), None)
                else:
                    rows[str(key)] = row
            _write_commit(table, batch, pa_schema)
    elif spec['step'] == 'alter':
        changes = []
        for ch in spec['changes']:
            kind = ch[0]
            if kind == 'rename':
                changes.append(SchemaChange.rename_column(ch[1], ch[2]))
                columns = [[ch[2] if n == ch[1] else n, t] for n, t in columns]
                for r in rows.values():
                    r[ch[2]] = r.pop(ch[1])
            elif kind == 'drop':
                changes.append(SchemaChange.drop_column(ch[1]))
                columns = [[n, t] for n, t in columns if n != ch[1]]
                for r in rows.values():
                    r.pop(ch[1])
            elif kind == 'add':
                changes.append(SchemaChange.add_column(ch[1], AtomicType(ch[2])))
                columns = columns + [[ch[1], ch[2]]]
                for r in rows.values():
                    r[ch[1]] = None
            elif kind == 'type':
                changes.append(SchemaChange.update_column_type(ch[1], AtomicType(ch[2]), True))
                columns = [[n, ch[2] if n == ch[1] else t] for n, t in columns]
            else:
                raise SystemExit(f"unknown schema change {ch}")
        if not spec.get('model_only'):
            cat.alter_table(ident, changes)
    model = {'columns': columns, 'rows': rows}
    with open(spec['model'], 'w') as f:
        json.dump(model, f)
    return model


def _tag_json(name, tag):
    from pypaimon.common.time_utils import local_datetime_to_json_array
    retained = tag.tag_time_retained
    return {'name': name, 'snapshotId': tag.id,
            'createTime': None if tag.tag_create_time is None else local_datetime_to_json_array(tag.tag_create_time),
            'timeRetainedSeconds': None if retained is None else retained.total_seconds()}


def cmd_tags(spec):
    """Tag operations through pypaimon's table API (its TagManager and RollbackHelper), then the tags it
    sees: spec {path, create?: [{name, snapshot_id?, time_retained?}], delete?: [name], rollback?: snapshot
    id (int) or tag name (str)}. Each tag: name, snapshotId, createTime (Java's LocalDateTime array form, or
    None), timeRetainedSeconds (or None)."""
    table = _table_at(spec['path'])
    for c in spec.get('create', []):
        table.create_tag(c['name'], snapshot_id=c.get('snapshot_id'), time_retained=c.get('time_retained'))
    for name in spec.get('delete', []):
        table.delete_tag(name)
    if 'rollback' in spec:
        table.rollback_to(spec['rollback'])
    tm = table.tag_manager()
    return [_tag_json(name, tm.get(name)) for name in sorted(tm.list_tags())]


def cmd_read_options(spec):
    """Every row pypaimon reads with the dynamic options `options` (scan.tag-name, scan.snapshot-id, ...)."""
    table = _table_at(spec['path']).copy(spec.get('options', {}))
    rb = table.new_read_builder()
    return _arrow_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def cmd_row_ids(spec):
    """On a data-evolution table: deletes the rows `delete` (row ids, through deletion vectors), or gives the
    rows `update_v` names (row ids) new values of column `v` (a file that re-covers them); one commit."""
    table = _table_at(spec['path'])
    wb = table.new_batch_write_builder()
    update = wb.new_update()
    if 'delete' in spec:
        messages = update.delete_by_row_id(spec['delete'])
    else:
        ids, values = spec['update_v']
        update = update.with_update_type(['v'])
        messages = update.update_by_arrow_with_row_id(
            pa.table({'_ROW_ID': pa.array(ids, pa.int64()), 'v': pa.array(values, pa.int64())}))
    commit = wb.new_commit()
    commit.commit(messages)
    commit.close()
    return {'ok': True}


def cmd_branch_setup(spec):
    """A primary-key table `db.t` with rows 1-3 tagged `t1`, a branch `dev` from the tag, and rows 2 and 4
    written on the branch."""
    from pypaimon import Schema
    cat = _catalog(spec['warehouse'])
    cat.create_database('db', True)
    schema = Schema.from_pyarrow_schema(pa.schema([('id', pa.int64()), ('v', pa.string())]), primary_keys=['id'],
                                        options={'bucket': '1'})
    cat.create_table('db.t', schema, False)
    _write_commit(cat.get_table('db.t'), {'id': [1, 2, 3], 'v': ['a', 'b', 'c']},
                  pa.schema([('id', pa.int64()), ('v', pa.string())]))
    cat.get_table('db.t').create_tag('t1')
    cat.create_branch('db.t', 'dev', 't1')
    _write_commit(cat.get_table('db.t$branch_dev'), {'id': [2, 4], 'v': ['B', 'D']},
                  pa.schema([('id', pa.int64()), ('v', pa.string())]))
    return {'ok': True}


def cmd_branch_read(spec):
    """Every row of each of `tables` (default: `db.t` as 'main' and its branch `dev` as 'dev')."""
    cat = _catalog(spec['warehouse'])
    names = spec.get('tables')
    pairs = [(n, n) for n in names] if names else [('main', 'db.t'), ('dev', 'db.t$branch_dev')]
    out = {}
    for name, ident in pairs:
        rb = cat.get_table(ident).new_read_builder()
        out[name] = _arrow_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))
    return out


def main():
    cmd = sys.argv[1]
    if cmd == 'write':
        res = cmd_write(json.loads(sys.argv[2]))
    elif cmd == 'workload':
        res = cmd_workload(json.loads(sys.argv[2]))
    elif cmd == 'time_read':
        res = cmd_time_read(sys.argv[2])
    elif cmd == 'read':
        res = cmd_read(sys.argv[2])
    elif cmd == 'delta':
        res = cmd_delta(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == 'delta_snapshots':
        res = cmd_delta_snapshots(sys.argv[2], sys.argv[3])
    elif cmd == 'between':
        res = cmd_between(sys.argv[2], sys.argv[3])
    elif cmd == 'consumer':
        res = cmd_consumer(sys.argv[2], sys.argv[3])
    elif cmd == 'set_consumer':
        res = cmd_set_consumer(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == 'changelog':
        res = cmd_changelog(sys.argv[2], sys.argv[3])
    elif cmd == 'meta':
        res = cmd_meta(sys.argv[2])
    elif cmd == 'schema':
        res = cmd_schema(sys.argv[2])
    elif cmd == 'alter':
        res = cmd_alter(sys.argv[2], json.loads(sys.argv[3]))
    elif cmd == 'manifest':
        res = cmd_manifest(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == 'manifests':
        # Many at once (one interpreter start): argv[3] is a JSON list of [kind, name] pairs.
        res = [cmd_manifest(sys.argv[2], kind, name) for kind, name in json.loads(sys.argv[3])]
    elif cmd in ('dv_read', 'dv_write', 'bitmap64'):
        with open(sys.argv[2]) as f:
            res = {'dv_read': cmd_dv_read, 'dv_write': cmd_dv_write, 'bitmap64': cmd_bitmap64}[cmd](json.load(f))
    elif cmd == 'tags':
        res = cmd_tags(json.loads(sys.argv[2]))
    elif cmd == 'read_options':
        res = cmd_read_options(json.loads(sys.argv[2]))
    elif cmd == 'branch_setup':
        res = cmd_branch_setup(json.loads(sys.argv[2]))
    elif cmd == 'branch_read':
        res = cmd_branch_read(json.loads(sys.argv[2]))
    elif cmd == 'row_ids':
        res = cmd_row_ids(json.loads(sys.argv[2]))
    elif cmd == 'evolve':
        res = cmd_evolve(json.loads(sys.argv[2]))
    elif cmd == 'bucket':
        with open(sys.argv[2]) as f:
            res = cmd_bucket(json.load(f))
    else:
        raise SystemExit(f"unknown command {cmd}")
    json.dump(res, sys.stdout)


if __name__ == '__main__':
    main()
