//! Java Paimon 1.3.1, the release before the reference (issue 52), against Strata in both directions: the
//! same rounds as java_paimon (Java writes with its compaction, Strata reads, writes and compacts, Java reads
//! and compacts what Strata made; every read of both against a model), on the same driver compiled against
//! 1.3.1's jars (`scripts/java-paimon.sh paimon-1.3.1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::java_paimon::both_directions_on;
use crate::common::java::Oracle;

#[test]
fn deletion_vector_tables_pass_between_java_1_3_1_and_strata() {
    both_directions_on(Oracle::Paimon131, "parquet", true, 31, json!({}));
    both_directions_on(Oracle::Paimon131, "orc", true, 32, json!({"deletion-vectors.bitmap64": "true"}));
}

#[test]
fn merge_on_read_and_dynamic_bucket_tables_pass_between_java_1_3_1_and_strata() {
    both_directions_on(Oracle::Paimon131, "parquet", false, 33, json!({}));
    both_directions_on(
        Oracle::Paimon131,
        "parquet",
        true,
        34,
        json!({"bucket": "-1", "dynamic-bucket.target-row-num": "40"}),
    );
}
