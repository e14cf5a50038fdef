//! Merging a bucket's sorted runs: the loser-tree iterator, the merge engines (Paimon's `MergeFunction`s),
//! sequence groups of partial-update tables, and merge-on-read by keys first.

pub(crate) mod function;
pub(crate) mod iterator;
pub(crate) mod late;
pub(crate) mod sequence_group;
