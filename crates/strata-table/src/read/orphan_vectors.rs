//! Deletion vectors that name no live data file of their bucket: orphans (left by Paimon 1.4: #8778, or by
//! a stale writer after another engine's compaction), which readers skip as Paimon's do, told apart from
//! damaged names, which would leave a live file without its vector.

use std::collections::{HashMap, HashSet};

use strata_spec::{BinaryRow, ManifestEntry};

/// Why a vector's name is not an orphan but damage, if it is: it names a live file of another bucket (a
/// damaged bucket or partition field), it is no data file's name (`prefixes`: the table's data file
/// prefixes), or it differs from a live file of its own bucket by one byte outside the file counter.
///
/// A writer names its files `<prefix><uuid>-<counter>.<ext>` with one uuid for all of them, so a removed
/// file and the live one its writer wrote next differ in the counter alone, often by one byte: that is an
/// orphan's usual shape. One flipped byte in the uuid, prefix or extension of a live file's name is damage.
pub(crate) fn damage(
    name: &str,
    (partition, bucket): (&BinaryRow, i32),
    live: &LiveNames<'_>,
    prefixes: &[&str],
) -> Option<&'static str> {
    if live.all.contains(name) {
        return Some("it names a live data file of another bucket");
    }
    if !prefixes.iter().any(|p| name.starts_with(p)) {
        return Some("it is no data file's name");
    }
    let same_bucket = live.by_bucket.get(&(partition, bucket)).map(Vec::as_slice).unwrap_or_default();
    let flipped = same_bucket.iter().any(|other| match one_differing_byte(other, name) {
        Some(at) => !in_counter(other, at),
        None => false,
    });
    flipped.then_some("it is one byte from the name of a live data file of its bucket")
}

/// The live data file names of a snapshot, by bucket and all together.
pub(crate) struct LiveNames<'a> {
    by_bucket: HashMap<(&'a BinaryRow, i32), Vec<&'a str>>,
    all: HashSet<&'a str>,
}

impl<'a> LiveNames<'a> {
    pub(crate) fn new(files: &'a [ManifestEntry]) -> Self {
        let mut by_bucket: HashMap<(&BinaryRow, i32), Vec<&str>> = HashMap::new();
        let mut all = HashSet::new();
        for e in files {
            by_bucket.entry((&e.partition, e.bucket)).or_default().push(e.file.file_name.as_str());
            all.insert(e.file.file_name.as_str());
        }
        LiveNames { by_bucket, all }
    }

    /// Whether `name` is a live file of (`partition`, `bucket`).
    pub(crate) fn contains(&self, (partition, bucket): (&BinaryRow, i32), name: &str) -> bool {
        self.by_bucket.get(&(partition, bucket)).is_some_and(|names| names.contains(&name))
    }
}

/// Where two names of one length differ, when they differ in exactly one byte.
fn one_differing_byte(a: &str, b: &str) -> Option<usize> {
    if a.len() != b.len() {
        return None;
    }
    let mut at = a.bytes().zip(b.bytes()).enumerate().filter(|(_, (x, y))| x != y).map(|(i, _)| i);
    match (at.next(), at.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

/// Whether byte `at` of `name` lies in its file counter (the digits between the last '-' and the '.').
fn in_counter(name: &str, at: usize) -> bool {
    let Some(dash) = name.rfind('-') else { return false };
    let end = name[dash..].find('.').map_or(name.len(), |dot| dash + dot);
    at > dash && at < end && name.as_bytes()[dash + 1..end].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_neighbour_is_an_orphan_and_a_flipped_uuid_is_damage() {
        let live = "data-0b4c7e1a-98f2-4a39-b1de-2f6a9c3d5e71-8.parquet";
        let at = one_differing_byte(live, "data-0b4c7e1a-98f2-4a39-b1de-2f6a9c3d5e71-7.parquet").unwrap();
        assert!(in_counter(live, at));
        let at = one_differing_byte(live, "data-0b4c7e1a-98f2-4a39-b1de-2f6a9c3d5e70-8.parquet").unwrap();
        assert!(!in_counter(live, at));
        let at = one_differing_byte(live, "data-0b4c7e1a-98f2-4a39-b1de-2f6a9c3d5e71-8.parquex").unwrap();
        assert!(!in_counter(live, at));
        assert_eq!(one_differing_byte(live, live), None);
        assert_eq!(one_differing_byte("ab", "ba"), None);
    }
}
