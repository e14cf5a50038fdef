//! `INSERT INTO` and `DELETE FROM` through SQL against a model, one commit per statement; system tables;
//! the files a selective key filter reads on a deletion-vector table; errors keep their kinds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use common::{column, keyed, random_commit, runtime, same, Model, Row, Warehouse};
use datafusion::physical_plan::{visit_execution_plan, ExecutionPlan, ExecutionPlanVisitor};
use rand::rngs::StdRng;
use rand::SeedableRng;
use strata_datafusion::{StrataScanExec, StrataSession};
use strata_spec::{BinaryRow, DataType, Datum, ErrorKind};

/// The snapshots after `before`, as (commit user, identifier, kind).
fn snapshots_since(table: &strata_table::Table, before: i64) -> Vec<(String, i64, String)> {
    let sm = table.snapshot_manager();
    let latest = sm.latest_id().unwrap().unwrap_or(0);
    ((before + 1)..=latest)
        .map(|id| {
            let s = sm.snapshot(id).unwrap();
            (s.commit_user, s.commit_identifier, format!("{:?}", s.commit_kind))
        })
        .collect()
}

/// Each statement commits once: one APPEND snapshot, perhaps followed by its COMPACT one, by one user.
fn assert_one_commit(table: &strata_table::Table, before: i64, what: &str) {
    let made = snapshots_since(table, before);
    assert!(!made.is_empty() && made.len() <= 2, "{what}: snapshots {made:?}");
    assert!(made.iter().all(|s| s.0 == made[0].0 && s.1 == made[0].1), "{what}: one commit, {made:?}");
    assert!(made[0].0.starts_with("strata-sql-"), "{what}: {made:?}");
}

fn latest(table: &strata_table::Table) -> i64 {
    table.snapshot_manager().latest_id().unwrap().unwrap_or(0)
}

