"""The missing compactor, end to end: pypaimon writes a primary-key table (level-0 files only, never
compacted), Strata compacts it from Python, and pypaimon reads the model's rows. In a deletion-vector table
pypaimon's readers skip level 0, so before Strata's compaction they see none of what pypaimon wrote."""
import pyarrow as pa
import pytest

from conftest import by_key, model_rows, paimon_rust_read, pypaimon_create, pypaimon_read, pypaimon_write

import strata

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("v", pa.int64())])


@pytest.mark.parametrize("dv", [True, False])
def test_pypaimon_writes_strata_compacts_pypaimon_reads(warehouse, rng, dv):
    options = {"bucket": "4", "deletion-vectors.enabled": str(dv).lower()}
    pt = pypaimon_create(warehouse, "db.t", SCHEMA, ["id"], options=options)
    model = {}
    for _ in range(5):
        ids = [rng.randrange(500) for _ in range(rng.randrange(50, 300))]
        rows = [(i, f"n{rng.randrange(10**6)}", rng.randrange(-100, 100)) for i in ids]
        pypaimon_write(pt, pa.table({c: [r[k] for r in rows] for k, c in enumerate(SCHEMA.names)}, schema=SCHEMA))
        for r in rows:
            model[r[0]] = r
    expected = model_rows(model, SCHEMA.names)
    if dv:
        # pypaimon's deletion-vector read skips level 0: nothing of what it wrote is visible yet.
        assert pypaimon_read(warehouse, "db.t") == []
    table = strata.Catalog(warehouse).get_table("db.t")
    # Strata reads as Paimon does: a deletion-vector table without level 0, a merge-on-read one merged.
    assert by_key(table.scan().to_arrow().to_pylist()) == ([] if dv else expected)
    result = table.compact()
    assert result is not None and result.append is None
    assert by_key(pypaimon_read(warehouse, "db.t")) == expected
    assert by_key(paimon_rust_read(warehouse, "db.t")) == expected
    assert by_key(table.scan().to_arrow().to_pylist()) == expected
    # pypaimon writes again on top of Strata's compaction; Strata compacts again; still the model.
    more = [(i, "again", i) for i in range(0, 500, 7)]
    pypaimon_write(pt, pa.table({c: [r[k] for r in more] for k, c in enumerate(SCHEMA.names)}, schema=SCHEMA))
    for r in more:
        model[r[0]] = r
    table.compact(full=True)
    assert by_key(pypaimon_read(warehouse, "db.t")) == model_rows(model, SCHEMA.names)
