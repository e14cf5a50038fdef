//! The replayer's state: the table, its writer, the model, and the checks run after every step.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::FaultyFileIO;
use strata_spec::{Datum, Error, Result};

use super::{Divergence, Key};
use strata_table::{ReadBuilder, Table, TableQuery, TableWriter};

/// A row's values (`v`, `s`).
pub(super) type Values = (Option<i64>, Option<String>);

pub(super) type Model = BTreeMap<(String, i64), Values>;

/// Folds one buffered change into the model as the merge engine does.
pub(super) fn apply_change(model: &mut Model, engine: &str, key: (String, i64), change: Option<Values>) {
    match (engine, change) {
        ("first-row", None) => {}
        ("first-row", Some(v)) => {
            model.entry(key).or_insert(v);
        }
        (_, None) => {
            model.remove(&key);
        }
        ("partial-update", Some((v, s))) => {
            let cur = model.entry(key).or_insert((None, None));
            if v.is_some() {
                cur.0 = v;
            }
            if s.is_some() {
                cur.1 = s;
            }
        }
        ("aggregation", Some((v, s))) => {
            let cur = model.entry(key).or_insert((None, None));
            if let Some(x) = v {
                cur.0 = Some(cur.0.unwrap_or(0).wrapping_add(x));
            }
            if s.is_some() {
                cur.1 = s;
            }
        }
        (_, Some(v)) => {
            model.insert(key, v);
        }
    }
}

pub(super) struct Runner {
    pub(super) faulty: FaultyFileIO,
    pub(super) path: String,
    pub(super) table: Table,
    pub(super) writer: Option<TableWriter>,
    /// A point-query handle kept across gets (dropped when the table is reopened or altered).
    pub(super) query: Option<TableQuery>,
    pub(super) model: Model,
    pub(super) pending: Vec<(Key, Option<Values>)>,
    pub(super) partitioned: bool,
    pub(super) engine: String,
    /// The changelog folded so far: up to which snapshot, and the rows it gives.
    pub(super) changelog: std::cell::RefCell<(i64, Model)>,
    /// The name the value column `s` has now (`Evolution::RenameS`).
    pub(super) s_name: String,
}

pub(super) fn key_of(k: &Key) -> (String, i64) {
    (k.p.clone().unwrap_or_default(), k.id)
}

/// The commit user of the replayer's writer.
pub(super) const REPLAY_USER: &str = "replay";

impl Runner {
    pub(super) fn writer(&mut self) -> Result<&mut TableWriter> {
        if self.writer.is_none() {
            self.writer = Some(TableWriter::new(&self.table, REPLAY_USER)?);
        }
        self.writer.as_mut().ok_or_else(|| Error::invalid("replay", "no writer"))
    }

    /// A row in the current schema's column order; columns added by evolutions are null.
    pub(super) fn row(&self, id: i64, p: Option<String>, v: Option<i64>, s: Option<String>) -> Vec<Option<Datum>> {
        self.table
            .schema()
            .fields
            .iter()
            .map(|f| match f.name.as_str() {
                "id" => Some(Datum::BigInt(id)),
                "p" => Some(Datum::String(p.clone().unwrap_or_default())),
                "v" => v.map(Datum::BigInt),
                name if name == self.s_name => s.clone().map(Datum::String),
                _ => None,
            })
            .collect()
    }

    pub(super) fn key(&self, k: &Key) -> Vec<Option<Datum>> {
        let mut r = vec![Some(Datum::BigInt(k.id))];
        if self.partitioned {
            r.push(Some(Datum::String(k.p.clone().unwrap_or_default())));
        }
        r
    }

    pub(super) fn reopen(&mut self) -> Result<()> {
        self.writer = None;
        self.query = None;
        self.pending.clear();
        self.table = Table::open(Arc::new(self.faulty.clone()), &self.path)?;
        Ok(())
    }

    /// The rows a reader sees (raw reads of deletion-vector tables skip level 0).
    pub(super) fn scan(&self) -> Result<Model> {
        self.scan_with(ReadBuilder::new(&self.table))
    }

    /// The rows the committed files hold, level 0 included: the merge-on-read view, whatever the table's mode.
    pub(super) fn scan_merged(&self) -> Result<Model> {
        self.scan_with(ReadBuilder::new(&self.table).merge_on_read(true))
    }

