//! Options whose change would make stored data read differently are refused once a table holds data; keys
//! Strata does not know are refused at create and alter (with a "did you mean") unless asked for; an alter
//! that changes nothing writes no schema; tables other engines wrote still open.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::fixtures::kv_schema;
use common::{strata, strata_create};
use strata::spec::Datum;
use strata::table::OptionPolicy;
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

fn io() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

/// A scratch directory and the path of table `t` in it.
fn scratch() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t").to_str().unwrap().to_string();
    (dir, p)
}

/// `strata create` of `id BIGINT (pk), p STRING (partition), v BIGINT, k STRING` with extra options.
fn create(p: &str, extra: &[&str]) {
    let schema = "id BIGINT NOT NULL, p STRING NOT NULL, v BIGINT, k STRING";
    let (code, _, err) = strata_create(p, schema, "id,p", extra, &["--partition-keys", "p"]);
    assert_eq!(code, 0, "{err}");
}

/// A scratch table created with `extra` options, holding rows `0..rows`.
fn table_with_rows(extra: &[&str], rows: i64) -> (tempfile::TempDir, String) {
    let (dir, p) = scratch();
    create(&p, extra);
    write_rows(&p, 0..rows);
    (dir, p)
}

fn write_rows(p: &str, keys: std::ops::Range<i64>) {
    let t = Table::open(io(), p).unwrap();
    let mut w = TableWriter::new(&t, "app").unwrap();
    for k in keys {
        let part = if k % 2 == 0 { Some(Datum::String("a".into())) } else { Some(Datum::String("b".into())) };
        w.put(vec![Some(Datum::BigInt(k)), part, Some(Datum::BigInt(k * 10)), None]).unwrap();
    }
    w.commit().unwrap();
}

fn rows(p: &str) -> usize {
    let t = Table::open(io(), p).unwrap();
    ReadBuilder::new(&t).read().unwrap().batches.iter().map(|b| b.num_rows()).sum()
}

fn schema_files(p: &str) -> usize {
    std::fs::read_dir(Path::new(p).join("schema")).unwrap().count()
}

/// `strata alter P --set ...`; returns (code, stdout, stderr).
fn alter(p: &str, sets: &[&str], extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["alter", p];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(extra);
    strata(&args)
}

/// `strata alter P --set ...` that must succeed.
fn altered(p: &str, sets: &[&str]) {
    let (code, _, err) = alter(p, sets, &[]);
    assert_eq!(code, 0, "{err}");
}

fn refused(p: &str, set: &str, needles: &[&str]) {
    let before = schema_files(p);
    let (code, _, err) = alter(p, &[set], &[]);
    assert_eq!(code, 2, "alter --set {set} was accepted: {err}");
    for n in needles {
        assert!(err.contains(n), "alter --set {set}: {err} lacks '{n}'");
    }
    assert_eq!(schema_files(p), before, "a refused alter --set {set} wrote a schema");
}

