"""Helpers both oracle scripts share (paimon_oracle.py, paimon_rust_oracle.py). It imports neither oracle
library, so each script still loads only its own."""
import datetime
import decimal
import json
import os


def catalog_options(warehouse):
    """A filesystem catalog's options: the warehouse, and what PAIMON_CATALOG_OPTIONS (a JSON object, such as
    s3.endpoint and the keys of a table on S3) adds."""
    return {**json.loads(os.environ.get('PAIMON_CATALOG_OPTIONS', '{}')), 'warehouse': warehouse}


def split_table_path(path):
    """(warehouse, db, table) of a table directory <warehouse>/<db>.db/<table>."""
    path = path.rstrip('/')
    db_dir, table = path.rsplit('/', 1)
    warehouse, db = db_dir.rsplit('/', 1)
    assert db.endswith('.db'), path
    return warehouse, db[:-3], table


def json_value(v):
    """A value of a row as JSON can hold it: bytes as hex, decimals as text, times in ISO-8601."""
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    return v


def json_rows(rows):
    """Rows (dicts, as pyarrow's to_pylist gives them) as JSON objects."""
    return [{k: json_value(v) for k, v in row.items()} for row in rows]
