//! What a snapshot references: the data, index and metadata files expiration, orphan cleanup, tag deletion
//! and rollback must keep while anything still names them.

use std::collections::{BTreeSet, HashMap};

use strata_spec::{Error, ManifestEntry, Result, Snapshot};

use crate::meta::manifest_io::ManifestStore;
use crate::table::Table;

/// Every file a snapshot references: data files (paths), index files (names), metadata files (names).
#[derive(Debug, Default)]
pub(crate) struct References {
    pub(crate) data: BTreeSet<String>,
    pub(crate) index: BTreeSet<String>,
    pub(crate) meta: BTreeSet<String>,
}

impl References {
    /// Adds everything `other` references.
    pub(crate) fn extend(&mut self, other: References) {
        self.data.extend(other.data);
        self.index.extend(other.index);
        self.meta.extend(other.meta);
    }

    /// Drops everything `other` references (what must stay, from what may go).
    pub(crate) fn remove_referenced(&mut self, other: &References) {
        self.data.retain(|p| !other.data.contains(p));
        self.index.retain(|n| !other.index.contains(n));
        self.meta.retain(|n| !other.meta.contains(n));
    }

    /// The file names of the referenced data files (and their extra files).
    pub(crate) fn data_names(&self) -> BTreeSet<String> {
        self.data.iter().map(|p| p.rsplit('/').next().unwrap_or(p.as_str()).to_string()).collect()
    }

    /// The lists a report gives: data file paths, index file names, metadata file names.
    pub(crate) fn into_lists(self) -> (Vec<String>, Vec<String>, Vec<String>) {
        (self.data.into_iter().collect(), self.index.into_iter().collect(), self.meta.into_iter().collect())
    }

    /// Adds `s`'s manifest lists and the manifests they name (`manifests_cache`: manifest names by manifest
    /// list, shared across calls).
    pub(crate) fn add_manifest_lists(
        &mut self,
        store: &ManifestStore,
        s: &Snapshot,
        manifests_cache: &mut HashMap<String, Vec<String>>,
    ) -> Result<()> {
        for list in [Some(&s.base_manifest_list), Some(&s.delta_manifest_list), s.changelog_manifest_list.as_ref()]
            .into_iter()
            .flatten()
        {
            self.meta.insert(list.clone());
            if !manifests_cache.contains_key(list) {
                let names = store.read_manifest_list(list)?.into_iter().map(|m| m.file_name).collect();
                manifests_cache.insert(list.clone(), names);
            }
            self.meta.extend(manifests_cache.get(list).into_iter().flatten().cloned());
        }
        Ok(())
    }

    /// Adds `s`'s index manifest and the index files it lists.
    pub(crate) fn add_index(&mut self, table: &Table, s: &Snapshot) -> Result<()> {
        if let Some(im) = &s.index_manifest {
            self.meta.insert(im.clone());
            self.index.extend(table.index_files(s)?.into_iter().map(|e| e.index_file.file_name));
        }
        Ok(())
    }

    /// Adds the data file of `e` and its extra files (a file index beside its data file lives and dies with it).
    pub(crate) fn add_data_file(&mut self, table: &Table, e: &ManifestEntry) -> Result<()> {
        let path = table.data_file_path(e)?;
        for extra in &e.file.extra_files {
            self.data.insert(strata_io::join(strata_io::parent(&path), extra));
        }
        self.data.insert(path);
        Ok(())
    }

    /// Adds `s`'s changelog files.
    pub(crate) fn add_changelog(&mut self, table: &Table, s: &Snapshot) -> Result<()> {
        for e in table.changelog_files(s)? {
            self.data.insert(table.data_file_path(&e)?);
        }
        Ok(())
    }
}

/// What snapshot `s` references (`manifests_cache`: manifest names by manifest list, shared across calls).
pub(crate) fn references(
    table: &Table,
    s: &Snapshot,
    manifests_cache: &mut HashMap<String, Vec<String>>,
) -> Result<References> {
    let mut r = References::default();
    r.add_manifest_lists(&table.manifest_store()?, s, manifests_cache)?;
    r.add_index(table, s)?;
    for e in table.live_files(s)? {
        r.add_data_file(table, &e)?;
    }
    r.add_changelog(table, s)?;
    Ok(r)
}

/// Deletes what a maintenance operation found unreferenced: data files (paths), index files and metadata
/// files (names), in that order.
pub(crate) fn delete_files(table: &Table, data: &[String], index: &[String], meta: &[String]) -> Result<()> {
    for p in data {
        table.io().delete(p)?;
    }
    for n in index {
        table.io().delete(&table.path_factory().index_path(n))?;
    }
    for n in meta {
        table.io().delete(&table.path_factory().manifest_path(n))?;
    }
    Ok(())
}

/// Everything the table's branches reference (every snapshot and tag of each), which the table's expiration
/// and orphan cleanup must keep: branches share its manifests, index and data files.
pub(crate) fn branch_references(table: &Table, cache: &mut HashMap<String, Vec<String>>) -> Result<References> {
    let mut all = References::default();
    crate::branch::refuse_unreadable_branches(table)?;
    for name in crate::branch::list_branches(table)? {
        let branch = Table::open_branch(table.io().clone(), table.path(), &name)?;
        let sm = branch.snapshot_manager();
        for id in sm.list_ids()? {
            if let Some(s) = sm.try_snapshot(id)? {
                all.extend(references(&branch, &s, cache)?);
            }
        }
        for tag in branch.tag_manager().list()? {
            all.extend(references(&branch, &tag.snapshot, cache)?);
        }
    }
    Ok(all)
}

/// Refuses maintenance of a branch handle: what it deletes is shared with the table and its other branches.
pub(crate) fn refuse_on_branch(table: &Table, what: &str) -> Result<()> {
    match table.branch() {
        None => Ok(()),
        Some(b) => Err(Error::unsupported(format!(
            "{what} on branch '{b}': its files are shared with the table; run it on the table, which keeps what every branch references"
        ))),
    }
}

/// Decoupled changelogs (`changelog/changelog-N`, kept past their snapshots) share the table's manifests and
/// data files; Strata's maintenance does not read them yet, so it refuses to run where they exist rather than
/// delete what only they reference.
pub(crate) fn refuse_decoupled_changelogs(table: &Table) -> Result<()> {
    refuse_dirs(table, &["changelog"])
}

/// Branches and decoupled changelogs: maintenance that does not read them (rollback, a tag's reclaim) refuses
/// to run where they exist.
pub(crate) fn refuse_unread_references(table: &Table) -> Result<()> {
    refuse_dirs(table, &["branch", "changelog"])
}

fn refuse_dirs(table: &Table, dirs: &[&str]) -> Result<()> {
    for dir in dirs {
        let path = strata_io::join(table.path(), dir);
        if let Some(f) = table.io().list(&path)?.first() {
            return Err(Error::unsupported(format!(
                "maintenance of a table with {dir} metadata ({}): Strata does not read it yet, and deleting what \
                 only it references would break it",
                f.path
            )));
        }
    }
    Ok(())
}
