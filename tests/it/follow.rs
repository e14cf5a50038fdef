//! Following a table while it is written, and consumers: everything written reaches the follower exactly once
//! and in order; a follower restarted under its consumer id resumes where it stopped; expiration keeps what a
//! consumer still needs, and ignores (deletes) consumers past `consumer.expiration-time`; crafted consumer
//! files and ids are typed errors. Expected rows come from the model of the writes (tests/common/change_model.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, SystemTime};

use common::change_model::{by_key, create, expected, inserts_of, Change, Commit, ModelWriter, State};
use common::strata;
use strata::spec::{CommitKind, Error, ErrorKind};
use strata::table::{expire_snapshots, ExpireOptions, FollowOptions, FollowedSnapshot, StartFrom, StreamScan};
use strata::{ConsumerManager, ReadBuilder, Table};

/// The table state after the commits whose APPEND snapshot is at most `snapshot`.
fn state_at(commits: &[Commit], snapshot: i64) -> State {
    let mut state = State::new();
    for c in commits.iter().filter(|c| c.snapshot_of(CommitKind::Append).is_some_and(|id| id <= snapshot)) {
        for r in &c.written {
            if r.kind == "+I" || r.kind == "+U" {
                state.insert((r.id, r.p.clone()), (r.v, r.s.clone(), r.extra));
            } else {
                state.remove(&(r.id, r.p.clone()));
            }
        }
    }
    state
}

fn rows(s: &[FollowedSnapshot]) -> Vec<Change> {
    s.iter().flat_map(|s| common::change_model::changes_of(&s.batches)).collect()
}

/// Reads until caught up.
fn drain(scan: &mut StreamScan, into: &mut Vec<FollowedSnapshot>) {
    while let Some(s) = scan.read_next().unwrap() {
        into.push(s);
    }
}

/// A follow from `latest-full` returned `got`: its first step is a full read of some snapshot L equal to the
/// model's state at L, and the rest are exactly the APPEND snapshots after L up to `latest`, in order, with
/// exactly the rows each wrote.
fn check_follow(got: &[FollowedSnapshot], commits: &[Commit], latest: i64, what: &str) {
    let full = &got[0];
    assert!(full.full, "{what}: the follow starts with a full read");
    let l = full.snapshot;
    let full_rows = common::change_model::changes_of(&full.batches);
    assert_eq!(by_key(&full_rows), by_key(&inserts_of(&state_at(commits, l))), "{what}: full read of {l}");
    let appends: Vec<i64> =
        commits.iter().filter_map(|c| c.snapshot_of(CommitKind::Append)).filter(|id| *id > l).collect();
    let read: Vec<i64> = got[1..].iter().map(|s| s.snapshot).collect();
    assert_eq!(read, appends, "{what}: the snapshots read after the full read of {l}");
    assert!(got[1..].iter().all(|s| !s.full && s.commit_kind == CommitKind::Append));
    assert_eq!(by_key(&rows(&got[1..])), by_key(&expected(commits, l, latest, false)), "{what}: rows after {l}");
}

