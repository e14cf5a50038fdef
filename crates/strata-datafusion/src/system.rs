//! System tables, by Paimon's names and columns: `t$snapshots`, `t$schemas`, `t$options` and `t$files`.
//!
//! Each is built whole when the statement that names it is planned (they are metadata, small next to the
//! data) and served from memory. Times: `commit_time` and `update_time` are instants (epoch milliseconds, shown
//! in UTC); `creation_time` is the writer's local date and time as Paimon stores it, so it has no zone.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};
use strata_spec::{BinaryRow, DataType, Datum, Error, Result, SimpleStats, Snapshot, TableSchema};
use strata_table::Table;

/// A system table of a data table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemTable {
    /// `$snapshots`: one row per snapshot still on storage.
    Snapshots,
    /// `$schemas`: one row per schema.
    Schemas,
    /// `$options`: the table's options.
    Options,
    /// `$files`: the live data files of a snapshot (the latest, or the one time travel chose).
    Files,
}

impl SystemTable {
    /// The system table named `name` (after the `$`).
    pub fn from_name(name: &str) -> Option<SystemTable> {
        Some(match name {
            "snapshots" => SystemTable::Snapshots,
            "schemas" => SystemTable::Schemas,
            "options" => SystemTable::Options,
            "files" => SystemTable::Files,
            _ => return None,
        })
    }

    /// Its rows for `table`; `snapshot` is the snapshot `$files` lists (the latest when `None`).
    pub(crate) fn build(self, table: &Table, snapshot: Option<&Snapshot>) -> Result<RecordBatch> {
        match self {
            SystemTable::Snapshots => snapshots(table),
            SystemTable::Schemas => schemas(table),
            SystemTable::Options => options(table),
            SystemTable::Files => {
                let latest;
                let snapshot = match snapshot {
                    Some(s) => Some(s),
                    None => {
                        latest = table.snapshot(None)?;
                        latest.as_ref()
                    }
                };
                files(table, snapshot)
            }
        }
    }
}

fn string(name: &str, nullable: bool) -> Field {
    Field::new(name, ArrowType::Utf8, nullable)
}

fn int64(name: &str, nullable: bool) -> Field {
    Field::new(name, ArrowType::Int64, nullable)
}

fn instant(name: &str) -> Field {
    Field::new(name, ArrowType::Timestamp(TimeUnit::Millisecond, Some(Arc::from("UTC"))), false)
}

fn batch(fields: Vec<Field>, columns: Vec<ArrayRef>) -> Result<RecordBatch> {
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    RecordBatch::try_new(schema, columns).map_err(|e| Error::internal_from("system table", e))
}

fn json(v: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::internal_from("system table", e))
}

/// The snapshots on storage, oldest first; one expired while listing is left out.
fn snapshots(table: &Table) -> Result<RecordBatch> {
    let sm = table.snapshot_manager();
    let mut rows: Vec<Snapshot> = Vec::new();
    for id in sm.list_ids()? {
        rows.extend(sm.try_snapshot(id)?);
    }
    let fields = vec![
        int64("snapshot_id", false),
        int64("schema_id", false),
        string("commit_user", false),
        int64("commit_identifier", false),
        string("commit_kind", false),
        instant("commit_time"),
        string("base_manifest_list", false),
        string("delta_manifest_list", false),
        string("changelog_manifest_list", true),
        int64("total_record_count", true),
        int64("delta_record_count", true),
        int64("changelog_record_count", true),
        int64("watermark", true),
    ];
    let kind = |s: &Snapshot| json(&s.commit_kind).map(|k| k.trim_matches('"').to_string());
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|s| s.id))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|s| s.schema_id))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|s| s.commit_user.as_str()))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|s| s.commit_identifier))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(kind).collect::<Result<Vec<_>>>()?)),
        Arc::new(TimestampMillisecondArray::from_iter_values(rows.iter().map(|s| s.time_millis)).with_timezone("UTC")),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|s| s.base_manifest_list.as_str()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|s| s.delta_manifest_list.as_str()))),
        Arc::new(StringArray::from(rows.iter().map(|s| s.changelog_manifest_list.clone()).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|s| s.total_record_count).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|s| s.delta_record_count).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|s| s.changelog_record_count).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|s| s.watermark).collect::<Vec<_>>())),
    ];
    batch(fields, columns)
}

