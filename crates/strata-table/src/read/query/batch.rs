//! Many keys in one lookup ([`TableQuery::get_many`]): keys are routed and grouped by the files that may hold
//! them; missing lookup files are built side by side; each file is probed for all its keys and its rows are
//! read group by group (one read of a group for every key in it) and decoded column by column; the answer is
//! one batch in the order of the keys asked, not a batch per key.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;
use strata_dv::DeletionVector;
use strata_format::lookup::{PackedRow, PackedValue, Probe};
use strata_io::ScratchDir;
use strata_spec::{Datum, Error, Result};

use super::{keep_all, Candidate, State, TableQuery, View};
use crate::read::point_read::{merge_copies, row_is_live, RoutedKey};
use crate::table::DeletionFile;

/// The rows of many keys looked up at once.
#[derive(Debug, Clone)]
pub struct FoundRows {
    /// The rows found (the table's columns), in the order of the keys asked; a key asked twice has its row
    /// twice.
    pub rows: RecordBatch,
    /// Whether each key asked was found (absent and deleted keys have no row in `rows`).
    pub found: Vec<bool>,
}

/// What one lookup needs, worked out under the query's lock.
struct Plan {
    view: Arc<View>,
    snapshot_id: Option<i64>,
    /// Each key asked, as the lookup files hold keys (arrow-row bytes).
    key_bytes: Vec<Vec<u8>>,
    /// The files that may hold some of the keys, each with the indices of those keys.
    files: Vec<(Arc<Candidate>, Vec<usize>)>,
    /// Files with no lookup file yet, and deletion vectors not loaded yet.
    missing: Vec<Arc<Candidate>>,
    missing_vectors: Vec<DeletionFile>,
}

/// One file's rows of the keys it was asked for: the rows (file layout), and per row read the key asking.
type FileRows = (RecordBatch, Vec<(usize, usize)>);

/// A copy of a key found: (key index, the file's place among the bucket's files, file batch, row).
type Copy = (usize, usize, usize, usize);

/// Every key's copies: the rows read per file (file layout, with the file's level) and each copy found.
type Copies = (Vec<(RecordBatch, i32)>, Vec<Copy>);

impl State {
    /// The files that may hold each of `keys`, and what is missing to look in them.
    fn plan(&self, keys: &[Vec<Option<Datum>>]) -> Result<Plan> {
        let view = self.view.clone();
        let mut key_bytes = Vec::with_capacity(keys.len());
        let mut files: Vec<(Arc<Candidate>, Vec<usize>)> = Vec::new();
        let mut file_at: HashMap<*const Candidate, usize> = HashMap::new();
        for (i, key) in keys.iter().enumerate() {
            let RoutedKey { partition, bucket, key } = view.router.route(key)?;
            let bytes = view.keys.encode(&key)?;
            let partition = partition.serialize();
            let total = self.partition_buckets.get(&partition).copied().unwrap_or(0);
            let in_bucket: Vec<&Arc<Candidate>> = match bucket.bucket_for(total)? {
                Some(b) => self.buckets.get(&(partition, b)).into_iter().flatten().collect(),
                // Dynamic and postpone buckets: every bucket of the partition may hold the key.
                None => self
                    .buckets
                    .iter()
                    .filter(|((p, b), _)| *p == partition && *b >= 0)
                    .flat_map(|(_, files)| files.iter())
                    .collect(),
            };
            for c in in_bucket {
                if c.min.as_slice() <= bytes.as_slice() && bytes.as_slice() <= c.max.as_slice() {
                    let at = *file_at.entry(Arc::as_ptr(c)).or_insert_with(|| {
                        files.push((c.clone(), Vec::new()));
                        files.len() - 1
                    });
                    files[at].1.push(i);
                }
            }
            key_bytes.push(bytes);
        }
        let missing = files.iter().map(|(c, _)| c).filter(|c| !self.cache.contains(&c.path)).cloned().collect();
        let mut missing_vectors: Vec<DeletionFile> = files
            .iter()
            .filter_map(|(c, _)| c.deletion_file.clone())
            .filter(|d| !self.vectors.contains_key(&(d.path.clone(), d.meta.offset)))
            .collect();
        missing_vectors.sort_by(|a, b| (&a.path, a.meta.offset).cmp(&(&b.path, b.meta.offset)));
        missing_vectors.dedup_by(|a, b| a.path == b.path && a.meta.offset == b.meta.offset);
        let snapshot_id = self.snapshot.as_ref().map(|s| s.id);
        Ok(Plan { view, snapshot_id, key_bytes, files, missing, missing_vectors })
    }

