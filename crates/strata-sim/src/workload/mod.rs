//! Workloads: a JSON-lines script of table operations (documented in docs/WORKLOADS.md), a seeded generator,
//! and a replayer that checks the table against a `BTreeMap` model and the LSM invariants after every
//! commit, optionally failing storage operations on the way.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use strata_spec::{Error, Result};

mod generate;
mod replay;
mod runner;

pub use replay::{replay, replay_on, shrink};

/// The table a workload runs on: `id BIGINT` key (plus `p STRING` when partitioned), `v BIGINT`, `s STRING`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Buckets.
    pub buckets: i32,
    /// Partitioned by `p`.
    #[serde(default)]
    pub partitioned: bool,
    /// `deletion-vectors.enabled` at creation.
    #[serde(default)]
    pub deletion_vectors: bool,
    /// `merge-engine`: deduplicate (default), partial-update, aggregation (`v` summed, `s` last non-null) or
    /// first-row.
    #[serde(default = "default_engine")]
    pub merge_engine: String,
    /// More table options.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

fn default_engine() -> String {
    "deduplicate".to_string()
}

/// One row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Key.
    pub id: i64,
    /// Partition (partitioned tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// Value.
    #[serde(default)]
    pub v: Option<i64>,
    /// Value.
    #[serde(default)]
    pub s: Option<String>,
}

/// One key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    /// Key.
    pub id: i64,
    /// Partition (partitioned tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Upsert rows (buffered until `commit`).
    Put {
        /// Rows.
        rows: Vec<Row>,
    },
    /// Delete keys (buffered until `commit`).
    Delete {
        /// Keys.
        keys: Vec<Key>,
    },
    /// Commit what is buffered.
    Commit,
    /// Compact every bucket (universal picks).
    Compact,
    /// Fully compact every bucket.
    FullCompact,
    /// Scan and compare with the model.
    Scan,
    /// Look a key up and compare with the model.
    Get {
        /// The key.
        key: Key,
    },
    /// Expire down to `retain` snapshots.
    Expire {
        /// Snapshots kept.
        retain: u32,
    },
    /// Switch deletion vectors on or off (with the full compaction it needs).
    SwitchMode {
        /// The new setting.
        dv: bool,
    },
    /// Change the table's schema or file layout (what the writer buffered is lost with it, as in a mode
    /// switch). Later rows are written and read under the new schema; older files read through the mapping.
    Evolve {
        /// The change.
        change: Evolution,
    },
    /// The writer dies: what it buffered is lost.
    Crash,
    /// A new writer on the latest snapshot.
    Reopen,
}

/// A schema or layout change of a workload's table. Columns added here are never written: they must read
/// null. The value column `s` may be renamed; the model follows it by field, not by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evolution {
    /// Add a nullable INT column `name` (after `v` when `after_v`, else last).
    AddColumn {
        /// Its name (never one of the workload's columns).
        name: String,
        /// Placed right after `v`.
        #[serde(default)]
        after_v: bool,
    },
    /// Drop a column an `add_column` added.
    DropColumn {
        /// Its name.
        name: String,
    },
    /// Widen an added column from INT to BIGINT.
    WidenColumn {
        /// Its name.
        name: String,
    },
    /// Rename the value column `s` (under whatever name it has now) to `to`.
    RenameS {
        /// The new name.
        to: String,
    },
    /// Set `data-file.thin-mode`: files written from now on have no `_KEY_` columns (or have them again).
    ThinMode {
        /// The new setting.
        on: bool,
    },
}

/// A header and its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The table.
    pub header: Header,
    /// The steps.
    pub ops: Vec<Op>,
}

/// One line of a workload file.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Header { header: Header },
    Op(Op),
}

impl Workload {
    /// Parses JSON lines: a `{"header": …}` line, then one step per line. Empty lines and `#` comments are
    /// skipped.
    pub fn parse(text: &str) -> Result<Self> {
        let mut header = None;
        let mut ops = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parsed: Line =
                serde_json::from_str(line).map_err(|e| Error::invalid_from(format!("workload line {}", n + 1), e))?;
            match parsed {
                Line::Header { header: h } => {
                    if header.replace(h).is_some() {
                        return Err(Error::invalid(format!("workload line {}", n + 1), "a second header"));
                    }
                }
                Line::Op(op) => ops.push(op),
            }
        }
        let header = header.ok_or_else(|| Error::invalid("workload", "no header line"))?;
        Ok(Workload { header, ops })
    }

    /// The JSON-lines form.
    pub fn to_text(&self) -> String {
        let mut out = serde_json::to_string(&Line::Header { header: self.header.clone() }).unwrap_or_default();
        out.push('\n');
        for op in &self.ops {
            out.push_str(&serde_json::to_string(op).unwrap_or_default());
            out.push('\n');
        }
        out
    }
}

/// Where a replay diverged.
#[derive(Debug, Clone)]
pub struct Divergence {
    /// Index of the step (0-based) after which the check failed.
    pub step: usize,
    /// What differed.
    pub message: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "divergence at step {}: {}", self.step, self.message)
    }
}

/// Counts of a replay.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayStats {
    /// Steps run.
    pub steps: usize,
    /// Commits acknowledged.
    pub commits: usize,
    /// Faults injected.
    pub faults: usize,
    /// Commits that failed under a fault (and were found landed or not).
    pub failed_commits: usize,
    /// Failed commits found with their APPEND snapshot but no COMPACT one (half landed, or a write that
    /// compacted nothing); the replayer compacts after each.
    pub half_landed_commits: usize,
}

/// Failing storage operations during commits: with probability `rate`, a commit gets one fault at a
/// random mutating operation.
#[derive(Debug, Clone, Copy)]
pub struct FaultPlan {
    /// Chance that a commit is faulted.
    pub rate: f64,
    /// Seed of the choices.
    pub seed: u64,
}
