//! Rows as the table stores them: every column of the table, by name, cast exactly to its type.

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use strata_spec::{DataType, Error, Result, TableSchema};

/// Casts `batch`'s columns (matched by name) to the table's types (`value_types`, the Arrow schema
/// `value_schema`): a column the table lacks, a value that does not fit its column's type exactly and a NULL
/// in a NOT NULL column are refused.
pub(super) fn conform_rows(
    schema: &TableSchema,
    value_types: &[DataType],
    value_schema: &SchemaRef,
    batch: &RecordBatch,
) -> Result<RecordBatch> {
    // A column the table lacks is refused, not dropped: a misspelt name would otherwise leave its column
    // NULL in every row without a word.
    let batch_schema = batch.schema();
    if let Some(extra) = batch_schema.fields().iter().find(|c| schema.fields.iter().all(|f| &f.name != c.name())) {
        let hint = match schema.fields.iter().find(|f| f.name.eq_ignore_ascii_case(extra.name())) {
            Some(f) => format!("; did you mean '{}'?", f.name),
            None => String::new(),
        };
        let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        return Err(Error::invalid(
            "rows",
            format!("column '{}' is not a column of the table{hint} (columns: {})", extra.name(), names.join(", ")),
        ));
    }
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields.len());
    for (f, t) in schema.fields.iter().zip(value_types) {
        let col = match batch.column_by_name(&f.name) {
            // Exactly or not at all: arrow's cast would make an overflowing value null (or truncate a
            // fraction) and a nullable column would store that silently.
            Some(c) => strata_format::exact_cast(c, t)
                .map_err(|r| Error::invalid(format!("rows column '{}'", f.name), r.to_string()))?,
            None if t.nullable => arrow_array::new_null_array(&strata_format::to_arrow(t), batch.num_rows()),
            None => return Err(Error::invalid("rows", format!("column '{}' (NOT NULL) is missing", f.name))),
        };
        if !t.nullable && col.null_count() > 0 {
            return Err(Error::invalid(
                "rows",
                format!("column '{}' is NOT NULL but has {} nulls", f.name, col.null_count()),
            ));
        }
        cols.push(col);
    }
    RecordBatch::try_new(value_schema.clone(), cols).map_err(|e| Error::invalid_from("rows", e))
}
