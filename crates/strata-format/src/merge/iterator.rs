//! Merging sorted runs: a loser tree over arrow-row-encoded keys, records of one key grouped and handed
//! to the merge engine, results assembled with `interleave` from the input batches (no per-row copies of
//! keys or values).

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, Int8Type};
use arrow_array::{new_null_array, Array, ArrayRef, Int8Array, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use strata_spec::{DataType, Datum, Error, MergeEngine, Result};

use crate::layout::arrow_types::{array_of, datum_at};
use crate::layout::kv::{KeyValueLayout, RowKind};
use crate::merge::function::{is_retract, AggFunction, AggState, MergeConfig};
use crate::merge::sequence_group::{GroupRow, SequenceGroups};

/// What a lookup below the output level found for a key.
pub struct LookupResult {
    /// The older record (one row in file layout), when the merge engine needs the old value.
    pub record: Option<RecordBatch>,
}

/// Looks a key (arrow-row bytes of the key columns) up in the levels below a compaction's output, marking
/// the newest live copy deleted.
pub trait LookupHook: Send {
    /// Finds and marks the older copy of `key`; `None` when there is none.
    fn lookup(&mut self, key: &[u8]) -> Result<Option<LookupResult>>;
}

/// A sorted run: batches in file layout, ordered by key then sequence number.
pub type Run = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// A row of a batch kept in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Src {
    batch: usize,
    row: usize,
}

struct ArenaBatch {
    batch: RecordBatch,
    rows: Arc<Rows>,
}

struct Cursor {
    run: Run,
    arena: usize,
    rows: Arc<Rows>,
    seqs: arrow_buffer::ScalarBuffer<i64>,
    kinds: arrow_buffer::ScalarBuffer<i8>,
    len: usize,
    pos: usize,
    done: bool,
}

/// Merged output in file layout.
pub struct MergeIterator {
    layout: Arc<KeyValueLayout>,
    cfg: MergeConfig,
    drop_delete: bool,
    batch_size: usize,
    converter: RowConverter,
    /// Empty keys, shared by cursors that hold no batch.
    no_rows: Arc<Rows>,
    cursors: Vec<Cursor>,
    tree: Vec<usize>,
    arena: Vec<ArenaBatch>,
    group: Vec<(Src, i64, i8)>,
    group_runs: Vec<usize>,
    run_levels: Vec<i32>,
    lookup: Option<Box<dyn LookupHook>>,
    out: Vec<Merged>,
    value_types: Vec<DataType>,
    failed: bool,
    /// Changelog rows (source row, kind) of the groups merged since the last flush, when producing it.
    changelog: Option<Vec<(Merged, i8)>>,
    /// Assembled changelog batches waiting for [`MergeIterator::take_changelog`].
    changelog_out: Vec<RecordBatch>,
    /// Of the current group, taken before any reordering: whether it holds a level-0 record, and its
    /// "before" (the newest record from a deeper input, or the looked-up older copy).
    group_level0: bool,
    group_before: Option<(Src, i8)>,
}

#[derive(Clone)]
enum Merged {
    Row(Src),
    Columns { base: Src, values: Vec<Option<Src>> },
    Computed { base: Src, kind: i8, values: Vec<Option<Datum>> },
}

/// Where a fold of a key's records ended: the record the result builds on, the delete that ended the key
/// (no record after it), and the delete that last cleared it.
#[derive(Default)]
struct Fold {
    base: Option<Src>,
    deleted: Option<Src>,
    reset: Option<Src>,
}

impl MergeIterator {
    /// Merges `runs` of `layout` with `cfg`. With `drop_delete`, keys whose result is a retraction vanish
    /// (reads, and compactions into levels >= 1); otherwise the retraction is kept.
    pub fn new(
        layout: Arc<KeyValueLayout>,
        runs: Vec<Run>,
        cfg: MergeConfig,
        drop_delete: bool,
        batch_size: usize,
    ) -> Result<Self> {
        let fields: Vec<SortField> = layout
            .key_fields
            .iter()
            .map(|f| SortField::new(crate::layout::arrow_types::to_arrow(&f.data_type)))
            .collect();
        let converter = RowConverter::new(fields).map_err(|e| Error::internal_from("key columns", e))?;
        let value_types = layout.value_fields.iter().map(|f| f.data_type).collect();
        let no_rows = Arc::new(converter.empty_rows(0, 0));
        let mut it = MergeIterator {
            layout,
            cfg,
            drop_delete,
            batch_size: batch_size.max(1),
            converter,
            no_rows,
            cursors: Vec::with_capacity(runs.len()),
            tree: Vec::new(),
            arena: Vec::new(),
            group: Vec::new(),
            group_runs: Vec::new(),
            run_levels: Vec::new(),
            lookup: None,
            out: Vec::new(),
            value_types,
            failed: false,
            changelog: None,
            changelog_out: Vec::new(),
            group_level0: false,
            group_before: None,
        };
        for run in runs {
            let mut c = Cursor { run, done: false, ..it.spent_cursor() };
            it.load(&mut c)?;
            it.cursors.push(c);
        }
        it.build_tree();
        Ok(it)
    }

