//! Java Paimon 1.4.2 and Strata on tables of each merge engine (issue 52): partial-update (also with a
//! sequence group, issue 56), aggregation (sum, with last-non-null for the other column) and first-row, with
//! deletion vectors and merge-on-read. Rounds of
//! Java writes (its writer compacting as its defaults say), Strata writes and compactions, then Java's full
//! compaction; every read, Java's and Strata's, is compared with a model of the engine, never with the other
//! engine's read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use strata::spec::Datum;
use strata::TableWriter;

use super::java_paimon::{java_create, java_rows, open_after_java, same, strata_read, Model, Values};
use crate::common::java::JavaPaimon;

#[derive(Clone, Copy, Debug)]
enum Engine {
    PartialUpdate,
    /// Partial-update where `v` orders `name` (`fields.v.sequence-group = name`).
    SequenceGroup,
    /// The same group, `name` folded with `max` (records of any order fold in).
    GroupMax,
    Sum,
    FirstRow,
}

impl Engine {
    fn options(self) -> Value {
        match self {
            Engine::PartialUpdate => json!({"merge-engine": "partial-update"}),
            Engine::SequenceGroup => json!({"merge-engine": "partial-update", "fields.v.sequence-group": "name"}),
            Engine::GroupMax => json!({
                "merge-engine": "partial-update",
                "fields.v.sequence-group": "name",
                "fields.name.aggregate-function": "max",
            }),
            Engine::Sum => json!({
                "merge-engine": "aggregation",
                "fields.v.aggregate-function": "sum",
                "fields.name.aggregate-function": "last_non_null_value",
            }),
            Engine::FirstRow => json!({"merge-engine": "first-row"}),
        }
    }

    /// The model after a row (name, v) for `id` is written.
    fn apply(self, model: &mut Model, history: &mut History, id: i64, (name, v): Values) {
        if let Engine::GroupMax = self {
            // v is the largest sequence seen, name the largest name of the rows with a sequence.
            let old = model.entry(id).or_insert((None, None));
            if let Some(v) = v {
                old.1 = Some(old.1.map_or(v, |o| o.max(v)));
                old.0 = old.0.take().max(name);
            }
            return;
        }
        if let Engine::SequenceGroup = self {
            // A key's rows fold from nothing, the group taking a row's values (a NULL name too) when its v is
            // at least the key's.
            let rows = history.rows.entry(id).or_default();
            rows.push((name, v));
            let folded = rows.iter().fold((None, None), |old: Values, (name, v)| match v {
                Some(v) if old.1.is_none_or(|o| *v >= o) => (name.clone(), Some(*v)),
                _ => old,
            });
            model.insert(id, folded);
            return;
        }
        match (self, model.get_mut(&id)) {
            (_, None) => {
                model.insert(id, (name, v));
            }
            (Engine::PartialUpdate, Some(old)) => {
                if name.is_some() {
                    old.0 = name;
                }
                if v.is_some() {
                    old.1 = v;
                }
            }
            (Engine::Sum, Some(old)) => {
                if name.is_some() {
                    old.0 = name;
                }
                old.1 = match (old.1, v) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            }
            (Engine::FirstRow | Engine::SequenceGroup | Engine::GroupMax, Some(_)) => {}
        }
    }
}

/// Every row written per key, oldest first (the sequence-group model folds them).
#[derive(Default)]
struct History {
    rows: std::collections::BTreeMap<i64, Vec<Values>>,
}

/// `n` random rows (ids from 0..200, each field null one time in five), applied to the model.
fn random_rows(
    rng: &mut StdRng,
    engine: Engine,
    round: usize,
    n: usize,
    model: &mut (Model, History),
) -> Vec<(i64, Values)> {
    (0..n)
        .map(|_| {
            let id = rng.random_range(0..200);
            let name = rng.random_bool(0.8).then(|| format!("r{round}-{}", rng.random_range(0..100)));
            // A sequence group's sequence is never NULL here: what Paimon makes of a lone row without one
            // depends on whether a compaction rewrote or only moved its file (the merge tests cover it).
            let v = (rng.random_bool(0.8) || matches!(engine, Engine::SequenceGroup | Engine::GroupMax))
                .then(|| rng.random_range(-1000..1000));
            engine.apply(&mut model.0, &mut model.1, id, (name.clone(), v));
            (id, (name, v))
        })
        .collect()
}

