"""Branches (Paimon's branch/branch-NAME/): a branch pypaimon 2.1.0 creates from a tag and writes reads through
the package as catalog.get_table("db.t$branch_dev"); what the package writes there pypaimon reads, and the
table itself stays as it was."""
import pyarrow as pa
import pytest

import strata
from conftest import by_key, pypaimon_create, pypaimon_read, pypaimon_write

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def rows(*pairs):
    return [{"id": i, "v": v} for i, v in pairs]


def test_a_branch_reads_and_writes_through_the_package(catalog, warehouse):
    from pypaimon import CatalogFactory

    pt = pypaimon_create(warehouse, "db.t", SCHEMA, ["id"], [], {"bucket": "1"})
    pypaimon_write(pt, pa.Table.from_pylist(rows((1, "a"), (2, "b")), schema=SCHEMA))
    pc = CatalogFactory.create({"warehouse": warehouse})
    pc.get_table("db.t").create_tag("t1")
    pc.create_branch("db.t", "dev", "t1")
    pypaimon_write(pc.get_table("db.t$branch_dev"), pa.Table.from_pylist(rows((2, "B")), schema=SCHEMA))

    branch = catalog.get_table("db.t$branch_dev")
    assert by_key(branch.scan().to_arrow().to_pylist()) == rows((1, "a"), (2, "B"))
    branch.write(pa.Table.from_pylist(rows((3, "c")), schema=SCHEMA))
    assert by_key(pypaimon_read(warehouse, "db.t$branch_dev")) == rows((1, "a"), (2, "B"), (3, "c"))
    assert by_key(catalog.get_table("db.t").scan().to_arrow().to_pylist()) == rows((1, "a"), (2, "b"))
    assert by_key(pypaimon_read(warehouse, "db.t")) == rows((1, "a"), (2, "b"))
    with pytest.raises(strata.NotFoundError):
        catalog.get_table("db.t$branch_nope")
