//! Table names with suffixes: `t$branch_dev` (a branch, first), `t$snapshots` (a system table, Paimon's names)
//! and `t$snapshot=3`,
//! `t$tag=first`, `t$timestamp=2024-05-01T12:00:00`, `t$version=v` (time travel, as the `scan.*` options
//! would choose it). Suffixes combine: `t$files$snapshot=3` lists the files of snapshot 3. Names with `=`
//! need quotes in SQL (`db."t$snapshot=3"`); `FOR SYSTEM_TIME AS OF` and `VERSION AS OF` are rewritten into
//! them (see `sql`).

use std::collections::BTreeMap;

use strata_spec::{Error, Result};

use crate::system::SystemTable;

/// What a table name asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableName {
    /// The data table.
    pub(crate) table: String,
    /// A system table of it.
    pub(crate) system: Option<SystemTable>,
    /// Time-travel options (Paimon's `scan.*` keys).
    pub(crate) travel: BTreeMap<String, String>,
    /// A branch (`t$branch_dev`), Paimon's name for it.
    pub(crate) branch: Option<String>,
}

/// Parses `name` (the last part of a table reference).
pub(crate) fn parse_table_name(name: &str) -> Result<TableName> {
    let mut parts = name.split('$');
    let table = parts.next().unwrap_or_default().to_string();
    let mut out = TableName { table, system: None, travel: BTreeMap::new(), branch: None };
    for part in parts {
        let bad = |why: &str| Error::invalid(format!("table name '{name}'"), format!("'${part}': {why}"));
        match part.split_once('=') {
            None if part.starts_with("branch_") => {
                if out.branch.is_some() || out.system.is_some() || !out.travel.is_empty() {
                    return Err(bad("the branch comes right after the table"));
                }
                out.branch = Some(part["branch_".len()..].to_string());
            }
            None => {
                let system = SystemTable::from_name(part)
                    .ok_or_else(|| bad("not a system table (snapshots, schemas, options, files)"))?;
                if out.system.replace(system).is_some() {
                    return Err(bad("a second system table"));
                }
            }
            Some((key, value)) => {
                let (option, value) = match key {
                    "snapshot" => ("scan.snapshot-id", value.to_string()),
                    "tag" => ("scan.tag-name", value.to_string()),
                    "timestamp" => ("scan.timestamp-millis", strata_table::parse_timestamp_millis(value)?.to_string()),
                    "version" => ("scan.version", value.to_string()),
                    _ => return Err(bad("time travel takes snapshot=, tag=, timestamp= or version=")),
                };
                if value.is_empty() {
                    return Err(bad("no value"));
                }
                if !out.travel.is_empty() {
                    return Err(bad("a second time travel"));
                }
                out.travel.insert(option.to_string(), value);
            }
        }
    }
    if out.table.is_empty() {
        return Err(Error::invalid(format!("table name '{name}'"), "no table before the '$'"));
    }
    // Travelling makes sense for the data and its files; the other system tables list every snapshot or
    // schema whatever the snapshot, and a travel they ignored would mislead.
    if !out.travel.is_empty() && !matches!(out.system, None | Some(SystemTable::Files)) {
        return Err(Error::invalid(format!("table name '{name}'"), "only the data and $files can travel in time"));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use strata_spec::ErrorKind;

    #[test]
    fn suffixes_name_system_tables_and_snapshots() {
        let t = parse_table_name("t").unwrap();
        assert_eq!((t.table.as_str(), t.system, t.travel.len()), ("t", None, 0));
        let t = parse_table_name("orders$snapshots").unwrap();
        assert_eq!((t.table.as_str(), t.system), ("orders", Some(SystemTable::Snapshots)));
        let t = parse_table_name("t$files$snapshot=3").unwrap();
        assert_eq!(t.system, Some(SystemTable::Files));
        assert_eq!(t.travel, BTreeMap::from([("scan.snapshot-id".to_string(), "3".to_string())]));
        let t = parse_table_name("t$tag=first").unwrap();
        assert_eq!(t.travel["scan.tag-name"], "first");
        let t = parse_table_name("t$timestamp=2023-11-14T22:13:20.123Z").unwrap();
        assert_eq!(t.travel["scan.timestamp-millis"], "1700000000123");
        let t = parse_table_name("t$branch_dev$snapshots").unwrap();
        assert_eq!((t.branch.as_deref(), t.system), (Some("dev"), Some(SystemTable::Snapshots)));
        assert!(parse_table_name("t$snapshots$branch_dev").is_err(), "the branch comes first");
        assert!(parse_table_name("t$branch_a$branch_b").is_err());
    }

    #[test]
    fn what_is_not_a_suffix_is_refused() {
        for name in
            ["t$nope", "t$snapshot=", "t$snapshot=1$tag=a", "$snapshots", "t$colour=red", "t$snapshots$snapshot=2"]
        {
            assert_eq!(parse_table_name(name).unwrap_err().kind(), ErrorKind::Invalid, "{name}");
        }
    }
}
