//! Where a table's files live and how they are named (Paimon's `FileStorePathFactory`).
//!
//! ```text
//! <table>/schema/schema-N
//! <table>/snapshot/snapshot-N, LATEST, EARLIEST
//! <table>/manifest/manifest-<uuid>-N, manifest-list-<uuid>-N, index-manifest-<uuid>-N
//! <table>/index/index-<uuid>-N
//! <table>/<k1>=<v1>/.../bucket-<b>/data-<uuid>-N.<format>
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use strata_io::join;
use strata_spec::{BinaryRow, DataField, Result};

/// Names and locates a table's files. Each instance draws one UUID and counts the files it names, so
/// names from different writers never collide.
#[derive(Debug)]
pub struct PathFactory {
    table: String,
    uuid: String,
    manifest_counter: AtomicU64,
    manifest_list_counter: AtomicU64,
    index_manifest_counter: AtomicU64,
    index_counter: AtomicU64,
}

impl PathFactory {
    /// A factory for the table at `table`.
    pub fn new(table: &str) -> Self {
        PathFactory {
            table: table.trim_end_matches('/').to_string(),
            uuid: uuid::Uuid::new_v4().to_string(),
            manifest_counter: AtomicU64::new(0),
            manifest_list_counter: AtomicU64::new(0),
            index_manifest_counter: AtomicU64::new(0),
            index_counter: AtomicU64::new(0),
        }
    }

    /// The table directory.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// `<table>/snapshot`
    pub fn snapshot_dir(&self) -> String {
        join(&self.table, "snapshot")
    }

    /// `<table>/schema`
    pub fn schema_dir(&self) -> String {
        join(&self.table, "schema")
    }

    /// `<table>/manifest`
    pub fn manifest_dir(&self) -> String {
        join(&self.table, "manifest")
    }

    /// `<table>/index`
    pub fn index_dir(&self) -> String {
        join(&self.table, "index")
    }

    /// Path of a manifest, manifest list or index manifest by name.
    pub fn manifest_path(&self, name: &str) -> String {
        join(&self.manifest_dir(), name)
    }

    /// Path of an index file by name.
    pub fn index_path(&self, name: &str) -> String {
        join(&self.index_dir(), name)
    }

    fn next(&self, prefix: &str, counter: &AtomicU64) -> String {
        format!("{prefix}{}-{}", self.uuid, counter.fetch_add(1, Ordering::Relaxed))
    }

    /// A fresh manifest file name.
    pub fn new_manifest_name(&self) -> String {
        self.next("manifest-", &self.manifest_counter)
    }

    /// A fresh manifest list name.
    pub fn new_manifest_list_name(&self) -> String {
        self.next("manifest-list-", &self.manifest_list_counter)
    }

    /// A fresh index manifest name.
    pub fn new_index_manifest_name(&self) -> String {
        self.next("index-manifest-", &self.index_manifest_counter)
    }

    /// A fresh index file name.
    pub fn new_index_file_name(&self) -> String {
        self.next("index-", &self.index_counter)
    }

    /// `<table>/<partition path>/bucket-<b>`; postponed files (bucket -2) are in `bucket-postpone`, as
    /// Paimon's `FileStorePathFactory.relativeBucketPath` names it.
    pub fn bucket_dir(&self, partition_path: &str, bucket: i32) -> String {
        let b = if bucket == crate::bucket::mode::POSTPONE_BUCKET {
            "bucket-postpone".to_string()
        } else {
            format!("bucket-{bucket}")
        };
        if partition_path.is_empty() {
            join(&self.table, &b)
        } else {
            join(&join(&self.table, partition_path), &b)
        }
    }
}

/// Escapes a partition value for a path, as Paimon's `PartitionPathUtils.escapePathName`.
pub(crate) fn escape_path_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let needs = c.is_ascii_control()
            || matches!(
                c,
                '"' | '#' | '%' | '\'' | '*' | '/' | ':' | '=' | '?' | '\\' | '\x7f' | '{' | '[' | ']' | '^'
            );
        if needs {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `k1=v1/k2=v2` for a partition row (null and empty values become `default_name`).
pub(crate) fn partition_path(partition: &BinaryRow, fields: &[DataField], default_name: &str) -> Result<String> {
    let types: Vec<_> = fields.iter().map(|f| f.data_type).collect();
    let values = partition.to_datums(&types)?;
    let mut parts = Vec::with_capacity(fields.len());
    for (f, v) in fields.iter().zip(values) {
        let s = match v {
            None => default_name.to_string(),
            Some(d) => {
                let s = d.to_string_with_type(&f.data_type);
                if s.is_empty() {
                    default_name.to_string()
                } else {
                    s
                }
            }
        };
        parts.push(format!("{}={}", escape_path_name(&f.name), escape_path_name(&s)));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_paimon() {
        assert_eq!(escape_path_name("a/b=c"), "a%2Fb%3Dc");
        assert_eq!(escape_path_name("plain-value_1"), "plain-value_1");
    }

    #[test]
    fn names_are_unique_and_prefixed() {
        let p = PathFactory::new("/t/");
        let a = p.new_manifest_name();
        let b = p.new_manifest_name();
        assert_ne!(a, b);
        assert!(a.starts_with("manifest-") && a.ends_with("-0"));
        assert!(p.new_manifest_list_name().starts_with("manifest-list-"));
        assert_eq!(p.bucket_dir("", 3), "/t/bucket-3");
        assert_eq!(p.bucket_dir("p=a", 0), "/t/p=a/bucket-0");
        assert_eq!(p.bucket_dir("p=a", -2), "/t/p=a/bucket-postpone");
    }
}