#[test]
fn bucket_change_is_refused_with_data_and_allowed_on_an_empty_table() {
    let (_dir, p) = scratch();
    let p = p.as_str();
    create(p, &[]);
    let (code, _, err) = alter(p, &["bucket=2"], &[]);
    assert_eq!(code, 0, "an empty table may change its buckets: {err}");
    write_rows(p, 0..50);
    refused(p, "bucket=4", &["'bucket'", "rescale"]);
    let (code, out, err) = strata(&["get", p, "7,b", "8,a"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    write_rows(p, 50..60);
    assert_eq!(rows(p), 60);
}

#[test]
fn merge_engine_and_aggregation_changes_are_refused_with_data() {
    let (_dir, p) = table_with_rows(&[], 20);
    let p = p.as_str();
    refused(p, "merge-engine=first-row", &["'merge-engine'"]);
    refused(p, "merge-engine=aggregation", &["'merge-engine'"]);
    assert_eq!(rows(p), 20);
    // Naming the default it already has is no change.
    altered(p, &["merge-engine=Deduplicate", "ignore-delete=false"]);

    let (_agg, q) = table_with_rows(&["merge-engine=aggregation", "fields.v.aggregate-function=sum"], 20);
    let q = q.as_str();
    refused(q, "fields.v.aggregate-function=max", &["fields.v.aggregate-function"]);
    refused(q, "fields.default-aggregate-function=max", &["fields.default-aggregate-function"]);
}

#[test]
fn partition_default_name_rowkind_sequence_and_ignore_delete_are_refused_with_data() {
    let (_dir, p) = scratch();
    let p = p.as_str();
    create(p, &[]);
    // Before data, these may change.
    altered(p, &["sequence.field=v"]);
    write_rows(p, 0..20);
    refused(p, "partition.default-name=X", &["partition.default-name"]);
    refused(p, "rowkind.field=k", &["rowkind.field"]);
    refused(p, "sequence.field=id", &["sequence.field"]);
    refused(p, "ignore-delete=true", &["ignore-delete"]);
    refused(p, "bucket-key=id", &["bucket-key"]);
    let (code, _, err) = strata(&["alter", p, "--unset", "sequence.field"]);
    assert_eq!(code, 2, "unsetting sequence.field was accepted: {err}");
    write_rows(p, 20..30);
    assert_eq!(rows(p), 30);
    // Safe changes still go through.
    altered(p, &["file.format=orc", "snapshot.num-retained.min=5"]);
    write_rows(p, 30..40);
    assert_eq!(rows(p), 40);
}

#[test]
fn unknown_keys_are_refused_with_a_suggestion_unless_asked_for() {
    let (dir, p) = scratch();
    let p = p.as_str();
    let (code, _, err) = strata_create(p, "id BIGINT NOT NULL, v BIGINT", "id", &["merge-engin=first-row"], &[]);
    assert_eq!(code, 2, "create accepted a typo: {err}");
    assert!(err.contains("unknown option 'merge-engin'") && err.contains("did you mean 'merge-engine'"), "{err}");
    assert!(!p.is_empty() && !Path::new(p).join("schema").exists(), "a refused create left a schema");
    create(p, &[]);
    let (code, _, err) = alter(p, &["bogus.option=1"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown option 'bogus.option'") && err.contains("--allow-unknown-options"), "{err}");
    refused(p, "num-sorted-run.compaction-triger=3", &["did you mean 'num-sorted-run.compaction-trigger'"]);
    let (code, _, err) = alter(p, &["bogus.option=1"], &["--allow-unknown-options"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(Table::open(io(), p).unwrap().options().get("bogus.option").map(String::as_str), Some("1"));
    // Real Paimon options Strata does not use pass without the flag.
    altered(p, &["sink.parallelism=4", "snapshot.expire.limit=10", "tag.automatic-creation=none"]);

    // The API: strict by default, with an explicit knob.
    let q = dir.path().join("api");
    let q = q.to_str().unwrap();
    let odd = [("bucket", "1"), ("my.engine.flag", "x")];
    assert!(Table::create(io(), q, kv_schema(&odd)).is_err());
    let t = Table::create_with_policy(io(), q, kv_schema(&odd), OptionPolicy { allow_unknown_options: true }).unwrap();
    let set = BTreeMap::from([("other.flag".to_string(), "y".to_string())]);
    assert!(t.alter_options(&set, &[], false).is_err());
    let t = t.alter_options_with_policy(&set, &[], false, OptionPolicy { allow_unknown_options: true }).unwrap();
    assert_eq!(t.schema().id, 1);
}

#[test]
fn an_alter_that_changes_nothing_writes_no_schema() {
    let (_dir, p) = table_with_rows(&["bucket=2"], 10);
    let p = p.as_str();
    let (code, out, err) = alter(p, &["bucket=2"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("nothing to change"), "{out}");
    let (code, out, err) = strata(&["alter", p, "--unset", "no-such-option", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"changed\":false"), "{out}");
    assert_eq!(schema_files(p), 1, "a no-op alter wrote a schema");
    let t = Table::open(io(), p).unwrap();
    assert_eq!(t.alter_options(&BTreeMap::new(), &[], false).unwrap().schema().id, 0);
}

#[test]
fn tables_other_engines_wrote_open_and_alter_despite_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t");
    std::fs::create_dir_all(p.join("schema")).unwrap();
    let schema = r#"{"version":3,"id":0,"fields":[{"id":0,"name":"id","type":"BIGINT NOT NULL"},
        {"id":1,"name":"v","type":"BIGINT"}],"highestFieldId":1,"partitionKeys":[],"primaryKeys":["id"],
        "options":{"bucket":"1","flink.some-connector.thing":"x","sink.parallelism":"4",
        "fields.v.aggregate-function":"listagg"},"timeMillis":1}"#;
    std::fs::write(p.join("schema/schema-0"), schema).unwrap();
    let p = p.to_str().unwrap();
    let t = Table::open(io(), p).unwrap();
    assert_eq!(t.options().get("flink.some-connector.thing").map(String::as_str), Some("x"));
    let (code, _, err) = alter(p, &["snapshot.num-retained.min=5"], &[]);
    assert_eq!(code, 0, "an unrelated alter of a Flink table failed: {err}");
    let t = Table::open(io(), p).unwrap();
    assert_eq!(t.schema().id, 1);
    assert_eq!(t.options().get("flink.some-connector.thing").map(String::as_str), Some("x"));
}

#[test]
fn option_values_and_combinations_are_checked_at_create_and_alter() {
    let (_dir, p) = scratch();
    let p = p.as_str();
    let bad: &[(&str, &str)] = &[
        ("rowkind.field=nope", "rowkind.field"),
        ("rowkind.field=v", "rowkind.field"),
        ("sequence.field=nope", "sequence.field"),
        ("fields.nope.aggregate-function=sum", "nope"),
        ("primary-key=v", "primary-key"),
        ("bucket-key=v", "bucket-key"),
    ];
    let schema = "id BIGINT NOT NULL, v BIGINT, k STRING";
    for (opt, needle) in bad {
        let (code, _, err) = strata_create(p, schema, "id", &[opt], &[]);
        assert_eq!(code, 2, "create with {opt} was accepted: {err}");
        assert!(err.contains(needle), "{opt}: {err}");
    }
    let (code, _, err) = strata_create(p, schema, "id", &["rowkind.field=k"], &[]);
    assert_eq!(code, 0, "{err}");
    for (opt, needle) in bad.iter().filter(|(o, _)| !o.starts_with("primary-key")) {
        refused(p, opt, &[needle]);
    }
    refused(p, "primary-key=id", &["primary-key"]);
    refused(p, "bucket=0", &["'bucket'"]);
}

#[test]
fn fewer_levels_after_a_full_compaction_still_write() {
    let (_dir, p) = table_with_rows(&[], 20);
    let p = p.as_str();
    let t = Table::open(io(), p).unwrap();
    TableWriter::new(&t, "app").unwrap().compact(true).unwrap();
    let s = t.snapshot(None).unwrap().unwrap();
    assert!(t.live_files(&s).unwrap().iter().all(|e| e.file.level == 5), "a full compaction goes to the last level");
    altered(p, &["num-sorted-run.compaction-trigger=2"]);
    write_rows(p, 10..30);
    let t = Table::open(io(), p).unwrap();
    TableWriter::new(&t, "app").unwrap().compact(true).unwrap();
    assert_eq!(rows(p), 30);
}

/// An alter that would make a table unwritable (here: a file format Strata's bucket writers do not write)
/// is refused like the same option at create, and leaves the schema as it was.
#[test]
fn an_alter_that_would_make_the_table_unwritable_is_refused() {
    let (_dir, p) = scratch();
    let p = p.as_str();
    create(p, &[]);
    let before = schema_files(p);
    let (code, _, err) = alter(p, &["file.format=avro"], &[]);
    assert_ne!(code, 0, "alter --set file.format=avro was accepted");
    assert!(err.contains("avro"), "{err}");
    assert_eq!(schema_files(p), before);
}

/// Row groups of every data file (parquet) under table `p`.
fn row_groups(p: &str) -> Vec<usize> {
    common::parquet_data_files(Path::new(p))
        .iter()
        .map(|path| {
            let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
            let reader = parquet::file::serialized_reader::SerializedFileReader::new(bytes).unwrap();
            parquet::file::reader::FileReader::metadata(&reader).num_row_groups()
        })
        .collect()
}

/// `parquet.block.size` (Paimon passes it to its parquet writer) sets the row groups of the files Strata
/// writes: a writer holds one row group of each open file in memory. Zero is refused.
#[test]
fn parquet_block_size_sets_the_row_groups_written() {
    let write = |extra: &[&str]| -> (tempfile::TempDir, String) {
        let (dir, p) = scratch();
        create(&p, extra);
        let t = Table::open(io(), &p).unwrap();
        let mut w = TableWriter::new(&t, "app").unwrap();
        for k in 0..40_000i64 {
            // 32 hex characters of a multiplicative hash: about 16 bytes a row after compression.
            let s = format!("{:032x}", (k as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835));
            w.put(vec![
                Some(Datum::BigInt(k)),
                Some(Datum::String("a".into())),
                Some(Datum::BigInt(k)),
                Some(Datum::String(s)),
            ])
            .unwrap();
        }
        w.commit().unwrap();
        (dir, p)
    };
    let (_d1, default) = write(&[]);
    assert_eq!(row_groups(&default), vec![1], "under 16 MiB: one row group");
    let (_d2, small) = write(&["parquet.block.size=64 kb"]);
    let groups = row_groups(&small);
    assert!(groups.len() == 1 && groups[0] >= 4, "row groups of 64 KiB: {groups:?}");
    assert_eq!(rows(&small), 40_000);

    let (_d3, zero) = scratch();
    let schema = "id BIGINT NOT NULL, p STRING NOT NULL, v BIGINT, k STRING";
    let (code, _, err) = strata_create(&zero, schema, "id,p", &["parquet.block.size=0"], &["--partition-keys", "p"]);
    assert_ne!(code, 0);
    assert!(err.contains("parquet.block.size"), "{err}");
}
