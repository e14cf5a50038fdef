//! SQL over random Strata tables, deletion-vector and merge-on-read, checked against a `BTreeMap` model of
//! the rows written: filters on keys, partitions and values (pushed to Strata or not), aggregates, a join of
//! two Strata tables, limits and time travel (by snapshot id, tag and time). Expected results come from the
//! model only, never from another read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;

use common::{column, keyed, random_commit, runtime, same, Key, Model, Row, Warehouse};
use datafusion::physical_plan::displayable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata_datafusion::StrataSession;

const KEYS: i64 = 120;

/// A filter as SQL and as a predicate on model rows.
type Case = (String, Box<dyn Fn(&Key, &Row) -> bool>);

fn filters(rng: &mut StdRng) -> Vec<Case> {
    let k = rng.random_range(0..KEYS);
    let (lo, hi) = (rng.random_range(0..KEYS / 2), rng.random_range(KEYS / 2..KEYS));
    let x = rng.random_range(-500..500);
    let keys: Vec<i64> = (0..4).map(|_| rng.random_range(0..KEYS)).collect();
    let in_list = keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    let keys2 = keys.clone();
    vec![
        (format!("id = {k}"), Box::new(move |key: &Key, _: &Row| key.1 == k)),
        (format!("id BETWEEN {lo} AND {hi}"), Box::new(move |key: &Key, _: &Row| (lo..=hi).contains(&key.1))),
        (format!("id IN ({in_list})"), Box::new(move |key: &Key, _: &Row| keys.contains(&key.1))),
        (
            format!("id NOT IN ({in_list}) AND p <> 'b'"),
            Box::new(move |key: &Key, _: &Row| !keys2.contains(&key.1) && key.0 != "b"),
        ),
        ("p = 'a'".to_string(), Box::new(|key: &Key, _: &Row| key.0 == "a")),
        (format!("p = 'c' AND id < {hi}"), Box::new(move |key: &Key, _: &Row| key.0 == "c" && key.1 < hi)),
        (format!("v > {x}"), Box::new(move |_: &Key, r: &Row| r.v.is_some_and(|v| v > x))),
        (
            format!("NOT (v <= {x}) OR name IS NULL"),
            Box::new(move |_: &Key, r: &Row| r.v.is_some_and(|v| v > x) || r.name.is_none()),
        ),
        ("name IS NOT NULL AND v IS NULL".to_string(), Box::new(|_: &Key, r: &Row| r.name.is_some() && r.v.is_none())),
        // Not pushed (floating point, computed): DataFusion filters these.
        ("d < 0".to_string(), Box::new(|_: &Key, r: &Row| r.d.is_some_and(|d| d < 0.0))),
        (format!("v + id > {x}"), Box::new(move |key: &Key, r: &Row| r.v.is_some_and(|v| v + key.1 > x))),
        (
            format!("(id < {lo} OR v > {x}) AND p IN ('a', 'b')"),
            Box::new(move |key: &Key, r: &Row| {
                (key.1 < lo || r.v.is_some_and(|v| v > x)) && (key.0 == "a" || key.0 == "b")
            }),
        ),
    ]
}

fn filtered(model: &Model, keep: &dyn Fn(&Key, &Row) -> bool) -> Model {
    model.iter().filter(|(k, r)| keep(k, r)).map(|(k, r)| (k.clone(), r.clone())).collect()
}

fn physical_plan(rt: &tokio::runtime::Runtime, session: &StrataSession, sql: &str) -> String {
    rt.block_on(async {
        let df = session.sql(sql).await.unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let text = displayable(plan.as_ref()).indent(true).to_string();
        text
    })
}

