//! Helpers of the tag, time-travel and rollback tests: a small key-value table written in rounds of puts and
//! deletes against a model kept per snapshot, the files snapshots and tags need, and a FileIO that runs a
//! hook on chosen operations (to land a concurrent commit or tag in the middle of another operation).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use strata::spec::{Datum, Snapshot};
use strata::table::ExpireOptions;
use strata::table::{read_builder, SCAN_TAG_NAME};
use strata::{FileIO, LocalFileIO, ReadBuilder, Table, TableWriter};

pub(crate) type Rows = BTreeMap<i64, i64>;

pub(crate) fn local() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

/// An (id BIGINT, v BIGINT) table with 2 buckets, in deletion-vector or merge-on-read mode.
pub(crate) fn kv_table(dir: &Path, dv: bool) -> Table {
    let dv = dv.to_string();
    let options =
        [("bucket", "2"), ("deletion-vectors.enabled", dv.as_str()), ("num-sorted-run.compaction-trigger", "3")];
    Table::create(local(), dir.join("db.db/t").to_str().unwrap(), super::fixtures::kv_schema(&options)).unwrap()
}

/// Round `r` of updates and deletes; `model` follows.
pub(crate) fn round_rows(w: &mut TableWriter, r: i64, model: &mut Rows) {
    round_rows_over(w, r, 60, model);
}

/// Round `r` of updates and deletes over keys `0..keys`; `model` follows.
pub(crate) fn round_rows_over(w: &mut TableWriter, r: i64, keys: i64, model: &mut Rows) {
    for k in 0..keys {
        if (k * 7 + r) % 4 == 0 {
            if (k + r) % 9 == 0 {
                w.delete(vec![Some(Datum::BigInt(k))]).unwrap();
                model.remove(&k);
            } else {
                w.put(vec![Some(Datum::BigInt(k)), Some(Datum::BigInt(r * 1000 + k))]).unwrap();
                model.insert(k, r * 1000 + k);
            }
        }
    }
}

/// Writes round `r` and commits; every snapshot the commit made reads `model` afterwards in merge-on-read
/// mode, the last one in both modes. Returns the latest snapshot id.
pub(crate) fn commit_round(
    t: &Table,
    w: &mut TableWriter,
    r: i64,
    model: &mut Rows,
    models: &mut BTreeMap<i64, Rows>,
) -> i64 {
    let before = t.snapshot_manager().latest_id().unwrap().unwrap_or(0);
    round_rows(w, r, model);
    w.commit().unwrap();
    let latest = t.snapshot_manager().latest_id().unwrap().unwrap();
    for id in before + 1..=latest {
        models.insert(id, model.clone());
    }
    latest
}

pub(crate) fn rows_of(batches: &[arrow_array::RecordBatch]) -> Rows {
    super::fixtures::kv_pairs(batches).into_iter().collect()
}

/// The rows of snapshot `id` (the latest when `None`).
pub(crate) fn rows_at(t: &Table, id: Option<i64>) -> strata::Result<Rows> {
    read_rows(ReadBuilder::new(&t.as_of(id)?), id)
}

/// The rows of snapshot `id` (the latest when `None`) read merge-on-read: in deletion-vector mode an APPEND
/// snapshot's level-0 rows are only seen so (raw reads skip level 0 until the COMPACT snapshot).
pub(crate) fn rows_merged(t: &Table, id: Option<i64>) -> strata::Result<Rows> {
    read_rows(ReadBuilder::new(&t.as_of(id)?).merge_on_read(true), id)
}

/// The rows `rb` reads of snapshot `id` (the latest when `None`).
pub(crate) fn read_rows(rb: ReadBuilder, id: Option<i64>) -> strata::Result<Rows> {
    let rb = match id {
        Some(id) => rb.with_snapshot(id),
        None => rb,
    };
    Ok(rows_of(&rb.read()?.batches))
}

/// The rows tag `name` reads (through the `scan.tag-name` option).
pub(crate) fn rows_of_tag(t: &Table, name: &str) -> strata::Result<Rows> {
    let options = BTreeMap::from([(SCAN_TAG_NAME.to_string(), name.to_string())]);
    Ok(rows_of(&read_builder(t, &options)?.read()?.batches))
}

pub(crate) fn all_files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.to_str().unwrap().to_string());
            }
        }
    }
    out
}

