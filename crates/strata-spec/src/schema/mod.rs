//! `TableSchema`: the JSON file `schema/schema-N`.
//!
//! Matches Paimon's `org.apache.paimon.schema.TableSchema` and `SchemaSerializer` (version 3).

pub(crate) mod schema_change;
pub(crate) mod types;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::options::CoreOptions;
use crate::schema::types::DataType;

/// The schema format version Strata writes.
pub(crate) const SCHEMA_VERSION: i32 = 3;

/// One column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataField {
    /// Field id, stable across schema evolution.
    pub id: i32,
    /// Column name.
    pub name: String,
    /// Column type.
    #[serde(rename = "type")]
    pub data_type: DataType,
    /// Column comment.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub description: Option<String>,
    /// The value Paimon's writers store for a null in this column (`DataField.defaultValue`, a string in the
    /// column's type). Kept verbatim so a schema Strata rewrites (an alter) does not lose it.
    #[serde(rename = "defaultValue", skip_serializing_if = "Option::is_none", default)]
    pub default_value: Option<String>,
}

/// A table's schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableSchema {
    /// Format version.
    #[serde(default = "default_version")]
    pub version: i32,
    /// Schema id (the N of `schema-N`).
    pub id: i64,
    /// Columns in order.
    pub fields: Vec<DataField>,
    /// Largest field id used so far.
    pub highest_field_id: i32,
    /// Partition columns. Required, as Paimon always writes it (`[]` for none): a schema file without it is
    /// damaged, not a table without partitions.
    pub partition_keys: Vec<String>,
    /// Primary-key columns (partition columns included, as Paimon stores them). Required, as Paimon always
    /// writes it: a schema file whose `primaryKeys` name lost a byte must not read a primary-key table's
    /// files as an append table's (every stored version of every row, retractions included).
    pub primary_keys: Vec<String>,
    /// Table options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Table comment.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub comment: Option<String>,
    /// Creation time, epoch milliseconds.
    #[serde(default)]
    pub time_millis: i64,
}

fn default_version() -> i32 {
    SCHEMA_VERSION
}

impl TableSchema {
    /// A new schema 0 for a table, validated. Primary-key columns become NOT NULL, as in Paimon.
    pub fn new(
        columns: Vec<(String, DataType)>,
        partition_keys: Vec<String>,
        primary_keys: Vec<String>,
        options: BTreeMap<String, String>,
        time_millis: i64,
    ) -> Result<Self> {
        let fields: Vec<DataField> = columns
            .into_iter()
            .enumerate()
            .map(|(i, (name, data_type))| {
                let data_type = if primary_keys.contains(&name) { data_type.with_nullable(false) } else { data_type };
                DataField { id: i as i32, name, data_type, description: None, default_value: None }
            })
            .collect();
        let schema = TableSchema {
            version: SCHEMA_VERSION,
            id: 0,
            highest_field_id: fields.len() as i32 - 1,
            fields,
            partition_keys,
            primary_keys,
            options,
            comment: None,
            time_millis,
        };
        schema.validate()?;
        Ok(schema)
    }

