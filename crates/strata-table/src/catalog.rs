//! The filesystem catalog: `<warehouse>/<db>.db/<table>`, as Paimon's `FileSystemCatalog`.

use std::sync::Arc;

use strata_io::{join, FileIO};
use strata_spec::{Error, OptionPolicy, Result, TableSchema};

use crate::table::Table;

const DB_SUFFIX: &str = ".db";

/// Databases and tables under a warehouse directory.
#[derive(Debug, Clone)]
pub struct FileSystemCatalog {
    io: Arc<dyn FileIO>,
    warehouse: String,
}

fn check_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(Error::invalid(
            format!("{what} name"),
            format!("'{name}' is empty, starts with '.' or contains '/'"),
        ));
    }
    Ok(())
}

impl FileSystemCatalog {
    /// A catalog over `warehouse`.
    pub fn new(io: Arc<dyn FileIO>, warehouse: &str) -> Self {
        FileSystemCatalog { io, warehouse: warehouse.trim_end_matches('/').to_string() }
    }

    /// The warehouse directory.
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    /// `<warehouse>/<db>.db`
    pub fn database_path(&self, db: &str) -> String {
        join(&self.warehouse, &format!("{db}{DB_SUFFIX}"))
    }

    /// `<warehouse>/<db>.db/<table>`
    pub fn table_path(&self, db: &str, table: &str) -> String {
        join(&self.database_path(db), table)
    }

    /// Creates a database (a directory).
    pub fn create_database(&self, db: &str, ignore_if_exists: bool) -> Result<()> {
        check_name("database", db)?;
        let path = self.database_path(db);
        if self.io.exists(&path)? {
            return if ignore_if_exists { Ok(()) } else { Err(Error::AlreadyExists { path }) };
        }
        self.io.mkdirs(&path)
    }

    /// Whether database `db` exists.
    pub fn database_exists(&self, db: &str) -> Result<bool> {
        check_name("database", db)?;
        self.io.exists(&self.database_path(db))
    }

    /// Database names.
    pub fn list_databases(&self) -> Result<Vec<String>> {
        let mut dbs: Vec<String> = self
            .io
            .list(&self.warehouse)?
            .into_iter()
            .filter(|s| s.is_dir)
            .filter_map(|s| s.name().strip_suffix(DB_SUFFIX).map(str::to_string))
            .collect();
        dbs.sort();
        Ok(dbs)
    }

    /// Tables of a database (directories holding a schema).
    pub fn list_tables(&self, db: &str) -> Result<Vec<String>> {
        check_name("database", db)?;
        let path = self.database_path(db);
        if !self.io.exists(&path)? {
            return Err(Error::NotFound { path });
        }
        let mut out = Vec::new();
        for s in self.io.list(&path)? {
            if s.is_dir && self.io.file_exists(&join(&join(&s.path, "schema"), "schema-0"))? {
                out.push(s.name().to_string());
            }
        }
        out.sort();
        Ok(out)
    }

    /// Creates a table; the database must exist.
    pub fn create_table(&self, db: &str, table: &str, schema: TableSchema, ignore_if_exists: bool) -> Result<Table> {
        self.create_table_with_policy(db, table, schema, ignore_if_exists, OptionPolicy::default())
    }

    /// [`create_table`](Self::create_table), with `policy` deciding about unknown option keys.
    pub fn create_table_with_policy(
        &self,
        db: &str,
        table: &str,
        schema: TableSchema,
        ignore_if_exists: bool,
        policy: OptionPolicy,
    ) -> Result<Table> {
        check_name("database", db)?;
        check_name("table", table)?;
        let db_path = self.database_path(db);
        if !self.io.exists(&db_path)? {
            return Err(Error::NotFound { path: db_path });
        }
        let path = self.table_path(db, table);
        match Table::create_with_policy(self.io.clone(), &path, schema, policy) {
            Err(Error::AlreadyExists { .. }) if ignore_if_exists => Table::open(self.io.clone(), &path),
            other => other,
        }
    }

    /// Drops a table: removes its directory and everything in it (Paimon's `dropTable`). A missing table is
    /// not found unless `ignore_if_not_exists`; a directory that holds no Paimon table is refused, never
    /// deleted.
    pub fn drop_table(&self, db: &str, table: &str, ignore_if_not_exists: bool) -> Result<()> {
        check_name("database", db)?;
        check_name("table", table)?;
        let path = self.table_path(db, table);
        if !self.io.file_exists(&join(&join(&path, "schema"), "schema-0"))? && !self.io.exists(&path)? {
            return if ignore_if_not_exists { Ok(()) } else { Err(Error::NotFound { path }) };
        }
        Table::delete_table_dir(&self.io, &path)
    }

    /// Opens a table; `t$branch_dev` opens branch `dev` of table `t`.
    pub fn get_table(&self, db: &str, table: &str) -> Result<Table> {
        // Names come from users and SQL (`"../x".t`): a name that is not one path segment would open a table
        // outside the warehouse.
        check_name("database", db)?;
        // `t$branch_dev` is branch `dev` of `t` (Paimon's name for it).
        if let Some((name, branch)) = table.split_once("$branch_") {
            check_name("table", name)?;
            return Table::open_branch(self.io.clone(), &self.table_path(db, name), branch);
        }
        check_name("table", table)?;
        Table::open(self.io.clone(), &self.table_path(db, table))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use strata_io::LocalFileIO;
    use strata_spec::ErrorKind;

    #[test]
    fn names_that_leave_the_warehouse_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let wh = root.path().join("wh");
        let catalog = FileSystemCatalog::new(Arc::new(LocalFileIO::new()), wh.to_str().unwrap());
        for bad in ["..", "../x", "a/b", ".hidden", ""] {
            assert_eq!(catalog.get_table(bad, "t").unwrap_err().kind(), ErrorKind::Invalid, "{bad}");
            assert_eq!(catalog.get_table("db", bad).unwrap_err().kind(), ErrorKind::Invalid, "{bad}");
            assert_eq!(catalog.list_tables(bad).unwrap_err().kind(), ErrorKind::Invalid, "{bad}");
            assert_eq!(catalog.database_exists(bad).unwrap_err().kind(), ErrorKind::Invalid, "{bad}");
        }
        assert_eq!(catalog.get_table("db", "t").unwrap_err().kind(), ErrorKind::NotFound);
    }
}
