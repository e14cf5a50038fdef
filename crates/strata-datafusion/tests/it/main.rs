//! strata-datafusion's integration tests: SQL reads and writes against a `BTreeMap` model.
//!
//! One test binary for the package (each module was its own binary): one link after a change instead of one
//! per file. Run one group with `cargo it <module>` (`.cargo/config.toml`), e.g. `cargo it sql_model`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod sql_model;
mod sql_write;
