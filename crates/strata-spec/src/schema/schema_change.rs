//! Column changes to a table schema: the column kinds of Paimon's `org.apache.paimon.schema.SchemaChange`
//! (`AddColumn`, `DropColumn`, `RenameColumn`, `UpdateColumnType`), applied by the rules of
//! `org.apache.paimon.schema.SchemaManager.generateTableSchema`.
//!
//! [`apply_schema_changes`] is pure: it turns schema N into the candidate for schema N + 1, or says which
//! rule a change breaks, naming the column. Writing the file is the table crate's (`Table::alter_columns`).
//! Changes apply in order, each to the schema the previous ones left, so `rename a=b` then a type change of
//! `b` is judged by what `b` is then.
//!
//! Paimon's rules kept as they are: added columns are nullable and get the next field id (`highestFieldId`
//! grows, ids of dropped columns are never handed out again); renames and type changes keep the field id;
//! partition columns are never dropped, renamed or retyped; primary-key columns are never dropped or
//! retyped, and a rename carries the primary key (and `bucket-key`, `sequence.field` and the
//! `fields.<column>.*` aggregation keys Paimon renames) along; the last column is never dropped; Paimon's
//! system names (`SpecialFields`: `_KEY_*`, `_SEQUENCE_NUMBER`, `_VALUE_KIND`, `_LEVEL`, `rowkind`,
//! `_ROW_ID`) cannot be taken; `add-column-before-partition` places a column added without a position.
//!
//! Stricter than Paimon, because stored data would otherwise read differently:
//! - A type may only widen ([`type_change_refusal`]): Paimon's implicit casts (`DataTypeCasts`) that keep
//!   every stored value. Java also takes explicit casts by default (`BIGINT` to `INT`, `STRING` to `INT`),
//!   and its implicit set is decided by type root alone, so it includes casts that cut (`VARCHAR(10)` to
//!   `VARCHAR(5)`, `TIMESTAMP(6)` to `TIMESTAMP(3)`), round (`DECIMAL(10, 2)` to `DECIMAL(10, 1)`,
//!   `BIGINT` to `DOUBLE`), pad (`CHAR(3)` to `CHAR(5)`) or shift by the session time zone (`TIMESTAMP` to
//!   `TIMESTAMP WITH LOCAL TIME ZONE`) the values already stored.
//! - Nullable to NOT NULL is refused whatever `alter-column-null-to-not-null.disabled` says: stored rows
//!   may hold nulls.
//! - Empty names, and names that differ from another column's only in case, are refused (engines that fold
//!   case, such as Spark and Hive, would see two columns of one name).
//! - A column an option names (`bucket-key`, `sequence.field`, `rowkind.field`, `fields.<column>.*`, the
//!   `pk-*.index.columns`) cannot be dropped, nor renamed unless Paimon renames it in that option: a stale
//!   option names a missing column, or whichever column takes the name later.

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{Error, Result};
use crate::option_rules;
use crate::options as o;
use crate::schema::types::{DataType, TypeRoot};
use crate::schema::{DataField, TableSchema, SCHEMA_VERSION};

/// Names starting with this are Paimon's key fields in data files (`SpecialFields.KEY_FIELD_PREFIX`).
pub(crate) const KEY_FIELD_PREFIX: &str = "_KEY_";

/// Paimon's system field names (`SpecialFields.SYSTEM_FIELD_NAMES`); no column may take them.
pub(crate) const SYSTEM_FIELD_NAMES: &[&str] = &["_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID"];

/// Field ids from here up are Paimon's system fields (`SpecialFields.SYSTEM_FIELD_ID_START`).
pub(crate) const SYSTEM_FIELD_ID_START: i32 = i32::MAX / 2;

/// Paimon's option placing a column added without a position before the first partition column.
pub(crate) const ADD_COLUMN_BEFORE_PARTITION: &str = "add-column-before-partition";

