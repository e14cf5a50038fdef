//! Following a table: its changes snapshot by snapshot as they land (Paimon's `DataTableStreamScan`, with
//! the `DeltaFollowUpScanner` or `ChangelogFollowUpScanner` the changelog producer picks), optionally
//! recording progress under a consumer id (see [`crate::changes::consumer`]).
//!
//! Start (Paimon's `scan.mode`): by default `latest-full`, a full read of the latest snapshot as `+I` rows
//! followed by the changes of every later snapshot; or after a given snapshot; and when a consumer id has
//! recorded progress, from its `nextSnapshot` (unless `consumer.ignore-progress`). The full read of a
//! `lookup` changelog table leaves level 0 out, as Paimon's does: those rows arrive through the changelog of
//! the compaction that takes them up. Other full reads merge every level, level 0 included, since the
//! follow-up starts after the snapshot read.
//!
//! A follow reads with the schema its table was opened with: files written after a column change read
//! through the schema history by field id (a renamed column under the name the follow knows, a column added
//! since left out), until the follower is restarted.
//!
//! A snapshot that expired before it was read is an [`Error::SnapshotExpired`], never a silent gap (Paimon
//! jumps to the earliest snapshot when a consumer's next snapshot has expired; Strata refuses instead).
//! Snapshots skipped by the mode (COMPACT snapshots in delta mode, snapshots without changelog in changelog
//! mode) advance the position without output. OVERWRITE snapshots are skipped as by Paimon's default; a
//! table that sets `streaming-read-overwrite` asks for them to be read as changes, which Strata does not
//! support, so the follow stops there with an unsupported error rather than skip them.

use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use strata_format::RowKind;
use strata_spec::{ChangelogProducer, CommitKind, Error, ErrorKind, Result};

use crate::changes::consumer::{Consumer, ConsumerManager};
use crate::changes::incremental::{expired_instead, ChangeReader, ChangeSource, IncrementalMode};
use crate::read::ReadBuilder;
use crate::table::Table;

/// How long a consumer file may go unwritten while its reader is idle: progress is recorded again after this
/// even when it did not move, so that `consumer.expiration-time` only expires consumers whose reader stopped.
const CONSUMER_HEARTBEAT: Duration = Duration::from_secs(60);

/// Where a follow starts when no consumer progress says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartFrom {
    /// A full read of the latest snapshot, then the changes after it (Paimon's `latest-full`).
    #[default]
    LatestFull,
    /// The changes after snapshot N (0: from the first snapshot).
    After(i64),
}

/// What to follow.
#[derive(Debug, Clone, Default)]
pub struct FollowOptions {
    /// Where to start.
    pub start: StartFrom,
    /// Deltas, changelogs or the table's choice.
    pub mode: IncrementalMode,
    /// Record progress under this consumer id, and resume from it.
    pub consumer_id: Option<String>,
}

/// One step of a follow: a snapshot's changes.
#[derive(Debug, Clone)]
pub struct FollowedSnapshot {
    /// The snapshot.
    pub snapshot: i64,
    /// Its commit kind.
    pub commit_kind: CommitKind,
    /// Whether this is the starting full read (all rows `+I`) rather than the snapshot's changes.
    pub full: bool,
    /// The rows: `rowkind`, then the projected columns.
    pub batches: Vec<RecordBatch>,
}

impl FollowedSnapshot {
    /// Rows in all batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// A follow of one table (Paimon's `DataTableStreamScan`): call [`read_next`](Self::read_next) until it returns
/// `None` (caught up), wait, and call it again; after handling what it returned, call
/// [`record_progress`](Self::record_progress) to record the position under the consumer id.
#[derive(Debug)]
pub struct StreamScan {
    reader: ChangeReader,
    start: StartFrom,
    /// The next snapshot to look at; `None` until the start is decided.
    next: Option<i64>,
    consumer: Option<(ConsumerManager, String)>,
    /// The position last recorded under the consumer id, and when.
    recorded: Option<(i64, Instant)>,
    read_overwrite: bool,
}

impl StreamScan {
    /// A follow of `rb`'s table with its projection and filter. With a consumer id whose progress is
    /// recorded (and `consumer.ignore-progress` unset), it resumes from that progress.
    pub fn new(rb: &ReadBuilder, opts: &FollowOptions) -> Result<StreamScan> {
        let table = rb.table();
        let reader = ChangeReader::new(rb, opts.mode)?;
        let mut next = match opts.start {
            StartFrom::After(n) if n < 0 || n == i64::MAX => {
                return Err(Error::invalid(
                    "follow start",
                    format!("snapshot {n} is not a snapshot id (0: from the first)"),
                ))
            }
            StartFrom::After(n) => Some(n + 1),
            StartFrom::LatestFull => None,
        };
        let consumer = match &opts.consumer_id {
            None => None,
            Some(id) => {
                let manager = ConsumerManager::of(table);
                // Reading checks the id, whether or not its progress is used.
                let recorded = manager.consumer(id)?;
                if let (Some(c), false) = (recorded, crate::changes::consumer::ignore_progress(table)?) {
                    next = Some(c.next_snapshot);
                }
                Some((manager, id.clone()))
            }
        };
        let read_overwrite = table.options().get("streaming-read-overwrite").is_some_and(|v| v.trim() == "true");
        let scan = StreamScan { reader, start: opts.start, next, consumer, recorded: None, read_overwrite };
        if let Some(n) = scan.next {
            scan.check_not_expired(n)?;
        }
        Ok(scan)
    }