    fn scan_with(&self, read: ReadBuilder) -> Result<Model> {
        let r = read.read()?;
        let mut out = Model::new();
        for b in &r.batches {
            let ids = b.column_by_name("id").and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>());
            let vs = b.column_by_name("v").and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>());
            let ss = b.column_by_name(&self.s_name).and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>());
            // Columns added by evolutions are never written: any value in them came from another column.
            if let Some(f) = b
                .schema()
                .fields()
                .iter()
                .find(|f| !matches!(f.name().as_str(), "id" | "p" | "v") && f.name() != &self.s_name)
            {
                let c = b.column_by_name(f.name()).map_or(0, |c| c.len() - c.null_count());
                if c > 0 {
                    return Err(Error::invalid(
                        "replay",
                        format!("column {} was never written but holds {c} values", f.name()),
                    ));
                }
            }
            let ps = b.column_by_name("p").and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>());
            let (Some(ids), Some(vs), Some(ss)) = (ids, vs, ss) else {
                return Err(Error::invalid("replay", "scan returned unexpected columns"));
            };
            use arrow_array::Array;
            for i in 0..b.num_rows() {
                let p = ps.map(|p| p.value(i).to_string()).unwrap_or_default();
                let row = (vs.is_valid(i).then(|| vs.value(i)), ss.is_valid(i).then(|| ss.value(i).to_string()));
                if out.insert((p.clone(), ids.value(i)), row).is_some() {
                    return Err(Error::corrupt_file(
                        self.path.clone(),
                        format!("key ({p}, {}) read twice", ids.value(i)),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The LSM and deletion-vector invariants of the latest snapshot.
    fn invariants(&self) -> std::result::Result<(), String> {
        let sm = self.table.snapshot_manager();
        let ids = sm.list_ids().map_err(|e| e.to_string())?;
        if let (Some(first), Some(last)) = (ids.first(), ids.last()) {
            if ids.len() as i64 != last - first + 1 {
                return Err(format!("snapshot ids are not consecutive: {ids:?}"));
            }
        }
        let Some(s) = self.table.snapshot(None).map_err(|e| e.to_string())? else { return Ok(()) };
        let live = self.table.live_files(&s).map_err(|e| e.to_string())?;
        let names: BTreeSet<&str> = live.iter().map(|e| e.file.file_name.as_str()).collect();
        let dfs = self.table.deletion_files(&s).map_err(|e| e.to_string())?;
        for ((_, _, file), df) in &dfs {
            if !names.contains(file.as_str()) {
                return Err(format!("a deletion vector names {file}, which is not in snapshot {}", s.id));
            }
            let e = live.iter().find(|e| &e.file.file_name == file).ok_or("vanished")?;
            let dv = df.read(self.table.io().as_ref()).map_err(|e| e.to_string())?;
            if dv.positions().any(|p| p as i64 >= e.file.row_count) {
                return Err(format!("a deletion vector position is beyond the rows of {file}"));
            }
        }
        if self.table.schema().core_options().deletion_vectors_enabled().unwrap_or(false) {
            for e in live.iter().filter(|e| e.file.level > 0) {
                if e.file.delete_row_count.unwrap_or(0) > 0 {
                    return Err(format!("{} at level {} holds retract rows", e.file.file_name, e.file.level));
                }
            }
        }
        Ok(())
    }

    /// With a changelog producer: the changelog of every snapshot since the last check, folded into the
    /// rows before it, gives the rows of the latest snapshot (each -U or -D of the lookup producer must carry
    /// the row it replaces). Expired snapshots take their changelog along: after such a gap the fold starts
    /// again from the latest snapshot.
    fn check_changelog(&self, scanned: &Model) -> std::result::Result<(), String> {
        use arrow_array::Array;
        use strata_spec::ChangelogProducer;
        let options = self.table.schema().core_options();
        let producer = options.changelog_producer().map_err(|e| e.to_string())?;
        // Input changelog of a first-row table is every input row, not the rows kept: nothing to fold.
        if producer == ChangelogProducer::None || producer == ChangelogProducer::Input && self.engine == "first-row" {
            return Ok(());
        }
        let sm = self.table.snapshot_manager();
        let (Some(latest), Some(earliest)) =
            (sm.latest_id().map_err(|e| e.to_string())?, sm.earliest_id().map_err(|e| e.to_string())?)
        else {
            return Ok(());
        };
        let mut state = self.changelog.borrow_mut();
        let (upto, folded) = &mut *state;
        if *upto + 1 < earliest {
            *folded = scanned.clone();
            *upto = latest;
            return Ok(());
        }
        let layout = self.table.layout().map_err(|e| e.to_string())?;
        let col = |name: &str| layout.value_fields.iter().position(|f| f.name == name).map(|i| layout.value_index(i));
        let (Some(id_col), Some(v_col), Some(s_col)) = (col("id"), col("v"), col(&self.s_name)) else {
            return Err("changelog files lack the table's columns".to_string());
        };
        let p_col = col("p");
        for id in (*upto + 1)..=latest {
            let s = self.table.snapshot(Some(id)).map_err(|e| e.to_string())?.ok_or("a snapshot vanished")?;
            for e in self.table.changelog_files(&s).map_err(|e| e.to_string())? {
                let path = self.table.data_file_path(&e).map_err(|e| e.to_string())?;
                let file = layout.file_ref(path, e.file.clone(), None).map_err(|e| e.to_string())?;
                let columns = strata_format::file_columns(&layout);
                let batches = strata_format::FileRead::new(columns)
                    .batch_size(1024)
                    .open(self.table.io(), &file)
                    .map_err(|e| e.to_string())?;
                for b in batches {
                    let b = b.map_err(|e| e.to_string())?;
                    let int = |c: usize| b.column(c).as_any().downcast_ref::<arrow_array::Int64Array>().cloned();
                    let string = |c: usize| b.column(c).as_any().downcast_ref::<arrow_array::StringArray>().cloned();
                    let kinds =
                        b.column(layout.kind_index()).as_any().downcast_ref::<arrow_array::Int8Array>().cloned();
                    let (Some(kinds), Some(ids), Some(vs), Some(ss)) = (kinds, int(id_col), int(v_col), string(s_col))
                    else {
                        return Err("changelog columns of unexpected types".to_string());
                    };
                    let ps = p_col.and_then(string);
                    for i in 0..b.num_rows() {
                        let key = (ps.as_ref().map(|p| p.value(i).to_string()).unwrap_or_default(), ids.value(i));
                        let row =
                            (vs.is_valid(i).then(|| vs.value(i)), ss.is_valid(i).then(|| ss.value(i).to_string()));
                        match kinds.value(i) {
                            0 | 2 => {
                                folded.insert(key, row);
                            }
                            k => {
                                if producer == ChangelogProducer::Lookup && folded.get(&key) != Some(&row) {
                                    return Err(format!(
                                        "snapshot {id}: changelog row of kind {k} for key {key:?} carries {row:?}, but the key holds {:?}",
                                        folded.get(&key)
                                    ));
                                }
                                if k == 3 {
                                    folded.remove(&key);
                                }
                            }
                        }
                    }
                }
            }
        }
        *upto = latest;
        if folded != scanned {
            let differing: Vec<_> = scanned.iter().filter(|(k, v)| folded.get(*k) != Some(*v)).take(3).collect();
            let extra: Vec<_> = folded.iter().filter(|(k, _)| !scanned.contains_key(*k)).take(3).collect();
            return Err(format!(
                "the changelog up to snapshot {latest} folds to {} rows, the table holds {}; differing: {differing:?}; only in the changelog: {extra:?}",
                folded.len(),
                scanned.len()
            ));
        }
        Ok(())
    }

    pub(super) fn check(&self, step: usize) -> std::result::Result<(), Divergence> {
        let div = |message: String| Divergence { step, message };
        self.invariants().map_err(div)?;
        let got = self.scan().map_err(|e| div(e.to_string()))?;
        self.check_changelog(&got).map_err(div)?;
        if got != self.model {
            let missing: Vec<_> = self.model.iter().filter(|(k, v)| got.get(*k) != Some(*v)).take(3).collect();
            let extra: Vec<_> = got.iter().filter(|(k, _)| !self.model.contains_key(*k)).take(3).collect();
            return Err(div(format!(
                "scan has {} rows, the model {}; differing: {missing:?}; unexpected: {extra:?}",
                got.len(),
                self.model.len()
            )));
        }
        Ok(())
    }
}
