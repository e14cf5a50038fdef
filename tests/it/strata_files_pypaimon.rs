//! Data files written by Strata (parquet and orc) are read by pypaimon 2.1.0 with the same schema, values and
//! nulls, for every supported type.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::format::{array_of, FileFormat, KeyValueLayout, KvFileWriter, WriterConfig};
use strata::spec::{BinaryRow, DataType, Datum, FileSource, TableSchema};
use strata::table::{CommitMessage, Committable};
use strata::{FileIO, LocalFileIO, Table};

const TYPES: [(&str, &str); 15] = [
    ("id", "BIGINT NOT NULL"),
    ("b", "BOOLEAN"),
    ("ti", "TINYINT"),
    ("si", "SMALLINT"),
    ("i", "INT"),
    ("f", "FLOAT"),
    ("d", "DOUBLE"),
    ("dec", "DECIMAL(10, 2)"),
    ("bigdec", "DECIMAL(30, 5)"),
    ("s", "STRING"),
    ("vc", "VARCHAR(10)"),
    ("by", "BYTES"),
    ("dt", "DATE"),
    ("ts3", "TIMESTAMP(3)"),
    ("ts6", "TIMESTAMP(6)"),
];

fn civil(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days -> civil date.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn iso_timestamp(millis: i64, nanos: i32) -> String {
    let secs = millis.div_euclid(1000);
    let micros = millis.rem_euclid(1000) * 1000 + i64::from(nanos) / 1000;
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let base = format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", sod / 3600, sod / 60 % 60, sod % 60);
    if micros == 0 {
        base
    } else {
        format!("{base}.{micros:06}")
    }
}

fn decimal_string(unscaled: i128, scale: usize) -> String {
    let neg = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let padded =
        if digits.len() <= scale { format!("{}{digits}", "0".repeat(scale + 1 - digits.len())) } else { digits };
    let (i, f) = padded.split_at(padded.len() - scale);
    format!("{}{i}.{f}", if neg { "-" } else { "" })
}

fn expected_json(d: &Option<Datum>, ty: &str) -> Value {
    match d {
        None => Value::Null,
        Some(Datum::Boolean(v)) => json!(v),
        Some(Datum::TinyInt(v)) => json!(v),
        Some(Datum::SmallInt(v)) => json!(v),
        Some(Datum::Int(v)) => json!(v),
        Some(Datum::BigInt(v)) => json!(v),
        Some(Datum::Float(v)) => json!(f64::from(*v)),
        Some(Datum::Double(v)) => json!(v),
        Some(Datum::Decimal(v)) => json!(decimal_string(*v, if ty.contains("10, 2") { 2 } else { 5 })),
        Some(Datum::String(s)) => json!(s),
        Some(Datum::Bytes(b)) => json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        Some(Datum::Date(days)) => {
            let (y, m, d) = civil(i64::from(*days));
            json!(format!("{y:04}-{m:02}-{d:02}"))
        }
        Some(Datum::Timestamp { millis, nanos }) => json!(iso_timestamp(*millis, *nanos)),
        Some(Datum::Time(_)) => unreachable!(),
    }
}

fn random_datum(rng: &mut StdRng, name: &str, id: i64) -> Option<Datum> {
    if name != "id" && rng.random_bool(0.2) {
        return None;
    }
    Some(match name {
        "id" => Datum::BigInt(id),
        "b" => Datum::Boolean(rng.random()),
        "ti" => Datum::TinyInt(rng.random()),
        "si" => Datum::SmallInt(rng.random()),
        "i" => Datum::Int(rng.random()),
        "f" => Datum::Float(rng.random_range(-1000.0f32..1000.0)),
        "d" => Datum::Double(rng.random_range(-1e9..1e9)),
        "dec" => Datum::Decimal(i128::from(rng.random_range(-9_999_999_999i64..9_999_999_999)).max(100).max(-100)),
        "bigdec" => Datum::Decimal(i128::from(rng.random::<i64>()) * 1000 + 100_000),
        "s" => Datum::String((0..rng.random_range(0..30)).map(|_| char::from(rng.random_range(b'a'..=b'z'))).collect()),
        "vc" => {
            Datum::String((0..rng.random_range(0..10)).map(|_| if rng.random_bool(0.2) { 'ü' } else { 'x' }).collect())
        }
        "by" => Datum::Bytes((0..rng.random_range(0..12)).map(|_| rng.random()).collect()),
        "dt" => Datum::Date(rng.random_range(-20_000..40_000)),
        "ts3" => Datum::Timestamp { millis: rng.random_range(0..4_000_000_000_000i64), nanos: 0 },
        "ts6" => Datum::Timestamp {
            millis: rng.random_range(0..4_000_000_000_000i64),
            nanos: rng.random_range(0..1000) * 1000,
        },
        other => panic!("{other}"),
    })
}

fn check(format: &str, types: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wh/db.db").join(format!("all_{format}"));
    let path = path.to_str().unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let columns: Vec<(String, DataType)> = types.iter().map(|(n, t)| (n.to_string(), t.parse().unwrap())).collect();
    let options =
        BTreeMap::from([("bucket".to_string(), "1".to_string()), ("file.format".to_string(), format.to_string())]);
    let schema = TableSchema::new(columns.clone(), vec![], vec!["id".into()], options, 0).unwrap();
    let table = Table::create(io.clone(), path, schema.clone()).unwrap();
    let layout = Arc::new(KeyValueLayout::new(&schema).unwrap());

    let mut rng = StdRng::seed_from_u64(7);
    let n = 500;
    let rows: Vec<Vec<Option<Datum>>> =
        (0..n).map(|id| types.iter().map(|(name, _)| random_datum(&mut rng, name, id * 3)).collect()).collect();
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values((0..n).map(|id| id * 3)))];
    cols.push(Arc::new(Int64Array::from_iter_values(0..n)));
    cols.push(Arc::new(Int8Array::from(vec![0i8; n as usize])));
    for (i, (_, t)) in columns.iter().enumerate() {
        let values: Vec<Option<Datum>> = rows.iter().map(|r| r[i].clone()).collect();
        cols.push(array_of(t, &values).unwrap());
    }
    let batch = RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap();
    let bucket_dir = table.path_factory().bucket_dir("", 0);
    let mut counter = 0;
    let ext = format.to_string();
    let mut writer = KvFileWriter::new(
        io.clone(),
        bucket_dir,
        Box::new(move || {
            counter += 1;
            format!("data-strata-{counter}.{ext}")
        }),
        layout,
        WriterConfig {
            format: FileFormat::from_option(format).unwrap(),
            compression: "zstd".into(),
            target_file_size: 128 << 20,
            schema_id: 0,
            level: 0,
            file_source: FileSource::Append,
        },
    );
    writer.write(&batch).unwrap();
    let files = writer.close().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].row_count, n);
    assert_eq!((files[0].min_sequence_number, files[0].max_sequence_number), (0, n - 1));
    table
        .new_commit("strata")
        .unwrap()
        .commit(&Committable {
            identifier: 1,
            messages: vec![CommitMessage::new(
                BinaryRow::empty(),
                0,
                1,
                strata::lsm::DataIncrement { new_files: files, ..Default::default() }.into(),
            )],
            ..Default::default()
        })
        .unwrap();

    let mut got: Vec<Value> = serde_json::from_value(common::oracle(&["read", path])).unwrap();
    got.sort_by_key(|v| v["id"].as_i64().unwrap());
    assert_eq!(got.len(), n as usize);
    for (row, want) in got.iter().zip(&rows) {
        for (i, (name, ty)) in types.iter().enumerate() {
            assert_eq!(row[*name], expected_json(&want[i], ty), "{format} column {name} of row {}", row["id"]);
        }
    }
    // And Strata reads its own files back the same way.
    let (code, out, err) = common::strata(&["scan", path]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), n as usize);
}

