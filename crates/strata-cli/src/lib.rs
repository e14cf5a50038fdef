//! `strata`: create and inspect (later write, scan, compact) Paimon tables from the command line.
//!
//! The binary lives in the facade package (`src/bin/strata.rs`) and calls [`main`].

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use strata_io::{FileIO, LocalFileIO};
use strata_spec::schema::parse_columns;
use strata_spec::{Error, ErrorKind, TableSchema};
use strata_table::commit::now_millis;
use strata_table::inspect::inspect;
use strata_table::Table;

#[derive(Parser, Debug)]
#[command(name = "strata", version, about = "Strata: a primary-key table store on Apache Paimon's format")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create a table in TABLE_DIR.
    Create {
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
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build a demo table in a local warehouse and show what is in it.
    Demo {
        /// The warehouse directory.
        #[arg(long, default_value = "strata-warehouse")]
        warehouse: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a table's rows (raw reads with deletion vectors, merge-on-read otherwise).
    Scan {
        /// The table directory.
        table_dir: String,
        /// Read this snapshot instead of the latest.
        #[arg(long)]
        snapshot: Option<i64>,
        /// Columns to print, comma-separated (all by default).
        #[arg(long, value_delimiter = ',')]
        columns: Option<Vec<String>>,
        /// Output format.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: OutputFormat,
        /// Merge-on-read even for deletion-vector tables (also reads level 0).
        #[arg(long)]
        merge: bool,
    },
    /// Show a table's schema, snapshots, and files per bucket and level.
    Inspect {
        /// The table directory.
        table_dir: String,
        /// Inspect this snapshot instead of the latest.
        #[arg(long)]
        snapshot: Option<i64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// How rows are printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum OutputFormat {
    /// One JSON object per row, keyed by column name; nulls as null.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
    /// An aligned text table.
    Table,
}

fn io() -> Arc<dyn FileIO> {
    Arc::new(LocalFileIO::new())
}

fn absolute(dir: &str) -> String {
    let p = std::path::Path::new(dir);
    if p.is_absolute() {
        dir.to_string()
    } else {
        std::env::current_dir().map(|c| c.join(p).to_string_lossy().into_owned()).unwrap_or_else(|_| dir.to_string())
    }
}

fn parse_options(raw: &[String]) -> Result<BTreeMap<String, String>, Error> {
    let mut map = BTreeMap::new();
    for kv in raw {
        let (k, v) =
            kv.split_once('=').ok_or_else(|| Error::invalid("--option", format!("'{kv}' is not KEY=VALUE")))?;
        if k.trim().is_empty() {
            return Err(Error::invalid("--option", format!("'{kv}' has an empty key")));
        }
        map.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(map)
}

fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Create { table_dir, schema, primary_key, partition_keys, options, json } => {
            let columns = parse_columns(&schema)?;
            let mut options = parse_options(&options)?;
            options.entry("bucket".to_string()).or_insert_with(|| "1".to_string());
            let schema = TableSchema::new(columns, partition_keys, primary_key, options, now_millis())?;
            let dir = absolute(&table_dir);
            let table = Table::create(io(), &dir, schema)?;
            if json {
                println!("{}", serde_json::json!({"created": table.path(), "schemaId": table.schema().id}));
            } else {
                println!("created table {}", table.path());
            }
        }
        Command::Demo { warehouse, json } => demo(&absolute(&warehouse), json)?,
        Command::Scan { table_dir, snapshot, columns, format, merge } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            let opts = strata_table::scan::ScanOptions { snapshot, columns, force_merge: merge, batch_size: None };
            let result = strata_table::scan::scan(&table, &opts)?;
            print_batches(&result.batches, format)?;
        }
        Command::Inspect { table_dir, snapshot, json } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            let report = inspect(&table, snapshot)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).map_err(|e| Error::invalid("report", e.to_string()))?
                );
            } else {
                print_report(&report);
            }
        }
    }
    Ok(())
}

