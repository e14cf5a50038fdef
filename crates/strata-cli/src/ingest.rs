//! `strata write`: input files (read by [`crate::input`]) into one commit, written again on the latest
//! snapshot when a concurrent commit got there first; and the one-off batch commit that `write` and
//! `compact` share.

use strata_spec::{Error, ErrorKind};
use strata_table::Table;

use crate::input::{self, InputOptions};
use crate::progress::Progress;
use crate::{io, location, report};

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
pub(crate) fn run(args: WriteArgs) -> Result<(), Error> {
    let inputs: Vec<String> = args.files.iter().chain(&args.inputs).cloned().collect();
    if inputs.is_empty() {
        return Err(Error::invalid("write", "no input files: strata write TABLE_DIR FILE... (or --input FILE)"));
    }
    let ext = args.table_dir.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
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
    let (rows, outcome) = write_inputs(&location(&args.table_dir)?, &inputs, &opts)?;
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
pub(crate) fn write_inputs(
    table_dir: &str,
    inputs: &[String],
    opts: &InputOptions,
) -> Result<(usize, Option<Snapshots>), Error> {
    let mut attempt = 0u32;
    loop {
        let table = Table::open(io(), table_dir)?;
        let max_retries = table.schema().core_options().commit_max_retries()?;
        let mut write = strata_table::TableWrite::new(&table)?;
        // A refused value ends the write here: dropping `write` removes the files its buckets already
        // flushed (no snapshot references them), so the table is left as it was.
        let rows = write_rows(&table, &mut write, inputs, opts)?;
        let progress = Progress::start("flushing, compacting and committing");
        // One commit per call, like a Paimon batch write: compaction finishes inside it.
        let messages = write.prepare_commit_waiting()?;
        let result = commit(&table, &mut write, messages, None);
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

/// Commits `messages` as a one-off batch job (a fresh commit user; Paimon's batch identifier). When the commit fails and did not land, the files the
/// messages added are removed (best effort), so a failed write or compaction (a conflict, a full disk)
/// leaves no orphans behind.
/// The snapshots a one-off commit made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Snapshots {
    /// The APPEND snapshot with the written rows (`None`: the commit wrote no rows, only compacted).
    pub(crate) append: Option<i64>,
    /// The last snapshot the commit made.
    pub(crate) last: i64,
}

pub(crate) fn commit(
    table: &Table,
    write: &mut strata_table::TableWrite,
    messages: Vec<strata_table::CommitMessage>,
    kind: Option<strata_spec::CommitKind>,
) -> Result<Option<Snapshots>, Error> {
    let user = format!("strata-cli-{}", uuid::Uuid::new_v4());
    let c = strata_table::Committable { identifier: i64::MAX, messages, kind, properties: None };
    let committer = table.new_commit(&user)?;
    match committer.commit(&c) {
        Ok(strata_table::CommitOutcome::CompactionDropped(id)) => {
            // The write landed; its compaction conflicted and is garbage. Compact its buckets again from the
            // latest snapshot, so deletion-vector readers (which skip level 0) see the rows now; best effort,
            // since the rows are committed either way and the next compaction takes them up.
            write.discard(&strata_table::compaction_increments(&c));
            let buckets: Vec<_> = c.messages.iter().map(|m| (m.partition.clone(), m.bucket)).collect();
            // A compaction-only commit: it has no APPEND half, so it cannot end here again.
            let again = write.open_buckets(&buckets).and_then(|()| write.prepare_commit_waiting());
            let again = again.and_then(|messages| commit(table, write, messages, None));
            let last = match again {
                Ok(compacted) => compacted.map_or(id, |s| s.last),
                Err(e) => {
                    tracing::warn!(error = %e, "compacting again after a dropped compaction failed; the next compaction takes the rows up");
                    id
                }
            };
            Ok(Some(Snapshots { append: Some(id), last }))
        }
        Ok(outcome) => {
            let Some(last) = outcome.snapshot_id() else { return Ok(None) };
            // Which of the two snapshots holds the rows, by this one-off user's identifier.
            let append = committer.landed(c.identifier)?.append;
            Ok(Some(Snapshots { append, last }))
        }
        Err(e) => {
            // Remove what no snapshot holds: both halves after a conflict (a conflict never lands), else
            // what the snapshots show did not land. When that cannot be told, nothing (orphans at worst).
            let left = if e.kind() == ErrorKind::Conflict {
                Some(c.messages.clone())
            } else {
                committer.landed(c.identifier).ok().map(|l| strata_table::uncommitted_messages(&c, l))
            };
            if let Some(left) = left {
                write.discard(&left);
            }
            Err(e)
        }
    }
}