#[test]
fn pypaimon_reads_parquet_files_strata_writes_for_every_type() {
    check("parquet", &TYPES);
}

#[test]
fn pypaimon_reads_orc_files_strata_writes() {
    // orc-rust 0.9 writes no DECIMAL (the other types round-trip).
    let types: Vec<(&str, &str)> = TYPES.iter().copied().filter(|(_, t)| !t.starts_with("DECIMAL")).collect();
    check("orc", &types);
}

#[test]
fn writing_decimal_to_orc_is_a_typed_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let cols = vec![("id".to_string(), DataType::bigint()), ("x".to_string(), "DECIMAL(10, 2)".parse().unwrap())];
    let schema = TableSchema::new(cols, vec![], vec!["id".into()], BTreeMap::new(), 0).unwrap();
    let layout = Arc::new(KeyValueLayout::new(&schema).unwrap());
    let cfg = WriterConfig {
        format: FileFormat::Orc,
        compression: "zstd".into(),
        target_file_size: 1 << 20,
        schema_id: 0,
        level: 0,
        file_source: FileSource::Append,
    };
    let mut w =
        KvFileWriter::new(io, dir.path().to_str().unwrap().into(), Box::new(|| "f.orc".into()), layout.clone(), cfg);
    let batch = RecordBatch::new_empty(layout.file_schema.clone());
    w.write(&batch).unwrap();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![1])),
        Arc::new(Int64Array::from(vec![1])),
        Arc::new(Int8Array::from(vec![0])),
        Arc::new(Int64Array::from(vec![1])),
        array_of(&"DECIMAL(10, 2)".parse().unwrap(), &[Some(Datum::Decimal(5))]).unwrap(),
    ];
    let e = w.write(&RecordBatch::try_new(layout.file_schema.clone(), cols).unwrap()).unwrap_err();
    assert_eq!(e.kind(), strata::ErrorKind::Unsupported);
    assert!(e.to_string().contains("'x'"), "{e}");
}
