//! Issue 51: Java Paimon 1.4.2 and Strata compacting one deletion-vector table.
//!
//! Java 1.4.2 checks a fixed-bucket commit against concurrent ones by its data files only. A Java writer that
//! compacts keeps its bucket's levels and vectors in memory across commits; after another engine compacted
//! the bucket, its next compaction passes those checks and commits its vectors as the bucket's whole index,
//! so deletes come back. Strata therefore does not compact a bucket another engine compacted recently
//! (`strata.foreign-compaction.window`), and tolerates the orphan vectors (naming files no longer live) that
//! Java 1.4 leaves even on its own (Paimon #8778), reading what Java reads and dropping them when it compacts.
//! Every read, Java's and Strata's, is compared to a model of the rows each writer was given.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::{json, Value};
use strata::spec::{Datum, ErrorKind};
use strata::table::{inspect, repair_deletion_vectors};
use strata::TableWriter;

use super::java_paimon::{
    java_create, java_rows, open_table, random_java_rows, random_strata_ops, same, strata_read, Model,
};
use crate::common::java::JavaPaimon;

/// A deletion-vector table (parquet) of `buckets` buckets, created by Java.
fn create(java: &mut JavaPaimon, dir: &tempfile::TempDir, buckets: u32) -> String {
    java_create(java, dir, json!({"bucket": buckets.to_string(), "deletion-vectors.enabled": "true"}))
}

/// Java's writer `writer` upserts (name "j", v = id + `v`) or, with `v` None, deletes `ids`, then commits
/// with the compaction its options call for.
fn java_write(
    java: &mut JavaPaimon,
    path: &str,
    writer: &str,
    ids: std::ops::Range<i64>,
    v: Option<i64>,
    model: &mut Model,
) {
    let rows: Vec<Value> = ids
        .map(|id| match v {
            Some(v) => {
                model.insert(id, (Some("j".into()), Some(id + v)));
                json!({"id": id, "name": "j", "v": id + v})
            }
            None => {
                model.remove(&id);
                json!({"id": id, "_kind": "-D"})
            }
        })
        .collect();
    java.call(&json!({"op": "write", "path": path, "writer": writer, "rows": rows, "compact": "minor"}));
}

fn both_read(java: &mut JavaPaimon, path: &str, what: &str, model: &Model) {
    same(&format!("{what}: Strata reads"), &strata_read(path), model);
    same(&format!("{what}: Java reads"), &java_rows(&java.read(path, json!({}))), model);
}

/// Strata's compaction of every bucket (fully when `full`), with `window` as the foreign-compaction window.
fn strata_compact(path: &str, full: bool, window: Option<Duration>) -> strata::Result<Option<i64>> {
    let mut t = open_table(path);
    if let Some(w) = window {
        t.set_foreign_compaction_window(w);
    }
    TableWriter::new(&t, "strata-compactor").unwrap().compact(full)
}

fn orphans(path: &str) -> Vec<String> {
    let t = open_table(path);
    let s = t.snapshot(None).unwrap().unwrap();
    t.orphan_deletion_vectors(&s).unwrap().into_iter().map(|(_, b, name)| format!("{name} (bucket {b})")).collect()
}

/// Strata's writer puts `ids` (name "s", v = id + 100), with `window` as its foreign-compaction window.
fn strata_write(path: &str, ids: std::ops::Range<i64>, window: Option<Duration>, model: &mut Model) -> Option<i64> {
    let mut t = open_table(path);
    if let Some(w) = window {
        t.set_foreign_compaction_window(w);
    }
    let mut w = TableWriter::new(&t, "strata-app").unwrap();
    for id in ids {
        model.insert(id, (Some("s".into()), Some(id + 100)));
        w.put(vec![Some(Datum::BigInt(id)), Some(Datum::String("s".into())), Some(Datum::BigInt(id + 100))]).unwrap();
    }
    w.commit().unwrap()
}

