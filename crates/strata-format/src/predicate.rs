//! Filters: simple predicates over columns, evaluated exactly on batches and conservatively on statistics
//! (file stats from the manifest, row-group stats from parquet) to skip data that cannot match.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, Scalar};
use strata_spec::{DataType, Datum, Error, Result};

use crate::layout::arrow_types::array_of;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// =
    Eq,
    /// <>
    NotEq,
    /// <
    Lt,
    /// <=
    LtEq,
    /// >
    Gt,
    /// >=
    GtEq,
}

/// A filter on rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// `column op value` (false for nulls).
    Compare {
        /// Column name.
        column: String,
        /// Operator.
        op: CmpOp,
        /// Literal.
        value: Datum,
    },
    /// `column IS NULL`.
    IsNull(String),
    /// `column IS NOT NULL`.
    IsNotNull(String),
    /// Every one holds.
    And(Vec<Predicate>),
    /// Some one holds.
    Or(Vec<Predicate>),
}

/// What statistics say about one column.
#[derive(Debug, Clone, Default)]
pub struct ColumnRange {
    /// Smallest non-null value, if known.
    pub min: Option<Datum>,
    /// Largest non-null value, if known.
    pub max: Option<Datum>,
    /// Nulls, if known.
    pub null_count: Option<i64>,
    /// Rows covered.
    pub row_count: i64,
}

impl Predicate {
    /// `column = value`.
    pub fn eq(column: &str, value: Datum) -> Self {
        Predicate::Compare { column: column.to_string(), op: CmpOp::Eq, value }
    }

    /// `column op value`.
    pub fn cmp(column: &str, op: CmpOp, value: Datum) -> Self {
        Predicate::Compare { column: column.to_string(), op, value }
    }

