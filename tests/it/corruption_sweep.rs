//! Corruption is detected, not read as data: one-bit flips across every kind of file Strata writes that a read
//! or a write depends on, classified as error (a typed error), harmless (the same rows) or silent (different
//! rows, no error), and regression tests for the checks that make data files and deletion vectors detect
//! corruption.
//!
//! `STRATA_SWEEP_OFFSETS=N cargo test --test corruption_sweep -- --nocapture` flips N offsets per file (48 by
//! default), `STRATA_SWEEP_WHOLE_UP_TO=B` every byte of files of at most B bytes (`scripts/soak.sh`), and
//! prints the counts (docs/ARCHITECTURE.md, "Corruption sweep").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use common::fixtures::id_name_v_schema;
use strata::spec::{BinaryRow, Datum, DeletionVectorMeta, IndexFileMeta, DELETION_VECTORS_INDEX};
use strata::table::{CommitMessage, Committable};
use strata::{Catalog, ErrorKind, FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};
use strata_sim::FaultyFileIO;

fn create(dir: &std::path::Path, name: &str, options: &[(&str, &str)]) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let catalog = Catalog::new(io, dir.to_str().unwrap());
    catalog.create_database("db", true).unwrap();
    let default_bucket = options.iter().all(|(k, _)| *k != "bucket").then_some(("bucket", "1"));
    let opts: Vec<(&str, &str)> = default_bucket.into_iter().chain(options.iter().copied()).collect();
    let schema = id_name_v_schema(&opts);
    catalog.create_table("db", name, schema, false).unwrap()
}

/// Commits `n` puts (ids `start..start + n` stepping by `step`, values tagged with `tag`) and some deletes.
fn commit(t: &Table, ids: impl Iterator<Item = i64>, tag: i64, deletes: &[i64]) {
    let mut w = TableWriter::new(t, "app").unwrap();
    for id in ids {
        let name = format!("name-{id}-{tag}");
        w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String(name)), Some(Datum::BigInt(id * 7 + tag))]).unwrap();
    }
    for id in deletes {
        w.delete(vec![Some(Datum::BigInt(*id))]).unwrap();
    }
    w.commit().unwrap();
}

/// A table of 400 keys over four commits, with `options`; deletion-vector tables are fully compacted after the
/// first, so the later commits mark rows of level >= 1 files deleted.
fn build(dir: &std::path::Path, options: &[(&str, &str)]) -> String {
    let t = create(dir, "t", options);
    commit(&t, 0..400, 0, &[]);
    if options.contains(&("deletion-vectors.enabled", "true")) {
        TableWriter::new(&t, "app").unwrap().compact(true).unwrap();
    }
    commit(&t, (0..400).step_by(3), 1, &[5, 11, 17]);
    commit(&t, (0..400).step_by(7), 2, &[23, 301]);
    table_path(dir)
}

/// Where `create` puts table `t`.
fn table_path(dir: &std::path::Path) -> String {
    dir.join("db.db/t").to_str().unwrap().to_string()
}

/// A row as the sweep compares it: its change kind (`""` in a scan), key and values.
type Row = (String, i64, String, Option<i64>);
type Rows = Vec<Row>;

fn rows(batches: &[RecordBatch]) -> Rows {
    let mut out = Vec::new();
    for b in batches {
        let kinds = b.column_by_name("rowkind").map(|c| c.as_string::<i32>().clone());
        let ids = b.column_by_name("id").unwrap().as_primitive::<Int64Type>();
        let names = b.column_by_name("name").unwrap().as_string::<i32>();
        let vs = b.column_by_name("v").unwrap().as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let kind = kinds.as_ref().map_or(String::new(), |k| k.value(i).to_string());
            out.push((kind, ids.value(i), names.value(i).to_string(), vs.is_valid(i).then(|| vs.value(i))));
        }
    }
    out.sort();
    out
}

fn scan(io: Arc<dyn FileIO>, path: &str) -> strata::Result<Rows> {
    let t = Table::open(io, path)?;
    Ok(rows(&ReadBuilder::new(&t).read()?.batches))
}

