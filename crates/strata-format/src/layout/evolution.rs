//! Reading a data file written under one schema as another: Paimon's schema evolution on read
//! (`FormatReaderMapping`, `SchemaEvolutionUtil`), and the two key-value file layouts.
//!
//! Every data file records the id of the schema it was written with (`DataFileMeta.schemaId`). A table's
//! schema evolves by field id: a renamed column keeps its id, an added one gets a new id, a dropped one's id
//! is gone, a widened one keeps its id with a new type. So a column of the reading schema is found in a file
//! by its id in the file's own schema: under that schema's name (the name the file stores), read as that
//! schema's type and then cast to the reading type; a column the file's schema lacks reads as null.
//! Mapping by name instead would read a column added under the name of a dropped or renamed one from the
//! old column: silently wrong rows.
//!
//! Key columns (`_KEY_<name>`) are found the same way. A *thin-mode* file (Paimon's `data-file.thin-mode`,
//! what paimon-rust writes) has no key columns at all: the key is taken from the value columns of the same
//! field ids, as Paimon's readers always do.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef};
use strata_spec::{DataType, Error, Result, TableSchema};

use crate::layout::arrow_types::{normalize, to_arrow};
use crate::layout::system_fields::KEY_PREFIX;

/// The schemas a table's files were written with, by id (a table's `schema/` directory).
pub trait SchemaHistory: Send + Sync + fmt::Debug {
    /// The schema with `id`.
    fn schema(&self, id: i64) -> Result<Arc<TableSchema>>;
}

/// Where one column of the reading layout is in a file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StoredColumn {
    /// Stored under `name` as `data_type` (the file's schema's), to be cast to the reading type.
    Stored {
        /// The column's name in the file.
        name: String,
        /// The column's type in the file's schema.
        data_type: DataType,
    },
    /// Not in the file's schema (added later): every row reads null.
    Absent,
}

/// How the columns of files written with one schema read as the columns of another: reading-layout column
/// name to where it is stored. Columns not listed (`_SEQUENCE_NUMBER`, `_VALUE_KIND`, and every column of a
/// file written with the reading schema) are stored under their own name and type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnMapping {
    columns: HashMap<String, StoredColumn>,
}

impl ColumnMapping {
    /// The mapping of files written with `data` read as `read`; `None` when they store every column of
    /// `read` under its own name and type (the common case: options changed, columns did not).
    pub(crate) fn between(data: &TableSchema, read: &TableSchema) -> Option<ColumnMapping> {
        let by_id: HashMap<i32, &strata_spec::DataField> = data.fields.iter().map(|f| (f.id, f)).collect();
        let mut columns = HashMap::new();
        for f in &read.fields {
            let stored = match by_id.get(&f.id) {
                Some(d) if d.name == f.name && d.data_type.root == f.data_type.root => continue,
                Some(d) => StoredColumn::Stored { name: d.name.clone(), data_type: d.data_type },
                None => StoredColumn::Absent,
            };
            // The key column of the same field, when it is one (its name mirrors the value column's).
            if let StoredColumn::Stored { name, data_type } = &stored {
                columns.insert(
                    format!("{KEY_PREFIX}{}", f.name),
                    StoredColumn::Stored { name: format!("{KEY_PREFIX}{name}"), data_type: *data_type },
                );
            }
            columns.insert(f.name.clone(), stored);
        }
        // A name of the reading schema that the file's schema gives to another field (a column dropped or
        // renamed and the name reused) is listed above, so it never falls through to the identity.
        (!columns.is_empty()).then_some(ColumnMapping { columns })
    }

    /// Where the reading column `name` (of type `read_type`) is stored.
    pub(crate) fn resolve(&self, name: &str, read_type: DataType) -> StoredColumn {
        match self.columns.get(name) {
            Some(c) => c.clone(),
            None => StoredColumn::Stored { name: name.to_string(), data_type: read_type },
        }
    }
}

/// Where `name` (of `read_type`) is stored, under `mapping` (none: under its own name and type).
pub(crate) fn resolve(mapping: Option<&ColumnMapping>, name: &str, read_type: DataType) -> StoredColumn {
    match mapping {
        Some(m) => m.resolve(name, read_type),
        None => StoredColumn::Stored { name: name.to_string(), data_type: read_type },
    }
}

/// The index of the column stored as `name` in `file_schema`; for a key column a thin-mode file lacks, the
/// value column holding the same field.
pub(crate) fn stored_index(file_schema: &arrow_schema::Schema, name: &str) -> Option<usize> {
    file_schema.index_of(name).ok().or_else(|| file_schema.index_of(name.strip_prefix(KEY_PREFIX)?).ok())
}

