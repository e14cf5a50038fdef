//! Snapshot expiration by either engine on a table both write (issue 52): what one expires never takes a
//! file the other's snapshots still need, and both go on reading, writing and compacting exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::json;
use strata::table::{expire_snapshots, remove_orphan_files, ExpireOptions};
use strata::TableWriter;

use super::java_paimon::{
    java_create, java_random_commit, java_rows, open_after_java, same, strata_random_commit, strata_read, Model,
};
use crate::common::java::JavaPaimon;

fn expire_by_both(deletion_vectors: bool, seed: u64) {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path =
        java_create(&mut java, &dir, json!({"bucket": "2", "deletion-vectors.enabled": deletion_vectors.to_string()}));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    for round in 0..4 {
        for _ in 0..3 {
            java_random_commit(&mut java, &path, &mut rng, round, 20..60, &mut model);
            strata_random_commit(&path, &mut rng, round, 20..60, &mut model);
        }
        TableWriter::new(&open_after_java(&path), "strata").unwrap().compact(round % 2 == 1).unwrap();
        if round % 2 == 0 {
            let opts = ExpireOptions { retain_min: 2, retain_max: 2, time_retained: Duration::ZERO, dry_run: false };
            let report = expire_snapshots(&open_after_java(&path), &opts).unwrap();
            assert!(!report.snapshots.is_empty(), "Strata expired nothing");
            remove_orphan_files(&open_after_java(&path), Duration::ZERO, false).unwrap();
        } else {
            let expired = java.call(&json!({"op": "expire", "path": path, "retain": 2}))["expired"].as_i64();
            assert!(expired.unwrap() > 0, "Java expired nothing");
        }
        let what = format!(
            "deletion-vectors {deletion_vectors}, round {round}, after {} expired",
            if round % 2 == 0 { "Strata" } else { "Java" }
        );
        same(&format!("{what}: Strata"), &strata_read(&path), &model);
        same(&format!("{what}: Java"), &java_rows(&java.read(&path, json!({}))), &model);
    }
    java.call(&json!({"op": "compact", "path": path, "writer": "compactor", "full": true}));
    java.call(&json!({"op": "close_writer", "writer": "compactor"}));
    same("after Java's full compaction: Strata", &strata_read(&path), &model);
    same("after Java's full compaction: Java", &java_rows(&java.read(&path, json!({}))), &model);
}

#[test]
fn either_engine_expires_what_both_wrote() {
    expire_by_both(true, 21);
    expire_by_both(false, 22);
}
