//! Which option keys a table may be given, which values go together, and which options may not change once
//! a table holds data (Paimon's `SchemaManager` / `SchemaValidation` rules, made stricter where a change
//! would make stored data read differently).
//!
//! These rules run when a table is created or altered, never when it is opened: other engines write keys
//! Strata does not know, and a table must stay readable whatever it holds.
//!
//! Options that may not change once the table has a snapshot:
//! - Paimon's immutable options: `type` (never), `bucket-key`, `bucket-function.type`,
//!   `data-file.path-directory`, `merge-engine`, `sequence.snapshot-ordering`,
//!   `aggregation.remove-record-on-delete`, `partial-update.remove-record-on-delete`,
//!   `partial-update.remove-record-on-sequence-group`, `rowkind.field`, `primary-key`, `primary-key.nullable`,
//!   `partition`, `dynamic-bucket.initial-buckets`, `force-lookup`, `row-tracking.enabled`,
//!   `data-evolution.enabled`, `index-file-in-data-file-dir`, `blob-field`, `blob-descriptor-field`,
//!   `blob-view-field`, `pk-clustering-override`.
//! - Stricter in Strata: `bucket` (every key's bucket changes; needs a rescale that rewrites the files),
//!   `sequence.field` and `sequence.field.sort-order` (they order stored records), `partition.default-name`
//!   (partition directories are already named with the old one), `fields.default-aggregate-function` and
//!   every `fields.<column>.*` key but `default-value` (merge-on-read would re-merge stored records with the
//!   new functions), `ignore-delete` and its `partial-update.`/`first-row.` aliases in either direction
//!   (merge-on-read drops stored deletes when it is on), and `ignore-update-before` from true to false.
//!
//! `deletion-vectors.enabled` has its own path (a full compaction first, `Table::alter_options`);
//! `file.format`, compression, compaction and retention options may change freely (readers go by the file
//! extension; the other options govern future work only).

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::options::{self as o, CoreOptions, MergeEngine};
use crate::schema::types::TypeRoot;
use crate::schema::TableSchema;

/// How `create` and `alter` treat option keys that are neither Strata's nor a known Paimon option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OptionPolicy {
    /// Keep such keys as they are instead of refusing them (CLI: `--allow-unknown-options`).
    pub allow_unknown_options: bool,
}