/// Options whose value is a comma-separated list of columns.
const COLUMN_LIST_OPTIONS: &[&str] = &[
    o::BUCKET_KEY,
    o::SEQUENCE_FIELD,
    o::ROWKIND_FIELD,
    "pk-vector.index.columns",
    "pk-btree.index.columns",
    "pk-bitmap.index.columns",
    "pk-multivalue.index.columns",
    "pk-full-text.index.columns",
];

/// `fields.<column>.<property>` properties Paimon moves to the new name when the column is renamed.
const RENAMED_FIELD_PROPERTIES: &[&str] = &[
    "aggregate-function",
    "ignore-retract",
    "distinct",
    "list-agg-delimiter",
    "map.storage-layout",
    "map.shared-shredding.max-columns",
    "map.shared-shredding.column-placement-policy",
];

/// `fields.<columns>.<property>` properties whose value lists columns too.
const COLUMN_GROUP_PROPERTIES: &[&str] = &["sequence-group", "nested-key"];

/// Where an added column goes (Paimon's `SchemaChange.Move`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnMove {
    /// Before every other column.
    First,
    /// Right after the named column.
    After(String),
    /// Right before the named column.
    Before(String),
    /// After every other column.
    Last,
}

/// One column change (the column kinds of Paimon's `SchemaChange`).
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaChange {
    /// Adds a nullable column with a new field id.
    AddColumn {
        /// The new column's name.
        name: String,
        /// Its type; must be nullable.
        data_type: DataType,
        /// Where it goes; `None` is last (or before the partition columns with `add-column-before-partition`).
        position: Option<ColumnMove>,
        /// Its comment (the field's `description`).
        comment: Option<String>,
    },
    /// Drops a column that is neither a partition nor a primary-key column.
    DropColumn {
        /// The column.
        name: String,
    },
    /// Renames a column, keeping its field id.
    RenameColumn {
        /// The current name.
        from: String,
        /// The new name.
        to: String,
    },
    /// Widens a column's type, keeping its field id.
    UpdateColumnType {
        /// The column.
        name: String,
        /// The new type.
        data_type: DataType,
    },
}

impl SchemaChange {
    /// Adds `name` of `data_type` at the end, without a comment.
    pub fn add_column(name: impl Into<String>, data_type: DataType) -> Self {
        SchemaChange::AddColumn { name: name.into(), data_type, position: None, comment: None }
    }

    /// Drops `name`.
    pub fn drop_column(name: impl Into<String>) -> Self {
        SchemaChange::DropColumn { name: name.into() }
    }

    /// Renames `from` to `to`.
    pub fn rename_column(from: impl Into<String>, to: impl Into<String>) -> Self {
        SchemaChange::RenameColumn { from: from.into(), to: to.into() }
    }

    /// Changes the type of `name` to `data_type`.
    pub fn update_column_type(name: impl Into<String>, data_type: DataType) -> Self {
        SchemaChange::UpdateColumnType { name: name.into(), data_type }
    }
}

impl fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaChange::AddColumn { name, data_type, position, comment } => {
                write!(f, "add column {name} {data_type}")?;
                if let Some(c) = comment {
                    write!(f, " comment {c:?}")?;
                }
                match position {
                    None => Ok(()),
                    Some(ColumnMove::First) => f.write_str(" first"),
                    Some(ColumnMove::Last) => f.write_str(" last"),
                    Some(ColumnMove::After(x)) => write!(f, " after {x}"),
                    Some(ColumnMove::Before(x)) => write!(f, " before {x}"),
                }
            }
            SchemaChange::DropColumn { name } => write!(f, "drop column {name}"),
            SchemaChange::RenameColumn { from, to } => write!(f, "rename column {from} to {to}"),
            SchemaChange::UpdateColumnType { name, data_type } => write!(f, "change column {name} to {data_type}"),
        }
    }
}