/// What runs after each flip, its rows compared with the clean table's.
#[derive(Clone, Copy, PartialEq)]
enum Probe {
    /// A scan of the latest snapshot.
    Scan,
    /// A scan, then the changelog of every snapshot (changelog files and manifests).
    ScanAndChangelog,
    /// A write of updates and new keys, then a scan: what the dynamic-bucket hash index decides (on a copy of
    /// the table, as it changes it).
    WriteThenScan,
}

impl Probe {
    fn run(self, io: Arc<dyn FileIO>, path: &str) -> strata::Result<Rows> {
        match self {
            Probe::Scan => scan(io, path),
            Probe::ScanAndChangelog => {
                let mut all = scan(io.clone(), path)?;
                let t = Table::open(io, path)?;
                let latest = t.snapshot(None)?.map_or(0, |s| s.id);
                let changes = ReadBuilder::new(&t)
                    .incremental_between(0, latest)
                    .with_mode(strata::table::IncrementalMode::Changelog)
                    .read()?;
                all.extend(rows(&changes.batches));
                Ok(all)
            }
            Probe::WriteThenScan => {
                let t = Table::open(io.clone(), path)?;
                let mut w = TableWriter::new(&t, "probe")?;
                for id in (0..440).step_by(5) {
                    w.put(vec![
                        Some(Datum::BigInt(id)),
                        Some(Datum::String(format!("p-{id}"))),
                        Some(Datum::BigInt(9)),
                    ])?;
                }
                w.commit()?;
                scan(io, path)
            }
        }
    }
}

fn kind(path: &str, index_kind: &'static str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or("");
    Some(if path.contains("/bucket-") && name.starts_with("changelog-") {
        "changelog"
    } else if path.contains("/bucket-") && name.ends_with(".parquet") {
        "data (parquet)"
    } else if path.contains("/bucket-") && name.ends_with(".orc") {
        "data (orc)"
    } else if path.contains("/index/") {
        index_kind
    } else if name.starts_with("manifest-list-") {
        "manifest list"
    } else if name.starts_with("index-manifest-") {
        "index manifest"
    } else if name.starts_with("manifest-") {
        "manifest"
    } else if name.starts_with("snapshot-") {
        "snapshot JSON"
    } else if name.starts_with("schema-") {
        "schema JSON"
    } else {
        return None;
    })
}

#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    files: usize,
    flips: usize,
    error: usize,
    harmless: usize,
    silent: usize,
    panic: usize,
}

/// How many offsets of each file a sweep flips: `STRATA_SWEEP_OFFSETS` (48 by default) spread over the file,
/// or every byte of files of at most `STRATA_SWEEP_WHOLE_UP_TO` bytes (none by default; `scripts/soak.sh`
/// sets it).
struct Offsets {
    per_file: usize,
    whole_up_to: usize,
}

impl Offsets {
    fn from_env() -> Self {
        let var = |k: &str, d: usize| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        Offsets { per_file: var("STRATA_SWEEP_OFFSETS", 48), whole_up_to: var("STRATA_SWEEP_WHOLE_UP_TO", 0) }
    }

    /// The offsets to flip in a file of `len` bytes: deterministic, both ends included.
    fn of(&self, len: usize) -> Vec<usize> {
        if len <= self.whole_up_to {
            return (0..len).collect();
        }
        let n = self.per_file.min(len);
        (0..n).map(|i| if n == 1 { 0 } else { i * (len - 1) / (n - 1) }).collect()
    }
}

/// Copies the table directory `from` to `to`.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// One table swept: its path, the probe, what its index files are, and the only kind flipped (all if `None`).
struct Sweep<'a> {
    path: &'a str,
    probe: Probe,
    index_kind: &'static str,
    only: Option<&'static str>,
}

