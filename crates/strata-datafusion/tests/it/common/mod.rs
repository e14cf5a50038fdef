//! Shared by the SQL tests: random Strata tables with a `BTreeMap` model of their rows, and the rows a query
//! returned, read back by column name.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType as ArrowType;
use rand::rngs::StdRng;
use rand::Rng;
use strata_io::LocalFileIO;
use strata_spec::{parse_columns, Datum, TableSchema};
use strata_table::{FileSystemCatalog, Table, TableWriter};

/// Keys are (p, id).
pub(crate) type Key = (String, i64);

/// A row's values besides the key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) name: Option<String>,
    pub(crate) v: Option<i64>,
    pub(crate) d: Option<f64>,
}

pub(crate) type Model = BTreeMap<Key, Row>;

pub(crate) const PARTITIONS: [&str; 3] = ["a", "b", "c"];

/// A warehouse in a temporary directory, with database `db`.
pub(crate) struct Warehouse {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) catalog: FileSystemCatalog,
}

impl Warehouse {
    pub(crate) fn new() -> Warehouse {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wh").to_str().unwrap().to_string();
        let catalog = FileSystemCatalog::new(Arc::new(LocalFileIO::new()), &path);
        catalog.create_database("db", true).unwrap();
        Warehouse { dir, catalog }
    }

    pub(crate) fn path(&self) -> String {
        self.catalog.warehouse().to_string()
    }

    /// `db.<name>`: id BIGINT NOT NULL, p STRING NOT NULL, name STRING, v BIGINT, d DOUBLE; primary key
    /// (id, p), partitioned by p when asked.
    pub(crate) fn create(&self, name: &str, partitioned: bool, options: &[(&str, &str)]) -> Table {
        let columns = parse_columns("id BIGINT NOT NULL, p STRING NOT NULL, name STRING, v BIGINT, d DOUBLE").unwrap();
        let partition = if partitioned { vec!["p".to_string()] } else { Vec::new() };
        let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let schema = TableSchema::new(columns, partition, vec!["id".into(), "p".into()], options, 0).unwrap();
        self.catalog.create_table("db", name, schema, false).unwrap()
    }
}

/// Writes one commit of `ops` random upserts and deletes (keys below `keys`) into `table` and `model`;
/// the snapshot it made.
pub(crate) fn random_commit(table: &Table, model: &mut Model, rng: &mut StdRng, ops: usize, keys: i64) -> i64 {
    let mut w = TableWriter::new(table, "test").unwrap();
    for _ in 0..ops {
        let key = (PARTITIONS[rng.random_range(0..3)].to_string(), rng.random_range(0..keys));
        if rng.random_bool(0.2) {
            w.delete(vec![Some(Datum::BigInt(key.1)), Some(Datum::String(key.0.clone()))]).unwrap();
            model.remove(&key);
            continue;
        }
        let row = Row {
            name: rng.random_bool(0.85).then(|| format!("n{}", rng.random_range(0..1000))),
            v: rng.random_bool(0.9).then(|| rng.random_range(-1000..1000)),
            d: rng.random_bool(0.9).then(|| rng.random_range(-10_000..10_000) as f64 / 8.0),
        };
        w.put(vec![
            Some(Datum::BigInt(key.1)),
            Some(Datum::String(key.0.clone())),
            row.name.clone().map(Datum::String),
            row.v.map(Datum::BigInt),
            row.d.map(Datum::Double),
        ])
        .unwrap();
        model.insert(key, row);
    }
    w.commit().unwrap().expect("a snapshot")
}

/// The values of column `name` in `batches`, as text (`None` for NULL): numbers as Rust prints them.
pub(crate) fn column(batches: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for b in batches {
        let c = b.column_by_name(name).unwrap_or_else(|| panic!("no column {name} in {:?}", b.schema()));
        for i in 0..c.len() {
            if c.is_null(i) {
                out.push(None);
                continue;
            }
            out.push(Some(match c.data_type() {
                ArrowType::Int64 => c.as_primitive::<Int64Type>().value(i).to_string(),
                ArrowType::UInt64 => c.as_primitive::<UInt64Type>().value(i).to_string(),
                ArrowType::Float64 => c.as_primitive::<Float64Type>().value(i).to_string(),
                ArrowType::Utf8 => c.as_string::<i32>().value(i).to_string(),
                ArrowType::Utf8View => c.as_string_view().value(i).to_string(),
                other => panic!("column {name} of type {other}"),
            }));
        }
    }
    out
}

/// The rows of a `SELECT id, p, name, v, d` by key; a key returned twice fails.
pub(crate) fn keyed(what: &str, batches: &[RecordBatch]) -> Model {
    let (ids, ps) = (column(batches, "id"), column(batches, "p"));
    let (names, vs, ds) = (column(batches, "name"), column(batches, "v"), column(batches, "d"));
    let mut m = Model::new();
    for i in 0..ids.len() {
        let key = (ps[i].clone().unwrap(), ids[i].as_ref().unwrap().parse().unwrap());
        let row = Row {
            name: names[i].clone(),
            v: vs[i].as_ref().map(|v| v.parse().unwrap()),
            d: ds[i].as_ref().map(|d| d.parse().unwrap()),
        };
        assert!(m.insert(key.clone(), row).is_none(), "{what}: key {key:?} returned twice");
    }
    m
}

/// Fails with the first differences when `got` is not `want`.
pub(crate) fn same(what: &str, got: &Model, want: &Model) {
    if got == want {
        return;
    }
    let missing: Vec<&Key> = want.keys().filter(|k| !got.contains_key(*k)).take(5).collect();
    let extra: Vec<&Key> = got.keys().filter(|k| !want.contains_key(*k)).take(5).collect();
    let differ: Vec<_> = want.iter().filter(|(k, v)| got.get(*k).is_some_and(|g| g != *v)).take(3).collect();
    panic!(
        "{what}: {} rows, the model has {}; missing {missing:?}; extra {extra:?}; differing (model) {differ:?}",
        got.len(),
        want.len()
    );
}

/// A multi-threaded runtime, as DataFusion runs on.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}