    /// Every planned key's copies.
    fn read_planned(&mut self, scratch: &ScratchDir, plan: &Plan) -> Result<Copies> {
        let hits: Vec<Arc<Candidate>> = plan.files.iter().map(|(c, _)| c.clone()).collect();
        let (mut batches, mut copies) = (Vec::new(), Vec::new());
        for (c, keys) in &plan.files {
            let dv = self.vector_of(c);
            let read = match self.rows_of_keys(c, keys, &plan.key_bytes, dv.as_deref()) {
                Ok(read) => read,
                Err(_) => {
                    // Never built, evicted or unreadable (then dropped): built here, under the lock, so that
                    // nothing can take it away before it is read.
                    let f = self.view.build(scratch, c)?;
                    self.cache.insert(c.path.clone(), f);
                    self.cache.evict(&keep_all(&hits));
                    match self.rows_of_keys(c, keys, &plan.key_bytes, dv.as_deref()) {
                        Ok(read) => read,
                        Err(Some(e)) => return Err(e),
                        Err(None) => return Err(Error::invalid("get", "a local lookup file vanished")),
                    }
                }
            };
            if let Some((rows, owners)) = read {
                copies.extend(owners.into_iter().map(|(key, row)| (key, c.order, batches.len(), row)));
                batches.push((rows, c.meta.level));
            }
        }
        Ok((batches, copies))
    }

    /// The deletion vector of `c`, loaded.
    fn vector_of(&self, c: &Candidate) -> Option<Arc<DeletionVector>> {
        let d = c.deletion_file.as_ref()?;
        self.vectors.get(&(d.path.clone(), d.meta.offset)).cloned()
    }

    /// The rows of `keys` in `c`'s lookup file, minus those `dv` deletes, with the key each row answers;
    /// `Ok(None)` when there are none, `Err(None)` when there is no usable lookup file.
    fn rows_of_keys(
        &mut self,
        c: &Candidate,
        keys: &[usize],
        key_bytes: &[Vec<u8>],
        dv: Option<&DeletionVector>,
    ) -> std::result::Result<Option<FileRows>, Option<Error>> {
        // Probed in key order: each search starts where the previous key's began.
        let mut sorted: Vec<usize> = keys.to_vec();
        sorted.sort_by(|&a, &b| key_bytes[a].cmp(&key_bytes[b]));
        let probes: Vec<&[u8]> = sorted.iter().map(|&k| key_bytes[k].as_slice()).collect();
        let found = self.cache.probe_sorted(&c.path, &probes).ok_or(None)?;
        let mut wanted: Vec<(u64, usize)> = Vec::new();
        for (&k, p) in sorted.iter().zip(found) {
            wanted.extend(live_positions(p, dv).map(|p| (p, k)));
        }
        if wanted.is_empty() {
            return Ok(None);
        }
        wanted.sort_unstable();
        let mut positions: Vec<u64> = wanted.iter().map(|&(p, _)| p).collect();
        positions.dedup();
        let schema = self.view.layout.file_schema.clone();
        let rows = self.cache.read_rows(&c.path, &positions, &schema).map_err(Some)?;
        if rows.num_rows() != positions.len() {
            return Err(Some(Error::corrupt(format!(
                "{}: {} rows read of {}",
                c.path,
                rows.num_rows(),
                positions.len()
            ))));
        }
        // Row r of `rows` is the r-th distinct position.
        let mut owners = Vec::with_capacity(wanted.len());
        let mut row = 0;
        for (i, &(p, k)) in wanted.iter().enumerate() {
            if i > 0 && wanted[i - 1].0 != p {
                row += 1;
            }
            owners.push((k, row));
        }
        Ok(Some((rows, owners)))
    }
}

/// One key's row as [`TableQuery::get_row`] finds it.
#[derive(Debug, Clone)]
pub enum FoundRow {
    /// The row as its local lookup file holds it, read in place without decoding (a lone copy).
    Packed(PackedTableRow),
    /// The row decoded: merged from several copies, or from a lookup file without a packed form.
    Batch(RecordBatch),
}

/// A row of the table in a local lookup file, not decoded: its values are read in place.
#[derive(Debug, Clone)]
pub struct PackedTableRow {
    row: PackedRow,
    /// The file column of the table's first column (the table's columns follow in order).
    first: usize,
    schema: SchemaRef,
}

