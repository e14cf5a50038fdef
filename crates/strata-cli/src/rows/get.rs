//! `strata get`: rows by primary key (all keys in one pass, `strata_table::get_many`), with the keys that were
//! not found named.

use strata_spec::{Datum, Error, TypeRoot};
use strata_table::Table;

use crate::context::Context;
use crate::output::{print_batches, OutputFormat};

/// `strata get`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct GetArgs {
    /// The table directory.
    table_dir: String,
    /// Keys to look up.
    #[arg(required = true, num_args = 1..)]
    keys: Vec<String>,
    /// Read this snapshot instead of the latest.
    #[arg(long)]
    snapshot: Option<i64>,
    /// Output format of the rows.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: OutputFormat,
    /// Print one JSON object: the rows found and the keys not found.
    #[arg(long)]
    json: bool,
}

/// Runs `strata get`.
pub(crate) fn run(ctx: &Context, args: GetArgs) -> Result<(), Error> {
    lookup(&ctx.open_table(&args.table_dir)?, &args.keys, args.snapshot, args.format, args.json)
}

/// Looks `keys` up and prints the rows found; names the keys not found (stderr, or in the JSON object).
fn lookup(
    table: &Table,
    keys: &[String],
    snapshot: Option<i64>,
    format: OutputFormat,
    json: bool,
) -> Result<(), Error> {
    let parsed = keys.iter().map(|k| parse_key(table, k)).collect::<Result<Vec<_>, Error>>()?;
    // One pass for all keys: the snapshot's metadata once, each candidate file's key columns once.
    let found = strata_table::get_many(table, &parsed, snapshot)?;
    let mut rows = Vec::new();
    let mut not_found = Vec::new();
    for (text, row) in keys.iter().zip(found) {
        match row {
            Some(r) => rows.push(r),
            None => not_found.push(text.clone()),
        }
    }
    if json {
        let mut buf = Vec::new();
        {
            let mut w = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::JsonArray>(&mut buf);
            for b in &rows {
                w.write(b).map_err(|e| Error::invalid_from("rows", e))?;
            }
            w.finish().map_err(|e| Error::invalid_from("rows", e))?;
        }
        let found: serde_json::Value = if buf.is_empty() {
            serde_json::json!([])
        } else {
            serde_json::from_slice(&buf).map_err(|e| Error::invalid_from("rows", e))?
        };
        println!("{}", serde_json::json!({"rows": found, "notFound": not_found}));
        return Ok(());
    }
    print_batches(&rows, format)?;
    if !not_found.is_empty() {
        eprintln!("not found: {}", not_found.join(" "));
    }
    Ok(())
}

/// Splits a key's text into its column values: the whole text for a one-column key (so a string key may hold
/// commas), else comma-separated values where a double-quoted value may hold commas and `""` for a quote.
fn split_key(text: &str, columns: usize) -> Result<Vec<String>, Error> {
    if columns == 1 {
        return Ok(vec![text.to_string()]);
    }
    let bad = |m: &str| Error::invalid(format!("key '{text}'"), m.to_string());
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut value = String::new();
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err(bad("a quoted value is not closed")),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        value.push('"');
                    }
                    Some('"') => break,
                    Some(c) => value.push(c),
                }
            }
            while chars.peek() == Some(&' ') {
                chars.next();
            }
            if !matches!(chars.peek(), None | Some(',')) {
                return Err(bad("text after a closing quote; quote the whole value"));
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if c == '"' {
                    return Err(bad("a quote inside an unquoted value; quote the whole value and double the quote"));
                }
                value.push(c);
                chars.next();
            }
            value = value.trim().to_string();
        }
        out.push(value);
        if chars.next().is_none() {
            return Ok(out);
        }
    }
}

/// Parses a key's text into the table's primary-key values (typed by the columns).
fn parse_key(table: &Table, text: &str) -> Result<Vec<Option<Datum>>, Error> {
    let schema = table.schema();
    let parts = split_key(text, schema.primary_keys.len())?;
    if parts.len() != schema.primary_keys.len() {
        return Err(Error::invalid(
            format!("key '{text}'"),
            format!(
                "give {} comma-separated values for primary key ({}); quote a value holding a comma: \"a,b\"",
                schema.primary_keys.len(),
                schema.primary_keys.join(", ")
            ),
        ));
    }
    schema
        .primary_keys
        .iter()
        .zip(parts)
        .map(|(k, v)| {
            let t = schema.field(k)?.data_type;
            // Spaces belong to a string key; around a number or a date they are only layout.
            let text_type = matches!(t.root, TypeRoot::Char(_) | TypeRoot::VarChar(_));
            let v = if text_type { v.as_str() } else { v.trim() };
            let s: arrow_array::ArrayRef = std::sync::Arc::new(arrow_array::StringArray::from(vec![v]));
            let cast = arrow_cast::cast::cast_with_options(
                &s,
                &strata_format::to_arrow(&t),
                &arrow_cast::cast::CastOptions { safe: false, ..Default::default() },
            )
            .map_err(|e| Error::invalid(format!("key '{text}'"), format!("'{v}' is not a {t}: {e}")))?;
            strata_format::datum_at(cast.as_ref(), 0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split_key;

    #[test]
    fn one_column_keys_keep_commas_and_several_columns_split_like_csv() {
        let ok = |t: &str, n: usize| split_key(t, n).unwrap_or_default();
        assert_eq!(ok("a,b", 1), vec!["a,b"]);
        assert_eq!(ok(" padded ", 1), vec![" padded "]);
        assert_eq!(ok("1, x", 2), vec!["1", "x"]);
        assert_eq!(ok("\"a,b\",7", 2), vec!["a,b", "7"]);
        assert_eq!(ok("\"say \"\"hi\"\"\", 7", 2), vec!["say \"hi\"", "7"]);
        assert_eq!(ok("1,,3", 3), vec!["1", "", "3"]);
        for bad in ["\"open,7", "\"a\"b,7", "a\"b,7"] {
            assert!(split_key(bad, 2).is_err(), "{bad}");
        }
    }
}
