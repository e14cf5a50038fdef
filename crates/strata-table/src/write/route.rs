//! Routing rows to their (partition, bucket) writers, and keeping the writers' buffers within
//! `write-buffer-size` together.

use std::collections::BTreeMap;

use arrow_array::{Array, RecordBatch, UInt32Array};
use strata_format::datum_at;
use strata_spec::{bucket_of, key_hash, BinaryRow, Datum, Error, Result};

use super::{Routing, TableWrite};

impl TableWrite {
    /// The bucket of the row with partition `partition` and bucket-key values `key`.
    pub(super) fn route(&mut self, partition: &BinaryRow, partition_key: &[u8], key: &[Option<Datum>]) -> Result<i32> {
        match &self.routing {
            Routing::Fixed(n) => return bucket_of(key, &self.bucket_types, *n),
            Routing::Unaware => return Ok(0),
            Routing::Postpone(_) => return bucket_of(key, &self.bucket_types, self.total_buckets(partition_key)?),
            Routing::Dynamic(d) if d.is_loaded(partition_key) => {}
            Routing::Dynamic(_) => self.load_dynamic_partition(partition)?,
        }
        let hash = key_hash(key, &self.bucket_types)?;
        match &mut self.routing {
            Routing::Dynamic(d) => d.assign(partition_key, partition.hash_code(), hash),
            _ => Err(Error::invalid("write", "routing changed")),
        }
    }

    /// Routes rows to their buckets' writers, then keeps their buffers within `write-buffer-size`.
    pub(super) fn write_rows(&mut self, batch: &RecordBatch, kinds: &[i8]) -> Result<()> {
        self.check_append_writers()?;
        self.route_rows(batch, kinds)?;
        self.preempt_buffers();
        Ok(())
    }

    /// `write-buffer-size` bounds the buffers of all open buckets together, as Paimon's writers share one
    /// memory pool of that size: past it, the bucket holding the most spills (or flushes), as Paimon's
    /// `MemoryPoolFactory` preempts the largest owner. A spill is written on its own thread while writes go on
    /// and holds its rows until they are on disk; one runs at a time, and the memory parts spill at half the
    /// size, so the rows held stay within it. Each bucket writer also keeps its own buffer within the size,
    /// so this is best effort: a bucket that cannot release keeps its rows buffered (nothing is lost; its next
    /// write or the commit flushes them) and the write goes on.
    fn preempt_buffers(&mut self) {
        let limit = if self.spillable { self.write_buffer_size / 2 } else { self.write_buffer_size };
        for _ in 0..self.writers.len() {
            let total: u64 = self.writers.values().map(|b| b.writer.buffered_bytes()).sum();
            if total <= limit {
                return;
            }
            let Some(key) = self.writers.iter().max_by_key(|(_, b)| b.writer.buffered_bytes()).map(|(k, _)| k.clone())
            else {
                return;
            };
            for (k, b) in self.writers.iter_mut() {
                if *k != key && b.writer.spilling() {
                    b.writer.settle_spill();
                }
            }
            let Some(largest) = self.writers.get_mut(&key) else { return };
            if let Err(e) = largest.writer.release_buffer() {
                tracing::warn!(bucket = largest.writer.bucket(), error = %e, "releasing a write buffer failed");
                return;
            }
        }
    }

    /// Routes rows to their buckets' writers.
    fn route_rows(&mut self, batch: &RecordBatch, kinds: &[i8]) -> Result<()> {
        if kinds.len() != batch.num_rows() {
            return Err(Error::invalid("rows", format!("{} kinds for {} rows", kinds.len(), batch.num_rows())));
        }
        let batch = self.conform(batch)?;
        if let (true, Routing::Fixed(n)) = (self.partition_idx.is_empty(), &self.routing) {
            return self.route_unpartitioned(&batch, kinds, *n);
        }
        if let (true, Routing::Unaware) = (self.partition_idx.is_empty(), &self.routing) {
            // An unpartitioned append table's rows all go to bucket 0, as they are.
            return self.writer(&BinaryRow::from_datums(&[], &[])?, 0)?.write(&batch, kinds);
        }
        let mut groups: BTreeMap<(Vec<u8>, i32), (BinaryRow, Vec<u32>)> = BTreeMap::new();
        for r in 0..batch.num_rows() {
            let (partition, key) = self.partition_and_bucket_key(&batch, r)?;
            let partition_key = partition.serialize();
            let bucket = self.route(&partition, &partition_key, &key)?;
            groups.entry((partition_key, bucket)).or_insert_with(|| (partition, Vec::new())).1.push(r as u32);
        }
        for ((_, bucket), (partition, rows)) in groups {
            self.write_group(&batch, kinds, &partition, bucket, rows)?;
        }
        Ok(())
    }

