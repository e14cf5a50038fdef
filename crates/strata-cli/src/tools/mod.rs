//! `strata demo`, `bench`, `replay` and `soak`: the README's main job, the benchmark and the model checks.

pub(crate) mod bench;
pub(crate) mod demo;
pub(crate) mod sim;