    /// Loads the next non-empty batch of a cursor into the arena, or marks it done.
    fn load(&mut self, c: &mut Cursor) -> Result<()> {
        loop {
            match c.run.next() {
                None => {
                    c.done = true;
                    return Ok(());
                }
                Some(batch) => {
                    let batch = batch?;
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    let k = self.layout.key_arity();
                    let rows = Arc::new(
                        self.converter
                            .convert_columns(&batch.columns()[..k])
                            .map_err(|e| Error::corrupt(format!("key columns: {e}")))?,
                    );
                    c.seqs = batch.column(self.layout.seq_index()).as_primitive::<Int64Type>().values().clone();
                    c.kinds = batch.column(self.layout.kind_index()).as_primitive::<Int8Type>().values().clone();
                    c.len = batch.num_rows();
                    c.pos = 0;
                    c.rows = rows.clone();
                    c.arena = self.arena.len();
                    self.arena.push(ArenaBatch { batch, rows });
                    return Ok(());
                }
            }
        }
    }

    /// Whether cursor `a`'s head sorts before cursor `b`'s (exhausted cursors sort last).
    fn less(&self, a: usize, b: usize) -> bool {
        let (ca, cb) = (&self.cursors[a], &self.cursors[b]);
        match (ca.done, cb.done) {
            (true, _) => false,
            (false, true) => true,
            _ => match ca.rows.row(ca.pos).cmp(&cb.rows.row(cb.pos)) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => (ca.seqs[ca.pos], a) < (cb.seqs[cb.pos], b),
            },
        }
    }

    fn build_tree(&mut self) {
        let k = self.cursors.len();
        // Index k is a sentinel that beats everything while the tree is built.
        self.tree = vec![k; k.max(1)];
        for leaf in (0..k).rev() {
            self.adjust(leaf);
        }
    }

    fn adjust(&mut self, leaf: usize) {
        let k = self.cursors.len();
        if k == 0 {
            return;
        }
        let mut winner = leaf;
        let mut t = (leaf + k) / 2;
        while t > 0 {
            let other = self.tree[t];
            let other_wins = other == k || (winner != k && self.less(other, winner));
            if other_wins {
                self.tree[t] = winner;
                winner = other;
            }
            t /= 2;
        }
        self.tree[0] = winner;
    }

    fn winner(&self) -> Option<usize> {
        let w = *self.tree.first()?;
        (w < self.cursors.len() && !self.cursors[w].done).then_some(w)
    }

    fn advance(&mut self, w: usize) -> Result<()> {
        let c = &mut self.cursors[w];
        c.pos += 1;
        if c.pos >= c.len {
            // Only a cursor at its batch's end is taken out (to load the next batch): building a placeholder
            // cursor on every row cost an allocation or two per merged row.
            let spent = self.spent_cursor();
            let mut c = std::mem::replace(&mut self.cursors[w], spent);
            self.load(&mut c)?;
            self.cursors[w] = c;
        }
        self.adjust(w);
        Ok(())
    }

    /// A placeholder for a cursor taken out while its next batch loads.
    fn spent_cursor(&self) -> Cursor {
        Cursor {
            run: Box::new(std::iter::empty()),
            arena: 0,
            rows: self.no_rows.clone(),
            seqs: Vec::<i64>::new().into(),
            kinds: Vec::<i8>::new().into(),
            len: 0,
            pos: 0,
            done: true,
        }
    }

    /// Sets the LSM level of each run (in the order given to [`MergeIterator::new`]), which lookup tables'
    /// merges need (see [`MergeConfig::lookup_levels`]).
    pub fn with_run_levels(mut self, run_levels: Vec<i32>) -> Self {
        self.run_levels = run_levels;
        self
    }

    /// Sets the LSM level of each run (in the order given to [`MergeIterator::new`]) and a lookup into the
    /// levels below the compaction's output: a key whose records all come from level 0 is looked up there,
    /// so that its older copy is marked deleted (the deletion-vector "lookup merge wrapper").
    pub fn with_lookup(mut self, run_levels: Vec<i32>, lookup: Box<dyn LookupHook>) -> Self {
        self.run_levels = run_levels;
        self.lookup = Some(lookup);
        self
    }

    /// Also produces the changelog of the keys this merge rewrites from level 0 (`changelog-producer =
    /// lookup`, Paimon's `LookupChangelogMergeFunctionWrapper`): a new key gives `+I`; a key with an older
    /// copy (from a deeper input, or found by the lookup) gives `-U` of the old and `+U` of the new, or `-D`
    /// of the old when the result is a retraction (merged values for partial-update and aggregation). Take
    /// the batches with [`take_changelog`](Self::take_changelog) after each output batch.
    pub fn with_changelog(mut self) -> Self {
        self.changelog = Some(Vec::new());
        self
    }

    /// Changelog batches (file layout) assembled so far, in key order.
    pub fn take_changelog(&mut self) -> Vec<RecordBatch> {
        std::mem::take(&mut self.changelog_out)
    }

    /// The row kind a merge result is written with.
    fn kind_of(&self, m: &Merged) -> i8 {
        match m {
            Merged::Row(s) => {
                self.arena[s.batch].batch.column(self.layout.kind_index()).as_primitive::<Int8Type>().value(s.row)
            }
            Merged::Columns { .. } => RowKind::Insert.to_byte(),
            Merged::Computed { kind, .. } => *kind,
        }
    }

    /// Records the current group's changelog rows; `results` are what its merge pushed to the output.
    fn record_changelog(&mut self, results: &[Merged]) {
        if self.changelog.is_none() || !self.group_level0 {
            return;
        }
        let before = self.group_before.map(|(b, _)| Merged::Row(b));
        let mut rows: Vec<(Merged, i8)> = Vec::new();
        if self.cfg.engine == MergeEngine::FirstRow {
            // An existing key keeps its first row: nothing changes.
            if before.is_none() {
                if let Some(g) = self.group.iter().find(|g| !is_retract(g.2)) {
                    rows.push((Merged::Row(g.0), RowKind::Insert.to_byte()));
                }
            }
        } else {
            // The key's state after the merge: its last result, or gone when the merge dropped it (a
            // retraction at a level that keeps none) or ended on a retraction.
            let live = |k: i8| !(self.cfg.ignore_delete && is_retract(k));
            let last_live = self.group.iter().rev().find(|g| live(g.2)).map(|g| g.2);
            let after = match results.last() {
                Some(m) if !is_retract(self.kind_of(m)) => Some(m.clone()),
                Some(_) => None,
                None if last_live.is_some_and(is_retract) => None,
                // Nothing live was merged: nothing changed.
                None => return,
            };
            let same_row = |a: &Merged, b: &Merged| matches!((a, b), (Merged::Row(x), Merged::Row(y)) if x == y);
            match (before, after) {
                (None, Some(a)) => rows.push((a, RowKind::Insert.to_byte())),
                (Some(b), None) => rows.push((b, RowKind::Delete.to_byte())),
                (Some(b), Some(a)) if !same_row(&a, &b) => {
                    rows.push((b, RowKind::UpdateBefore.to_byte()));
                    rows.push((a, RowKind::UpdateAfter.to_byte()));
                }
                _ => {}
            }
        }
        if let Some(pending) = self.changelog.as_mut() {
            pending.extend(rows);
        }
    }

    /// Assembles the pending changelog rows into a batch (while their arena batches are still held).
    fn flush_changelog(&mut self) -> Result<()> {
        let Some(pending) = self.changelog.as_mut() else { return Ok(()) };
        if pending.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(pending);
        let (items, kinds): (Vec<Merged>, Vec<i8>) = rows.into_iter().unzip();
        let columns = self.assemble(&items, Some(&kinds))?;
        self.changelog_out.push(
            RecordBatch::try_new(self.layout.file_schema.clone(), columns)
                .map_err(|e| Error::internal_from("changelog output", e))?,
        );
        Ok(())
    }

    /// Collects the records of the smallest key into `self.group`, oldest first.
    fn next_group(&mut self) -> Result<bool> {
        self.group.clear();
        self.group_runs.clear();
        let Some(w) = self.winner() else { return Ok(false) };
        let first = {
            let c = &self.cursors[w];
            (c.arena, c.pos)
        };
        while let Some(w) = self.winner() {
            let c = &self.cursors[w];
            let same = Arc::ptr_eq(&c.rows, &self.arena[first.0].rows) && c.pos == first.1
                || c.rows.row(c.pos) == self.arena[first.0].rows.row(first.1);
            if !same {
                break;
            }
            self.group.push((Src { batch: c.arena, row: c.pos }, c.seqs[c.pos], c.kinds[c.pos]));
            self.group_runs.push(w);
            self.advance(w)?;
        }
        self.lookup_older(first)?;
        if self.cfg.lookup_levels && !self.run_levels.is_empty() {
            self.keep_shallowest_high_level();
        }
        if self.changelog.is_some() {
            let level = |run: usize| self.run_levels.get(run).copied().unwrap_or(0);
            self.group_level0 = self.group_runs.iter().any(|&r| r != usize::MAX && level(r) == 0);
            self.group_before = self
                .group
                .iter()
                .zip(&self.group_runs)
                .filter(|(_, &r)| r == usize::MAX || level(r) > 0)
                .map(|(g, _)| *g)
                .max_by_key(|g| g.1)
                .filter(|g| !is_retract(g.2))
                .map(|g| (g.0, g.2));
        }
        if !self.cfg.sequence_fields.is_empty() && self.group.len() > 1 {
            let mut keyed = Vec::with_capacity(self.group.len());
            for (src, seq, kind) in self.group.drain(..) {
                let mut sk = Vec::with_capacity(self.cfg.sequence_fields.len());
                for &f in &self.cfg.sequence_fields {
                    let col = self.arena[src.batch].batch.column(self.layout.value_index(f));
                    sk.push(datum_at(col.as_ref(), src.row)?);
                }
                keyed.push((sk, (src, seq, kind)));
            }
            keyed.sort_by(|a, b| strata_spec::compare_rows(&a.0, &b.0).then(a.1 .1.cmp(&b.1 .1)));
            self.group.extend(keyed.into_iter().map(|(_, g)| g));
        }
        Ok(true)
    }

    /// Of the group's records from levels >= 1 keeps only the one at the shallowest level (the newest there);
    /// level-0 records and a looked-up record stay (Paimon's `LookupMergeFunction`).
    fn keep_shallowest_high_level(&mut self) {
        let level = |run: usize| self.run_levels.get(run).copied().unwrap_or(0);
        let chosen = self
            .group
            .iter()
            .zip(&self.group_runs)
            .enumerate()
            .filter(|(_, (_, &r))| r != usize::MAX && level(r) > 0)
            .min_by_key(|(_, (g, &r))| (level(r), std::cmp::Reverse(g.1)))
            .map(|(i, _)| i);
        let Some(chosen) = chosen else { return };
        let keep: Vec<bool> =
            self.group_runs.iter().enumerate().map(|(i, &r)| i == chosen || r == usize::MAX || level(r) <= 0).collect();
        let mut i = 0;
        self.group.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.group_runs.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }

    /// The lookup merge wrapper: (a) a key without a level-0 record needs nothing; (b) a key also present in
    /// a deeper input run needs nothing, that file is rewritten; (c) a key only in level 0 is looked up below
    /// the output level, the hit is marked deleted by the hook, and its record joins the group as the oldest
    /// (the "before" value that partial-update and aggregation merge with).
    fn lookup_older(&mut self, first: (usize, usize)) -> Result<()> {
        let Some(hook) = self.lookup.as_mut() else { return Ok(()) };
        let level = |run: usize| self.run_levels.get(run).copied().unwrap_or(0);
        let has_level0 = self.group_runs.iter().any(|&r| level(r) == 0);
        let has_deeper = self.group_runs.iter().any(|&r| level(r) > 0);
        if !has_level0 || has_deeper {
            return Ok(());
        }
        let key = self.arena[first.0].rows.row(first.1);
        let Some(before) = hook.lookup(key.as_ref())? else { return Ok(()) };
        if self.cfg.engine == MergeEngine::FirstRow {
            // The key already has its first row below: the level-0 records are later ones and go away.
            self.group.clear();
            self.group_runs.clear();
            return Ok(());
        }
        if let Some(batch) = before.record {
            let rows = Arc::new(
                self.converter
                    .convert_columns(&batch.columns()[..self.layout.key_arity()])
                    .map_err(|e| Error::corrupt(format!("key columns: {e}")))?,
            );
            let seq = batch.column(self.layout.seq_index()).as_primitive::<Int64Type>().value(0);
            let kind = batch.column(self.layout.kind_index()).as_primitive::<Int8Type>().value(0);
            let idx = self.arena.len();
            self.arena.push(ArenaBatch { batch, rows });
            self.group.insert(0, (Src { batch: idx, row: 0 }, seq, kind));
            self.group_runs.insert(0, usize::MAX);
        }
        Ok(())
    }

    fn value(&self, src: Src, i: usize) -> Result<Option<Datum>> {
        datum_at(self.arena[src.batch].batch.column(self.layout.value_index(i)).as_ref(), src.row)
    }

    /// Queues a result that follows a delete which reset the key. Where retractions are kept (level 0), the
    /// delete is written first, so a later merge with older copies of the key (found by lookup in deeper
    /// levels) still starts from nothing.
    fn push_after_reset(&self, out: &mut Vec<Merged>, reset: Option<Src>, result: Merged) {
        if let (Some(d), false) = (reset, self.drop_delete) {
            out.push(Merged::Row(d));
        }
        out.push(result);
    }

    /// Applies the merge engine to `self.group`.
    fn merge_group(&self, out: &mut Vec<Merged>) -> Result<()> {
        let cfg = &self.cfg;
        let live = |k: i8| !(cfg.ignore_delete && is_retract(k));
        match cfg.engine {
            MergeEngine::Deduplicate => {
                let Some(&(src, _, kind)) = self.group.iter().rev().find(|g| live(g.2)) else { return Ok(()) };
                if !(is_retract(kind) && self.drop_delete) {
                    out.push(Merged::Row(src));
                }
                Ok(())
            }
            MergeEngine::FirstRow => {
                out.extend(self.group.iter().find(|g| !is_retract(g.2)).map(|&(src, _, _)| Merged::Row(src)));
                Ok(())
            }
            MergeEngine::PartialUpdate if !cfg.sequence_groups.is_empty() => self.merge_sequence_groups(out),
            MergeEngine::PartialUpdate => {
                let mut values: Vec<Option<Src>> = vec![None; self.value_types.len()];
                let fold = self.fold_group(
                    &mut values,
                    |values| values.iter_mut().for_each(|v| *v = None),
                    |_, _| {
                        Err(Error::unsupported(
                            "partial-update received a retract record; set ignore-delete or partial-update.remove-record-on-delete",
                        ))
                    },
                    |values, src| {
                        let batch = &self.arena[src.batch].batch;
                        for (i, v) in values.iter_mut().enumerate() {
                            if !batch.column(self.layout.value_index(i)).is_null(src.row) {
                                *v = Some(src);
                            }
                        }
                        Ok(())
                    },
                )?;
                self.push_folded(out, fold, |base| Ok(Merged::Columns { base, values }))
            }
            MergeEngine::Aggregation => {
                let mut states = vec![AggState::default(); self.value_types.len()];
                let fold = self.fold_group(
                    &mut states,
                    |states| states.iter_mut().for_each(AggState::reset),
                    |states, src| {
                        for (i, s) in states.iter_mut().enumerate() {
                            if cfg.ignore_retract[i] {
                                continue;
                            }
                            s.retract(cfg.aggregators[i], self.value(src, i)?, &self.layout.value_fields[i].name)?;
                        }
                        Ok(())
                    },
                    |states, src| {
                        for (i, s) in states.iter_mut().enumerate() {
                            s.add(cfg.aggregators[i], self.value(src, i)?)?;
                        }
                        Ok(())
                    },
                )?;
                self.push_folded(out, fold, |base| {
                    let mut values: Vec<Option<Datum>> = states.iter().map(AggState::value).collect();
                    // Key columns always carry the key.
                    for (i, f) in cfg.aggregators.iter().enumerate() {
                        if *f == AggFunction::PrimaryKey {
                            values[i] = self.value(base, i)?;
                        }
                    }
                    Ok(Merged::Computed { base, kind: RowKind::Insert.to_byte(), values })
                })
            }
        }
    }

    /// Partial-update with sequence groups (`crate::merge::sequence_group`), record by record as Paimon's
    /// `PartialUpdateMergeFunction`: retractions clear their groups instead of being refused; a key that
    /// received no insert, or whose last retraction removed the row, ends as a DELETE.
    fn merge_sequence_groups(&self, out: &mut Vec<Merged>) -> Result<()> {
        if let ([(src, _, kind)], false) = (&self.group[..], self.cfg.lookup_levels) {
            let (src, kind) = (*src, *kind);
            // Merging on read, a lone record is not merged (Paimon's `ReducerMergeFunctionWrapper` hands it on
            // as it is, values of a group without its sequence included); lookup compactions merge it (Paimon's
            // `LookupMergeFunction`).
            if !(is_retract(kind) && (self.cfg.ignore_delete || self.drop_delete)) {
                out.push(Merged::Row(src));
            }
            return Ok(());
        }
        let groups = &self.cfg.sequence_groups;
        let width = self.value_types.len();
        let mut row = GroupRow::new(width);
        let (mut filled, mut inserted, mut removed, mut base) = (false, false, false, None);
        for &(src, _, kind) in &self.group {
            let incoming = (0..width).map(|i| self.value(src, i)).collect::<Result<Vec<_>>>()?;
            removed = false;
            if is_retract(kind) {
                if self.cfg.ignore_delete {
                    continue;
                }
                if !filled {
                    row = SequenceGroups::start_from(&incoming);
                    filled = true;
                }
                base = Some(src);
                let fields = &self.layout.value_fields;
                removed = groups.retract(&mut row, &incoming, kind == RowKind::Delete.to_byte(), fields)?;
                continue;
            }
            base = Some(src);
            groups.add(&mut row, &incoming)?;
            (filled, inserted) = (true, true);
        }
        let Some(base) = base else { return Ok(()) };
        let kind = if removed || !inserted { RowKind::Delete } else { RowKind::Insert };
        if kind == RowKind::Delete && self.drop_delete {
            return Ok(());
        }
        out.push(Merged::Computed { base, kind: kind.to_byte(), values: row.values });
        Ok(())
    }

    /// Folds `self.group` into `state`, as partial-update and aggregation both do: retractions are skipped
    /// under `ignore-delete`; a DELETE under `remove-record-on-delete` clears the key (`reset`); any other
    /// retraction goes to `retract` and becomes the base; every other record goes to `add` and becomes the
    /// base, clearing a delete before it.
    fn fold_group<S>(
        &self,
        state: &mut S,
        reset: impl Fn(&mut S),
        retract: impl Fn(&mut S, Src) -> Result<()>,
        add: impl Fn(&mut S, Src) -> Result<()>,
    ) -> Result<Fold> {
        let cfg = &self.cfg;
        let mut fold = Fold::default();
        for &(src, _, kind) in &self.group {
            if is_retract(kind) {
                if cfg.ignore_delete {
                    continue;
                }
                if cfg.remove_record_on_delete && kind == RowKind::Delete.to_byte() {
                    reset(state);
                    fold.base = None;
                    fold.deleted = Some(src);
                    fold.reset = Some(src);
                    continue;
                }
                retract(state, src)?;
                fold.base = Some(src);
                continue;
            }
            fold.deleted = None;
            fold.base = Some(src);
            add(state, src)?;
        }
        Ok(fold)
    }

    /// Queues what a fold ends in: the result `make` builds on its base, or the delete that ended it (kept
    /// only where retractions are), or nothing.
    fn push_folded(&self, out: &mut Vec<Merged>, fold: Fold, make: impl FnOnce(Src) -> Result<Merged>) -> Result<()> {
        match (fold.base, fold.deleted) {
            (Some(base), _) => self.push_after_reset(out, fold.reset, make(base)?),
            (None, Some(d)) if !self.drop_delete => out.push(Merged::Row(d)),
            _ => {}
        }
        Ok(())
    }

    /// The file-layout columns of `out` (rows of the arena, or merged values), with the row kinds of
    /// `kinds` when given.
    fn assemble(&self, out: &[Merged], kinds: Option<&[i8]>) -> Result<Vec<ArrayRef>> {
        let schema = self.layout.file_schema.clone();
        let base_of = |m: &Merged| match m {
            Merged::Row(s) => *s,
            Merged::Columns { base, .. } | Merged::Computed { base, .. } => *base,
        };
        // Rows are named by (arena batch, row); the index one past the arena is a one-row null array, for a
        // value that no record supplied.
        let null_idx = self.arena.len();
        let interleave_col = |col: usize, idx: &[(usize, usize)]| -> Result<ArrayRef> {
            let mut arrays: Vec<&dyn Array> = self.arena.iter().map(|a| a.batch.column(col).as_ref()).collect();
            let null = idx.iter().any(|i| i.0 == null_idx).then(|| new_null_array(schema.field(col).data_type(), 1));
            if let Some(null) = &null {
                arrays.push(null.as_ref());
            }
            arrow_select::interleave::interleave(&arrays, idx).map_err(|e| Error::internal_from("merge output", e))
        };
        let index_of = |s: Option<Src>| s.map_or((null_idx, 0), |s| (s.batch, s.row));
        let base_idx: Vec<(usize, usize)> = out.iter().map(|m| index_of(Some(base_of(m)))).collect();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        for col in 0..=self.layout.seq_index() {
            columns.push(interleave_col(col, &base_idx)?);
        }
        let kinds: Vec<i8> = match kinds {
            Some(k) => k.to_vec(),
            None => out.iter().map(|m| self.kind_of(m)).collect(),
        };
        columns.push(Arc::new(Int8Array::from(kinds)));
        let computed = out.iter().any(|m| matches!(m, Merged::Computed { .. }));
        let partial = out.iter().any(|m| matches!(m, Merged::Columns { .. }));
        for i in 0..self.value_types.len() {
            let col = self.layout.value_index(i);
            if computed {
                let mut values = Vec::with_capacity(out.len());
                for m in out {
                    values.push(match m {
                        Merged::Computed { values, .. } => values[i].clone(),
                        Merged::Row(s) => self.value(*s, i)?,
                        Merged::Columns { values, .. } => match values[i] {
                            Some(s) => self.value(s, i)?,
                            None => None,
                        },
                    });
                }
                columns.push(array_of(&self.value_types[i], &values)?);
            } else if !partial {
                // Every row's values come from its base record: one index serves every column.
                columns.push(interleave_col(col, &base_idx)?);
            } else {
                let idx: Vec<(usize, usize)> = out
                    .iter()
                    .map(|m| {
                        index_of(match m {
                            Merged::Row(s) => Some(*s),
                            Merged::Columns { values, .. } => values[i],
                            Merged::Computed { base, .. } => Some(*base),
                        })
                    })
                    .collect();
                columns.push(interleave_col(col, &idx)?);
            }
        }
        Ok(columns)
    }

    /// Builds the output batch from `self.out` and resets the arena to the batches still in use.
    fn flush(&mut self) -> Result<RecordBatch> {
        self.flush_changelog()?;
        let schema = self.layout.file_schema.clone();
        let out = std::mem::take(&mut self.out);
        let columns = self.assemble(&out, None)?;
        // Keep only the batches the cursors still point into.
        let mut kept = Vec::new();
        for c in self.cursors.iter_mut().filter(|c| !c.done) {
            if let Some(pos) = kept.iter().position(|&(old, _)| old == c.arena) {
                c.arena = kept[pos].1;
            } else {
                kept.push((c.arena, kept.len()));
                c.arena = kept.len() - 1;
            }
        }
        let mut old = std::mem::take(&mut self.arena);
        let mut fresh: Vec<Option<ArenaBatch>> = old.drain(..).map(Some).collect();
        for (o, _) in &kept {
            if let Some(b) = fresh[*o].take() {
                self.arena.push(b);
            }
        }
        RecordBatch::try_new(schema, columns).map_err(|e| Error::internal_from("merge output", e))
    }
}

impl Iterator for MergeIterator {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let mut step = || -> Result<Option<RecordBatch>> {
            while self.out.len() < self.batch_size {
                if !self.next_group()? {
                    break;
                }
                let mut out = std::mem::take(&mut self.out);
                let start = out.len();
                let merged = self.merge_group(&mut out);
                if merged.is_ok() {
                    self.record_changelog(&out[start..]);
                }
                self.out = out;
                merged?;
            }
            if self.out.is_empty() {
                // The end: changelog rows of groups that produced no output still need assembling.
                self.flush_changelog()?;
                return Ok(None);
            }
            self.flush().map(Some)
        };
        let r = step();
        if r.is_err() {
            self.failed = true;
        }
        r.transpose()
    }
}
