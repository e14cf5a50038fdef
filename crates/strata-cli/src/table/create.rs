//! `strata create`: a table from a column list, its keys and options.

use strata_spec::{parse_columns, Error, TableSchema};
use strata_table::{now_millis, Table};

use crate::context::{location, parse_options, Context};

/// `strata create`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct CreateArgs {
    /// The table directory (e.g. warehouse/db.db/t).
    table_dir: String,
    /// Columns: "id BIGINT NOT NULL, name STRING, v BIGINT".
    #[arg(long)]
    schema: String,
    /// Primary-key columns, comma-separated.
    #[arg(long = "primary-key", value_delimiter = ',')]
    primary_key: Vec<String>,
    /// Partition columns, comma-separated.
    #[arg(long = "partition-keys", value_delimiter = ',')]
    partition_keys: Vec<String>,
    /// A table option, key=value; repeatable. `bucket` defaults to 1.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Keep option keys that are neither Strata's nor Paimon's instead of refusing them.
    #[arg(long = "allow-unknown-options")]
    allow_unknown_options: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `strata create`.
pub(crate) fn run(ctx: &Context, args: CreateArgs) -> Result<(), Error> {
    let CreateArgs { table_dir, schema, primary_key, partition_keys, options, allow_unknown_options, json } = args;
    let columns = parse_columns(&schema)?;
    let mut options = parse_options("--option", &options)?;
    // Paimon's default for a table without a primary key is an unaware-bucket append table (bucket -1);
    // Strata's for a primary-key table is one fixed bucket.
    let default_bucket = if primary_key.is_empty() { "-1" } else { "1" };
    options.entry("bucket".to_string()).or_insert_with(|| default_bucket.to_string());
    let schema = TableSchema::new(columns, partition_keys, primary_key, options, now_millis())?;
    let dir = location(&table_dir)?;
    let policy = strata_table::OptionPolicy { allow_unknown_options };
    let table = Table::create_with_policy(ctx.io(), &dir, schema, policy)?;
    if json {
        println!("{}", serde_json::json!({"created": table.path(), "schemaId": table.schema().id}));
    } else {
        println!("created table {}", table.path());
    }
    Ok(())
}
