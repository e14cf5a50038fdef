//! Changes between snapshots: incremental reads, following a table as snapshots land, and the consumers
//! that record a reader's progress.

pub(crate) mod consumer;
pub(crate) mod follow;
pub(crate) mod incremental;
