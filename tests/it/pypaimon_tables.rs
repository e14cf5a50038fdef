//! Tables written by pypaimon 2.1.0, read by Strata; and metadata written by Strata, read by pypaimon.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use strata::lsm::{CompactIncrement, DataIncrement};

use common::fixtures::file;
use common::{oracle, strata_create, strata_inspect};
use serde_json::{json, Value};
use strata::spec::{
    BinaryRow, DataFileMeta, Datum, DeletionVectorMeta, FileKind, IndexFileMeta, IndexManifestEntry, ManifestEntry,
    ManifestFileMeta,
};
use strata::table::{CommitMessage, Committable};
use strata::{FileIO, LocalFileIO, Table};

struct Config {
    format: &'static str,
    buckets: i32,
    partitioned: bool,
}

fn write_with_pypaimon(warehouse: &Path, table: &str, c: &Config, commits: u32, seed: u64) -> std::path::PathBuf {
    let spec = json!({
        "warehouse": warehouse.to_str().unwrap(), "table": table, "format": c.format, "buckets": c.buckets,
        "partitioned": c.partitioned, "commits": commits, "rows_per_commit": 150, "key_space": 400, "seed": seed,
    });
    oracle(&["write", &spec.to_string()]);
    warehouse.join("db.db").join(table)
}

/// The fields of each snapshot both views compare.
fn snapshot_view(snapshots: &Value) -> Vec<Value> {
    snapshots
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            json!({"id": s["id"], "schemaId": s["schemaId"], "commitKind": s["commitKind"], "commitUser": s["commitUser"],
                   "commitIdentifier": s["commitIdentifier"], "totalRecordCount": s["totalRecordCount"],
                   "deltaRecordCount": s["deltaRecordCount"]})
        })
        .collect()
}

/// A live file as both views show it.
fn file_line(part: &[String], bucket: &Value, level: &Value, f: &Value) -> String {
    format!(
        "{part:?} b{bucket} L{level} {} rows={} size={} seq={}..{} del={} tb={}",
        f["fileName"].as_str().unwrap(),
        f["rowCount"],
        f["fileSize"],
        f["minSequenceNumber"],
        f["maxSequenceNumber"],
        f["deleteRowCount"],
        f["totalBuckets"]
    )
}

fn strata_view(report: &Value) -> (Vec<Value>, BTreeSet<String>) {
    let mut files = BTreeSet::new();
    for b in report["buckets"].as_array().unwrap() {
        let part: Vec<String> = b["partition"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        for l in b["levels"].as_array().unwrap() {
            for f in l["files"].as_array().unwrap() {
                files.insert(file_line(&part, &b["bucket"], &l["level"], f));
            }
        }
    }
    (snapshot_view(&report["snapshots"]), files)
}

fn oracle_view(meta: &Value) -> (Vec<Value>, BTreeSet<String>) {
    let files = meta["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let part: Vec<String> =
                f["partitionValues"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
            file_line(&part, &f["bucket"], &f["level"], f)
        })
        .collect();
    (snapshot_view(&meta["snapshots"]), files)
}

#[test]
fn strata_inspect_reports_what_pypaimon_sees() {
    let dir = tempfile::tempdir().unwrap();
    let configs = [
        Config { format: "parquet", buckets: 1, partitioned: false },
        Config { format: "parquet", buckets: 4, partitioned: true },
        Config { format: "orc", buckets: 4, partitioned: false },
        Config { format: "orc", buckets: 1, partitioned: true },
    ];
    for (i, c) in configs.iter().enumerate() {
        let name = format!("t{i}_{}_{}_{}", c.format, c.buckets, c.partitioned);
        let path = write_with_pypaimon(dir.path(), &name, c, 3, i as u64);
        let (s_snaps, s_files) = strata_view(&strata_inspect(&path));
        let (o_snaps, o_files) = oracle_view(&oracle(&["meta", path.to_str().unwrap()]));
        assert_eq!(s_snaps.len(), 3, "{name}");
        assert_eq!(s_snaps, o_snaps, "{name}: snapshots differ");
        assert!(!s_files.is_empty());
        assert_eq!(s_files, o_files, "{name}: live files differ");
    }
}

fn manifest_kind(name: &str) -> Option<&'static str> {
    if name.starts_with("manifest-list-") {
        Some("list")
    } else if name.starts_with("index-manifest-") {
        Some("index")
    } else if name.starts_with("manifest-") {
        Some("manifest")
    } else {
        None
    }
}

