//! A model of random writes for incremental and streaming read tests: what each commit wrote (its last row
//! per key, with its row kind), the changelog it makes (+I, -U/+U, -D against the state before it) and the
//! snapshots it landed in. Tables: id BIGINT NOT NULL, p STRING NOT NULL (partition), v BIGINT, s STRING;
//! primary key (id, p); 3 buckets; `num-sorted-run.compaction-trigger` 2.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use strata::spec::{CommitKind, DataType, SchemaChange, TableSchema};
use strata::{LocalFileIO, Table, TableWriter};

/// One row of a change stream, by field (the column `s` is renamed `name` half-way; `extra` is added then).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Change {
    pub kind: String,
    pub id: i64,
    pub p: String,
    pub v: Option<i64>,
    pub s: Option<String>,
    pub extra: Option<i64>,
}

pub(crate) type Key = (i64, String);
pub(crate) type State = BTreeMap<Key, (Option<i64>, Option<String>, Option<i64>)>;

pub(crate) fn key(c: &Change) -> Key {
    (c.id, c.p.clone())
}

/// One commit as the test made it: its snapshots and what it wrote.
pub(crate) struct Commit {
    /// (id, kind) of the snapshots it made.
    pub snapshots: Vec<(i64, CommitKind)>,
    /// The last row per key it wrote (a commit's rows per key merge before they reach a file, as in Paimon).
    pub written: Vec<Change>,
    /// The changelog the model derives: the state before and after the commit per key it touched.
    pub changelog: Vec<Change>,
}

impl Commit {
    pub(crate) fn snapshot_of(&self, kind: CommitKind) -> Option<i64> {
        self.snapshots.iter().find(|(_, k)| *k == kind).map(|(id, _)| *id)
    }
}

/// The model's table at `<dir>/t`.
pub(crate) fn create(dir: &std::path::Path, dv: bool, extra: &[(&str, &str)]) -> Table {
    create_at(&dir.join("t"), dv, extra)
}

/// The model's table at `path`.
pub(crate) fn create_at(path: &std::path::Path, dv: bool, extra: &[(&str, &str)]) -> Table {
    let mut options = BTreeMap::from([
        ("bucket".to_string(), "3".to_string()),
        ("deletion-vectors.enabled".to_string(), dv.to_string()),
        ("num-sorted-run.compaction-trigger".to_string(), "2".to_string()),
    ]);
    for (k, v) in extra {
        options.insert(k.to_string(), v.to_string());
    }
    let schema = TableSchema::new(
        vec![
            ("id".into(), DataType::bigint().with_nullable(false)),
            ("p".into(), DataType::string().with_nullable(false)),
            ("v".into(), DataType::bigint()),
            ("s".into(), DataType::string()),
        ],
        vec!["p".into()],
        vec!["id".into(), "p".into()],
        options,
        0,
    )
    .unwrap();
    Table::create(Arc::new(LocalFileIO::new()), path.to_str().unwrap(), schema).unwrap()
}

/// The rows of `changes` as a batch of the table's columns (`evolved`: after the rename and the new column).
pub(crate) fn batch_of(changes: &[Change], evolved: bool) -> RecordBatch {
    let name = if evolved { "name" } else { "s" };
    let mut fields = vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("p", ArrowType::Utf8, false),
        Field::new("v", ArrowType::Int64, true),
        Field::new(name, ArrowType::Utf8, true),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(changes.iter().map(|c| c.id))),
        Arc::new(StringArray::from_iter_values(changes.iter().map(|c| c.p.clone()))),
        Arc::new(Int64Array::from(changes.iter().map(|c| c.v).collect::<Vec<_>>())),
        Arc::new(StringArray::from(changes.iter().map(|c| c.s.clone()).collect::<Vec<_>>())),
    ];
    if evolved {
        fields.push(Field::new("extra", ArrowType::Int64, true));
        cols.push(Arc::new(Int64Array::from(changes.iter().map(|c| c.extra).collect::<Vec<_>>())));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
}

pub(crate) fn kind_byte(kind: &str) -> i8 {
    ["+I", "-U", "+U", "-D"].iter().position(|k| *k == kind).unwrap() as i8
}

/// Writes random commits into a table and keeps the model of each: `ModelWriter::commit_random` is one
/// commit (and, every fifth, a full compaction); at commit `evolve_at` the column `s` is renamed `name` and a
/// column `extra` added first.
pub(crate) struct ModelWriter {
    pub table: Table,
    writer: Option<TableWriter>,
    rng: StdRng,
    state: State,
    evolved: bool,
    evolve_at: Option<usize>,
    pub commits: Vec<Commit>,
}

impl ModelWriter {
    pub(crate) fn new(table: Table, seed: u64, evolve_at: Option<usize>) -> Self {
        let writer = Some(TableWriter::new(&table, "model").unwrap());
        ModelWriter {
            table,
            writer,
            rng: StdRng::seed_from_u64(seed),
            state: State::new(),
            evolved: false,
            evolve_at,
            commits: Vec::new(),
        }
    }

    /// The rows visible after every commit so far.
    pub(crate) fn state(&self) -> &State {
        &self.state
    }

