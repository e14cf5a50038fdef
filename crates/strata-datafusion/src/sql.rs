//! Parsing SQL with time travel: `FOR SYSTEM_TIME AS OF`, `TIMESTAMP AS OF` and `VERSION AS OF` after a table
//! name.
//!
//! DataFusion 55's default (generic) dialect does not parse these clauses, and its planner ignores them when
//! another dialect does: a query would silently read the latest snapshot. So Strata parses with the generic
//! dialect plus table versioning, and rewrites each clause into the table-name suffix that names the same
//! read (`t FOR SYSTEM_TIME AS OF TIMESTAMP '2024-05-01 12:00:00'` into `"t$timestamp=<millis>"`,
//! `t VERSION AS OF 3` into `"t$snapshot=3"`), before DataFusion plans the statement. A clause this cannot
//! turn into a fixed snapshot or time is an error, never ignored.

use std::any::TypeId;
use std::ops::ControlFlow;

use datafusion::sql::parser::{CopyToSource, DFParserBuilder, Statement};
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, Ident, ObjectNamePart, TableFactor, TableVersion, Value, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect};
use strata_spec::{Error, Result};

use crate::error::to_strata;

/// DataFusion's generic dialect, with table versioning (the clauses above) switched on.
#[derive(Debug, Default)]
pub(crate) struct TravelDialect(GenericDialect);

/// Delegates every `fn(&self) -> bool` the generic dialect overrides, so the wrapper parses as it does.
macro_rules! generic {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&self) -> bool { self.0.$name() })*
    };
}

impl Dialect for TravelDialect {
    /// The parser's dialect checks (`dialect_of!`) treat this as the generic dialect it wraps.
    fn dialect(&self) -> TypeId {
        TypeId::of::<GenericDialect>()
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }

    fn supports_table_versioning(&self) -> bool {
        true
    }

    generic!(
        supports_unicode_string_literal,
        supports_partition_by_after_order_by,
        supports_array_join_syntax,
        supports_group_by_expr,
        supports_group_by_with_modifier,
        supports_left_associative_joins_without_parens,
        supports_connect_by,
        supports_match_recognize,
        supports_pipe_operator,
        supports_start_transaction_modifier,
        supports_window_function_null_treatment_arg,
        supports_dictionary_syntax,
        supports_window_clause_named_window_reference,
        supports_parenthesized_set_variables,
        supports_select_wildcard_except,
        support_map_literal_syntax,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_extract_comma_syntax,
        supports_create_view_comment_syntax,
        supports_parens_around_table_factor,
        supports_values_as_table_factor,
        supports_create_index_with_clause,
        supports_explain_with_utility_options,
        supports_limit_comma,
        supports_update_order_by,
        supports_from_first_select,
        supports_projection_trailing_commas,
        supports_asc_desc_in_column_definition,
        supports_try_convert,
        supports_bitwise_shift_operators,
        supports_comment_on,
        supports_load_extension,
        supports_named_fn_args_with_assignment_operator,
        supports_struct_literal,
        supports_empty_projections,
        supports_nested_comments,
        supports_multiline_comment_hints,
        supports_user_host_grantee,
        supports_string_escape_constant,
        supports_array_typedef_with_brackets,
        supports_match_against,
        supports_set_names,
        supports_comma_separated_set_assignments,
        supports_filter_during_aggregation,
        supports_select_wildcard_exclude,
        supports_data_type_signed_suffix,
        supports_interval_options,
        supports_quote_delimited_string,
        supports_select_wildcard_replace,
        supports_select_wildcard_ilike,
        supports_select_wildcard_rename,
        supports_optimize_table,
        supports_install,
        supports_detach,
        supports_prewhere,
        supports_with_fill,
        supports_limit_by,
        supports_interpolate,
        supports_settings,
        supports_select_format,
        supports_comment_optimizer_hint,
        supports_constraint_keyword_without_name,
        supports_key_column_option,
        supports_comma_separated_trim,
        supports_cte_without_as,
        supports_select_item_multi_column_alias,
        supports_xml_expressions,
    );
}

/// The statements of `sql`, time-travel clauses rewritten into table-name suffixes.
pub(crate) fn parse(sql: &str) -> Result<Vec<Statement>> {
    let dialect = TravelDialect::default();
    let mut parser = DFParserBuilder::new(sql).with_dialect(&dialect).build().map_err(to_strata)?;
    let mut statements: Vec<Statement> = parser.parse_statements().map_err(to_strata)?.into();
    for s in &mut statements {
        rewrite(s)?;
    }
    Ok(statements)
}

