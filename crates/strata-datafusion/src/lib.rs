//! SQL over Strata tables through DataFusion 55.
//!
//! [`StrataSession`] is a DataFusion session whose default catalog is a warehouse (local or on an object
//! store): `SELECT ... FROM db.t` reads a Strata table through [`StrataTable`], a `TableProvider` that pushes
//! the projection, the filters Strata evaluates exactly (keys, partitions, values: pruned by manifest and
//! row-group statistics, then filtered row by row) and the limit into the Strata read, and whose scan
//! operator, [`StrataScanExec`], reads the planned splits as DataFusion partitions: raw deletion-vector
//! splits file by file, merge-on-read splits merged inside their partition. On deletion-vector tables
//! `COUNT(*)` comes from metadata. `INSERT INTO` and `DELETE FROM` (key deletes) commit once per statement.
//! System tables are `t$snapshots`, `t$schemas`, `t$options`, `t$files`; time travel is
//! `FOR SYSTEM_TIME AS OF TIMESTAMP '...'`, `VERSION AS OF n` or a suffix such as `"t$snapshot=3"`.
//!
//! ```no_run
//! # async fn run() -> strata_spec::Result<()> {
//! let session = strata_datafusion::StrataSession::open("/tmp/warehouse", &Default::default())?;
//! let rows = session.query("SELECT id, name FROM db.users WHERE id BETWEEN 10 AND 20").await?;
//! let then = session.query("SELECT count(*) FROM db.users VERSION AS OF 3").await?;
//! # Ok(()) }
//! ```

mod catalog;
mod error;
mod exec;
mod filter;
mod names;
mod provider;
mod session;
mod sql;
mod system;
mod write;

pub use catalog::{StrataCatalog, StrataSchema};
pub use error::to_strata;
pub use exec::StrataScanExec;
pub use provider::StrataTable;
pub use session::{collect, StatementOutput, StrataSession, CATALOG, DEFAULT_DATABASE};
pub use system::SystemTable;
pub use write::StrataWriteExec;

/// DataFusion, as this crate builds on it (its `SessionContext`, `DataFrame`, plans).
pub use datafusion;