impl PackedTableRow {
    /// The table's columns, as a scan returns them.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Calls `f` with each of the table's columns (its index in [`PackedTableRow::schema`]) and its value, in
    /// order. Bytes that do not parse are an error.
    pub fn for_each_value(&self, f: &mut dyn FnMut(usize, PackedValue<'_>)) -> Result<()> {
        let (first, n) = (self.first, self.schema.fields().len());
        self.row.for_each_value(&mut |c, v| {
            if (first..first + n).contains(&c) {
                f(c - first, v);
            }
        })
    }
}

impl TableQuery {
    /// The row of `key`, as [`TableQuery::get`], handed out as stored when the lookup file holds its only
    /// copy in packed form (no arrays are built: for callers that turn the row into values of their own,
    /// such as Python's), decoded otherwise. `None` when absent or deleted.
    pub fn get_row(&self, key: &[Option<Datum>]) -> Result<Option<FoundRow>> {
        let keys = std::slice::from_ref(&key.to_vec()).to_vec();
        let (mut st, plan) = self.prepare(&keys)?;
        // The key's copies: (file, position) of every row no deletion vector removes.
        let mut copies: Vec<(usize, u64)> = Vec::new();
        let mut evicted = false;
        for (f, (c, _)) in plan.files.iter().enumerate() {
            let dv = st.vector_of(c);
            match st.cache.probe(&c.path, &plan.key_bytes[0]) {
                Probe::Positions(p) => copies.extend(live_positions(p, dv.as_deref()).map(|p| (f, p))),
                // Gone meanwhile (another lookup's eviction): the general road below rebuilds it.
                Probe::NotCached => evicted = true,
            }
        }
        let layout = &plan.view.layout;
        let dedup = plan.view.merge.engine == strata_spec::MergeEngine::Deduplicate;
        match copies.as_slice() {
            [] if !evicted => return Ok(None),
            [(f, position)] if dedup && !evicted => {
                let c = &plan.files[*f].0;
                if let Some(row) = st.cache.packed_row(&c.path, *position)? {
                    let mut kind = None;
                    row.for_each_value(&mut |i, v| {
                        if let (true, PackedValue::Int(k)) = (i == layout.kind_index(), v) {
                            kind = Some(k);
                        }
                    })?;
                    let Some(kind) = kind else {
                        return Err(Error::corrupt(format!("{}: a row kind that is not a TINYINT", c.path)));
                    };
                    let kind = i8::try_from(kind).map_err(|_| Error::corrupt("a row kind out of range"))?;
                    return Ok(match strata_format::RowKind::from_byte(kind)? {
                        strata_format::RowKind::Insert | strata_format::RowKind::UpdateAfter => {
                            let schema = layout.value_schema.clone();
                            Some(FoundRow::Packed(PackedTableRow { row, first: layout.value_index(0), schema }))
                        }
                        strata_format::RowKind::Delete | strata_format::RowKind::UpdateBefore => None,
                    });
                }
            }
            _ => {}
        }
        let (batches, copies) = st.read_planned(&self.scratch, &plan)?;
        drop(st);
        let found = assemble(&plan.view, batches, copies, 1)?;
        Ok(found.found[0].then_some(FoundRow::Batch(found.rows)))
    }

    /// Under the lock, the plan for `keys` with every lookup file and deletion vector it needs in place
    /// (built and read without the lock first).
    fn prepare(&self, keys: &[Vec<Option<Datum>>]) -> Result<(parking_lot::MutexGuard<'_, State>, Plan)> {
        // Bounded: a round is redone only when the query moved to another snapshot meanwhile.
        for _ in 0..8 {
            // 1. Under the lock: the files that may hold the keys, and what is missing for them. With nothing
            // missing, the lookup goes on under this same lock.
            let st = self.state.lock();
            let plan = st.plan(keys)?;
            if plan.missing.is_empty() && plan.missing_vectors.is_empty() {
                return Ok((st, plan));
            }
            drop(st);
            let view = plan.view.clone();
            // 2. Without the lock: build lookup files and read deletion vectors.
            let built = strata_io::parallel_map(&plan.missing, strata_io::cores(), |c| view.build(&self.scratch, c));
            let mut vectors = Vec::with_capacity(plan.missing_vectors.len());
            for d in &plan.missing_vectors {
                vectors.push(((d.path.clone(), d.meta.offset), Arc::new(d.read(view.table.io().as_ref())?)));
            }
            // 3. Under the lock again: keep what was built.
            let mut st = self.state.lock();
            if st.snapshot.as_ref().map(|s| s.id) != plan.snapshot_id || !Arc::ptr_eq(&st.view, &view) {
                continue;
            }
            if !built.is_empty() {
                for (c, f) in plan.missing.iter().zip(built) {
                    st.cache.insert(c.path.clone(), f?);
                }
                let hits: Vec<Arc<Candidate>> = plan.files.iter().map(|(c, _)| c.clone()).collect();
                st.cache.evict(&keep_all(&hits));
            }
            st.vectors.extend(vectors);
            return Ok((st, plan));
        }
        Err(Error::invalid("get", "the query moved to another snapshot during each of 8 attempts"))
    }