fn rewrite(statement: &mut Statement) -> Result<()> {
    let mut travel = Travel::default();
    match statement {
        Statement::Statement(s) => {
            let _ = s.visit(&mut travel);
        }
        Statement::Explain(e) => return rewrite(&mut e.statement),
        Statement::CopyTo(c) => {
            if let CopyToSource::Query(q) = &mut c.source {
                let _ = q.visit(&mut travel);
            }
        }
        Statement::CreateExternalTable(_) | Statement::Reset(_) => {}
        // A statement kind added later is planned as parsed (DataFusion refuses versions it does not know).
        #[allow(unreachable_patterns)]
        _ => {}
    }
    match travel.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Rewrites versioned table factors; the first error stops it.
#[derive(Default)]
struct Travel {
    error: Option<Error>,
}

impl VisitorMut for Travel {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table { name, version, .. } = factor else { return ControlFlow::Continue(()) };
        let Some(v) = version.take() else { return ControlFlow::Continue(()) };
        let suffix = match suffix_of(&v) {
            Ok(s) => s,
            Err(e) => {
                self.error = Some(e);
                return ControlFlow::Break(());
            }
        };
        match name.0.last_mut() {
            Some(ObjectNamePart::Identifier(ident)) => {
                // An unquoted name is folded to lower case by DataFusion; quoting it (for the `=`) must not
                // change which table it names.
                let base = if ident.quote_style.is_some() { ident.value.clone() } else { ident.value.to_lowercase() };
                *ident = Ident::with_quote('"', format!("{base}${suffix}"));
                ControlFlow::Continue(())
            }
            _ => {
                self.error = Some(Error::invalid("time travel", format!("'{name}' is not a table name")));
                ControlFlow::Break(())
            }
        }
    }
}

/// The table-name suffix a version clause means.
fn suffix_of(v: &TableVersion) -> Result<String> {
    match v {
        TableVersion::VersionAsOf(e) => match literal(e) {
            Some(Literal::Number(n)) if n.bytes().all(|b| b.is_ascii_digit()) => Ok(format!("snapshot={n}")),
            _ => Err(Error::invalid("VERSION AS OF", format!("'{e}' is not a snapshot id"))),
        },
        TableVersion::ForSystemTimeAsOf(e) | TableVersion::TimestampAsOf(e) => match literal(e) {
            Some(Literal::Text(t)) => Ok(format!("timestamp={}", strata_table::parse_timestamp_millis(&t)?)),
            Some(Literal::Number(n)) => Err(Error::invalid(
                "time travel",
                format!(
                    "AS OF {n}: give a time as TIMESTAMP '2024-05-01 12:00:00' or a quoted string (epoch \
                     milliseconds too), or a snapshot id as VERSION AS OF {n}"
                ),
            )),
            None => Err(Error::unsupported(format!(
                "time travel to '{e}': only a literal time (TIMESTAMP '...' or '...') is supported"
            ))),
        },
        other => Err(Error::unsupported(format!("time travel by '{other}'"))),
    }
}

enum Literal {
    Number(String),
    Text(String),
}

/// A number, a string, or a `TIMESTAMP '...'` / `DATE '...'` literal.
fn literal(e: &SqlExpr) -> Option<Literal> {
    match e {
        SqlExpr::Value(v) => match &v.value {
            Value::Number(n, _) => Some(Literal::Number(n.to_string())),
            other => other.clone().into_string().map(Literal::Text),
        },
        SqlExpr::TypedString(t) => t.value.value.clone().into_string().map(Literal::Text),
        SqlExpr::Nested(inner) => literal(inner),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use strata_spec::ErrorKind;

    fn one(sql: &str) -> String {
        let s = parse(sql).unwrap();
        assert_eq!(s.len(), 1);
        s[0].to_string()
    }

    #[test]
    fn versions_become_table_name_suffixes() {
        assert_eq!(one("SELECT * FROM db.T VERSION AS OF 3"), r#"SELECT * FROM db."t$snapshot=3""#);
        assert_eq!(
            one("SELECT * FROM db.\"T\" FOR SYSTEM_TIME AS OF '2023-11-14T22:13:20.123Z' AS x"),
            r#"SELECT * FROM db."T$timestamp=1700000000123" AS x"#
        );
        assert_eq!(
            one("SELECT a.id FROM t TIMESTAMP AS OF '1700000000123' a JOIN u ON a.id = u.id"),
            r#"SELECT a.id FROM "t$timestamp=1700000000123" a JOIN u ON a.id = u.id"#
        );
        // Subqueries and EXPLAIN too; a query without versions is left as it is.
        let sql = "EXPLAIN SELECT * FROM (SELECT id FROM t VERSION AS OF 1) s";
        assert!(one(sql).contains(r#""t$snapshot=1""#), "{}", one(sql));
        assert_eq!(one("SELECT count(*) FROM db.t WHERE id > 1"), "SELECT count(*) FROM db.t WHERE id > 1");
    }

    #[test]
    fn versions_that_name_no_fixed_snapshot_are_refused() {
        let err = parse("SELECT * FROM t FOR SYSTEM_TIME AS OF 3").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
        assert!(err.to_string().contains("VERSION AS OF 3"), "{err}");
        let err = parse("SELECT * FROM t FOR SYSTEM_TIME AS OF now()").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported);
        assert_eq!(parse("SELECT * FROM t TIMESTAMP AS OF 'yesterday'").unwrap_err().kind(), ErrorKind::Invalid);
        assert_eq!(parse("SELEC 1").unwrap_err().kind(), ErrorKind::Invalid);
    }
}
