//! Strata tables: the filesystem catalog, schema and snapshot management, manifest I/O and the atomic
//! commit.

mod alter;
mod batch_commit;
mod branch;
mod bucket_mode;
mod catalog;
mod commit;
mod commit_check;
mod consumer;
mod distributed;
mod dynamic_bucket;
mod follow;
mod foreign_compaction;
mod incremental;
mod inspect;
mod maintenance;
mod manifest_io;
mod orphan_vectors;
mod paths;
mod point_read;
mod postpone;
mod query;
mod read;
mod references;
mod repair;
mod rollback;
mod scan;
mod schema_manager;
mod snapshot_manager;
mod table;
mod table_writer;
mod tag;
#[cfg(test)]
mod test_table;
mod time_travel;
mod write;

// Catalog and tables: creating, opening and altering tables, and the managers of their files.
pub use alter::AlterTable;
pub use catalog::FileSystemCatalog;
pub use inspect::inspect;
pub use manifest_io::ManifestStore;
pub use paths::PathFactory;
pub use schema_manager::SchemaManager;
pub use snapshot_manager::SnapshotManager;
pub use table::{DeletionFile, OptionPolicy, Table};

// Writing: table writers, the commit messages they hand over, and the atomic commit.
pub use batch_commit::{commit_batch, BatchSnapshots};
pub use branch::{create_branch, delete_branch, fast_forward, list_branches, FastForward};
pub use commit::{now_millis, CommitOutcome, Committable, FileStoreCommit, Landed, RetryPolicy};
pub use strata_spec::{AbsorbedFiles, CommitMessage};
pub use table_writer::{compaction_increments, uncommitted_messages, TableWriter};
pub use write::{RowUpdate, TableWrite};

// Writes and compactions spread over processes or machines, committed once.
pub use distributed::{
    abort_messages, bucket_units, commit_foreign_messages, compact_units, BucketUnit, ForeignCommit,
};

// Reading: planning and reading splits, point lookups, time travel.
pub use point_read::{get, get_many};
pub use query::{FoundRow, FoundRows, PackedTableRow, TableQuery};
pub use read::{BatchStream, DataSplit, Plan, ReadBuilder, ScanResult};
pub use scan::{scan, ScanOptions};
pub use time_travel::{
    format_millis, parse_timestamp_millis, read_builder, snapshot_at_or_before, TimeTravel, SCAN_TAG_NAME,
    SCAN_TIMESTAMP_MILLIS,
};

// Incremental and streaming reads, and the readers' recorded progress.
pub use consumer::{Consumer, ConsumerManager, ListedConsumer};
pub use follow::{FollowOptions, FollowedSnapshot, StartFrom, StreamScan};
pub use incremental::{ChangeReader, ChangeSource, IncrementalMode, IncrementalPlan, IncrementalRead, SnapshotChanges};

// Maintenance: snapshot expiration, orphan files, tags and rollback.
pub use maintenance::{expire_snapshots, parse_older_than, remove_orphan_files, ExpireOptions, MaintenanceReport};
pub use repair::{repair_deletion_vectors, LostDeletes, RepairReport};
pub use rollback::{rollback, RollbackReport, RollbackTarget};
pub use tag::{create_tag, delete_tag, Tag, TagDeletion, TagManager};