/// Flips one bit of one byte at each of `offsets` of each file the probe of the table reads (cycling through
/// the eight bit positions, so text files stay ASCII for seven in eight flips), classifying what the probe
/// then returns.
fn sweep(s: &Sweep<'_>, offsets: &Offsets, counts: &mut BTreeMap<&'static str, Counts>) {
    let mutates = s.probe == Probe::WriteThenScan;
    let scratch = tempfile::tempdir().unwrap();
    // A probe that writes runs on a fresh copy of the table each time; the others on the table itself.
    let target = |n: usize| -> String {
        if !mutates {
            return s.path.to_string();
        }
        let copy = scratch.path().join(format!("copy-{n}"));
        copy_dir(std::path::Path::new(s.path), &copy);
        copy.to_str().unwrap().to_string()
    };
    // The files the probe reads: those of the read operations a (never failing) FaultyFileIO logs.
    let rec = FaultyFileIO::new(local());
    let clean_target = target(0);
    let baseline = s.probe.run(Arc::new(rec.clone()), &clean_target).unwrap();
    assert!(!baseline.is_empty());
    let files: BTreeSet<String> = rec
        .log()
        .iter()
        .filter_map(|op| op.strip_prefix("read ").or_else(|| op.strip_prefix("read_range ")))
        .filter_map(|f| f.strip_prefix(clean_target.as_str()).map(str::to_string))
        .collect();
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let mut n = 0;
    for relative in files {
        let Some(k) = kind(&relative, s.index_kind).filter(|k| s.only.is_none_or(|o| o == *k)) else { continue };
        let original = std::fs::read(format!("{}{relative}", s.path)).unwrap();
        let c = counts.entry(k).or_default();
        c.files += 1;
        for (i, offset) in offsets.of(original.len()).into_iter().enumerate() {
            n += 1;
            let table = target(n);
            let f = format!("{table}{relative}");
            let mut bad = original.clone();
            bad[offset] ^= 1 << ((i + offset) % 8);
            std::fs::write(&f, &bad).unwrap();
            let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.probe.run(io.clone(), &table)));
            c.flips += 1;
            match got {
                Err(_) => c.panic += 1,
                Ok(Err(_)) => c.error += 1,
                Ok(Ok(r)) if r == baseline => c.harmless += 1,
                Ok(Ok(_)) => {
                    c.silent += 1;
                    eprintln!("silent: {k} {f} offset {offset} of {}", original.len());
                }
            }
            if mutates {
                std::fs::remove_dir_all(&table).unwrap();
            } else {
                std::fs::write(&f, &original).unwrap();
            }
        }
    }
}

/// Every kind of file Strata writes that a read or a write depends on, each swept by the probe that reads it:
/// parquet and ORC data files, changelog files, manifests, manifest lists, index manifests, deletion-vector
/// and hash index files, snapshots, schemas. (Local lookup files, which live only while a query or compaction
/// uses them, are swept byte by byte in strata-format's `lookup::rows` tests.)
const SWEPT_KINDS: [&str; 10] = [
    "changelog",
    "data (orc)",
    "data (parquet)",
    "deletion-vector index",
    "hash index",
    "index manifest",
    "manifest",
    "manifest list",
    "schema JSON",
    "snapshot JSON",
];

#[test]
fn one_byte_flips_in_checked_files_are_never_read_as_data() {
    let offsets = Offsets::from_env();
    let mut counts: BTreeMap<&'static str, Counts> = BTreeMap::new();
    let mut dirs = Vec::new();
    let mut tables = Vec::new();
    for dv in [true, false] {
        for format in ["parquet", "orc"] {
            let dir = tempfile::tempdir().unwrap();
            let path = build(
                dir.path(),
                &[("deletion-vectors.enabled", if dv { "true" } else { "false" }), ("file.format", format)],
            );
            if dv {
                assert!(std::fs::read_dir(format!("{path}/index")).unwrap().count() > 0, "no deletion vectors");
            }
            tables.push((path, Probe::Scan, "deletion-vector index", None));
            dirs.push(dir);
        }
    }
    // Changelog files: written as the input (merge-on-read, parquet) and by lookups (deletion vectors, ORC).
    for options in [
        [("changelog-producer", "input"), ("deletion-vectors.enabled", "false"), ("file.format", "parquet")],
        [("changelog-producer", "lookup"), ("deletion-vectors.enabled", "true"), ("file.format", "orc")],
    ] {
        let dir = tempfile::tempdir().unwrap();
        tables.push((build(dir.path(), &options), Probe::ScanAndChangelog, "deletion-vector index", Some("changelog")));
        dirs.push(dir);
    }
    // Hash index files: a dynamic-bucket table, written to after each flip.
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), &[("bucket", "-1"), ("dynamic-bucket.target-row-num", "150")]);
    tables.push((path, Probe::WriteThenScan, "hash index", Some("hash index")));
    dirs.push(dir);
    for (path, probe, index_kind, only) in &tables {
        sweep(&Sweep { path, probe: *probe, index_kind, only: *only }, &offsets, &mut counts);
    }
    println!("| file kind | files | flips | error | harmless | silent | panic |");
    println!("|---|---|---|---|---|---|---|");
    for (k, c) in &counts {
        println!("| {k} | {} | {} | {} | {} | {} | {} |", c.files, c.flips, c.error, c.harmless, c.silent, c.panic);
    }
    for k in SWEPT_KINDS {
        let c = counts.get(k).copied().unwrap_or_default();
        assert!(c.flips > 0, "{k}: nothing swept");
    }
    // No flip is read as other rows, and every decoder's panic, Avro's included, comes out as an error.
    for (k, c) in &counts {
        assert_eq!((c.silent, c.panic), (0, 0), "{k}: {c:?}");
    }
}