fn reencode(kind: &str, bytes: &[u8]) -> Vec<u8> {
    match kind {
        "manifest" => ManifestEntry::encode_file(&ManifestEntry::decode_file(bytes).unwrap(), "zstd").unwrap(),
        "list" => ManifestFileMeta::encode_file(&ManifestFileMeta::decode_file(bytes).unwrap(), "zstd").unwrap(),
        _ => IndexManifestEntry::encode_file(&IndexManifestEntry::decode_file(bytes).unwrap(), "zstd").unwrap(),
    }
}

#[test]
fn every_manifest_reencodes_to_a_file_pypaimon_reads_identically() {
    let dir = tempfile::tempdir().unwrap();
    let tables = [
        write_with_pypaimon(dir.path(), "part4", &Config { format: "parquet", buckets: 4, partitioned: true }, 3, 7),
        write_with_pypaimon(dir.path(), "orc1", &Config { format: "orc", buckets: 1, partitioned: false }, 2, 8),
        // Dynamic bucket mode: pypaimon writes HASH index files, so the table has index manifests.
        write_with_pypaimon(
            dir.path(),
            "dynamic",
            &Config { format: "parquet", buckets: -1, partitioned: false },
            2,
            9,
        ),
    ];
    let mut seen = BTreeSet::new();
    let mut non_empty = 0;
    for table in &tables {
        let manifest_dir = table.join("manifest");
        let names: Vec<String> = std::fs::read_dir(&manifest_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut pairs = Vec::new();
        for name in names {
            let Some(kind) = manifest_kind(&name) else { continue };
            seen.insert(kind);
            let bytes = std::fs::read(manifest_dir.join(&name)).unwrap();
            let copy = format!("{}strata-copy-{name}", if kind == "index" { "index-manifest-" } else { "" });
            std::fs::write(manifest_dir.join(&copy), reencode(kind, &bytes)).unwrap();
            pairs.push(json!([kind, name]));
            pairs.push(json!([kind, copy]));
        }
        let decoded = oracle(&["manifests", table.to_str().unwrap(), &Value::Array(pairs.clone()).to_string()]);
        let decoded = decoded.as_array().unwrap();
        for (i, pair) in decoded.chunks(2).enumerate() {
            if pair[0].as_array().is_some_and(|a| !a.is_empty()) {
                non_empty += 1;
            }
            assert_eq!(pair[0], pair[1], "{}: pypaimon reads Strata's re-encoding differently", pairs[2 * i][1]);
        }
    }
    assert_eq!(seen, BTreeSet::from(["manifest", "list", "index"]));
    assert!(non_empty >= 10, "only {non_empty} non-empty metadata files compared");
}

/// A level `level` data file of keys `min..=max` (`rows` rows from sequence number `seq`).
fn fake_file(name: &str, level: i32, min: i64, max: i64, rows: i64, seq: i64) -> DataFileMeta {
    DataFileMeta {
        file_size: 1000 + rows,
        min_sequence_number: seq,
        max_sequence_number: seq + rows - 1,
        creation_time: Some(1_700_000_000_000),
        file_source: Some(if level == 0 { 0 } else { 1 }),
        ..file(name, level, min, max, rows)
    }
}

/// `strata create` of a partitioned deletion-vector table with two buckets and an option Strata does not know.
fn create_with_the_cli(p: &str) {
    let schema = "id BIGINT NOT NULL, p STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), v BIGINT";
    let options = ["bucket=2", "deletion-vectors.enabled=true", "my.engine.option=kept"];
    // Keys Strata does not know are refused unless asked for; kept as they are when they are.
    let extra = ["--partition-keys", "p", "--allow-unknown-options"];
    let (code, _, err) = strata_create(p, schema, "id,p", &options, &extra);
    assert_eq!(code, 0, "{err}");
}

/// pypaimon reads the schema `create_with_the_cli` made.
fn assert_pypaimon_reads_the_schema(p: &str) {
    let meta = oracle(&["meta", p]);
    let schema = &meta["schema"];
    let types: Vec<(String, String)> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f["type"].as_str().unwrap().to_string()))
        .collect();
    let want: Vec<(String, String)> = [
        ("id", "BIGINT NOT NULL"),
        ("p", "STRING NOT NULL"),
        ("price", "DECIMAL(10, 2)"),
        ("ts", "TIMESTAMP(3)"),
        ("v", "BIGINT"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(types, want);
    assert_eq!(schema["primaryKeys"], json!(["id", "p"]));
    assert_eq!(schema["partitionKeys"], json!(["p"]));
    assert_eq!(schema["options"]["bucket"], "2");
    assert_eq!(schema["options"]["deletion-vectors.enabled"], "true");
    assert_eq!(schema["options"]["my.engine.option"], "kept");
}

/// Two commits of Strata's own: level-0 files in partitions x and y, then a compaction of x's with a
/// deletion-vector index file.
fn commit_level0_then_a_compaction(table: &Table) {
    let part = |v: &str| {
        BinaryRow::from_datums(&[Some(Datum::String(v.into()))], &["STRING NOT NULL".parse().unwrap()]).unwrap()
    };
    let commit = table.new_commit("strata-test").unwrap();
    let l0a = fake_file("data-a-0.parquet", 0, 1, 50, 40, 0);
    let l0b = fake_file("data-b-0.parquet", 0, 3, 90, 60, 0);
    commit
        .commit(&Committable {
            identifier: 1,
            messages: vec![
                CommitMessage::new(
                    part("x"),
                    0,
                    2,
                    DataIncrement { new_files: vec![l0a.clone()], ..Default::default() }.into(),
                ),
                CommitMessage::new(
                    part("y"),
                    1,
                    2,
                    DataIncrement { new_files: vec![l0b], ..Default::default() }.into(),
                ),
            ],
            ..Default::default()
        })
        .unwrap();
    let l1 = fake_file("data-a-1.parquet", 5, 1, 50, 40, 0);
    let dv = IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-abc-0".into(),
        file_size: 33,
        row_count: 1,
        dv_ranges: Some(vec![DeletionVectorMeta {
            data_file_name: l1.file_name.clone(),
            offset: 1,
            length: 24,
            cardinality: Some(3),
        }]),
        external_path: None,
        global_index: None,
    };
    commit
        .commit(&Committable {
            identifier: 2,
            messages: vec![CommitMessage::new(
                part("x"),
                0,
                2,
                CompactIncrement {
                    compact_before: vec![l0a],
                    compact_after: vec![l1],
                    new_index_files: vec![dv],
                    ..Default::default()
                }
                .into(),
            )],
            ..Default::default()
        })
        .unwrap();
}

