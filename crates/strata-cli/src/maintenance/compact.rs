//! `strata compact`: a table's buckets compacted and committed as one COMPACT snapshot.

use strata_spec::Error;

use crate::context::Context;
use crate::output::report;
use crate::progress::Progress;

/// `strata compact`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct CompactArgs {
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
}

/// Runs `strata compact`.
pub(crate) fn run(ctx: &Context, args: CompactArgs) -> Result<(), Error> {
    let CompactArgs { table_dir, full, delete_ratio_threshold, ignore_foreign_compactions, json } = args;
    let mut table = ctx.open_table(&table_dir)?;
    if ignore_foreign_compactions {
        table.set_foreign_compaction_window(std::time::Duration::ZERO);
    }
    if let Some(t) = delete_ratio_threshold {
        if !(0.0..=1.0).contains(&t) {
            return Err(Error::invalid("--delete-ratio-threshold", format!("{t} is outside 0..=1")));
        }
    }
    let progress = Progress::start("compacting");
    let done = strata_table::compact_table(crate::rows::ingest::CLI_JOB, &table, full, delete_ratio_threshold, || {
        progress.finish()
    })?;
    let (files_before, files_after) = (done.files_removed, done.files_added);
    let outcome = done.snapshots.map(|s| s.last);
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