fn data_files(table: &str, ext: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(format!("{table}/bucket-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    files
}

fn local() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

/// Flips a bit in the middle of column `v`'s chunk (row group 0) of parquet `file`: in an uncompressed file,
/// plain or dictionary values, which decode to other values.
fn flip_mid_v_chunk(file: &std::path::Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let meta = parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(bytes.clone())).unwrap();
    let rg = parquet::file::reader::FileReader::metadata(&meta).row_group(0).clone();
    let col = rg.columns().iter().find(|c| c.column_path().string() == "v").unwrap();
    let (start, len) = col.byte_range();
    bytes[(start + len / 2) as usize] ^= 0x01;
    std::fs::write(file, &bytes).unwrap();
}

#[test]
fn a_flipped_byte_in_a_parquet_value_page_is_a_corrupt_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "t", &[("file.compression", "none")]);
    commit(&t, 0..300, 0, &[]);
    let path = table_path(dir.path());
    let file = data_files(&path, "parquet")[0].clone();
    flip_mid_v_chunk(&file);
    let err = scan(local(), &path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
    let msg = err.to_string();
    // Whole reads name the column whose chunk checksum failed; a merge by keys first reads the key pages
    // by ranges first, checked by the footer's block checksums, which name the bytes.
    assert!(
        msg.contains(file.file_name().unwrap().to_str().unwrap()) && (msg.contains("'v'") || msg.contains("checksum")),
        "{msg}"
    );
}

/// Lookups and filtered scans read only some pages of a file (by ranges), and check them too: by the block
/// checksums in the footer. Before those, a `get` of a key whose value page had a flipped byte returned the
/// other value, without an error.
#[test]
fn a_flipped_byte_in_a_value_page_fails_lookups_and_filtered_scans_too() {
    for dv in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let dv_option = ("deletion-vectors.enabled", if dv { "true" } else { "false" });
        let t = create(dir.path(), "t", &[("file.compression", "none"), dv_option]);
        commit(&t, 0..300, 0, &[]);
        if dv {
            TableWriter::new(&t, "app").unwrap().compact(true).unwrap();
        }
        let path = table_path(dir.path());
        let keys: Vec<Vec<Option<Datum>>> = (0..300).map(|i| vec![Some(Datum::BigInt(i))]).collect();
        let filter = strata::Predicate::eq("id", Datum::BigInt(150));
        let filtered = |t: &Table| ReadBuilder::new(t).with_filter(filter.clone()).read().map(|r| rows(&r.batches));
        assert_eq!(filtered(&t).unwrap().len(), 1);
        assert!(strata::table::get_many(&t, &keys, None).unwrap().iter().all(Option::is_some));
        // Column `v`'s chunk, mid-way, in every data file (the compacted one is the live one).
        for file in data_files(&path, "parquet") {
            flip_mid_v_chunk(&file);
        }
        let t = Table::open(local(), &path).unwrap();
        let err = strata::table::get_many(&t, &keys, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "dv {dv}: {err}");
        assert!(err.to_string().contains("checksum"), "dv {dv}: {err}");
        let err = strata::get(&t, &keys[150], None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "dv {dv}: {err}");
        let err = filtered(&t).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "dv {dv}: {err}");
    }
}