/// `array` (a column as stored, of the file schema's type `stored`) as the reading type `read`. A type
/// change under evolution is a cast by Paimon's rules; one that cannot hold a value (a narrowing change
/// some writer allowed) is an error naming the column, never a null or a truncated value.
pub(crate) fn read_as(array: &ArrayRef, stored: &DataType, read: &DataType, column: &str) -> Result<ArrayRef> {
    let as_stored = normalize(array, stored)?;
    if stored.root == read.root {
        return Ok(as_stored);
    }
    let want = to_arrow(read);
    let options = arrow_cast::CastOptions { safe: false, ..Default::default() };
    arrow_cast::cast_with_options(&as_stored, &want, &options).map_err(|e| {
        Error::invalid(
            "schema evolution",
            format!("column '{column}' was written as {stored} and cannot be read as {read}: {e}"),
        )
    })
}

/// A column of `rows` nulls of the reading type `t` (a column the file's schema did not have).
pub(crate) fn absent_column(t: &DataType, rows: usize) -> ArrayRef {
    new_null_array(&to_arrow(t), rows)
}

/// [`ColumnMapping`]s of one reading schema, computed once per file schema id.
#[derive(Debug, Default)]
pub(crate) struct MappingCache {
    by_schema: parking_lot::Mutex<HashMap<i64, Option<Arc<ColumnMapping>>>>,
}

impl MappingCache {
    /// The mapping of files written with schema `id` read as `read`; `data_schema` gives schema `id`.
    pub(crate) fn get(
        &self,
        id: i64,
        read: &TableSchema,
        data_schema: impl FnOnce() -> Result<Arc<TableSchema>>,
    ) -> Result<Option<Arc<ColumnMapping>>> {
        if id == read.id {
            return Ok(None);
        }
        if let Some(m) = self.by_schema.lock().get(&id) {
            return Ok(m.clone());
        }
        let data = data_schema()?;
        let mapping = ColumnMapping::between(&data, read).map(Arc::new);
        self.by_schema.lock().insert(id, mapping.clone());
        Ok(mapping)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_spec::{DataField, TypeRoot};

    fn field(id: i32, name: &str, root: TypeRoot) -> DataField {
        DataField { id, name: name.into(), data_type: DataType::nullable(root), description: None, default_value: None }
    }

    fn schema(id: i64, fields: Vec<DataField>) -> TableSchema {
        TableSchema {
            version: 3,
            id,
            highest_field_id: fields.iter().map(|f| f.id).max().unwrap_or(0),
            fields,
            partition_keys: vec![],
            primary_keys: vec!["k".into()],
            options: Default::default(),
            comment: None,
            time_millis: 0,
        }
    }

    #[test]
    fn unchanged_columns_need_no_mapping() {
        let a = schema(0, vec![field(0, "k", TypeRoot::BigInt), field(1, "v", TypeRoot::Int)]);
        let mut b = a.clone();
        b.id = 1;
        b.options.insert("x".into(), "y".into());
        assert_eq!(ColumnMapping::between(&a, &b), None);
    }

    #[test]
    fn a_reused_name_is_never_read_from_the_old_column() {
        // v (id 1) renamed to w, then a new column named v (id 2) added.
        let old = schema(0, vec![field(0, "k", TypeRoot::BigInt), field(1, "v", TypeRoot::Int)]);
        let new = schema(
            2,
            vec![field(0, "k", TypeRoot::BigInt), field(1, "w", TypeRoot::BigInt), field(2, "v", TypeRoot::Int)],
        );
        let m = ColumnMapping::between(&old, &new).unwrap();
        assert_eq!(m.resolve("v", DataType::nullable(TypeRoot::Int)), StoredColumn::Absent);
        assert_eq!(
            m.resolve("w", DataType::nullable(TypeRoot::BigInt)),
            StoredColumn::Stored { name: "v".into(), data_type: DataType::nullable(TypeRoot::Int) }
        );
        assert_eq!(
            m.resolve("k", DataType::nullable(TypeRoot::BigInt)),
            StoredColumn::Stored { name: "k".into(), data_type: DataType::nullable(TypeRoot::BigInt) }
        );
    }

    #[test]
    fn a_narrowing_read_fails_instead_of_truncating() {
        let a: ArrayRef = Arc::new(arrow_array::Int64Array::from(vec![Some(1), Some(1 << 40)]));
        let err = read_as(&a, &DataType::nullable(TypeRoot::BigInt), &DataType::nullable(TypeRoot::Int), "c");
        assert!(err.is_err());
        let ok = read_as(&a, &DataType::nullable(TypeRoot::BigInt), &DataType::nullable(TypeRoot::Double), "c");
        assert_eq!(ok.unwrap().len(), 2);
    }
}