/// Keys Strata reads.
const STRATA_KEYS: &[&str] = &[
    o::BUCKET,
    o::BUCKET_KEY,
    o::FILE_FORMAT,
    o::FILE_COMPRESSION,
    o::MANIFEST_COMPRESSION,
    o::MANIFEST_FORMAT,
    o::MANIFEST_TARGET_FILE_SIZE,
    o::TARGET_FILE_SIZE,
    o::READ_BATCH_SIZE,
    o::WRITE_BUFFER_SIZE,
    o::PARQUET_BLOCK_SIZE,
    o::WRITE_BUFFER_SPILLABLE,
    o::WRITE_BUFFER_SPILL_MAX_DISK_SIZE,
    o::SPILL_COMPRESSION,
    o::LOCAL_SORT_MAX_NUM_FILE_HANDLES,
    o::LOOKUP_CACHE_MAX_MEMORY_SIZE,
    o::LOOKUP_CACHE_MAX_DISK_SIZE,
    o::LOOKUP_CACHE_SPILL_COMPRESSION,
    o::LOOKUP_CACHE_BLOOM_FILTER_ENABLED,
    o::LOOKUP_CACHE_BLOOM_FILTER_FPP,
    o::NUM_SORTED_RUN_COMPACTION_TRIGGER,
    o::NUM_SORTED_RUN_STOP_TRIGGER,
    o::NUM_LEVELS,
    o::COMPACTION_MAX_SIZE_AMPLIFICATION_PERCENT,
    o::COMPACTION_SIZE_RATIO,
    o::COMPACTION_DELETE_RATIO_THRESHOLD,
    o::DELETION_VECTORS_ENABLED,
    o::DATA_FILE_THIN_MODE,
    o::DELETION_VECTORS_BITMAP64,
    o::DELETION_VECTORS_MERGE_ON_READ,
    o::DELETION_VECTORS_MODIFIABLE,
    o::DELETION_VECTOR_INDEX_FILE_TARGET_SIZE,
    o::CHANGELOG_PRODUCER,
    o::MERGE_ENGINE,
    o::SEQUENCE_FIELD,
    o::ROWKIND_FIELD,
    o::IGNORE_DELETE,
    o::LOOKUP_WAIT,
    o::LOOKUP_COMPACT,
    o::LOOKUP_COMPACT_MAX_INTERVAL,
    o::LOOKUP_COMPACT_SIZE_RATIO,
    o::COMMIT_MAX_RETRIES,
    o::COMMIT_TIMEOUT,
    o::FOREIGN_COMPACTION_WINDOW,
    o::COMMIT_MIN_RETRY_WAIT,
    o::COMMIT_MAX_RETRY_WAIT,
    o::SNAPSHOT_NUM_RETAINED_MIN,
    o::SNAPSHOT_NUM_RETAINED_MAX,
    o::SNAPSHOT_TIME_RETAINED,
    o::SOURCE_SPLIT_TARGET_SIZE,
    o::SOURCE_SPLIT_OPEN_FILE_COST,
    o::PARTITION_DEFAULT_NAME,
    o::DYNAMIC_BUCKET_TARGET_ROW_NUM,
    o::DYNAMIC_BUCKET_INITIAL_BUCKETS,
    o::DYNAMIC_BUCKET_MAX_BUCKETS,
    o::POSTPONE_DEFAULT_BUCKET_NUM,
    o::POSTPONE_TARGET_ROW_NUM_PER_BUCKET,
    o::POSTPONE_TARGET_SIZE_PER_BUCKET,
    "fields.default-aggregate-function",
    "partial-update.remove-record-on-delete",
    "aggregation.remove-record-on-delete",
    "partial-update.ignore-delete",
    "first-row.ignore-delete",
    "force-lookup",
    "changelog-producer.lookup-wait",
];

/// Paimon options Strata does not use and keeps untouched (a table Flink or Spark created must still alter).
const PAIMON_KEYS: &[&str] = &[
    "type",
    "path",
    "comment",
    "owner",
    "primary-key",
    "partition",
    "primary-key.nullable",
    "bucket-function.type",
    "bucket-append-ordered",
    "data-file.path-directory",
    "index-file-in-data-file-dir",
    "write-only",
    "write-buffer-for-append",
    "write-max-writers-to-spill",
    "write-manifest-cache",
    "sort-spill-threshold",
    "sort-spill-buffer-size",
    "sort-engine",
    "local-merge-buffer-size",
    "page-size",
    "cache-page-size",
    "async-file-write",
    "ignore-update-before",
    "partial-update.remove-record-on-sequence-group",
    "row-tracking.enabled",
    "data-evolution.enabled",
    "blob-field",
    "blob-descriptor-field",
    "blob-view-field",
    "pk-clustering-override",
    "consumer-id",
    "branch",
    "auto-create",
    "metadata.stats-mode",
    "stats-dense-store",
    "visibility-callback.enabled",
];

/// Prefixes of Paimon option families Strata keeps untouched.
const PAIMON_PREFIXES: &[&str] = &[
    "snapshot.",
    "scan.",
    "sink.",
    "metastore.",
    "tag.",
    "consumer.",
    "changelog.",
    "changelog-file.",
    "changelog-producer.",
    "partition.",
    "file-index.",
    "file.",
    "data-file.",
    "lookup.",
    "compaction.",
    "full-compaction.",
    "commit.",
    "manifest.",
    "deletion-vectors.",
    "sequence.",
    "dynamic-bucket.",
    "cross-partition-upsert.",
    "record-level.",
    "streaming-read",
    "continuous.",
    "incremental-between",
    "read.",
    "write.",
    "orc.",
    "parquet.",
    "avro.",
    "format-table.",
    "global-index.",
    "clustering.",
    "zorder.",
    "postpone.",
    "end-input.",
];

