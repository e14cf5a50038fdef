//! Creating, listing and deleting branches (Paimon's `FileSystemBranchManager`): a branch is
//! `branch/branch-<name>/` with schemas, snapshots and tags of its own (`Table::open_branch` reads and writes
//! it). A new branch starts from a tag (its tag, snapshot and schemas copied in) or, without one, empty with
//! the table's schemas, as Paimon's do.

use strata_io::join;
use strata_spec::{Error, ErrorKind, Result};

use crate::table::{Table, MAIN_BRANCH};

/// Where branches live, under the table directory.
const BRANCH_DIR: &str = "branch";
/// A branch's directory name prefix.
const BRANCH_PREFIX: &str = "branch-";

/// Refuses names Paimon refuses (the main branch, blank, all digits) and names that are not one plain path
/// part.
pub(crate) fn check_branch_name(name: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid(format!("branch name '{}'", name.escape_debug()), why.to_string()));
    if name.eq_ignore_ascii_case(MAIN_BRANCH) {
        return bad("it is the main branch's");
    }
    if name.trim().is_empty() {
        return bad("it is blank");
    }
    if name.chars().all(|c| c.is_ascii_digit()) {
        return bad("a branch name cannot be all digits");
    }
    if name.chars().any(char::is_control) {
        return bad("it holds a control character");
    }
    check_path_part(name)
}

/// Refuses a branch name that is not one plain path part (it would name a directory elsewhere): what opening
/// a branch needs, where [`check_branch_name`] adds Paimon's rules for new ones.
pub(crate) fn check_path_part(name: &str) -> Result<()> {
    if name.is_empty() || name.starts_with('.') || name.chars().any(|c| matches!(c, '/' | '\\' | '$')) {
        return Err(Error::invalid(
            format!("branch name '{}'", name.escape_debug()),
            "it must be one plain path part (no '/', '\\', '$', leading '.')",
        ));
    }
    Ok(())
}

/// The metadata directory of `branch` of the table at `path` (the table directory itself for main).
pub(crate) fn branch_root(path: &str, branch: Option<&str>) -> String {
    match branch {
        None => path.to_string(),
        Some(b) => join(&join(path, BRANCH_DIR), &format!("{BRANCH_PREFIX}{b}")),
    }
}

fn branch_dir(table: &Table, name: &str) -> String {
    branch_root(table.path(), Some(name))
}

/// The table's branches, by name (directories holding a schema).
pub fn list_branches(table: &Table) -> Result<Vec<String>> {
    let dir = join(table.path(), BRANCH_DIR);
    let mut out = Vec::new();
    for e in table.io().list(&dir)? {
        let Some(name) = e.name().strip_prefix(BRANCH_PREFIX) else { continue };
        if e.is_dir && !table.io().list(&join(&e.path, "schema"))?.is_empty() {
            out.push(name.to_string());
        }
    }
    out.sort();
    Ok(out)
}

/// Refuses a branch directory that holds snapshots or tags but no schema (a create that stopped, or another
/// tool's): what it references cannot be read, so maintenance must not delete anything on its account.
pub(crate) fn refuse_unreadable_branches(table: &Table) -> Result<()> {
    let io = table.io();
    for e in io.list(&join(table.path(), BRANCH_DIR))?.into_iter().filter(|e| e.is_dir) {
        if !io.list(&join(&e.path, "schema"))?.is_empty() {
            continue;
        }
        for sub in ["snapshot", "tag"] {
            if !io.list(&join(&e.path, sub))?.is_empty() {
                return Err(Error::unsupported(format!(
                    "maintenance of a table whose branch directory {} holds {sub} files but no schema: what it references cannot be read",
                    e.path
                )));
            }
        }
    }
    Ok(())
}

