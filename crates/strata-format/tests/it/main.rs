//! strata-format's integration tests: data-file writers and readers, the merge against models, checksums.
//!
//! One test binary for the package (each module was its own binary): one link after a change instead of one
//! per file. Run one group with `cargo it <module>` (`.cargo/config.toml`), e.g. `cargo it merge_model`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_memory;
mod common;
mod late_merge_model;
mod merge_model;
mod orc_checksums;
mod row_filter;
mod run_parts;
