//! Corrupt or truncated data files and schema mismatches give typed errors that name the file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::json;

fn pypaimon_table(dir: &std::path::Path, format: &str) -> String {
    let spec = json!({"warehouse": dir.to_str().unwrap(), "table": "t", "format": format, "buckets": 1,
        "partitioned": false, "commits": 2, "ops_per_commit": 200, "key_space": 300, "seed": 1});
    common::oracle(&["workload", &spec.to_string()]);
    dir.join("db.db/t").to_str().unwrap().to_string()
}

fn data_files(table: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> =
        std::fs::read_dir(format!("{table}/bucket-0")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

fn scan_fails_naming(table: &str, file: &std::path::Path, code: i32) {
    let (got, out, err) = common::strata(&["scan", table]);
    assert_eq!(got, code, "stdout {} stderr {err}", out.len());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(err.contains(name), "{err}");
}

#[test]
fn truncated_and_corrupt_data_files_are_corrupt_errors_naming_the_file() {
    for format in ["parquet", "orc"] {
        let dir = tempfile::tempdir().unwrap();
        let table = pypaimon_table(dir.path(), format);
        let file = data_files(&table)[0].clone();
        let bytes = std::fs::read(&file).unwrap();
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 3] {
            std::fs::write(&file, &bytes[..cut]).unwrap();
            scan_fails_naming(&table, &file, 5);
        }
        // Garbage in the middle (footers intact).
        let mut bad = bytes.clone();
        for b in bad.iter_mut().skip(4).take(bytes.len() / 2) {
            *b = 0x5a;
        }
        std::fs::write(&file, &bad).unwrap();
        let (code, _, err) = common::strata(&["scan", &table]);
        assert_ne!(code, 0, "{format}: garbage decoded silently");
        assert!(err.contains(file.file_name().unwrap().to_str().unwrap()), "{format}: {err}");
        // A missing data file.
        std::fs::remove_file(&file).unwrap();
        scan_fails_naming(&table, &file, 3);
    }
}

#[test]
fn a_file_without_a_column_the_schema_has_is_a_schema_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let table = pypaimon_table(dir.path(), "parquet");
    // The schema gains a column that the files do not have.
    let schema_file = format!("{table}/schema/schema-0");
    let mut schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&schema_file).unwrap()).unwrap();
    schema["fields"].as_array_mut().unwrap().push(json!({"id": 9, "name": "extra", "type": "INT"}));
    schema["highestFieldId"] = json!(9);
    std::fs::write(&schema_file, schema.to_string()).unwrap();
    let (code, _, err) = common::strata(&["scan", &table]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("extra") && err.contains(".parquet"), "{err}");
}
