//! Strata's fixed-bucket function against pypaimon's, on 10,000 random keys of every supported key type.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::spec::{bucket_of, DataType, Datum};

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
