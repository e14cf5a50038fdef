//! The key-value file layout of primary-key tables (Paimon's `KeyValue` files).
//!
//! Columns: `_KEY_<k>` for each trimmed primary-key column, `_SEQUENCE_NUMBER` (BIGINT NOT NULL),
//! `_VALUE_KIND` (TINYINT NOT NULL: +I 0, -U 1, +U 2, -D 3), then every column of the row. Rows are sorted
//! by key, then sequence number. Field ids follow Paimon's `SpecialFields`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use strata_spec::{DataField, DataFileMeta, Error, Result, TableSchema};

use crate::layout::arrow_types::to_arrow;
use crate::layout::evolution::{MappingCache, SchemaHistory};
use crate::read::file_ref::DataFileRef;

pub(crate) use crate::layout::system_fields::{KEY_FIELD_ID_START, SEQUENCE_NUMBER_FIELD_ID, VALUE_KIND_FIELD_ID};
pub use crate::layout::system_fields::{KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND};

/// A row's kind (Paimon's `RowKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// +I
    Insert,
    /// -U
    UpdateBefore,
    /// +U
    UpdateAfter,
    /// -D
    Delete,
}

impl RowKind {
    /// The stored byte.
    pub fn to_byte(self) -> i8 {
        match self {
            RowKind::Insert => 0,
            RowKind::UpdateBefore => 1,
            RowKind::UpdateAfter => 2,
            RowKind::Delete => 3,
        }
    }

    /// From the stored byte.
    pub fn from_byte(b: i8) -> Result<Self> {
        match b {
            0 => Ok(RowKind::Insert),
            1 => Ok(RowKind::UpdateBefore),
            2 => Ok(RowKind::UpdateAfter),
            3 => Ok(RowKind::Delete),
            other => Err(Error::corrupt(format!("unknown row kind {other}"))),
        }
    }

    /// From Paimon's short string (`+I`, `-U`, `+U`, `-D`), as `rowkind.field` values are written.
    pub fn from_short_string(s: &str) -> Result<Self> {
        match s.trim() {
            "+I" => Ok(RowKind::Insert),
            "-U" => Ok(RowKind::UpdateBefore),
            "+U" => Ok(RowKind::UpdateAfter),
            "-D" => Ok(RowKind::Delete),
            other => Err(Error::invalid("row kind", format!("'{other}' is not one of +I, -U, +U, -D"))),
        }
    }

    /// Whether the row retracts (-U, -D).
    pub fn is_retract(self) -> bool {
        matches!(self, RowKind::UpdateBefore | RowKind::Delete)
    }

    /// Whether a stored byte is a retract kind.
    pub fn byte_is_retract(b: i8) -> bool {
        b == 1 || b == 3
    }
}

/// Where the columns of a table sit in its key-value files.
#[derive(Debug, Clone)]
pub struct KeyValueLayout {
    /// Trimmed primary-key columns.
    pub key_fields: Vec<DataField>,
    /// All columns of the row.
    pub value_fields: Vec<DataField>,
    /// For each key column, its index among the value columns.
    pub key_in_value: Vec<usize>,
    /// The Arrow schema of the files.
    pub file_schema: SchemaRef,
    /// The Arrow schema of the rows (value columns only).
    pub value_schema: SchemaRef,
    /// `data-file.thin-mode`: files are written without the key columns.
    pub thin: bool,
    /// The Arrow schema of the files as written: [`Self::file_schema`], without the key columns when thin.
    pub stored_schema: SchemaRef,
    /// The reading schema.
    pub schema: Arc<TableSchema>,
    /// An append table's (no primary key): its files hold the value columns alone, no key, sequence or kind
    /// column (Paimon's `AppendOnlyFileStore` files), and every row is live until a deletion vector says not.
    pub append: bool,
    /// The schemas older files were written with (files of another schema cannot be read without it).
    history: Option<Arc<dyn SchemaHistory>>,
    mappings: Arc<MappingCache>,
}

fn field_with_id(name: &str, t: ArrowType, nullable: bool, id: i32) -> Field {
    Field::new(name, t, nullable).with_metadata(HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]))
}

impl KeyValueLayout {
    /// The layout of `schema`'s files.
    pub fn new(schema: &TableSchema) -> Result<Self> {
        if schema.primary_keys.is_empty() {
            return Ok(Self::append_only(schema));
        }
        let key_fields = schema.trimmed_primary_key_fields()?;
        if key_fields.is_empty() {
            return Err(Error::invalid("schema", "the primary key is the partition key: no key is left to sort by"));
        }
        let value_fields = schema.fields.clone();
        let key_in_value =
            key_fields.iter().map(|k| value_fields.iter().position(|v| v.name == k.name).unwrap_or(0)).collect();
        let mut fields: Vec<Field> = key_fields
            .iter()
            .map(|k| {
                field_with_id(
                    &format!("{KEY_PREFIX}{}", k.name),
                    to_arrow(&k.data_type),
                    false,
                    KEY_FIELD_ID_START + k.id,
                )
            })
            .collect();
        fields.push(field_with_id(SEQUENCE_NUMBER, ArrowType::Int64, false, SEQUENCE_NUMBER_FIELD_ID));
        fields.push(field_with_id(VALUE_KIND, ArrowType::Int8, false, VALUE_KIND_FIELD_ID));
        let values: Vec<Field> = value_fields
            .iter()
            .map(|f| field_with_id(&f.name, to_arrow(&f.data_type), f.data_type.nullable, f.id))
            .collect();
        fields.extend(values.iter().cloned());
        let thin = schema.core_options().data_file_thin_mode()?;
        let stored: Vec<Field> = if thin { fields[key_fields.len()..].to_vec() } else { fields.clone() };
        Ok(KeyValueLayout {
            key_fields,
            value_fields,
            key_in_value,
            file_schema: Arc::new(Schema::new(fields)),
            value_schema: Arc::new(Schema::new(values)),
            thin,
            stored_schema: Arc::new(Schema::new(stored)),
            schema: Arc::new(schema.clone()),
            append: false,
            history: None,
            mappings: Arc::new(MappingCache::default()),
        })
    }

