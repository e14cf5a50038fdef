//! `SimpleStats`: min values, max values and null counts of a set of columns.
//!
//! Matches Paimon's `org.apache.paimon.stats.SimpleStats` (`_MIN_VALUES`, `_MAX_VALUES` as serialized
//! BinaryRows, `_NULL_COUNTS` as an array of nullable longs).

use apache_avro::types::Value;

use crate::avro::{build, Record};
use crate::binary_row::BinaryRow;
use crate::error::Result;

/// Column statistics of a file or of a manifest's partitions.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleStats {
    /// Per-column minimums.
    pub min_values: BinaryRow,
    /// Per-column maximums.
    pub max_values: BinaryRow,
    /// Per-column null counts; `None` where unknown. The array itself is nullable in the format.
    pub null_counts: Option<Vec<Option<i64>>>,
}

impl SimpleStats {
    /// Stats over no columns (`SimpleStats.EMPTY_STATS`).
    pub fn empty() -> Self {
        SimpleStats { min_values: BinaryRow::empty(), max_values: BinaryRow::empty(), null_counts: Some(Vec::new()) }
    }

    /// The Avro record.
    pub(crate) fn to_avro(&self) -> Value {
        build::record(vec![
            ("_MIN_VALUES", Value::Bytes(self.min_values.serialize())),
            ("_MAX_VALUES", Value::Bytes(self.max_values.serialize())),
            (
                "_NULL_COUNTS",
                build::nullable(
                    self.null_counts
                        .as_ref()
                        .map(|c| Value::Array(c.iter().map(|n| build::nullable(n.map(Value::Long))).collect())),
                ),
            ),
        ])
    }

    /// Reads the Avro record.
    pub(crate) fn from_avro(r: &Record<'_>) -> Result<Self> {
        Ok(SimpleStats {
            min_values: BinaryRow::deserialize(&r.bytes("_MIN_VALUES")?)?,
            max_values: BinaryRow::deserialize(&r.bytes("_MAX_VALUES")?)?,
            null_counts: r.opt_long_array("_NULL_COUNTS")?,
        })
    }
}
