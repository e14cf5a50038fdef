//! Dynamic buckets (`bucket = -1`): Paimon's `HASH_DYNAMIC` bucket assignment for primary-key tables.
//!
//! Each (partition, bucket) has a hash index file (`strata_spec::hash_index_file`) listing the hashes of the
//! trimmed primary keys it holds. A key whose hash a bucket of its partition lists goes there; a new key goes
//! to the lowest bucket with fewer than `dynamic-bucket.target-row-num` hashes, else to a new bucket (at most
//! `dynamic-bucket.max-buckets`; past that, to a random one). This module is Paimon's `HashBucketAssigner`,
//! `PartitionIndex` and `DynamicBucketIndexMaintainer` in one: the assigner's per-partition state already
//! holds every bucket's hashes, so a bucket's new hash index file (the whole list, as Java rewrites it) is
//! written from it.
//!
//! `dynamic-bucket.initial-buckets` = k behaves as Paimon's k parallel assigners do: a new key's assigner is
//! `BucketAssigner.computeAssigner(partition hash, key hash, k, k)` and it only opens buckets `b` with
//! `b % k` equal to its id, so k buckets of a partition fill at once.
//!
//! Two writers assigning new keys to one partition concurrently could put a key in two buckets, or drop each
//! other's hashes when both rewrite a bucket's file (Paimon allows one writing job per dynamic table). So a
//! commit message that carries a new hash index file also carries the partition's hash index files its
//! assignments were based on, and the commit refuses it, as a retryable conflict, when the latest snapshot
//! lists others (`crate::commit::check::hash_index_unchanged`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rand::seq::IndexedRandom;
use strata_spec::{
    hash_index_file, BinaryRow, CoreOptions, Error, IndexFileMeta, IndexManifestEntry, Result, HASH_INDEX,
};

use crate::table::Table;
use strata_spec::HashIndexListing;

/// The largest bucket id Paimon's assigner hands out (Java keeps bucket ids as `short`).
const MAX_BUCKET_ID: i32 = i16::MAX as i32 - 1;

/// `BucketAssigner.computeAssigner(partitionHash, keyHash, k, k)`: which of k assigners takes a new key.
pub(crate) fn assigner_of(partition_hash: i32, key_hash: i32, assigners: i32) -> i32 {
    let start = (partition_hash % assigners).abs();
    let id = (key_hash % assigners).abs();
    (start + id) % assigners
}

/// The dynamic-bucket options.
#[derive(Debug, Clone, Copy)]
struct Limits {
    target_row_num: i64,
    max_buckets: i32,
    assigners: i32,
}

/// One bucket's hashes, as its hash index file must list them.
#[derive(Debug, Default)]
struct BucketHashes {
    hashes: Vec<i32>,
    /// Gained hashes since its file was last written.
    modified: bool,
}

/// One partition's assignment state (Paimon's `PartitionIndex`).
#[derive(Debug, Default)]
struct PartitionIndex {
    hash_to_bucket: HashMap<i32, i32>,
    buckets: BTreeMap<i32, BucketHashes>,
    /// Buckets that may still have room, with their hash counts (Paimon's `nonFullBucketInformation`).
    non_full: BTreeMap<i32, i64>,
    /// Assigners whose buckets reached `dynamic-bucket.max-buckets`.
    exhausted: BTreeSet<i32>,
    /// The partition's hash index files in the latest snapshot as far as this writer knows.
    committed: BTreeMap<i32, String>,
    /// Files this writer handed to commits it has not seen land yet.
    handed_over: BTreeMap<i32, String>,
    /// Written to since the last prepare.
    accessed: bool,
}

impl PartitionIndex {
    fn listing(files: &BTreeMap<i32, String>) -> HashIndexListing {
        files.iter().map(|(b, n)| (*b, n.clone())).collect()
    }

    /// The bucket of `hash`, assigning it when new (`assigner` of `limits.assigners` takes it).
    fn assign(&mut self, hash: i32, assigner: i32, limits: Limits) -> Result<i32> {
        self.accessed = true;
        if let Some(&b) = self.hash_to_bucket.get(&hash) {
            return Ok(b);
        }
        let mine = |b: i32| b % limits.assigners == assigner;
        let bucket = match self.bucket_with_room(&mine, limits.target_row_num) {
            Some(b) => b,
            None => self.new_bucket(&mine, assigner, limits)?,
        };
        self.hash_to_bucket.insert(hash, bucket);
        let state = self.buckets.entry(bucket).or_default();
        state.hashes.push(hash);
        state.modified = true;
        Ok(bucket)
    }

