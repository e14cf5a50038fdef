//! Strata's fixed-bucket function against pypaimon's, on 10,000 random keys of every supported key type; and
//! lookups in a table whose partitions were written with different bucket counts (Paimon's rescale).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use strata::spec::{bucket_of, DataType, Datum, TableSchema};
use strata::{get, CmpOp, FileIO, LocalFileIO, Predicate, ReadBuilder, Table, TableQuery, TableWriter};

const KEYS: usize = 10_000;

/// A random value of `ty` as a Datum and as the JSON the oracle turns into a Python value.
fn random_value(rng: &mut StdRng, ty: &str) -> (Datum, Value) {
    match ty {
        "BOOLEAN" => {
            let b = rng.random::<bool>();
            (Datum::Boolean(b), json!(b))
        }
        "TINYINT" => {
            let v = rng.random::<i8>();
            (Datum::TinyInt(v), json!(v))
        }
        "SMALLINT" => {
            let v = rng.random::<i16>();
            (Datum::SmallInt(v), json!(v))
        }
        "INT" => {
            let v = rng.random::<i32>();
            (Datum::Int(v), json!(v))
        }
        "BIGINT" => {
            let v = rng.random::<i64>();
            (Datum::BigInt(v), json!(v))
        }
        "FLOAT" => {
            let v = (rng.random::<f32>() - 0.5) * 1e6;
            (Datum::Float(v), json!(f64::from(v)))
        }
        "DOUBLE" => {
            let v = (rng.random::<f64>() - 0.5) * 1e12;
            (Datum::Double(v), json!(v))
        }
        "DECIMAL(10, 2)" => {
            let unscaled = rng.random_range(-9_999_999_999i64..=9_999_999_999);
            (Datum::Decimal(i128::from(unscaled)), json!(format!("{}", rust_decimal_string(i128::from(unscaled), 2))))
        }
        "DECIMAL(38, 6)" => {
            let unscaled = i128::from(rng.random::<i64>()) * i128::from(rng.random_range(1i64..1_000_000_000));
            (Datum::Decimal(unscaled), json!(rust_decimal_string(unscaled, 6)))
        }
        "STRING" | "VARCHAR(20)" => {
            let len = rng.random_range(0..20);
            let s: String = (0..len)
                .map(|_| if rng.random_bool(0.1) { 'é' } else { char::from(rng.random_range(b'a'..=b'z')) })
                .collect();
            (Datum::String(s.clone()), json!(s))
        }
        "BYTES" => {
            let len = rng.random_range(0..24);
            let b: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            (Datum::Bytes(b), json!(hex))
        }
        "DATE" => {
            let d = rng.random_range(-100_000..100_000);
            (Datum::Date(d), json!(d))
        }
        "TIMESTAMP(3)" => {
            let millis = rng.random_range(-2_000_000_000_000i64..4_000_000_000_000);
            (Datum::Timestamp { millis, nanos: 0 }, json!(millis * 1000))
        }
        "TIMESTAMP(6)" => {
            let micros = rng.random_range(-2_000_000_000_000_000i64..4_000_000_000_000_000);
            let millis = micros.div_euclid(1000);
            let nanos = (micros.rem_euclid(1000) * 1000) as i32;
            (Datum::Timestamp { millis, nanos }, json!(micros))
        }
        other => panic!("no generator for {other}"),
    }
}

fn rust_decimal_string(unscaled: i128, scale: u32) -> String {
    let neg = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded =
        if digits.len() <= scale { format!("{}{digits}", "0".repeat(scale + 1 - digits.len())) } else { digits };
    let (i, f) = padded.split_at(padded.len() - scale);
    format!("{}{i}.{f}", if neg { "-" } else { "" })
}

fn check(types: &[&str], buckets: i32, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let data_types: Vec<DataType> = types.iter().map(|t| format!("{t} NOT NULL").parse().unwrap()).collect();
    let mut keys = Vec::with_capacity(KEYS);
    let mut ours = Vec::with_capacity(KEYS);
    for _ in 0..KEYS {
        let (datums, json): (Vec<Option<Datum>>, Vec<Value>) = types
            .iter()
            .map(|t| {
                let (d, j) = random_value(&mut rng, t);
                (Some(d), j)
            })
            .unzip();
        ours.push(bucket_of(&datums, &data_types, buckets).unwrap());
        keys.push(Value::Array(json));
    }
    let spec = json!({"types": types, "buckets": buckets, "keys": keys});
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), spec.to_string()).unwrap();
    let theirs: Vec<i32> = serde_json::from_value(common::oracle(&["bucket", file.path().to_str().unwrap()])).unwrap();
    assert_eq!(theirs.len(), KEYS);
    let diffs: Vec<usize> = (0..KEYS).filter(|&i| ours[i] != theirs[i]).collect();
    assert!(
        diffs.is_empty(),
        "{types:?}: {} of {KEYS} keys differ, first {:?}: strata {} pypaimon {}",
        diffs.len(),
        keys[diffs[0]],
        ours[diffs[0]],
        theirs[diffs[0]]
    );
    // The keys spread over every bucket (a constant function would also "agree" on a degenerate sample).
    let distinct: std::collections::BTreeSet<i32> = ours.iter().copied().collect();
    assert!(distinct.len() as i32 == buckets || types == ["BOOLEAN"], "{types:?}: only buckets {distinct:?}");
}

