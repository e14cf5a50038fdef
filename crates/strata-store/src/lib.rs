//! Storage backends behind Strata's [`FileIO`](strata_io::FileIO) seam: object stores through the
//! `object_store` crate (S3 and S3-compatible stores such as MinIO and OSS, Google Cloud Storage, Azure
//! Blob Storage and ADLS Gen2, read-only HTTP), and table locations by URI.
//!
//! ```no_run
//! # fn main() -> strata_spec::Result<()> {
//! let options = [("s3.endpoint", "http://127.0.0.1:9000"), ("s3.region", "us-east-1")]
//!     .into_iter()
//!     .map(|(k, v)| (k.to_string(), v.to_string()))
//!     .collect();
//! let location = strata_store::open_location("s3://bucket/warehouse/db.db/t", &options)?;
//! let snapshot_dir = location.io.list(&format!("{}/snapshot", location.path))?;
//! # Ok(()) }
//! ```
//!
//! Consistency the commit relies on (the [`FileIO`](strata_io::FileIO) contract): objects appear whole
//! (S3, GCS and Azure PUTs are atomic, multipart uploads appear at completion), reads after a write see
//! it (all three are strongly consistent today), and a conditional create has exactly one winner. A store
//! that cannot prove the last is refused for commits.

mod config;
mod location;
mod object;
mod runtime;

pub use location::{normalize_location, open_location, Location, StoreRouter, FILE_CACHE_SIZE};
pub use object::{ObjectStoreFileIO, MULTIPART_THRESHOLD};
