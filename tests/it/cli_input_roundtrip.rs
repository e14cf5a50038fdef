//! Random rows of every table type, written by this test as jsonl, csv and parquet (fields in a random
//! order, numbers as JSON numbers or strings, instants with random offsets, strings with quotes, commas
//! and line breaks), go through one `strata write` and read back through the table API equal to the
//! generated rows, value for value (floats by their bits).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use common::strata;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use strata::format::{array_of, datum_at};
use strata::spec::{DataType, Datum, TypeRoot};
use strata::{LocalFileIO, Table};

const COLUMNS: &[(&str, &str)] = &[
    ("id", "BIGINT NOT NULL"),
    ("b", "BOOLEAN"),
    ("ti", "TINYINT"),
    ("si", "SMALLINT"),
    ("i", "INT"),
    ("f", "FLOAT"),
    ("d", "DOUBLE"),
    ("dec", "DECIMAL(10, 2)"),
    ("s", "STRING"),
    ("vc", "VARCHAR(5)"),
    ("bin", "BYTES"),
    ("dt", "DATE"),
    ("tm", "TIME(3)"),
    ("ts", "TIMESTAMP(6)"),
    ("ts0", "TIMESTAMP(0)"),
    ("ts9", "TIMESTAMP(9)"),
    ("ltz", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
];

type Row = Vec<Option<Datum>>;

fn types() -> Vec<DataType> {
    COLUMNS.iter().map(|(_, t)| t.parse().unwrap()).collect()
}

fn timestamp(total_nanos: i128) -> Datum {
    Datum::Timestamp {
        millis: total_nanos.div_euclid(1_000_000) as i64,
        nanos: total_nanos.rem_euclid(1_000_000) as i32,
    }
}

fn text_char(rng: &mut StdRng) -> char {
    const PALETTE: &[char] = &['a', 'Z', '0', ' ', ',', '"', '\'', '\\', '\n', '\r', '\t', 'é', '🙂', '{', '\u{1}'];
    PALETTE[rng.random_range(0..PALETTE.len())]
}

fn random_float(rng: &mut StdRng, single: bool) -> Datum {
    let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0];
    let v = if rng.random_bool(0.1) {
        special[rng.random_range(0..special.len())]
    } else {
        loop {
            let v = if single { f64::from(f32::from_bits(rng.random())) } else { f64::from_bits(rng.random()) };
            if v.is_finite() {
                break v;
            }
        }
    };
    if single {
        Datum::Float(v as f32)
    } else {
        Datum::Double(v)
    }
}

/// A random value of column `c` (null now and then).
fn random_value(rng: &mut StdRng, c: usize) -> Option<Datum> {
    if c > 0 && rng.random_bool(0.15) {
        return None;
    }
    const DAY_MIN: i64 = -719_162; // 0001-01-01
    const DAY_MAX: i64 = 2_932_896; // 9999-12-31
    let secs = |rng: &mut StdRng| rng.random_range(DAY_MIN * 86_400..(DAY_MAX + 1) * 86_400) as i128;
    Some(match COLUMNS[c].0 {
        "id" => unreachable!("ids are given"),
        "b" => Datum::Boolean(rng.random()),
        "ti" => Datum::TinyInt(rng.random()),
        "si" => Datum::SmallInt(rng.random()),
        "i" => Datum::Int(rng.random()),
        "f" => random_float(rng, true),
        "d" => random_float(rng, false),
        "dec" => Datum::Decimal(rng.random_range(-9_999_999_999i128..=9_999_999_999)),
        "s" => Datum::String((0..rng.random_range(0..12)).map(|_| text_char(rng)).collect()),
        "vc" => Datum::String((0..rng.random_range(0..=5)).map(|_| text_char(rng)).collect()),
        "bin" => Datum::Bytes((0..rng.random_range(0..8)).map(|_| rng.random()).collect()),
        "dt" => Datum::Date(rng.random_range(DAY_MIN..=DAY_MAX) as i32),
        "tm" => Datum::Time(rng.random_range(0..86_400_000)),
        "ts" => timestamp(secs(rng) * 1_000_000_000 + rng.random_range(0..1_000_000i128) * 1000),
        "ts0" => timestamp(secs(rng) * 1_000_000_000),
        // Nanosecond timestamps span 1677 to 2262.
        "ts9" => timestamp(rng.random_range(-9_000_000_000_000_000_000i128..9_000_000_000_000_000_000)),
        // A day from either end, so that any offset keeps the local date within years 1 to 9999.
        "ltz" => {
            let s = rng.random_range((DAY_MIN + 1) * 86_400..DAY_MAX * 86_400) as i128;
            timestamp(s * 1_000_000_000 + rng.random_range(0..1000i128) * 1_000_000)
        }
        other => unreachable!("{other}"),
    })
}