/// Every schema of the table, by id; `fields`, keys and options as JSON (Paimon's rendering).
fn schemas(table: &Table) -> Result<RecordBatch> {
    let sm = table.schema_manager();
    let rows: Vec<TableSchema> = sm.list_ids()?.into_iter().map(|id| sm.schema(id)).collect::<Result<_>>()?;
    let fields = vec![
        int64("schema_id", false),
        string("fields", false),
        string("partition_keys", false),
        string("primary_keys", false),
        string("options", false),
        string("comment", true),
        instant("update_time"),
    ];
    let each = |f: &dyn Fn(&TableSchema) -> Result<String>| rows.iter().map(f).collect::<Result<Vec<_>>>();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|s| s.id))),
        Arc::new(StringArray::from_iter_values(each(&|s| json(&s.fields))?)),
        Arc::new(StringArray::from_iter_values(each(&|s| json(&s.partition_keys))?)),
        Arc::new(StringArray::from_iter_values(each(&|s| json(&s.primary_keys))?)),
        Arc::new(StringArray::from_iter_values(each(&|s| json(&s.options))?)),
        Arc::new(StringArray::from(rows.iter().map(|s| s.comment.clone()).collect::<Vec<_>>())),
        Arc::new(TimestampMillisecondArray::from_iter_values(rows.iter().map(|s| s.time_millis)).with_timezone("UTC")),
    ];
    batch(fields, columns)
}

/// The options of the table's schema, by key.
fn options(table: &Table) -> Result<RecordBatch> {
    let o = table.options();
    let columns: Vec<ArrayRef> =
        vec![Arc::new(StringArray::from_iter_values(o.keys())), Arc::new(StringArray::from_iter_values(o.values()))];
    batch(vec![string("key", false), string("value", false)], columns)
}

/// `[v1, v2]`, as Paimon renders partitions and keys in `$files`.
fn row_text(row: &BinaryRow, types: &[DataType]) -> String {
    match row.to_datums(types) {
        Ok(values) => format!("[{}]", values.iter().zip(types).map(|(v, t)| text(v, t)).collect::<Vec<_>>().join(", ")),
        Err(_) => String::new(),
    }
}

fn text(v: &Option<Datum>, t: &DataType) -> String {
    v.as_ref().map_or_else(|| "null".to_string(), |d| d.to_string_with_type(t))
}