#[test]
fn a_follower_reads_every_write_once_and_in_order_while_a_writer_commits() {
    for dv in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let table = create(dir.path(), dv, &[]);
        let mut w = ModelWriter::new(table.clone(), 11 + u64::from(dv), Some(4));
        w.commit_random();
        w.commit_random();
        let writer = std::thread::spawn(move || {
            for _ in 0..8 {
                w.commit_random();
                std::thread::sleep(Duration::from_millis(3));
            }
            w
        });
        let mut scan = StreamScan::new(&ReadBuilder::new(&table), &FollowOptions::default()).unwrap();
        let mut got = Vec::new();
        loop {
            let finished = writer.is_finished();
            drain(&mut scan, &mut got);
            if finished {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let w = writer.join().unwrap();
        let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
        assert_eq!(scan.next_snapshot(), Some(latest + 1));
        // The rename and the new column half-way: the follower, opened before them, reads every file by field
        // id under the schema it was opened with (the renamed column under its old name, no new column).
        let commits: Vec<Commit> = w
            .commits
            .into_iter()
            .map(|c| Commit { written: c.written.into_iter().map(|r| Change { extra: None, ..r }).collect(), ..c })
            .collect();
        check_follow(&got, &commits, latest, &format!("dv {dv}"));
    }
}

fn with_consumer(id: &str, start: StartFrom) -> FollowOptions {
    FollowOptions { start, consumer_id: Some(id.to_string()), ..Default::default() }
}

fn expire_to(table: &Table, retain_max: u32) -> Vec<i64> {
    let opts = ExpireOptions { retain_min: 1, retain_max, time_retained: Duration::from_secs(3600), dry_run: false };
    expire_snapshots(table, &opts).unwrap().snapshots
}

/// A consumer's follower stopped and restarted twice, with an expiration in between that would otherwise
/// have removed what it had not read: the three runs together read every write exactly once.
#[test]
fn a_restarted_consumer_resumes_without_loss_or_duplication_and_keeps_its_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), true, &[]);
    let mut w = ModelWriter::new(table.clone(), 21, None);
    for _ in 0..3 {
        w.commit_random();
    }
    let rb = ReadBuilder::new(&table);
    let opts = with_consumer("c1", StartFrom::LatestFull);
    let mut got = Vec::new();
    let mut first = StreamScan::new(&rb, &opts).unwrap();
    got.push(first.read_next().unwrap().unwrap());
    first.record_progress().unwrap();
    drop(first);
    let recorded = ConsumerManager::of(&table).consumer("c1").unwrap().unwrap().next_snapshot;
    assert_eq!(recorded, got[0].snapshot + 1);

    for _ in 0..3 {
        w.commit_random();
    }
    let mut second = StreamScan::new(&rb, &opts).unwrap();
    assert_eq!(second.next_snapshot(), Some(recorded), "resumes from the consumer");
    got.push(second.read_next().unwrap().unwrap());
    second.record_progress().unwrap();
    drop(second);
    let needed = ConsumerManager::of(&table).consumer("c1").unwrap().unwrap().next_snapshot;

    for _ in 0..3 {
        w.commit_random();
    }
    // Without the consumer this would keep only the latest snapshot.
    let expired = expire_to(&table, 1);
    assert!(!expired.is_empty() && expired.iter().all(|id| *id < needed), "{expired:?} (consumer needs {needed})");
    assert_eq!(table.snapshot_manager().earliest_id().unwrap(), Some(needed));
    // A follower without a consumer, positioned before what was kept, is told so.
    let e = StreamScan::new(&rb, &FollowOptions { start: StartFrom::After(1), ..Default::default() }).unwrap_err();
    assert!(matches!(e, Error::SnapshotExpired { snapshot: 2, .. }), "{e:?}");

    let mut third = StreamScan::new(&rb, &opts).unwrap();
    drain(&mut third, &mut got);
    third.record_progress().unwrap();
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    check_follow(&got, &w.commits, latest, "three runs of consumer c1");
    let file = std::fs::read_to_string(format!("{}/consumer/consumer-c1", table.path())).unwrap();
    assert_eq!(file, format!("{{\n  \"nextSnapshot\" : {}\n}}", latest + 1), "Paimon's JSON");
}

/// `consumer.expiration-time`: a consumer not written for longer is deleted by expiration and holds nothing
/// back (a dry run ignores it without deleting it); a live one still does. `consumer.ignore-progress` makes a
/// restarted follower start afresh.
#[test]
fn consumers_past_their_expiration_time_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), false, &[("consumer.expiration-time", "1 h")]);
    let mut w = ModelWriter::new(table.clone(), 31, None);
    for _ in 0..5 {
        w.commit_random();
    }
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    let consumers = ConsumerManager::of(&table);
    consumers.reset_consumer("old", strata::Consumer { next_snapshot: 1 }).unwrap();
    consumers.reset_consumer("live", strata::Consumer { next_snapshot: latest - 2 }).unwrap();
    let old_file = format!("{}/consumer/consumer-old", table.path());
    let age = |path: &str| {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(2 * 3600)).unwrap();
    };
    age(&old_file);
    let dry = ExpireOptions { retain_min: 1, retain_max: 1, time_retained: Duration::from_secs(3600), dry_run: true };
    let report = expire_snapshots(&table, &dry).unwrap();
    assert_eq!(report.snapshots, (1..latest - 2).collect::<Vec<_>>(), "the old consumer holds nothing back");
    assert!(std::path::Path::new(&old_file).exists(), "a dry run deletes no consumer");

    let expired = expire_to(&table, 1);
    assert_eq!(expired, (1..latest - 2).collect::<Vec<_>>(), "the live consumer keeps what it needs");
    assert!(!std::path::Path::new(&old_file).exists(), "the old consumer is expired");
    assert_eq!(consumers.consumers().unwrap().keys().cloned().collect::<Vec<_>>(), ["live"]);

    // The expired consumer's follower starts afresh (a full read of the latest snapshot).
    let rb = ReadBuilder::new(&table);
    let mut scan = StreamScan::new(&rb, &with_consumer("old", StartFrom::LatestFull)).unwrap();
    let full = scan.read_next().unwrap().unwrap();
    assert!(full.full && full.snapshot == latest);
    assert_eq!(by_key(&common::change_model::changes_of(&full.batches)), by_key(&inserts_of(w.state())));

    // consumer.ignore-progress: the live consumer's recorded position is not used.
    let table = table
        .alter_options(&[("consumer.ignore-progress".to_string(), "true".to_string())].into(), &[], false)
        .unwrap();
    let mut scan = StreamScan::new(&ReadBuilder::new(&table), &with_consumer("live", StartFrom::LatestFull)).unwrap();
    assert_eq!(scan.next_snapshot(), None);
    assert!(scan.read_next().unwrap().unwrap().full);
}

