//! `strata branch create|list|fast-forward|delete` (Paimon's branch procedures). A branch is read and written as
//! `db."t$branch_<name>"` in `strata sql`.

use clap::Subcommand;
use serde_json::json;
use strata_spec::Error;
use strata_table::{create_branch, delete_branch, fast_forward, list_branches};

use crate::context::Context;
use crate::output::report;

/// `strata branch ...`
#[derive(Subcommand, Debug)]
pub(crate) enum BranchCommand {
    /// Create a branch: from a tag (the tag, its snapshot and schemas), or else empty with the table's schema.
    Create {
        /// The table directory.
        table_dir: String,
        /// The branch's name.
        name: String,
        /// Start from this tag's snapshot.
        #[arg(long)]
        tag: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the branches.
    List {
        /// The table directory.
        table_dir: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make the table what the branch is: the table's snapshots, schemas and tags from the branch's start on are
    /// replaced by the branch's. Stop the table's writers first.
    FastForward {
        /// The table directory.
        table_dir: String,
        /// The branch's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a branch with its snapshots, schemas and tags (files only it referenced go at orphan cleanup).
    Delete {
        /// The table directory.
        table_dir: String,
        /// The branch's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `strata branch ...`.
pub(crate) fn run_branch(ctx: &Context, command: BranchCommand) -> Result<(), Error> {
    match command {
        BranchCommand::Create { table_dir, name, tag, json } => {
            let table = ctx.open_table(&table_dir)?;
            create_branch(&table, &name, tag.as_deref())?;
            let from = tag.as_ref().map(|t| format!(" from tag {t}")).unwrap_or_default();
            report(json, &json!({"branch": name, "tag": tag}), &format!("created branch {name}{from}"));
        }
        BranchCommand::List { table_dir, json } => {
            let table = ctx.open_table(&table_dir)?;
            let branches = list_branches(&table)?;
            let text = if branches.is_empty() { "no branches".to_string() } else { branches.join("\n") };
            report(json, &json!(branches), &text);
        }
        BranchCommand::FastForward { table_dir, name, json } => {
            let table = ctx.open_table(&table_dir)?;
            let f = fast_forward(&table, &name)?;
            let value = serde_json::to_value(&f).map_err(|e| Error::internal_from("report", e))?;
            let text = format!(
                "fast-forwarded to branch {name} from snapshot {}: replaced {} snapshots and {} tags",
                f.from_snapshot,
                f.removed_snapshots.len(),
                f.removed_tags.len()
            );
            report(json, &value, &text);
        }
        BranchCommand::Delete { table_dir, name, json } => {
            let table = ctx.open_table(&table_dir)?;
            delete_branch(&table, &name)?;
            report(json, &json!({"deleted": name}), &format!("deleted branch {name}"));
        }
    }
    Ok(())
}
