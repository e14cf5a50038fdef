"""Every type Strata stores, through the Python package: written from pyarrow, read back equal, and read equal
by both oracles; values that would change on the way in are refused, never stored changed."""
import datetime
import decimal

import pyarrow as pa
import pytest

import strata
from conftest import by_key, paimon_rust_read, pypaimon_read

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("dec", pa.decimal128(10, 2)),
        ("dec38", pa.decimal128(38, 10)),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("d", pa.date32()),
        ("tm", pa.time32("ms")),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ts9", pa.timestamp("ns")),
        ("ltz", pa.timestamp("us", tz="UTC")),
    ]
)


def rows(n):
    out = []
    for i in range(n):
        null = i % 7 == 3
        out.append(
            {
                "id": i,
                "b": None if null else i % 2 == 0,
                "i8": None if null else (i % 256) - 128,
                "i16": None if null else -(2**15) + i,
                "i32": None if null else 2**31 - 1 - i,
                "f32": None if null else float(i) / 4,
                "f64": None if null else -1e300 + i if i % 3 else 0.1 * i,
                "dec": None if null else decimal.Decimal(f"{i * 7 - 5000}.{i % 100:02d}"),
                "dec38": None if null else decimal.Decimal(f"-{i:03d}12345678901234567890123.{i:010d}"),
                "s": None if null else "ünïcødé-" * (i % 4) + str(i),
                "bin": None if null else bytes([i % 256, 0, 255]),
                "d": None if null else datetime.date(1970, 1, 1) + datetime.timedelta(days=i * 97 - 20000),
                "tm": None if null else datetime.time(i % 24, i % 60, i % 60, (i % 1000) * 1000),
                "ts3": None if null else datetime.datetime(2024, 1, 1) + datetime.timedelta(milliseconds=i * 1_000_003),
                "ts6": None if null else datetime.datetime(1969, 12, 31) + datetime.timedelta(microseconds=i * 999_999_7),
                "ts9": None if null else datetime.datetime(2030, 6, 1) + datetime.timedelta(microseconds=i),
                "ltz": None if null else datetime.datetime(2024, 3, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=i),
            }
        )
    return out


@pytest.mark.parametrize("dv", [True, False])
def test_every_type_round_trips_and_both_oracles_read_it(catalog, warehouse, dv):
    t = catalog.create_table(
        "db.types", SCHEMA, primary_keys=["id"], options={"bucket": "2", "deletion-vectors.enabled": str(dv).lower()}
    )
    data = rows(300)
    t.write(pa.Table.from_pylist(data, schema=SCHEMA))
    # An update of every fifth row in a second commit: deletion vectors (or the merge) must hide the old copy.
    updated = [dict(r, s=f"upd{r['id']}") for r in data[::5]]
    t.write(pa.Table.from_pylist(updated, schema=SCHEMA))
    expected = by_key([dict(r, s=f"upd{r['id']}") if r["id"] % 5 == 0 else r for r in data])
    got = by_key(t.scan().to_arrow().to_pylist())
    assert got == expected
    assert t.schema.field("id").nullable is False
    assert [str(f.type) for f in t.schema][1:8] == ["bool", "int8", "int16", "int32", "float", "double", "decimal128(10, 2)"]
    assert by_key(pypaimon_read(warehouse, "db.types")) == expected
    rust = by_key(paimon_rust_read(warehouse, "db.types"))
    assert [r["id"] for r in rust] == [r["id"] for r in expected]
    assert [r["s"] for r in rust] == [r["s"] for r in expected]
    assert [r["dec38"] for r in rust] == [r["dec38"] for r in expected]
    assert t.get([5, 6, 10_000]).to_pylist() == [expected[5], expected[6]]
    # A None key is a key of no row (the primary key is NOT NULL): nothing is found for it, the rest is.
    assert t.get([5, None]).to_pylist() == [expected[5]]
    assert t.query().get([None, 6]).to_pylist() == [expected[6]]
    # One key at a time as Python values: what get([key]).to_pylist() gives (this row's decimals, dates and
    # timestamps take pyarrow's road; a table of plain columns does not, test_rows checks that one).
    q = t.query()
    for k in (0, 3, 5, 6, 299):
        assert q.get_row(k) == expected[k]
    assert q.get_row(10_000) is None and q.get_row(None) is None
    for bad in ("5", 2**63, 1.5, True):
        with pytest.raises(strata.InvalidError):
            q.get_row(bad)
    with pytest.raises(strata.InvalidError):
        q.get_row((1, 2))
    # A float is not an integer key, whole or not (pyarrow alone would look up 1 for 1.5).
    for bad in ([1.5], [1.0], [5, 6.5]):
        with pytest.raises(strata.InvalidError):
            t.get(bad)
        with pytest.raises(strata.InvalidError):
            t.query().get(bad)


