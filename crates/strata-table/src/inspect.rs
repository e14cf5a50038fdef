//! What `strata inspect` reports: schema, snapshots, and per bucket and level the live files and the
//! deletion-vector index files of one snapshot.

use std::collections::{BTreeMap, HashSet};

use serde_json::{json, Map, Value};
use strata_spec::{BinaryRow, DataField, Datum, IndexManifestEntry, ManifestEntry, Result, Snapshot};

use crate::table::Table;

/// A JSON value for a datum (numbers stay numbers; bytes become hex strings).
pub(crate) fn datum_to_json(d: &Option<Datum>, field: &DataField) -> Value {
    match d {
        None => Value::Null,
        Some(Datum::Boolean(v)) => json!(v),
        Some(Datum::TinyInt(v)) => json!(v),
        Some(Datum::SmallInt(v)) => json!(v),
        Some(Datum::Int(v)) | Some(Datum::Date(v)) | Some(Datum::Time(v)) => json!(v),
        Some(Datum::BigInt(v)) => json!(v),
        Some(Datum::Float(v)) => json!(v),
        Some(Datum::Double(v)) => json!(v),
        Some(d) => Value::String(d.to_string_with_type(&field.data_type)),
    }
}

fn row_to_json(row: &BinaryRow, fields: &[DataField]) -> Result<Value> {
    let types: Vec<_> = fields.iter().map(|f| f.data_type).collect();
    let values = row.to_datums(&types)?;
    let mut m = Map::new();
    for (f, v) in fields.iter().zip(values.iter()) {
        m.insert(f.name.clone(), datum_to_json(v, f));
    }
    Ok(Value::Object(m))
}

fn snapshot_summary(s: &Snapshot) -> Value {
    json!({
        "id": s.id,
        "schemaId": s.schema_id,
        "commitKind": s.commit_kind.to_string(),
        "commitUser": s.commit_user,
        "commitIdentifier": s.commit_identifier,
        "timeMillis": s.time_millis,
        "totalRecordCount": s.total_record_count,
        "deltaRecordCount": s.delta_record_count,
        "indexManifest": s.index_manifest,
        "writerVersion": s.writer_version,
    })
}

/// One bucket's part of the report.
struct BucketReport {
    partition: Value,
    levels: BTreeMap<i32, Vec<Value>>,
    /// The deletion-vector index file.
    index: Option<Value>,
    /// The dynamic-bucket hash index file.
    hash_index: Option<Value>,
}

/// The per-bucket part of the report, with its totals and the orphan vectors found.
struct Buckets {
    partition_fields: Vec<DataField>,
    buckets: BTreeMap<(Vec<u8>, i32), BucketReport>,
    files: i64,
    rows: i64,
    bytes: i64,
    /// Vectors naming a file not live in their bucket: orphans, which reads skip (`Table::deletion_files`).
    orphans: Vec<Value>,
}

