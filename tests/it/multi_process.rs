//! Concurrent `strata write` processes and a `strata compact` process on one table: every write that
//! reports success is in the table, in commit order (a later commit's row wins), and failed attempts leave
//! no files behind. The model applies the landed writes' inputs in the order of their snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use strata::table::remove_orphan_files;
use strata::{FileIO, LocalFileIO, Table};

const WRITERS: u64 = 3;
const ROUNDS: u64 = 4;
const KEYS: i64 = 60;

/// One write: (key, value) pairs, values unique per write so the model can tell who won.
fn input(writer: u64, round: u64) -> Vec<(i64, i64)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(writer * 1000 + round);
    let mut rows = BTreeMap::new();
    for _ in 0..40 {
        rows.insert(rng.random_range(0..KEYS), (writer * 1000 + round) as i64);
    }
    rows.into_iter().collect()
}

fn run(dir: &Path, dv: bool) {
    let table = dir.join("t");
    let t = table.to_str().unwrap().to_string();
    let dv_option = format!("deletion-vectors.enabled={dv}");
    let (code, _, err) =
        common::strata_create(&t, "id BIGINT NOT NULL, v BIGINT", "id", &["bucket=2", &dv_option], &[]);
    assert_eq!(code, 0, "{err}");
    let stop = Arc::new(AtomicBool::new(false));
    let compactor = {
        let (t, stop) = (t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut landed = 0;
            while !stop.load(Ordering::Relaxed) {
                let (code, _, err) = common::strata(&["compact", &t]);
                // A compaction may lose to a write (a conflict); anything else is a failure.
                assert!(code == 0 || err.contains("conflict"), "compact: {err}");
                landed += usize::from(code == 0);
                std::thread::sleep(Duration::from_millis(20));
            }
            landed
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (t, dir) = (t.clone(), dir.to_path_buf());
            std::thread::spawn(move || {
                let mut landed = Vec::new();
                for round in 0..ROUNDS {
                    let rows = input(w, round);
                    let file = dir.join(format!("in-{w}-{round}.jsonl"));
                    let text: String = rows.iter().map(|(k, v)| format!("{{\"id\":{k},\"v\":{v}}}\n")).collect();
                    std::fs::write(&file, text).unwrap();
                    let (code, out, err) = common::strata(&["write", &t, "--input", file.to_str().unwrap(), "--json"]);
                    if code == 0 {
                        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                        // The APPEND snapshot holding the rows: commit order is the order of those (a write
                        // whose compaction was dropped and redone reports a later snapshot as its last one).
                        landed.push((v["snapshot"].as_i64().unwrap(), rows));
                    } else {
                        // Only a conflict that outlasted every retry may fail a write.
                        assert!(err.contains("conflict"), "write: {err}");
                    }
                }
                landed
            })
        })
        .collect();
    let mut landed: Vec<(i64, Vec<(i64, i64)>)> = writers.into_iter().flat_map(|h| h.join().unwrap()).collect();
    stop.store(true, Ordering::Relaxed);
    compactor.join().unwrap();
    assert!(landed.len() as u64 >= WRITERS * ROUNDS / 2, "only {} of {} writes landed", landed.len(), WRITERS * ROUNDS);
    landed.sort_by_key(|(id, _)| *id);
    let mut model = BTreeMap::new();
    for (_, rows) in &landed {
        model.extend(rows.iter().copied());
    }
    let io: Arc<dyn FileIO> = Arc::new(LocalFileIO::new());
    let table = Table::open(io, &t).unwrap();
    let got = common::fixtures::kv_rows(&table);
    assert_eq!(got, model, "the table differs from the landed writes applied in snapshot order");
    let orphans = remove_orphan_files(&table, Duration::ZERO, true).unwrap();
    assert!(orphans.data_files.is_empty() && orphans.index_files.is_empty(), "files left behind: {orphans:?}");
}

#[test]
fn concurrent_writer_processes_land_in_commit_order_merge_on_read() {
    run(tempfile::tempdir().unwrap().path(), false);
}

#[test]
fn concurrent_writer_processes_land_in_commit_order_deletion_vectors() {
    run(tempfile::tempdir().unwrap().path(), true);
}