    /// The lowest bucket of the assigner with room, counting the new hash in; full ones are forgotten.
    fn bucket_with_room(&mut self, mine: &dyn Fn(i32) -> bool, target: i64) -> Option<i32> {
        let candidates: Vec<i32> = self.non_full.keys().copied().filter(|b| mine(*b)).collect();
        for b in candidates {
            let count = self.non_full.get(&b).copied().unwrap_or(target);
            if count < target {
                self.non_full.insert(b, count + 1);
                return Some(b);
            }
            self.non_full.remove(&b);
        }
        None
    }

    /// A bucket the assigner has not used yet, or, past `max-buckets`, a random one of its buckets.
    fn new_bucket(&mut self, mine: &dyn Fn(i32) -> bool, assigner: i32, limits: Limits) -> Result<i32> {
        let max_id = if limits.max_buckets == -1 { MAX_BUCKET_ID } else { limits.max_buckets - 1 };
        if !self.exhausted.contains(&assigner) {
            if let Some(b) = (0..=max_id).find(|b| mine(*b) && !self.buckets.contains_key(b)) {
                self.non_full.insert(b, 1);
                return Ok(b);
            }
            if limits.max_buckets == -1 {
                return Err(Error::unsupported(format!(
                    "a partition would need more than {} dynamic buckets; raise dynamic-bucket.target-row-num ({})",
                    MAX_BUCKET_ID + 1,
                    limits.target_row_num
                )));
            }
            self.exhausted.insert(assigner);
        }
        let own: Vec<i32> = self.buckets.keys().copied().filter(|b| mine(*b)).collect();
        own.choose(&mut rand::rng()).copied().ok_or_else(|| {
            Error::invalid(
                "dynamic buckets",
                format!(
                    "assigner {assigner} of {} has no bucket below dynamic-bucket.max-buckets = {}",
                    limits.assigners, limits.max_buckets
                ),
            )
        })
    }
}

/// The dynamic-bucket assignment of one writer: the partitions it touched.
#[derive(Debug)]
pub(crate) struct DynamicBuckets {
    limits: Limits,
    partitions: HashMap<Vec<u8>, PartitionIndex>,
}

impl DynamicBuckets {
    /// An empty assignment under the table's options.
    pub(crate) fn new(options: &CoreOptions) -> Result<Self> {
        let max_buckets = options.dynamic_bucket_max_buckets()?;
        let mut assigners = options.dynamic_bucket_initial_buckets()?.unwrap_or(1);
        if max_buckets != -1 {
            // Paimon caps its assigner parallelism by the bucket limit too.
            assigners = assigners.min(max_buckets);
        }
        let limits = Limits { target_row_num: options.dynamic_bucket_target_row_num()?, max_buckets, assigners };
        Ok(DynamicBuckets { limits, partitions: HashMap::new() })
    }

    /// Forgets everything (the writer's commit was refused; the next write starts from the latest snapshot).
    pub(crate) fn clear(&mut self) {
        self.partitions.clear();
    }

    /// Whether `partition` (serialized) is loaded.
    pub(crate) fn is_loaded(&self, partition: &[u8]) -> bool {
        self.partitions.contains_key(partition)
    }

    /// Loads a partition's hash index files (`entries`: a snapshot's index manifest). Every bucket holding
    /// data (`data_buckets`) must have one: keys of a bucket without its index could otherwise go to a
    /// second bucket.
    pub(crate) fn load(
        &mut self,
        table: &Table,
        partition: &BinaryRow,
        entries: &[IndexManifestEntry],
        data_buckets: &BTreeSet<i32>,
    ) -> Result<()> {
        let _span = tracing::info_span!("load_hash_index", partition = ?partition).entered();
        let mut index = PartitionIndex::default();
        for e in entries.iter().filter(|e| &e.partition == partition && e.index_file.index_type == HASH_INDEX) {
            let path = table.index_file_path(&e.index_file)?;
            // Paimon keeps bucket ids as `short`: up to 32767 (pypaimon opens that one too).
            if e.bucket < 0 || e.bucket > i32::from(i16::MAX) || index.committed.contains_key(&e.bucket) {
                return Err(Error::corrupt_file(
                    path,
                    format!("bucket {} has a second or out-of-range hash index file", e.bucket),
                ));
            }
            let bytes = table.io().read(&path)?;
            let hashes = hash_index_file::check_name(&e.index_file.file_name, &bytes)
                .and_then(|()| hash_index_file::decode(&bytes))
                .and_then(|h| hash_index_file::check_against_meta(&e.index_file, &h).map(|()| h))
                .map_err(|err| err.in_file(&path))?;
            for &h in &hashes {
                if let Some(other) = index.hash_to_bucket.insert(h, e.bucket).filter(|b| *b != e.bucket) {
                    return Err(Error::corrupt_file(path, format!(
                            "key hash {h} is indexed in buckets {other} and {} of one partition: a key may be in two buckets",
                            e.bucket
                        )));
                }
            }
            index.non_full.insert(e.bucket, hashes.len() as i64);
            index.buckets.insert(e.bucket, BucketHashes { hashes, modified: false });
            index.committed.insert(e.bucket, e.index_file.file_name.clone());
        }
        if let Some(b) = data_buckets.iter().find(|b| !index.committed.contains_key(b)) {
            return Err(Error::unsupported(format!(
                "bucket {b} of a dynamic-bucket partition holds data files but no hash index file, so Strata cannot tell which keys it holds; rewrite the partition with the engine that wrote it"
            )));
        }
        self.partitions.insert(partition.serialize(), index);
        Ok(())
    }

