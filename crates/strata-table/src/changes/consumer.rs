//! Consumers: a streaming reader's recorded progress, so that it resumes where it stopped and snapshot
//! expiration keeps what it has not read yet (Paimon's `ConsumerManager` and `Consumer`).
//!
//! A consumer is the file `consumer/consumer-<id>` in the table directory holding `{"nextSnapshot": N}`,
//! the first snapshot its reader has not read. Strata writes it as Paimon's Java writer does (Jackson's
//! pretty printer) and reads Paimon's and pypaimon's. Expiration keeps every snapshot from the smallest
//! `nextSnapshot` on; with `consumer.expiration-time` set, a consumer whose file was not rewritten for that
//! long is expired first (deleted, as Paimon's `ConsumerManager.expire` does by modification time) and no
//! longer holds snapshots back.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use strata_io::{join, FileIO};
use strata_spec::{Error, Result};

use crate::table::Table;

/// Prefix of consumer file names (`consumer-<id>`).
pub(crate) const CONSUMER_PREFIX: &str = "consumer-";

/// Paimon's option: consumers not updated within this long are expired.
pub(crate) const EXPIRATION_TIME_OPTION: &str = "consumer.expiration-time";

/// Paimon's option: a starting reader ignores its consumer's recorded progress (and records anew).
pub(crate) const IGNORE_PROGRESS_OPTION: &str = "consumer.ignore-progress";

/// The longest consumer id Strata accepts (the file name adds the prefix).
const MAX_ID_BYTES: usize = 200;

/// One consumer's progress (Paimon's `Consumer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Consumer {
    /// The first snapshot the consumer has not read yet.
    pub next_snapshot: i64,
}

impl Consumer {
    /// The JSON Paimon writes (Jackson's default pretty printer): `{\n  "nextSnapshot" : N\n}`.
    pub fn to_json(&self) -> String {
        format!("{{\n  \"nextSnapshot\" : {}\n}}", self.next_snapshot)
    }

    /// Parses a consumer file: a JSON object with an integer `nextSnapshot` of at least 1 (snapshot ids start
    /// at 1); other fields are ignored, as Paimon ignores unknown properties.
    pub fn from_json(bytes: &[u8]) -> Result<Consumer> {
        let v: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::corrupt(format!("is not a consumer's JSON ({{\"nextSnapshot\": N}}): {e}")))?;
        let next = v
            .get("nextSnapshot")
            .ok_or_else(|| Error::corrupt("has no nextSnapshot"))?
            .as_i64()
            .ok_or_else(|| Error::corrupt(format!("has nextSnapshot {}, not an integer", v["nextSnapshot"])))?;
        if next < 1 {
            return Err(Error::corrupt(format!("has nextSnapshot {next}; snapshot ids start at 1")));
        }
        Ok(Consumer { next_snapshot: next })
    }
}

/// Checks a consumer id given by a user: it becomes part of a file name in the table directory, so it must
/// not be able to name anything else. Refused: empty ids, ids longer than 200 bytes, path separators (`/`,
/// `\`), `..`, a leading `.`, control characters, and a `.tmp` ending (Strata's temporary files end so).
pub(crate) fn check_consumer_id(id: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid(format!("consumer id {id:?}"), why.to_string()));
    if id.is_empty() {
        return bad("it is empty");
    }
    if id.len() > MAX_ID_BYTES {
        return bad(&format!("it is longer than {MAX_ID_BYTES} bytes"));
    }
    if id.contains('/') || id.contains('\\') {
        return bad("it contains a path separator");
    }
    if id.contains("..") {
        return bad("it contains '..'");
    }
    if id.starts_with('.') {
        return bad("it starts with '.'");
    }
    if id.chars().any(char::is_control) {
        return bad("it contains a control character");
    }
    if id.ends_with(".tmp") {
        return bad("it ends with '.tmp', which names temporary files");
    }
    strata_spec::check_file_name(&format!("{CONSUMER_PREFIX}{id}"), "consumer file")
        .map_err(|e| Error::invalid_from(format!("consumer id {id:?}"), e))
}

