//! Keeping a table in shape: `strata compact`, `expire`, `clean` and `repair`.

pub(crate) mod compact;
pub(crate) mod repair;

use strata_spec::Error;

use crate::context::Context;
use crate::output::maintenance_report;

/// `strata expire`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ExpireArgs {
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
}

/// Runs `strata expire`.
pub(crate) fn expire(ctx: &Context, args: ExpireArgs) -> Result<(), Error> {
    let ExpireArgs { table_dir, retain_max, retain_min, older_than, dry_run, json } = args;
    let table = ctx.open_table(&table_dir)?;
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

/// `strata clean`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct CleanArgs {
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
}

/// Runs `strata clean`.
pub(crate) fn clean(ctx: &Context, args: CleanArgs) -> Result<(), Error> {
    let table = ctx.open_table(&args.table_dir)?;
    let age = strata_table::parse_older_than(&args.older_than)?;
    let r = strata_table::remove_orphan_files(&table, age, args.dry_run)?;
    maintenance_report(args.json, &r, "removed orphans")
}
