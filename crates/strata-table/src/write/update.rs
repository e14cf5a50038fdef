//! UPDATE on an append table (Paimon's `UpdatePaimonTableCommand` on a table without a primary key). The
//! rows to change are found as a delete finds them (`super::delete`), by position in the live files; then:
//! - with `deletion-vectors.enabled`, or when the update changes a partition or bucket-key column (its rows
//!   may belong elsewhere), the old rows go as a delete takes them and the new ones are written as rows of
//!   the table, routed as any write (Spark's update with deletion vectors does the same);
//! - otherwise each touched file is rewritten with its changed rows in place, numbered as it was, so the
//!   bucket's rows keep their order (Spark rewrites the touched files too, as new files at the end).
//!
//! Either way the change is the write's half of one commit: one OVERWRITE snapshot, atomic. The new values
//! are computed once, from the rows as they were matched (the positions found first), so a condition or
//! value that is not deterministic still changes each matched row exactly once.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::SchemaRef;
use strata_format::RowKind;
use strata_spec::{DataType, Error, Result, TableSchema};

use super::conform::conform_rows;
use super::delete::{FileRows, TouchedFile};
use super::TableWrite;

/// What an UPDATE changes.
pub struct RowUpdate<'a> {
    /// Which rows change: gets batches of the table's columns and answers per row (NULL: not).
    pub matches: &'a mut dyn FnMut(&RecordBatch) -> Result<BooleanArray>,
    /// The new values: gets matched rows (every column of the table) and returns them changed (every
    /// column, by name, one row for each row it got).
    pub assign: &'a mut dyn FnMut(&RecordBatch) -> Result<RecordBatch>,
    /// The columns `assign` changes.
    pub columns: Vec<String>,
}

/// The table's view of the rows an update writes.
struct Conform {
    schema: TableSchema,
    value_types: Vec<DataType>,
    value_schema: SchemaRef,
}

impl TableWrite {
    /// Changes every row of an append table that `update` matches, as of the latest snapshot, and returns how
    /// many rows that is (see the module doc for how). The next prepare commits the change. Refused on a
    /// primary-key table (write the keys' new rows) and on a writer holding rows it has not committed.
    pub fn update_matching(&mut self, update: RowUpdate<'_>) -> Result<u64> {
        self.begin_row_change("update")?;
        let schema = self.table.schema().clone();
        if let Some(c) = update.columns.iter().find(|c| schema.fields.iter().all(|f| &f.name != *c)) {
            return Err(Error::invalid("update", format!("column '{c}' is not a column of the table")));
        }
        let options = schema.core_options();
        let fixed = options.bucket()? > 0;
        let moves = update
            .columns
            .iter()
            .any(|c| schema.partition_keys.contains(c) || (fixed && schema.bucket_keys().contains(c)));
        let touched = self.files_matching(update.matches)?;
        let updated: u64 = touched.iter().map(|t| t.positions.len() as u64).sum();
        let conform =
            Conform { schema, value_types: self.value_types.clone(), value_schema: self.value_schema.clone() };
        let rows = self.file_rows()?;
        if options.deletion_vectors_enabled()? || moves {
            for t in &touched {
                self.append_writer_with_vectors(&t.entry.partition, t.entry.bucket)?
                    .delete_positions(&t.entry.file, &t.positions)?;
            }
            for t in &touched {
                let path = self.table.data_file_path(&t.entry)?;
                for batch in new_rows(&rows, path, t, update.assign, &conform, false)? {
                    let batch = batch?;
                    self.write_with_kinds(&batch, &vec![RowKind::Insert.to_byte(); batch.num_rows()])?;
                }
            }
        } else {
            for t in &touched {
                let path = self.table.data_file_path(&t.entry)?;
                let batches = new_rows(&rows, path, t, update.assign, &conform, true)?;
                self.append_writer_with_vectors(&t.entry.partition, t.entry.bucket)?
                    .replace_file(&t.entry.file, batches)?;
            }
        }
        Ok(updated)
    }
}

/// The rows of `t` as the update leaves them: with `in_place`, every live row of the file, the matched ones
/// changed; otherwise the changed rows only.
fn new_rows<'a>(
    rows: &FileRows,
    path: String,
    t: &'a TouchedFile,
    assign: &'a mut dyn FnMut(&RecordBatch) -> Result<RecordBatch>,
    conform: &'a Conform,
    in_place: bool,
) -> Result<impl Iterator<Item = Result<RecordBatch>> + 'a> {
    let batches = rows.open(path, &t.entry, t.vector.clone())?;
    let mut next = 0usize;
    Ok(batches.filter_map(move |batch| {
        let changed = batch.and_then(|(values, at)| {
            // Positions of both ascend: the matched ones of this batch follow on from the last batch's.
            let matched: BooleanArray = at
                .iter()
                .map(|p| {
                    while next < t.positions.len() && t.positions[next] < *p {
                        next += 1;
                    }
                    Some(t.positions.get(next) == Some(p))
                })
                .collect();
            if matched.true_count() == 0 {
                return Ok(in_place.then_some(values));
            }
            let old = arrow_select::filter::filter_record_batch(&values, &matched)
                .map_err(|e| Error::invalid_from("update", e))?;
            let new = assign(&old)?;
            if new.num_rows() != old.num_rows() {
                return Err(Error::invalid("update", "the new values came for another number of rows"));
            }
            let new = conform_rows(&conform.schema, &conform.value_types, &conform.value_schema, &new)?;
            if !in_place {
                return Ok(Some(new));
            }
            Ok(Some(merged(&values, &new, &matched)?))
        });
        changed.transpose()
    }))
}

/// `old` with its `matched` rows replaced, in order, by the rows of `new`.
fn merged(old: &RecordBatch, new: &RecordBatch, matched: &BooleanArray) -> Result<RecordBatch> {
    let mut from_new = 0usize;
    let picks: Vec<(usize, usize)> = (0..old.num_rows())
        .map(|i| {
            if matched.value(i) {
                from_new += 1;
                (1, from_new - 1)
            } else {
                (0, i)
            }
        })
        .collect();
    let columns = old
        .columns()
        .iter()
        .zip(new.columns())
        .map(|(o, n)| arrow_select::interleave::interleave(&[o.as_ref() as &dyn Array, n.as_ref()], &picks))
        .collect::<std::result::Result<Vec<ArrayRef>, _>>()
        .map_err(|e| Error::invalid_from("update", e))?;
    RecordBatch::try_new(Arc::clone(&old.schema()), columns).map_err(|e| Error::invalid_from("update", e))
}
