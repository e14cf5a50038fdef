//! DataFusion filters as Strata predicates.
//!
//! A filter is pushed into a Strata scan only when it translates completely into a [`Predicate`] that keeps
//! exactly the rows for which the SQL expression is TRUE. Strata then prunes files by manifest statistics
//! (partition values, key ranges, value statistics) and parquet row groups, and filters the rows it returns
//! exactly after that (the split reader's last step, raw and merged splits alike), so such a filter is
//! [`Exact`](TableProviderFilterPushDown::Exact) and DataFusion drops its own filter operator. Anything else
//! is `Unsupported` and DataFusion filters the rows.
//!
//! Why the translation is exact under SQL's three-valued logic: a Strata comparison is false where SQL's is
//! NULL, and a `WHERE` keeps only TRUE rows, so `Compare`, `IsNull`, `And` and `Or` agree with SQL row by row.
//! `NOT` is pushed down to the leaves (De Morgan holds in three-valued logic, and `NOT (c < 5)` is TRUE exactly
//! where `c >= 5` is), so the predicate never needs a negation of its own.

use arrow_schema::{DataType as ArrowType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use strata_format::{CmpOp, Predicate};

/// The predicate `expr` means, when it translates exactly over columns of `schema`.
pub(crate) fn to_predicate(expr: &Expr, schema: &Schema) -> Option<Predicate> {
    translate(expr, schema, false)
}

/// `expr` (negated when `negate`) as a predicate.
fn translate(expr: &Expr, schema: &Schema, negate: bool) -> Option<Predicate> {
    match expr {
        Expr::Not(inner) => translate(inner, schema, !negate),
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::And, right }) => {
            let (l, r) = (translate(left, schema, negate)?, translate(right, schema, negate)?);
            Some(if negate { Predicate::Or(vec![l, r]) } else { Predicate::And(vec![l, r]) })
        }
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::Or, right }) => {
            let (l, r) = (translate(left, schema, negate)?, translate(right, schema, negate)?);
            Some(if negate { Predicate::And(vec![l, r]) } else { Predicate::Or(vec![l, r]) })
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let op = cmp_op(*op)?;
            let (column, op, value) = match (column_of(left, schema), column_of(right, schema)) {
                (Some(c), None) => (c, op, right),
                (None, Some(c)) => (c, flip(op), left),
                _ => return None,
            };
            let op = if negate { inverse(op) } else { op };
            Some(Predicate::cmp(&column, op, literal_for(value, &column, schema)?))
        }
        Expr::IsNull(inner) => {
            let c = column_of(inner, schema)?;
            Some(if negate { Predicate::IsNotNull(c) } else { Predicate::IsNull(c) })
        }
        Expr::IsNotNull(inner) => {
            let c = column_of(inner, schema)?;
            Some(if negate { Predicate::IsNull(c) } else { Predicate::IsNotNull(c) })
        }
        Expr::Between(b) => {
            let c = column_of(&b.expr, schema)?;
            let (low, high) = (literal_for(&b.low, &c, schema)?, literal_for(&b.high, &c, schema)?);
            // `c BETWEEN l AND h` is `c >= l AND c <= h`; its negation `c < l OR c > h`.
            let inside = !(b.negated ^ negate);
            Some(if inside {
                Predicate::And(vec![Predicate::cmp(&c, CmpOp::GtEq, low), Predicate::cmp(&c, CmpOp::LtEq, high)])
            } else {
                Predicate::Or(vec![Predicate::cmp(&c, CmpOp::Lt, low), Predicate::cmp(&c, CmpOp::Gt, high)])
            })
        }
        Expr::InList(l) if !l.list.is_empty() => {
            let c = column_of(&l.expr, schema)?;
            // A NULL in the list makes `NOT IN` NULL for every row; `literal_for` refuses NULL literals.
            let values: Vec<_> = l.list.iter().map(|v| literal_for(v, &c, schema)).collect::<Option<_>>()?;
            let inside = !(l.negated ^ negate);
            let op = if inside { CmpOp::Eq } else { CmpOp::NotEq };
            let leaves: Vec<Predicate> = values.into_iter().map(|v| Predicate::cmp(&c, op, v)).collect();
            Some(if inside { Predicate::Or(leaves) } else { Predicate::And(leaves) })
        }
        _ => None,
    }
}

fn cmp_op(op: Operator) -> Option<CmpOp> {
    Some(match op {
        Operator::Eq => CmpOp::Eq,
        Operator::NotEq => CmpOp::NotEq,
        Operator::Lt => CmpOp::Lt,
        Operator::LtEq => CmpOp::LtEq,
        Operator::Gt => CmpOp::Gt,
        Operator::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

/// `a op b` as `b op' a`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::LtEq => CmpOp::GtEq,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::GtEq => CmpOp::LtEq,
        other => other,
    }
}

/// The comparison TRUE exactly where `op` is FALSE (both are FALSE for NULLs).
fn inverse(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::NotEq,
        CmpOp::NotEq => CmpOp::Eq,
        CmpOp::Lt => CmpOp::GtEq,
        CmpOp::LtEq => CmpOp::Gt,
        CmpOp::Gt => CmpOp::LtEq,
        CmpOp::GtEq => CmpOp::Lt,
    }
}

