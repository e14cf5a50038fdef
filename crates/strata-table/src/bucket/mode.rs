//! How a primary-key table places keys in buckets (Paimon's `BucketMode`), and which tables Strata can write.
//!
//! - **Fixed** (`bucket = N > 0`, `HASH_FIXED`): a key's bucket is the hash of its bucket key modulo N.
//! - **Dynamic** (`bucket = -1`, `HASH_DYNAMIC`, Paimon's default): a key stays in the bucket its partition's
//!   hash index put it in; a new key goes to a bucket with room (`crate::bucket::dynamic`). A primary key that
//!   does not hold every partition key is Paimon's cross-partition mode (`KEY_DYNAMIC`), which needs a global
//!   index Strata does not keep.
//! - **Postpone** (`bucket = -2`, `POSTPONE_MODE`): writers put rows in a `bucket-postpone` directory that batch
//!   reads skip; a compaction moves them into real buckets (`crate::bucket::postpone`).

use strata_spec::{Error, Result, TableSchema};

/// The bucket mode of a primary-key table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BucketMode {
    /// `bucket = N`: the bucket-key hash modulo N.
    Fixed(i32),
    /// `bucket = -1` with the partition keys inside the primary key: per-partition hash indexes.
    Dynamic,
    /// `bucket = -1` with a partition key outside the primary key: a key may move between partitions.
    CrossPartition,
    /// `bucket = -2`: postponed files, moved into real buckets by compaction.
    Postpone,
    /// An append table's `bucket = -1` (Paimon's `BUCKET_UNAWARE`): no bucket key, every row in bucket 0.
    Unaware,
}

/// The bucket number of postponed files (Paimon's `BucketMode.POSTPONE_BUCKET`), which also names their
/// directory `bucket-postpone` and is recorded as their `_TOTAL_BUCKETS`.
pub(crate) const POSTPONE_BUCKET: i32 = -2;

impl BucketMode {
    /// The mode of `schema`.
    pub(crate) fn of(schema: &TableSchema) -> Result<Self> {
        Ok(match schema.core_options().bucket()? {
            -1 if schema.primary_keys.is_empty() => BucketMode::Unaware,
            -1 if schema.partition_keys.iter().all(|k| schema.primary_keys.contains(k)) => BucketMode::Dynamic,
            -1 => BucketMode::CrossPartition,
            POSTPONE_BUCKET => BucketMode::Postpone,
            n => BucketMode::Fixed(n),
        })
    }
}

/// What a writer is opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WritePurpose {
    /// Writing rows (and compacting).
    Rows,
    /// Compacting only: postpone-bucket tables qualify too (their postponed rows move into real buckets).
    Compaction,
}