/// Every file `s` needs, by full path: manifest lists, manifests, index manifest, index files, live data files.
pub(crate) fn files_of_snapshot(t: &Table, s: &Snapshot) -> strata::Result<BTreeSet<String>> {
    let store = t.manifest_store()?;
    let pf = t.path_factory();
    let mut out = BTreeSet::new();
    for list in [&s.base_manifest_list, &s.delta_manifest_list] {
        out.insert(pf.manifest_path(list));
        for m in store.read_manifest_list(list)? {
            out.insert(pf.manifest_path(&m.file_name));
        }
    }
    if let Some(im) = &s.index_manifest {
        out.insert(pf.manifest_path(im));
        for e in t.index_files(s)? {
            out.insert(pf.index_path(&e.index_file.file_name));
        }
    }
    for e in t.live_files(s)? {
        out.insert(t.data_file_path(&e)?);
    }
    Ok(out)
}

/// Every file the table's snapshots and tags need, with the snapshot, tag, schema and hint files: what a
/// table directory holds once nothing is left over.
pub(crate) fn needed_files(t: &Table) -> BTreeSet<String> {
    let root = t.path().to_string();
    let sm = t.snapshot_manager();
    let mut out = BTreeSet::new();
    for id in sm.list_ids().unwrap() {
        out.extend(files_of_snapshot(t, &sm.snapshot(id).unwrap()).unwrap());
        out.insert(sm.snapshot_path(id));
    }
    for tag in t.tag_manager().list().unwrap() {
        out.extend(files_of_snapshot(t, &tag.snapshot).unwrap());
        out.insert(t.tag_manager().tag_path(&tag.name).unwrap());
    }
    for id in t.schema_manager().list_ids().unwrap() {
        out.insert(format!("{root}/schema/schema-{id}"));
    }
    for hint in ["LATEST", "EARLIEST"] {
        if Path::new(&format!("{root}/snapshot/{hint}")).exists() {
            out.insert(format!("{root}/snapshot/{hint}"));
        }
    }
    out
}

/// Expiration keeping exactly `n` snapshots (and any younger than an hour beyond that: none in these tests).
pub(crate) fn keep(n: u32) -> ExpireOptions {
    ExpireOptions { retain_min: n, retain_max: n, time_retained: std::time::Duration::from_secs(3600), dry_run: false }
}

/// Orphan cleanup with no age threshold. It compares modification times in milliseconds, so a file written
/// within the current millisecond would be kept: wait one out first.
pub(crate) fn clean_orphans(t: &Table) {
    std::thread::sleep(std::time::Duration::from_millis(2));
    strata::table::remove_orphan_files(t, std::time::Duration::ZERO, false).unwrap();
}

/// Copies a directory tree.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

type Hook = Box<dyn FnMut(&str, &str) + Send>;

/// Local storage that calls a hook with (operation, path) before each mutating operation.
pub(crate) struct HookIO {
    inner: Arc<dyn FileIO>,
    hook: Mutex<Option<Hook>>,
}

impl std::fmt::Debug for HookIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HookIO")
    }
}

impl HookIO {
    pub(crate) fn new(hook: impl FnMut(&str, &str) + Send + 'static) -> Arc<HookIO> {
        Arc::new(HookIO { inner: local(), hook: Mutex::new(Some(Box::new(hook))) })
    }

    fn call(&self, op: &str, path: &str) {
        // Taken out while it runs, so that the hook's own storage calls (on other handles) cannot recurse.
        let hook = self.hook.lock().unwrap().take();
        if let Some(mut h) = hook {
            h(op, path);
            *self.hook.lock().unwrap() = Some(h);
        }
    }
}

impl FileIO for HookIO {
    fn read(&self, path: &str) -> strata::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> strata::Result<Vec<u8>> {
        self.inner.read_range(path, offset, len)
    }
    fn size(&self, path: &str) -> strata::Result<u64> {
        self.inner.size(path)
    }
    fn write(&self, path: &str, data: &[u8]) -> strata::Result<()> {
        self.call("write", path);
        self.inner.write(path, data)
    }
    fn create_if_absent(&self, path: &str, data: &[u8]) -> strata::Result<bool> {
        self.call("create_if_absent", path);
        self.inner.create_if_absent(path, data)
    }
    fn exists(&self, path: &str) -> strata::Result<bool> {
        self.inner.exists(path)
    }
    fn list(&self, dir: &str) -> strata::Result<Vec<strata::io::FileStatus>> {
        self.inner.list(dir)
    }
    fn delete(&self, path: &str) -> strata::Result<()> {
        self.call("delete", path);
        self.inner.delete(path)
    }
    fn delete_dir(&self, path: &str) -> strata::Result<()> {
        self.call("delete_dir", path);
        self.inner.delete_dir(path)
    }
    fn mkdirs(&self, path: &str) -> strata::Result<()> {
        self.inner.mkdirs(path)
    }
}