/// Year, month, day of days since the epoch (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn date_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD?HH:MM:SS.fffffffff` of nanoseconds since the epoch, shifted by `offset` minutes (then
/// suffixed with it).
fn timestamp_text(rng: &mut StdRng, millis: i64, nanos: i32, offset: Option<i64>) -> String {
    let total = i128::from(millis) * 1_000_000 + i128::from(nanos) + i128::from(offset.unwrap_or(0)) * 60_000_000_000;
    let secs = total.div_euclid(1_000_000_000) as i64;
    let frac = total.rem_euclid(1_000_000_000);
    let sep = if rng.random() { 'T' } else { ' ' };
    let tod = secs.rem_euclid(86_400);
    let mut s =
        format!("{}{sep}{:02}:{:02}:{:02}", date_text(secs.div_euclid(86_400)), tod / 3600, tod / 60 % 60, tod % 60);
    if frac != 0 || rng.random() {
        s.push_str(&format!(".{frac:09}"));
    }
    if let Some(o) = offset {
        if o == 0 && rng.random() {
            s.push('Z');
        } else {
            s.push_str(&format!("{}{:02}:{:02}", if o < 0 { '-' } else { '+' }, o.abs() / 60, o.abs() % 60));
        }
    }
    s
}

/// A value as text (csv fields, JSON strings and numbers).
fn text(rng: &mut StdRng, t: &DataType, v: &Datum) -> String {
    match (v, t.root) {
        (Datum::Boolean(b), _) => {
            if rng.random() {
                b.to_string().to_uppercase()
            } else {
                b.to_string()
            }
        }
        (Datum::TinyInt(x), _) => x.to_string(),
        (Datum::SmallInt(x), _) => x.to_string(),
        (Datum::Int(x), _) => x.to_string(),
        (Datum::BigInt(x), _) => x.to_string(),
        (Datum::Float(x), _) if x.is_nan() => "NaN".into(),
        (Datum::Float(x), _) => x.to_string(),
        (Datum::Double(x), _) if x.is_nan() => "NaN".into(),
        (Datum::Double(x), _) => x.to_string(),
        (Datum::Decimal(x), _) => {
            let sign = if *x < 0 { "-" } else { "" };
            format!("{sign}{}.{:02}", x.abs() / 100, x.abs() % 100)
        }
        (Datum::String(s), _) => s.clone(),
        (Datum::Bytes(b), _) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            if rng.random() {
                hex.to_uppercase()
            } else {
                hex
            }
        }
        (Datum::Date(d), _) => date_text(i64::from(*d)),
        (Datum::Time(ms), _) => {
            let ms = i64::from(*ms);
            format!("{:02}:{:02}:{:02}.{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
        }
        (Datum::Timestamp { millis, nanos }, TypeRoot::LocalZonedTimestamp(_)) => {
            let offset = rng.random_range(-18 * 60..=18 * 60);
            timestamp_text(rng, *millis, *nanos, Some(offset))
        }
        (Datum::Timestamp { millis, nanos }, _) => timestamp_text(rng, *millis, *nanos, None),
    }
}

fn jsonl(rng: &mut StdRng, rows: &[Row], types: &[DataType]) -> String {
    let mut out = String::new();
    for row in rows {
        let mut fields: Vec<usize> = (0..COLUMNS.len()).filter(|&c| row[c].is_some() || rng.random()).collect();
        fields.shuffle(rng);
        let parts: Vec<String> = fields
            .into_iter()
            .map(|c| {
                let value = match &row[c] {
                    None => "null".to_string(),
                    Some(v) => {
                        let s = text(rng, &types[c], v);
                        let number = matches!(
                            v,
                            Datum::TinyInt(_)
                                | Datum::SmallInt(_)
                                | Datum::Int(_)
                                | Datum::BigInt(_)
                                | Datum::Decimal(_)
                        ) || matches!(v, Datum::Float(x) if x.is_finite())
                            || matches!(v, Datum::Double(x) if x.is_finite());
                        match v {
                            Datum::Boolean(b) if rng.random() => b.to_string(),
                            // Rust prints floats without an exponent: a JSON number, written as is.
                            _ if number && rng.random_bool(0.8) => s,
                            _ => serde_json::Value::String(s).to_string(),
                        }
                    }
                };
                format!("{}: {}", serde_json::Value::String(COLUMNS[c].0.into()), value)
            })
            .collect();
        out.push_str(&format!("{{{}}}\n", parts.join(", ")));
    }
    out
}