/// A consumer as listed: its progress and when its file was last written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedConsumer {
    /// Its progress.
    pub consumer: Consumer,
    /// Last modification of its file, epoch milliseconds.
    pub modified_millis: i64,
}

/// Reads and writes a table's consumers (Paimon's `ConsumerManager`, main branch).
#[derive(Debug, Clone)]
pub struct ConsumerManager {
    io: Arc<dyn FileIO>,
    dir: String,
}

impl ConsumerManager {
    /// The consumers of the table at `table_path`.
    pub fn new(io: Arc<dyn FileIO>, table_path: &str) -> Self {
        ConsumerManager { io, dir: join(table_path, "consumer") }
    }

    /// The consumers of `table`.
    pub fn of(table: &Table) -> Self {
        Self::new(table.io().clone(), &table.metadata_root())
    }

    /// `<table>/consumer`
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Where consumer `id` is recorded (the id checked first).
    pub fn consumer_path(&self, id: &str) -> Result<String> {
        check_consumer_id(id)?;
        Ok(join(&self.dir, &format!("{CONSUMER_PREFIX}{id}")))
    }

    /// Consumer `id`'s progress; `None` when it has none.
    pub fn consumer(&self, id: &str) -> Result<Option<Consumer>> {
        let path = self.consumer_path(id)?;
        match self.io.read(&path) {
            Ok(bytes) => Consumer::from_json(&bytes).map(Some).map_err(|e| e.in_file(&path)),
            Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Records consumer `id`'s progress (the whole file replaced atomically).
    pub fn reset_consumer(&self, id: &str, consumer: Consumer) -> Result<()> {
        if consumer.next_snapshot < 1 {
            return Err(Error::invalid(
                format!("consumer {id:?}"),
                format!("next snapshot {} is not a snapshot id", consumer.next_snapshot),
            ));
        }
        let path = self.consumer_path(id)?;
        let _span = tracing::debug_span!("reset_consumer", id, next = consumer.next_snapshot).entered();
        self.io.write(&path, consumer.to_json().as_bytes())
    }

    /// Removes consumer `id` (no error when it has none).
    pub fn delete_consumer(&self, id: &str) -> Result<()> {
        self.io.delete(&self.consumer_path(id)?)
    }

    /// Every consumer, by id. Any file named `consumer-<id>` counts, whatever the id (only ids given by a
    /// user are checked, since those name a file to write); temporary files of an in-flight write do not.
    /// A file that does not parse is a corrupt-table error naming it: expiration must not guess what a
    /// consumer still needs.
    pub fn consumers(&self) -> Result<BTreeMap<String, ListedConsumer>> {
        let _span = tracing::debug_span!("list_consumers", dir = self.dir.as_str()).entered();
        let mut out = BTreeMap::new();
        for f in self.io.list(&self.dir)? {
            let Some(id) = f.name().strip_prefix(CONSUMER_PREFIX) else { continue };
            if f.is_dir || is_temporary(id) {
                continue;
            }
            let bytes = match self.io.read(&f.path) {
                Ok(b) => b,
                // Expired or deleted since the listing.
                Err(e) if e.kind() == strata_spec::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            let consumer = Consumer::from_json(&bytes).map_err(|e| e.in_file(&f.path))?;
            out.insert(id.to_string(), ListedConsumer { consumer, modified_millis: f.modified_millis });
        }
        Ok(out)
    }

    /// The smallest `nextSnapshot` of the consumers last written at or after `alive_since` (epoch millis;
    /// `None`: every consumer counts).
    pub fn min_next_snapshot(&self, alive_since: Option<i64>) -> Result<Option<i64>> {
        Ok(self
            .consumers()?
            .values()
            .filter(|c| alive_since.is_none_or(|t| c.modified_millis >= t))
            .map(|c| c.consumer.next_snapshot)
            .min())
    }

    /// Deletes the consumers last written before `before` (epoch millis), as Paimon's
    /// `ConsumerManager.expire`; returns their ids.
    pub fn expire(&self, before: i64) -> Result<Vec<String>> {
        let mut expired = Vec::new();
        for (id, c) in self.consumers()? {
            if c.modified_millis < before {
                self.io.delete(&join(&self.dir, &format!("{CONSUMER_PREFIX}{id}")))?;
                expired.push(id);
            }
        }
        Ok(expired)
    }
}

/// Whether a listed consumer file is a temporary file of `LocalFileIO` (`<name>.<uuid>.tmp`).
fn is_temporary(id: &str) -> bool {
    id.strip_suffix(".tmp")
        .and_then(|rest| rest.rsplit_once('.'))
        .is_some_and(|(_, uuid)| uuid::Uuid::parse_str(uuid).is_ok())
}

/// `consumer.expiration-time` of `table`, if set.
pub(crate) fn expiration_time(table: &Table) -> Result<Option<Duration>> {
    table
        .options()
        .get(EXPIRATION_TIME_OPTION)
        .map(|v| {
            strata_spec::options::parse_duration(v)
                .map_err(|e| Error::invalid_from(format!("option '{EXPIRATION_TIME_OPTION}'"), e))
        })
        .transpose()
}

/// `consumer.ignore-progress` of `table` (default false).
pub(crate) fn ignore_progress(table: &Table) -> Result<bool> {
    match table.options().get(IGNORE_PROGRESS_OPTION).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(false),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => Err(Error::invalid(format!("option '{IGNORE_PROGRESS_OPTION}'"), format!("'{v}' is not a boolean"))),
    }
}

/// The smallest snapshot a live consumer still has to read, for expiration: every snapshot from it on is
/// kept. With `consumer.expiration-time`, consumers not written within it (as of `now`, epoch millis) do not
/// count, and unless `dry_run` they are deleted, as Paimon expires consumers before snapshots so that a
/// forgotten reader does not hold the table's history forever.
pub(crate) fn min_consumer_next_snapshot(table: &Table, now: i64, dry_run: bool) -> Result<Option<i64>> {
    let consumers = ConsumerManager::of(table);
    let alive_since =
        expiration_time(table)?.map(|d| now.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    if let (Some(before), false) = (alive_since, dry_run) {
        let expired = consumers.expire(before)?;
        if !expired.is_empty() {
            tracing::info!(?expired, "expired consumers");
        }
    }
    consumers.min_next_snapshot(alive_since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_as_paimon_writes_and_reads_it() {
        let c = Consumer { next_snapshot: 42 };
        assert_eq!(c.to_json(), "{\n  \"nextSnapshot\" : 42\n}");
        assert_eq!(Consumer::from_json(c.to_json().as_bytes()).ok(), Some(c));
        // pypaimon's compact form, and unknown fields.
        assert_eq!(Consumer::from_json(br#"{"nextSnapshot": 7, "x": 1}"#).ok(), Some(Consumer { next_snapshot: 7 }));
        for bad in [
            &b"{"[..],
            b"[]",
            b"{}",
            br#"{"nextSnapshot": -3}"#,
            br#"{"nextSnapshot": 0}"#,
            br#"{"nextSnapshot": "5"}"#,
        ] {
            let e = Consumer::from_json(bad).err().map(|e| e.kind());
            assert_eq!(e, Some(strata_spec::ErrorKind::Corrupt), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn ids_that_could_name_another_file_are_refused() {
        for ok in ["c1", "my-job", "flink_job.v2", "a b"] {
            assert!(check_consumer_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "..", "../x", "a/b", "a\\b", ".hidden", "x..y", "a\nb", "x.tmp", &"x".repeat(201)] {
            let e = check_consumer_id(bad).err().map(|e| e.kind());
            assert_eq!(e, Some(strata_spec::ErrorKind::Invalid), "{bad:?}");
        }
        assert!(is_temporary("c1.0b5d9d36-8cf3-4b1a-9d6c-3b43f7c1f2aa.tmp"));
        assert!(!is_temporary("c1"));
    }
}
