//! `strata scan --from N [--to M]` (an incremental read) and `strata scan --follow` (a streaming read):
//! rows with their row kind, snapshot by snapshot.

use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use strata_spec::Error;
use strata_table::{FollowOptions, IncrementalMode, ReadBuilder, StartFrom, StreamScan, Table};

use crate::output::{write_batches, OutputFormat};

/// The flags of `strata scan` for incremental and streaming reads.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct ChangeArgs {
    /// Print what changed after snapshot N (exclusive; 0 = from the first snapshot), with a leading `rowkind`
    /// column (+I, -U, +U, -D). With --follow: start after N instead of with a full read of the latest
    /// snapshot.
    #[arg(long, value_name = "N")]
    pub from: Option<i64>,
    /// Last snapshot of an incremental read (inclusive; default the latest).
    #[arg(long, value_name = "M", requires = "from")]
    pub to: Option<i64>,
    /// Read changelog files (tables with a changelog-producer); default: the table's
    /// incremental-between-scan-mode, else changelog if the table produces one, else deltas.
    #[arg(long, conflicts_with = "delta")]
    pub changelog: bool,
    /// Read the new files of APPEND snapshots (what writers wrote, row kinds as written).
    #[arg(long)]
    pub delta: bool,
    /// Keep reading new snapshots as they land: a full read of the latest snapshot (all +I) unless --from,
    /// then each later snapshot's changes.
    #[arg(long)]
    pub follow: bool,
    /// Record progress under this consumer id (consumer/consumer-ID) and resume from it on restart (recorded
    /// progress wins over --from, unless the table sets consumer.ignore-progress); snapshot expiration keeps
    /// what it has not read.
    #[arg(long = "consumer-id", value_name = "ID", requires = "follow")]
    pub consumer_id: Option<String>,
    /// How often --follow looks for new snapshots.
    #[arg(long = "poll-interval", value_name = "DURATION", default_value = "1 s", requires = "follow")]
    pub poll_interval: String,
    /// Stop --follow after this many snapshots with changes (the starting full read counts as one).
    #[arg(long = "max-snapshots", value_name = "N", requires = "follow")]
    pub max_snapshots: Option<u64>,
    /// Stop --follow once no snapshot has landed for this long (e.g. "30 s"); default: never.
    #[arg(long = "idle-timeout", value_name = "DURATION", requires = "follow")]
    pub idle_timeout: Option<String>,
    /// Print rows as JSON lines (as --format jsonl); with --follow, no progress lines on stderr.
    #[arg(long)]
    pub json: bool,
}

impl ChangeArgs {
    /// Whether these flags ask for an incremental or streaming read.
    pub(crate) fn wanted(&self) -> bool {
        self.from.is_some() || self.follow || self.changelog || self.delta
    }

    fn mode(&self) -> IncrementalMode {
        match (self.changelog, self.delta) {
            (true, _) => IncrementalMode::Changelog,
            (_, true) => IncrementalMode::Delta,
            _ => IncrementalMode::Auto,
        }
    }
}

fn duration(flag: &str, text: &str) -> Result<Duration, Error> {
    strata_spec::options::parse_duration(text).map_err(|e| Error::invalid_from(flag, e))
}

/// Runs an incremental read (`--from`) or a follow (`--follow`) of `table`.
pub(crate) fn run(
    table: &Table,
    args: &ChangeArgs,
    columns: Option<Vec<String>>,
    format: OutputFormat,
    snapshot: Option<i64>,
    merge: bool,
) -> Result<(), Error> {
    if snapshot.is_some() || merge {
        return Err(Error::invalid(
            "scan",
            "--snapshot and --merge read one snapshot; they do not go with --from, --follow, --changelog or --delta",
        ));
    }
    let mut rb = ReadBuilder::new(table);
    if let Some(cols) = &columns {
        rb = rb.with_projection(&cols.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let mut out = RowPrinter::new(if args.json { OutputFormat::Jsonl } else { format });
    if args.follow {
        return follow(&rb, args, &mut out);
    }
    let Some(from) = args.from else {
        return Err(Error::invalid("scan", "--changelog and --delta need --from N (or --follow)"));
    };
    let to = match args.to {
        Some(to) => to,
        None => table.snapshot_manager().latest_id()?.unwrap_or(0),
    };
    let read = rb.incremental_between(from, to).with_mode(args.mode());
    let plan = read.plan()?;
    let reader = read.change_reader()?;
    let mut all = Vec::new();
    for changes in &plan.snapshots {
        let batches = reader.read(changes)?;
        if format == OutputFormat::Table && !args.json {
            all.extend(batches);
        } else {
            out.print(&batches)?;
        }
    }
    if !all.is_empty() {
        out.print(&all)?;
    }
    Ok(())
}

/// The `--follow` loop: read, print, record progress; wait when caught up.
fn follow(rb: &ReadBuilder, args: &ChangeArgs, out: &mut RowPrinter) -> Result<(), Error> {
    let poll = duration("--poll-interval", &args.poll_interval)?;
    let idle = args.idle_timeout.as_deref().map(|t| duration("--idle-timeout", t)).transpose()?;
    let opts = FollowOptions {
        start: args.from.map_or(StartFrom::LatestFull, StartFrom::After),
        mode: args.mode(),
        consumer_id: args.consumer_id.clone(),
    };
    let mut scan = StreamScan::new(rb, &opts)?;
    let (mut emitted, mut last_change, mut position) = (0u64, Instant::now(), scan.next_snapshot());
    loop {
        let step = scan.read_next()?;
        if scan.next_snapshot() != position {
            position = scan.next_snapshot();
            last_change = Instant::now();
        }
        match step {
            Some(s) => {
                out.print(&s.batches)?;
                if !args.json {
                    let what = if s.full { "full read".to_string() } else { s.commit_kind.to_string() };
                    eprintln!("snapshot {} ({what}): {} rows", s.snapshot, s.num_rows());
                }
                // Recorded once the rows are out: a restart resumes after them.
                scan.record_progress()?;
                emitted += 1;
                if args.max_snapshots.is_some_and(|m| emitted >= m) {
                    return Ok(());
                }
            }
            None => {
                scan.record_progress()?;
                if idle.is_some_and(|d| last_change.elapsed() >= d) {
                    return Ok(());
                }
                std::thread::sleep(poll);
            }
        }
    }
}

/// Prints batches in one output format across many calls (a CSV header once, JSON lines as they come, a
/// text table per call), flushing after each call so that a follower's rows appear as they are read.
struct RowPrinter {
    format: OutputFormat,
    header_done: bool,
}

impl RowPrinter {
    fn new(format: OutputFormat) -> Self {
        RowPrinter { format, header_done: false }
    }

    fn print(&mut self, batches: &[RecordBatch]) -> Result<(), Error> {
        if batches.iter().all(|b| b.num_rows() == 0) {
            return Ok(());
        }
        write_batches(batches, self.format, !self.header_done)?;
        self.header_done = true;
        Ok(())
    }
}