#[test]
fn inserts_and_deletes_are_one_commit_each_and_match_the_model() {
    let rt = runtime();
    for dv in [true, false] {
        let wh = Warehouse::new();
        let t = wh.create("t", true, &[("bucket", "2"), ("deletion-vectors.enabled", &dv.to_string())]);
        let u = wh.create("u", false, &[("bucket", "1")]);
        let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let (mut model, mut model_u) = (Model::new(), Model::new());
        random_commit(&t, &mut model, &mut rng, 100, 50);
        random_commit(&u, &mut model_u, &mut rng, 100, 80);
        let what = format!("dv={dv}");

        let before = latest(&t);
        let sql =
            "INSERT INTO db.t VALUES (1000, 'a', 'x', 5, 0.5), (1001, 'b', NULL, NULL, NULL), (3, 'c', 'y', -1, 2.0)";
        let out = rt.block_on(session.query(sql)).unwrap();
        assert_eq!(column(&out, "count"), vec![Some("3".to_string())], "{what}: {sql}");
        assert_one_commit(&t, before, &format!("{what}: {sql}"));
        model.insert(("a".into(), 1000), Row { name: Some("x".into()), v: Some(5), d: Some(0.5) });
        model.insert(("b".into(), 1001), Row { name: None, v: None, d: None });
        model.insert(("c".into(), 3), Row { name: Some("y".into()), v: Some(-1), d: Some(2.0) });

        // Columns by name, the rest NULL; and rows from another Strata table.
        rt.block_on(session.query("INSERT INTO db.t (p, id, v) VALUES ('a', 1002, 9)")).unwrap();
        model.insert(("a".into(), 1002), Row { name: None, v: Some(9), d: None });
        let before = latest(&t);
        let sql = "INSERT INTO db.t SELECT id + 2000, p, name, v, d FROM db.u WHERE v > 0";
        let out = rt.block_on(session.query(sql)).unwrap();
        let moved: Vec<_> = model_u.iter().filter(|(_, r)| r.v.is_some_and(|v| v > 0)).collect();
        assert_eq!(column(&out, "count"), vec![Some(moved.len().to_string())], "{what}: {sql}");
        assert_one_commit(&t, before, &format!("{what}: {sql}"));
        for ((p, id), r) in moved {
            model.insert((p.clone(), id + 2000), r.clone());
        }

        let before = latest(&t);
        let sql = "DELETE FROM db.t WHERE v < 0 OR (p = 'b' AND id < 20)";
        let gone: Vec<_> = model
            .iter()
            .filter(|((p, id), r)| r.v.is_some_and(|v| v < 0) || (p == "b" && *id < 20))
            .map(|(k, _)| k.clone())
            .collect();
        let out = rt.block_on(session.query(sql)).unwrap();
        assert_eq!(column(&out, "count"), vec![Some(gone.len().to_string())], "{what}: {sql}");
        assert_one_commit(&t, before, &format!("{what}: {sql}"));
        for k in gone {
            model.remove(&k);
        }
        let all = rt.block_on(session.query("SELECT id, p, name, v, d FROM db.t")).unwrap();
        same(&format!("{what}: after the writes"), &keyed(&what, &all), &model);

        // Nothing matches: no commit at all.
        let before = latest(&t);
        let out = rt.block_on(session.query("DELETE FROM db.t WHERE id = -5")).unwrap();
        assert_eq!(column(&out, "count"), vec![Some("0".to_string())]);
        assert_eq!(latest(&t), before, "{what}: an empty DELETE commits nothing");

        // A refused row commits nothing and leaves no snapshot.
        let err = rt.block_on(session.query("INSERT INTO db.t VALUES (NULL, 'a', 'x', 1, 1.0)")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{what}: {err}");
        assert_eq!(latest(&t), before, "{what}: a refused INSERT commits nothing");

        // Time-travel reads are read-only; INSERT OVERWRITE is not offered.
        let err = rt.block_on(session.query("DELETE FROM db.\"t$snapshot=1\" WHERE id = 1")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{what}: {err}");
        let err = rt.block_on(session.query("INSERT OVERWRITE db.t VALUES (1, 'a', 'x', 1, 1.0)")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{what}: {err}");
    }
}

#[test]
fn deletes_are_refused_where_a_delete_row_would_not_remove_the_key() {
    let rt = runtime();
    let wh = Warehouse::new();
    wh.create("f", false, &[("merge-engine", "first-row")]);
    let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();
    let err = rt.block_on(session.query("DELETE FROM db.f WHERE id = 1")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
}

#[derive(Default)]
struct Scans(Vec<(usize, (usize, usize))>);

impl ExecutionPlanVisitor for Scans {
    type Error = std::convert::Infallible;
    fn pre_visit(&mut self, plan: &dyn ExecutionPlan) -> Result<bool, Self::Error> {
        if let Some(s) = plan.downcast_ref::<StrataScanExec>() {
            self.0.push((s.file_count(), s.split_counts()));
        }
        Ok(true)
    }
}

/// (files read, (splits, raw splits)) of the scans in the plan of `sql`.
fn scans(rt: &tokio::runtime::Runtime, session: &StrataSession, sql: &str) -> Vec<(usize, (usize, usize))> {
    rt.block_on(async {
        let plan: Arc<dyn ExecutionPlan> = session.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
        let mut v = Scans::default();
        let _ = visit_execution_plan(plan.as_ref(), &mut v);
        v.0
    })
}

#[test]
fn a_selective_key_filter_reads_only_the_files_whose_key_range_can_match() {
    let rt = runtime();
    let wh = Warehouse::new();
    // Small files: a compaction of many keys rolls into many level files, each a narrow key range. Three
    // buckets: an equality on the key also rules out the buckets its hash does not go to.
    let opts = [
        ("bucket", "3"),
        ("deletion-vectors.enabled", "true"),
        ("target-file-size", "1kb"),
        ("read.batch-size", "512"),
    ];
    let t = wh.create("t", false, &opts);
    let mut w = strata_table::TableWriter::new(&t, "test").unwrap();
    for id in 0..20_000i64 {
        let name = Some(Datum::String(format!("name-{id:08}-{}", id * 7919 % 10007)));
        w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String("a".into())), name, Some(Datum::BigInt(id)), None])
            .unwrap();
    }
    w.commit().unwrap();
    // Overwrite some keys, so deletion vectors mark their old rows.
    for id in (0..20_000i64).step_by(97) {
        w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String("a".into())), None, Some(Datum::BigInt(-id)), None])
            .unwrap();
    }
    w.commit().unwrap();
    drop(w);
    let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();

    // What can match, from the manifest's key ranges and buckets (levels >= 1: deletion-vector reads skip
    // level 0), with Paimon's bucket function (checked against pypaimon's in tests/it/bucket_compat.rs).
    let snapshot = t.snapshot(None).unwrap().unwrap();
    let files = t.live_files(&snapshot).unwrap();
    let key = |row: &BinaryRow| match row.get(0, &DataType::bigint()).unwrap() {
        Some(Datum::BigInt(v)) => v,
        other => panic!("key {other:?}"),
    };
    let upper: Vec<_> = files.iter().filter(|e| e.file.level > 0).collect();
    let in_range = |k: i64| upper.iter().filter(move |e| key(&e.file.min_key) <= k && k <= key(&e.file.max_key));
    // The bucket key is the primary key (id, p): a filter pinning both rules out the other buckets.
    let types = [DataType::bigint(), DataType::string()];
    let bucket = |k: i64, n: i32| {
        strata_spec::bucket_of(&[Some(Datum::BigInt(k)), Some(Datum::String("a".into()))], &types, n).unwrap()
    };
    let can_match = |k: i64| in_range(k).count();
    let in_bucket = |k: i64| in_range(k).filter(|e| e.bucket == bucket(k, e.total_buckets)).count();
    let keys = [0i64, 97, 12_345, 19_999];
    assert!(
        keys.iter().map(|&k| in_bucket(k)).sum::<usize>() < keys.iter().map(|&k| can_match(k)).sum::<usize>(),
        "some file in range is in another bucket"
    );
    assert!(upper.len() >= 10, "{} files above level 0", upper.len());

    let full = scans(&rt, &session, "SELECT id, v FROM db.t");
    assert_eq!(full, vec![(upper.len(), full[0].1)], "a full scan reads every file");
    for k in keys {
        let v = if k % 97 == 0 { -k } else { k };
        for (sql, files) in [
            (format!("SELECT id, v FROM db.t WHERE id = {k}"), can_match(k)),
            (format!("SELECT id, v FROM db.t WHERE id = {k} AND p = 'a'"), in_bucket(k)),
        ] {
            let got = scans(&rt, &session, &sql);
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].0, files, "{sql}: files read");
            assert_eq!(got[0].1 .0, got[0].1 .1, "{sql}: raw splits only");
            let rows = rt.block_on(session.query(&sql)).unwrap();
            assert_eq!(column(&rows, "v"), vec![Some(v.to_string())], "{sql}");
        }
        assert!(in_bucket(k) <= 2, "key {k}: {} files", in_bucket(k));
    }
    let sql = "SELECT id FROM db.t WHERE id BETWEEN 5000 AND 5999";
    let files_read = scans(&rt, &session, sql)[0].0;
    assert!(files_read < upper.len() / 3, "{sql}: {files_read} of {} files", upper.len());
    assert_eq!(column(&rt.block_on(session.query(sql)).unwrap(), "id").len(), 1000);

    // EXPLAIN shows the count too, EXPLAIN ANALYZE the files the scan read, and so does a statement run.
    let explain = rt.block_on(session.query("EXPLAIN SELECT id FROM db.t WHERE id = 12345")).unwrap();
    let text = column(&explain, "plan").into_iter().flatten().collect::<Vec<_>>().join("\n");
    assert!(text.contains(&format!("files={}", can_match(12_345))), "{text}");
    let analyze = rt.block_on(session.query("EXPLAIN ANALYZE SELECT id FROM db.t WHERE id = 12345")).unwrap();
    let text = column(&analyze, "plan").into_iter().flatten().collect::<Vec<_>>().join("\n");
    assert!(text.contains(&format!("files_read={}", can_match(12_345))), "{text}");
    for (sql, files) in [("SELECT v FROM db.t WHERE id = 97", can_match(97)), ("SELECT v FROM db.t", upper.len())] {
        let statement = session.parse(sql).unwrap().pop().unwrap();
        let out = rt.block_on(session.run(statement)).unwrap();
        assert_eq!((out.scans, out.files_read), (1, files), "{sql}");
    }
    // COUNT(*) on a deletion-vector table comes from metadata: no scan runs.
    let statement = session.parse("SELECT count(*) FROM db.t").unwrap().pop().unwrap();
    let out = rt.block_on(session.run(statement)).unwrap();
    assert_eq!((out.scans, out.files_read), (0, 0));
    assert_eq!(column(&out.batches, "count(*)"), vec![Some("20000".to_string())]);
}

