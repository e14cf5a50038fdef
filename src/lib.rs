//! # Strata
//!
//! An embeddable primary-key table store whose on-disk format is Apache Paimon's: a log-structured merge
//! tree per (partition, bucket) with deletion vectors, so that readers can skip merging.
//!
//! ```no_run
//! use std::sync::Arc;
//! use strata::spec::{DataType, Datum, TableSchema};
//! use strata::{Catalog, LocalFileIO, ReadBuilder, TableWriter};
//!
//! # fn main() -> strata::Result<()> {
//! let catalog = Catalog::new(Arc::new(LocalFileIO::new()), "/tmp/warehouse");
//! catalog.create_database("db", true)?;
//! let schema = TableSchema::new(
//!     vec![("id".into(), DataType::bigint()), ("name".into(), DataType::string())],
//!     vec![],
//!     vec!["id".into()],
//!     [("bucket".to_string(), "2".to_string()), ("deletion-vectors.enabled".to_string(), "true".to_string())].into(),
//!     0,
//! )?;
//! let table = catalog.create_table("db", "users", schema, true)?;
//! let mut writer = TableWriter::new(&table, "my-app")?;
//! writer.put(vec![Some(Datum::BigInt(1)), Some(Datum::String("ada".into()))])?;
//! writer.commit()?;
//! let row = strata::get(&table, &[Some(Datum::BigInt(1))], None)?;
//! // Many lookups: a long-lived query answers from local lookup files once warm.
//! let query = strata::TableQuery::new(&table)?;
//! let same = query.get(&[Some(Datum::BigInt(1))])?;
//! let all = ReadBuilder::new(&table).read()?;
//! # Ok(()) }
//! ```
//!
//! Tables on object stores are opened by URI: `strata::open_location("s3://bucket/wh/db.db/t", &options)`
//! gives the [`FileIO`] and path to open them with ([`store`]).
//!
//! The facade re-exports the crates: [`spec`] (Paimon's on-disk objects), [`io`] (the storage seam),
//! [`dv`] (deletion vectors), [`format`](mod@format) (data files, merge-on-read), [`lsm`] (the merge tree) and [`table`]
//! (catalog, reads, writes, commits).

pub use strata_dv as dv;
pub use strata_format as format;
pub use strata_io as io;
pub use strata_lsm as lsm;
pub use strata_spec as spec;
pub use strata_store as store;
pub use strata_table as table;

pub use strata_format::{CmpOp, Predicate};
pub use strata_io::{FileIO, LocalFileIO, MemoryFileIO};
pub use strata_spec::{Error, ErrorKind, Result};
pub use strata_store::{open_location, Location};
pub use strata_table::{get, BatchStream, Plan, ReadBuilder};
pub use strata_table::{Consumer, ConsumerManager, FollowOptions, IncrementalMode, StartFrom, StreamScan};
pub use strata_table::{FileSystemCatalog as Catalog, FileSystemCatalog, Table};
pub use strata_table::{FoundRow, FoundRows, PackedTableRow, TableQuery};
pub use strata_table::{RowUpdate, TableWrite, TableWriter};
