//! Time travel: which snapshot a read sees (Paimon's `TimeTravelUtil` and
//! `SnapshotManager.earlierOrEqualTimeMills`).
//!
//! A read goes back to a snapshot id, a tag, or a point in time, chosen by the options Paimon reads for it
//! (`scan.snapshot-id`, `scan.tag-name`, `scan.timestamp-millis`, `scan.timestamp`, and `scan.version`, which
//! names a tag or else a snapshot id), from the table's options overlaid with the read's own. At most one of
//! them may be set. A tag is read from the tag file itself, so it reads after its snapshot expired; a time
//! reads the latest snapshot committed at or before it. The snapshot is read with the schema it was written
//! under ([`Table::as_of_snapshot`]).

use std::collections::BTreeMap;

use chrono::{DateTime, LocalResult, NaiveDate, NaiveDateTime, TimeZone};
use strata_spec::{Error, ErrorKind, Result, Snapshot};

use crate::read::ReadBuilder;
use crate::table::Table;

/// `scan.snapshot-id`
pub(crate) const SCAN_SNAPSHOT_ID: &str = "scan.snapshot-id";
/// `scan.tag-name`
pub const SCAN_TAG_NAME: &str = "scan.tag-name";
/// `scan.timestamp-millis`
pub const SCAN_TIMESTAMP_MILLIS: &str = "scan.timestamp-millis";
/// `scan.timestamp` (a date and time; the local time zone unless it names an offset)
pub(crate) const SCAN_TIMESTAMP: &str = "scan.timestamp";
/// `scan.version`: a tag name, else a snapshot id
pub(crate) const SCAN_VERSION: &str = "scan.version";
/// `scan.watermark` (not supported: a read must not silently ignore it)
pub(crate) const SCAN_WATERMARK: &str = "scan.watermark";

const SCAN_KEYS: [&str; 6] =
    [SCAN_SNAPSHOT_ID, SCAN_TAG_NAME, SCAN_TIMESTAMP_MILLIS, SCAN_TIMESTAMP, SCAN_VERSION, SCAN_WATERMARK];

/// Where a read travels to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeTravel {
    /// Snapshot `id` (or, once it expired, a tag of it).
    Snapshot(i64),
    /// The snapshot a tag pins.
    Tag(String),
    /// The latest snapshot committed at or before this time (epoch milliseconds).
    TimestampMillis(i64),
}

impl TimeTravel {
    /// The travel `options` ask for: `None` when they name none, an invalid-input error when they name more
    /// than one (as Paimon) or a value does not parse. `scan.version` is resolved as Paimon does: an existing
    /// tag of that name first, then a snapshot id.
    pub fn from_options(table: &Table, options: &BTreeMap<String, String>) -> Result<Option<TimeTravel>> {
        let set: Vec<(&str, &String)> = SCAN_KEYS.iter().filter_map(|k| options.get(*k).map(|v| (*k, v))).collect();
        let (key, value) = match set.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            more => {
                let keys: Vec<&str> = more.iter().map(|(k, _)| *k).collect();
                return Err(Error::invalid(
                    "time travel",
                    format!("only one of {} may be set, not {}", SCAN_KEYS.join(", "), keys.join(" and ")),
                ));
            }
        };
        let number = |v: &str| {
            v.trim()
                .parse::<i64>()
                .map_err(|_| Error::invalid(format!("option '{key}'"), format!("'{v}' is not a number")))
        };
        Ok(Some(match key {
            SCAN_SNAPSHOT_ID => TimeTravel::Snapshot(number(value)?),
            SCAN_TAG_NAME => TimeTravel::Tag(value.clone()),
            SCAN_TIMESTAMP_MILLIS => TimeTravel::TimestampMillis(number(value)?),
            SCAN_TIMESTAMP => TimeTravel::TimestampMillis(parse_timestamp_millis(value)?),
            SCAN_VERSION if table.tag_manager().get(value)?.is_some() => TimeTravel::Tag(value.clone()),
            SCAN_VERSION if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                TimeTravel::Snapshot(number(value)?)
            }
            SCAN_VERSION => {
                return Err(Error::NotFound {
                    path: format!("time travel version '{value}' (no such tag or snapshot id)"),
                })
            }
            _ => return Err(Error::unsupported(format!("time travel by {key}"))),
        }))
    }

    /// The snapshot this travels to.
    pub fn resolve(&self, table: &Table) -> Result<Snapshot> {
        let _span = tracing::debug_span!("time_travel", to = ?self).entered();
        match self {
            TimeTravel::Tag(name) => Ok(table.tag_manager().get_required(name)?.snapshot),
            TimeTravel::Snapshot(id) => match table.snapshot_manager().snapshot(*id) {
                Ok(s) => Ok(s),
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    // Expired: a tag may still hold it (Paimon's `findSnapshot` looks there too).
                    let tags = table.tag_manager().list()?;
                    tags.into_iter().map(|t| t.snapshot).find(|s| s.id == *id).ok_or_else(|| Error::NotFound {
                        path: format!("snapshot {id} (expired or never committed, and no tag holds it)"),
                    })
                }
                Err(e) => Err(e),
            },
            TimeTravel::TimestampMillis(ms) => {
                snapshot_at_or_before(table, *ms)?.ok_or_else(|| no_snapshot_before(table, *ms))
            }
        }
    }
}