    /// The columns it reads.
    pub fn columns(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_columns(&mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_columns(&self, out: &mut Vec<String>) {
        match self {
            Predicate::Compare { column, .. } | Predicate::IsNull(column) | Predicate::IsNotNull(column) => {
                out.push(column.clone())
            }
            Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| p.collect_columns(out)),
        }
    }

    /// Whether rows described by `stats` may match (false only when none can). Unknown columns may match.
    pub fn may_match(&self, stats: &dyn Fn(&str) -> Option<ColumnRange>) -> bool {
        match self {
            Predicate::And(ps) => ps.iter().all(|p| p.may_match(stats)),
            Predicate::Or(ps) => ps.iter().any(|p| p.may_match(stats)),
            Predicate::IsNull(c) => stats(c).is_none_or(|s| s.null_count.is_none_or(|n| n > 0)),
            Predicate::IsNotNull(c) => stats(c).is_none_or(|s| s.null_count.is_none_or(|n| n < s.row_count)),
            Predicate::Compare { column, op, value } => {
                let Some(s) = stats(column) else { return true };
                if s.null_count.is_some_and(|n| n >= s.row_count) && s.row_count > 0 {
                    return false;
                }
                if let Some(x) = float_value(value) {
                    // Float statistics do not bound every row: parquet's writers leave NaN out of minima and
                    // maxima (and other writers' manifests may too), and a writer may leave the two zeros
                    // unordered, while the exact comparison orders them all (-NaN below every number, NaN
                    // above, -0 below +0). Only `=` of a nonzero number may prune, and only by bounds that
                    // are numbers.
                    let bounds_numbers =
                        [&s.min, &s.max].iter().all(|b| b.as_ref().and_then(float_value).is_none_or(|v| !v.is_nan()));
                    if *op != CmpOp::Eq || x.is_nan() || x == 0.0 || !bounds_numbers {
                        return true;
                    }
                }
                let (min, max) = (s.min.as_ref(), s.max.as_ref());
                let lt = |a: &Datum, b: &Datum| a.compare(b).is_lt();
                match op {
                    CmpOp::Eq => min.is_none_or(|m| !lt(value, m)) && max.is_none_or(|m| !lt(m, value)),
                    CmpOp::NotEq => !(min.is_some_and(|a| max.is_some_and(|b| a == value && b == value))),
                    CmpOp::Lt => min.is_none_or(|m| lt(m, value)),
                    CmpOp::LtEq => min.is_none_or(|m| !lt(value, m)),
                    CmpOp::Gt => max.is_none_or(|m| lt(value, m)),
                    CmpOp::GtEq => max.is_none_or(|m| !lt(m, value)),
                }
            }
        }
    }

    /// Exact evaluation on a batch whose columns are named as in the table; `types` gives each column's type.
    pub fn evaluate(&self, batch: &RecordBatch, types: &dyn Fn(&str) -> Option<DataType>) -> Result<BooleanArray> {
        use arrow_ord::cmp;
        let col = |name: &str| -> Result<ArrayRef> {
            batch
                .column_by_name(name)
                .cloned()
                .ok_or_else(|| Error::invalid("filter", format!("column '{name}' is not read")))
        };
        let fail = |e: arrow_schema::ArrowError| Error::internal_from("filter", e);
        let out = match self {
            Predicate::Compare { column, op, value } => {
                let t = types(column).ok_or_else(|| Error::invalid("filter", format!("no column '{column}'")))?;
                let lit = array_of(&t, &[Some(value.clone())])
                    .map_err(|e| Error::invalid("filter", format!("literal for '{column}': {e}")))?;
                let lit = Scalar::new(lit);
                let c = col(column)?;
                let r = match op {
                    CmpOp::Eq => cmp::eq(&c, &lit),
                    CmpOp::NotEq => cmp::neq(&c, &lit),
                    CmpOp::Lt => cmp::lt(&c, &lit),
                    CmpOp::LtEq => cmp::lt_eq(&c, &lit),
                    CmpOp::Gt => cmp::gt(&c, &lit),
                    CmpOp::GtEq => cmp::gt_eq(&c, &lit),
                }
                .map_err(fail)?;
                // Nulls compare to nothing.
                BooleanArray::from_iter(r.iter().map(|v| Some(v.unwrap_or(false))))
            }
            Predicate::IsNull(c) => arrow_arith::boolean::is_null(col(c)?.as_ref()).map_err(fail)?,
            Predicate::IsNotNull(c) => arrow_arith::boolean::is_not_null(col(c)?.as_ref()).map_err(fail)?,
            Predicate::And(ps) => {
                let mut acc = BooleanArray::from(vec![true; batch.num_rows()]);
                for p in ps {
                    acc = arrow_arith::boolean::and(&acc, &p.evaluate(batch, types)?).map_err(fail)?;
                }
                acc
            }
            Predicate::Or(ps) => {
                let mut acc = BooleanArray::from(vec![false; batch.num_rows()]);
                for p in ps {
                    acc = arrow_arith::boolean::or(&acc, &p.evaluate(batch, types)?).map_err(fail)?;
                }
                acc
            }
        };
        Ok(out)
    }

    /// Keeps the rows of `batch` that match.
    pub fn filter(&self, batch: &RecordBatch, types: &dyn Fn(&str) -> Option<DataType>) -> Result<RecordBatch> {
        let mask = self.evaluate(batch, types)?;
        if mask.true_count() == batch.num_rows() {
            return Ok(batch.clone());
        }
        arrow_select::filter::filter_record_batch(batch, &mask).map_err(|e| Error::internal_from("filter", e))
    }
}

/// A filtered read's predicate as a parquet row filter: evaluated on the filter's columns first, so that
/// the other columns are decoded only for the rows it keeps (after the deletion vector's selection). Only
/// where the file stores every filter column under its own name and as the read's arrow type (no schema
/// mapping, no cast): evaluating it on the file's columns is then evaluating it on the read's, by the same
/// code. The read still filters exactly afterwards; a file that does not qualify is only filtered then.
pub(crate) fn parquet_row_filter(
    tp: &TypedPredicate,
    file_schema: &arrow_schema::Schema,
    descr: &parquet::schema::types::SchemaDescriptor,
) -> Option<parquet::arrow::arrow_reader::RowFilter> {
    let (pred, types) = &**tp;
    let mut roots = Vec::new();
    for name in pred.columns() {
        let t = types.iter().find(|(c, _)| *c == name)?.1;
        let (i, f) = file_schema.column_with_name(&name)?;
        if f.data_type().is_nested() || *f.data_type() != crate::layout::arrow_types::to_arrow(&t) {
            return None;
        }
        roots.push(i);
    }
    if roots.is_empty() {
        return None;
    }
    // Retraction rows pass the row filter whatever their values: a raw read checks that its file holds
    // none (the manifest's delete count it trusted may be wrong), and must see them to refuse the file.
    let kind = file_schema
        .column_with_name(crate::layout::system_fields::VALUE_KIND)
        .filter(|(_, f)| *f.data_type() == arrow_schema::DataType::Int8)
        .map(|(i, _)| i);
    roots.extend(kind);
    roots.sort_unstable();
    roots.dedup();
    let mask = parquet::arrow::ProjectionMask::roots(descr, roots);
    let (pred, types) = (pred.clone(), types.clone());
    let filter = parquet::arrow::arrow_reader::ArrowPredicateFn::new(mask, move |batch: RecordBatch| {
        let fail = |e: String| arrow_schema::ArrowError::ComputeError(e);
        let types_of = |name: &str| types.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        let matched = pred.evaluate(&batch, &types_of).map_err(|e| fail(e.to_string()))?;
        let Some(kinds) = batch.column_by_name(crate::layout::system_fields::VALUE_KIND) else { return Ok(matched) };
        let kinds =
            kinds.as_primitive_opt::<arrow_array::types::Int8Type>().ok_or_else(|| fail("_VALUE_KIND".into()))?;
        let retract: BooleanArray =
            kinds.values().iter().map(|k| Some(crate::layout::kv::RowKind::byte_is_retract(*k))).collect();
        arrow_arith::boolean::or(&matched, &retract).map_err(|e| fail(e.to_string()))
    });
    Some(parquet::arrow::arrow_reader::RowFilter::new(vec![Box::new(filter)]))
}

/// The value of a FLOAT or DOUBLE datum.
fn float_value(d: &Datum) -> Option<f64> {
    match d {
        Datum::Float(v) => Some(f64::from(*v)),
        Datum::Double(v) => Some(*v),
        _ => None,
    }
}

/// The parquet leaf columns of root column `root`: statistics, column and offset indexes are kept per leaf,
/// so a root index is never a leaf index once a nested column precedes it.
pub(crate) fn parquet_leaves(
    descr: &parquet::schema::types::SchemaDescriptor,
    root: usize,
) -> impl Iterator<Item = usize> + '_ {
    (0..descr.num_columns()).filter(move |&i| descr.get_column_root_idx(i) == root)
}