    /// The rows of every key in `keys` (each the values of every primary-key column, in the table's
    /// primary-key order) in the query's snapshot, as one batch in the order asked. Keys are grouped by the
    /// files that may hold them, so each file is probed and read once for all its keys; lookup files missing
    /// for them are built side by side first.
    pub fn get_many(&self, keys: &[Vec<Option<Datum>>]) -> Result<FoundRows> {
        let _span = tracing::debug_span!("query_get_many", keys = keys.len()).entered();
        let (mut st, plan) = self.prepare(keys)?;
        let (batches, copies) = st.read_planned(&self.scratch, &plan)?;
        drop(st);
        assemble(&plan.view, batches, copies, keys.len())
    }
}

/// The positions of `found` that `dv` does not delete.
fn live_positions(found: std::ops::Range<usize>, dv: Option<&DeletionVector>) -> impl Iterator<Item = u64> + '_ {
    found.map(|p| p as u64).filter(move |&p| !dv.is_some_and(|d| d.is_deleted(p)))
}

/// Each key's row from its copies (merged with the table's merge engine when it has several), as one batch
/// of the table's columns in key order.
fn assemble(view: &View, batches: Vec<(RecordBatch, i32)>, mut copies: Vec<Copy>, keys: usize) -> Result<FoundRows> {
    let layout = &view.layout;
    let bad = |e: arrow_schema::ArrowError| Error::internal_from("get", e);
    // By key, then in the order of the bucket's files (the merge's run order).
    copies.sort_unstable();
    let dedup = view.merge.engine == strata_spec::MergeEngine::Deduplicate;
    let value_columns: Vec<usize> = (0..layout.value_fields.len()).map(|i| layout.value_index(i)).collect();
    let mut sources = batches
        .iter()
        .map(|(b, _)| {
            let columns = value_columns.iter().map(|&c| b.column(c).clone()).collect();
            RecordBatch::try_new(layout.value_schema.clone(), columns).map_err(bad)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut found = vec![false; keys];
    let mut picks: Vec<(usize, usize)> = Vec::with_capacity(copies.len());
    for group in copies.chunk_by(|a, b| a.0 == b.0) {
        let key = group[0].0;
        let pick = match group {
            [(_, _, b, row)] if dedup => row_is_live(layout, &batches[*b].0, *row)?.then_some((*b, *row)),
            _ => {
                let rows =
                    group.iter().map(|&(_, _, b, row)| (vec![batches[b].0.slice(row, 1)], batches[b].1)).collect();
                merge_copies(layout, &view.merge, rows)?.map(|merged| {
                    sources.push(merged);
                    (sources.len() - 1, 0)
                })
            }
        };
        if let Some(pick) = pick {
            found[key] = true;
            picks.push(pick);
        }
    }
    if picks.is_empty() {
        return Ok(FoundRows { rows: RecordBatch::new_empty(layout.value_schema.clone()), found });
    }
    // One key found, alone in its file's rows: those rows as they are (a single key's lookup).
    if let [(s, 0)] = picks.as_slice() {
        if sources[*s].num_rows() == 1 {
            return Ok(FoundRows { rows: sources.swap_remove(*s), found });
        }
    }
    let columns = (0..value_columns.len())
        .map(|c| {
            let parts: Vec<&dyn Array> = sources.iter().map(|s| s.column(c).as_ref()).collect();
            arrow_select::interleave::interleave(&parts, &picks).map_err(bad)
        })
        .collect::<Result<Vec<_>>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(picks.len()));
    let rows = RecordBatch::try_new_with_options(layout.value_schema.clone(), columns, &options).map_err(bad)?;
    Ok(FoundRows { rows, found })
}
