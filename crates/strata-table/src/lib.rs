//! Strata tables: the filesystem catalog, schema and snapshot management, manifest I/O and the atomic
//! commit.

mod alter;
mod branch;
mod bucket;
mod catalog;
mod changes;
mod commit;
mod inspect;
mod maintenance;
mod meta;
mod read;
mod table;
#[cfg(test)]
mod test_table;
mod write;

// Catalog and tables: creating, opening and altering tables, and the managers of their files.
pub use alter::AlterTable;
pub use catalog::FileSystemCatalog;
pub use inspect::inspect;
pub use meta::manifest_io::ManifestStore;
pub use meta::paths::PathFactory;
pub use meta::schema_manager::SchemaManager;
pub use meta::snapshot_manager::SnapshotManager;
pub use table::{DeletionFile, OptionPolicy, Table};

// Writing: table writers, the commit messages they hand over, and the atomic commit.
pub use branch::{create_branch, delete_branch, fast_forward, list_branches, FastForward};
pub use commit::batch::{commit_batch, compact_table, BatchSnapshots, TableCompaction};
pub use commit::{now_millis, CommitOutcome, Committable, FileStoreCommit, Landed, RetryPolicy};
pub use strata_spec::{AbsorbedFiles, CommitMessage};
pub use write::table_writer::{compaction_increments, uncommitted_messages, TableWriter};
pub use write::{RowUpdate, TableWrite};

// Writes and compactions spread over processes or machines, committed once.
pub use write::distributed::{
    abort_messages, bucket_units, commit_foreign_messages, compact_units, BucketUnit, ForeignCommit,
};

// Reading: planning and reading splits, point lookups, time travel.
pub use read::point_read::{get, get_many};
pub use read::query::{FoundRow, FoundRows, PackedTableRow, TableQuery};
pub use read::scan::{scan, ScanOptions};
pub use read::time_travel::{
    format_millis, parse_timestamp_millis, read_builder, snapshot_at_or_before, TimeTravel, SCAN_TAG_NAME,
    SCAN_TIMESTAMP_MILLIS,
};
pub use read::{BatchStream, DataSplit, Plan, ReadBuilder, ScanResult};

// Incremental and streaming reads, and the readers' recorded progress.
pub use changes::consumer::{Consumer, ConsumerManager, ListedConsumer};
pub use changes::follow::{FollowOptions, FollowedSnapshot, StartFrom, StreamScan};
pub use changes::incremental::{
    ChangeReader, ChangeSource, IncrementalMode, IncrementalPlan, IncrementalRead, SnapshotChanges,
};

// Maintenance: snapshot expiration, orphan files, tags and rollback.
pub use maintenance::repair::{repair_deletion_vectors, LostDeletes, RepairReport};
pub use maintenance::rollback::{rollback, RollbackReport, RollbackTarget};
pub use maintenance::tag::{create_tag, delete_tag, Tag, TagDeletion, TagManager};
pub use maintenance::{expire_snapshots, parse_older_than, remove_orphan_files, ExpireOptions, MaintenanceReport};
