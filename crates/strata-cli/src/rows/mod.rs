//! Commands that move rows: `strata write`, `scan` (with incremental and streaming reads), `get` and `sql`.

pub(crate) mod changes;
pub(crate) mod get;
pub(crate) mod ingest;
pub(crate) mod scan;
pub(crate) mod sql;