    /// The rows of an unpartitioned table with `n` fixed buckets: each row's bucket from its bucket key alone
    /// (no partition row built and serialized per row), grouped by bucket.
    fn route_unpartitioned(&mut self, batch: &RecordBatch, kinds: &[i8], n: i32) -> Result<()> {
        let partition = BinaryRow::from_datums(&[], &[])?;
        if n == 1 {
            // One bucket: every row goes to the same writer, as it is.
            return self.writer(&partition, 0)?.write(batch, kinds);
        }
        let mut by_bucket: Vec<Vec<u32>> = vec![Vec::new(); n.max(0) as usize];
        let columns: Vec<&dyn Array> = self.bucket_idx.iter().map(|&i| batch.column(i).as_ref()).collect();
        let mut key = Vec::with_capacity(columns.len());
        for r in 0..batch.num_rows() {
            key.clear();
            for c in &columns {
                key.push(datum_at(*c, r)?);
            }
            let bucket = bucket_of(&key, &self.bucket_types, n)?;
            by_bucket
                .get_mut(bucket as usize)
                .ok_or_else(|| Error::invalid("write", format!("bucket {bucket} of {n}")))?
                .push(r as u32);
        }
        for (bucket, rows) in by_bucket.into_iter().enumerate() {
            if !rows.is_empty() {
                self.write_group(batch, kinds, &partition, bucket as i32, rows)?;
            }
        }
        Ok(())
    }

    /// Hands the rows `rows` of `batch` to the writer of (`partition`, `bucket`).
    fn write_group(
        &mut self,
        batch: &RecordBatch,
        kinds: &[i8],
        partition: &BinaryRow,
        bucket: i32,
        rows: Vec<u32>,
    ) -> Result<()> {
        if rows.len() == batch.num_rows() {
            // Every row in one group, in order: no copy.
            return self.writer(partition, bucket)?.write(batch, kinds);
        }
        let k: Vec<i8> = rows.iter().map(|&r| kinds[r as usize]).collect();
        let idx = UInt32Array::from(rows);
        let part = arrow_select::take::take_record_batch(batch, &idx).map_err(|e| Error::invalid_from("rows", e))?;
        self.writer(partition, bucket)?.write(&part, &k)
    }

    /// Row `r`'s partition, and the values of its bucket key.
    pub(super) fn partition_and_bucket_key(
        &self,
        batch: &RecordBatch,
        r: usize,
    ) -> Result<(BinaryRow, Vec<Option<Datum>>)> {
        let column = |i: &usize| datum_at(batch.column(*i).as_ref(), r);
        let part = self.partition_idx.iter().map(column).collect::<Result<Vec<_>>>()?;
        let key = self.bucket_idx.iter().map(column).collect::<Result<Vec<_>>>()?;
        Ok((BinaryRow::from_datums(&part, &self.partition_types)?, key))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};

    use crate::test_table::id_string_table;
    use crate::write::TableWrite;

    fn batch(from: i64, rows: i64) -> RecordBatch {
        let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(from..from + rows));
        let s: ArrayRef = Arc::new(StringArray::from_iter_values((from..from + rows).map(|i| format!("{i:0>64}"))));
        RecordBatch::try_from_iter([("id", ids), ("s", s)]).unwrap()
    }

    /// `write-buffer-size` bounds the buckets' buffers together: with 8 buckets each filling to its own
    /// limit, they would hold 8 times as much.
    #[test]
    fn the_buckets_buffers_together_stay_within_the_write_buffer_size() {
        for spillable in ["true", "false"] {
            let dir = tempfile::tempdir().unwrap();
            let t = id_string_table(
                dir.path(),
                &[("bucket", "8"), ("write-buffer-size", "256 kb"), ("write-buffer-spillable", spillable)],
            );
            let mut w = TableWrite::new(&t).unwrap();
            let mut most = 0;
            for i in 0..40 {
                let b = batch(i * 1_000, 1_000);
                w.write_batch(&b).unwrap();
                let held: u64 = w.writers.values().map(|b| b.writer.buffered_bytes()).sum();
                most = most.max(held);
            }
            let limit = if spillable == "true" { 128 << 10 } else { 256 << 10 };
            assert!(most <= limit, "spillable {spillable}: the buffers held {most} bytes together, past {limit}");
            assert!(most > limit / 2, "spillable {spillable}: the buffers never filled ({most} bytes)");
            let messages = w.prepare_commit_waiting().unwrap();
            let rows: i64 = messages.iter().flat_map(|m| &m.increment.data.new_files).map(|f| f.row_count).sum();
            assert_eq!(rows, 40_000, "spillable {spillable}: rows lost or duplicated");
        }
    }
}
