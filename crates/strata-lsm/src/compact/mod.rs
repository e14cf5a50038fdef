//! Compaction: picking a unit as a pure function over the level state ([`pick`]), executing it
//! ([`job`]), and the threads merge-on-read writers compact on in the background ([`pool`]).

pub(crate) mod job;
pub mod pick;
pub(crate) mod pool;

pub use pick::{
    pick_force_up_level0, pick_full, plan_task, CompactUnit, ForceUpMode, TaskFile, TaskStep, UniversalCompaction,
};