/// The sequence that loses deletes: a Java writer kept open (compacting each commit), a Strata write and
/// full compaction in between, then the writer's deletes. Strata's write lands but its compaction, like the
/// full one, is refused, and nothing is lost; once the Java writer has stopped, Strata compacts. With the
/// check off the same sequence brings the deleted keys back, in Java's read and in Strata's.
#[test]
fn strata_does_not_compact_a_bucket_a_running_java_writer_compacts() {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = create(&mut java, &dir, 1);
    let mut model = Model::new();
    java_write(&mut java, &path, "app", 0..50, Some(0), &mut model);
    java_write(&mut java, &path, "app", 25..75, Some(1), &mut model);
    let java_rows_before = model.clone();
    strata_write(&path, 40..46, None, &mut model).expect("the write lands");
    let err = strata_compact(&path, true, None).expect_err("a compaction beside a compacting Java writer");
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains("'write-only' = 'true'"), "the error names the way out: {err}");
    // Strata's rows wait in level 0, which deletion-vector reads skip, as a write-only writer's would.
    same("Strata's write waits for a compaction", &strata_read(&path), &java_rows_before);
    java_write(&mut java, &path, "app", 0..10, None, &mut model);
    java.call(&json!({"op": "close_writer", "writer": "app"}));
    strata_compact(&path, true, Some(Duration::ZERO)).unwrap().expect("the Java writer has stopped: a compaction");
    both_read(&mut java, &path, "deletes after a refused Strata compaction", &model);
    assert_eq!(model.len(), 65);
    assert_eq!(orphans(&path), Vec::<String>::new());

    // The check off: Java's stale compaction commits vectors for the file Strata's compaction removed.
    let dir = tempfile::tempdir().unwrap();
    let path = create(&mut java, &dir, 1);
    let mut model = Model::new();
    java_write(&mut java, &path, "app", 0..50, Some(0), &mut model);
    java_write(&mut java, &path, "app", 25..75, Some(1), &mut model);
    strata_write(&path, 40..46, Some(Duration::ZERO), &mut model).expect("the write lands");
    strata_compact(&path, true, Some(Duration::ZERO)).unwrap();
    java_write(&mut java, &path, "app", 0..10, None, &mut model);
    let java_read = java_rows(&java.read(&path, json!({})));
    assert_eq!(java_read.len(), 75, "Java 1.4.2 brings the 10 deleted keys back: the loss the check prevents");
    assert!(!orphans(&path).is_empty(), "Java's stale vectors name the file Strata's compaction removed");
    same("with the check off, Strata reads what Java reads", &strata_read(&path), &java_read);

    // The repair: Strata's compaction left the removed file on disk, and Java's marks on it name the rows
    // that came back. A dry run counts them; once the Java writer has stopped, the repair restores them.
    let report = repair_deletion_vectors(&open_table(&path), "strata-repair", true).unwrap();
    assert_eq!((report.restored, report.snapshot), (10, None), "{report:?}");
    assert_eq!(
        repair_deletion_vectors(&open_table(&path), "strata-repair", false).unwrap_err().kind(),
        ErrorKind::Conflict,
        "the Java writer compacted a moment ago"
    );
    java.call(&json!({"op": "close_writer", "writer": "app"}));
    let mut t = open_table(&path);
    t.set_foreign_compaction_window(Duration::ZERO);
    let report = repair_deletion_vectors(&t, "strata-repair", false).unwrap();
    assert_eq!(report.restored, 10, "{report:?}");
    assert!(report.snapshot.is_some());
    both_read(&mut java, &path, "after the repair", &model);
    assert_eq!(orphans(&path), Vec::<String>::new());
    let again = repair_deletion_vectors(&open_table(&path), "strata-repair", false).unwrap();
    assert_eq!((again.restored, again.snapshot), (0, None), "a second repair finds nothing: {again:?}");
}

/// Java 1.4.2's dedicated compaction leaves an orphan vector after a full compaction, write-only deletes, a
/// minor and a full compaction (Paimon #8778). Strata reads what Java reads, names the orphan, and its next
/// compaction drops it.
#[test]
fn an_orphan_vector_java_leaves_is_read_past_named_and_compacted_away() {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = create(&mut java, &dir, 1);
    let mut model = Model::new();
    let write_only = json!({"write-only": "true"});
    let rows: Vec<Value> = (0..20)
        .map(|id| {
            model.insert(id, (Some("j".into()), Some(id)));
            json!({"id": id, "name": "j", "v": id})
        })
        .collect();
    java.call(
        &json!({"op": "write", "path": path, "writer": "w1", "options": write_only, "rows": rows, "compact": "none"}),
    );
    java.call(&json!({"op": "close_writer", "writer": "w1"}));
    let compact = |java: &mut JavaPaimon, name: &str, full: bool| {
        java.call(&json!({"op": "compact", "path": path, "writer": name, "full": full}));
        java.call(&json!({"op": "close_writer", "writer": name}));
    };
    compact(&mut java, "c1", true);
    let deletes: Vec<Value> = (0..5)
        .map(|id| {
            model.remove(&id);
            json!({"id": id, "_kind": "-D"})
        })
        .collect();
    java.call(&json!({"op": "write", "path": path, "writer": "w2", "options": write_only, "rows": deletes, "compact": "none"}));
    java.call(&json!({"op": "close_writer", "writer": "w2"}));
    compact(&mut java, "c2", false);
    compact(&mut java, "c3", true);
    assert_eq!(orphans(&path).len(), 1, "Java 1.4.2 left one orphan vector");
    both_read(&mut java, &path, "a table with an orphan vector", &model);
    let report = inspect(&open_table(&path), None).unwrap();
    assert_eq!(report["orphanDeletionVectors"].as_array().map(Vec::len), Some(1), "inspect names it: {report}");

    // Java compacted a moment ago, so Strata refuses until told that compactor has stopped.
    assert_eq!(strata_compact(&path, false, None).unwrap_err().kind(), ErrorKind::Conflict);
    strata_compact(&path, false, Some(Duration::ZERO)).unwrap().expect("dropping the orphan is a commit");
    assert_eq!(orphans(&path), Vec::<String>::new());
    both_read(&mut java, &path, "after Strata's compaction dropped the orphan", &model);
}

