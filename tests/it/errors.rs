//! Bad input gives typed errors that name what is wrong, never panics; the CLI prints one line and exits
//! non-zero.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use common::fixtures::{append, create_table, file};
use common::strata;
use strata::{ErrorKind, FileIO, LocalFileIO, Table};

fn local() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

fn table_with_two_snapshots(dir: &std::path::Path) -> String {
    let path = dir.join("t").to_str().unwrap().to_string();
    let table = create_table(local(), &path, 1, &[]);
    let c = table.new_commit("w").unwrap();
    c.commit(&append(1, 0, 1, vec![file("data-1.parquet", 0, 1, 5, 5)])).unwrap();
    c.commit(&append(2, 0, 1, vec![file("data-2.parquet", 0, 1, 5, 5)])).unwrap();
    path
}

fn assert_cli_fails(path: &str, code: i32, needle: &str) {
    let (got, out, err) = strata(&["inspect", path]);
    assert_eq!(got, code, "stdout {out} stderr {err}");
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("strata: error:") && err.contains(needle), "{err}");
}

#[test]
fn malformed_snapshot_json_is_corrupt_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_with_two_snapshots(dir.path());
    let snap = format!("{path}/snapshot/snapshot-2");
    std::fs::write(&snap, b"{\"version\": 3, \"id\": 2, \"schemaId\": ").unwrap();
    let table = Table::open(local(), &path).unwrap();
    let err = table.snapshot(None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt);
    assert!(err.to_string().contains(&snap), "{err}");
    assert_cli_fails(&path, 5, "snapshot-2");
    // The snapshot before it still reads.
    assert_eq!(table.snapshot(Some(1)).unwrap().unwrap().id, 1);
}

#[test]
fn truncated_avro_is_corrupt_and_names_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_with_two_snapshots(dir.path());
    let table = Table::open(local(), &path).unwrap();
    let s = table.snapshot(None).unwrap().unwrap();
    for name in [
        s.delta_manifest_list.clone(),
        table.manifest_store().unwrap().read_manifest_list(&s.delta_manifest_list).unwrap()[0].file_name.clone(),
    ] {
        let file = format!("{path}/manifest/{name}");
        let bytes = std::fs::read(&file).unwrap();
        for cut in [0, 3, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&file, &bytes[..cut]).unwrap();
            let err = table.live_files(&s).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corrupt, "cut at {cut}: {err}");
            assert!(err.to_string().contains(&name), "{err}");
        }
        assert_cli_fails(&path, 5, &name);
        std::fs::write(&file, &bytes).unwrap();
    }
    // Garbage instead of Avro.
    let list = format!("{path}/manifest/{}", s.base_manifest_list);
    std::fs::write(&list, vec![0xAB; 300]).unwrap();
    assert_eq!(table.live_files(&s).unwrap_err().kind(), ErrorKind::Corrupt);
}

#[test]
fn a_missing_manifest_is_not_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_with_two_snapshots(dir.path());
    let table = Table::open(local(), &path).unwrap();
    let s = table.snapshot(None).unwrap().unwrap();
    std::fs::remove_file(format!("{path}/manifest/{}", s.delta_manifest_list)).unwrap();
    let err = table.live_files(&s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains(&s.delta_manifest_list), "{err}");
}

#[test]
fn an_unknown_type_string_is_invalid_and_names_the_schema_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_with_two_snapshots(dir.path());
    let schema_file = format!("{path}/schema/schema-0");
    let json = std::fs::read_to_string(&schema_file).unwrap().replace("\"BIGINT\"", "\"BIGNUM\"");
    std::fs::write(&schema_file, json).unwrap();
    let err = Table::open(local(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let msg = err.to_string();
    assert!(msg.contains("BIGNUM") && msg.contains(&schema_file), "{msg}");
    assert_cli_fails(&path, 2, "BIGNUM");
}

#[test]
fn a_missing_schema_file_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_with_two_snapshots(dir.path());
    std::fs::remove_file(format!("{path}/schema/schema-0")).unwrap();
    let err = Table::open(local(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("schema"), "{err}");
    assert_cli_fails(&path, 3, "schema");
    let nowhere = dir.path().join("nowhere");
    assert_cli_fails(nowhere.to_str().unwrap(), 3, "nowhere");
}

#[test]
fn bad_create_arguments_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--schema", "id BIGNUM", "--primary-key", "id"], "BIGNUM"),
        (&["--schema", "id BIGINT", "--primary-key", "nope"], "nope"),
        (&["--schema", "id BIGINT", "--primary-key", "id", "--option", "bucket=four"], "bucket"),
        (&["--schema", "id BIGINT", "--primary-key", "id", "--option", "noequals"], "KEY=VALUE"),
        (&["--schema", "id BIGINT, p INT", "--primary-key", "id", "--partition-keys", "p"], "partition key"),
        (&["--schema", "id", "--primary-key", "id"], "no type"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["create", t];
        all.extend_from_slice(args);
        let (code, _, err) = strata(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle) && err.trim().lines().count() == 1, "{args:?}: {err}");
        assert!(!std::path::Path::new(t).join("schema").exists(), "{args:?} left a schema behind");
    }
    // Creating twice: already exists.
    assert_eq!(strata(&["create", t, "--schema", "id BIGINT", "--primary-key", "id"]).0, 0);
    let (code, _, err) = strata(&["create", t, "--schema", "id BIGINT", "--primary-key", "id"]);
    assert_eq!(code, 4, "{err}");
    // clap's own usage errors are exit 2 as well.
    assert_eq!(strata(&["inspect"]).0, 2);
    assert_eq!(strata(&["frobnicate"]).0, 2);
}

/// A table that promises changelog files Strata does not produce (full-compaction) is not written without
/// them: `create` refuses it, and for such a table another engine created the writer refuses with an
/// unsupported error naming the option, and `strata write` exits with one line.
#[test]
fn writing_a_changelog_producing_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (producer, engine) in [("full-compaction", "deduplicate"), ("full-compaction", "aggregation")] {
        let path = dir.path().join(format!("{producer}-{engine}"));
        let path = path.to_str().unwrap();
        let options = [("bucket", "1"), ("changelog-producer", producer), ("merge-engine", engine)];
        let schema = strata::spec::TableSchema::new(
            vec![("id".into(), strata::spec::DataType::bigint()), ("v".into(), strata::spec::DataType::bigint())],
            vec![],
            vec!["id".into()],
            options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            0,
        )
        .unwrap();
        let err = Table::create(local(), path, schema.clone()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{producer}: {err}");
        assert!(err.to_string().contains(&format!("changelog-producer = {producer}")), "{err}");
        // As another engine would create it.
        strata::table::SchemaManager::new(local(), path).create(&schema).unwrap();
        let table = Table::open(local(), path).unwrap();
        let err = strata::TableWriter::new(&table, "w").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{producer}: {err}");
        assert!(err.to_string().contains(&format!("changelog-producer = {producer}")), "{err}");
        let input = dir.path().join(format!("{producer}-{engine}.jsonl"));
        std::fs::write(&input, "{\"id\": 1}\n").unwrap();
        let (code, _, err) = strata(&["write", path, "--input", input.to_str().unwrap()]);
        assert_ne!(code, 0);
        assert!(err.starts_with("strata: error:") && err.contains("changelog-producer"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(table.snapshot(None).unwrap().is_none(), "{producer}: something was committed");
    }
}
