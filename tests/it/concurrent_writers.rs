//! Two writers on one deletion-vector table: a delete by one must not come back when the other, long-lived
//! writer commits next (Paimon issue 4588), and two committers racing on one bucket never both "succeed"
//! with one's data lost (Paimon issues 5762 and 8226).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::fixtures::{create_table, kv_rows};
use strata::spec::Datum;
use strata::{ErrorKind, FileIO, LocalFileIO, Table, TableWriter};

fn table(dir: &std::path::Path) -> Table {
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    create_table(io, dir.join("t").to_str().unwrap(), 1, &[("deletion-vectors.enabled", "true")])
}

fn put(w: &mut TableWriter, k: i64, v: i64) {
    w.put(vec![Some(Datum::BigInt(k)), Some(Datum::BigInt(v))]).unwrap();
}

#[test]
fn a_delete_by_another_writer_does_not_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    // One large max-level file, so small later writes compact into a level above it and only add vectors.
    let mut streaming = TableWriter::new(&t, "streaming").unwrap();
    for k in 0..5000 {
        put(&mut streaming, k, k);
    }
    streaming.commit().unwrap();

    // A separate job deletes keys 3 and 5 while the streaming writer keeps its state: only vector bits
    // change (the deletes produce no rows at levels >= 1).
    let mut job = TableWriter::new(&t, "delete-job").unwrap();
    job.delete(vec![Some(Datum::BigInt(3))]).unwrap();
    job.delete(vec![Some(Datum::BigInt(5))]).unwrap();
    job.commit().unwrap();
    let after_delete = kv_rows(&t);
    assert!(!after_delete.contains_key(&3) && !after_delete.contains_key(&5));

    // The streaming writer's next commit was computed against deletion vectors that changed meanwhile: it
    // must either not touch them or be refused, never silently replace them.
    put(&mut streaming, 7, 77);
    match streaming.commit() {
        Ok(_) => {}
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
            // The application reopens the writer and writes again.
            let mut streaming = TableWriter::new(&t, "streaming").unwrap();
            put(&mut streaming, 7, 77);
            streaming.commit().unwrap();
        }
    }
    let now = kv_rows(&t);
    assert!(!now.contains_key(&3), "key 3 came back");
    assert!(!now.contains_key(&5), "key 5 came back");
    assert_eq!(now.get(&7), Some(&77));
    assert_eq!(now.len(), 4998);
}

#[test]
fn racing_committers_on_one_bucket_never_lose_an_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let mut seed = TableWriter::new(&t, "seed").unwrap();
    for k in 0..50 {
        put(&mut seed, k, 0);
    }
    seed.commit().unwrap();
    let acked: std::sync::Mutex<Vec<(i64, i64)>> = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for w in 0..2i64 {
            let (t, acked) = (&t, &acked);
            s.spawn(move || {
                for round in 0..15i64 {
                    let k = (round * 7 + w * 3) % 50;
                    let v = w * 1000 + round;
                    // A fresh writer per attempt: after a conflict the old one's state is stale.
                    let mut writer = TableWriter::new(t, &format!("w{w}")).unwrap();
                    put(&mut writer, k, v);
                    match writer.commit() {
                        Ok(Some(id)) => acked.lock().unwrap().push((id, k * 100_000 + v)),
                        Ok(None) => {}
                        Err(e) => assert_eq!(e.kind(), ErrorKind::Conflict, "{e}"),
                    }
                }
            });
        }
    });
    // Every acknowledged write is visible unless a later acknowledged write replaced its key.
    let now = kv_rows(&t);
    let mut last: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for (id, kv) in acked.into_inner().unwrap() {
        let (k, v) = (kv / 100_000, kv % 100_000);
        if last.get(&k).is_none_or(|(prev, _)| *prev < id) {
            last.insert(k, (id, v));
        }
    }
    assert!(!last.is_empty());
    for (k, (_, v)) in last {
        assert_eq!(now.get(&k), Some(&v), "acknowledged write to key {k} lost");
    }
    let ids = t.snapshot_manager().list_ids().unwrap();
    assert_eq!(ids, (1..=*ids.last().unwrap()).collect::<Vec<_>>(), "snapshot ids have gaps");
}