    /// The bucket of a key of the loaded partition `partition` (serialized, with its `BinaryRow` hash).
    pub(crate) fn assign(&mut self, partition: &[u8], partition_hash: i32, key_hash: i32) -> Result<i32> {
        let limits = self.limits;
        let index = self
            .partitions
            .get_mut(partition)
            .ok_or_else(|| Error::invalid("dynamic buckets", "assigning in a partition that is not loaded"))?;
        index.assign(key_hash, assigner_of(partition_hash, key_hash, limits.assigners), limits)
    }

    /// Forgets partitions not written to since the last call whose files all landed (Paimon's
    /// `HashBucketAssigner.prepareCommit`), so a long-lived writer's memory does not grow with every
    /// partition it ever touched (yesterday's partitions); a later write there loads it again.
    pub(crate) fn forget_idle_partitions(&mut self) {
        self.partitions
            .retain(|_, p| p.accessed || !p.handed_over.is_empty() || p.buckets.values().any(|b| b.modified));
        for p in self.partitions.values_mut() {
            p.accessed = false;
        }
    }

    /// Whether any partition has files handed to commits this writer has not seen land.
    pub(crate) fn awaits_commits(&self) -> bool {
        self.partitions.values().any(|p| !p.handed_over.is_empty())
    }

    /// Moves what this writer knows of the latest snapshot forward: where the latest index manifest
    /// (`entries`) lists exactly what this writer knew plus what it handed over, those commits landed. Where
    /// it lists anything else, another writer changed the partition: nothing is updated, and the commit
    /// check refuses this writer's next new keys there.
    pub(crate) fn observe(&mut self, entries: &[IndexManifestEntry]) {
        let mut latest: HashMap<Vec<u8>, BTreeMap<i32, String>> = HashMap::new();
        for e in entries.iter().filter(|e| e.index_file.index_type == HASH_INDEX) {
            latest.entry(e.partition.serialize()).or_default().insert(e.bucket, e.index_file.file_name.clone());
        }
        for (key, index) in self.partitions.iter_mut().filter(|(_, p)| !p.handed_over.is_empty()) {
            let current = latest.remove(key).unwrap_or_default();
            let mut expected = index.committed.clone();
            expected.extend(index.handed_over.iter().map(|(b, n)| (*b, n.clone())));
            if current == expected {
                index.committed = current;
                index.handed_over.clear();
            }
        }
    }