/// Twenty rounds of a Java writer kept open (compacting every commit) and Strata compactions in between:
/// Strata refuses each, and both engines read the model after every round.
#[test]
fn twenty_rounds_beside_a_compacting_java_writer_lose_nothing() {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = create(&mut java, &dir, 2);
    let mut rng = StdRng::seed_from_u64(51);
    let mut model = Model::new();
    let mut refused = 0;
    for round in 0..20 {
        let rows = random_java_rows(&mut rng, round, 20..80, &mut model);
        java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "minor"}));
        match strata_compact(&path, round % 3 == 0, None) {
            Err(e) if e.kind() == ErrorKind::Conflict => refused += 1,
            Ok(None) => {}
            other => panic!("round {round}: Strata compacted beside a compacting Java writer: {other:?}"),
        }
        both_read(&mut java, &path, &format!("round {round}"), &model);
        assert_eq!(orphans(&path), Vec::<String>::new(), "round {round}");
    }
    assert!(refused > 0, "Strata refused none of 20 compactions (the others found nothing to compact)");
    // Strata's rows land beside the running writer and wait in level 0; once it has stopped, Strata compacts.
    strata_write(&path, 100..160, None, &mut model).expect("the write lands");
    java.call(&json!({"op": "close_writer", "writer": "app"}));
    strata_compact(&path, false, Some(Duration::ZERO)).unwrap().expect("a compaction");
    both_read(&mut java, &path, "after the Java writer stopped and Strata compacted", &model);
    assert_eq!(orphans(&path), Vec::<String>::new());
}

/// The roles swapped: a Strata writer kept open (its writes compact as Strata's defaults say) and a Java
/// compaction job after each round. Once Java has compacted, Strata's writes land and their compactions are
/// left to Java's; after each Java compaction both engines read the model.
#[test]
fn twenty_rounds_of_strata_writes_beside_a_java_compaction_job_lose_nothing() {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = create(&mut java, &dir, 2);
    let mut rng = StdRng::seed_from_u64(52);
    let mut model = Model::new();
    let t = open_table(&path);
    let mut w = TableWriter::new(&t, "strata-app").unwrap();
    for round in 0..20 {
        random_strata_ops(&mut w, &mut rng, round, 20..80, &mut model);
        w.commit().unwrap().expect("the write lands");
        java.call(&json!({"op": "compact", "path": path, "writer": "compactor", "full": round % 4 == 3}));
        java.call(&json!({"op": "close_writer", "writer": "compactor"}));
        both_read(&mut java, &path, &format!("round {round}"), &model);
    }
}

/// Paimon's recommended setup with Strata as the dedicated compactor: a Java writer kept open with
/// `write-only = true` commits every round, `strata compact` compacts after it; no Java commit is lost or
/// doubled and both engines read the model after every compaction.
#[test]
fn twenty_rounds_of_a_write_only_java_writer_and_strata_as_its_compactor_lose_nothing() {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = create(&mut java, &dir, 2);
    let mut rng = StdRng::seed_from_u64(53);
    let mut model = Model::new();
    for round in 0..20 {
        let rows = random_java_rows(&mut rng, round, 20..80, &mut model);
        java.call(&json!({
            "op": "write", "path": path, "writer": "app", "options": {"write-only": "true"}, "rows": rows,
            "compact": "none",
        }));
        strata_compact(&path, round % 5 == 4, None).unwrap().expect("Strata compacts what Java wrote");
        both_read(&mut java, &path, &format!("round {round}"), &model);
        assert_eq!(orphans(&path), Vec::<String>::new(), "round {round}");
    }
    java.call(&json!({"op": "close_writer", "writer": "app"}));
}

/// The reverse: Strata's writer kept open on a table with `write-only = true` commits every round, Java's
/// dedicated compaction (its writer opened with `write-only = false`, as Paimon's compact action does)
/// compacts after it; both read the model after every compaction.
#[test]
fn twenty_rounds_of_a_write_only_strata_writer_and_java_as_its_compactor_lose_nothing() {
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let path =
        java_create(&mut java, &dir, json!({"bucket": "2", "deletion-vectors.enabled": "true", "write-only": "true"}));
    let mut rng = StdRng::seed_from_u64(54);
    let mut model = Model::new();
    let t = open_table(&path);
    let mut w = TableWriter::new(&t, "strata-app").unwrap();
    for round in 0..20 {
        random_strata_ops(&mut w, &mut rng, round, 20..80, &mut model);
        w.commit().unwrap().expect("the write lands");
        let latest = t.snapshot(None).unwrap().unwrap();
        assert!(t.live_files(&latest).unwrap().iter().any(|e| e.file.level == 0), "a write-only write");
        let compaction = json!({
            "op": "compact", "path": path, "writer": "compactor", "options": {"write-only": "false"},
            "full": round % 4 == 3,
        });
        java.call(&compaction);
        java.call(&json!({"op": "close_writer", "writer": "compactor"}));
        both_read(&mut java, &path, &format!("round {round}"), &model);
    }
}