/// The schema after `changes`, in order: id `old.id + 1`, options as they were but for the column
/// references Paimon renames, everything else checked as for a new schema. `time_millis` is `old`'s; the
/// caller stamps the commit time.
pub fn apply_schema_changes(old: &TableSchema, changes: &[SchemaChange]) -> Result<TableSchema> {
    let mut draft = Draft::new(old);
    for change in changes {
        match change {
            SchemaChange::AddColumn { name, data_type, position, comment } => {
                draft.add(name, *data_type, position.as_ref(), comment.as_ref())?
            }
            SchemaChange::DropColumn { name } => draft.drop(name)?,
            SchemaChange::RenameColumn { from, to } => draft.rename(from, to)?,
            SchemaChange::UpdateColumnType { name, data_type } => draft.update_type(name, *data_type)?,
        }
    }
    let id = old.id.checked_add(1).ok_or_else(|| Error::invalid("schema", "the schema id is at its maximum"))?;
    let next = TableSchema {
        version: SCHEMA_VERSION,
        id,
        fields: draft.fields,
        highest_field_id: draft.highest_field_id,
        partition_keys: old.partition_keys.clone(),
        primary_keys: draft.primary_keys,
        options: draft.options,
        comment: old.comment.clone(),
        time_millis: old.time_millis,
    };
    next.validate()?;
    option_rules::check_altered_options(old, &next)?;
    Ok(next)
}

/// `options` with every rename among `changes` applied in order, as [`apply_schema_changes`] applies them
/// (for comparing options before and after an alter without counting renamed references as changes).
pub fn options_after_renames(options: &BTreeMap<String, String>, changes: &[SchemaChange]) -> BTreeMap<String, String> {
    let mut options = options.clone();
    for change in changes {
        if let SchemaChange::RenameColumn { from, to } = change {
            rename_in_options(&mut options, from, to);
        }
    }
    options
}

/// The option keys of `options` that name `column` (as a list value, or in a `fields.<columns>.*` key or
/// its column-group value).
pub(crate) fn options_naming_column(options: &BTreeMap<String, String>, column: &str) -> Vec<String> {
    let names = |list: &str| list.split(',').any(|c| c.trim() == column);
    options
        .iter()
        .filter(|(key, value)| {
            if COLUMN_LIST_OPTIONS.contains(&key.as_str()) {
                return names(value);
            }
            match field_key_columns(key) {
                Some((columns, property)) => {
                    names(columns) || (COLUMN_GROUP_PROPERTIES.contains(&property) && names(value))
                }
                None => false,
            }
        })
        .map(|(key, _)| key.clone())
        .collect()
}

/// The columns and the property of a `fields.<columns>.<property>` key (`None` for other keys and for the
/// table-level `fields.default-aggregate-function`).
fn field_key_columns(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix("fields.")?;
    // Properties with dots in them first, so `fields.m.map.storage-layout` names `m`.
    for property in RENAMED_FIELD_PROPERTIES.iter().chain(COLUMN_GROUP_PROPERTIES) {
        if let Some(columns) = rest.strip_suffix(property).and_then(|r| r.strip_suffix('.')) {
            return Some((columns, property));
        }
    }
    rest.rsplit_once('.')
}

/// Renames `from` to `to` in the options Paimon rewrites on a rename (`SchemaManager
/// .applyRenameColumnsToOptions`): `bucket-key` and `sequence.field` values, the `fields.<column>.*`
/// aggregation keys, and the columns of `fields.<columns>.sequence-group` / `nested-key` keys and values.
fn rename_in_options(options: &mut BTreeMap<String, String>, from: &str, to: &str) {
    let rename_list = |list: &str| -> String {
        list.split(',').map(|c| if c.trim() == from { to } else { c }).collect::<Vec<_>>().join(",")
    };
    for key in [o::BUCKET_KEY, o::SEQUENCE_FIELD] {
        if let Some(value) = options.get_mut(key) {
            *value = rename_list(value);
        }
    }
    for property in RENAMED_FIELD_PROPERTIES {
        if let Some(value) = options.remove(&format!("fields.{from}.{property}")) {
            options.insert(format!("fields.{to}.{property}"), value);
        }
    }
    let groups: Vec<(String, String)> = options
        .keys()
        .filter_map(|k| match field_key_columns(k) {
            Some((columns, property)) if COLUMN_GROUP_PROPERTIES.contains(&property) => {
                Some((k.clone(), format!("fields.{}.{property}", rename_list(columns))))
            }
            _ => None,
        })
        .collect();
    for (old_key, new_key) in groups {
        if let Some(value) = options.remove(&old_key) {
            options.insert(new_key, rename_list(&value));
        }
    }
}