impl Buckets {
    fn bucket(&mut self, partition: &BinaryRow, bucket: i32) -> Result<&mut BucketReport> {
        Ok(match self.buckets.entry((partition.serialize(), bucket)) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => v.insert(BucketReport {
                partition: row_to_json(partition, &self.partition_fields)?,
                levels: BTreeMap::new(),
                index: None,
                hash_index: None,
            }),
        })
    }

    fn add_files(&mut self, files: &[ManifestEntry]) -> Result<()> {
        for e in files {
            self.files += 1;
            self.rows += e.file.row_count;
            self.bytes += e.file.file_size;
            self.bucket(&e.partition, e.bucket)?.levels.entry(e.file.level).or_default().push(json!({
                "fileName": e.file.file_name,
                "rowCount": e.file.row_count,
                "fileSize": e.file.file_size,
                "minSequenceNumber": e.file.min_sequence_number,
                "maxSequenceNumber": e.file.max_sequence_number,
                "deleteRowCount": e.file.delete_row_count,
                "fileSource": e.file.file_source.map(|s| if s == 0 { "APPEND" } else { "COMPACT" }),
                "schemaId": e.file.schema_id,
                "totalBuckets": e.total_buckets,
            }));
        }
        Ok(())
    }

    /// Adds the snapshot's index files, the deletion vectors of each marked orphan where their data file is
    /// not among `files`, the snapshot's live files.
    fn add_index_files(&mut self, index: Vec<IndexManifestEntry>, files: &[ManifestEntry]) -> Result<()> {
        let live: HashSet<(Vec<u8>, i32, &str)> =
            files.iter().map(|e| (e.partition.serialize(), e.bucket, e.file.file_name.as_str())).collect();
        for ie in index {
            let report = self.bucket(&ie.partition, ie.bucket)?;
            if ie.index_file.index_type == strata_spec::HASH_INDEX {
                report.hash_index = Some(json!({
                    "fileName": ie.index_file.file_name,
                    "fileSize": ie.index_file.file_size,
                    "keyHashes": ie.index_file.row_count,
                }));
                continue;
            }
            let key = ie.partition.serialize();
            let mut ranges: Vec<Value> = Vec::new();
            let mut orphans: Vec<Value> = Vec::new();
            for m in ie.index_file.dv_ranges.iter().flatten() {
                let orphan = !live.contains(&(key.clone(), ie.bucket, m.data_file_name.as_str()));
                let range = json!({"dataFile": m.data_file_name, "offset": m.offset, "length": m.length, "cardinality": m.cardinality, "orphan": orphan});
                if orphan {
                    orphans.push(json!({"partition": report.partition, "bucket": ie.bucket, "dataFile": m.data_file_name, "cardinality": m.cardinality, "indexFile": ie.index_file.file_name}));
                }
                ranges.push(range);
            }
            report.index = Some(json!({
                "indexType": ie.index_file.index_type,
                "fileName": ie.index_file.file_name,
                "fileSize": ie.index_file.file_size,
                "rowCount": ie.index_file.row_count,
                "deletionVectors": ranges,
            }));
            self.orphans.extend(orphans);
        }
        Ok(())
    }

    fn buckets_json(buckets: BTreeMap<(Vec<u8>, i32), BucketReport>) -> Vec<Value> {
        buckets
            .into_iter()
            .map(|((_, bucket), BucketReport { partition, levels, index, hash_index })| {
                let levels: Vec<Value> = levels
                    .into_iter()
                    .map(|(level, files)| {
                        let rows: i64 = files.iter().filter_map(|f| f["rowCount"].as_i64()).sum();
                        let bytes: i64 = files.iter().filter_map(|f| f["fileSize"].as_i64()).sum();
                        json!({"level": level, "fileCount": files.len(), "rowCount": rows, "fileSize": bytes, "files": files})
                    })
                    .collect();
                json!({"partition": partition, "bucket": bucket, "levels": levels, "indexFile": index, "hashIndexFile": hash_index})
            })
            .collect()
    }
}

/// The report for `snapshot_id` (latest when `None`).
pub fn inspect(table: &Table, snapshot_id: Option<i64>) -> Result<Value> {
    let _span = tracing::info_span!("inspect", path = table.path()).entered();
    let schema = table.schema();
    let sm = table.snapshot_manager();
    let mut snapshots = Vec::new();
    for id in sm.list_ids()? {
        snapshots.push(snapshot_summary(&sm.snapshot(id)?));
    }
    let snapshot = table.snapshot(snapshot_id)?;
    let mut report = Buckets {
        partition_fields: schema.partition_fields()?,
        buckets: BTreeMap::new(),
        files: 0,
        rows: 0,
        bytes: 0,
        orphans: Vec::new(),
    };
    if let Some(s) = &snapshot {
        let files = table.live_files(s)?;
        report.add_files(&files)?;
        report.add_index_files(table.index_files(s)?, &files)?;
    }
    let Buckets { files, rows, bytes, orphans, buckets, .. } = report;
    Ok(json!({
        "path": table.path(),
        "schema": {
            "id": schema.id,
            "fields": schema.fields.iter().map(|f| json!({"id": f.id, "name": f.name, "type": f.data_type.to_string()})).collect::<Vec<_>>(),
            "partitionKeys": schema.partition_keys,
            "primaryKeys": schema.primary_keys,
            "options": schema.options,
        },
        "earliestSnapshot": sm.earliest_id()?,
        "latestSnapshot": sm.latest_id()?,
        "snapshots": snapshots,
        "snapshot": snapshot.as_ref().map(|s| s.id),
        "totals": {"fileCount": files, "rowCount": rows, "fileSize": bytes},
        "buckets": Buckets::buckets_json(buckets),
        "orphanDeletionVectors": orphans,
    }))
}