    /// Checks names, keys and options.
    pub fn validate(&self) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        for f in &self.fields {
            if f.name.is_empty() {
                return Err(Error::invalid("schema", "a column has an empty name"));
            }
            if !seen.insert(f.name.as_str()) {
                return Err(Error::invalid("schema", format!("column '{}' appears twice", f.name)));
            }
        }
        for (what, keys) in [("partition key", &self.partition_keys), ("primary key", &self.primary_keys)] {
            for k in keys {
                if !seen.contains(k.as_str()) {
                    return Err(Error::invalid("schema", format!("{what} '{k}' is not a column")));
                }
            }
        }
        if !self.primary_keys.is_empty() {
            for p in &self.partition_keys {
                if !self.primary_keys.contains(p) && self.core_options().bucket().ok() == Some(-1) {
                    // Legal in Paimon: a key may then move between partitions, tracked by a global index.
                    return Err(Error::unsupported(format!(
                        "bucket = -1 with a primary key {:?} that does not hold partition key '{p}': that is Paimon's cross-partition update mode (KEY_DYNAMIC), which Strata does not read or write; put the partition keys into the primary key",
                        self.primary_keys
                    )));
                }
                if !self.primary_keys.contains(p) {
                    return Err(Error::invalid(
                        "schema",
                        format!("primary key must include partition key '{p}' (Paimon's rule)"),
                    ));
                }
            }
            if self.trimmed_primary_keys().is_empty() {
                return Err(Error::invalid("schema", "primary key has no column besides the partition keys"));
            }
        }
        let options = self.core_options();
        options.validate()?;
        if let Some(bk) = options.bucket_key() {
            for k in &bk {
                if !seen.contains(k.as_str()) {
                    return Err(Error::invalid("option 'bucket-key'", format!("'{k}' is not a column")));
                }
            }
        }
        Ok(())
    }

    /// Parses `schema-N` JSON.
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        let s: TableSchema = serde_json::from_slice(bytes).map_err(|e| {
            let msg = e.to_string();
            if msg.contains("unsupported:") {
                Error::unsupported(msg)
            } else if msg.contains("invalid type string") {
                Error::invalid("schema", msg)
            } else {
                Error::corrupt(format!("malformed schema JSON: {msg}"))
            }
        })?;
        Ok(s)
    }

    /// The JSON Strata writes.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(|e| Error::internal_from("schema", e))
    }

    /// Typed options.
    pub fn core_options(&self) -> CoreOptions {
        CoreOptions::new(self.options.clone())
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Result<&DataField> {
        self.fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| Error::invalid("column", format!("'{name}' is not in the schema")))
    }

    fn fields_of(&self, names: &[String]) -> Result<Vec<DataField>> {
        names.iter().map(|n| self.field(n).cloned()).collect()
    }

    /// Primary keys without the partition keys: the key of the LSM tree and of data files.
    pub fn trimmed_primary_keys(&self) -> Vec<String> {
        self.primary_keys.iter().filter(|k| !self.partition_keys.contains(k)).cloned().collect()
    }

    /// Fields of the trimmed primary key.
    pub fn trimmed_primary_key_fields(&self) -> Result<Vec<DataField>> {
        self.fields_of(&self.trimmed_primary_keys())
    }

    /// Partition fields.
    pub fn partition_fields(&self) -> Result<Vec<DataField>> {
        self.fields_of(&self.partition_keys)
    }

    /// Bucket key columns: `bucket-key` if set, else the trimmed primary key, else all columns.
    pub fn bucket_keys(&self) -> Vec<String> {
        if let Some(bk) = self.core_options().bucket_key() {
            if !bk.is_empty() {
                return bk;
            }
        }
        let pk = self.trimmed_primary_keys();
        if !pk.is_empty() {
            return pk;
        }
        self.fields.iter().map(|f| f.name.clone()).collect()
    }

    /// Bucket key fields.
    pub fn bucket_key_fields(&self) -> Result<Vec<DataField>> {
        self.fields_of(&self.bucket_keys())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_pypaimon_schema_and_trims_keys() {
        let json = br#"{"version":3,"id":0,"fields":[{"id":0,"name":"id","type":"BIGINT NOT NULL"},
            {"id":1,"name":"p","type":"STRING NOT NULL"},{"id":2,"name":"v","type":"BIGINT"}],
            "highestFieldId":2,"partitionKeys":["p"],"primaryKeys":["id","p"],
            "options":{"bucket":"4"},"comment":null,"timeMillis":1}"#;
        let s = TableSchema::from_json(json).unwrap();
        assert_eq!(s.trimmed_primary_keys(), vec!["id".to_string()]);
        assert_eq!(s.bucket_keys(), vec!["id".to_string()]);
        let back = TableSchema::from_json(s.to_json().unwrap().as_bytes()).unwrap();
        assert_eq!(back, s);
    }

    /// A Java schema's column default survives a rewrite (an alter writes the schema Strata parsed).
    #[test]
    fn a_column_default_value_survives_a_round_trip() {
        let json = br#"{"version":3,"id":0,"fields":[{"id":0,"name":"id","type":"BIGINT NOT NULL"},
            {"id":1,"name":"v","type":"INT","description":"d","defaultValue":"7"}],
            "highestFieldId":1,"partitionKeys":[],"primaryKeys":["id"],"options":{},"timeMillis":1}"#;
        let s = TableSchema::from_json(json).unwrap();
        assert_eq!(s.fields[1].default_value.as_deref(), Some("7"));
        let out = s.to_json().unwrap();
        assert!(out.contains(r#""defaultValue": "7""#) || out.contains(r#""defaultValue":"7""#), "{out}");
        assert_eq!(TableSchema::from_json(out.as_bytes()).unwrap(), s);
    }

    #[test]
    fn bad_schemas_are_typed_errors() {
        let unknown = br#"{"id":0,"fields":[{"id":0,"name":"id","type":"BIGNUM"}],"highestFieldId":0}"#;
        let e = TableSchema::from_json(unknown).err().unwrap();
        assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{e}");
        assert!(e.to_string().contains("BIGNUM"), "{e}");
        let e = TableSchema::from_json(b"{\"id\": ").err().unwrap();
        assert_eq!(e.kind(), crate::ErrorKind::Corrupt);
        let cols = vec![("id".to_string(), DataType::bigint())];
        let e = TableSchema::new(cols, vec![], vec!["nope".into()], Default::default(), 0).err().unwrap();
        assert!(e.to_string().contains("nope"), "{e}");
    }
}

/// Parses a column list such as `id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2)`.
pub fn parse_columns(s: &str) -> Result<Vec<(String, DataType)>> {
    let mut cols = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes: Vec<char> = s.chars().collect();
    let mut pieces = Vec::new();
    for (i, c) in bytes.iter().enumerate() {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(bytes[start..i].iter().collect::<String>());
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(bytes[start..].iter().collect::<String>());
    for piece in pieces {
        let piece = piece.trim();
        if piece.is_empty() {
            return Err(Error::invalid("schema", format!("empty column in '{s}'")));
        }
        let (name, ty) = piece
            .split_once(char::is_whitespace)
            .ok_or_else(|| Error::invalid("schema", format!("column '{piece}' has no type (expected 'name TYPE')")))?;
        let name = name.trim_matches('`').to_string();
        let ty: DataType = ty.trim().parse()?;
        cols.push((name, ty));
    }
    Ok(cols)
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    #[test]
    fn parses_column_lists() {
        let cols = parse_columns("id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2)").unwrap();
        assert_eq!(cols.len(), 3);
        assert_eq!(cols[2].1.to_string(), "DECIMAL(10, 2)");
        assert!(!cols[0].1.nullable);
        assert!(parse_columns("id").is_err());
        assert!(parse_columns("id BIGINT,,").is_err());
        assert!(parse_columns("id WHATEVER").is_err());
    }
}
