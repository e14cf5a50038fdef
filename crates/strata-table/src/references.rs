//! What a snapshot references: the data, index and metadata files expiration, orphan cleanup, tag deletion
//! and rollback must keep while anything still names them.

use std::collections::{BTreeSet, HashMap};

use strata_spec::{Error, Result, Snapshot};

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

    /// The file names of the referenced data files (and their extra files).
    pub(crate) fn data_names(&self) -> BTreeSet<String> {
        self.data.iter().map(|p| p.rsplit('/').next().unwrap_or(p.as_str()).to_string()).collect()
    }
}

/// What snapshot `s` references (`manifests_cache`: manifest names by manifest list, shared across calls).
pub(crate) fn references(
    table: &Table,
    s: &Snapshot,
    manifests_cache: &mut HashMap<String, Vec<String>>,
) -> Result<References> {
    let store = table.manifest_store()?;
    let mut r = References::default();
    for list in [Some(&s.base_manifest_list), Some(&s.delta_manifest_list), s.changelog_manifest_list.as_ref()]
        .into_iter()
        .flatten()
    {
        r.meta.insert(list.clone());
        let names = match manifests_cache.get(list) {
            Some(n) => n.clone(),
            None => {
                let n: Vec<String> = store.read_manifest_list(list)?.into_iter().map(|m| m.file_name).collect();
                manifests_cache.insert(list.clone(), n.clone());
                n
            }
        };
        r.meta.extend(names);
    }
    if let Some(im) = &s.index_manifest {
        r.meta.insert(im.clone());
        for e in table.index_files(s)? {
            r.index.insert(e.index_file.file_name);
        }
    }
    for e in table.live_files(s)? {
        let path = table.data_file_path(&e)?;
        // Extra files (a file index beside its data file) live and die with it.
        for extra in &e.file.extra_files {
            r.data.insert(strata_io::join(strata_io::parent(&path), extra));
        }
        r.data.insert(path);
    }
    for e in table.changelog_files(s)? {
        r.data.insert(table.data_file_path(&e)?);
    }
    Ok(r)
}

/// Branches (`branch/branch-<name>/`, with snapshots and tags of their own) and decoupled changelogs
/// (`changelog/changelog-N`, kept past their snapshots) share the table's manifests and data files. Strata's
/// maintenance does not read them yet, so it refuses to run where they exist rather than delete what only
/// they reference.
pub(crate) fn refuse_unread_references(table: &Table) -> Result<()> {
    for dir in ["branch", "changelog"] {
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
