//! A deletion-vector table of ORC files with a STRING column takes updates: the compaction merges rows read
//! from ORC (nullable fields) with new rows and writes them back, and orc-rust refuses a batch whose schema
//! differs from its writer's in anything, nullability included (every second write failed before).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use strata::spec::{DataType, Datum, TableSchema};
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

#[test]
fn an_orc_deletion_vector_table_with_strings_takes_updates() {
    let dir = tempfile::tempdir().unwrap();
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("s".into(), DataType::string())],
        vec![],
        vec!["id".into()],
        BTreeMap::from([
            ("bucket".to_string(), "1".to_string()),
            ("deletion-vectors.enabled".to_string(), "true".to_string()),
            ("file.format".to_string(), "orc".to_string()),
        ]),
        0,
    )
    .unwrap();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let t = Table::create(io, dir.path().join("t").to_str().unwrap(), schema).unwrap();
    let mut w = TableWriter::new(&t, "u").unwrap();
    let mut model = BTreeMap::new();
    for round in 0..3i64 {
        for k in (0..40).step_by(round as usize + 1) {
            let s = format!("r{round}-{k}");
            w.put(vec![Some(Datum::BigInt(k)), Some(Datum::String(s.clone()))]).unwrap();
            model.insert(k, s);
        }
        w.commit().unwrap();
    }
    let mut got = BTreeMap::new();
    for b in &ReadBuilder::new(&t).read().unwrap().batches {
        let ids = b.column(0).as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
        let ss = b.column(1).as_any().downcast_ref::<arrow_array::StringArray>().unwrap();
        for i in 0..b.num_rows() {
            got.insert(ids.value(i), ss.value(i).to_string());
        }
    }
    assert_eq!(got, model);
}
