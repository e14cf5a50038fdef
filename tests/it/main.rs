//! Strata's integration tests: the embedded API, the `strata` binary, and cross-checks against pypaimon 2.1.0
//! and paimon-rust 0.4.0.
//!
//! One test binary for the package (each module was its own binary): one link after a change instead of one
//! per file. Run one group with `cargo it <module>` (`.cargo/config.toml`), e.g. `cargo it pypaimon`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod append_compaction;
mod append_deletes;
mod append_tables;
mod append_writes;
mod branches;
mod bucket_compat;
mod cli_input;
mod cli_input_roundtrip;
mod cli_usage;
mod commit;
mod common;
mod concurrent_writers;
mod corruption_sweep;
mod data_file_errors;
mod data_safety;
mod dv_compat;
mod dv_ownership;
mod dynamic_bucket;
mod errors;
mod float_filters;
mod follow;
mod incremental;
mod incremental_oracles;
mod ingest;
mod java_131;
mod java_changelog;
mod java_evolution;
mod java_expire;
mod java_merge_engines;
mod java_paimon;
mod java_partitions;
mod java_races;
mod java_tags;
mod lookup_wrapper;
mod lsm_model;
mod maintenance;
mod mode_switch;
mod multi_process;
mod option_safety;
mod orc_updates;
mod paimon_rust;
mod paimon_rust_sql;
mod pip16_walkthrough;
mod pypaimon_dv;
mod pypaimon_evolution;
mod pypaimon_read;
mod pypaimon_tables;
mod pypaimon_tags;
mod python_package;
mod query_types;
mod readme_examples;

mod rollback;
mod s3;
mod schema_alter;
mod schema_evolution;
mod spark_sql;
mod sql_updates;
mod strata_files_pypaimon;
mod table_api;
mod tags;
mod workloads;
