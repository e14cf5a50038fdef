//! `strata alter`: option edits and column changes in one new schema.
//!
//! Column changes apply in the order given on the command line (`--drop-column c --add-column 'c STRING'`
//! drops `c` and adds a new column of that name); `--after X` and `--first` place the `--add-column` right
//! before them. Option edits (`--unset`, then `--set`) come before every column change.

use clap::ArgMatches;
use strata_spec::{parse_columns, ColumnMove, DataType, Error, SchemaChange};
use strata_table::{AlterTable, OptionPolicy};

use crate::context::{parse_options, Context};
use crate::output::report;
use crate::progress::Progress;

/// `strata alter`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct AlterArgs {
    /// The table directory.
    table_dir: String,
    /// Set an option, key=value; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Remove an option; repeatable.
    #[arg(long = "unset", value_name = "KEY")]
    unset: Vec<String>,
    /// Add a nullable column: 'NAME TYPE' or "NAME TYPE COMMENT 'text'"; repeatable.
    #[arg(long = "add-column", value_name = "NAME TYPE")]
    #[allow(dead_code)] // read by position, from the matches
    add_column: Vec<String>,
    /// Place the column of the --add-column just before this flag after column X.
    #[arg(long = "after", value_name = "X")]
    #[allow(dead_code)] // read by position, from the matches
    after: Vec<String>,
    /// Place the column of the --add-column just before this flag first.
    #[arg(long = "first", num_args = 0, default_missing_value = "true", action = clap::ArgAction::Append)]
    #[allow(dead_code)] // read by position, from the matches
    first: Vec<bool>,
    /// Drop a column; repeatable.
    #[arg(long = "drop-column", value_name = "NAME")]
    #[allow(dead_code)] // read by position, from the matches
    drop_column: Vec<String>,
    /// Rename a column, OLD=NEW; repeatable.
    #[arg(long = "rename-column", value_name = "OLD=NEW")]
    #[allow(dead_code)] // read by position, from the matches
    rename_column: Vec<String>,
    /// Widen a column's type, NAME=TYPE (e.g. v=BIGINT, s=VARCHAR(20)); repeatable.
    #[arg(long = "column-type", value_name = "NAME=TYPE")]
    #[allow(dead_code)] // read by position, from the matches
    column_type: Vec<String>,
    /// Run the full compaction a deletion-vector switch needs.
    #[arg(long)]
    compact: bool,
    /// Keep option keys that are neither Strata's nor Paimon's instead of refusing them.
    #[arg(long = "allow-unknown-options")]
    allow_unknown_options: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// One column flag, where it stood on the command line.
enum ColumnFlag {
    Add(String),
    After(String),
    First,
    Drop(String),
    Rename(String),
    Type(String),
}

/// Every column flag in `matches` (the `alter` subcommand's), in command-line order.
fn column_flags(matches: &ArgMatches) -> Vec<(usize, ColumnFlag)> {
    let mut flags = Vec::new();
    let mut valued = |id: &str, make: fn(String) -> ColumnFlag| {
        let values = matches.get_many::<String>(id).into_iter().flatten();
        let indices = matches.indices_of(id).into_iter().flatten();
        flags.extend(indices.zip(values).map(|(i, v)| (i, make(v.clone()))));
    };
    valued("add_column", ColumnFlag::Add);
    valued("after", ColumnFlag::After);
    valued("drop_column", ColumnFlag::Drop);
    valued("rename_column", ColumnFlag::Rename);
    valued("column_type", ColumnFlag::Type);
    flags.extend(matches.indices_of("first").into_iter().flatten().map(|i| (i, ColumnFlag::First)));
    flags.sort_by_key(|(i, _)| *i);
    flags
}

/// A column name as given: trimmed, without backticks.
fn column_name(s: &str) -> String {
    s.trim().trim_matches('`').to_string()
}

/// `NAME=VALUE` of `--flag`.
fn pair<'s>(flag: &str, s: &'s str, what: &str) -> Result<(String, &'s str), Error> {
    match s.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => Ok((column_name(name), value)),
        _ => Err(Error::invalid(format!("--{flag}"), format!("'{s}' is not {what}"))),
    }
}

/// `NAME TYPE [COMMENT 'text']` of `--add-column`.
fn added_column(s: &str) -> Result<(String, DataType, Option<String>), Error> {
    // ASCII lowering keeps byte offsets, so `at` indexes `s` too.
    let lower = s.to_ascii_lowercase();
    let (column, comment) = match lower.find(" comment ") {
        Some(at) => {
            let text = s[at + " comment ".len()..].trim();
            let unquoted = ['\'', '"']
                .iter()
                .find_map(|q| text.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)))
                .ok_or_else(|| Error::invalid("--add-column", format!("the comment in '{s}' is not quoted")))?;
            (&s[..at], Some(unquoted.to_string()))
        }
        None => (s, None),
    };
    let mut columns = parse_columns(column).map_err(|e| match e {
        Error::Invalid { message, .. } => Error::invalid("--add-column", message),
        other => other,
    })?;
    match (columns.pop(), columns.is_empty()) {
        (Some((name, data_type)), true) => Ok((name, data_type, comment)),
        _ => Err(Error::invalid("--add-column", format!("'{s}' is not one 'NAME TYPE' (one column per flag)"))),
    }
}