/// Aggregate functions Strata merges with (`fields.<column>.aggregate-function`).
const AGG_FUNCTIONS: &[&str] = &[
    "sum",
    "min",
    "max",
    "count",
    "last_value",
    "last_non_null_value",
    "first_value",
    "first_non_null_value",
    "bool_and",
    "bool_or",
];

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The known key nearest to `key`, if it is close enough to be a typo of it.
fn nearest(key: &str, candidates: &[&'static str], max: usize) -> Option<&'static str> {
    candidates.iter().map(|c| (edit_distance(key, c), *c)).filter(|(d, _)| *d <= max).min().map(|(_, c)| c)
}

/// Whether `key` is a `fields.<column>.<property>` key or one of the table-level `fields.` keys.
fn is_field_key(key: &str) -> bool {
    key.strip_prefix("fields.").is_some_and(|rest| rest.contains('.') || rest == "default-aggregate-function")
}

/// Refuses keys that are neither Strata's nor a Paimon option (typos of known keys are refused even when
/// they fall in a Paimon family), with a "did you mean", unless `policy` allows them.
pub fn check_keys<'a>(keys: impl IntoIterator<Item = &'a String>, policy: OptionPolicy) -> Result<()> {
    if policy.allow_unknown_options {
        return Ok(());
    }
    for key in keys {
        let key = key.as_str();
        if STRATA_KEYS.contains(&key) || PAIMON_KEYS.contains(&key) || is_field_key(key) {
            continue;
        }
        let typo = nearest(key, STRATA_KEYS, (key.len() / 5).clamp(1, 2));
        if typo.is_none() && PAIMON_PREFIXES.iter().any(|p| key.starts_with(p)) {
            continue;
        }
        let all: Vec<&'static str> = STRATA_KEYS.iter().chain(PAIMON_KEYS).copied().collect();
        let hint = match typo.or_else(|| nearest(key, &all, (key.len() / 3).max(2))) {
            Some(k) => format!("; did you mean '{k}'?"),
            None => String::new(),
        };
        return Err(Error::invalid(
            format!("option '{key}'"),
            format!(
                "unknown option '{key}'{hint} (to keep a key Strata does not know, allow unknown options: --allow-unknown-options, OptionPolicy::allow_unknown_options)"
            ),
        ));
    }
    Ok(())
}

fn column_type<'s>(schema: &'s TableSchema, key: &str, name: &str) -> Result<&'s TypeRoot> {
    schema
        .fields
        .iter()
        .find(|f| f.name == name)
        .map(|f| &f.data_type.root)
        .ok_or_else(|| Error::invalid(format!("option '{key}'"), format!("'{name}' is not a column")))
}

/// Values and combinations a new or altered schema must satisfy beyond [`CoreOptions::validate`] (which
/// also runs when a table is opened).
pub fn check_options(schema: &TableSchema) -> Result<()> {
    let options: CoreOptions = schema.core_options();
    let map: &BTreeMap<String, String> = options.as_map();
    for key in ["primary-key", "partition"] {
        if map.contains_key(key) {
            return Err(Error::invalid(
                format!("option '{key}'"),
                "primary and partition keys are part of the schema, not options (strata create --primary-key, --partition-keys)",
            ));
        }
    }
    if let Some(f) = options.rowkind_field() {
        if !matches!(column_type(schema, o::ROWKIND_FIELD, &f)?, TypeRoot::Char(_) | TypeRoot::VarChar(_)) {
            return Err(Error::invalid(
                format!("option '{}'", o::ROWKIND_FIELD),
                format!("'{f}' is not a string column"),
            ));
        }
    }
    for f in options.sequence_field() {
        column_type(schema, o::SEQUENCE_FIELD, &f)?;
    }
    check_field_keys(schema, map)?;
    check_bucket_options(&options)?;
    if let Some(bk) = options.bucket_key() {
        for k in &bk {
            if !schema.primary_keys.is_empty() && !schema.trimmed_primary_keys().contains(k) {
                return Err(Error::invalid(
                    format!("option '{}'", o::BUCKET_KEY),
                    format!("'{k}' is not in the primary key without partition keys (Paimon's rule)"),
                ));
            }
            if schema.partition_keys.contains(k) {
                return Err(Error::invalid(format!("option '{}'", o::BUCKET_KEY), format!("'{k}' is a partition key")));
            }
        }
    }
    if let Some(f) = options.get(o::MANIFEST_FORMAT) {
        if !f.trim().eq_ignore_ascii_case("avro") {
            return Err(Error::invalid(
                format!("option '{}'", o::MANIFEST_FORMAT),
                format!("'{f}': Strata reads and writes avro manifests only"),
            ));
        }
    }
    if options.merge_engine()? == MergeEngine::FirstRow && !options.sequence_field().is_empty() {
        return Err(Error::invalid(
            format!("option '{}'", o::SEQUENCE_FIELD),
            "the first-row merge engine takes no sequence field (Paimon's rule)",
        ));
    }
    Ok(())
}