#[test]
fn bucket_function_agrees_with_pypaimon_for_every_key_type() {
    let types = [
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL(10, 2)",
        "DECIMAL(38, 6)",
        "STRING",
        "VARCHAR(20)",
        "BYTES",
        "DATE",
        "TIMESTAMP(3)",
        "TIMESTAMP(6)",
    ];
    for (i, t) in types.iter().enumerate() {
        check(&[t], 7, i as u64);
    }
    check(&["INT", "STRING"], 16, 100);
    check(&["BIGINT", "DATE", "BYTES"], 3, 101);
}

/// `p STRING` (partition), `id BIGINT`, `v BIGINT`; primary key (p, id); `buckets` fixed buckets.
fn partitioned_schema(buckets: i32, dv: bool) -> TableSchema {
    let options = BTreeMap::from([
        ("bucket".to_string(), buckets.to_string()),
        ("deletion-vectors.enabled".to_string(), dv.to_string()),
    ]);
    let fields =
        vec![("p".into(), DataType::string()), ("id".into(), DataType::bigint()), ("v".into(), DataType::bigint())];
    TableSchema::new(fields, vec!["p".into()], vec!["p".into(), "id".into()], options, 0).unwrap()
}

fn write_partition(t: &Table, p: &str, keys: std::ops::Range<i64>, tag: i64) {
    let mut w = TableWriter::new(t, "u").unwrap();
    for k in keys {
        w.put(vec![Some(Datum::String(p.into())), Some(Datum::BigInt(k)), Some(Datum::BigInt(k * 10 + tag))]).unwrap();
    }
    w.commit().unwrap();
}

fn value_in(b: Option<arrow_array::RecordBatch>) -> Option<i64> {
    let b = b?;
    Some(b.column_by_name("v").unwrap().as_primitive::<Int64Type>().value(b.num_rows() - 1))
}

/// Paimon rescales a fixed-bucket table by changing `bucket` and then overwriting partitions one by one
/// (`ALTER TABLE t SET ('bucket' = '4')`, `INSERT OVERWRITE ... PARTITION`): until a partition is rewritten
/// its files keep the old count, recorded in each manifest entry's `_TOTAL_BUCKETS`. `get` and `TableQuery`
/// routed every key by the table's new count and missed the keys of old partitions whose bucket differs.
#[test]
fn lookups_route_by_the_bucket_count_each_partition_was_written_with() {
    for dv in [true, false] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t");
        let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
        let t = Table::create(io.clone(), dir.to_str().unwrap(), partitioned_schema(2, dv)).unwrap();
        write_partition(&t, "old", 0..200, 1);
        // What Paimon's ALTER TABLE writes (Strata itself refuses the change on a table with data).
        let mut schema_json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("schema/schema-0")).unwrap()).unwrap();
        schema_json["id"] = 1.into();
        schema_json["options"]["bucket"] = "4".into();
        std::fs::write(dir.join("schema/schema-1"), schema_json.to_string()).unwrap();
        let t = Table::open(io, dir.to_str().unwrap()).unwrap();
        assert_eq!(t.schema().id, 1);
        write_partition(&t, "new", 0..200, 2);
        let moved = (0..200).filter(|&k| {
            let key = [Some(Datum::BigInt(k))];
            bucket_of(&key, &[DataType::bigint()], 2).unwrap() != bucket_of(&key, &[DataType::bigint()], 4).unwrap()
        });
        assert!(moved.count() > 50, "the test needs keys whose bucket differs between the two counts");
        let query = TableQuery::new(&t).unwrap();
        for (p, tag) in [("old", 1), ("new", 2)] {
            for k in 0..200 {
                let key = [Some(Datum::String(p.into())), Some(Datum::BigInt(k))];
                assert_eq!(value_in(get(&t, &key, None).unwrap()), Some(k * 10 + tag), "get {p}/{k}, dv {dv}");
                assert_eq!(value_in(query.get(&key).unwrap()), Some(k * 10 + tag), "TableQuery {p}/{k}, dv {dv}");
            }
        }
        let rows: usize = ReadBuilder::new(&t).read().unwrap().batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 400, "dv {dv}");
        // A scan filtered to one key prunes buckets by the same counts.
        for (p, k) in (0..200).step_by(7).flat_map(|k| [("old", k), ("new", k)]) {
            let filter = Predicate::And(vec![
                Predicate::cmp("p", CmpOp::Eq, Datum::String(p.into())),
                Predicate::cmp("id", CmpOp::Eq, Datum::BigInt(k)),
            ]);
            let read = ReadBuilder::new(&t).with_filter(filter).read().unwrap();
            assert_eq!(read.num_rows(), 1, "scan {p}/{k}, dv {dv}");
        }
        // A write into the old partition with the new count would split its keys over two bucket functions:
        // refused, and the table is unchanged.
        let mut w = TableWriter::new(&t, "u").unwrap();
        w.put(vec![Some(Datum::String("old".into())), Some(Datum::BigInt(7)), Some(Datum::BigInt(-1))]).unwrap();
        assert!(w.commit().is_err(), "dv {dv}");
        let key = [Some(Datum::String("old".into())), Some(Datum::BigInt(7))];
        assert_eq!(value_in(get(&t, &key, None).unwrap()), Some(71), "dv {dv}");
    }
}