/// The column changes of the `alter` flags, in command-line order.
pub(crate) fn column_changes(matches: &ArgMatches) -> Result<Vec<SchemaChange>, Error> {
    let mut changes = Vec::new();
    for (_, flag) in column_flags(matches) {
        let place = |changes: &mut Vec<SchemaChange>, at: ColumnMove, flag: &str| match changes.last_mut() {
            Some(SchemaChange::AddColumn { position: position @ None, .. }) => {
                *position = Some(at);
                Ok(())
            }
            _ => Err(Error::invalid(
                format!("--{flag}"),
                "it places a new column, so it must follow an --add-column (one --after or --first each)",
            )),
        };
        match flag {
            ColumnFlag::Add(s) => {
                let (name, data_type, comment) = added_column(&s)?;
                changes.push(SchemaChange::AddColumn { name, data_type, position: None, comment });
            }
            ColumnFlag::After(x) => place(&mut changes, ColumnMove::After(column_name(&x)), "after")?,
            ColumnFlag::First => place(&mut changes, ColumnMove::First, "first")?,
            ColumnFlag::Drop(name) => changes.push(SchemaChange::drop_column(column_name(&name))),
            ColumnFlag::Rename(s) => {
                let (from, to) = pair("rename-column", &s, "OLD=NEW")?;
                changes.push(SchemaChange::rename_column(from, column_name(to)));
            }
            ColumnFlag::Type(s) => {
                let (name, type_string) = pair("column-type", &s, "COLUMN=TYPE")?;
                changes.push(SchemaChange::update_column_type(name, type_string.trim().parse()?));
            }
        }
    }
    Ok(changes)
}

/// Runs `strata alter`.
pub(crate) fn run(ctx: &Context, args: AlterArgs, matches: Option<&ArgMatches>) -> Result<(), Error> {
    let columns = match matches {
        Some(m) => column_changes(m)?,
        None => Vec::new(),
    };
    let table = ctx.open_table(&args.table_dir)?;
    let alter = AlterTable {
        set: parse_options("--set", &args.set)?,
        unset: args.unset,
        columns,
        compact_if_needed: args.compact,
        policy: OptionPolicy { allow_unknown_options: args.allow_unknown_options },
    };
    let progress = Progress::start("altering (compacting if needed)");
    let altered = table.alter(&alter)?;
    progress.finish();
    let schema = altered.schema();
    let (id, changed) = (schema.id, schema.id != table.schema().id);
    let fields: Vec<serde_json::Value> = schema
        .fields
        .iter()
        .map(|f| serde_json::json!({"id": f.id, "name": f.name, "type": f.data_type.to_string()}))
        .collect();
    let described: Vec<String> = alter.columns.iter().map(ToString::to_string).collect();
    let text = match (changed, described.is_empty()) {
        (false, _) => format!("nothing to change: table {} stays at schema {id}", altered.path()),
        (true, true) => format!("table {} now at schema {id}", altered.path()),
        (true, false) => format!("table {} now at schema {id} ({})", altered.path(), described.join(", ")),
    };
    report(
        args.json,
        &serde_json::json!({
            "schemaId": id, "changed": changed, "options": schema.options, "fields": fields,
            "highestFieldId": schema.highest_field_id, "primaryKeys": schema.primary_keys,
            "partitionKeys": schema.partition_keys, "columnChanges": described,
        }),
        &text,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_columns_parse_with_and_without_a_comment() {
        let (name, data_type, comment) =
            added_column("c DECIMAL(10, 2) COMMENT 'in euros'").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (name.as_str(), data_type.to_string(), comment.as_deref()),
            ("c", "DECIMAL(10, 2)".into(), Some("in euros"))
        );
        let (name, _, comment) = added_column("`İd` STRING comment \"ünï\"").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((name.as_str(), comment.as_deref()), ("İd", Some("ünï")));
        assert_eq!(added_column("c INT").map(|c| c.2).ok(), Some(None));
        for bad in ["c", "c INT, d INT", "c INT COMMENT unquoted", "c WHATEVER"] {
            assert_eq!(added_column(bad).err().map(|e| e.kind()), Some(strata_spec::ErrorKind::Invalid), "{bad}");
        }
    }
}