fn strata_writes(path: &str, rows: &[(i64, Values)], compact: Option<bool>) {
    // Java's writer of the round is closed: Strata may compact what it compacted.
    let t = open_after_java(path);
    let mut w = TableWriter::new(&t, "strata").unwrap();
    for (id, (name, v)) in rows {
        w.put(vec![Some(Datum::BigInt(*id)), name.clone().map(Datum::String), v.map(Datum::BigInt)]).unwrap();
    }
    w.commit().unwrap();
    if let Some(full) = compact {
        w.compact(full).unwrap();
    }
}

fn rounds(engine: Engine, deletion_vectors: bool, seed: u64) {
    let what = format!("{engine:?}, deletion-vectors {deletion_vectors}");
    let mut java = JavaPaimon::start();
    let dir = tempfile::tempdir().unwrap();
    let mut options = engine.options();
    options["bucket"] = json!("2");
    options["deletion-vectors.enabled"] = json!(deletion_vectors.to_string());
    let path = java_create(&mut java, &dir, options);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut written = (Model::new(), History::default());
    for round in 0..3 {
        for _ in 0..2 {
            let rows = random_rows(&mut rng, engine, round, 60, &mut written);
            let rows: Vec<Value> = rows.iter().map(|(id, (name, v))| json!({"id": id, "name": name, "v": v})).collect();
            java.call(&json!({"op": "write", "path": path, "writer": "app", "rows": rows, "compact": "minor"}));
        }
        java.call(&json!({"op": "close_writer", "writer": "app"}));
        same(
            &format!("{what}: round {round}, Java reads its writes"),
            &java_rows(&java.read(&path, json!({}))),
            &written.0,
        );
        same(&format!("{what}: round {round}, Strata reads Java's writes"), &strata_read(&path), &written.0);
        let rows = random_rows(&mut rng, engine, round, 60, &mut written);
        strata_writes(&path, &rows, None);
        let rows = random_rows(&mut rng, engine, round, 60, &mut written);
        strata_writes(&path, &rows, Some(round == 1));
        same(&format!("{what}: round {round}, Strata reads its writes"), &strata_read(&path), &written.0);
        let java_read = java_rows(&java.read(&path, json!({})));
        same(&format!("{what}: round {round}, Java reads Strata's writes"), &java_read, &written.0);
    }
    java.call(&json!({"op": "compact", "path": path, "writer": "compactor", "full": true}));
    java.call(&json!({"op": "close_writer", "writer": "compactor"}));
    same(&format!("{what}: after Java's full compaction, Java"), &java_rows(&java.read(&path, json!({}))), &written.0);
    same(&format!("{what}: after Java's full compaction, Strata"), &strata_read(&path), &written.0);
}

#[test]
fn partial_update_tables_pass_between_java_and_strata() {
    rounds(Engine::PartialUpdate, true, 11);
    rounds(Engine::PartialUpdate, false, 12);
}

#[test]
fn sequence_group_tables_pass_between_java_and_strata() {
    rounds(Engine::SequenceGroup, true, 16);
    rounds(Engine::SequenceGroup, false, 17);
}

#[test]
fn sequence_groups_with_an_aggregate_pass_between_java_and_strata() {
    rounds(Engine::GroupMax, true, 18);
    rounds(Engine::GroupMax, false, 19);
}

#[test]
fn aggregation_tables_pass_between_java_and_strata() {
    rounds(Engine::Sum, true, 13);
    rounds(Engine::Sum, false, 14);
}

#[test]
fn first_row_tables_pass_between_java_and_strata() {
    rounds(Engine::FirstRow, false, 15);
}