fn no_snapshot_before(table: &Table, ms: i64) -> Error {
    let earliest = table.snapshot_manager().earliest_id().ok().flatten();
    let earliest = earliest.and_then(|id| table.snapshot_manager().snapshot(id).ok());
    let detail = match earliest {
        Some(s) => format!("the earliest, snapshot {}, was committed at {}", s.id, format_millis(s.time_millis)),
        None => "the table has no snapshot".to_string(),
    };
    Error::NotFound { path: format!("a snapshot committed at or before {} ({detail})", format_millis(ms)) }
}

/// The latest snapshot committed at or before `millis` (Paimon's `earlierOrEqualTimeMills`: a binary search
/// over the snapshot ids, which assumes commit times grow with ids); `None` when the earliest snapshot is
/// newer. A snapshot that vanishes during the search was expired, so it and all before it are older.
pub fn snapshot_at_or_before(table: &Table, millis: i64) -> Result<Option<Snapshot>> {
    let sm = table.snapshot_manager();
    let ids = sm.list_ids()?;
    let (mut lo, mut hi) = (0usize, ids.len());
    let mut best = None;
    // Invariant: every id below `lo` is committed at or before `millis` (or expired), every id from `hi` after.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match sm.snapshot(ids[mid]) {
            Ok(s) if s.time_millis <= millis => {
                best = Some(s);
                lo = mid + 1;
            }
            Ok(_) => hi = mid,
            Err(e) if e.kind() == ErrorKind::NotFound => lo = mid + 1,
            Err(e) => return Err(e),
        }
    }
    Ok(best)
}

/// A read of `table` honouring the time-travel options of the table overlaid with `dynamic` (a read's own
/// options, Paimon's dynamic options): the snapshot they choose, with the schema it was written under, or
/// the latest snapshot when they choose none.
pub fn read_builder(table: &Table, dynamic: &BTreeMap<String, String>) -> Result<ReadBuilder> {
    let mut options = table.options().clone();
    options.extend(dynamic.iter().map(|(k, v)| (k.clone(), v.clone())));
    match TimeTravel::from_options(table, &options)? {
        None => Ok(ReadBuilder::new(table)),
        Some(travel) => {
            let snapshot = travel.resolve(table)?;
            Ok(ReadBuilder::new(&table.as_of_snapshot(&snapshot)?).with_snapshot_value(snapshot))
        }
    }
}

/// Parses a point in time: epoch milliseconds, or an ISO-8601 date and time (`2024-05-01T12:00:00`, a space
/// instead of `T`, fractions of a second, `Z` or an offset; a date alone is its midnight). Without an offset
/// the time is local, as Paimon reads `scan.timestamp` in the JVM's time zone.
pub fn parse_timestamp_millis(text: &str) -> Result<i64> {
    let t = text.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Ok(ms);
    }
    let bad = |why: &str| Error::invalid(format!("time '{t}'"), why.to_string());
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(dt.timestamp_millis());
    }
    let naive = ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())
        .or_else(|| NaiveDate::parse_from_str(t, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)))
        .ok_or_else(|| bad("give epoch milliseconds or an ISO-8601 date and time, such as 2024-05-01T12:00:00"))?;
    match chrono::Local.from_local_datetime(&naive) {
        LocalResult::Single(dt) | LocalResult::Ambiguous(dt, _) => Ok(dt.timestamp_millis()),
        LocalResult::None => Err(bad("that local time does not exist (a daylight-saving gap)")),
    }
}

/// Epoch milliseconds as an ISO-8601 UTC time (`2024-05-01T12:00:00.000Z`), for messages and listings.
pub fn format_millis(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map_or_else(|| format!("{ms} ms"), |t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_as_millis_or_iso_8601() {
        assert_eq!(parse_timestamp_millis("1700000000123").unwrap(), 1_700_000_000_123);
        assert_eq!(parse_timestamp_millis("2023-11-14T22:13:20.123Z").unwrap(), 1_700_000_000_123);
        assert_eq!(parse_timestamp_millis("2023-11-15T00:13:20+02:00").unwrap(), 1_700_000_000_000);
        let local = chrono::Local
            .from_local_datetime(
                &NaiveDate::from_ymd_opt(2023, 11, 14).unwrap().and_hms_milli_opt(22, 13, 20, 5).unwrap(),
            )
            .single()
            .unwrap()
            .timestamp_millis();
        assert_eq!(parse_timestamp_millis("2023-11-14 22:13:20.005").unwrap(), local);
        assert_eq!(parse_timestamp_millis("2023-11-14T22:13:20.005").unwrap(), local);
        for bad in ["", "yesterday", "2023-13-01", "2023-11-14T25:00:00", "1e9"] {
            assert_eq!(parse_timestamp_millis(bad).unwrap_err().kind(), ErrorKind::Invalid, "{bad}");
        }
        assert_eq!(format_millis(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }
}
