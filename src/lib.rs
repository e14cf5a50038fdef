//! # Strata
//!
//! An embeddable primary-key table store whose on-disk format is Apache Paimon's.
//!
//! This facade re-exports the crates: [`spec`] (Paimon's on-disk objects), [`io`] (the storage seam),
//! [`dv`] (deletion vectors and DV index files) and [`table`] (catalog, snapshots, commit).

pub use strata_dv as dv;
pub use strata_format as format;
pub use strata_io as io;
pub use strata_lsm as lsm;
pub use strata_spec as spec;
pub use strata_table as table;

pub use strata_io::{FileIO, LocalFileIO, MemoryFileIO};
pub use strata_spec::{Error, ErrorKind, Result};
pub use strata_table::{FileSystemCatalog, Table};
