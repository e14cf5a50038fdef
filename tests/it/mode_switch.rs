//! Switching deletion vectors on an existing table (Paimon issue 5874 returned duplicates there), and the
//! CLI's `get` and `alter`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::fixtures::kv_rows;
use serde_json::Value;
use strata::spec::Datum;
use strata::{FileIO, LocalFileIO, Table, TableWriter};

fn write_round(t: &Table, round: i64, model: &mut BTreeMap<i64, i64>) {
    let mut w = TableWriter::new(t, "app").unwrap();
    for k in 0..200i64 {
        if (k + round) % 3 == 0 {
            w.put(vec![Some(Datum::BigInt(k)), Some(Datum::BigInt(round * 1000 + k))]).unwrap();
            model.insert(k, round * 1000 + k);
        }
    }
    w.commit().unwrap();
}

#[test]
fn switching_deletion_vectors_needs_a_full_compaction_and_then_stays_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wh/db.db/t");
    let p = path.to_str().unwrap();
    let (code, _, err) = common::strata_create(p, "id BIGINT NOT NULL, v BIGINT", "id", &["bucket=2"], &[]);
    assert_eq!(code, 0, "{err}");
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let mut model = BTreeMap::new();
    let t = Table::open(io.clone(), p).unwrap();
    for round in 0..4 {
        write_round(&t, round, &mut model);
    }
    let (code, _, err) = common::strata(&["alter", p, "--set", "deletion-vectors.enabled=true"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("fully compacted") && err.contains("5874"), "{err}");
    assert_eq!(Table::open(io.clone(), p).unwrap().schema().id, 0, "a refused change left a schema");

    let (code, out, err) =
        common::strata(&["alter", p, "--set", "deletion-vectors.enabled=true", "--compact", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["schemaId"], 1);
    let t = Table::open(io.clone(), p).unwrap();
    assert!(t.schema().core_options().deletion_vectors_enabled().unwrap());
    assert_eq!(kv_rows(&t), model);
    let mut vectors = 0;
    for round in 4..8 {
        write_round(&t, round, &mut model);
        assert_eq!(kv_rows(&t), model, "round {round} in deletion-vector mode");
        let s = t.snapshot(None).unwrap().unwrap();
        vectors += t.deletion_files(&s).unwrap().len();
    }
    assert!(vectors > 0, "no vectors were written in deletion-vector mode");

    // Switching back: refused while the table is not fully compacted, fine with the compaction.
    write_round(&t, 9, &mut model);
    let e = t
        .alter_options(&BTreeMap::from([("deletion-vectors.enabled".into(), "false".into())]), &[], false)
        .unwrap_err();
    assert_eq!(e.kind(), strata::ErrorKind::Invalid);
    let t = t.alter_options(&BTreeMap::from([("deletion-vectors.enabled".into(), "false".into())]), &[], true).unwrap();
    assert_eq!(t.schema().id, 2);
    write_round(&t, 8, &mut model);
    assert_eq!(kv_rows(&t), model);

    // strata get: rows by key as JSON lines; absent keys print nothing; a key of the wrong type is exit 2.
    let (code, out, err) = common::strata(&["get", p, "3", "4", "100000"]);
    assert_eq!(code, 0, "{err}");
    let got: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let want: Vec<Value> =
        [3i64, 4, 100_000].iter().filter_map(|k| model.get(k).map(|v| serde_json::json!({"id": k, "v": v}))).collect();
    assert_eq!(got, want);
    let (code, _, err) = common::strata(&["get", p, "three"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("three"), "{err}");
    // Many keys go through a TableQuery (local lookup files); the rows are the same, in key order given.
    let keys: Vec<i64> = (0..120).map(|i| (i * 37) % 700).collect();
    let mut args = vec!["get".to_string(), p.to_string()];
    args.extend(keys.iter().map(|k| k.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = common::strata(&args);
    assert_eq!(code, 0, "{err}");
    let got: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let want: Vec<Value> =
        keys.iter().filter_map(|k| model.get(k).map(|v| serde_json::json!({"id": k, "v": v}))).collect();
    assert!(want.len() > 32, "too few keys present to take the bulk path");
    assert_eq!(got, want);
}