/// Refuses tables Strata cannot write for `purpose`, with an unsupported error saying why: `create` runs this
/// too, so that no table is created that every write would then refuse.
pub(crate) fn check_writable(schema: &TableSchema, purpose: WritePurpose) -> Result<()> {
    let options = schema.core_options();
    let append = schema.primary_keys.is_empty();
    match BucketMode::of(schema)? {
        BucketMode::Fixed(_) if append && options.bucket_key().is_none_or(|k| k.is_empty()) => {
            return Err(Error::invalid(
                "schema",
                "an append table with a bucket number needs a 'bucket-key' (the columns whose hash picks a row's bucket), as Paimon's; or bucket = -1 for an unaware-bucket table",
            ));
        }
        BucketMode::Postpone if append => {
            return Err(Error::unsupported(
                "bucket = -2 (postpone) in an append table: Paimon postpones primary-key tables only",
            ));
        }
        BucketMode::Fixed(_) | BucketMode::Dynamic | BucketMode::Unaware => {}
        BucketMode::CrossPartition => {
            return Err(Error::unsupported(format!(
                "bucket = -1 with a primary key {:?} that does not hold every partition key {:?}: that is Paimon's cross-partition update mode (a key may move between partitions, tracked by a global index Strata does not keep); put the partition keys into the primary key, or set a bucket number",
                schema.primary_keys, schema.partition_keys
            )));
        }
        BucketMode::Postpone if purpose == WritePurpose::Rows => {
            return Err(Error::unsupported(
                "writing rows to a postpone-bucket table (bucket = -2): Strata reads such tables and compacts their postponed files into real buckets (strata compact), but does not write postponed files",
            ));
        }
        BucketMode::Postpone => {}
    }
    let function = options.get("bucket-function.type").map(|f| f.trim().to_ascii_lowercase());
    if function.as_deref().is_some_and(|f| f != "default") {
        return Err(Error::unsupported(format!(
            "bucket-function.type = {}: Strata places keys with Paimon's default bucket function only",
            function.unwrap_or_default()
        )));
    }
    if options.get("index-file-in-data-file-dir").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Err(Error::unsupported(
            "index-file-in-data-file-dir = true: Strata writes index files into the table's index directory, where Paimon would not look for them",
        ));
    }
    for key in ["row-tracking.enabled", "data-evolution.enabled"] {
        if options.get(key).is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            // Such a table numbers every row (each file's `_FIRST_ROW_ID`, the snapshot's `nextRowId`); files
            // without numbers make Paimon's readers fail on the whole table.
            return Err(Error::unsupported(format!(
                "writing a table with {key} = true: Strata does not number rows (row tracking) yet, and files without row ids would make Paimon's readers fail on the table"
            )));
        }
    }
    use strata_spec::ChangelogProducer;
    if options.changelog_producer()? == ChangelogProducer::FullCompaction {
        // Writing without the changelog files such a table promises would silently starve its streaming
        // readers of these changes; refuse instead.
        return Err(Error::unsupported(format!(
            "writing a table with changelog-producer = full-compaction (merge-engine {}): Strata produces changelog files for input and lookup, not full-compaction, so streaming readers would miss these changes (batch reads are unaffected)",
            options.get(strata_spec::options::MERGE_ENGINE).unwrap_or("deduplicate").trim()
        )));
    }
    // What the bucket writers need (file format, merge engine, sizes) must be there too.
    strata_lsm::WriterOptions::from_schema(schema)?;
    strata_format::KeyValueLayout::new(schema)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use strata_spec::{DataType, ErrorKind};

    fn schema(pk: &[&str], partition: &[&str], options: &[(&str, &str)]) -> TableSchema {
        let options: BTreeMap<String, String> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        TableSchema::new(
            vec![("id".into(), DataType::bigint()), ("p".into(), DataType::bigint()), ("v".into(), DataType::bigint())],
            partition.iter().map(|s| s.to_string()).collect(),
            pk.iter().map(|s| s.to_string()).collect(),
            options,
            0,
        )
        .unwrap()
    }

    fn kind(s: &TableSchema, purpose: WritePurpose) -> Option<ErrorKind> {
        check_writable(s, purpose).err().map(|e| e.kind())
    }

    #[test]
    fn modes_and_what_strata_writes() {
        let dynamic = schema(&["id", "p"], &["p"], &[("bucket", "-1")]);
        assert_eq!(BucketMode::of(&dynamic).ok(), Some(BucketMode::Dynamic));
        assert_eq!(kind(&dynamic, WritePurpose::Rows), None);
        // Paimon's default bucket is -1 too.
        assert_eq!(BucketMode::of(&schema(&["id"], &[], &[])).ok(), Some(BucketMode::Dynamic));
        // A cross-partition schema does not even validate (Strata neither reads nor writes it).
        let cross = TableSchema::new(
            vec![("id".into(), DataType::bigint()), ("p".into(), DataType::bigint())],
            vec!["p".into()],
            vec!["id".into()],
            BTreeMap::from([("bucket".to_string(), "-1".to_string())]),
            0,
        );
        assert_eq!(cross.err().map(|e| e.kind()), Some(ErrorKind::Unsupported));
        let postpone = schema(&["id"], &[], &[("bucket", "-2")]);
        assert_eq!(kind(&postpone, WritePurpose::Rows), Some(ErrorKind::Unsupported));
        assert_eq!(kind(&postpone, WritePurpose::Compaction), None);
        // Append tables: unaware buckets, or fixed ones with a bucket key.
        assert_eq!(BucketMode::of(&schema(&[], &["p"], &[("bucket", "-1")])).ok(), Some(BucketMode::Unaware));
        assert_eq!(kind(&schema(&[], &["p"], &[("bucket", "-1")]), WritePurpose::Rows), None);
        assert_eq!(kind(&schema(&[], &[], &[("bucket", "2")]), WritePurpose::Rows), Some(ErrorKind::Invalid));
        assert_eq!(kind(&schema(&[], &[], &[("bucket", "2"), ("bucket-key", "id")]), WritePurpose::Rows), None);
        assert_eq!(kind(&schema(&[], &[], &[("bucket", "-2")]), WritePurpose::Rows), Some(ErrorKind::Unsupported));
        let fixed = |o: &[(&str, &str)]| schema(&["id"], &[], &[&[("bucket", "2")], o].concat());
        assert_eq!(kind(&fixed(&[]), WritePurpose::Rows), None);
        for bad in [
            ("file.format", "avro"),
            ("bucket-function.type", "mod"),
            ("index-file-in-data-file-dir", "true"),
            ("changelog-producer", "full-compaction"),
        ] {
            assert_eq!(kind(&fixed(&[bad]), WritePurpose::Rows), Some(ErrorKind::Unsupported), "{bad:?}");
        }
    }
}