/// The aggregates over `model` that the query in `check_aggregates` asks for, per partition.
fn aggregates(model: &Model) -> BTreeMap<String, (usize, usize, i64, i64, Option<i64>)> {
    let mut out: BTreeMap<String, (usize, usize, i64, i64, Option<i64>)> = BTreeMap::new();
    for ((p, id), r) in model {
        let e = out.entry(p.clone()).or_insert((0, 0, 0, i64::MAX, None));
        e.0 += 1;
        e.1 += usize::from(r.name.is_some());
        e.2 += r.v.unwrap_or(0);
        e.3 = e.3.min(*id);
        e.4 = match (e.4, r.v) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    out
}

fn check_aggregates(rt: &tokio::runtime::Runtime, session: &StrataSession, model: &Model, what: &str) {
    let sql = "SELECT p, COUNT(*) AS n, COUNT(name) AS names, SUM(v) AS total, MIN(id) AS lo, MAX(v) AS hi \
               FROM db.t GROUP BY p ORDER BY p";
    let got = rt.block_on(session.query(sql)).unwrap();
    let want = aggregates(model);
    let cols: Vec<Vec<Option<String>>> =
        ["p", "n", "names", "total", "lo", "hi"].iter().map(|c| column(&got, c)).collect();
    assert_eq!(cols[0].len(), want.len(), "{what}: groups");
    for (i, (p, (n, names, total, lo, hi))) in want.iter().enumerate() {
        let row: Vec<Option<String>> = cols.iter().map(|c| c[i].clone()).collect();
        let expect = vec![
            Some(p.clone()),
            Some(n.to_string()),
            Some(names.to_string()),
            Some(total.to_string()),
            Some(lo.to_string()),
            hi.map(|h| h.to_string()),
        ];
        assert_eq!(row, expect, "{what}: {sql}, group {p}");
    }
    let got = rt.block_on(session.query("SELECT COUNT(*) AS n FROM db.t")).unwrap();
    assert_eq!(column(&got, "n"), vec![Some(model.len().to_string())], "{what}: COUNT(*)");
}

/// One random table of each layout, written in several commits; every query kind after each commit.
fn run(dv: bool, seed: u64) {
    let rt = runtime();
    let mut rng = StdRng::seed_from_u64(seed);
    let wh = Warehouse::new();
    let partitioned = rng.random_bool(0.5);
    let buckets = rng.random_range(1..=3).to_string();
    let dv_opt = dv.to_string();
    let opts =
        [("bucket", buckets.as_str()), ("deletion-vectors.enabled", dv_opt.as_str()), ("target-file-size", "16kb")];
    let t = wh.create("t", partitioned, &opts);
    let u = wh.create("u", false, &[("bucket", "1"), ("deletion-vectors.enabled", dv_opt.as_str())]);
    let session = StrataSession::open(&wh.path(), &Default::default()).unwrap();
    let what = format!("dv={dv} seed={seed} partitioned={partitioned} buckets={buckets}");
    let (mut model, mut model_u) = (Model::new(), Model::new());
    let mut history: Vec<(i64, i64, Model)> = Vec::new();
    for commit in 0..5 {
        let id = random_commit(&t, &mut model, &mut rng, 150, KEYS);
        random_commit(&u, &mut model_u, &mut rng, 40, KEYS);
        let millis = t.snapshot_manager().snapshot(id).unwrap().time_millis;
        history.push((id, millis, model.clone()));
        if commit == 1 {
            strata_table::create_tag(&t, "second", Some(id), None).unwrap();
        }
        // Snapshot times must tell commits apart for travel by time.
        std::thread::sleep(std::time::Duration::from_millis(3));
        let what = format!("{what} commit {commit}");

        let all = rt.block_on(session.query("SELECT id, p, name, v, d FROM db.t")).unwrap();
        same(&format!("{what}: full scan"), &keyed(&what, &all), &model);
        for (filter, keep) in filters(&mut rng) {
            let sql = format!("SELECT id, p, name, v, d FROM db.t WHERE {filter}");
            let got = rt.block_on(session.query(&sql)).unwrap();
            same(&format!("{what}: {sql}"), &keyed(&what, &got), &filtered(&model, &keep));
        }
        check_aggregates(&rt, &session, &model, &what);

        let sql = "SELECT t.id, t.p, t.name, t.v, CAST(u.v AS DOUBLE) AS d FROM db.t JOIN db.u \
                   ON t.id = u.id AND t.p = u.p WHERE u.v > 0";
        let got = rt.block_on(session.query(sql)).unwrap();
        let want: Model = model
            .iter()
            .filter_map(|(k, r)| {
                let ur = model_u.get(k).filter(|ur| ur.v.is_some_and(|v| v > 0))?;
                Some((k.clone(), Row { name: r.name.clone(), v: r.v, d: ur.v.map(|v| v as f64) }))
            })
            .collect();
        assert!(!want.is_empty(), "{what}: the join matches nothing");
        same(&format!("{what}: {sql}"), &keyed(&what, &got), &want);

        let got = rt.block_on(session.query("SELECT id, p, name, v, d FROM db.t WHERE id < 100 LIMIT 7")).unwrap();
        let got = keyed(&what, &got);
        assert_eq!(got.len(), filtered(&model, &|k, _| k.1 < 100).len().min(7), "{what}: LIMIT 7");
        for (k, r) in &got {
            assert_eq!(model.get(k), Some(r), "{what}: LIMIT row {k:?}");
        }
    }
    check_time_travel(&rt, &session, &history, &what);
    check_count_plan(&rt, &session, dv, &what);
}

fn check_time_travel(rt: &tokio::runtime::Runtime, session: &StrataSession, history: &[(i64, i64, Model)], what: &str) {
    for (id, millis, model) in history {
        for sql in [
            format!("SELECT id, p, name, v, d FROM db.t VERSION AS OF {id}"),
            format!("SELECT id, p, name, v, d FROM db.\"t$snapshot={id}\""),
            format!("SELECT id, p, name, v, d FROM db.t FOR SYSTEM_TIME AS OF '{millis}'"),
            format!("SELECT id, p, name, v, d FROM db.t TIMESTAMP AS OF '{millis}' WHERE id >= 10"),
        ] {
            let got = rt.block_on(session.query(&sql)).unwrap();
            let want = if sql.contains("id >= 10") { filtered(model, &|k, _| k.1 >= 10) } else { model.clone() };
            same(&format!("{what}: {sql}"), &keyed(what, &got), &want);
        }
    }
    let got = rt.block_on(session.query("SELECT id, p, name, v, d FROM db.\"t$tag=second\"")).unwrap();
    same(&format!("{what}: tag"), &keyed(what, &got), &history[1].2);
    let got = rt.block_on(session.query("SELECT COUNT(*) AS n FROM db.t VERSION AS OF 1")).unwrap();
    let first = history.iter().find(|(id, _, _)| *id == 1).map(|(_, _, m)| m.len());
    if let Some(n) = first {
        assert_eq!(column(&got, "n"), vec![Some(n.to_string())], "{what}: COUNT(*) of snapshot 1");
    }
}

/// Deletion-vector tables answer `COUNT(*)` from metadata (no scan left in the plan); merge-on-read tables
/// must read. Pushed filters leave no filter operator.
fn check_count_plan(rt: &tokio::runtime::Runtime, session: &StrataSession, dv: bool, what: &str) {
    let plan = physical_plan(rt, session, "SELECT COUNT(*) FROM db.t");
    assert_eq!(plan.contains("StrataScanExec"), !dv, "{what}: COUNT(*) plan\n{plan}");
    let plan = physical_plan(rt, session, "SELECT id, v FROM db.t WHERE id = 3 AND p = 'a' AND v > 0");
    assert!(plan.contains("StrataScanExec") && !plan.contains("FilterExec"), "{what}: pushed filters\n{plan}");
    let plan = physical_plan(rt, session, "SELECT id FROM db.t WHERE d > 0");
    assert!(plan.contains("FilterExec"), "{what}: a filter Strata does not take stays\n{plan}");
}

#[test]
fn deletion_vector_tables_match_the_model() {
    for seed in [1, 2, 3] {
        run(true, seed);
    }
}

#[test]
fn merge_on_read_tables_match_the_model() {
    for seed in [11, 12, 13] {
        run(false, seed);
    }
}