/// pypaimon reads the snapshots, live files and index manifest `commit_level0_then_a_compaction` made.
fn assert_pypaimon_reads_the_commits(p: &str) {
    let meta = oracle(&["meta", p]);
    let snaps = meta["snapshots"].as_array().unwrap();
    assert_eq!(snaps.len(), 2);
    assert_eq!(snaps[0]["commitKind"], "APPEND");
    assert_eq!(snaps[1]["commitKind"], "COMPACT");
    assert_eq!(snaps[1]["totalRecordCount"], 100);
    let files: BTreeSet<(String, i64, i64, String)> = meta["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["fileName"].as_str().unwrap().to_string(),
                f["level"].as_i64().unwrap(),
                f["bucket"].as_i64().unwrap(),
                f["partitionValues"][0].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        files,
        BTreeSet::from([
            ("data-a-1.parquet".to_string(), 5, 0, "x".to_string()),
            ("data-b-0.parquet".to_string(), 0, 1, "y".to_string())
        ])
    );
    let index_manifest = snaps[1]["indexManifest"].as_str().unwrap().to_string();
    let index = oracle(&["manifest", p, "index", &index_manifest]);
    assert_eq!(
        index,
        json!([{"kind": 0, "bucket": 0, "indexType": "DELETION_VECTORS", "fileName": "index-abc-0", "fileSize": 33, "rowCount": 1,
                "ranges": [{"dataFile": "data-a-1.parquet", "offset": 1, "length": 24, "cardinality": 3}]}])
    );
}

#[test]
fn strata_create_and_commit_make_metadata_pypaimon_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wh").join("db.db").join("t");
    let p = path.to_str().unwrap();
    create_with_the_cli(p);
    assert_pypaimon_reads_the_schema(p);
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let table = Table::open(io, p).unwrap();
    commit_level0_then_a_compaction(&table);
    assert_pypaimon_reads_the_commits(p);
    // And Strata reads back what it wrote.
    let s = table.snapshot(None).unwrap().unwrap();
    let live = table.live_files(&s).unwrap();
    assert_eq!(live.len(), 2);
    assert!(live.iter().all(|e| e.kind == FileKind::Add));
}
