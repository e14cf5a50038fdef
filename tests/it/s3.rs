//! Tables on S3, against a real S3-compatible server on the loopback interface (scripts/s3_server.py,
//! moto's S3 backend): the store's conditional create decides racing commits, a write whose answer is lost
//! after the store applied it commits once, a store that cannot make conditional creates is refused, tables
//! equal a model through every read path and maintenance, pypaimon and paimon-rust read them through their
//! own S3 support, random workloads with faults replay without divergence, and every CLI command works on
//! `s3://` URIs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Barrier;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use common::fixtures::id_name_v_schema;
use common::s3;
use serde_json::{json, Value};
use strata::spec::{DataType, Datum, TableSchema};
use strata::{ErrorKind, ReadBuilder, Table, TableQuery, TableWriter};
use strata_sim::{replay_on, FaultPlan, Workload};

fn open(uri: &str) -> strata::Location {
    strata::open_location(uri, &s3::options()).unwrap()
}

fn catalog_env() -> Vec<(&'static str, String)> {
    vec![("PAIMON_CATALOG_OPTIONS", serde_json::to_string(&s3::options()).unwrap())]
}

/// `id BIGINT` key, `name STRING`, `v BIGINT`; deletion vectors or merge-on-read; two buckets.
fn create(uri: &str, dv: bool, extra: &[(&str, &str)]) -> Table {
    let dv = dv.to_string();
    let base = [("bucket", "2"), ("deletion-vectors.enabled", dv.as_str())];
    let options: Vec<(&str, &str)> = base.into_iter().chain(extra.iter().copied()).collect();
    let schema = id_name_v_schema(&options);
    let l = open(uri);
    Table::create(l.io, &l.path, schema).unwrap()
}

type Model = BTreeMap<i64, (String, i64)>;

fn rows_of(batches: &[RecordBatch]) -> Model {
    let mut out = Model::new();
    for b in batches {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let names = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        let vs = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            let prev = out.insert(ids.value(i), (names.value(i).to_string(), vs.value(i)));
            assert!(prev.is_none(), "key {} read twice", ids.value(i));
        }
    }
    out
}

fn oracle_rows(rows: &Value) -> Model {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_i64().unwrap(), (r["name"].as_str().unwrap().to_string(), r["v"].as_i64().unwrap())))
        .collect()
}

/// One commit of upserts and deletes drawn from `seed`, applied to the model too.
fn commit_random(w: &mut TableWriter, model: &mut Model, seed: u64) {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..300 {
        let id = (next() % 500) as i64;
        if next() % 5 == 0 {
            w.delete(vec![Some(Datum::BigInt(id))]).unwrap();
            model.remove(&id);
        } else {
            let v = (next() % 1000) as i64;
            let name = format!("n{seed}-{id}");
            w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String(name.clone())), Some(Datum::BigInt(v))]).unwrap();
            model.insert(id, (name, v));
        }
    }
    w.commit().unwrap();
}

