//! Column statistics of data files (`SimpleStats`) computed from Arrow arrays.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use strata_spec::{BinaryRow, DataType, Datum, Result, SimpleStats};

use crate::layout::arrow_types::datum_at;

/// Min, max and null count of one column, accumulated over batches.
#[derive(Debug, Clone, Default)]
pub(crate) struct ColumnStats {
    /// Smallest non-null value.
    pub min: Option<Datum>,
    /// Largest non-null value.
    pub max: Option<Datum>,
    /// Nulls seen.
    pub nulls: i64,
}

fn extreme(array: &dyn Array, want_max: bool) -> Result<Option<Datum>> {
    use arrow_arith::aggregate as agg;
    macro_rules! prim {
        ($t:ty, $variant:ident) => {{
            let a = array.as_primitive::<$t>();
            let v = if want_max { agg::max(a) } else { agg::min(a) };
            v.map(Datum::$variant)
        }};
    }
    let d = match array.data_type() {
        ArrowType::Boolean => {
            let a = array.as_boolean();
            (if want_max { agg::max_boolean(a) } else { agg::min_boolean(a) }).map(Datum::Boolean)
        }
        ArrowType::Int8 => prim!(Int8Type, TinyInt),
        ArrowType::Int16 => prim!(Int16Type, SmallInt),
        ArrowType::Int32 => prim!(Int32Type, Int),
        ArrowType::Int64 => prim!(Int64Type, BigInt),
        ArrowType::Date32 => prim!(Date32Type, Date),
        ArrowType::Time32(TimeUnit::Millisecond) => prim!(Time32MillisecondType, Time),
        ArrowType::Decimal128(_, _) => prim!(Decimal128Type, Decimal),
        ArrowType::Utf8 => {
            let a = array.as_string::<i32>();
            (if want_max { agg::max_string(a) } else { agg::min_string(a) }).map(|s| Datum::String(s.to_string()))
        }
        ArrowType::Binary => {
            let a = array.as_binary::<i32>();
            (if want_max { agg::max_binary(a) } else { agg::min_binary(a) }).map(|s| Datum::Bytes(s.to_vec()))
        }
        // Floats (NaN ordering) and timestamps: the generic path.
        _ => {
            let mut best: Option<Datum> = None;
            for i in 0..array.len() {
                if let Some(d) = datum_at(array, i)? {
                    let better = match &best {
                        None => true,
                        Some(b) => {
                            let o = d.compare(b);
                            if want_max {
                                o.is_gt()
                            } else {
                                o.is_lt()
                            }
                        }
                    };
                    if better {
                        best = Some(d);
                    }
                }
            }
            best
        }
    };
    Ok(d)
}

impl ColumnStats {
    /// Folds in one array.
    pub(crate) fn update(&mut self, array: &ArrayRef) -> Result<()> {
        self.nulls += array.null_count() as i64;
        if array.null_count() == array.len() {
            return Ok(());
        }
        if let Some(m) = extreme(array.as_ref(), false)? {
            if self.min.as_ref().is_none_or(|c| m.compare(c).is_lt()) {
                self.min = Some(m);
            }
        }
        if let Some(m) = extreme(array.as_ref(), true)? {
            if self.max.as_ref().is_none_or(|c| m.compare(c).is_gt()) {
                self.max = Some(m);
            }
        }
        Ok(())
    }
}

/// Paimon's default value-stats mode, `truncate(16)`: strings and binaries longer than 16 keep a 16-long
/// prefix as min and a 16-long prefix with its last unit incremented as max (or no max when that overflows).
pub(crate) fn truncate_16(stats: &mut ColumnStats) {
    const N: usize = 16;
    if let Some(Datum::String(s)) = &stats.min {
        if s.chars().count() > N {
            stats.min = Some(Datum::String(s.chars().take(N).collect()));
        }
    }
    if let Some(Datum::String(s)) = &stats.max {
        if s.chars().count() > N {
            let mut chars: Vec<char> = s.chars().take(N).collect();
            stats.max = chars.last().and_then(|c| char::from_u32(*c as u32 + 1)).map(|next| {
                if let Some(last) = chars.last_mut() {
                    *last = next;
                }
                Datum::String(chars.into_iter().collect())
            });
        }
    }
    if let Some(Datum::Bytes(b)) = &stats.min {
        if b.len() > N {
            stats.min = Some(Datum::Bytes(b[..N].to_vec()));
        }
    }
    if let Some(Datum::Bytes(b)) = &stats.max {
        if b.len() > N {
            let mut p = b[..N].to_vec();
            stats.max = match p.iter().rposition(|&x| x != 0xff) {
                Some(i) => {
                    p[i] += 1;
                    p.truncate(i + 1);
                    Some(Datum::Bytes(p))
                }
                None => None,
            };
        }
    }
}

/// Encodes per-column stats as `SimpleStats`.
pub(crate) fn to_simple_stats(columns: &[ColumnStats], types: &[DataType]) -> Result<SimpleStats> {
    let nullable: Vec<DataType> = types.iter().map(|t| t.with_nullable(true)).collect();
    let mins: Vec<Option<Datum>> = columns.iter().map(|c| c.min.clone()).collect();
    let maxs: Vec<Option<Datum>> = columns.iter().map(|c| c.max.clone()).collect();
    Ok(SimpleStats {
        min_values: BinaryRow::from_datums(&mins, &nullable)?,
        max_values: BinaryRow::from_datums(&maxs, &nullable)?,
        null_counts: Some(columns.iter().map(|c| Some(c.nulls)).collect()),
    })
}
