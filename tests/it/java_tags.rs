//! Tags by either engine on a table both write (issue 52): each engine tags a snapshot, both expire all but
//! the latest snapshot, and each tag still reads, in both engines, what its snapshot held.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::json;
use strata::table::{create_tag, expire_snapshots, read_builder, ExpireOptions};
use strata::TableWriter;

use super::java_paimon::{
    java_create, java_random_commit, java_rows, open_after_java, same, strata_random_commit, strata_rows, Model,
};
use crate::common::java::JavaPaimon;

fn strata_read_tag(path: &str, tag: &str) -> Model {
    let options = BTreeMap::from([("scan.tag-name".to_string(), tag.to_string())]);
    strata_rows(&read_builder(&open_after_java(path), &options).unwrap().read().unwrap().batches)
}

fn tags_by_both(deletion_vectors: bool, seed: u64) {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path =
        java_create(&mut java, &dir, json!({"bucket": "2", "deletion-vectors.enabled": deletion_vectors.to_string()}));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    java_random_commit(&mut java, &path, &mut rng, 0, 30..80, &mut model);
    strata_random_commit(&path, &mut rng, 0, 30..80, &mut model);
    java.call(&json!({"op": "tag", "path": path, "name": "by-java"}));
    let at_java_tag = model.clone();
    strata_random_commit(&path, &mut rng, 1, 30..80, &mut model);
    java_random_commit(&mut java, &path, &mut rng, 1, 30..80, &mut model);
    create_tag(&open_after_java(&path), "by-strata", None, None).unwrap();
    let at_strata_tag = model.clone();
    for round in 2..4 {
        java_random_commit(&mut java, &path, &mut rng, round, 30..80, &mut model);
        strata_random_commit(&path, &mut rng, round, 30..80, &mut model);
    }
    TableWriter::new(&open_after_java(&path), "strata").unwrap().compact(true).unwrap();
    java.call(&json!({"op": "expire", "path": path, "retain": 1}));
    let opts = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::ZERO, dry_run: false };
    expire_snapshots(&open_after_java(&path), &opts).unwrap();

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