/// The README's main job: a table in a local warehouse, reported.
fn demo(warehouse: &str, json: bool) -> Result<(), Error> {
    let catalog = strata_table::FileSystemCatalog::new(io(), warehouse);
    catalog.create_database("demo", true)?;
    let schema = TableSchema::new(
        parse_columns("id BIGINT NOT NULL, name STRING, v BIGINT")?,
        vec![],
        vec!["id".to_string()],
        BTreeMap::from([
            ("bucket".to_string(), "2".to_string()),
            ("deletion-vectors.enabled".to_string(), "true".to_string()),
        ]),
        now_millis(),
    )?;
    let table = catalog.create_table("demo", "kv", schema, true)?;
    let report = inspect(&table, None)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| Error::invalid("report", e.to_string()))?);
    } else {
        println!("warehouse {warehouse}: databases {:?}", catalog.list_databases()?);
        print_report(&report);
    }
    Ok(())
}

fn print_batches(batches: &[arrow_array::RecordBatch], format: OutputFormat) -> Result<(), Error> {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let fail = |e: &dyn std::fmt::Display| Error::io("stdout", std::io::Error::other(e.to_string()));
    match format {
        OutputFormat::Jsonl => {
            let mut w = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::LineDelimited>(&mut out);
            for b in batches {
                w.write(b).map_err(|e| fail(&e))?;
            }
            w.finish().map_err(|e| fail(&e))?;
        }
        OutputFormat::Csv => {
            let mut w = arrow_csv::WriterBuilder::new().with_header(true).build(&mut out);
            for b in batches {
                w.write(b).map_err(|e| fail(&e))?;
            }
        }
        OutputFormat::Table => {
            let table = arrow_cast::pretty::pretty_format_batches(batches).map_err(|e| fail(&e))?;
            use std::io::Write;
            writeln!(out, "{table}").map_err(|e| fail(&e))?;
        }
    }
    use std::io::Write;
    out.flush().map_err(|e| fail(&e))
}

fn print_report(r: &serde_json::Value) {
    println!("table     {}", r["path"].as_str().unwrap_or(""));
    let schema = &r["schema"];
    let fields: Vec<String> = schema["fields"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| format!("{} {}", f["name"].as_str().unwrap_or(""), f["type"].as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    println!("schema    {} (id {})", fields.join(", "), schema["id"]);
    println!("keys      primary {} partition {}", schema["primaryKeys"], schema["partitionKeys"]);
    println!("options   {}", schema["options"]);
    let snaps = r["snapshots"].as_array().map(Vec::len).unwrap_or(0);
    println!("snapshots {} (earliest {}, latest {})", snaps, r["earliestSnapshot"], r["latestSnapshot"]);
    for s in r["snapshots"].as_array().into_iter().flatten() {
        println!(
            "  #{:<5} {:<8} rows {:>10} (delta {:>8})  user {}",
            s["id"],
            s["commitKind"].as_str().unwrap_or(""),
            s["totalRecordCount"],
            s["deltaRecordCount"],
            s["commitUser"].as_str().unwrap_or("")
        );
    }
    let t = &r["totals"];
    println!("snapshot {}: {} files, {} rows, {} bytes", r["snapshot"], t["fileCount"], t["rowCount"], t["fileSize"]);
    for b in r["buckets"].as_array().into_iter().flatten() {
        println!("  partition {} bucket {}", b["partition"], b["bucket"]);
        for l in b["levels"].as_array().into_iter().flatten() {
            println!(
                "    level {}: {} files, {} rows, {} bytes",
                l["level"], l["fileCount"], l["rowCount"], l["fileSize"]
            );
        }
        if let Some(ix) = b["indexFile"].as_object() {
            let n = ix.get("deletionVectors").and_then(|d| d.as_array()).map(Vec::len).unwrap_or(0);
            println!("    deletion vectors: {} in {}", n, ix.get("fileName").and_then(|f| f.as_str()).unwrap_or(""));
        }
    }
}

/// Runs the CLI on the process arguments and returns the exit code: 0 on success, 2 for bad input,
/// 3 not found, 4 already exists, 5 corrupt data, 6 commit conflict, 7 unsupported, 1 other errors.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if std::env::var_os("STRATA_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("STRATA_LOG"))
            .with_writer(std::io::stderr)
            .init();
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata: error: {e}");
            ExitCode::from(match e.kind() {
                ErrorKind::Invalid => 2,
                ErrorKind::NotFound => 3,
                ErrorKind::AlreadyExists => 4,
                ErrorKind::Corrupt => 5,
                ErrorKind::Conflict => 6,
                ErrorKind::Unsupported => 7,
                _ => 1,
            })
        }
    }
}
