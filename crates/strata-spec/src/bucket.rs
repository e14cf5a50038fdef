//! Paimon's fixed-bucket function: the bucket of a row is `|hash(bucket key BinaryRow) % N|`; and the key
//! hash dynamic-bucket tables index.
//!
//! Matches `org.apache.paimon.table.sink.KeyAndBucketExtractor.bucket` with
//! `FixedBucketRowKeyExtractor` (the hash is `BinaryRow.hashCode()` of the bucket-key row).

use crate::binary_row::{BinaryRow, Datum};
use crate::error::{Error, Result};
use crate::schema::types::DataType;

/// The bucket for a bucket-key hash (Java's `Math.abs(hash % numBuckets)`).
pub fn bucket_of_hash(hash: i32, num_buckets: i32) -> Result<i32> {
    if num_buckets <= 0 {
        return Err(Error::invalid(
            "option 'bucket'",
            format!("fixed-bucket mode needs bucket > 0, got {num_buckets}"),
        ));
    }
    Ok((hash % num_buckets).abs())
}

/// The bucket of a row whose bucket-key values are `key` of types `types`.
pub fn bucket_of(key: &[Option<Datum>], types: &[DataType], num_buckets: i32) -> Result<i32> {
    bucket_of_hash(key_hash(key, types)?, num_buckets)
}

/// `BinaryRow.hashCode()` of the row `key` of types `types`: the bucket-key hash of fixed buckets, and the
/// trimmed-primary-key hash dynamic buckets record in their hash index files.
pub fn key_hash(key: &[Option<Datum>], types: &[DataType]) -> Result<i32> {
    Ok(BinaryRow::from_datums(key, types)?.hash_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_remainder_semantics() {
        assert_eq!(bucket_of_hash(-7, 4).ok(), Some(3));
        assert_eq!(bucket_of_hash(7, 4).ok(), Some(3));
        assert_eq!(bucket_of_hash(i32::MIN, 4).ok(), Some(0));
        assert!(bucket_of_hash(1, 0).is_err());
    }
}
