//! `strata`: create and inspect (later write, scan, compact) Paimon tables from the command line.
//!
//! The binary lives in the facade package (`src/bin/strata.rs`) and calls [`main`].

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

mod alter;
mod bench;
mod changes;
mod demo;
mod ingest;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use strata_io::{FileIO, LocalFileIO};
use strata_spec::schema::parse_columns;
use strata_spec::{Error, ErrorKind, TableSchema};
use strata_table::commit::now_millis;
use strata_table::inspect::inspect;
use strata_table::Table;

/// Whether `strata get` should answer `keys` lookups through a `TableQuery`. A one-off lookup reads about
/// one page (Paimon's default: 1 MiB) of every column of a candidate file; a query reads each file it
/// touches whole, once, then answers from local disk. The query pays off once the keys' one-off reads add
/// up to the whole table (counting one candidate file per key, which favours one-off lookups).
fn bulk_get_pays_off(table: &Table, snapshot: Option<i64>, keys: usize) -> strata_spec::Result<bool> {
    if keys < 2 {
        return Ok(false);
    }
    let Some(snap) = table.snapshot(snapshot)? else { return Ok(false) };
    let files = table.live_files_shared(&snap)?;
    let total: u64 = files.iter().map(|e| e.file.file_size.max(0) as u64).sum();
    let average = total / files.len().max(1) as u64;
    // Key, sequence and kind columns besides the values.
    let columns = table.schema().fields.len() as u64 + 3;
    let per_key = average.min(columns << 20);
    Ok((keys as u64).saturating_mul(per_key) >= total)
}

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
        /// Incremental and streaming reads (--from, --to, --follow, ...).
        #[command(flatten)]
        changes: changes::ChangeArgs,
    },
    /// Write rows from files (jsonl, csv or parquet, by extension) into a table: one commit for all of them.
    Write {
        /// The table directory.
        table_dir: String,
        /// Input files.
        #[arg(long = "input", required = true, num_args = 1..)]
        inputs: Vec<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
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
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Look rows up by primary key. Each KEY gives the primary-key columns in key order, comma-separated.
    Get {
        /// The table directory.
        table_dir: String,
        /// Keys to look up.
        #[arg(required = true, num_args = 1..)]
        keys: Vec<String>,
        /// Read this snapshot instead of the latest.
        #[arg(long)]
        snapshot: Option<i64>,
        /// Output format.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: OutputFormat,
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
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Expire old snapshots and delete what only they referenced.
    Expire {
        /// The table directory.
        table_dir: String,
        /// Keep at most this many snapshots (default: `snapshot.num-retained.max`).
        #[arg(long = "retain-max")]
        retain_max: Option<u32>,
        /// Keep at least this many (default: `snapshot.num-retained.min`, capped by --retain-max).
        #[arg(long = "retain-min")]
        retain_min: Option<u32>,
        /// Expire snapshots older than this beyond the minimum (default: `snapshot.time-retained`).
        #[arg(long = "older-than")]
        older_than: Option<String>,
        /// Report, delete nothing.
        #[arg(long = "dry-run")]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete files no snapshot references (only those older than --older-than, so in-flight commits are safe).
    Clean {
        /// The table directory.
        table_dir: String,
        /// Only files last modified longer ago than this.
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
        /// Print JSON.
        #[arg(long)]
        json: bool,
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

/// Runs a parsed command; `matches` are the parsed arguments (column flags of `alter` go by their position).
fn run(cli: Cli, matches: &clap::ArgMatches) -> Result<(), Error> {
    match cli.command {
        Command::Create { table_dir, schema, primary_key, partition_keys, options, allow_unknown_options, json } => {
            let columns = parse_columns(&schema)?;
            let mut options = parse_options(&options)?;
            options.entry("bucket".to_string()).or_insert_with(|| "1".to_string());
            let schema = TableSchema::new(columns, partition_keys, primary_key, options, now_millis())?;
            let dir = absolute(&table_dir);
            let policy = strata_table::OptionPolicy { allow_unknown_options };
            let table = Table::create_with_policy(io(), &dir, schema, policy)?;
            if json {
                println!("{}", serde_json::json!({"created": table.path(), "schemaId": table.schema().id}));
            } else {
                println!("created table {}", table.path());
            }
        }
        Command::Demo { warehouse, rounds, rows, json } => demo::demo(&absolute(&warehouse), rounds, rows, json)?,
        Command::Bench { rows, rounds, buckets, dir, json } => {
            if rows == 0 || buckets == 0 {
                return Err(Error::invalid("bench", "--rows and --buckets must be positive"));
            }
            let report = bench::run(&absolute(&dir), rows, rounds, buckets, json)?;
            if json {
                println!("{report}");
            }
        }
        Command::Expire { table_dir, retain_max, retain_min, older_than, dry_run, json } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            let mut opts = strata_table::maintenance::ExpireOptions::from_table(&table)?;
            if let Some(m) = retain_max {
                opts.retain_max = m.max(1);
                opts.retain_min = opts.retain_min.min(opts.retain_max);
            }
            if let Some(m) = retain_min {
                opts.retain_min = m.max(1);
            }
            if let Some(d) = older_than {
                opts.time_retained = strata_table::maintenance::parse_older_than(&d)?;
            }
            opts.dry_run = dry_run;
            let r = strata_table::maintenance::expire_snapshots(&table, &opts)?;
            maintenance_report(json, &r, "expired")?;
        }
        Command::Clean { table_dir, older_than, dry_run, json } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            let age = strata_table::maintenance::parse_older_than(&older_than)?;
            let r = strata_table::maintenance::remove_orphan_files(&table, age, dry_run)?;
            maintenance_report(json, &r, "removed orphans")?;
        }
        Command::Replay { file, faults, dir, shrink, json } => {
            use strata_table::workload::{replay, FaultPlan, Workload};
            if !(0.0..=1.0).contains(&faults) {
                return Err(Error::invalid("--faults", format!("{faults} is outside 0..=1")));
            }
            let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
            let w = Workload::parse(&text).map_err(|e| e.in_file(&file))?;
            let tmp = std::env::temp_dir().join(format!("strata-replay-{}", uuid::Uuid::new_v4()));
            let dir = dir.unwrap_or_else(|| tmp.to_string_lossy().into_owned());
            let plan = (faults > 0.0).then_some(FaultPlan { rate: faults, seed: 1 });
            let outcome = replay(&absolute(&dir), &w, plan)?;
            let _ = std::fs::remove_dir_all(&tmp);
            match outcome {
                Ok(stats) => report(json, &serde_json::json!({"ok": true, "stats": stats}), &format!("ok: {stats:?}")),
                Err(d) => {
                    if let Some(out) = shrink {
                        let small = strata_table::workload::shrink(&tmp.to_string_lossy(), &w, plan, 500);
                        std::fs::write(&out, small.to_text()).map_err(|e| Error::io(&out, e))?;
                        let _ = std::fs::remove_dir_all(&tmp);
                        eprintln!("shrunk to {} steps: {out}", small.ops.len());
                    }
                    return Err(Error::Corrupt { path: file, message: d.to_string() });
                }
            }
        }
        Command::Soak { seconds, commits, faults, seed, save, json } => {
            use strata_table::workload::{replay, shrink, FaultPlan, Workload};
            let started = std::time::Instant::now();
            let tmp = std::env::temp_dir().join(format!("strata-soak-{}", uuid::Uuid::new_v4()));
            let dir = tmp.to_string_lossy().into_owned();
            let (mut runs, mut injected, mut failed_commits, mut failures) = (0u64, 0usize, 0usize, Vec::new());
            let mut half_landed = 0usize;
            let mut s = seed;
            while started.elapsed().as_secs() < seconds {
                let w = Workload::generate(s, commits);
                let plan = (faults > 0.0).then_some(FaultPlan { rate: faults, seed: s });
                match replay(&dir, &w, plan)? {
                    Ok(stats) => {
                        injected += stats.faults;
                        failed_commits += stats.failed_commits;
                        half_landed += stats.half_landed_commits;
                    }
                    Err(d) => {
                        let small = shrink(&dir, &w, plan, 200);
                        std::fs::create_dir_all(&save).map_err(|e| Error::io(&save, e))?;
                        let path = format!("{save}/seed-{s}.jsonl");
                        std::fs::write(&path, small.to_text()).map_err(|e| Error::io(&path, e))?;
                        eprintln!("seed {s}: {d} (shrunk to {} steps: {path})", small.ops.len());
                        failures.push(s);
                    }
                }
                runs += 1;
                s += 1;
            }
            let _ = std::fs::remove_dir_all(&tmp);
            let secs = started.elapsed().as_secs_f64();
            report(
                json,
                &serde_json::json!({"workloads": runs, "seconds": secs, "workloadsPerSecond": runs as f64 / secs,
                    "faultsInjected": injected, "failedCommits": failed_commits, "halfLandedCommits": half_landed,
                    "failures": failures}),
                &format!(
                    "{runs} workloads in {secs:.0}s ({:.2}/s), {injected} faults injected ({failed_commits} commits failed and recovered, {half_landed} with only their APPEND snapshot), {} divergences{}",
                    runs as f64 / secs,
                    failures.len(),
                    if failures.is_empty() { String::new() } else { format!(": seeds {failures:?}") }
                ),
            );
            if !failures.is_empty() {
                return Err(Error::Corrupt { path: save, message: format!("{} workloads diverged", failures.len()) });
            }
        }
        Command::Get { table_dir, keys, snapshot, format } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            let keys = keys.iter().map(|k| parse_key(&table, k)).collect::<strata_spec::Result<Vec<_>>>()?;
            let query = if bulk_get_pays_off(&table, snapshot, keys.len())? {
                Some(match snapshot {
                    Some(id) => strata_table::query::TableQuery::at_snapshot(&table, id)?,
                    None => strata_table::query::TableQuery::new(&table)?,
                })
            } else {
                None
            };
            let mut rows = Vec::new();
            for key in &keys {
                let row = match &query {
                    Some(q) => q.get(key)?,
                    None => strata_table::read::get(&table, key, snapshot)?,
                };
                rows.extend(row);
            }
            print_batches(&rows, format)?;
        }
        Command::Alter { table_dir, set, unset, compact, allow_unknown_options, json, .. } => {
            let args = alter::AlterArgs { table_dir, set, unset, compact, allow_unknown_options, json };
            alter::run(args, matches.subcommand_matches("alter"))?;
        }
        Command::Write { table_dir, inputs, json } => {
            let (rows, outcome) = ingest::write_inputs(&absolute(&table_dir), &inputs)?;
            report(
                json,
                &serde_json::json!({"rows": rows, "snapshot": outcome}),
                &format!("wrote {rows} rows; snapshot {outcome:?}"),
            );
        }
        Command::Compact { table_dir, full, delete_ratio_threshold, json } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            if let Some(t) = delete_ratio_threshold {
                if !(0.0..=1.0).contains(&t) {
                    return Err(Error::invalid("--delete-ratio-threshold", format!("{t} is outside 0..=1")));
                }
            }
            let mut write = strata_table::write::TableWrite::for_compaction(&table)?;
            write.open_all_buckets()?;
            let progress = Progress::start("compacting");
            let messages = write.prepare_commit_with(full, delete_ratio_threshold)?;
            progress.finish();
            let files_before: usize = messages.iter().map(|m| m.compact_before.len()).sum();
            let files_after: usize = messages.iter().map(|m| m.compact_after.len()).sum();
            // A compaction alone is one COMPACT snapshot; rows it also writes (postponed rows moved into real
            // buckets) land first in an APPEND snapshot, as any write's do.
            let outcome = ingest::commit(&table, &mut write, messages, None)?;
            report(
                json,
                &serde_json::json!({"filesRemoved": files_before, "filesAdded": files_after, "snapshot": outcome}),
                &format!("compacted: {files_before} files replaced by {files_after}; snapshot {outcome:?}"),
            );
        }
        Command::Scan { table_dir, snapshot, columns, format, merge, changes } => {
            let table = Table::open(io(), &absolute(&table_dir))?;
            if changes.wanted() {
                return changes::run(&table, &changes, columns, format, snapshot, merge);
            }
            let format = if changes.json { OutputFormat::Jsonl } else { format };
            let opts = strata_table::scan::ScanOptions { snapshot, columns, force_merge: merge, batch_size: None };
            let progress = Progress::start("scanning");
            let result = strata_table::scan::scan(&table, &opts)?;
            progress.finish();
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

/// A spinner on stderr for operations that take longer than a second (nothing when stderr is not a terminal).
struct Progress {
    bar: indicatif::ProgressBar,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Progress {
    fn start(message: &'static str) -> Self {
        let bar = indicatif::ProgressBar::hidden();
        bar.set_message(message);
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (b, d) = (bar.clone(), done.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(1));
            if !d.load(std::sync::atomic::Ordering::SeqCst) {
                b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                b.enable_steady_tick(std::time::Duration::from_millis(120));
            }
        });
        Progress { bar, done }
    }

    fn finish(self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.bar.finish_and_clear();
    }
}

/// Parses `a,b` into the table's primary-key values (typed by the columns).
fn parse_key(table: &Table, text: &str) -> Result<Vec<Option<strata_spec::Datum>>, Error> {
    let schema = table.schema();
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != schema.primary_keys.len() {
        return Err(Error::invalid(
            format!("key '{text}'"),
            format!(
                "give {} comma-separated values for primary key {:?}",
                schema.primary_keys.len(),
                schema.primary_keys
            ),
        ));
    }
    schema
        .primary_keys
        .iter()
        .zip(parts)
        .map(|(k, v)| {
            let t = schema.field(k)?.data_type;
            let s: arrow_array::ArrayRef = std::sync::Arc::new(arrow_array::StringArray::from(vec![v.trim()]));
            let cast = arrow_cast::cast::cast_with_options(
                &s,
                &strata_format::arrow_types::to_arrow(&t),
                &arrow_cast::cast::CastOptions { safe: false, ..Default::default() },
            )
            .map_err(|e| Error::invalid(format!("key '{text}'"), format!("'{v}' is not a {t}: {e}")))?;
            strata_format::arrow_types::datum_at(cast.as_ref(), 0)
        })
        .collect()
}

fn maintenance_report(json: bool, r: &strata_table::maintenance::MaintenanceReport, what: &str) -> Result<(), Error> {
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
        if !strata_spec::error::panic_is_contained() {
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