/// The one leaf of a primitive root column `root` (`None` for a nested one, whose leaves' statistics are
/// not the column's).
pub(crate) fn parquet_leaf(descr: &parquet::schema::types::SchemaDescriptor, root: usize) -> Option<usize> {
    let leaf = parquet_leaves(descr, root).next()?;
    descr.get_column_root(leaf).is_primitive().then_some(leaf)
}

/// Statistics of one parquet row group for column `name` of Paimon type `t`, when the type is one whose
/// parquet statistics map plainly onto values.
pub(crate) fn parquet_range(
    rg: &parquet::file::metadata::RowGroupMetaData,
    leaf: usize,
    t: &DataType,
) -> Option<ColumnRange> {
    use parquet::file::statistics::Statistics as S;
    use strata_spec::TypeRoot as R;
    let col = rg.columns().get(leaf)?;
    let stats = col.statistics()?;
    let (min, max) = match (stats, t.root) {
        (S::Int32(s), R::Int) => (s.min_opt().map(|v| Datum::Int(*v)), s.max_opt().map(|v| Datum::Int(*v))),
        (S::Int32(s), R::Date) => (s.min_opt().map(|v| Datum::Date(*v)), s.max_opt().map(|v| Datum::Date(*v))),
        (S::Int32(s), R::SmallInt) => {
            (s.min_opt().map(|v| Datum::SmallInt(*v as i16)), s.max_opt().map(|v| Datum::SmallInt(*v as i16)))
        }
        (S::Int32(s), R::TinyInt) => {
            (s.min_opt().map(|v| Datum::TinyInt(*v as i8)), s.max_opt().map(|v| Datum::TinyInt(*v as i8)))
        }
        (S::Int64(s), R::BigInt) => (s.min_opt().map(|v| Datum::BigInt(*v)), s.max_opt().map(|v| Datum::BigInt(*v))),
        (S::Double(s), R::Double) => (s.min_opt().map(|v| Datum::Double(*v)), s.max_opt().map(|v| Datum::Double(*v))),
        (S::Float(s), R::Float) => (s.min_opt().map(|v| Datum::Float(*v)), s.max_opt().map(|v| Datum::Float(*v))),
        (S::Boolean(s), R::Boolean) => {
            (s.min_opt().map(|v| Datum::Boolean(*v)), s.max_opt().map(|v| Datum::Boolean(*v)))
        }
        (S::ByteArray(s), R::VarChar(_) | R::Char(_)) => (
            s.min_opt().and_then(|v| std::str::from_utf8(v.data()).ok()).map(|v| Datum::String(v.to_string())),
            s.max_opt().and_then(|v| std::str::from_utf8(v.data()).ok()).map(|v| Datum::String(v.to_string())),
        ),
        (S::ByteArray(s), R::VarBinary(_) | R::Binary(_)) => {
            (s.min_opt().map(|v| Datum::Bytes(v.data().to_vec())), s.max_opt().map(|v| Datum::Bytes(v.data().to_vec())))
        }
        _ => (None, None),
    };
    // Inexact maxima of truncated strings are still upper bounds; inexact minima lower bounds.
    Some(ColumnRange { min, max, null_count: stats.null_count_opt().map(|n| n as i64), row_count: rg.num_rows() })
}

