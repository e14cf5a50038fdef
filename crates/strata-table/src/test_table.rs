//! The table the crate's unit tests write to: `id BIGINT` primary key and a string column `s`, in a local
//! directory, with the options given.

use std::collections::BTreeMap;
use std::sync::Arc;

use strata_spec::{DataType, TableSchema};

use crate::table::Table;

/// Creates the test table at `dir/t` with `options`.
pub(crate) fn id_string_table(dir: &std::path::Path, options: &[(&str, &str)]) -> Table {
    let io: Arc<dyn strata_io::FileIO> = Arc::new(strata_io::LocalFileIO::new());
    let options: BTreeMap<String, String> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let schema = TableSchema::new(
        vec![("id".into(), DataType::bigint()), ("s".into(), DataType::string())],
        vec![],
        vec!["id".into()],
        options,
        0,
    )
    .unwrap();
    Table::create(io, dir.join("t").to_str().unwrap(), schema).unwrap()
}
