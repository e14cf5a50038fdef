//! `strata scan`: a table's rows, or what changed between snapshots, or new snapshots as they land.

use strata_spec::Error;

use crate::context::Context;
use crate::output::{print_batches, OutputFormat};
use crate::progress::Progress;
use crate::rows::changes;

/// `strata scan`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ScanArgs {
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
}

/// Runs `strata scan`.
pub(crate) fn run(ctx: &Context, args: ScanArgs) -> Result<(), Error> {
    let ScanArgs { table_dir, snapshot, tag, timestamp, columns, format, merge, changes } = args;
    let table = ctx.open_table(&table_dir)?;
    if changes.wanted() {
        if tag.is_some() || timestamp.is_some() {
            return Err(Error::invalid(
                "scan",
                "--tag and --timestamp choose one snapshot to read; incremental reads take --from/--to",
            ));
        }
        return changes::run(&table, &changes, columns, format, snapshot, merge);
    }
    let format = if changes.json { OutputFormat::Jsonl } else { format };
    let options = crate::table::tags::scan_options(tag, timestamp)?;
    let opts = strata_table::ScanOptions { snapshot, columns, force_merge: merge, batch_size: None, options };
    let progress = Progress::start("scanning");
    let result = strata_table::scan(&table, &opts)?;
    progress.finish();
    print_batches(&result.batches, format)
}