    /// The layout of an append table's files: the value columns, with their field ids.
    fn append_only(schema: &TableSchema) -> Self {
        let value_fields = schema.fields.clone();
        let values: Vec<Field> = value_fields
            .iter()
            .map(|f| field_with_id(&f.name, to_arrow(&f.data_type), f.data_type.nullable, f.id))
            .collect();
        let values = Arc::new(Schema::new(values));
        KeyValueLayout {
            key_fields: Vec::new(),
            value_fields,
            key_in_value: Vec::new(),
            file_schema: values.clone(),
            value_schema: values.clone(),
            thin: false,
            stored_schema: values,
            schema: Arc::new(schema.clone()),
            append: true,
            history: None,
            mappings: Arc::new(MappingCache::default()),
        }
    }

    /// This layout reading files of older schemas through `history`.
    pub fn with_history(mut self, history: Arc<dyn SchemaHistory>) -> Self {
        self.history = Some(history);
        self
    }

    /// The schema history this layout reads older files through, if any.
    pub fn history(&self) -> Option<&Arc<dyn SchemaHistory>> {
        self.history.as_ref()
    }

    /// The schema files with schema id `id` were written with.
    pub fn data_schema(&self, id: i64) -> Result<Arc<TableSchema>> {
        if id == self.schema.id {
            return Ok(self.schema.clone());
        }
        match &self.history {
            Some(h) => h.schema(id),
            None => Err(Error::invalid(
                "data file",
                format!(
                    "was written with schema {id}, and this read (schema {}) has no schema history",
                    self.schema.id
                ),
            )),
        }
    }

    /// A reference to the data file at `path` that `meta` describes, with the mapping its schema needs.
    pub fn file_ref(
        &self,
        path: String,
        meta: DataFileMeta,
        dv: Option<Arc<strata_dv::DeletionVector>>,
    ) -> Result<DataFileRef> {
        let mapping = self
            .mappings
            .get(meta.schema_id, &self.schema, || self.data_schema(meta.schema_id))
            .map_err(|e| e.in_file(&path))?;
        Ok(DataFileRef { path, meta, dv, mapping, footers: None, rows: None })
    }

    /// Refuses a file this layout cannot read as its own: one with a key range in an append table. Read as
    /// appended rows, a primary-key table's file would give every stored version of every row, retractions
    /// included; the schema (damaged or crafted) and the files disagree.
    pub fn check_file(&self, meta: &DataFileMeta) -> Result<()> {
        if self.append && meta.min_key.arity() > 0 {
            return Err(Error::corrupt(format!(
                "data file {} has a key range, but the table's schema has no primary key",
                meta.file_name
            )));
        }
        Ok(())
    }

    /// The layout of a merge over keys alone (`late_merge`): the key, sequence and kind columns, and one
    /// value column, `place`, which names each record's file and row.
    pub(crate) fn keys_with(&self, place: DataField) -> KeyValueLayout {
        let k = self.key_arity();
        let place_field = Field::new(&place.name, to_arrow(&place.data_type), false);
        let mut fields: Vec<Field> = self.file_schema.fields()[..k + 2].iter().map(|f| f.as_ref().clone()).collect();
        fields.push(place_field.clone());
        let file_schema = Arc::new(Schema::new(fields));
        KeyValueLayout {
            key_fields: self.key_fields.clone(),
            value_fields: vec![place],
            key_in_value: vec![0; k],
            file_schema: file_schema.clone(),
            value_schema: Arc::new(Schema::new(vec![place_field])),
            thin: false,
            stored_schema: file_schema,
            schema: self.schema.clone(),
            append: false,
            history: None,
            mappings: Arc::default(),
        }
    }

    /// Number of key columns.
    pub fn key_arity(&self) -> usize {
        self.key_fields.len()
    }

    /// Index of `_SEQUENCE_NUMBER` in the file schema.
    pub fn seq_index(&self) -> usize {
        self.key_arity()
    }

    /// Index of `_VALUE_KIND` in the file schema.
    pub fn kind_index(&self) -> usize {
        self.key_arity() + 1
    }

    /// Index of value column `i` in the file schema.
    pub fn value_index(&self, i: usize) -> usize {
        if self.append {
            i
        } else {
            self.key_arity() + 2 + i
        }
    }

    /// Index of the value column named `name`.
    pub fn value_position(&self, name: &str) -> Result<usize> {
        self.value_fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| Error::invalid("column", format!("'{name}' is not in the table")))
    }
}