/// Consumer files are table metadata another process may have damaged, and ids are user input that becomes a
/// file name: neither may panic, escape the table directory, or let expiration guess.
#[test]
fn crafted_consumer_files_and_ids_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), true, &[]);
    let mut w = ModelWriter::new(table.clone(), 41, None);
    w.commit_random();
    let rb = ReadBuilder::new(&table);
    let consumer_dir = format!("{}/consumer", table.path());
    std::fs::create_dir_all(&consumer_dir).unwrap();
    let expire = || expire_snapshots(&table, &ExpireOptions::from_table(&table).unwrap());
    for (id, text) in [("bad", "{\"nextSnapshot\": "), ("neg", "{\"nextSnapshot\": -4}"), ("str", "[1]")] {
        let path = format!("{consumer_dir}/consumer-{id}");
        std::fs::write(&path, text).unwrap();
        let e = StreamScan::new(&rb, &with_consumer(id, StartFrom::LatestFull)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{id}: {e}");
        assert!(e.to_string().contains(&path), "{e}");
        let e = expire().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt, "expiration with consumer {id}: {e}");
        std::fs::remove_file(&path).unwrap();
    }
    for id in ["..", "../x", "a/b", "../../escape", "", ".hidden", "x\n"] {
        let e = StreamScan::new(&rb, &with_consumer(id, StartFrom::LatestFull)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{id:?}: {e}");
        let e = ConsumerManager::of(&table).reset_consumer(id, strata::Consumer { next_snapshot: 1 }).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{id:?}: {e}");
    }
    assert!(!dir.path().join("escape").exists() && !dir.path().join("consumer-..").exists());
    // The largest id a file can hold: nothing to read yet, nothing overflows.
    std::fs::write(format!("{consumer_dir}/consumer-far"), format!("{{\"nextSnapshot\": {}}}", i64::MAX)).unwrap();
    let mut far = StreamScan::new(&rb, &with_consumer("far", StartFrom::LatestFull)).unwrap();
    assert!(far.read_next().unwrap().is_none());
    expire().unwrap();
    std::fs::remove_file(format!("{consumer_dir}/consumer-far")).unwrap();
    let e = StreamScan::new(&rb, &FollowOptions { start: StartFrom::After(i64::MAX), ..Default::default() });
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Invalid);
    assert!(ConsumerManager::of(&table).consumers().unwrap().is_empty());
    let e = ConsumerManager::of(&table).reset_consumer("ok", strata::Consumer { next_snapshot: 0 }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    expire().unwrap();
}

