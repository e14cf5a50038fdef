//! The table's columns as an input file meets them: names matched exactly (Paimon column names are
//! case-sensitive), unknown names refused with a "did you mean", and the batch schema readers build.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use strata_spec::{DataType, Error, Result, TableSchema};

use super::builder::ColumnBuilder;

/// The columns of the table being written.
pub(crate) struct TableColumns {
    names: Vec<String>,
    types: Vec<DataType>,
    by_name: HashMap<String, usize>,
    schema: SchemaRef,
}

impl TableColumns {
    /// The columns of `schema`, in order.
    pub(crate) fn new(schema: &TableSchema) -> Self {
        let names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
        let types: Vec<DataType> = schema.fields.iter().map(|f| f.data_type).collect();
        let by_name = names.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
        let fields: Vec<Field> =
            names.iter().zip(&types).map(|(n, t)| Field::new(n, strata_format::to_arrow(t), true)).collect();
        TableColumns { names, types, by_name, schema: Arc::new(Schema::new(fields)) }
    }

    /// How many columns.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The column named exactly `name`.
    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        // Comparing a few short names beats hashing one (this runs for every field of every jsonl line).
        if self.names.len() <= 16 {
            return self.names.iter().position(|n| n == name);
        }
        self.by_name.get(name).copied()
    }

    /// Column `i`'s name.
    pub(crate) fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// Column `i`'s type.
    pub(crate) fn data_type(&self, i: usize) -> DataType {
        self.types[i]
    }

    /// One empty builder per column.
    pub(crate) fn builders(&self) -> Vec<ColumnBuilder> {
        self.types.iter().map(|t| ColumnBuilder::new(*t)).collect()
    }

    /// A batch of the table's columns (each already of its Arrow type).
    pub(crate) fn batch(&self, columns: Vec<ArrayRef>) -> Result<RecordBatch> {
        RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| Error::internal_from("input batch", e))
    }

    /// Why `field` (not a column) is refused: the column it is nearest to, and the way to drop such fields.
    pub(crate) fn unknown_field(&self, field: &str) -> String {
        let same_case = self.names.iter().find(|n| n.eq_ignore_ascii_case(field));
        let hint = match same_case {
            Some(n) => format!("; did you mean '{n}'? (column names are case-sensitive)"),
            None => {
                // A typo: a few edits, fewer than the name has characters.
                let len = field.chars().count();
                let max = (len / 3).max(1);
                let near = self
                    .names
                    .iter()
                    .map(|n| (typo_distance(field, n), n))
                    .filter(|(d, _)| *d <= max && *d < len)
                    .min();
                match near {
                    Some((_, n)) => format!("; did you mean '{n}'?"),
                    None => format!("; the columns are {}", self.names.join(", ")),
                }
            }
        };
        format!("'{field}' is not a column of the table{hint} (--ignore-unknown-fields drops fields the table does not have)")
    }

    /// Maps an input's field names (a CSV header, `--columns`, a parquet schema) to columns: `None` for a
    /// field dropped by `ignore_unknown`. Refuses a name given twice, an unknown name, and a file without a
    /// NOT NULL column. `place` names the input ("input a.csv line 1"); `hint` ends an unknown-field message.
    pub(crate) fn map_fields(
        &self,
        fields: &[String],
        ignore_unknown: bool,
        place: &str,
        hint: &str,
    ) -> Result<Vec<Option<usize>>> {
        let mut seen = vec![false; self.len()];
        let mut mapping = Vec::with_capacity(fields.len());
        for name in fields {
            match self.index(name) {
                Some(i) if seen[i] => return Err(Error::invalid(place, format!("field '{name}' is given twice"))),
                Some(i) => {
                    seen[i] = true;
                    mapping.push(Some(i));
                }
                None if ignore_unknown => mapping.push(None),
                None => return Err(Error::invalid(place, format!("{}{hint}", self.unknown_field(name)))),
            }
        }
        if let Some(i) = (0..self.len()).find(|&i| !seen[i] && !self.types[i].nullable) {
            return Err(Error::invalid(
                place,
                format!("there is no field '{}', and the column is NOT NULL", self.names[i]),
            ));
        }
        Ok(mapping)
    }
}

/// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`: the optimal string alignment
/// distance, so `nmae` is one edit from `name`.
fn typo_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_near_and_short_names_are_not_guessed() {
        assert_eq!(typo_distance("nmae", "name"), 1);
        assert_eq!(typo_distance("nam", "name"), 1);
        assert_eq!(typo_distance("", "ab"), 2);
        let schema = strata_spec::TableSchema::new(
            strata_spec::parse_columns("id BIGINT NOT NULL, name STRING, c INT").unwrap(),
            vec![],
            vec!["id".into()],
            Default::default(),
            0,
        )
        .unwrap();
        let cols = TableColumns::new(&schema);
        assert!(cols.unknown_field("nmae").contains("did you mean 'name'?"));
        assert!(cols.unknown_field("ID").contains("did you mean 'id'? (column names are case-sensitive)"));
        assert!(cols.unknown_field("7").contains("the columns are id, name, c"));
    }
}
