//! Simulation and fault tooling, kept apart from the library crates (as slatedb keeps its deterministic
//! simulation in `slatedb-dst`): workload scripts with a seeded generator, a replayer that checks a table
//! against a `BTreeMap` model and the LSM invariants after every commit, shrinking of failing workloads, and
//! [`FaultyFileIO`], a `FileIO` that fails chosen operations. Tests and the CLI's `replay` and `soak` use it.

mod append_workload;
mod faulty;
mod workload;

// A `FileIO` that fails chosen operations.
pub use faulty::{Fault, FaultyFileIO, OpKind};

// Workloads (docs/WORKLOADS.md): the script and its parts, replay against the model, shrinking.
pub use workload::{
    replay, replay_on, shrink, Divergence, Evolution, FaultPlan, Header, Key, Op, ReplayStats, Row, Workload,
};

// Append-table workloads: appends, deletes, compactions and crashes against a model of the rows, under faults.
pub use append_workload::{replay_append, AppendHeader, AppendOp, AppendRow, AppendWorkload};
