//! `strata tag create|list|delete` and `strata rollback` (Paimon's tag procedures and `rollback_to`), and
//! the time-travel flags of `strata scan`.

use std::collections::BTreeMap;

use clap::{Args, Subcommand};
use serde_json::json;
use strata_spec::Error;
use strata_table::{
    create_tag, delete_tag, format_millis, parse_timestamp_millis, rollback, RollbackTarget, Tag, SCAN_TAG_NAME,
    SCAN_TIMESTAMP_MILLIS,
};

use crate::context::Context;
use crate::output::report;

/// `strata tag ...`
#[derive(Subcommand, Debug)]
pub(crate) enum TagCommand {
    /// Tag a snapshot (the latest by default). A tag keeps its snapshot readable after expiration.
    Create {
        /// The table directory.
        table_dir: String,
        /// The tag's name.
        name: String,
        /// Tag this snapshot instead of the latest.
        #[arg(long)]
        snapshot: Option<i64>,
        /// Record a retention ("7 d", "12 h"): Paimon engines delete the tag that long after creating it
        /// (Strata never deletes tags by itself).
        #[arg(long = "time-retained")]
        time_retained: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the tags: name, snapshot, commit time, creation time.
    List {
        /// The table directory.
        table_dir: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a tag; when its snapshot has expired, also the files only the tag still held.
    Delete {
        /// The table directory.
        table_dir: String,
        /// The tag's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `strata rollback ...`
#[derive(Args, Debug)]
pub(crate) struct RollbackArgs {
    /// The table directory.
    table_dir: String,
    /// Roll back to this snapshot (or, once it expired, to a tag holding it).
    #[arg(long = "to-snapshot", conflicts_with = "to_tag", required_unless_present = "to_tag")]
    to_snapshot: Option<i64>,
    /// Roll back to this tag's snapshot.
    #[arg(long = "to-tag")]
    to_tag: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

fn tag_json(t: &Tag) -> serde_json::Value {
    json!({
        "name": t.name,
        "snapshotId": t.snapshot.id,
        "schemaId": t.snapshot.schema_id,
        "commitTimeMillis": t.snapshot.time_millis,
        "commitTime": format_millis(t.snapshot.time_millis),
        "recordCount": t.snapshot.total_record_count,
        "createTime": t.create_time.map(|c| c.format("%Y-%m-%dT%H:%M:%S%.3f").to_string()),
        "timeRetainedSeconds": t.time_retained.map(|d| d.as_secs_f64()),
    })
}

/// Runs `strata tag ...`.
pub(crate) fn run_tag(ctx: &Context, command: TagCommand) -> Result<(), Error> {
    match command {
        TagCommand::Create { table_dir, name, snapshot, time_retained, json } => {
            let table = ctx.open_table(&table_dir)?;
            let retained = time_retained
                .map(|d| {
                    strata_spec::options::parse_duration(&d).map_err(|e| Error::invalid_from("--time-retained", e))
                })
                .transpose()?;
            let tag = create_tag(&table, &name, snapshot, retained)?;
            report(json, &tag_json(&tag), &format!("created tag {} on snapshot {}", tag.name, tag.snapshot.id));
        }
        TagCommand::List { table_dir, json } => {
            let table = ctx.open_table(&table_dir)?;
            let tags = table.tag_manager().list()?;
            if json {
                println!("{}", serde_json::Value::Array(tags.iter().map(tag_json).collect()));
            } else if tags.is_empty() {
                println!("no tags");
            } else {
                for t in &tags {
                    let created = t.create_time.map(|c| format!("  created {}", c.format("%Y-%m-%d %H:%M:%S")));
                    let retained = t.time_retained.map(|d| format!("  retained {} s", d.as_secs()));
                    println!(
                        "{}  snapshot {}  committed {}{}{}",
                        t.name,
                        t.snapshot.id,
                        format_millis(t.snapshot.time_millis),
                        created.unwrap_or_default(),
                        retained.unwrap_or_default()
                    );
                }
            }
        }
        TagCommand::Delete { table_dir, name, json } => {
            let table = ctx.open_table(&table_dir)?;
            let d = delete_tag(&table, &name)?;
            let value = serde_json::to_value(&d).map_err(|e| Error::internal_from("report", e))?;
            let files = d.data_files.len() + d.index_files.len() + d.manifests.len();
            let text = match (&d.skipped_reclaim, files) {
                (Some(why), _) => format!("deleted tag {name}; its files are left to orphan cleanup: {why}"),
                (None, 0) => format!("deleted tag {name}; no file was held by it alone"),
                (None, _) => format!(
                    "deleted tag {name} and the files only it held: {} data files, {} index files, {} manifests",
                    d.data_files.len(),
                    d.index_files.len(),
                    d.manifests.len()
                ),
            };
            report(json, &value, &text);
        }
    }
    Ok(())
}

/// Runs `strata rollback ...`.
pub(crate) fn run_rollback(ctx: &Context, args: RollbackArgs) -> Result<(), Error> {
    let table = ctx.open_table(&args.table_dir)?;
    let target = match (args.to_snapshot, args.to_tag) {
        (Some(id), _) => RollbackTarget::Snapshot(id),
        (None, Some(name)) => RollbackTarget::Tag(name),
        (None, None) => return Err(Error::invalid("rollback", "give --to-snapshot or --to-tag")),
    };
    let r = rollback(&table, &target)?;
    let value = serde_json::to_value(&r).map_err(|e| Error::internal_from("report", e))?;
    let removed: Vec<String> = r.snapshots.iter().map(i64::to_string).collect();
    let text = format!(
        "rolled back to snapshot {}{}: removed {} snapshots{}{}; deleted {} data files, {} index files, {} manifests",
        r.snapshot_id,
        r.restored_from_tag.as_ref().map(|t| format!(" (written back from tag {t})")).unwrap_or_default(),
        removed.len(),
        if removed.is_empty() { String::new() } else { format!(" ({})", removed.join(", ")) },
        if r.tags.is_empty() { String::new() } else { format!(" and tags {}", r.tags.join(", ")) },
        r.data_files.len(),
        r.index_files.len(),
        r.manifests.len()
    );
    report(args.json, &value, &text);
    Ok(())
}

/// The dynamic options of `strata scan --tag` and `--timestamp`.
pub(crate) fn scan_options(tag: Option<String>, timestamp: Option<String>) -> Result<BTreeMap<String, String>, Error> {
    let mut options = BTreeMap::new();
    if let Some(name) = tag {
        options.insert(SCAN_TAG_NAME.to_string(), name);
    }
    if let Some(t) = timestamp {
        options.insert(SCAN_TIMESTAMP_MILLIS.to_string(), parse_timestamp_millis(&t)?.to_string());
    }
    Ok(options)
}