/// A table of two commits (keys `first`, then `second`) in each format, whose first data file is replaced by
/// the second: the scan fails as corrupt, saying `want`.
fn second_file_over_the_first_is_corrupt(first: std::ops::Range<i64>, second: std::ops::Range<i64>, want: &str) {
    for ext in ["parquet", "orc"] {
        let dir = tempfile::tempdir().unwrap();
        let t = create(dir.path(), "t", &[("file.format", ext)]);
        commit(&t, first.clone(), 0, &[]);
        commit(&t, second.clone(), 1, &[]);
        let path = table_path(dir.path());
        let files = data_files(&path, ext);
        assert_eq!(files.len(), 2);
        std::fs::copy(&files[1], &files[0]).unwrap();
        let err = scan(local(), &path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{ext}: {err}");
        assert!(err.to_string().contains(want), "{ext}: {err}");
    }
}

#[test]
fn a_data_file_whose_row_count_differs_from_its_manifest_entry_is_corrupt() {
    // The second file (keys 0..50, tag 1) stands in for the first: its keys lie within the first's min/max,
    // so only the row count tells them apart.
    second_file_over_the_first_is_corrupt(0..300, 0..50, "50 rows where its manifest entry says 300");
}

#[test]
fn a_commit_whose_deletion_vector_names_a_file_that_is_not_live_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = create(dir.path(), "t", &[("deletion-vectors.enabled", "true")]);
    commit(&t, 0..300, 0, &[]);
    let dv = DeletionVectorMeta {
        data_file_name: "data-not-live-0.parquet".into(),
        offset: 1,
        length: 20,
        cardinality: Some(1),
    };
    let index = IndexFileMeta {
        index_type: DELETION_VECTORS_INDEX.to_string(),
        file_name: "index-stray-0".into(),
        file_size: 40,
        row_count: 1,
        dv_ranges: Some(vec![dv]),
        external_path: None,
        global_index: None,
    };
    let c = Committable {
        identifier: 100,
        messages: vec![CommitMessage::new(
            BinaryRow::empty(),
            0,
            1,
            strata::lsm::CompactIncrement { new_index_files: vec![index], ..Default::default() }.into(),
        )],
        ..Default::default()
    };
    let path = table_path(dir.path());
    let before = scan(local(), &path).unwrap();
    // Readers skip such a vector (an orphan, as Java Paimon leaves them): the rows it was meant to delete
    // would read again, so no Strata commit may make one.
    let err = t.new_commit("other").unwrap().commit(&c).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains("data-not-live-0.parquet"), "{err}");
    assert_eq!(scan(local(), &path).unwrap(), before);
}

#[test]
fn a_snapshot_that_lost_a_live_files_deletion_vector_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), &[("deletion-vectors.enabled", "true")]);
    let before = scan(local(), &path).unwrap();
    // The `indexManifest` field gone (a damaged key one edit away is caught by the snapshot decoder; a key
    // that is simply missing is not), so the latest snapshot has no deletion vectors while its files are
    // those of the snapshot before.
    let latest = std::fs::read_to_string(format!("{path}/snapshot/LATEST")).unwrap();
    let snapshot = format!("{path}/snapshot/snapshot-{}", latest.trim());
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&snapshot).unwrap()).unwrap();
    assert!(json.as_object_mut().unwrap().remove("indexManifest").is_some());
    std::fs::write(&snapshot, json.to_string()).unwrap();
    match scan(local(), &path) {
        Err(e) => assert!(e.kind() == ErrorKind::Corrupt && e.to_string().contains("is missing"), "{e}"),
        Ok(rows) => panic!("read {} rows (before: {})", rows.len(), before.len()),
    }
}

#[test]
fn a_data_file_with_keys_outside_its_manifest_range_is_corrupt() {
    // Same row count, keys 200..300 where the manifest says 0..99.
    second_file_over_the_first_is_corrupt(0..100, 200..300, "outside the manifest's");
}