/// Creates branch `name` of `table` (opened on main): from tag `from_tag` (the tag, its snapshot and the
/// schemas up to the snapshot's), or else empty with the table's schemas. Fails with `AlreadyExists` if the
/// branch exists; a file already there is never overwritten (one with the same bytes, left by a create that
/// stopped half-way, is taken as copied, so the create can be run again).
pub fn create_branch(table: &Table, name: &str, from_tag: Option<&str>) -> Result<()> {
    check_branch_name(name)?;
    if let Some(b) = table.branch() {
        return Err(Error::invalid(
            format!("branch '{name}'"),
            format!("create it from the table, not from branch '{b}'"),
        ));
    }
    let dir = branch_dir(table, name);
    let io = table.io();
    if !io.list(&join(&dir, "schema"))?.is_empty() {
        return Err(Error::AlreadyExists { path: dir });
    }
    let _span = tracing::info_span!("create_branch", name, from_tag).entered();
    // A file already there with the same bytes is a create that stopped half-way, retried: fine. Any other
    // is someone else's branch.
    let put = |to: &str, bytes: &[u8]| -> Result<()> {
        if io.create_if_absent(to, bytes)? || io.read(to)? == bytes {
            return Ok(());
        }
        Err(Error::AlreadyExists { path: to.to_string() })
    };
    let copy = |from: &str, to: &str| -> Result<()> { put(to, &io.read(from)?) };
    let schemas = table.schema_manager();
    let last_schema = match from_tag {
        None => table.schema().id,
        Some(tag_name) => {
            let tags = table.tag_manager();
            let tag = tags.get_required(tag_name)?;
            let branch_tags = crate::maintenance::tag::TagManager::new(io.clone(), &dir);
            copy(&tags.tag_path(tag_name)?, &branch_tags.tag_path(tag_name)?)?;
            let to =
                crate::meta::snapshot_manager::SnapshotManager::new(io.clone(), &dir).snapshot_path(tag.snapshot.id);
            // The tag holds its snapshot: written from it when the table's file has expired.
            match copy(&table.snapshot_manager().snapshot_path(tag.snapshot.id), &to) {
                Err(e) if e.kind() == ErrorKind::NotFound => put(&to, tag.snapshot.to_json()?.as_bytes())?,
                other => other?,
            }
            tag.snapshot.schema_id
        }
    };
    let branch_schemas = crate::meta::schema_manager::SchemaManager::new(io.clone(), &dir);
    for id in schemas.list_ids()?.into_iter().filter(|&id| id <= last_schema) {
        copy(&schemas.schema_path(id), &branch_schemas.schema_path(id))?;
    }
    Ok(())
}

/// Deletes branch `name` with its snapshots, schemas and tags. Data files only it referenced stay until
/// orphan cleanup (Paimon's `dropBranch` does the same).
pub fn delete_branch(table: &Table, name: &str) -> Result<()> {
    check_branch_name(name)?;
    if !list_branches(table)?.iter().any(|b| b == name) {
        return Err(Error::NotFound { path: format!("{}: branch '{}'", table.path(), name.escape_debug()) });
    }
    table.io().delete_dir(&branch_dir(table, name))
}

/// What a fast-forward replaced.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FastForward {
    /// The branch's earliest snapshot: the table's snapshots from it on are the branch's now.
    pub from_snapshot: i64,
    /// The table's snapshots removed (the branch's of the same ids replaced them).
    pub removed_snapshots: Vec<i64>,
    /// The table's tags removed.
    pub removed_tags: Vec<String>,
}

/// Makes the table (main) what branch `name` is (Paimon's `fastForward`): main's snapshots from the branch's
/// earliest one on, its schemas from that snapshot's schema on and its tags on those snapshots are removed,
/// and the branch's snapshots, schemas and tags are copied in. Files only main's removed snapshots referenced
/// are left to orphan cleanup. Stop the table's writers first: a commit racing this one would land on top.
pub fn fast_forward(table: &Table, name: &str) -> Result<FastForward> {
    check_branch_name(name)?;
    if let Some(b) = table.branch() {
        return Err(Error::invalid(format!("branch '{name}'"), format!("fast-forward the table, not branch '{b}'")));
    }
    let branch = Table::open_branch(table.io().clone(), table.path(), name)?;
    let _span = tracing::info_span!("fast_forward", name).entered();
    let from = branch.snapshot_manager().list_ids()?.into_iter().min().ok_or_else(|| {
        Error::invalid(format!("branch '{name}'"), "it has no snapshot to fast-forward to".to_string())
    })?;
    let from_schema = branch.snapshot_manager().snapshot(from)?.schema_id;
    let io = table.io();
    let (snapshots, schemas, tags) = (table.snapshot_manager(), table.schema_manager(), table.tag_manager());
    let mut out = FastForward { from_snapshot: from, ..Default::default() };
    for id in snapshots.list_ids()?.into_iter().filter(|&id| id >= from) {
        io.delete(&snapshots.snapshot_path(id))?;
        out.removed_snapshots.push(id);
    }
    for id in schemas.list_ids()?.into_iter().filter(|&id| id >= from_schema) {
        io.delete(&schemas.schema_path(id))?;
    }
    for tag in tags.list()?.into_iter().filter(|t| t.snapshot.id >= from) {
        io.delete(&tags.tag_path(&tag.name)?)?;
        out.removed_tags.push(tag.name);
    }
    // The hints name main's old snapshots; the branch's (copied below) name its own.
    for hint in ["LATEST", "EARLIEST"] {
        match io.delete(&join(snapshots.dir(), hint)) {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let root = branch.metadata_root();
    for (dir, to) in [
        ("schema", join(table.path(), "schema")),
        ("snapshot", snapshots.dir().to_string()),
        ("tag", tags.dir().to_string()),
    ] {
        for f in io.list(&join(&root, dir))?.into_iter().filter(|f| !f.is_dir) {
            io.write(&join(&to, f.name()), &io.read(&f.path)?)?;
        }
    }
    Ok(out)
}