fn csv(rng: &mut StdRng, rows: &[Row], types: &[DataType]) -> String {
    let mut order: Vec<usize> = (0..COLUMNS.len()).collect();
    order.shuffle(rng);
    let mut out = order.iter().map(|&c| COLUMNS[c].0).collect::<Vec<_>>().join(",");
    out.push_str(if rng.random() { "\r\n" } else { "\n" });
    for row in rows {
        let fields: Vec<String> = order
            .iter()
            .map(|&c| match &row[c] {
                None => String::new(),
                Some(v) => {
                    let s = text(rng, &types[c], v);
                    let must_quote = matches!(v, Datum::String(_) | Datum::Bytes(_));
                    if must_quote || rng.random_bool(0.2) {
                        format!("\"{}\"", s.replace('"', "\"\""))
                    } else {
                        s
                    }
                }
            })
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

fn parquet(rng: &mut StdRng, rows: &[Row], types: &[DataType], path: &std::path::Path) {
    let mut order: Vec<usize> = (0..COLUMNS.len()).collect();
    order.shuffle(rng);
    let columns: Vec<(&str, ArrayRef)> = order
        .into_iter()
        .map(|c| {
            let values: Vec<Option<Datum>> = rows.iter().map(|r| r[c].clone()).collect();
            let array: ArrayRef = match COLUMNS[c].0 {
                // Wider file types than the table's, which take every value exactly.
                "ti" | "si" => Arc::new(Int64Array::from_iter(values.iter().map(|v| {
                    v.as_ref().map(|d| match d {
                        Datum::TinyInt(x) => i64::from(*x),
                        Datum::SmallInt(x) => i64::from(*x),
                        _ => unreachable!(),
                    })
                }))),
                "f" => Arc::new(Float64Array::from_iter(
                    values
                        .iter()
                        .map(|v| v.as_ref().map(|d| if let Datum::Float(x) = d { f64::from(*x) } else { 0.0 })),
                )),
                _ => array_of(&types[c].with_nullable(true), &values).unwrap(),
            };
            (COLUMNS[c].0, array)
        })
        .collect();
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(64)).build();
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), Some(props))
        .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Equal values; floats by their bits (NaN is NaN, -0.0 is not 0.0).
fn same(a: &Option<Datum>, b: &Option<Datum>) -> bool {
    match (a, b) {
        (Some(Datum::Float(x)), Some(Datum::Float(y))) => x.to_bits() == y.to_bits(),
        (Some(Datum::Double(x)), Some(Datum::Double(y))) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

#[test]
fn random_rows_in_every_format_read_back_exactly() {
    let types = types();
    let schema = COLUMNS.iter().map(|(n, t)| format!("{n} {t}")).collect::<Vec<_>>().join(", ");
    for seed in 1..=3u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t").to_str().unwrap().to_string();
        let (code, _, err) =
            strata(&["create", &path, "--schema", &schema, "--primary-key", "id", "--option", "bucket=2"]);
        assert_eq!(code, 0, "{err}");
        let mut model: BTreeMap<i64, Row> = BTreeMap::new();
        let mut files = Vec::new();
        for (k, format) in ["jsonl", "csv", "parquet"].into_iter().enumerate() {
            let rows: Vec<Row> = (0..200)
                .map(|r| {
                    let id = (k * 1000 + r) as i64;
                    let mut row = vec![Some(Datum::BigInt(id))];
                    row.extend((1..COLUMNS.len()).map(|c| random_value(&mut rng, c)));
                    model.insert(id, row.clone());
                    row
                })
                .collect();
            let file = dir.path().join(format!("rows.{format}"));
            match format {
                "jsonl" => std::fs::write(&file, jsonl(&mut rng, &rows, &types)).unwrap(),
                "csv" => std::fs::write(&file, csv(&mut rng, &rows, &types)).unwrap(),
                _ => parquet(&mut rng, &rows, &types, &file),
            }
            files.push(file.to_str().unwrap().to_string());
        }
        let mut args = vec!["write", path.as_str()];
        args.extend(files.iter().map(String::as_str));
        let (code, out, err) = strata(&args);
        assert_eq!(code, 0, "seed {seed}: {out} {err}");

        let table = Table::open(Arc::new(LocalFileIO::new()), &path).unwrap();
        let opts = strata::table::ScanOptions::default();
        let result = strata::table::scan(&table, &opts).unwrap();
        let mut read: BTreeMap<i64, Row> = BTreeMap::new();
        for batch in &result.batches {
            for r in 0..batch.num_rows() {
                let row: Row = (0..COLUMNS.len()).map(|c| datum_at(batch.column(c).as_ref(), r).unwrap()).collect();
                let Some(Datum::BigInt(id)) = row[0] else { panic!("id {:?}", row[0]) };
                read.insert(id, row);
            }
        }
        assert_eq!(read.len(), model.len(), "seed {seed}");
        for (id, want) in &model {
            let got = &read[id];
            for c in 0..COLUMNS.len() {
                assert!(
                    same(&got[c], &want[c]),
                    "seed {seed} id {id} column {}: read {:?}, wrote {:?}",
                    COLUMNS[c].0,
                    got[c],
                    want[c]
                );
            }
        }
    }
}
