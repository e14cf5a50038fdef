//! Buckets: how a table places keys in buckets (fixed, dynamic, postponed, unaware), which of those Strata
//! writes, the dynamic-bucket hash index, and the postpone bucket's replay.

pub(crate) mod dynamic;
pub(crate) mod mode;
pub(crate) mod postpone;