/// `{c1=v1, c2=v2}` over the value columns statistics cover, as Paimon renders them; empty when they do not
/// decode under the file's schema.
fn stats_text(stats: &SimpleStats, columns: &[(String, DataType)], which: Stat) -> String {
    let types: Vec<DataType> = columns.iter().map(|(_, t)| t.with_nullable(true)).collect();
    let values: Vec<String> = match which {
        Stat::NullCount => match &stats.null_counts {
            Some(n) => n.iter().map(|c| c.map_or_else(|| "null".to_string(), |c| c.to_string())).collect(),
            None => return String::new(),
        },
        Stat::Min | Stat::Max => {
            let row = if which == Stat::Min { &stats.min_values } else { &stats.max_values };
            match row.to_datums(&types) {
                Ok(v) => v.iter().zip(&types).map(|(v, t)| text(v, t)).collect(),
                Err(_) => return String::new(),
            }
        }
    };
    let pairs: Vec<String> = columns.iter().zip(values).map(|((name, _), v)| format!("{name}={v}")).collect();
    format!("{{{}}}", pairs.join(", "))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stat {
    NullCount,
    Min,
    Max,
}

/// One row of `$files`.
struct FileRow {
    partition: String,
    bucket: i32,
    path: String,
    format: String,
    schema_id: i64,
    level: i32,
    records: i64,
    size: i64,
    min_key: String,
    max_key: String,
    nulls: String,
    mins: String,
    maxs: String,
    min_seq: i64,
    max_seq: i64,
    created: Option<i64>,
}

/// The live data files of `snapshot`, in manifest order.
fn files(table: &Table, snapshot: Option<&Snapshot>) -> Result<RecordBatch> {
    let entries = match snapshot {
        Some(s) => table.live_files(s)?,
        None => Vec::new(),
    };
    let partition_types = table.partition_types()?;
    let key_types = table.key_types()?;
    let layout = table.layout()?;
    let mut rows = Vec::with_capacity(entries.len());
    for e in &entries {
        let f = &e.file;
        // Statistics are over the columns of the schema the file was written with.
        let data = layout.data_schema(f.schema_id)?;
        let stats_cols: Vec<(String, DataType)> = match &f.value_stats_cols {
            None => data.fields.iter().map(|d| (d.name.clone(), d.data_type)).collect(),
            Some(cols) => cols
                .iter()
                .filter_map(|c| data.fields.iter().find(|d| &d.name == c).map(|d| (d.name.clone(), d.data_type)))
                .collect(),
        };
        rows.push(FileRow {
            partition: row_text(&e.partition, &partition_types),
            bucket: e.bucket,
            path: table.data_file_path(e)?,
            format: f.file_name.rsplit_once('.').map_or("", |(_, ext)| ext).to_string(),
            schema_id: f.schema_id,
            level: f.level,
            records: f.row_count,
            size: f.file_size,
            min_key: row_text(&f.min_key, &key_types),
            max_key: row_text(&f.max_key, &key_types),
            nulls: stats_text(&f.value_stats, &stats_cols, Stat::NullCount),
            mins: stats_text(&f.value_stats, &stats_cols, Stat::Min),
            maxs: stats_text(&f.value_stats, &stats_cols, Stat::Max),
            min_seq: f.min_sequence_number,
            max_seq: f.max_sequence_number,
            created: f.creation_time,
        });
    }
    let fields = vec![
        string("partition", false),
        Field::new("bucket", ArrowType::Int32, false),
        string("file_path", false),
        string("file_format", false),
        int64("schema_id", false),
        Field::new("level", ArrowType::Int32, false),
        int64("record_count", false),
        int64("file_size_in_bytes", false),
        string("min_key", false),
        string("max_key", false),
        string("null_value_counts", false),
        string("min_value_stats", false),
        string("max_value_stats", false),
        int64("min_sequence_number", false),
        int64("max_sequence_number", false),
        Field::new("creation_time", ArrowType::Timestamp(TimeUnit::Millisecond, None), true),
    ];
    let text = |f: fn(&FileRow) -> &str| -> ArrayRef { Arc::new(StringArray::from_iter_values(rows.iter().map(f))) };
    let int = |f: fn(&FileRow) -> i32| -> ArrayRef { Arc::new(Int32Array::from_iter_values(rows.iter().map(f))) };
    let long = |f: fn(&FileRow) -> i64| -> ArrayRef { Arc::new(Int64Array::from_iter_values(rows.iter().map(f))) };
    let columns: Vec<ArrayRef> = vec![
        text(|r| &r.partition),
        int(|r| r.bucket),
        text(|r| &r.path),
        text(|r| &r.format),
        long(|r| r.schema_id),
        int(|r| r.level),
        long(|r| r.records),
        long(|r| r.size),
        text(|r| &r.min_key),
        text(|r| &r.max_key),
        text(|r| &r.nulls),
        text(|r| &r.mins),
        text(|r| &r.maxs),
        long(|r| r.min_seq),
        long(|r| r.max_seq),
        Arc::new(TimestampMillisecondArray::from(rows.iter().map(|r| r.created).collect::<Vec<_>>())),
    ];
    batch(fields, columns)
}