/// The dynamic- and postpone-bucket options parse, and `bucket-key` goes with fixed buckets only: a
/// dynamic-bucket table assigns keys by their hash index, so a bucket key would mean nothing (Paimon's rule).
fn check_bucket_options(options: &CoreOptions) -> Result<()> {
    options.dynamic_bucket_target_row_num()?;
    options.dynamic_bucket_initial_buckets()?;
    options.dynamic_bucket_max_buckets()?;
    options.postpone_default_bucket_num()?;
    options.postpone_target_row_num_per_bucket()?;
    options.postpone_target_size_per_bucket()?;
    if options.bucket()? == -1 && options.get(o::BUCKET_KEY).is_some() {
        return Err(Error::invalid(
            format!("option '{}'", o::BUCKET_KEY),
            "cannot be set with bucket = -1 (dynamic buckets place keys by their hash index); remove it or set a bucket number (Paimon's rule)",
        ));
    }
    Ok(())
}

/// `fields.<columns>.<property>` must name columns; aggregate functions must be ones Strata merges with.
fn check_field_keys(schema: &TableSchema, map: &BTreeMap<String, String>) -> Result<()> {
    for (key, value) in map {
        let Some(rest) = key.strip_prefix("fields.") else { continue };
        let agg = if rest == "default-aggregate-function" {
            Some(value)
        } else if let Some((cols, property)) = rest.rsplit_once('.') {
            for c in cols.split(',') {
                column_type(schema, key, c.trim())?;
            }
            (property == "aggregate-function").then_some(value)
        } else {
            None
        };
        if let Some(f) = agg {
            if !AGG_FUNCTIONS.contains(&f.trim().to_ascii_lowercase().as_str()) {
                return Err(Error::unsupported(format!(
                    "aggregate function '{f}' (option '{key}'); Strata merges with {}",
                    AGG_FUNCTIONS.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// [`check_options`] on an altered schema, ignoring a failure the schema already had (a table another
/// engine wrote may hold values Strata cannot check; an unrelated change must still go through).
pub fn check_altered_options(before: &TableSchema, after: &TableSchema) -> Result<()> {
    match check_options(after) {
        Ok(()) => Ok(()),
        Err(e) if check_options(before).err().map(|b| b.to_string()) == Some(e.to_string()) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Keys whose change the table's stored data forbids, with why.
fn frozen_with_data(key: &str) -> Option<&'static str> {
    const PAIMON_IMMUTABLE: &[&str] = &[
        "bucket-key",
        "bucket-function.type",
        "data-file.path-directory",
        "merge-engine",
        "sequence.snapshot-ordering",
        "aggregation.remove-record-on-delete",
        "partial-update.remove-record-on-delete",
        "partial-update.remove-record-on-sequence-group",
        "rowkind.field",
        "primary-key.nullable",
        "dynamic-bucket.initial-buckets",
        "force-lookup",
        "row-tracking.enabled",
        "data-evolution.enabled",
        "index-file-in-data-file-dir",
        "blob-field",
        "blob-descriptor-field",
        "blob-view-field",
        "pk-clustering-override",
    ];
    if PAIMON_IMMUTABLE.contains(&key) {
        return Some("stored files were written under the old value (Paimon does not allow it either)");
    }
    match key {
        o::BUCKET => Some(
            "it moves keys to other buckets, so rows already written would be missed; changing it needs a rescale that rewrites every file, which Strata does not offer yet",
        ),
        o::SEQUENCE_FIELD | "sequence.field.sort-order" => {
            Some("stored records of a key would be ordered differently when merged")
        }
        o::PARTITION_DEFAULT_NAME => Some("partition directories are already named with the old default"),
        o::IGNORE_DELETE | "partial-update.ignore-delete" | "first-row.ignore-delete" => {
            Some("merging would treat the deletes already stored differently")
        }
        k if k.starts_with("fields.") && !k.ends_with(".default-value") => {
            Some("merging would combine the records already stored differently")
        }
        _ => None,
    }
}

/// The value a frozen key means: trimmed, its default when unset, lower-cased for enums and booleans (so
/// setting `merge-engine=deduplicate` on a table without the key changes nothing).
fn effective(key: &str, v: Option<&String>) -> Option<String> {
    let default = match key {
        o::MERGE_ENGINE => Some("deduplicate"),
        o::PARTITION_DEFAULT_NAME => Some("__DEFAULT_PARTITION__"),
        o::IGNORE_DELETE
        | "partial-update.ignore-delete"
        | "first-row.ignore-delete"
        | "ignore-update-before"
        | "force-lookup"
        | "aggregation.remove-record-on-delete"
        | "partial-update.remove-record-on-delete" => Some("false"),
        _ => None,
    };
    let v = v.map(|v| v.trim().to_string()).or_else(|| default.map(str::to_string));
    match (default, key) {
        (Some(_), k) if k != o::PARTITION_DEFAULT_NAME => v.map(|v| v.to_ascii_lowercase()),
        _ => v,
    }
}

/// Refuses option changes from `before` to `after` that are never allowed (`type`, `primary-key`,
/// `partition`) or, when the table has data (`snapshot` is its latest snapshot id), that would change how
/// the stored data reads. An empty table may change anything else, as in Paimon.
pub fn check_change(before: &TableSchema, after: &TableSchema, snapshot: Option<i64>) -> Result<()> {
    let keys: std::collections::BTreeSet<&String> = before.options.keys().chain(after.options.keys()).collect();
    for key in keys {
        let (old, new) = (before.options.get(key), after.options.get(key));
        if effective(key, old) == effective(key, new) {
            continue;
        }
        let show = |v: Option<&String>| v.map_or_else(|| "unset".to_string(), |v| format!("'{v}'"));
        let change = format!("cannot change from {} to {}", show(old), show(new));
        if matches!(key.as_str(), "type" | "primary-key" | "partition") {
            return Err(Error::invalid(format!("option '{key}'"), format!("{change}: not supported")));
        }
        let Some(id) = snapshot else { continue };
        let why = if key == "ignore-update-before" {
            let on = |v: Option<&String>| v.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
            (on(old) && !on(new)).then_some("updates-before already dropped cannot come back (Paimon's rule)")
        } else if key == o::BUCKET && before.core_options().bucket().ok() == after.core_options().bucket().ok() {
            None
        } else {
            frozen_with_data(key)
        };
        if let Some(why) = why {
            return Err(Error::invalid(
                format!("option '{key}'"),
                format!("{change} once the table has data (snapshot {id}): {why}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(keys: &[&str]) -> Result<()> {
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        check_keys(&keys, OptionPolicy::default())
    }

    #[test]
    fn known_and_paimon_keys_pass_typos_and_unknown_keys_do_not() {
        assert!(strict(&["bucket", "fields.v.aggregate-function", "sink.parallelism", "snapshot.expire.limit"]).is_ok());
        let e = strict(&["buckets"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("did you mean 'bucket'?"), "{e}");
        let e = strict(&["snapshot.num-retained.mim"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("did you mean 'snapshot.num-retained.min'?"), "{e}");
        assert!(strict(&["bogus.option"]).is_err());
        assert!(check_keys(&["bogus.option".to_string()], OptionPolicy { allow_unknown_options: true }).is_ok());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