/// The schema being changed: what the changes so far made of it.
struct Draft<'a> {
    fields: Vec<DataField>,
    primary_keys: Vec<String>,
    partition_keys: &'a [String],
    options: BTreeMap<String, String>,
    highest_field_id: i32,
}

fn column_error(name: &str, message: impl Into<String>) -> Error {
    Error::invalid(format!("column '{name}'"), message)
}

impl<'a> Draft<'a> {
    fn new(old: &'a TableSchema) -> Self {
        Draft {
            fields: old.fields.clone(),
            primary_keys: old.primary_keys.clone(),
            partition_keys: &old.partition_keys,
            options: old.options.clone(),
            highest_field_id: old.highest_field_id,
        }
    }

    /// The index of column `name`, or an error with the column of another case if there is one.
    fn position(&self, name: &str) -> Result<usize> {
        if let Some(i) = self.fields.iter().position(|f| f.name == name) {
            return Ok(i);
        }
        let lower = name.to_lowercase();
        let message = match self.fields.iter().find(|f| f.name.to_lowercase() == lower) {
            Some(f) => format!("no such column; did you mean '{}'? (column names are case-sensitive)", f.name),
            None => format!(
                "no such column (the columns are {})",
                self.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
        };
        Err(column_error(name, message))
    }

    /// Refuses `action` on a partition or primary-key column.
    fn refuse_key_column(&self, name: &str, action: &str, partition_why: &str, key_why: &str) -> Result<()> {
        if self.partition_keys.iter().any(|k| k == name) {
            return Err(column_error(name, format!("cannot {action} a partition column: {partition_why}")));
        }
        if self.primary_keys.iter().any(|k| k == name) {
            return Err(column_error(name, format!("cannot {action} a primary-key column: {key_why}")));
        }
        Ok(())
    }

    /// Refuses `name` as the name of a new column (or of column `renamed` after a rename).
    fn check_new_name(&self, name: &str, renamed: Option<&str>) -> Result<()> {
        if name.trim().is_empty() {
            return Err(Error::invalid("column name", "a column name cannot be empty"));
        }
        if name.starts_with(KEY_FIELD_PREFIX) {
            return Err(column_error(
                name,
                format!("names starting with {KEY_FIELD_PREFIX} are Paimon's key fields in data files"),
            ));
        }
        if SYSTEM_FIELD_NAMES.contains(&name) {
            return Err(column_error(name, "it is a Paimon system field name"));
        }
        let lower = name.to_lowercase();
        for f in &self.fields {
            if f.name == name {
                return Err(column_error(name, "a column of that name already exists"));
            }
            if f.name.to_lowercase() == lower && Some(f.name.as_str()) != renamed {
                return Err(column_error(
                    name,
                    format!(
                        "it differs from column '{}' only in case (did you mean '{}'?); engines that ignore case \
                         would see two columns of one name",
                        f.name, f.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The next field id: past `highestFieldId` (so a dropped column's id is never reused) and past every
    /// id present (a schema whose counter lags behind its fields cannot hand out an id twice).
    fn next_field_id(&mut self) -> Result<i32> {
        let highest = self.fields.iter().map(|f| f.id).fold(self.highest_field_id, i32::max);
        let id = highest
            .checked_add(1)
            .filter(|id| *id < SYSTEM_FIELD_ID_START)
            .ok_or_else(|| Error::invalid("schema", "no field id is left below Paimon's system field ids"))?;
        self.highest_field_id = id;
        Ok(id)
    }

    fn add(
        &mut self,
        name: &str,
        data_type: DataType,
        position: Option<&ColumnMove>,
        comment: Option<&String>,
    ) -> Result<()> {
        if !data_type.nullable {
            return Err(column_error(
                name,
                format!(
                    "an added column cannot be NOT NULL ({data_type}): rows already stored have no value for it \
                     (Paimon's rule)"
                ),
            ));
        }
        self.check_new_name(name, None)?;
        let reference = |x: &str| {
            self.position(x).map_err(|_| column_error(x, format!("no such column to place new column '{name}' by")))
        };
        let at = match position {
            Some(ColumnMove::First) => 0,
            Some(ColumnMove::Last) => self.fields.len(),
            Some(ColumnMove::After(x)) => reference(x)? + 1,
            Some(ColumnMove::Before(x)) => reference(x)?,
            None => self.default_position(),
        };
        let id = self.next_field_id()?;
        self.fields.insert(
            at,
            DataField { id, name: name.to_string(), data_type, description: comment.cloned(), default_value: None },
        );
        Ok(())
    }

    /// Last, or before the first partition column when `add-column-before-partition` is on.
    fn default_position(&self) -> usize {
        let before_partition =
            self.options.get(ADD_COLUMN_BEFORE_PARTITION).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let first_partition = self.fields.iter().position(|f| self.partition_keys.contains(&f.name));
        match first_partition {
            Some(i) if before_partition => i,
            _ => self.fields.len(),
        }
    }

    fn drop(&mut self, name: &str) -> Result<()> {
        let i = self.position(name)?;
        self.refuse_key_column(name, "drop", "stored files are laid out by it", "stored rows are merged by it")?;
        if let Some(key) = options_naming_column(&self.options, name).first() {
            return Err(column_error(
                name,
                format!("cannot drop it: option '{key}' names it (change or unset the option first)"),
            ));
        }
        if self.fields.len() == 1 {
            return Err(column_error(name, "cannot drop the table's last column"));
        }
        self.fields.remove(i);
        Ok(())
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<()> {
        let i = self.position(from)?;
        if self.partition_keys.iter().any(|k| k == from) {
            return Err(column_error(
                from,
                "cannot rename a partition column: stored partition directories are named by it",
            ));
        }
        self.check_new_name(to, Some(from))?;
        self.fields[i].name = to.to_string();
        for k in self.primary_keys.iter_mut().filter(|k| *k == from) {
            *k = to.to_string();
        }
        rename_in_options(&mut self.options, from, to);
        if let Some(key) = options_naming_column(&self.options, from).first() {
            return Err(column_error(
                from,
                format!(
                    "cannot rename it: option '{key}' names it and Paimon does not rename it there (change or \
                     unset the option first)"
                ),
            ));
        }
        Ok(())
    }

    fn update_type(&mut self, name: &str, to: DataType) -> Result<()> {
        let i = self.position(name)?;
        self.refuse_key_column(
            name,
            "change the type of",
            "stored partition values are encoded in the old type",
            "stored keys are sorted and bucketed in the old type",
        )?;
        if let Some(key) = options_naming_column(&self.options, name).iter().find(|k| k.starts_with("pk-")) {
            return Err(column_error(
                name,
                format!("cannot change the type of a primary-key index column (option '{key}')"),
            ));
        }
        let from = self.fields[i].data_type;
        if from.nullable && !to.nullable {
            return Err(column_error(
                name,
                format!("cannot change {from} to {to}: stored rows may hold nulls (nullable to NOT NULL)"),
            ));
        }
        if let Some(why) = type_change_refusal(from.root, to.root) {
            return Err(column_error(name, format!("cannot change {from} to {to}: {why}")));
        }
        self.fields[i].data_type = to;
        Ok(())
    }
}

/// Digits an integer type's values may have.
fn integer_digits(root: TypeRoot) -> Option<i32> {
    match root {
        TypeRoot::TinyInt => Some(3),
        TypeRoot::SmallInt => Some(5),
        TypeRoot::Int => Some(10),
        TypeRoot::BigInt => Some(19),
        _ => None,
    }
}

/// Why a column of type `from` cannot change to `to`, or `None` when it can: the change must be one of
/// Paimon's implicit casts (`DataTypeCasts.supportsImplicitCast`, with a cast executor in `CastExecutors`)
/// that reads every stored value back unchanged, a widening. Nullability is the caller's to check.
pub(crate) fn type_change_refusal(from: TypeRoot, to: TypeRoot) -> Option<String> {
    use TypeRoot as T;
    if from == to {
        return None;
    }
    let narrowing = |what: String| Some(format!("stored values would {what} (a narrowing)"));
    match (from, to) {
        (T::TinyInt, T::SmallInt | T::Int | T::BigInt) | (T::SmallInt, T::Int | T::BigInt) | (T::Int, T::BigInt) => {
            None
        }
        // A float's 24-bit significand holds every 16-bit integer, a double's 53 bits every 32-bit one.
        (T::TinyInt | T::SmallInt, T::Float) | (T::TinyInt | T::SmallInt | T::Int | T::Float, T::Double) => None,
        (T::Int | T::BigInt | T::Decimal { .. }, T::Float) | (T::BigInt | T::Decimal { .. }, T::Double) => {
            Some(format!("{to} cannot hold every {from} value exactly, so stored values would be rounded"))
        }
        (_, T::Decimal { precision, scale }) if integer_digits(from).is_some() => {
            let (need, room) = (integer_digits(from).unwrap_or(0), i32::from(precision) - i32::from(scale));
            (room < need).then(|| {
                format!("{to} keeps {room} integer digits and {from} values have up to {need}, so stored values would overflow")
            })
        }
        (T::Decimal { precision: p, scale: s }, T::Decimal { precision: p2, scale: s2 }) => {
            if s2 < s {
                narrowing(format!("be rounded to {s2} decimal places"))
            } else if i32::from(p2) - i32::from(s2) < i32::from(p) - i32::from(s) {
                narrowing(format!("overflow past {} integer digits", i32::from(p2) - i32::from(s2)))
            } else {
                None
            }
        }
        (T::Float | T::Double, T::Decimal { .. }) => narrowing("be rounded to the decimal's scale".into()),
        (T::Char(n) | T::VarChar(n), T::VarChar(m)) | (T::Binary(n) | T::VarBinary(n), T::VarBinary(m)) => {
            (m < n).then(|| format!("stored values longer than {m} would be cut (a narrowing)"))
        }
        (T::Char(_), T::Char(_)) | (T::Binary(_), T::Binary(_)) => {
            Some("a fixed length pads or cuts every stored value to the new length".to_string())
        }
        (T::Timestamp(p), T::Timestamp(q)) | (T::LocalZonedTimestamp(p), T::LocalZonedTimestamp(q)) => {
            (q < p).then(|| format!("stored values would be cut to precision {q} (a narrowing)"))
        }
        (T::Timestamp(_), T::LocalZonedTimestamp(_)) | (T::LocalZonedTimestamp(_), T::Timestamp(_)) => Some(
            "readers convert between the two through the session time zone, so stored values would shift".to_string(),
        ),
        (T::Time(_), T::Time(_)) => Some("Paimon has no cast between TIME precisions".to_string()),
        (T::Timestamp(_), T::Date | T::Time(_)) => narrowing("lose their time of day or their date".into()),
        _ => Some(format!(
            "it is not a widening (Paimon casts {from} to {to} only explicitly, if at all, which changes or drops \
             stored values)"
        )),
    }
}

#[cfg(test)]
#[path = "schema_change_tests.rs"]
mod tests;
