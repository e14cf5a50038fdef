//! Workload replay: every checked-in workload under tests/workloads/, and random seeds in both table modes,
//! with storage faults injected in a share of the commits, checked against a `BTreeMap` model and the LSM
//! invariants after every commit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use strata_sim::{replay, FaultPlan, Workload};

#[test]
fn checked_in_workloads_replay_without_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    let mut files: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/workloads"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        let w = Workload::parse(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let stats =
            replay(dir.path().to_str().unwrap(), &w, None).unwrap().unwrap_or_else(|d| panic!("{}: {d}", f.display()));
        assert!(stats.commits > 0, "{}", f.display());
        // And the same under faults.
        replay(dir.path().to_str().unwrap(), &w, Some(FaultPlan { rate: 0.5, seed: 7 }))
            .unwrap()
            .unwrap_or_else(|d| panic!("{} with faults: {d}", f.display()));
        n += 1;
    }
    assert!(n >= 4, "only {n} workloads checked in");
}

#[test]
fn two_hundred_random_workloads_in_both_modes_with_faults() {
    let dir = tempfile::tempdir().unwrap();
    let (mut dv, mut mor, mut faults, mut failed_commits) = (0, 0, 0, 0);
    let mut engines: std::collections::BTreeMap<String, usize> = Default::default();
    for seed in 0..200u64 {
        let mut w = Workload::generate(seed, 6);
        // Alternate the modes so both get half the seeds whatever the generator drew (first-row tables
        // cannot have deletion vectors: those seeds take the default engine in deletion-vector mode).
        w.header.deletion_vectors = seed % 2 == 0;
        if w.header.deletion_vectors && w.header.merge_engine == "first-row" {
            w.header.merge_engine = "deduplicate".into();
        }
        *engines.entry(w.header.merge_engine.clone()).or_insert(0) += 1;
        if w.header.deletion_vectors {
            dv += 1;
        } else {
            mor += 1;
        }
        let plan = (seed % 3 != 0).then_some(FaultPlan { rate: 0.3, seed });
        match replay(dir.path().to_str().unwrap(), &w, plan).unwrap() {
            Ok(stats) => {
                faults += stats.faults;
                failed_commits += stats.failed_commits;
            }
            Err(d) => panic!("seed {seed}: {d}\n{}", w.to_text()),
        }
    }
    assert_eq!((dv, mor), (100, 100));
    assert_eq!(engines.len(), 4, "every merge engine: {engines:?}");
    assert!(faults > 50, "only {faults} faults injected");
    assert!(failed_commits > 0);
}

#[test]
fn workload_files_parse_strictly_and_round_trip() {
    assert!(Workload::parse("{\"op\": \"commit\"}").is_err());
    assert!(Workload::parse("{\"header\": {\"buckets\": 1}}\n{\"op\": \"frobnicate\"}").is_err());
    let a = Workload::generate(5, 4);
    assert_eq!(a, Workload::generate(5, 4));
    assert_eq!(Workload::parse(&a.to_text()).unwrap(), a);
}
