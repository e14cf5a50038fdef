"""Shared fixtures of the Python package's tests: a warehouse per test, and the two oracles (pypaimon 2.1.0
and paimon-rust 0.4.0, from the test virtualenv) as readers and writers of the same tables."""
import os
import random

import pyarrow as pa
import pytest

import strata


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "wh")


@pytest.fixture
def catalog(warehouse):
    c = strata.Catalog(warehouse)
    c.create_database("db")
    return c


def pypaimon_read(warehouse, identifier):
    """Every row pypaimon reads from the table's latest snapshot (with deletion vectors when the table has
    them), as a list of dicts."""
    from pypaimon import CatalogFactory

    table = CatalogFactory.create({"warehouse": warehouse}).get_table(identifier)
    rb = table.new_read_builder()
    t = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return [] if t is None else t.to_pylist()


def paimon_rust_read(warehouse, identifier):
    """Every row paimon-rust reads from the table's latest snapshot, as a list of dicts."""
    from pypaimon_rust.datafusion import PaimonCatalog

    table = PaimonCatalog({"warehouse": warehouse}).get_table(identifier)
    rb = table.new_read_builder()
    batches = rb.new_read().read(rb.new_scan().plan().splits())
    return [row for b in batches for row in pa.Table.from_batches([b]).to_pylist()]


def pypaimon_create(warehouse, identifier, pa_schema, primary_keys, partition_keys=(), options=None):
    """Creates a table with pypaimon; returns its pypaimon table."""
    from pypaimon import CatalogFactory, Schema

    cat = CatalogFactory.create({"warehouse": warehouse})
    cat.create_database(identifier.split(".")[0], True)
    schema = Schema.from_pyarrow_schema(
        pa_schema, partition_keys=list(partition_keys), primary_keys=list(primary_keys), options=options or {}
    )
    cat.create_table(identifier, schema, False)
    return cat.get_table(identifier)


def pypaimon_write(table, data):
    """One pypaimon batch write and commit (pypaimon writes level-0 files only)."""
    wb = table.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def by_key(rows, keys=("id",)):
    return sorted(rows, key=lambda r: tuple(r[k] for k in keys))


def model_rows(model, columns):
    """The model (key -> row dict) as rows sorted by key."""
    return [dict(zip(columns, model[k])) for k in sorted(model)]


@pytest.fixture
def rng(request):
    seed = int(os.environ.get("STRATA_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (STRATA_TEST_SEED={seed} repeats it)")
    return random.Random(seed)
