//! Tags across engines, against a model: pypaimon's tags read in Strata, Strata's tags read in pypaimon and
//! paimon-rust (with Paimon's retention fields as they decode them), both after expiration removed the
//! tagged snapshots, and rollbacks by either engine read the same in the other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::tag_fixtures::*;
use common::{oracle, paimon_rust};
use serde_json::{json, Value};
use strata::table::{create_tag, expire_snapshots, rollback, ExpireOptions, RollbackTarget};
use strata::TableWriter;

fn rows_json(rows: &Value) -> Rows {
    rows.as_array().unwrap().iter().map(|r| (r["id"].as_i64().unwrap(), r["v"].as_i64().unwrap())).collect()
}

/// `tagCreateTime` as Strata writes it for `tag` (Jackson's `LocalDateTime` array).
fn create_time_json(tag: &strata::table::Tag) -> Value {
    serde_json::from_str::<Value>(&tag.to_json().unwrap()).unwrap()["tagCreateTime"].clone()
}

fn pypaimon_tags(spec: Value) -> Vec<Value> {
    oracle(&["tags", &spec.to_string()]).as_array().unwrap().clone()
}

fn pypaimon_read(path: &str, tag: Option<&str>) -> Rows {
    let options = tag.map_or(json!({}), |t| json!({"scan.tag-name": t}));
    rows_json(&oracle(&["read_options", &json!({"path": path, "options": options}).to_string()]))
}

fn paimon_rust_read(path: &str, tag: Option<&str>) -> Rows {
    let options = tag.map_or(json!({}), |t| json!({"scan.tag-name": t}));
    rows_json(&paimon_rust("read", &json!({"path": path, "options": options}))["rows"])
}

#[test]
fn tags_made_by_each_engine_read_the_same_in_the_others_before_and_after_expiration() {
    let dir = tempfile::tempdir().unwrap();
    let t = kv_table(dir.path(), true);
    let path = t.path().to_string();
    let (mut model, mut models) = (Rows::new(), BTreeMap::new());
    let mut w = TableWriter::new(&t, "w").unwrap();
    let at: Vec<i64> = (0..6).map(|r| commit_round(&t, &mut w, r, &mut model, &mut models)).collect();
    drop(w);

    // pypaimon tags a Strata table; Strata lists and reads its tags.
    let py = pypaimon_tags(json!({"path": path, "create": [
        {"name": "py-ttl", "snapshot_id": at[1], "time_retained": "1d"},
        {"name": "py", "snapshot_id": at[2]},
    ]}));
    assert_eq!(py.len(), 2);
    let tm = t.tag_manager();
    let ttl = tm.get_required("py-ttl").unwrap();
    assert_eq!((ttl.snapshot.id, ttl.time_retained), (at[1], Some(Duration::from_secs(86400))));
    assert_eq!(create_time_json(&ttl), py[1]["createTime"], "Strata decodes pypaimon's tagCreateTime");
    let plain = tm.get_required("py").unwrap();
    assert_eq!((plain.snapshot.id, plain.create_time, plain.time_retained), (at[2], None, None));
    assert_eq!(rows_of_tag(&t, "py-ttl").unwrap(), models[&at[1]]);
    assert_eq!(rows_of_tag(&t, "py").unwrap(), models[&at[2]]);

    // Strata tags; pypaimon decodes the tag files as Strata wrote them, and both oracles read by tag.
    let st_ttl = create_tag(&t, "st-ttl", Some(at[3]), Some(Duration::from_secs(7200))).unwrap();
    create_tag(&t, "st", Some(at[4]), None).unwrap();
    let seen = pypaimon_tags(json!({"path": path}));
    let by_name: BTreeMap<&str, &Value> = seen.iter().map(|v| (v["name"].as_str().unwrap(), v)).collect();
    assert_eq!(by_name.keys().copied().collect::<Vec<_>>(), ["py", "py-ttl", "st", "st-ttl"]);
    assert_eq!(by_name["st-ttl"]["snapshotId"], at[3]);
    assert_eq!(by_name["st-ttl"]["timeRetainedSeconds"], 7200.0);
    assert!(st_ttl.create_time.is_some());
    assert_eq!(by_name["st-ttl"]["createTime"], create_time_json(&st_ttl), "pypaimon decodes Strata's tagCreateTime");
    assert!(by_name["st"]["createTime"].is_null() && by_name["st"]["timeRetainedSeconds"].is_null());
    let rust_tags = paimon_rust("tags", &json!({"path": path}));
    let rust_ids: BTreeMap<String, i64> = rust_tags
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap().to_string(), v["snapshotId"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        rust_ids,
        BTreeMap::from([
            ("py".into(), at[2]),
            ("py-ttl".into(), at[1]),
            ("st".into(), at[4]),
            ("st-ttl".into(), at[3]),
        ])
    );
    assert_eq!(pypaimon_read(&path, Some("st-ttl")), models[&at[3]]);
    assert_eq!(paimon_rust_read(&path, Some("st")), models[&at[4]]);

    // Expiration removes every tagged snapshot; all tags still read, in all three engines.
    let keep1 =
        ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::from_secs(3600), dry_run: false };
    expire_snapshots(&t, &keep1).unwrap();
    assert_eq!(t.snapshot_manager().list_ids().unwrap(), [*at.last().unwrap()]);
    for (name, id) in [("py-ttl", at[1]), ("py", at[2]), ("st-ttl", at[3]), ("st", at[4])] {
        assert_eq!(rows_of_tag(&t, name).unwrap(), models[&id], "strata, tag {name}");
    }
    assert_eq!(pypaimon_read(&path, Some("st")), models[&at[4]]);
    assert_eq!(pypaimon_read(&path, Some("py")), models[&at[2]]);
    assert_eq!(paimon_rust_read(&path, Some("st-ttl")), models[&at[3]]);
    assert_eq!(paimon_rust_read(&path, Some("py-ttl")), models[&at[1]]);

    // Strata rolls back to a tag whose snapshot expired; the others read the rolled-back table.
    rollback(&t, &RollbackTarget::Tag("st".into())).unwrap();
    assert_eq!(pypaimon_read(&path, None), models[&at[4]]);
    assert_eq!(paimon_rust_read(&path, None), models[&at[4]]);

    // pypaimon rolls back to an older tag (its snapshot expired too); Strata reads it and writes on.
    let left = pypaimon_tags(json!({"path": path, "rollback": "py"}));
    let names: Vec<&str> = left.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["py", "py-ttl"], "pypaimon removes the tags of newer snapshots");
    assert_eq!(t.snapshot_manager().latest_id().unwrap(), Some(at[2]));
    assert_eq!(rows_at(&t, None).unwrap(), models[&at[2]]);
    let mut model = models[&at[2]].clone();
    let mut w = TableWriter::new(&t, "w2").unwrap();
    let id = commit_round(&t, &mut w, 40, &mut model, &mut models);
    drop(w);
    assert!(id > at[2]);
    assert_eq!(rows_at(&t, None).unwrap(), model);
    assert_eq!(pypaimon_read(&path, None), model);
}
