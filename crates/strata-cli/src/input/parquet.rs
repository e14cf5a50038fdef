//! Parquet input: the file's top-level columns matched to the table's by name, read a batch at a time
//! (only the matched columns are decoded) and converted exactly ([`super::convert`]).

use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use strata_spec::{contain_panic, Error, Result};

use super::convert::{exact, Refusal};
use super::{open_file, value_error, BatchSource, InputOptions, TableColumns};

/// A parquet file being read.
pub(crate) struct ParquetSource {
    path: String,
    reader: ParquetRecordBatchReader,
    columns: Arc<TableColumns>,
    /// For each table column, its column in the projected batches.
    plan: Vec<Option<usize>>,
    /// Rows read so far.
    rows: u64,
    total_rows: u64,
    file_size: u64,
}

impl ParquetSource {
    pub(crate) fn open(path: &str, columns: Arc<TableColumns>, opts: &InputOptions) -> Result<Self> {
        let file = open_file(path)?;
        let file_size = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let what = format!("input {path}");
        let bad =
            |e: parquet::errors::ParquetError| Error::invalid(&what, format!("is not a readable parquet file: {e}"));
        let builder = contain_panic(&what, || ParquetRecordBatchReaderBuilder::try_new(file).map_err(bad))?;
        let names: Vec<String> = builder.schema().fields().iter().map(|f| f.name().clone()).collect();
        let mapping = columns.map_fields(&names, opts.ignore_unknown_fields, &what, "")?;
        // Root columns keep the file's order in the projected batches.
        let roots: Vec<usize> = (0..names.len()).filter(|&f| mapping[f].is_some()).collect();
        let mut plan = vec![None; columns.len()];
        for (k, &f) in roots.iter().enumerate() {
            if let Some(i) = mapping[f] {
                plan[i] = Some(k);
            }
        }
        let total_rows = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = contain_panic(&what, || {
            builder.with_projection(mask).with_batch_size(opts.batch_rows.max(1)).build().map_err(bad)
        })?;
        Ok(ParquetSource { path: path.to_string(), reader, columns, plan, rows: 0, total_rows, file_size })
    }

    fn refused(&self, column: usize, r: Refusal) -> Error {
        let name = self.columns.name(column);
        match r.row {
            Some(row) => value_error(&self.path, "row", self.rows + row as u64 + 1, name, &r.value, &r.reason),
            None => Error::invalid(format!("input {} column '{name}'", self.path), r.reason),
        }
    }
}

impl BatchSource for ParquetSource {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let what = format!("input {}", self.path);
        let next = contain_panic(&what, || {
            self.reader.next().transpose().map_err(|e| Error::invalid(&what, format!("cannot be read: {e}")))
        })?;
        let Some(batch) = next else { return Ok(None) };
        let mut out = Vec::with_capacity(self.columns.len());
        for (i, source) in self.plan.iter().enumerate() {
            let t = self.columns.data_type(i);
            let column = match source {
                Some(k) => exact(batch.column(*k), &t).map_err(|r| self.refused(i, r))?,
                None => arrow_array::new_null_array(&strata_format::to_arrow(&t), batch.num_rows()),
            };
            if !t.nullable && column.null_count() > 0 {
                let row = (0..column.len()).find(|&r| column.is_null(r)).unwrap_or(0);
                let place =
                    format!("input {} row {} column '{}'", self.path, self.rows + row as u64 + 1, self.columns.name(i));
                return Err(Error::invalid(place, "the value is null, but the column is NOT NULL"));
            }
            out.push(column);
        }
        self.rows += batch.num_rows() as u64;
        self.columns.batch(out).map(Some)
    }

    fn bytes_read(&self) -> u64 {
        // Rows read as a share of the file (the reader fetches pages as it goes).
        if self.total_rows == 0 {
            return 0;
        }
        (self.file_size as f64 * (self.rows as f64 / self.total_rows as f64)) as u64
    }
}