/// The name of the table column `expr` is, unqualified or qualified, if it is one of `schema`'s.
fn column_of(expr: &Expr, schema: &Schema) -> Option<String> {
    match expr {
        Expr::Column(c) if schema.field_with_name(&c.name).is_ok() => Some(c.name.clone()),
        _ => None,
    }
}

/// `expr` as a literal for column `column`: only a non-null literal of exactly the column's Arrow type (the
/// optimizer has already cast literals to column types where it can; anything else, such as a column cast to
/// a wider type, is left to DataFusion).
fn literal_for(expr: &Expr, column: &str, schema: &Schema) -> Option<strata_spec::Datum> {
    let Expr::Literal(value, _) = expr else { return None };
    let field = schema.field_with_name(column).ok()?;
    if value.is_null() || &value.data_type() != field.data_type() || !pushable(field.data_type()) {
        return None;
    }
    datum_of(value)
}

/// Types whose comparisons Strata evaluates and prunes exactly as DataFusion compares them. Floating point is
/// left out: DataFusion orders NaN above every number, while file statistics may leave NaN out of a file's
/// maximum, so pruning could drop a NaN row that `d > 1` keeps.
fn pushable(t: &ArrowType) -> bool {
    use ArrowType as T;
    matches!(
        t,
        T::Boolean
            | T::Int8
            | T::Int16
            | T::Int32
            | T::Int64
            | T::Decimal128(_, _)
            | T::Utf8
            | T::Binary
            | T::Date32
            | T::Time32(_)
            | T::Timestamp(_, _)
    )
}

/// A scalar as a Strata datum (through a one-row array, with Strata's own Arrow decoding).
pub(crate) fn datum_of(value: &ScalarValue) -> Option<strata_spec::Datum> {
    let array = value.to_array().ok()?;
    strata_format::datum_at(array.as_ref(), 0).ok().flatten()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use arrow_schema::Field;
    use datafusion::logical_expr::{col, lit};
    use strata_spec::Datum;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("name", ArrowType::Utf8, true),
            Field::new("d", ArrowType::Float64, true),
        ])
    }

    #[test]
    fn comparisons_translate_with_the_column_on_either_side() {
        let s = schema();
        assert_eq!(to_predicate(&col("id").gt(lit(5i64)), &s), Some(Predicate::cmp("id", CmpOp::Gt, Datum::BigInt(5))));
        assert_eq!(to_predicate(&lit(5i64).gt(col("id")), &s), Some(Predicate::cmp("id", CmpOp::Lt, Datum::BigInt(5))));
        assert_eq!(
            to_predicate(&col("name").eq(lit("x")), &s),
            Some(Predicate::cmp("name", CmpOp::Eq, Datum::String("x".into())))
        );
    }

    #[test]
    fn negations_reach_the_leaves() {
        let s = schema();
        let e = !(col("id").lt(lit(5i64)).and(col("name").is_null()));
        assert_eq!(
            to_predicate(&e, &s),
            Some(Predicate::Or(vec![
                Predicate::cmp("id", CmpOp::GtEq, Datum::BigInt(5)),
                Predicate::IsNotNull("name".into())
            ]))
        );
        let e = col("id").not_between(lit(1i64), lit(3i64));
        assert_eq!(
            to_predicate(&e, &s),
            Some(Predicate::Or(vec![
                Predicate::cmp("id", CmpOp::Lt, Datum::BigInt(1)),
                Predicate::cmp("id", CmpOp::Gt, Datum::BigInt(3))
            ]))
        );
        let e = col("id").in_list(vec![lit(1i64), lit(2i64)], true);
        assert_eq!(
            to_predicate(&e, &s),
            Some(Predicate::And(vec![
                Predicate::cmp("id", CmpOp::NotEq, Datum::BigInt(1)),
                Predicate::cmp("id", CmpOp::NotEq, Datum::BigInt(2))
            ]))
        );
    }

    #[test]
    fn what_strata_cannot_evaluate_exactly_stays_with_datafusion() {
        let s = schema();
        // Another type than the column's, a NULL literal, floating point, a computed operand, an unknown column.
        for e in [
            col("id").eq(lit(5i32)),
            col("id").eq(lit(ScalarValue::Int64(None))),
            col("d").gt(lit(1.0f64)),
            (col("id") + lit(1i64)).gt(lit(5i64)),
            col("other").eq(lit(1i64)),
            col("id").in_list(vec![lit(1i64), lit(ScalarValue::Int64(None))], true),
            col("id").eq(col("id")),
        ] {
            assert_eq!(to_predicate(&e, &s), None, "{e}");
        }
        // Half of an OR is not enough.
        assert_eq!(to_predicate(&col("id").eq(lit(1i64)).or(col("d").gt(lit(0.0f64))), &s), None);
    }
}
