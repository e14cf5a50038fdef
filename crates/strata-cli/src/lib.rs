//! `strata`: Paimon tables from the command line.
//!
//! The binary lives in the facade package (`src/bin/strata.rs`) and calls [`main`]. Each command is a module
//! with its own arguments struct, in a room by what it works on: `table/` (create, alter, inspect, tags,
//! rollback, branches), `rows/` (write, scan and changes, get, sql), `maintenance/` (compact, expire, clean,
//! repair) and `tools/` (demo, bench, replay, soak). A command runs with a [`context::Context`]: the storage
//! and branch of the command line, made once per run.

use std::process::ExitCode;

mod context;
mod input;
mod maintenance;
mod output;
mod progress;
mod rows;
mod table;
mod tools;

pub use tools::bench::cpu_seconds;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use strata_spec::{Error, ErrorKind};

use context::{parse_options, Context};

/// The exit codes, shown by `--help` (and returned by [`main`]).
const EXIT_CODES: &str =
    "Exit codes:\n  0  success\n  1  other errors (I/O, internal)\n  2  invalid input or arguments\n  \
3  not found\n  4  already exists\n  5  corrupt data\n  6  commit conflict (another writer won)\n  7  unsupported";

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
    Create(table::create::CreateArgs),
    /// Build a demo table in a local warehouse and show what is in it.
    Demo(tools::demo::DemoArgs),
    /// Print a table's rows (raw reads with deletion vectors, merge-on-read otherwise), or what changed
    /// between snapshots (--from N [--to M]), or follow new snapshots as they land (--follow).
    Scan(rows::scan::ScanArgs),
    /// Run SQL over a warehouse's tables (DataFusion): queries, joins, INSERT INTO, DELETE FROM, system tables
    /// (db."t$snapshots"), time travel (VERSION AS OF n, FOR SYSTEM_TIME AS OF TIMESTAMP '...'); without a query,
    /// a prompt.
    Sql(rows::sql::SqlArgs),
    /// Write rows from files (jsonl, csv or parquet, by extension) into a table: one commit for all of them.
    /// Fields go to columns by name; a value that does not fit its column exactly is refused.
    Write(rows::ingest::WriteArgs),
    /// Compact a table's buckets (level 0 up, universal picks); `--full` merges every bucket into one run. In a
    /// postpone-bucket table (bucket = -2) the postponed rows also move into real buckets.
    Compact(maintenance::compact::CompactArgs),
    /// Look rows up by primary key. A KEY is the key's value; for a key of several columns, the values in key
    /// order, comma-separated, double-quoted where a value holds a comma or a quote (CSV: "a,b",7). Keys that
    /// are not found are named on stderr (in the output with --json).
    Get(rows::get::GetArgs),
    /// Change table options and columns, as one new schema. Switching deletion vectors needs a fully
    /// compacted table (`--compact` does it); options that would change how stored rows read (bucket, merge
    /// engine, ...) cannot change once there is data. Column changes follow Paimon's rules (types only widen)
    /// and apply in the order given, after the option edits.
    Alter(table::alter::AlterArgs),
    /// Benchmark deletion vectors against merge-on-read and a raw arrow-rs scan, on one workload.
    Bench(tools::bench::BenchArgs),
    /// Expire old snapshots and delete what only they referenced.
    Expire(maintenance::ExpireArgs),
    /// Restore deletes lost to two compactors (deletion vectors on files no longer live whose rows read again
    /// from the files a compaction wrote) and drop vectors of files no longer live.
    Repair(maintenance::repair::RepairArgs),
    /// Delete files no snapshot references (only those older than --older-than, so in-flight commits are safe).
    Clean(maintenance::CleanArgs),
    /// Replay a workload file against a model; print the first divergence.
    Replay(tools::sim::ReplayArgs),
    /// Replay random workloads until time runs out; report workloads/s, faults and failures (shrunk
    /// failing workloads are saved).
    Soak(tools::sim::SoakArgs),
    /// Create, list and delete tags (named snapshots that outlive expiration).
    Tag {
        #[command(subcommand)]
        command: table::tags::TagCommand,
    },
    /// Create, list and delete branches (Paimon's `branch/branch-<name>/`; read and write one in `strata sql`
    /// as db."t$branch_<name>").
    Branch {
        #[command(subcommand)]
        command: table::branches::BranchCommand,
    },
    /// Roll the table back to a snapshot or a tag: newer snapshots and tags are removed, with the files only
    /// they referenced. Stop every writer of the table first.
    Rollback(table::tags::RollbackArgs),
    /// Show a table's schema, snapshots, and files per bucket and level.
    Inspect(table::inspect::InspectArgs),
}

/// Runs a parsed command; `matches` are the parsed arguments (column flags of `alter` go by their position).
fn run(cli: Cli, matches: &clap::ArgMatches) -> Result<(), Error> {
    let store_options = parse_options("--store-option", &cli.store_options)?;
    let takes_table = !matches!(
        cli.command,
        Command::Create(_)
            | Command::Demo(_)
            | Command::Sql(_)
            | Command::Bench(_)
            | Command::Replay(_)
            | Command::Soak(_)
    );
    if cli.branch.is_some() && !takes_table {
        return Err(Error::invalid(
            "--branch",
            "it applies to commands on a table directory (in strata sql, name the branch db.\"t$branch_NAME\")",
        ));
    }
    let ctx = Context::new(store_options, cli.branch)?;
    match cli.command {
        Command::Create(args) => table::create::run(&ctx, args),
        Command::Demo(args) => tools::demo::run(&ctx, args),
        Command::Bench(args) => tools::bench::main(&ctx, args),
        Command::Expire(args) => maintenance::expire(&ctx, args),
        Command::Clean(args) => maintenance::clean(&ctx, args),
        Command::Replay(args) => tools::sim::replay_file(args),
        Command::Soak(args) => tools::sim::soak(&ctx, args),
        Command::Get(args) => rows::get::run(&ctx, args),
        Command::Alter(args) => table::alter::run(&ctx, args, matches.subcommand_matches("alter")),
        Command::Write(args) => rows::ingest::run(&ctx, args),
        Command::Repair(args) => maintenance::repair::run(&ctx, args),
        Command::Sql(args) => rows::sql::run(&ctx, args),
        Command::Compact(args) => maintenance::compact::run(&ctx, args),
        Command::Scan(args) => rows::scan::run(&ctx, args),
        Command::Tag { command } => table::tags::run_tag(&ctx, command),
        Command::Branch { command } => table::branches::run_branch(&ctx, command),
        Command::Rollback(args) => table::tags::run_rollback(&ctx, args),
        Command::Inspect(args) => table::inspect::run(&ctx, args),
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
    match run(cli, &matches) {
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