#[test]
fn racing_conditional_creates_of_one_key_have_exactly_one_winner() {
    let l = open(&format!("s3://{}", s3::bucket()));
    const RACERS: usize = 8;
    for round in 0..30 {
        let key = format!("{}/race/snapshot-{round}", l.path);
        let barrier = Barrier::new(RACERS);
        let wins: Vec<(usize, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..RACERS)
                .map(|i| {
                    let (io, key, barrier) = (l.io.clone(), key.clone(), &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        (i, io.create_if_absent(&key, format!("racer {i}").as_bytes()).unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<usize> = wins.iter().filter(|(_, won)| *won).map(|(i, _)| *i).collect();
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        assert_eq!(l.io.read(&key).unwrap(), format!("racer {}", winners[0]).as_bytes(), "round {round}");
    }
}

/// A file streamed in pieces goes up as one PUT while small and as a multipart upload once large; neither
/// is visible before it is finished, and an abandoned upload leaves nothing behind.
#[test]
fn streamed_files_appear_whole_only_when_finished() {
    let bucket = s3::bucket();
    let l = open(&format!("s3://{bucket}"));
    let content: Vec<u8> = (0..(21u64 << 20) + 333).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    for (name, len) in [("small", 1000), ("large", content.len())] {
        let path = format!("{}/stream/{name}", l.path);
        let before = l.io.request_counts().unwrap();
        let mut sink = strata::io::create_file(&l.io, &path).unwrap();
        for piece in content[..len].chunks((1 << 19) + 7) {
            sink.write_all(piece).unwrap();
        }
        assert!(!l.io.file_exists(&path).unwrap(), "{name}: visible before it was finished");
        sink.finish().unwrap();
        let puts = l.io.request_counts().unwrap().since(&before).put;
        assert_eq!(l.io.read(&path).unwrap(), &content[..len], "{name}");
        // 21 MiB: the start, three parts of 8 MiB or less, the completion.
        assert_eq!(puts, if len == 1000 { 1 } else { 5 }, "{name}");
    }
    assert_eq!(s3::open_uploads(&bucket), 0, "a finished upload is still open");
    let path = format!("{}/stream/abandoned", l.path);
    let mut sink = strata::io::create_file(&l.io, &path).unwrap();
    sink.write_all(&content).unwrap();
    assert_eq!(s3::open_uploads(&bucket), 1, "a file of 21 MiB is not being uploaded in parts");
    drop(sink);
    assert!(!l.io.file_exists(&path).unwrap());
    // The abandoned upload is aborted in the background, not left for the bucket's lifecycle rules.
    wait_for_no_uploads(&bucket, "abandoned");

    // A part the store refuses fails the file, and the upload is aborted too.
    let path = format!("{}/stream/refused", l.path);
    // Refused for good (a 4xx is not retried); the upload's start and completion are POSTs.
    s3::inject_fault_on(Some("PUT"), &format!("{bucket}/stream/refused"), 403, false, 1000);
    let mut sink = strata::io::create_file(&l.io, &path).unwrap();
    let written = sink.write_all(&content);
    assert_eq!(s3::open_uploads(&bucket), 1, "refused: no upload was started");
    let err = match written {
        // The refusal shows when the file is finished: a failed finish aborts the upload before it returns.
        Ok(()) => {
            let err = sink.finish().expect_err("a refused part did not fail the file");
            assert_eq!(s3::open_uploads(&bucket), 0, "refused: the failed finish left its upload open");
            err
        }
        // It showed while the parts went up: the dropped sink aborts the upload in the background.
        Err(err) => {
            drop(sink);
            wait_for_no_uploads(&bucket, "refused");
            err
        }
    };
    assert!(err.to_string().contains("stream/refused"), "the error does not name the file: {err}");
    assert!(!l.io.file_exists(&path).unwrap());
}

/// Waits up to 60 s for `bucket` to have no open multipart upload.
fn wait_for_no_uploads(bucket: &str, what: &str) {
    let start = std::time::Instant::now();
    while s3::open_uploads(bucket) > 0 {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "{what}: the upload was never aborted");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_store_without_conditional_creates_is_refused_for_commits() {
    let root = format!("s3://{}", s3::bucket());
    let mut options = s3::options();
    options.insert("s3.conditional-put".into(), "disabled".into());
    let l = strata::open_location(&format!("{root}/wh/db.db/t"), &options).unwrap();
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint())],
        vec![],
        vec!["id".into()],
        BTreeMap::from([("bucket".to_string(), "1".to_string())]),
        0,
    )
    .unwrap();
    let err = Table::create(l.io.clone(), &l.path, schema).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("conditional"), "{err}");
    // Reads still work: the store is reachable, only commits are refused.
    assert!(l.io.list(&root).unwrap().is_empty());
}

/// A conditional create whose answer the server lost after applying it (500): the client retries, the store
/// says the object exists, and the create still reports that it made the object (its bytes are this
/// call's); another writer's object is still a loss.
#[test]
fn a_create_whose_answer_was_lost_still_reports_that_it_won() {
    let bucket = s3::bucket();
    let l = open(&format!("s3://{bucket}"));
    let key = format!("{}/t/snapshot/snapshot-7", l.path);
    // Faults are matched by path on the shared server: the bucket keeps them to this test.
    s3::inject_fault(&format!("{bucket}/t/snapshot/snapshot-7"), 500, true, 1);
    assert!(l.io.create_if_absent(&key, b"mine").unwrap(), "the create reported a loss");
    assert_eq!(l.io.read(&key).unwrap(), b"mine");
    assert!(!l.io.create_if_absent(&key, b"theirs").unwrap());
    assert_eq!(l.io.read(&key).unwrap(), b"mine");
}

/// The server applies a PUT and answers 500 (as a timeout or a dropped connection after the write leaves
/// it): the client's retry finds the object and the store says it exists. Strata recognises its own write,
/// so the commit succeeds once; a failure before the write is retried by the client.
#[test]
fn a_commit_whose_answer_was_lost_after_the_store_applied_it_lands_once() {
    let bucket = s3::bucket();
    let uri = format!("s3://{bucket}/wh/db.db/t");
    let table = create(&uri, false, &[("bucket", "1")]);
    let mut w = TableWriter::new(&table, "w").unwrap();
    let mut model = Model::new();
    let t = format!("{bucket}/wh/db.db/t");
    s3::inject_fault(&format!("{t}/snapshot/snapshot-1"), 500, true, 1);
    commit_random(&mut w, &mut model, 1);
    s3::inject_fault(&format!("{t}/snapshot/snapshot-2"), 503, false, 2);
    commit_random(&mut w, &mut model, 2);
    s3::inject_fault(&format!("{t}/bucket-0/data-"), 500, true, 1);
    commit_random(&mut w, &mut model, 3);
    let reopened = Table::open(open(&uri).io, &uri).unwrap();
    assert_eq!(reopened.snapshot_manager().list_ids().unwrap(), vec![1, 2, 3]);
    let users: Vec<_> = (1..=3)
        .map(|id| {
            let s = reopened.snapshot_manager().snapshot(id).unwrap();
            (s.commit_user, s.commit_identifier)
        })
        .collect();
    assert_eq!(users, vec![("w".into(), 1), ("w".into(), 2), ("w".into(), 3)]);
    assert_eq!(rows_of(&ReadBuilder::new(&reopened).read().unwrap().batches), model);
}

/// Both table modes on S3 against the model: scans, one-off gets and a `TableQuery` after every commit,
/// then full compaction, expiration, orphan cleanup and a tag; pypaimon and paimon-rust read the table
/// through their own S3 clients and see the model's rows.
#[test]
fn tables_on_s3_equal_the_model_through_every_read_path_and_both_oracles() {
    for dv in [true, false] {
        let uri = format!("s3://{}/wh/db.db/t", s3::bucket());
        let table = create(&uri, dv, &[]);
        let mut w = TableWriter::new(&table, "model").unwrap();
        let mut model = Model::new();
        let query = TableQuery::new(&table).unwrap();
        for seed in 0..5 {
            commit_random(&mut w, &mut model, 10 * seed + u64::from(dv));
            assert_eq!(rows_of(&ReadBuilder::new(&table).read().unwrap().batches), model, "dv {dv} commit {seed}");
            query.refresh().unwrap();
            for id in (0..500).step_by(37) {
                let want = model.get(&id).cloned();
                let got = strata::get(&table, &[Some(Datum::BigInt(id))], None).unwrap();
                assert_eq!(got.as_ref().map(|b| rows_of(std::slice::from_ref(b))[&id].clone()), want, "get {id}");
                let q = query.get(&[Some(Datum::BigInt(id))]).unwrap();
                assert_eq!(q.as_ref().map(|b| rows_of(std::slice::from_ref(b))[&id].clone()), want, "query {id}");
            }
        }
        w.compact(true).unwrap();
        strata::table::create_tag(&table, "before-expire", None, None).unwrap();
        let expire = strata::table::ExpireOptions {
            retain_min: 1,
            retain_max: 1,
            time_retained: std::time::Duration::ZERO,
            dry_run: false,
        };
        strata::table::expire_snapshots(&table, &expire).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        strata::table::remove_orphan_files(&table, std::time::Duration::ZERO, false).unwrap();
        let reopened = Table::open(open(&uri).io, &uri).unwrap();
        assert_eq!(rows_of(&ReadBuilder::new(&reopened).read().unwrap().batches), model, "dv {dv} after maintenance");
        let env = catalog_env();
        assert_eq!(oracle_rows(&common::oracle_with(&["read", &uri], &env)), model, "pypaimon, dv {dv}");
        let rust = common::paimon_rust_with("read", &json!({"path": uri}), &env);
        assert_eq!(oracle_rows(&rust["rows"]), model, "paimon-rust, dv {dv}");
    }
}

/// Random workloads (both modes, several merge engines) with storage faults in a share of the commits,
/// replayed on S3 against the model: the same checker the local suite runs.
#[test]
fn random_workloads_with_faults_replay_on_s3_without_divergence() {
    let bucket = s3::bucket();
    let mut failed_commits = 0;
    for seed in 0..12u64 {
        let mut w = Workload::generate(seed, 4);
        w.header.deletion_vectors = seed % 2 == 0;
        if w.header.deletion_vectors && w.header.merge_engine == "first-row" {
            w.header.merge_engine = "deduplicate".into();
        }
        let dir = format!("s3://{bucket}/w{seed}");
        let plan = (seed % 3 != 0).then_some(FaultPlan { rate: 0.3, seed });
        match replay_on(open(&dir).io, &dir, &w, plan).unwrap() {
            Ok(stats) => failed_commits += stats.failed_commits,
            Err(d) => panic!("seed {seed}: {d}\n{}", w.to_text()),
        }
    }
    assert!(failed_commits > 0, "no commit failed: the faults were never exercised");
}

fn cli(args: &[&str]) -> (i32, String, String) {
    common::strata_with(args, &s3::env())
}

fn cli_ok(args: &[&str]) -> String {
    let (code, out, err) = cli(args);
    assert_eq!(code, 0, "strata {args:?}: {err}");
    out
}

/// Every command of the CLI on an `s3://` table, with the store taken from the AWS_* environment.
#[test]
fn every_cli_command_works_on_s3_uris() {
    let t = format!("s3://{}/wh/db.db/t", s3::bucket());
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.jsonl");
    std::fs::write(&rows, "{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":\"b\"}\n").unwrap();
    let rows = rows.to_str().unwrap();
    cli_ok(&["create", &t, "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id", "--option", "bucket=2"]);
    cli_ok(&["write", &t, rows]);
    let scan = cli_ok(&["scan", &t]);
    assert_eq!(scan.lines().count(), 2, "{scan}");
    let got = cli_ok(&["get", &t, "1", "3", "--json"]);
    assert!(got.contains("\"a\"") && got.contains('3'), "{got}");
    cli_ok(&["tag", "create", &t, "first"]);
    assert!(cli_ok(&["tag", "list", &t]).contains("first"));
    std::fs::write(dir.path().join("more.jsonl"), "{\"id\":2,\"v\":\"B\"}\n{\"id\":3,\"v\":\"c\"}\n").unwrap();
    cli_ok(&["write", &t, dir.path().join("more.jsonl").to_str().unwrap()]);
    let changes = cli_ok(&["scan", &t, "--from", "1", "--format", "csv"]);
    assert!(changes.contains("+I") && changes.contains('B'), "{changes}");
    cli_ok(&["compact", &t, "--full"]);
    let inspect = cli_ok(&["inspect", &t, "--json"]);
    assert!(inspect.contains("\"snapshots\""), "{inspect}");
    cli_ok(&["alter", &t, "--set", "snapshot.num-retained.max=20", "--add-column", "note STRING"]);
    assert_eq!(cli_ok(&["scan", &t, "--tag", "first"]).lines().count(), 2);
    let follow = cli_ok(&["scan", &t, "--follow", "--from", "1", "--max-snapshots", "1", "--json"]);
    assert!(!follow.is_empty());
    cli_ok(&["rollback", &t, "--to-tag", "first"]);
    assert_eq!(cli_ok(&["scan", &t]).lines().count(), 2);
    cli_ok(&["tag", "delete", &t, "first"]);
    cli_ok(&["expire", &t, "--retain-max", "1", "--older-than", "1 ms"]);
    cli_ok(&["clean", &t, "--older-than", "1 d", "--dry-run"]);
    let scan = cli_ok(&["scan", &t, "--format", "csv"]);
    assert!(scan.contains("1,a") && scan.contains("2,b"), "{scan}");
    // SQL over the warehouse URI: the table the commands above made, written and read through DataFusion.
    let wh = t.strip_suffix("/db.db/t").unwrap();
    let sql = "INSERT INTO db.t VALUES (5, 'e', NULL); SELECT id, v FROM db.t WHERE id >= 2 ORDER BY id";
    let out = cli_ok(&["sql", "--warehouse", wh, "--json", sql]);
    assert_eq!(out, "{\"count\":1}\n{\"id\":2,\"v\":\"b\"}\n{\"id\":5,\"v\":\"e\"}\n");
}

/// A scheme Strata cannot reach is an error naming it, and a string that only looks like a URI is refused:
/// neither becomes a local directory.
#[test]
fn unknown_schemes_and_half_uris_never_become_local_directories() {
    let dir = tempfile::tempdir().unwrap();
    let schema = ["--schema", "id BIGINT NOT NULL", "--primary-key", "id"];
    let run = |t: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .current_dir(dir.path())
            .args(["create", t])
            .args(schema)
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = run("hdfs://namenode/wh/db.db/t");
    assert_eq!(code, 7, "{err}");
    assert!(err.contains("hdfs") && err.contains("s3"), "{err}");
    let (code, err) = run("s3:/bucket/wh/db.db/t");
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a local directory was made");
}

/// Requests per operation on a table on S3, for the record (docs/BENCHMARKS.md has the figures of
/// `strata bench --warehouse s3://...`): a commit, a scan and a one-off get each make a bounded number of
/// requests, and a scan lists nothing.
#[test]
fn commits_scans_and_gets_make_few_requests_and_scans_list_nothing() {
    let uri = format!("s3://{}/wh/db.db/t", s3::bucket());
    let table = create(&uri, true, &[]);
    let mut w = TableWriter::new(&table, "w").unwrap();
    let mut model = Model::new();
    commit_random(&mut w, &mut model, 1);
    let io = table.io().clone();
    let counts = || io.request_counts().unwrap();
    let before = counts();
    commit_random(&mut w, &mut model, 2);
    let commit = counts().since(&before);
    let before = counts();
    let fresh = Table::open(io.clone(), &uri).unwrap();
    assert_eq!(rows_of(&ReadBuilder::new(&fresh).read().unwrap().batches), model);
    let scan = counts().since(&before);
    let before = counts();
    strata::get(&fresh, &[Some(Datum::BigInt(7))], None).unwrap();
    let get = counts().since(&before);
    // A filtered scan reads its raw splits' files by ranges (none fetched whole ahead as well).
    let before = counts();
    let filter = strata::Predicate::eq("id", Datum::BigInt(7));
    let want: Model = model.iter().filter(|(k, _)| **k == 7).map(|(k, v)| (*k, v.clone())).collect();
    assert_eq!(rows_of(&ReadBuilder::new(&fresh).with_filter(filter).read().unwrap().batches), want);
    let filtered = counts().since(&before);
    eprintln!("requests: commit {commit}; open and scan {scan}; get {get}; filtered scan {filtered}");
    assert!(commit.total() < 60, "commit: {commit}");
    assert!(scan.total() < 40 && scan.list <= 1, "open and scan: {scan}");
    assert!(get.total() < 30 && get.list == 0, "get: {get}");
    assert!(filtered.total() < 40 && filtered.list <= 1, "filtered scan: {filtered}");
}

/// The README's object-storage example runs as written, against the loopback server (its endpoint and
/// credentials in place of the example's, its bucket made first).
#[test]
fn the_readme_object_storage_example_runs_as_written() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let section = readme.split("## Tables on object storage").nth(1).expect("README has the section");
    let block = section.split("```sh\n").nth(1).expect("an sh block").split("```").next().unwrap();
    let bucket = s3::bucket();
    let script = block
        .replace("http://127.0.0.1:9000", &s3::endpoint())
        .replace("s3://warehouse/", &format!("s3://{bucket}/"))
        .replace("minioadmin", "strata");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rows.jsonl"), "{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":\"b\"}\n").unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_strata")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("sh")
        .args(["-ec", &script])
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{script}\n{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("| 2  | b |"), "{stdout}");
}
