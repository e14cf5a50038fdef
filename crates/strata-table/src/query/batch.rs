//! Many keys in one lookup ([`TableQuery::get_many`]): keys are routed and grouped by the files that may hold
//! them; missing lookup files are built side by side; each file is probed for all its keys and its rows are
//! read group by group (one read of a group for every key in it) and decoded column by column; the answer is
//! one batch in the order of the keys asked, not a batch per key.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use strata_dv::DeletionVector;
use strata_format::lookup::Probe;
use strata_io::ScratchDir;
use strata_spec::{Datum, Error, Result};

use super::{keep_all, Candidate, State, TableQuery, View};
use crate::point_read::{merge_copies, row_is_live, RoutedKey};
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
pub(super) struct Plan {
    pub(super) view: Arc<View>,
    pub(super) snapshot_id: Option<i64>,
    /// Each key asked, as the lookup files hold keys (arrow-row bytes).
    key_bytes: Vec<Vec<u8>>,
    /// The files that may hold some of the keys, each with the indices of those keys.
    files: Vec<(Arc<Candidate>, Vec<usize>)>,
    /// Files with no lookup file yet, and deletion vectors not loaded yet.
    pub(super) missing: Vec<Arc<Candidate>>,
    pub(super) missing_vectors: Vec<DeletionFile>,
}

/// One file's rows of the keys it was asked for: the rows (file layout), and per row read the key asking.
type FileRows = (RecordBatch, Vec<(usize, usize)>);

/// A copy of a key found: (key index, the file's place among the bucket's files, file batch, row).
type Copy = (usize, usize, usize, usize);

/// Every key's copies: the rows read per file (file layout, with the file's level) and each copy found.
type Copies = (Vec<(RecordBatch, i32)>, Vec<Copy>);

impl State {
    /// The files that may hold each of `keys`, and what is missing to look in them.
    pub(super) fn plan(&self, keys: &[Vec<Option<Datum>>]) -> Result<Plan> {
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
            let dv = match &c.deletion_file {
                Some(d) => self.vectors.get(&(d.path.clone(), d.meta.offset)).cloned(),
                None => None,
            };
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

    /// The rows of `keys` in `c`'s lookup file, minus those `dv` deletes, with the key each row answers;
    /// `Ok(None)` when there are none, `Err(None)` when there is no usable lookup file.
    fn rows_of_keys(
        &mut self,
        c: &Candidate,
        keys: &[usize],
        key_bytes: &[Vec<u8>],
        dv: Option<&DeletionVector>,
    ) -> std::result::Result<Option<FileRows>, Option<Error>> {
        let mut wanted: Vec<(u64, usize)> = Vec::new();
        for &k in keys {
            match self.cache.probe(&c.path, &key_bytes[k]) {
                Probe::NotCached => return Err(None),
                Probe::Positions(p) => {
                    wanted.extend(p.map(|p| p as u64).filter(|&p| !dv.is_some_and(|d| d.is_deleted(p))).map(|p| (p, k)))
                }
            }
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

impl TableQuery {
    /// The rows of every key in `keys` (each the values of every primary-key column, in the table's
    /// primary-key order) in the query's snapshot, as one batch in the order asked. Keys are grouped by the
    /// files that may hold them, so each file is probed and read once for all its keys; lookup files missing
    /// for them are built side by side first.
    pub fn get_many(&self, keys: &[Vec<Option<Datum>>]) -> Result<FoundRows> {
        let _span = tracing::debug_span!("query_get_many", keys = keys.len()).entered();
        // Bounded: a round is redone only when the query moved to another snapshot meanwhile.
        for _ in 0..8 {
            // 1. Under the lock: the files that may hold the keys, and what is missing for them.
            let plan = self.state.lock().plan(keys)?;
            let view = plan.view.clone();
            // 2. Without the lock: build lookup files and read deletion vectors.
            let built = strata_io::parallel_map(&plan.missing, strata_io::cores(), |c| view.build(&self.scratch, c));
            let mut vectors = Vec::with_capacity(plan.missing_vectors.len());
            for d in &plan.missing_vectors {
                vectors.push(((d.path.clone(), d.meta.offset), Arc::new(d.read(view.table.io().as_ref())?)));
            }
            // 3. Under the lock again: keep what was built and read every key's rows.
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
            let (batches, copies) = st.read_planned(&self.scratch, &plan)?;
            drop(st);
            return assemble(&view, batches, copies, keys.len());
        }
        Err(Error::invalid("get", "the query moved to another snapshot during each of 8 attempts"))
    }
}

/// Each key's row from its copies (merged with the table's merge engine when it has several), as one batch
/// of the table's columns in key order.
fn assemble(view: &View, batches: Vec<(RecordBatch, i32)>, mut copies: Vec<Copy>, keys: usize) -> Result<FoundRows> {
    let layout = &view.layout;
    let bad = |e: arrow_schema::ArrowError| Error::invalid("get", e.to_string());
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