    /// The schema of the batches: `rowkind`, then the projected columns.
    pub fn schema(&self) -> arrow_schema::SchemaRef {
        self.reader.schema()
    }

    /// The next snapshot this follow reads (what a consumer records); `None` before the first read of a
    /// `latest-full` start.
    pub fn next_snapshot(&self) -> Option<i64> {
        self.next
    }

    fn table(&self) -> &Table {
        self.reader.read_builder().table()
    }

    /// Fails when snapshot `n`, the next to read, is older than the earliest snapshot left.
    fn check_not_expired(&self, n: i64) -> Result<()> {
        match self.table().snapshot_manager().earliest_id()? {
            Some(earliest) if earliest > n => Err(Error::SnapshotExpired {
                table: self.table().path().to_string(),
                snapshot: n,
                earliest: Some(earliest),
            }),
            _ => Ok(()),
        }
    }

    /// The next snapshot with changes, read; `None` once every snapshot that landed has been read (call
    /// again later). Snapshots the mode skips are passed over.
    pub fn read_next(&mut self) -> Result<Option<FollowedSnapshot>> {
        let Some(mut id) = self.next else { return self.full_read() };
        loop {
            let sm = self.table().snapshot_manager();
            let snapshot = match sm.snapshot(id) {
                Ok(s) => s,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    // Not committed yet, or expired: the earliest snapshot tells which.
                    self.check_not_expired(id)?;
                    if sm.latest_id()?.is_some_and(|latest| latest > id) {
                        // Snapshot ids have no gaps and expiration removes the oldest first: unless it got
                        // here meanwhile, a missing snapshot below the latest is damage.
                        self.check_not_expired(id)?;
                        return Err(Error::corrupt_file(
                            sm.snapshot_path(id),
                            "is missing although later snapshots exist",
                        ));
                    }
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            if snapshot.commit_kind == CommitKind::Overwrite && self.read_overwrite {
                return Err(Error::unsupported(format!(
                    "following OVERWRITE snapshot {id} as changes (the table sets streaming-read-overwrite)"
                )));
            }
            let table = self.table();
            match self.reader.changes_of(&snapshot).map_err(|e| expired_instead(table, id, e))? {
                None => {
                    id = id.saturating_add(1);
                    self.next = Some(id);
                }
                Some(changes) => {
                    let batches = self.reader.read(&changes).map_err(|e| expired_instead(table, id, e))?;
                    self.next = Some(id.saturating_add(1));
                    return Ok(Some(FollowedSnapshot {
                        snapshot: id,
                        commit_kind: snapshot.commit_kind,
                        full: false,
                        batches,
                    }));
                }
            }
        }
    }

    /// The starting full read of the latest snapshot (`latest-full`), if the table has one.
    fn full_read(&mut self) -> Result<Option<FollowedSnapshot>> {
        let table = self.table().clone();
        let Some(latest) = table.snapshot_manager().latest()? else { return Ok(None) };
        let _span = tracing::info_span!("follow_full_read", snapshot = latest.id).entered();
        let lookup = table.schema().core_options().changelog_producer()? == ChangelogProducer::Lookup
            && self.reader.source() == ChangeSource::Changelog;
        let rb =
            self.reader.read_builder().clone().with_snapshot(latest.id).merge_on_read(!lookup).skipping_level0(lookup);
        let result = rb.read().map_err(|e| expired_instead(&table, latest.id, e))?;
        let batches =
            result.batches.iter().map(|b| self.reader.with_row_kind(b, RowKind::Insert)).collect::<Result<Vec<_>>>()?;
        self.next = Some(latest.id.saturating_add(1));
        Ok(Some(FollowedSnapshot { snapshot: latest.id, commit_kind: latest.commit_kind, full: true, batches }))
    }

    /// Records the position under the consumer id (nothing without one): call it once what [`read_next`] returned
    /// is handled, so that a restart resumes after it. Writes only when the position moved, or every minute
    /// while idle (so that `consumer.expiration-time` sees a live reader).
    ///
    /// [`read_next`]: Self::read_next
    pub fn record_progress(&mut self) -> Result<()> {
        let (Some((manager, id)), Some(next)) = (&self.consumer, self.next) else { return Ok(()) };
        let due = match self.recorded {
            None => true,
            Some((at, when)) => at != next || when.elapsed() >= CONSUMER_HEARTBEAT,
        };
        if due {
            manager.reset_consumer(id, Consumer { next_snapshot: next })?;
            self.recorded = Some((next, Instant::now()));
        }
        Ok(())
    }

    /// Where this follow started.
    pub fn start(&self) -> StartFrom {
        self.start
    }
}