    /// Random rows for commit `c`.
    fn random_rows(&mut self, c: usize) -> Vec<Change> {
        let rng = &mut self.rng;
        let mut rows = Vec::new();
        for i in 0..rng.random_range(5..40) {
            let kind = match rng.random_range(0..20) {
                0..=9 => "+I",
                10..=12 => "+U",
                13 => "-U",
                _ => "-D",
            };
            let null = |rng: &mut StdRng| rng.random_bool(0.15);
            rows.push(Change {
                kind: kind.to_string(),
                id: rng.random_range(0..30),
                p: ["a", "b"][rng.random_range(0..2)].to_string(),
                v: if null(rng) { None } else { Some(rng.random_range(-50..50)) },
                s: if null(rng) { None } else { Some(format!("c{c}r{i}")) },
                extra: if self.evolved && !null(rng) { Some(rng.random_range(0..9)) } else { None },
            });
        }
        rows
    }

    /// One random commit, recorded in `commits`.
    pub(crate) fn commit_random(&mut self) {
        let c = self.commits.len();
        if self.evolve_at == Some(c) {
            self.writer = None;
            self.table = self
                .table
                .alter_columns(&[
                    SchemaChange::RenameColumn { from: "s".into(), to: "name".into() },
                    SchemaChange::add_column("extra", DataType::bigint()),
                ])
                .unwrap();
            self.writer = Some(TableWriter::new(&self.table, "model").unwrap());
            self.evolved = true;
        }
        let rows = self.random_rows(c);
        let kinds: Vec<i8> = rows.iter().map(|r| kind_byte(&r.kind)).collect();
        let writer = self.writer.as_mut().unwrap();
        writer.write_with_kinds(&batch_of(&rows, self.evolved), &kinds).unwrap();
        let before_id = self.table.snapshot_manager().latest_id().unwrap().unwrap_or(0);
        writer.commit().unwrap();
        if c % 5 == 3 {
            writer.compact(true).unwrap();
        }
        let after_id = self.table.snapshot_manager().latest_id().unwrap().unwrap();
        let snapshots = (before_id + 1..=after_id)
            .map(|id| (id, self.table.snapshot(Some(id)).unwrap().unwrap().commit_kind))
            .collect::<Vec<_>>();
        let mut last: BTreeMap<Key, Change> = BTreeMap::new();
        for r in rows {
            last.insert(key(&r), r);
        }
        let changelog = self.apply(&last);
        self.commits.push(Commit { snapshots, written: last.into_values().collect(), changelog });
    }

    /// Applies a commit's last row per key to the state; returns the changelog it makes.
    fn apply(&mut self, last: &BTreeMap<Key, Change>) -> Vec<Change> {
        let mut changelog = Vec::new();
        for (k, r) in last {
            let before = self.state.get(k).cloned();
            if r.kind == "+I" || r.kind == "+U" {
                self.state.insert(k.clone(), (r.v, r.s.clone(), r.extra));
            } else {
                self.state.remove(k);
            }
            let row = |kind: &str, (v, s, extra): (Option<i64>, Option<String>, Option<i64>)| Change {
                kind: kind.to_string(),
                id: k.0,
                p: k.1.clone(),
                v,
                s,
                extra,
            };
            match (before, self.state.get(k).cloned()) {
                (None, Some(after)) => changelog.push(row("+I", after)),
                (Some(b), Some(after)) => {
                    changelog.push(row("-U", b));
                    changelog.push(row("+U", after));
                }
                (Some(b), None) => changelog.push(row("-D", b)),
                (None, None) => {}
            }
        }
        changelog
    }
}

/// The state as `+I` changes (what a full read returns).
pub(crate) fn inserts_of(state: &State) -> Vec<Change> {
    state
        .iter()
        .map(|((id, p), (v, s, extra))| Change {
            kind: "+I".into(),
            id: *id,
            p: p.clone(),
            v: *v,
            s: s.clone(),
            extra: *extra,
        })
        .collect()
}

/// Output rows (JSON objects of the final schema, `rowkind` first) as changes.
pub(crate) fn changes_of(batches: &[RecordBatch]) -> Vec<Change> {
    super::json_rows(batches)
        .into_iter()
        .map(|r| Change {
            kind: r["rowkind"].as_str().unwrap().to_string(),
            id: r["id"].as_i64().unwrap(),
            p: r["p"].as_str().unwrap().to_string(),
            v: r["v"].as_i64(),
            s: r.get("name").or(r.get("s")).and_then(Value::as_str).map(str::to_string),
            extra: r["extra"].as_i64(),
        })
        .collect()
}

/// Changes per key, in the order read: equal maps mean the same rows, and each key's changes in order.
pub(crate) fn by_key(changes: &[Change]) -> BTreeMap<Key, Vec<Change>> {
    let mut m: BTreeMap<Key, Vec<Change>> = BTreeMap::new();
    for c in changes {
        m.entry(key(c)).or_default().push(c.clone());
    }
    m
}

/// What the model says range (a, b] holds: the rows of the commits whose `kind` snapshot lies in it.
pub(crate) fn expected(commits: &[Commit], a: i64, b: i64, changelog: bool) -> Vec<Change> {
    let kind = if changelog { CommitKind::Compact } else { CommitKind::Append };
    commits
        .iter()
        .filter(|c| c.snapshot_of(kind).is_some_and(|id| a < id && id <= b))
        .flat_map(|c| if changelog { c.changelog.clone() } else { c.written.clone() })
        .collect()
}
