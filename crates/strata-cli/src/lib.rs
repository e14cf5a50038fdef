//! `strata`: create and inspect (later write, scan, compact) Paimon tables from the command line.
//!
//! The binary lives in the facade package (`src/bin/strata.rs`) and calls [`main`].

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

mod alter;
mod bench;
mod branches;
mod changes;
mod demo;
mod get;
mod ingest;
mod input;
mod progress;
mod repair;
mod sim;
mod sql;
mod tags;

pub use bench::cpu_seconds;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use strata_io::{FileIO, LocalFileIO};
use strata_spec::{parse_columns, Error, ErrorKind, TableSchema};
use strata_table::{inspect, now_millis, Table};

/// The exit codes, shown by `--help` (and returned by [`main`]).
const EXIT_CODES: &str = "Exit codes:\n  0  success\n  1  other errors (I/O)\n  2  invalid input or arguments\n  \
3  not found\n  4  already exists\n  5  corrupt data\n  6  commit conflict (another writer won)\n  7  unsupported";

use progress::Progress;

#[derive(Parser, Debug)]
#[command(
    name = "strata",
    version,
    about = "Strata: a primary-key table store on Apache Paimon's format",
    after_help = EXIT_CODES
)]
struct Cli {
    /// A store option, by Paimon's names where Paimon has one (s3.endpoint, s3.access-key, s3.secret-key,
    /// s3.region, s3.path-style-access, fs.oss.endpoint, ...; the AWS_*, GOOGLE_* and AZURE_* environment
    /// is read too), or file-cache.max-disk-size; repeatable.
    #[arg(long = "store-option", value_name = "KEY=VALUE", global = true)]
    store_options: Vec<String>,
    /// Work on this branch of the table (Paimon's branch/branch-NAME/) instead of the table itself, for the
    /// commands that take a table directory (in `strata sql`, name it db."t$branch_NAME").
    #[arg(long, value_name = "NAME", global = true)]
    branch: Option<String>,
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
        /// Keep option keys that are neither Strata's nor Paimon's instead of refusing them.
        #[arg(long = "allow-unknown-options")]
        allow_unknown_options: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Build a demo table in a local warehouse and show what is in it.
    Demo {
        /// The warehouse directory.
        #[arg(long, default_value = "strata-warehouse")]
        warehouse: String,
        /// Commits to stream.
        #[arg(long, default_value_t = 10)]
        rounds: usize,
        /// Rows per commit.
        #[arg(long, default_value_t = 20_000)]
        rows: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a table's rows (raw reads with deletion vectors, merge-on-read otherwise), or what changed
    /// between snapshots (--from N [--to M]), or follow new snapshots as they land (--follow).
    Scan {
        /// The table directory.
        table_dir: String,
        /// Read this snapshot instead of the latest.
        #[arg(long, conflicts_with_all = ["tag", "timestamp"])]
        snapshot: Option<i64>,
        /// Read the snapshot this tag pins (readable after the snapshot expired).
        #[arg(long, conflicts_with = "timestamp")]
        tag: Option<String>,
        /// Read the latest snapshot committed at or before this time: epoch milliseconds or ISO-8601
        /// (local time unless it has an offset).
        #[arg(long)]
        timestamp: Option<String>,
        /// Columns to print, comma-separated (all by default).
        #[arg(long, value_delimiter = ',')]
        columns: Option<Vec<String>>,
        /// Output format.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: OutputFormat,
        /// Merge-on-read even for deletion-vector tables (also reads level 0).
        #[arg(long)]
        merge: bool,
        /// Incremental and streaming reads (--from, --to, --follow, ...).
        #[command(flatten)]
        changes: changes::ChangeArgs,
    },
    /// Run SQL over a warehouse's tables (DataFusion): queries, joins, INSERT INTO, DELETE FROM, system tables
    /// (db."t$snapshots"), time travel (VERSION AS OF n, FOR SYSTEM_TIME AS OF TIMESTAMP '...'); without a query,
    /// a prompt.
    Sql(sql::SqlArgs),
    /// Write rows from files (jsonl, csv or parquet, by extension) into a table: one commit for all of them.
    /// Fields go to columns by name; a value that does not fit its column exactly is refused.
    Write(ingest::WriteArgs),
    /// Compact a table's buckets (level 0 up, universal picks); `--full` merges every bucket into one run. In a
    /// postpone-bucket table (bucket = -2) the postponed rows also move into real buckets.
    Compact {
        /// The table directory.
        table_dir: String,
        /// Full compaction: no deletion vectors are left afterwards.
        #[arg(long)]
        full: bool,
        /// Also rewrite files whose deleted ratio (deletion vector / rows) reaches this.
        #[arg(long = "delete-ratio-threshold")]
        delete_ratio_threshold: Option<f64>,
        /// Compact buckets that another engine (Paimon's Java writers) compacted within
        /// strata.foreign-compaction.window (default 1 hour): only once that engine's compacting writers have
        /// stopped, since Paimon before 2.0 would commit stale deletion vectors over this compaction.
        #[arg(long = "ignore-foreign-compactions")]
        ignore_foreign_compactions: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Look rows up by primary key. A KEY is the key's value; for a key of several columns, the values in key
    /// order, comma-separated, double-quoted where a value holds a comma or a quote (CSV: "a,b",7). Keys that
    /// are not found are named on stderr (in the output with --json).
    Get {
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
    },
    /// Change table options and columns, as one new schema. Switching deletion vectors needs a fully
    /// compacted table (`--compact` does it); options that would change how stored rows read (bucket, merge
    /// engine, ...) cannot change once there is data. Column changes follow Paimon's rules (types only widen)
    /// and apply in the order given, after the option edits.
    Alter {
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
        add_column: Vec<String>,
        /// Place the column of the --add-column just before this flag after column X.
        #[arg(long = "after", value_name = "X")]
        after: Vec<String>,
        /// Place the column of the --add-column just before this flag first.
        #[arg(long = "first", num_args = 0, default_missing_value = "true", action = clap::ArgAction::Append)]
        first: Vec<bool>,
        /// Drop a column; repeatable.
        #[arg(long = "drop-column", value_name = "NAME")]
        drop_column: Vec<String>,
        /// Rename a column, OLD=NEW; repeatable.
        #[arg(long = "rename-column", value_name = "OLD=NEW")]
        rename_column: Vec<String>,
        /// Widen a column's type, NAME=TYPE (e.g. v=BIGINT, s=VARCHAR(20)); repeatable.
        #[arg(long = "column-type", value_name = "NAME=TYPE")]
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
    },
    /// Benchmark deletion vectors against merge-on-read and a raw arrow-rs scan, on one workload.
    Bench {
        /// Rows loaded first.
        #[arg(long, default_value_t = 2_000_000)]
        rows: usize,
        /// Update rounds after the load (10% of the keys each, 10% of them deletes).
        #[arg(long, default_value_t = 4)]
        rounds: usize,
        /// Buckets per table.
        #[arg(long, default_value_t = 4)]
        buckets: u32,
        /// Where the chart goes; the tables go into a fresh subdirectory that the run removes.
        #[arg(long, default_value = "strata-bench")]
        dir: String,
        /// Put the tables under this location instead (a local path or a store URI such as
        /// s3://bucket/prefix, reached with --store-option and the AWS_* environment); request counts per
        /// operation are reported for stores that count them.
        #[arg(long)]
        warehouse: Option<String>,
        /// A table option for both tables (KEY=VALUE, repeatable), e.g.
        /// strata.lookup-compact.size-ratio=true for Paimon's forced level-0 pick.
        #[arg(long = "table-option", value_name = "KEY=VALUE")]
        table_options: Vec<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Expire old snapshots and delete what only they referenced.
    Expire {
        /// The table directory.
        table_dir: String,
        /// Keep at most this many snapshots, at least 1 (default: `snapshot.num-retained.max`).
        #[arg(long = "retain-max", value_parser = clap::value_parser!(u32).range(1..))]
        retain_max: Option<u32>,
        /// Keep at least this many, at least 1 (default: `snapshot.num-retained.min`, capped by --retain-max).
        #[arg(long = "retain-min", value_parser = clap::value_parser!(u32).range(1..))]
        retain_min: Option<u32>,
        /// Expire snapshots older than this beyond the minimum, with a unit: 30 s, 10 min, 1 h, 2 d (default:
        /// `snapshot.time-retained`).
        #[arg(long = "older-than")]
        older_than: Option<String>,
        /// Report, delete nothing.
        #[arg(long = "dry-run")]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Restore deletes lost to two compactors (deletion vectors on files no longer live whose rows read again
    /// from the files a compaction wrote) and drop vectors of files no longer live.
    Repair(repair::RepairArgs),
    /// Delete files no snapshot references (only those older than --older-than, so in-flight commits are safe).
    Clean {
        /// The table directory.
        table_dir: String,
        /// Only files last modified longer ago than this, with a unit: 30 s, 10 min, 1 h, 2 d.
        #[arg(long = "older-than", default_value = "1 d")]
        older_than: String,
        /// Report, delete nothing.
        #[arg(long = "dry-run")]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replay a workload file against a model; print the first divergence.
    Replay {
        /// The workload (JSON lines, docs/WORKLOADS.md).
        file: String,
        /// Fail a storage operation in this share of the commits (0..=1).
        #[arg(long, default_value_t = 0.0)]
        faults: f64,
        /// Where the table goes (a temporary directory by default).
        #[arg(long)]
        dir: Option<String>,
        /// On a divergence, shrink the workload and write it here.
        #[arg(long)]
        shrink: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replay random workloads until time runs out; report workloads/s, faults and failures (shrunk
    /// failing workloads are saved).
    Soak {
        /// How long to run.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Commits per workload.
        #[arg(long, default_value_t = 12)]
        commits: usize,
        /// Share of commits with an injected fault.
        #[arg(long, default_value_t = 0.3)]
        faults: f64,
        /// First seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where failing workloads are saved.
        #[arg(long, default_value = "soak-failures")]
        save: String,
        /// Put the workloads' tables under this location (a store URI such as s3://bucket/soak) instead of a
        /// local temporary directory.
        #[arg(long)]
        warehouse: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create, list and delete tags (named snapshots that outlive expiration).
    Tag {
        #[command(subcommand)]
        command: tags::TagCommand,
    },
    /// Create, list and delete branches (Paimon's `branch/branch-<name>/`; read and write one in `strata sql`
    /// as db."t$branch_<name>").
    Branch {
        #[command(subcommand)]
        command: branches::BranchCommand,
    },
    /// Roll the table back to a snapshot or a tag: newer snapshots and tags are removed, with the files only
    /// they referenced. Stop every writer of the table first.
    Rollback(tags::RollbackArgs),
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
pub(crate) enum OutputFormat {
    /// One JSON object per row, keyed by column name; nulls as null.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
    /// An aligned text table.
    Table,
}

/// Store options given on the command line (`--store-option`), set once by [`main`].
static STORE_OPTIONS: std::sync::OnceLock<BTreeMap<String, String>> = std::sync::OnceLock::new();

/// The branch given on the command line (`--branch`), set once by [`main`].
static BRANCH: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Opens the table at the table argument `dir` (see [`location`]), on the `--branch` given.
fn open_table(dir: &str) -> Result<Table, Error> {
    open_located(&location(dir)?)
}

/// Opens the table at `path`, a location already canonical, on the `--branch` given.
fn open_located(path: &str) -> Result<Table, Error> {
    match BRANCH.get() {
        Some(b) => Table::open_branch(io(), path, b),
        None => Table::open(io(), path),
    }
}

/// The storage every command works through: local paths and store URIs alike, with the store options of
/// the command line, counted for progress lines.
fn io() -> Arc<dyn FileIO> {
    static IO: std::sync::OnceLock<std::result::Result<Arc<dyn FileIO>, String>> = std::sync::OnceLock::new();
    let built = IO.get_or_init(|| {
        let options = STORE_OPTIONS.get().cloned().unwrap_or_default();
        strata_store::StoreRouter::new(options)
            .map(|r| Arc::new(progress::CountingFileIO(r)) as Arc<dyn FileIO>)
            .map_err(|e| e.to_string())
    });
    match built {
        Ok(io) => io.clone(),
        // `main` checks the options before any command runs; a router of local paths only is what is left.
        Err(_) => Arc::new(progress::CountingFileIO(LocalFileIO::new())),
    }
}

/// Storage like [`io`] but of its own: another client without local copies of immutable files, as a
/// separate reading process would have.
fn reader_io() -> Result<Arc<dyn FileIO>, Error> {
    let mut options = STORE_OPTIONS.get().cloned().unwrap_or_default();
    options.insert(strata_store::FILE_CACHE_SIZE.to_string(), "0".to_string());
    Ok(Arc::new(progress::CountingFileIO(strata_store::StoreRouter::new(options)?)))
}

/// The canonical location of a table argument: a local path made absolute, or a store URI
/// (`s3://bucket/warehouse/db.db/t`); schemes Strata cannot reach are refused, never made local directories.
fn location(dir: &str) -> Result<String, Error> {
    strata_store::normalize_location(dir)
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

/// Runs a parsed command; `matches` are the parsed arguments (column flags of `alter` go by their position).
fn run(cli: Cli, matches: &clap::ArgMatches) -> Result<(), Error> {
    if let Some(b) = &cli.branch {
        let takes_table = !matches!(
            cli.command,
            Command::Create { .. }
                | Command::Demo { .. }
                | Command::Sql(_)
                | Command::Bench { .. }
                | Command::Replay { .. }
                | Command::Soak { .. }
        );
        if !takes_table {
            return Err(Error::invalid(
                "--branch",
                "it applies to commands on a table directory (in strata sql, name the branch db.\"t$branch_NAME\")",
            ));
        }
        let _ = BRANCH.set(b.clone());
    }
    match cli.command {
        Command::Create { table_dir, schema, primary_key, partition_keys, options, allow_unknown_options, json } => {
            let keys = (primary_key, partition_keys);
            create(&table_dir, &schema, keys, &options, allow_unknown_options, json)?
        }
        Command::Demo { warehouse, rounds, rows, json } => demo::demo(&absolute(&warehouse), rounds, rows, json)?,
        Command::Bench { rows, rounds, buckets, dir, warehouse, table_options, json } => {
            if rows == 0 || buckets == 0 {
                return Err(Error::invalid("bench", "--rows and --buckets must be positive"));
            }
            let warehouse = warehouse.as_deref().map(location).transpose()?;
            let store = match &warehouse {
                Some(w) => Some(bench::BenchStore { warehouse: w, writer: io(), reader: reader_io()? }),
                None => None,
            };
            let options = parse_options(&table_options)?.into_iter().collect();
            let workload = bench::Workload { rows, rounds, options };
            let report = bench::run(&absolute(&dir), store, &workload, buckets, json)?;
            if json {
                println!("{report}");
            }
        }
        Command::Expire { table_dir, retain_max, retain_min, older_than, dry_run, json } => {
            expire(&table_dir, (retain_min, retain_max), older_than, dry_run, json)?
        }
        Command::Clean { table_dir, older_than, dry_run, json } => {
            let table = crate::open_table(&table_dir)?;
            let age = strata_table::parse_older_than(&older_than)?;
            let r = strata_table::remove_orphan_files(&table, age, dry_run)?;
            maintenance_report(json, &r, "removed orphans")?;
        }
        Command::Replay { file, faults, dir, shrink, json } => sim::replay_file(file, faults, dir, shrink, json)?,
        Command::Soak { seconds, commits, faults, seed, save, warehouse, json } => {
            sim::soak(seconds, commits, faults, seed, save, warehouse, json)?
        }
        Command::Get { table_dir, keys, snapshot, format, json } => {
            get::run(&crate::open_table(&table_dir)?, &keys, snapshot, format, json)?
        }
        Command::Alter { table_dir, set, unset, compact, allow_unknown_options, json, .. } => {
            let args = alter::AlterArgs { table_dir, set, unset, compact, allow_unknown_options, json };
            alter::run(args, matches.subcommand_matches("alter"))?;
        }
        Command::Write(args) => ingest::run(args)?,
        Command::Repair(args) => repair::run(args)?,
        Command::Sql(args) => sql::run(args)?,
        Command::Compact { table_dir, full, delete_ratio_threshold, ignore_foreign_compactions, json } => {
            compact(&table_dir, full, delete_ratio_threshold, ignore_foreign_compactions, json)?
        }
        Command::Scan { table_dir, snapshot, tag, timestamp, columns, format, merge, changes } => {
            scan(&table_dir, snapshot, (tag, timestamp), columns, format, merge, &changes)?
        }
        Command::Tag { command } => tags::run_tag(command)?,
        Command::Branch { command } => branches::run_branch(command)?,
        Command::Rollback(args) => tags::run_rollback(args)?,
        Command::Inspect { table_dir, snapshot, json } => {
            let table = crate::open_table(&table_dir)?;
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

/// `strata create`.
fn create(
    table_dir: &str,
    schema: &str,
    (primary_key, partition_keys): (Vec<String>, Vec<String>),
    options: &[String],
    allow_unknown_options: bool,
    json: bool,
) -> Result<(), Error> {
    let columns = parse_columns(schema)?;
    let mut options = parse_options(options)?;
    // Paimon's default for a table without a primary key is an unaware-bucket append table (bucket -1);
    // Strata's for a primary-key table is one fixed bucket.
    let default_bucket = if primary_key.is_empty() { "-1" } else { "1" };
    options.entry("bucket".to_string()).or_insert_with(|| default_bucket.to_string());
    let schema = TableSchema::new(columns, partition_keys, primary_key, options, now_millis())?;
    let dir = location(table_dir)?;
    let policy = strata_table::OptionPolicy { allow_unknown_options };
    let table = Table::create_with_policy(io(), &dir, schema, policy)?;
    if json {
        println!("{}", serde_json::json!({"created": table.path(), "schemaId": table.schema().id}));
    } else {
        println!("created table {}", table.path());
    }
    Ok(())
}

/// `strata expire`.
fn expire(
    table_dir: &str,
    (retain_min, retain_max): (Option<u32>, Option<u32>),
    older_than: Option<String>,
    dry_run: bool,
    json: bool,
) -> Result<(), Error> {
    let table = crate::open_table(table_dir)?;
    let mut opts = strata_table::ExpireOptions::from_table(&table)?;
    if let (Some(min), Some(max)) = (retain_min, retain_max) {
        if min > max {
            return Err(Error::invalid("--retain-min", format!("{min} is more than --retain-max {max}")));
        }
    }
    if let Some(m) = retain_max {
        opts.retain_max = m;
        opts.retain_min = opts.retain_min.min(opts.retain_max);
    }
    if let Some(m) = retain_min {
        opts.retain_min = m;
    }
    if let Some(d) = older_than {
        opts.time_retained = strata_table::parse_older_than(&d)?;
    }
    opts.dry_run = dry_run;
    let r = strata_table::expire_snapshots(&table, &opts)?;
    maintenance_report(json, &r, "expired")
}

/// `strata compact`.
fn compact(
    table_dir: &str,
    full: bool,
    delete_ratio_threshold: Option<f64>,
    ignore_foreign_compactions: bool,
    json: bool,
) -> Result<(), Error> {
    let mut table = crate::open_table(table_dir)?;
    if ignore_foreign_compactions {
        table.set_foreign_compaction_window(std::time::Duration::ZERO);
    }
    if let Some(t) = delete_ratio_threshold {
        if !(0.0..=1.0).contains(&t) {
            return Err(Error::invalid("--delete-ratio-threshold", format!("{t} is outside 0..=1")));
        }
    }
    let mut write = strata_table::TableWrite::for_compaction(&table)?;
    write.open_all_buckets()?;
    let progress = Progress::start("compacting");
    let messages = write.prepare_commit_with(full, delete_ratio_threshold)?;
    progress.finish();
    let files_before: usize = messages.iter().map(|m| m.increment.compact.compact_before.len()).sum();
    let files_after: usize = messages.iter().map(|m| m.increment.compact.compact_after.len()).sum();
    // A compaction is one COMPACT snapshot, postponed rows moved into real buckets included (they were
    // in an APPEND snapshot already, when the postponed files were written).
    let outcome = strata_table::commit_batch(ingest::CLI_JOB, &table, &mut write, messages, None)?.map(|s| s.last);
    report(
        json,
        &serde_json::json!({"filesRemoved": files_before, "filesAdded": files_after, "snapshot": outcome}),
        &match outcome {
            Some(id) => {
                format!("compacted: {files_before} files replaced by {files_after}; committed snapshot {id}")
            }
            None => "nothing to compact".to_string(),
        },
    );
    Ok(())
}

/// `strata scan`.
fn scan(
    table_dir: &str,
    snapshot: Option<i64>,
    (tag, timestamp): (Option<String>, Option<String>),
    columns: Option<Vec<String>>,
    format: OutputFormat,
    merge: bool,
    changes: &changes::ChangeArgs,
) -> Result<(), Error> {
    let table = crate::open_table(table_dir)?;
    if changes.wanted() {
        if tag.is_some() || timestamp.is_some() {
            return Err(Error::invalid(
                "scan",
                "--tag and --timestamp choose one snapshot to read; incremental reads take --from/--to",
            ));
        }
        return changes::run(&table, changes, columns, format, snapshot, merge);
    }
    let format = if changes.json { OutputFormat::Jsonl } else { format };
    let options = tags::scan_options(tag, timestamp)?;
    let opts = strata_table::ScanOptions { snapshot, columns, force_merge: merge, batch_size: None, options };
    let progress = Progress::start("scanning");
    let result = strata_table::scan(&table, &opts)?;
    progress.finish();
    print_batches(&result.batches, format)
}

fn maintenance_report(json: bool, r: &strata_table::MaintenanceReport, what: &str) -> Result<(), Error> {
    if json {
        println!("{}", serde_json::to_string(r).map_err(|e| Error::invalid("report", e.to_string()))?);
    } else {
        println!(
            "{}{what}: {} snapshots, {} data files, {} index files, {} manifests, {} other files",
            if r.dry_run { "dry run, would have " } else { "" },
            r.snapshots.len(),
            r.data_files.len(),
            r.index_files.len(),
            r.manifests.len(),
            r.other_files.len()
        );
    }
    Ok(())
}

fn report(json: bool, value: &serde_json::Value, text: &str) {
    if json {
        println!("{value}");
    } else {
        println!("{text}");
    }
}

pub(crate) fn print_batches(batches: &[arrow_array::RecordBatch], format: OutputFormat) -> Result<(), Error> {
    write_batches(batches, format, true)
}

/// Prints `batches` in `format` (CSV with a header line when `csv_header`) and flushes stdout.
pub(crate) fn write_batches(
    batches: &[arrow_array::RecordBatch],
    format: OutputFormat,
    csv_header: bool,
) -> Result<(), Error> {
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
            let mut w = arrow_csv::WriterBuilder::new().with_header(csv_header).build(&mut out);
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
        if let Some(ix) = b["hashIndexFile"].as_object() {
            let name = ix.get("fileName").and_then(|f| f.as_str()).unwrap_or("");
            println!("    key hashes: {} in {name}", ix.get("keyHashes").unwrap_or(&serde_json::Value::Null));
        }
    }
}

/// Runs the CLI on the process arguments and returns the exit code: 0 on success, 2 for bad input,
/// 3 not found, 4 already exists, 5 corrupt data, 6 commit conflict, 7 unsupported, 1 other errors.
pub fn main() -> ExitCode {
    // A panic inside a third-party decoder is contained at the decoder boundary and comes back as a
    // corrupt-file error, printed below: the default hook's backtrace message for it would only confuse.
    // Any other panic is a bug and is printed as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !strata_spec::panic_is_contained() {
            default_hook(info);
        }
    }));
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if std::env::var_os("STRATA_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("STRATA_LOG"))
            .with_writer(std::io::stderr)
            .init();
    }
    let checked = parse_options(&cli.store_options).and_then(|o| {
        strata_store::StoreRouter::new(o.clone())?;
        let _ = STORE_OPTIONS.set(o);
        Ok(())
    });
    match checked.and_then(|()| run(cli, &matches)) {
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
