//! `strata write`: input files into one commit, written again on the latest snapshot when a concurrent
//! commit got there first; and the one-off batch commit that `write` and `compact` share.

use strata_spec::{Error, ErrorKind};
use strata_table::Table;

use crate::{io, Progress};

/// Writes the inputs in one commit. A commit refused as a conflict (another writer changed a bucket this
/// write touches since it began) committed nothing and removed its files; the whole write is then done
/// again on the latest snapshot, up to `commit.max-retries` times, so concurrent writers land in commit
/// order instead of failing.
pub(crate) fn write_inputs(table_dir: &str, inputs: &[String]) -> Result<(usize, Option<i64>), Error> {
    let mut attempt = 0u32;
    loop {
        let table = Table::open(io(), table_dir)?;
        let max_retries = table.schema().core_options().commit_max_retries()?;
        let mut rows = 0usize;
        let mut write = strata_table::write::TableWrite::new(&table)?;
        for input in inputs {
            for batch in read_input(&table, input)? {
                rows += batch.num_rows();
                write.write_batch(&batch)?;
            }
        }
        let progress = Progress::start("flushing, compacting and committing");
        // One commit per call, like a Paimon batch write: compaction finishes inside it.
        let messages = write.prepare_commit_waiting()?;
        let result = commit(&table, &mut write, messages, None);
        progress.finish();
        match result {
            Err(e) if e.kind() == ErrorKind::Conflict && attempt < max_retries => {
                attempt += 1;
                tracing::info!(attempt, error = %e, "write conflicted with a concurrent commit; writing again");
                let wait = 10u64 << attempt.min(10);
                std::thread::sleep(std::time::Duration::from_millis(rand::random_range(wait / 2..=wait)));
            }
            Err(e) => return Err(e),
            Ok(outcome) => return Ok((rows, outcome)),
        }
    }
}

/// Commits `messages` as a one-off batch job (a fresh commit user; Paimon's batch identifier). When the commit fails and did not land, the files the
/// messages added are removed (best effort), so a failed write or compaction (a conflict, a full disk)
/// leaves no orphans behind.
pub(crate) fn commit(
    table: &Table,
    write: &mut strata_table::write::TableWrite,
    messages: Vec<strata_table::CommitMessage>,
    kind: Option<strata_spec::CommitKind>,
) -> Result<Option<i64>, Error> {
    let user = format!("strata-cli-{}", uuid::Uuid::new_v4());
    let c = strata_table::Committable { identifier: i64::MAX, messages, kind, properties: None };
    let committer = table.new_commit(&user)?;
    match committer.commit(&c) {
        Ok(strata_table::CommitOutcome::CompactionDropped(id)) => {
            // The write landed; its compaction conflicted and is garbage. Compact its buckets again from the
            // latest snapshot, so deletion-vector readers (which skip level 0) see the rows now; best effort,
            // since the rows are committed either way and the next compaction takes them up.
            write.discard(&strata_table::write::compaction_increments(&c));
            let buckets: Vec<_> = c.messages.iter().map(|m| (m.partition.clone(), m.bucket)).collect();
            // A compaction-only commit: it has no APPEND half, so it cannot end here again.
            let again = write.open_buckets(&buckets).and_then(|()| write.prepare_commit_waiting());
            let again = again.and_then(|messages| commit(table, write, messages, None));
            match again {
                Ok(compacted) => Ok(compacted.or(Some(id))),
                Err(e) => {
                    tracing::warn!(error = %e, "compacting again after a dropped compaction failed; the next compaction takes the rows up");
                    Ok(Some(id))
                }
            }
        }
        Ok(outcome) => Ok(outcome.snapshot_id()),
        Err(e) => {
            // Remove what no snapshot holds: both halves after a conflict (a conflict never lands), else
            // what the snapshots show did not land. When that cannot be told, nothing (orphans at worst).
            let left = if e.kind() == ErrorKind::Conflict {
                Some(c.messages.clone())
            } else {
                committer.landed(c.identifier).ok().map(|l| strata_table::write::uncommitted_messages(&c, l))
            };
            if let Some(left) = left {
                write.discard(&left);
            }
            Err(e)
        }
    }
}

/// Reads an input file as batches of the table's columns (by extension: .jsonl/.json, .csv, .parquet).
fn read_input(table: &Table, path: &str) -> Result<Vec<arrow_array::RecordBatch>, Error> {
    let bad = |e: &dyn std::fmt::Display| Error::invalid(format!("input {path}"), e.to_string());
    let layout = strata_format::KeyValueLayout::new(table.schema())?;
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(
        layout.value_schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect::<Vec<_>>(),
    ));
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    let batches: Vec<arrow_array::RecordBatch> = match ext.as_str() {
        "jsonl" | "json" | "ndjson" => arrow_json::ReaderBuilder::new(schema)
            .build(std::io::BufReader::new(file))
            .map_err(|e| bad(&e))?
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| bad(&e))?,
        "csv" => arrow_csv::ReaderBuilder::new(schema)
            .with_header(true)
            .build(file)
            .map_err(|e| bad(&e))?
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| bad(&e))?,
        "parquet" => parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| bad(&e))?
            .build()
            .map_err(|e| bad(&e))?
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| bad(&e))?,
        other => {
            return Err(Error::invalid(
                format!("input {path}"),
                format!("unknown extension '{other}' (jsonl, csv, parquet)"),
            ))
        }
    };
    Ok(batches)
}
