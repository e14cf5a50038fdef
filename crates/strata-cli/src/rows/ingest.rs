//! `strata write`: input files (read by [`crate::input`]) into one commit, written again on the latest
//! snapshot when a concurrent commit got there first.

use strata_spec::{Error, ErrorKind};
use strata_table::{commit_batch, BatchSnapshots as Snapshots, Table};

use crate::context::{location, Context};
use crate::input::{self, InputOptions};
use crate::output::report;
use crate::progress::Progress;

/// The commit-user prefix of the CLI's one-off commits.
pub(crate) const CLI_JOB: &str = "strata-cli";

/// `strata write`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct WriteArgs {
    /// The table directory.
    table_dir: String,
    /// Input files: jsonl (also .json, .ndjson), csv or parquet, by extension.
    #[arg(value_name = "FILE")]
    files: Vec<String>,
    /// An input file (repeatable; the same as naming it after TABLE_DIR).
    #[arg(long = "input", value_name = "FILE")]
    inputs: Vec<String>,
    /// The columns of header-less csv files, in file order, comma-separated (csv files otherwise start with
    /// a header line naming their columns).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    columns: Option<Vec<String>>,
    /// Drop input fields the table does not have (they are refused otherwise).
    #[arg(long = "ignore-unknown-fields")]
    ignore_unknown_fields: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `strata write`.
pub(crate) fn run(ctx: &Context, args: WriteArgs) -> Result<(), Error> {
    let inputs: Vec<String> = args.files.iter().chain(&args.inputs).cloned().collect();
    if inputs.is_empty() {
        return Err(Error::invalid("write", "no input files: strata write TABLE_DIR FILE... (or --input FILE)"));
    }
    let ext = crate::input::extension(&args.table_dir);
    if matches!(ext.as_str(), "jsonl" | "json" | "ndjson" | "csv" | "parquet")
        && std::path::Path::new(&args.table_dir).is_file()
    {
        return Err(Error::invalid(
            "write",
            format!(
                "'{}' is an input file, not a table directory: the table comes first (strata write TABLE_DIR FILE..., or --input FILE once per file)",
                args.table_dir
            ),
        ));
    }
    let columns = args.columns.map(|c| c.into_iter().map(|n| n.trim().to_string()).collect());
    let opts = InputOptions { columns, ignore_unknown_fields: args.ignore_unknown_fields, ..Default::default() };
    let (rows, outcome) = write_inputs(ctx, &location(&args.table_dir)?, &inputs, &opts)?;
    // The rows' snapshot is the APPEND one: commit order (which write's row wins) is the order of those.
    let rows_snapshot = outcome.map(|s| s.append.unwrap_or(s.last));
    let text = match outcome {
        Some(Snapshots { append: Some(a), last }) if a != last => {
            format!("wrote {rows} rows; committed snapshot {a} (rows) and {last} (their compaction)")
        }
        Some(s) => format!("wrote {rows} rows; committed snapshot {}", s.last),
        None => format!("wrote {rows} rows; nothing to commit"),
    };
    let json = serde_json::json!({"rows": rows, "snapshot": rows_snapshot, "lastSnapshot": outcome.map(|s| s.last)});
    report(args.json, &json, &text);
    Ok(())
}

/// Writes the inputs in one commit, reading them a batch at a time (the writer spills or flushes by
/// `write-buffer-size`, so memory does not grow with the input). A commit refused as a conflict (another
/// writer changed a bucket this write touches since it began) committed nothing and removed its files;
/// the whole write is then done again on the latest snapshot, reading the inputs again from the start, up
/// to `commit.max-retries` times, so concurrent writers land in commit order instead of failing. A refused
/// input value ends the write before anything is committed.
fn write_inputs(
    ctx: &Context,
    table_dir: &str,
    inputs: &[String],
    opts: &InputOptions,
) -> Result<(usize, Option<Snapshots>), Error> {
    let mut attempt = 0u32;
    loop {
        let table = ctx.open_located(table_dir)?;
        let max_retries = table.schema().core_options().commit_max_retries()?;
        let mut write = strata_table::TableWrite::new(&table)?;
        // A refused value ends the write here: dropping `write` removes the files its buckets already
        // flushed (no snapshot references them), so the table is left as it was.
        let rows = write_rows(&table, &mut write, inputs, opts)?;
        let progress = Progress::start("flushing, compacting and committing");
        // One commit per call, like a Paimon batch write: compaction finishes inside it.
        let messages = write.prepare_commit_waiting()?;
        let result = commit_batch(CLI_JOB, &table, &mut write, messages, None);
        progress.finish();
        match result {
            Err(e) if e.kind() == ErrorKind::Conflict && attempt < max_retries => {
                attempt += 1;
                tracing::info!(attempt, error = %e, "write conflicted with a concurrent commit; writing again");
                let wait = 10u64 << attempt.min(10);
                std::thread::sleep(std::time::Duration::from_millis(rand::random_range(wait / 2..=wait)));
            }
            Err(e) => return Err(e),
            Ok(outcome) => return Ok((rows, outcome)),
        }
    }
}

/// Streams every input into `write`; the rows written.
fn write_rows(
    table: &Table,
    write: &mut strata_table::TableWrite,
    inputs: &[String],
    opts: &InputOptions,
) -> Result<usize, Error> {
    let progress = Progress::counting("writing");
    let mut rows = 0usize;
    for path in inputs {
        let _span = tracing::info_span!("write_input", path).entered();
        let mut source = input::open(table.schema(), path, opts)?;
        let mut bytes = source.bytes_read();
        progress.add(0, bytes);
        while let Some(batch) = source.next_batch()? {
            rows += batch.num_rows();
            write.write_batch(&batch)?;
            let now = source.bytes_read();
            progress.add(batch.num_rows() as u64, now.saturating_sub(bytes));
            bytes = now;
        }
    }
    progress.finish();
    Ok(rows)
}
