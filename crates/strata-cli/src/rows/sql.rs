//! `strata sql`: SQL over a warehouse through DataFusion (`strata-datafusion`): the statements given, or a
//! prompt reading statements (ending in `;`) from standard input.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Instant;

use strata_datafusion::StrataSession;
use strata_spec::Error;

use crate::context::{location, Context};
use crate::output::{write_batches, OutputFormat};

/// `strata sql`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct SqlArgs {
    /// The warehouse: a directory or a store URI (s3://bucket/warehouse). Tables are `db.t`; unqualified names
    /// are looked up in database `default`.
    #[arg(long)]
    warehouse: String,
    /// Statements to run, separated by `;`. Without them, statements are read from standard input (a prompt on
    /// a terminal).
    query: Option<String>,
    /// Output format of the rows.
    #[arg(long, value_enum, default_value = "table")]
    format: OutputFormat,
    /// Print rows as JSON lines (`--format jsonl`), for scripts.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Print, for each statement, its rows, the data files its Strata scans read and its time on standard
    /// error.
    #[arg(long, short)]
    verbose: bool,
    /// Run the statements and collect their rows without printing them (with --verbose, to time them).
    #[arg(long)]
    discard: bool,
}

/// Runs `strata sql`.
pub(crate) fn run(ctx: &Context, mut args: SqlArgs) -> Result<(), Error> {
    if args.json {
        args.format = OutputFormat::Jsonl;
    }
    let session = StrataSession::new(ctx.io(), &location(&args.warehouse)?);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| Error::io("tokio runtime", e))?;
    match &args.query {
        Some(sql) => runtime.block_on(run_statements(&session, sql, &args)),
        None => prompt(&runtime, &session, &args),
    }
}

/// Runs every statement of `sql` in order, printing the rows of each that returns any.
async fn run_statements(session: &StrataSession, sql: &str, args: &SqlArgs) -> Result<(), Error> {
    for statement in session.parse(sql)? {
        let started = Instant::now();
        let out = session.run(statement).await?;
        let rows: usize = out.batches.iter().map(|b| b.num_rows()).sum();
        // DDL returns nothing to print.
        if !out.batches.is_empty() && !args.discard {
            write_batches(&out.batches, args.format, true)?;
        }
        if args.verbose {
            eprintln!(
                "{rows} rows, {} data files read by {} Strata scans, in {:.3} s",
                out.files_read,
                out.scans,
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// Reads statements from standard input, each run when a line ends with `;`. On a terminal an error is
/// printed and the prompt goes on; from a pipe or a file the first error ends the run (and sets the exit
/// code). `\q`, `quit` or `exit` (or the end of input) ends it.
fn prompt(runtime: &tokio::runtime::Runtime, session: &StrataSession, args: &SqlArgs) -> Result<(), Error> {
    let interactive = std::io::stdin().is_terminal();
    let mut buffer = String::new();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            eprint!("{}", if buffer.is_empty() { "strata> " } else { "     -> " });
            let _ = std::io::stderr().flush();
        }
        let Some(line) = lines.next() else { break };
        let line = line.map_err(|e| Error::io("stdin", e))?;
        let trimmed = line.trim();
        if buffer.is_empty() && matches!(trimmed, "\\q" | "quit" | "exit" | "quit;" | "exit;") {
            break;
        }
        if trimmed.is_empty() && buffer.is_empty() {
            continue;
        }
        buffer.push_str(&line);
        buffer.push('\n');
        if !trimmed.ends_with(';') {
            continue;
        }
        let sql = std::mem::take(&mut buffer);
        match runtime.block_on(run_statements(session, &sql, args)) {
            Ok(()) => {}
            Err(e) if interactive => eprintln!("strata: error: {e}"),
            Err(e) => return Err(e),
        }
    }
    // A last statement without its `;`.
    if !buffer.trim().is_empty() {
        runtime.block_on(run_statements(session, &buffer, args))?;
    }
    Ok(())
}