def test_create_table_maps_arrow_types_to_paimon_types(catalog):
    t = catalog.create_table("db.m", SCHEMA, primary_keys=["id"])
    fields = {f["name"]: f["type"] for f in t.inspect()["schema"]["fields"]}
    assert fields["id"] == "BIGINT NOT NULL"
    assert fields["dec"] == "DECIMAL(10, 2)"
    assert fields["tm"] == "TIME(3)"
    assert fields["ts9"] == "TIMESTAMP(9)"
    assert fields["ltz"] == "TIMESTAMP(6) WITH LOCAL TIME ZONE"
    assert fields["bin"] == "BYTES"
    assert strata._strata.paimon_type_of(pa.large_string(), False) == "STRING NOT NULL"
    with pytest.raises(strata.InvalidError, match="List"):
        catalog.create_table("db.bad", pa.schema([pa.field("id", pa.int64(), False), ("l", pa.list_(pa.int32()))]), primary_keys=["id"])
    t2 = catalog.create_table("db.fromstring", "id INT NOT NULL, v VARCHAR(3)", primary_keys=["id"])
    assert str(t2.schema.field("id").type) == "int32"


@pytest.mark.parametrize(
    "column_type,values,bad",
    [
        ("INT", pa.array([1, 2**40], pa.int64()), "2**40 in an INT"),
        ("BIGINT", pa.array([1.0, 1.5]), "a fraction in a BIGINT"),
        ("TINYINT", pa.array([1, 300], pa.int32()), "300 in a TINYINT"),
        ("VARCHAR(3)", pa.array(["abc", "abcd"]), "four characters in VARCHAR(3)"),
        ("DECIMAL(4, 1)", pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)), "a lost digit"),
        ("DECIMAL(4, 1)", pa.array([decimal.Decimal("12345")], pa.decimal128(6, 0)), "too many digits"),
        ("TIMESTAMP(3)", pa.array([1_000_001], pa.timestamp("us")), "a microsecond in TIMESTAMP(3)"),
        ("TIMESTAMP(6)", pa.array([1], pa.timestamp("us", tz="UTC")), "an instant in a TIMESTAMP"),
        ("BIGINT", pa.array(["1"]), "text in a BIGINT"),
        ("FLOAT", pa.array([0.1], pa.float64()), "0.1 rounded to a float"),
    ],
)
def test_values_that_would_change_are_refused_and_nothing_is_committed(catalog, column_type, values, bad):
    t = catalog.create_table("db.exact", f"id INT NOT NULL, c {column_type}", primary_keys=["id"])
    before = t.snapshot_id
    data = pa.table({"id": pa.array(range(len(values)), pa.int32()), "c": values})
    with pytest.raises(strata.InvalidError, match="column 'c'"):
        t.write(data)
    assert t.snapshot_id == before, bad
    assert t.scan().to_arrow().num_rows == 0


def test_widening_values_that_fit_are_taken(catalog):
    t = catalog.create_table("db.widen", "id INT NOT NULL, c BIGINT, f DOUBLE", primary_keys=["id"])
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "c": pa.array([7, None], pa.int8()), "f": pa.array([0.5, 2.0], pa.float32())}))
    assert by_key(t.scan().to_arrow().to_pylist()) == [{"id": 1, "c": 7, "f": 0.5}, {"id": 2, "c": None, "f": 2.0}]