/// A shared predicate with the types of the columns it reads.
pub type TypedPredicate = Arc<(Predicate, Vec<(String, DataType)>)>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    use parquet::arrow::ArrowSchemaConverter;

    /// The row filter is built only where evaluating on the file's columns is evaluating on the read's:
    /// each filter column stored under its name as the read's arrow type. A column stored as another type
    /// (an evolved or foreign file) or missing leaves the filtering to the exact filter after decoding.
    #[test]
    fn a_row_filter_only_over_columns_stored_as_read() {
        let file = Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("s", ArrowType::Utf8, true),
            Field::new("w", ArrowType::Int32, true),
        ]);
        let descr = ArrowSchemaConverter::new().convert(&file).unwrap();
        let types = vec![
            ("id".to_string(), DataType::bigint()),
            ("s".to_string(), DataType::string()),
            ("w".to_string(), DataType::bigint()),
            ("gone".to_string(), DataType::bigint()),
        ];
        let filter = |p: Predicate| parquet_row_filter(&Arc::new((p, types.clone())), &file, &descr).is_some();
        assert!(filter(Predicate::eq("id", Datum::BigInt(1))));
        assert!(filter(Predicate::And(vec![
            Predicate::eq("s", Datum::String("x".into())),
            Predicate::IsNull("id".into())
        ])));
        // `w` is INT in the file and BIGINT in the read (a widened column).
        assert!(!filter(Predicate::eq("w", Datum::BigInt(1))));
        assert!(!filter(Predicate::Or(vec![
            Predicate::eq("id", Datum::BigInt(1)),
            Predicate::eq("w", Datum::BigInt(1))
        ])));
        assert!(!filter(Predicate::eq("gone", Datum::BigInt(1))));
    }
}
