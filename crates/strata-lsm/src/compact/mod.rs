//! Compaction: picking a unit as a pure function over the level state ([`pick`]), executing it
//! ([`job`]), and the threads merge-on-read writers compact on in the background ([`pool`]).

pub(crate) mod job;
pub(crate) mod pick;
pub(crate) mod pool;

pub(crate) use pick::{
    pick_force_up_level0, pick_full, pick_level0_alone_up, CompactUnit, ForceUpMode, UniversalCompaction,
};
