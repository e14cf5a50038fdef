//! Tags by either engine on a table both write (issue 52): each engine tags a snapshot, both expire all but
//! the latest snapshot, and each tag still reads, in both engines, what its snapshot held.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::spec::Datum;
use strata::table::{create_tag, expire_snapshots, read_builder, ExpireOptions};
use strata::{FileIO, LocalFileIO, Table, TableWriter};

use super::java_paimon::{java_rows, random_op, same, strata_rows, Model};
use crate::common::java::JavaPaimon;

fn open(path: &str) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let mut t = Table::open(io, path).unwrap();
    t.set_foreign_compaction_window(Duration::ZERO);
    t
}

fn strata_read_tag(path: &str, tag: &str) -> Model {
    let options = BTreeMap::from([("scan.tag-name".to_string(), tag.to_string())]);
    strata_rows(&read_builder(&open(path), &options).unwrap().read().unwrap().batches)
}

fn java_commit(java: &mut JavaPaimon, path: &str, rng: &mut StdRng, round: usize, model: &mut Model) {
    let rows: Vec<Value> = (0..rng.random_range(30..80))
        .map(|_| match random_op(rng, round, model) {
            (id, None) => json!({"id": id, "_kind": "-D"}),
            (id, Some((name, v))) => json!({"id": id, "name": name, "v": v}),
        })
        .collect();
    java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "minor"}));
    java.call(&json!({"op": "close_writer", "writer": "app"}));
}

fn strata_commit(path: &str, rng: &mut StdRng, round: usize, model: &mut Model) {
    let t = open(path);
    let mut w = TableWriter::new(&t, "strata").unwrap();
    for _ in 0..rng.random_range(30..80) {
        match random_op(rng, round, model) {
            (id, None) => w.delete(vec![Some(Datum::BigInt(id))]).unwrap(),
            (id, Some((name, v))) => {
                w.put(vec![Some(Datum::BigInt(id)), name.map(Datum::String), v.map(Datum::BigInt)]).unwrap()
            }
        }
    }
    w.commit().unwrap();
}

fn tags_by_both(deletion_vectors: bool, seed: u64) {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.db/t").to_str().unwrap().to_string();
    java.call(&json!({
        "op": "create", "path": path,
        "columns": [["id", "BIGINT NOT NULL"], ["name", "STRING"], ["v", "BIGINT"]],
        "primary_keys": ["id"],
        "options": {"bucket": "2", "deletion-vectors.enabled": deletion_vectors.to_string()},
    }));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    java_commit(&mut java, &path, &mut rng, 0, &mut model);
    strata_commit(&path, &mut rng, 0, &mut model);
    java.call(&json!({"op": "tag", "path": path, "name": "by-java"}));
    let at_java_tag = model.clone();
    strata_commit(&path, &mut rng, 1, &mut model);
    java_commit(&mut java, &path, &mut rng, 1, &mut model);
    create_tag(&open(&path), "by-strata", None, None).unwrap();
    let at_strata_tag = model.clone();
    for round in 2..4 {
        java_commit(&mut java, &path, &mut rng, round, &mut model);
        strata_commit(&path, &mut rng, round, &mut model);
    }
    TableWriter::new(&open(&path), "strata").unwrap().compact(true).unwrap();
    java.call(&json!({"op": "expire", "path": path, "retain": 1}));
    let opts = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::ZERO, dry_run: false };
    expire_snapshots(&open(&path), &opts).unwrap();

    let what = format!("deletion-vectors {deletion_vectors}");
    for (tag, want) in [("by-java", &at_java_tag), ("by-strata", &at_strata_tag)] {
        same(&format!("{what}: Strata reads tag {tag}"), &strata_read_tag(&path, tag), want);
        let java_read = java_rows(&java.read(&path, json!({"scan.tag-name": tag})));
        same(&format!("{what}: Java reads tag {tag}"), &java_read, want);
    }
    same(&format!("{what}: Java reads the latest"), &java_rows(&java.read(&path, json!({}))), &model);
}

#[test]
fn tags_either_engine_makes_read_alike_in_both_after_expiration() {
    tags_by_both(true, 31);
    tags_by_both(false, 32);
}
