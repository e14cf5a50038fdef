//! Names of files as metadata stores them, checked where they are decoded.
//!
//! Paimon's metadata names files by bare name (`_FILE_NAME` of a manifest entry, a manifest list row, an
//! index manifest row; a snapshot's manifest lists and index manifest) and resolves them under the
//! directory the kind of file lives in (Paimon's `FileStorePathFactory`). A name that is not a plain file
//! name would let crafted metadata point a reader, or worse a deleting maintenance run, outside the table:
//! `../../victim/secret.txt` under `manifest/` is a file in another directory. So every name is checked as
//! it is decoded and a bad one is a corrupt-table error, before any caller can join it to a path.
//!
//! An `_EXTERNAL_PATH` is a full path by design (Paimon's `data-file.external-paths`); it is checked here
//! for traversal only, and honoured later only under the roots the table's option names
//! ([`external_path_within`]).

use crate::error::{Error, Result};

/// The longest file name accepted (the common file-system limit, in bytes).
pub(crate) const MAX_FILE_NAME_BYTES: usize = 255;

/// Checks that `name`, read from `field` of some metadata, is a plain file name: not empty, at most
/// 255 bytes, no path separator, no control character, not `.` or `..` and not hidden (Paimon
/// never writes a name starting with a dot; local temporary files do).
pub fn check_file_name(name: &str, field: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::corrupt(format!("{field} {name:?} is not a plain file name: {why}")));
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_FILE_NAME_BYTES {
        return bad("it is longer than 255 bytes");
    }
    if name.contains(['/', '\\']) {
        return bad("it contains a path separator");
    }
    if name.chars().any(char::is_control) {
        return bad("it contains a control character");
    }
    if name.starts_with('.') {
        return bad("it starts with a dot");
    }
    Ok(())
}

/// Checks the optional `name` like [`check_file_name`].
pub(crate) fn check_opt_file_name(name: Option<&str>, field: &str) -> Result<()> {
    name.map_or(Ok(()), |n| check_file_name(n, field))
}

/// Strips a local-file scheme (`file://`, `file:`) so local paths written by Java (`file:/tmp/x`) and by
/// Strata (`/tmp/x`) compare alike.
fn strip_local_scheme(path: &str) -> &str {
    path.strip_prefix("file://").or_else(|| path.strip_prefix("file:")).unwrap_or(path)
}

/// Checks that an `_EXTERNAL_PATH` has no `.` or `..` segment, no control character, and ends in a plain
/// file name.
pub(crate) fn check_external_path(path: &str, field: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::corrupt(format!("{field} {path:?} is not a valid external path: {why}")));
    if path.chars().any(char::is_control) {
        return bad("it contains a control character");
    }
    let (_, rest) = split_scheme(path);
    if rest.split(['/', '\\']).any(|s| s == ".." || s == ".") {
        return bad("it has a '.' or '..' segment");
    }
    let name = rest.rsplit('/').next().unwrap_or_default();
    check_file_name(name, field)
}

/// Splits `scheme://rest` (or `scheme:rest`) into the scheme and the rest; plain paths have no scheme.
fn split_scheme(path: &str) -> (&str, &str) {
    match path.find(':') {
        Some(i) if i > 0 && path[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) => {
            (&path[..i], &path[i + 1..])
        }
        _ => ("", path),
    }
}

/// The path to open for an external path, provided it lies under one of `roots` (the comma-separated
/// value of `data-file.external-paths`). A path outside every root is a corrupt-table error: the table
/// never asked for files there, so neither reading nor deleting it is safe.
pub fn external_path_within(path: &str, roots: Option<&str>, field: &str) -> Result<String> {
    check_external_path(path, field)?;
    let local = strip_local_scheme(path);
    for root in roots.unwrap_or_default().split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let root = strip_local_scheme(root).trim_end_matches('/');
        if root.is_empty() {
            continue;
        }
        if let Some(rest) = local.strip_prefix(root) {
            if rest.starts_with('/') && rest.len() > 1 {
                return Ok(local.to_string());
            }
        }
    }
    Err(Error::corrupt(format!(
        "{field} {path:?} lies outside the table and outside every root of 'data-file.external-paths' ({})",
        roots.unwrap_or("not set")
    )))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass() {
        for n in ["data-3f0a-0.parquet", "manifest-list-abc-12", "index-x-0", "snapshot-7"] {
            check_file_name(n, "_FILE_NAME").unwrap();
        }
    }

    #[test]
    fn traversal_and_odd_names_are_corrupt() {
        for n in ["", ".", "..", "../x", "a/b", "/etc/passwd", "a\\b", ".hidden", "a\nb", &"x".repeat(256)] {
            let e = check_file_name(n, "_FILE_NAME").unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Corrupt, "{n:?}");
        }
    }

    #[test]
    fn external_paths_only_under_their_roots() {
        let roots = Some("file:///ext/a, /ext/b/");
        assert_eq!(
            external_path_within("file:/ext/a/bucket-0/data-1.parquet", roots, "p").unwrap(),
            "/ext/a/bucket-0/data-1.parquet"
        );
        assert_eq!(external_path_within("/ext/b/data-1.orc", roots, "p").unwrap(), "/ext/b/data-1.orc");
        for bad in [
            "/ext/a/../../etc/passwd",
            "/ext/ab/data-1.parquet",
            "/elsewhere/data-1.parquet",
            "/ext/a/",
            "/ext/a/./data",
        ] {
            assert!(external_path_within(bad, roots, "p").is_err(), "{bad}");
        }
        assert!(external_path_within("/ext/a/data-1.parquet", None, "p").is_err());
    }
}
