//! Strata tables: the filesystem catalog, schema and snapshot management, manifest I/O and the atomic
//! commit.

pub mod alter;
pub mod bucket_mode;
pub mod catalog;
pub mod commit;
mod commit_check;
pub mod commit_message;
pub mod consumer;
pub mod dynamic_bucket;
pub mod follow;
pub mod incremental;
pub mod inspect;
pub mod maintenance;
pub mod manifest_io;
pub mod paths;
mod point_read;
pub(crate) mod postpone;
pub mod query;
pub mod read;
mod references;
pub mod rollback;
pub mod scan;
pub mod schema_manager;
pub mod snapshot_manager;
pub mod table;
pub mod table_writer;
pub mod tag;
pub mod time_travel;
pub mod write;

pub use alter::AlterTable;
pub use catalog::FileSystemCatalog;
pub use commit::{CommitMessage, CommitOutcome, Committable, FileStoreCommit, Landed, RetryPolicy};
pub use consumer::{Consumer, ConsumerManager};
pub use follow::{FollowOptions, StartFrom, StreamScan};
pub use incremental::{IncrementalMode, IncrementalRead};
pub use manifest_io::ManifestStore;
pub use point_read::get;
pub use read::{BatchStream, Plan, ReadBuilder, ScanResult};
pub use schema_manager::SchemaManager;
pub use snapshot_manager::SnapshotManager;
pub use table::{OptionPolicy, Table};
pub use table_writer::{compaction_increments, uncommitted_messages, TableWriter};
pub use tag::{Tag, TagManager};
pub use time_travel::TimeTravel;
pub use write::TableWrite;