/// `strata scan --follow` as a process while the test commits: it prints every written row once (JSON lines
/// with `rowkind`), stops after --max-snapshots, and, restarted under its consumer id, prints only what landed
/// since. `--from/--to` prints a range once (a CSV header once), `--changelog` of a table without changelog is
/// refused.
#[test]
fn strata_scan_follow_with_a_consumer_id_resumes_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), true, &[]);
    let mut w = ModelWriter::new(table.clone(), 51, None);
    let path = table.path().to_string();
    let follow = |extra: &[&str]| {
        let mut args = vec!["scan", &path, "--follow", "--consumer-id", "cli", "--poll-interval", "20ms", "--json"];
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let parse = |out: &[u8]| -> Vec<Change> {
        let text = String::from_utf8_lossy(out);
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines
            .iter()
            .map(|r| Change {
                kind: r["rowkind"].as_str().unwrap().to_string(),
                id: r["id"].as_i64().unwrap(),
                p: r["p"].as_str().unwrap().to_string(),
                v: r["v"].as_i64(),
                s: r["s"].as_str().map(str::to_string),
                extra: None,
            })
            .collect()
    };
    let child = follow(&["--from", "0", "--max-snapshots", "4"]);
    for _ in 0..4 {
        w.commit_random();
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = wait_for(child);
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    assert_eq!(by_key(&parse(&out)), by_key(&expected(&w.commits, 0, latest, false)), "the first run");
    let next = ConsumerManager::of(&table).consumer("cli").unwrap().unwrap().next_snapshot;

    for _ in 0..2 {
        w.commit_random();
    }
    let out = wait_for(follow(&["--idle-timeout", "300ms"]));
    let latest = table.snapshot_manager().latest_id().unwrap().unwrap();
    assert_eq!(by_key(&parse(&out)), by_key(&expected(&w.commits, next - 1, latest, false)), "after the restart");

    let (code, out, err) = strata(&["scan", &path, "--from", "1", "--to", &latest.to_string(), "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("rowkind,")).count(), 1, "{out}");
    assert_eq!(out.lines().count() - 1, expected(&w.commits, 1, latest, false).len());
    let (code, _, err) = strata(&["scan", &path, "--from", "0", "--changelog"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("changelog-producer none"), "{err}");
    let (code, _, err) = strata(&["scan", &path, "--from", "5", "--to", "2"]);
    assert_eq!(code, 2, "{err}");
}

/// Waits for a child process (at most a minute), returning its stdout; fails on a non-zero exit.
fn wait_for(mut child: std::process::Child) -> Vec<u8> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("strata scan --follow did not stop");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "strata scan --follow: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Applies changes to a state: +I/+U set the row, -U/-D remove it. A `changelog` must also be consistent
/// with the state: +I/+U only for an absent key, -U/-D retracting exactly the row there.
fn fold(state: &mut State, changes: &[Change], changelog: bool) {
    for c in changes {
        let k = (c.id, c.p.clone());
        let row = (c.v, c.s.clone(), c.extra);
        if c.kind == "+I" || c.kind == "+U" {
            let before = state.insert(k, row);
            // (+U follows the -U that removed the row it replaces.)
            assert!(!changelog || before.is_none(), "{c:?} on {before:?}");
        } else {
            let before = state.remove(&k);
            assert!(!changelog || before == Some(row), "{c:?} retracts {before:?}");
        }
    }
}

/// The starting full read at an APPEND snapshot whose COMPACT half has not landed yet (a crash between the
/// two, or a reader between them): the write's rows are in level 0 only. A delta follower's full read must
/// merge level 0 in (its follow-up starts after that snapshot, and the COMPACT one brings no delta); a
/// `lookup` changelog follower's must leave it out (the COMPACT snapshot's changelog brings those rows).
/// Either way, the full read folded with what follows is the table.
#[test]
fn a_full_read_at_an_append_snapshot_before_its_compaction_misses_nothing() {
    use strata::table::{Committable, TableWrite};
    for (dv, lookup) in [(true, false), (false, false), (true, true), (false, true)] {
        let what = format!("dv {dv} lookup {lookup}");
        let dir = tempfile::tempdir().unwrap();
        let extra: &[(&str, &str)] = if lookup { &[("changelog-producer", "lookup")] } else { &[] };
        let table = create(dir.path(), dv, extra);
        let mut w = ModelWriter::new(table.clone(), 61, None);
        w.commit_random();
        // The second write, committed by halves.
        let written: Vec<Change> = (0..30)
            .map(|i| Change {
                kind: if i % 4 == 3 { "-D" } else { "+I" }.into(),
                id: i % 20,
                p: "a".into(),
                v: Some(i),
                s: None,
                extra: None,
            })
            .collect();
        let mut write = TableWrite::new(&table).unwrap();
        let kinds: Vec<i8> = written.iter().map(|r| if r.kind == "-D" { 3 } else { 0 }).collect();
        write.write_with_kinds(&common::change_model::batch_of(&written, false), &kinds).unwrap();
        let messages = write.prepare_commit_waiting().unwrap();
        assert!(messages.iter().any(|m| !m.increment.compact.compact_after.is_empty()), "{what}: the write compacts");
        let commit = table.new_commit("halves").unwrap();
        let half = |identifier, messages| Committable { identifier, messages, ..Default::default() };
        commit.commit(&half(1, messages.iter().map(|m| m.data_increment()).collect())).unwrap();

        let mut scan = StreamScan::new(&ReadBuilder::new(&table), &FollowOptions::default()).unwrap();
        let full = scan.read_next().unwrap().unwrap();
        assert!(full.full, "{what}");
        let mut seen = State::new();
        fold(&mut seen, &common::change_model::changes_of(&full.batches), lookup);
        commit.commit(&half(2, messages.iter().map(|m| m.compact_increment()).collect())).unwrap();
        let mut rest = Vec::new();
        drain(&mut scan, &mut rest);
        assert_eq!(rest.len(), usize::from(lookup), "{what}: the COMPACT half has changes only as changelog");
        fold(&mut seen, &rows(&rest), lookup);
        let mut want = w.state().clone();
        let last = written.iter().rev().fold(Vec::<Change>::new(), |mut last, r| {
            if !last.iter().any(|l| l.id == r.id) {
                last.push(r.clone());
            }
            last
        });
        fold(&mut want, &last, false);
        assert_eq!(seen, want, "{what}: the full read and what followed");
    }
}