#[test]
fn system_tables_list_snapshots_schemas_options_and_files() {
    let rt = runtime();
    let wh = Warehouse::new();
    let t = wh.create("t", true, &[("bucket", "2"), ("deletion-vectors.enabled", "true")]);
    let (mut model, mut rng) = (Model::new(), StdRng::seed_from_u64(3));
    let first = random_commit(&t, &mut model, &mut rng, 50, 40);
    random_commit(&t, &mut model, &mut rng, 50, 40);
    let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();

    let sm = t.snapshot_manager();
    let ids: Vec<String> = sm.list_ids().unwrap().iter().map(|i| i.to_string()).collect();
    let got =
        rt.block_on(session.query("SELECT snapshot_id, commit_kind FROM db.t$snapshots ORDER BY snapshot_id")).unwrap();
    assert_eq!(column(&got, "snapshot_id").into_iter().flatten().collect::<Vec<_>>(), ids);
    let kinds: Vec<String> = sm
        .list_ids()
        .unwrap()
        .iter()
        .map(|i| format!("{:?}", sm.snapshot(*i).unwrap().commit_kind).to_uppercase())
        .collect();
    assert_eq!(column(&got, "commit_kind").into_iter().flatten().collect::<Vec<_>>(), kinds);

    let got = rt.block_on(session.query("SELECT key, value FROM db.t$options WHERE key = 'bucket'")).unwrap();
    assert_eq!(column(&got, "value"), vec![Some("2".to_string())]);
    let got = rt.block_on(session.query("SELECT schema_id, primary_keys FROM db.t$schemas")).unwrap();
    assert_eq!(column(&got, "primary_keys"), vec![Some(r#"["id","p"]"#.to_string())]);

    for (name, snapshot) in [
        ("t$files", t.snapshot(None).unwrap().unwrap()),
        (&*format!("t$files$snapshot={first}"), sm.snapshot(first).unwrap()),
    ] {
        let sql = format!("SELECT file_path, record_count, level FROM db.\"{name}\"");
        let got = rt.block_on(session.query(&sql)).unwrap();
        let live = t.live_files(&snapshot).unwrap();
        let mut want: Vec<String> = live.iter().map(|e| t.data_file_path(e).unwrap()).collect();
        let mut paths: Vec<String> = column(&got, "file_path").into_iter().flatten().collect();
        want.sort();
        paths.sort();
        assert_eq!(paths, want, "{sql}");
        let rows: i64 = column(&got, "record_count").iter().flatten().map(|n| n.parse::<i64>().unwrap()).sum();
        assert_eq!(rows, live.iter().map(|e| e.file.row_count).sum::<i64>(), "{sql}");
    }
    let got = rt
        .block_on(session.query("SELECT partition, min_key FROM db.t$files WHERE partition = '[a]' LIMIT 1"))
        .unwrap();
    assert_eq!(column(&got, "partition"), vec![Some("[a]".to_string())]);
    // Keys of a partitioned table's files are trimmed of the partition columns, as Paimon stores them.
    let min_key = column(&got, "min_key")[0].clone().unwrap();
    assert!(min_key.starts_with('[') && min_key.ends_with(']') && !min_key.contains(','), "{min_key}");
}

#[test]
fn errors_keep_their_kinds() {
    let rt = runtime();
    let wh = Warehouse::new();
    wh.create("t", false, &[]);
    let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();
    for (sql, kind) in [
        ("SELECT * FROM db.nope", ErrorKind::NotFound),
        ("SELECT * FROM nodb.t", ErrorKind::NotFound),
        ("SELECT nope FROM db.t", ErrorKind::Invalid),
        ("SELEC 1", ErrorKind::Invalid),
        ("SELECT * FROM db.t VERSION AS OF 99", ErrorKind::NotFound),
        ("SELECT * FROM db.\"t$tag=none\"", ErrorKind::NotFound),
        ("SELECT * FROM db.t$nope", ErrorKind::Invalid),
        ("CREATE TABLE db.x (a INT)", ErrorKind::Unsupported),
        // Names that are not one path segment would reach tables outside the warehouse.
        ("SELECT * FROM \"../db\".t", ErrorKind::Invalid),
        ("SELECT * FROM db.\"../db.db/t\"", ErrorKind::Invalid),
        ("SELECT * FROM \"a/b\".t", ErrorKind::Invalid),
    ] {
        let err = rt.block_on(session.query(sql)).unwrap_err();
        assert_eq!(err.kind(), kind, "{sql}: {err}");
    }
    // A database made through SQL is a Strata database.
    rt.block_on(session.query("CREATE SCHEMA other")).unwrap();
    assert!(wh.catalog.list_databases().unwrap().contains(&"other".to_string()));
}