    /// When `bucket` of `partition` gained hashes since its index file was written: writes its new hash
    /// index file (every hash of the bucket, sorted) under `file_name()` and returns it with the partition's
    /// hash index files this writer's assignments were based on.
    pub(crate) fn write_if_modified(
        &mut self,
        table: &Table,
        partition: &BinaryRow,
        bucket: i32,
        file_name: impl FnOnce() -> String,
    ) -> Result<Option<(IndexFileMeta, HashIndexListing)>> {
        let Some(index) = self.partitions.get_mut(&partition.serialize()) else { return Ok(None) };
        let Some(state) = index.buckets.get_mut(&bucket).filter(|s| s.modified) else { return Ok(None) };
        let mut hashes = state.hashes.clone();
        hashes.sort_unstable();
        let bytes = hash_index_file::encode(&hashes);
        let name = hash_index_file::name_with_checksum(&file_name(), &bytes);
        let path = table.path_factory().index_path(&name);
        let _span = tracing::debug_span!("write_hash_index", path, hashes = hashes.len()).entered();
        table.io().write(&path, &bytes)?;
        state.modified = false;
        index.handed_over.insert(bucket, name.clone());
        Ok(Some((hash_index_file::index_file_meta(name, hashes.len()), PartitionIndex::listing(&index.committed))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(target: i64, max: i32, assigners: i32) -> Limits {
        Limits { target_row_num: target, max_buckets: max, assigners }
    }

    #[test]
    fn keys_fill_buckets_in_order_and_stay_where_they_are() {
        let mut p = PartitionIndex::default();
        let l = limits(3, -1, 1);
        let got: Vec<i32> = (0..7).map(|h| p.assign(h, 0, l).unwrap()).collect();
        assert_eq!(got, vec![0, 0, 0, 1, 1, 1, 2]);
        // Known hashes keep their bucket, whatever the counts.
        assert_eq!(p.assign(4, 0, l).unwrap(), 1);
        assert_eq!(p.buckets[&1].hashes, vec![3, 4, 5]);
        assert!(p.buckets.values().all(|b| b.modified));
    }

    #[test]
    fn buckets_with_room_after_a_reload_take_new_keys_first() {
        let mut p = PartitionIndex {
            non_full: BTreeMap::from([(0, 3), (1, 1)]),
            buckets: BTreeMap::from([(0, BucketHashes::default()), (1, BucketHashes::default())]),
            ..Default::default()
        };
        let l = limits(3, -1, 1);
        assert_eq!(p.assign(10, 0, l).unwrap(), 1);
        assert_eq!(p.assign(11, 0, l).unwrap(), 1);
        assert_eq!(p.assign(12, 0, l).unwrap(), 2);
    }

    #[test]
    fn max_buckets_caps_new_buckets() {
        let mut p = PartitionIndex::default();
        let l = limits(1, 2, 1);
        assert_eq!(p.assign(1, 0, l).unwrap(), 0);
        assert_eq!(p.assign(2, 0, l).unwrap(), 1);
        for h in 3..40 {
            assert!((0..2).contains(&p.assign(h, 0, l).unwrap()));
        }
        assert_eq!(p.buckets.len(), 2);
    }

    #[test]
    fn several_assigners_open_their_own_buckets() {
        let mut p = PartitionIndex::default();
        let l = limits(1, -1, 3);
        // Assigner 1 opens buckets 1, 4, 7...; assigner 2 opens 2, 5...
        assert_eq!(p.assign(10, 1, l).unwrap(), 1);
        assert_eq!(p.assign(11, 1, l).unwrap(), 4);
        assert_eq!(p.assign(12, 2, l).unwrap(), 2);
        assert_eq!(p.assign(13, 0, l).unwrap(), 0);
        assert_eq!(p.assign(14, 0, l).unwrap(), 3);
    }

    #[test]
    fn idle_partitions_are_forgotten_once_their_files_landed() {
        let mut d = DynamicBuckets { limits: limits(2, -1, 1), partitions: HashMap::new() };
        d.partitions.insert(vec![1], PartitionIndex::default());
        d.partitions.insert(vec![2], PartitionIndex::default());
        d.assign(&[1], 0, 7).unwrap();
        d.partitions.get_mut(&[2][..]).unwrap().handed_over.insert(0, "index-x-0".into());
        // Partition 1 has a modified bucket, partition 2 a file not seen landing: both stay.
        d.forget_idle_partitions();
        assert_eq!(d.partitions.len(), 2);
        d.partitions.get_mut(&[1][..]).unwrap().buckets.values_mut().for_each(|b| b.modified = false);
        d.partitions.get_mut(&[2][..]).unwrap().handed_over.clear();
        assert_eq!(d.assign(&[1], 0, 7).unwrap(), 0);
        // Partition 1 was written since the last call; partition 2 was not.
        d.forget_idle_partitions();
        assert_eq!(d.partitions.keys().cloned().collect::<Vec<_>>(), vec![vec![1]]);
        d.forget_idle_partitions();
        assert!(d.partitions.is_empty());
    }

    #[test]
    fn assigner_ids_follow_java() {
        // Java: Math.abs(p % k) + Math.abs(h % k), modulo k.
        assert_eq!(assigner_of(7, 5, 3), (1 + 2) % 3);
        assert_eq!(assigner_of(-7, -5, 3), (1 + 2) % 3);
        assert_eq!(assigner_of(i32::MIN, i32::MIN, 4), 0);
        assert_eq!(assigner_of(123, 456, 1), 0);
    }
}
