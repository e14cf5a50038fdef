//! `strata repair`: restores the deletes that deletion vectors recorded on files no longer live (a Paimon 1.4
//! writer's stale vectors after another engine compacted its bucket) and drops orphan vectors.

use crate::context::Context;
use strata_spec::Error;

/// `strata repair`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct RepairArgs {
    /// The table directory.
    table_dir: String,
    /// Report what would be restored; commit nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// Repair buckets another engine compacted within strata.foreign-compaction.window (default 1 hour): only
    /// once that engine's compacting writers have stopped, or they would commit their stale vectors again.
    #[arg(long = "ignore-foreign-compactions")]
    ignore_foreign_compactions: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(ctx: &Context, args: RepairArgs) -> Result<(), Error> {
    let mut table = ctx.open_table(&args.table_dir)?;
    if args.ignore_foreign_compactions {
        table.set_foreign_compaction_window(std::time::Duration::ZERO);
    }
    let user = format!("strata-repair-{}", uuid::Uuid::new_v4());
    let report = strata_table::repair_deletion_vectors(&table, &user, args.dry_run)?;
    if args.json {
        println!("{}", serde_json::to_string(&report).map_err(|e| Error::internal_from("report", e))?);
        return Ok(());
    }
    for l in &report.lost {
        let what = match &l.unreadable {
            Some(why) => format!("the removed file cannot be read ({why})"),
            None => format!("{} rows marked now", l.restored),
        };
        let file = if l.live { "live file" } else { "removed file" };
        println!("bucket {} {}: {file} {} lost {} marks; {what}", l.bucket, l.partition, l.data_file, l.lost);
    }
    let done = if args.dry_run { "would restore" } else { "restored" };
    match report.snapshot {
        Some(id) => println!("{done} {} deletes; committed snapshot {id}", report.restored),
        None => println!("{done} {} deletes; nothing committed", report.restored),
    }
    Ok(())
}
