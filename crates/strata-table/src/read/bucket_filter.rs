//! Bucket pruning: a filter that pins every bucket-key column to a value (`id = 7`, `id IN (1, 2)`,
//! `a = 1 AND b = 'x'`) can only match rows in the buckets those values hash to, so a fixed-bucket scan
//! skips every other bucket's files before it looks at their statistics (Paimon's `BucketSelector`).
//!
//! Pruning must never drop a row the filter keeps, so it is used only where the hash is certain to be the
//! writer's: each value is of exactly its column's type (the writer's row is built the same way), floating
//! point keys are left out (`0.0 = -0.0` holds while their bits, and so their hashes, differ), and each
//! file's bucket is recomputed with the bucket count it was written with.

use strata_format::{CmpOp, Predicate};
use strata_spec::{key_hash, DataType, Datum, TypeRoot};

use crate::read::point_read::KeyBuckets;

/// More value combinations than this and the filter is not used for pruning (it would cost more than it
/// saves).
const MAX_COMBINATIONS: usize = 256;

/// The bucket-key hashes (`BinaryRow.hashCode()` of the bucket-key row) of every row `filter` can keep, when
/// it pins each of `bucket_keys` (of `types`) to listed values; `None` when it does not.
pub(crate) fn pinned_bucket_hashes(filter: &Predicate, bucket_keys: &[String], types: &[DataType]) -> Option<Vec<i32>> {
    if bucket_keys.is_empty()
        || bucket_keys.len() != types.len()
        || types.iter().any(|t| matches!(t.root, TypeRoot::Float | TypeRoot::Double))
    {
        return None;
    }
    let tuples = pins(filter, bucket_keys)?;
    tuples
        .into_iter()
        .map(|t| {
            let values: Vec<Option<Datum>> =
                t.into_iter().collect::<Option<Vec<Datum>>>()?.into_iter().map(Some).collect();
            // A value of another type than its column's cannot be hashed as the writer did: no pruning.
            key_hash(&values, types).ok()
        })
        .collect()
}

/// Whether a file in `bucket`, written with `total_buckets` buckets (the table's `table_buckets` when it
/// records none), may hold a row of one of `hashes`.
pub(crate) fn bucket_may_match(hashes: &[i32], bucket: i32, total_buckets: i32, table_buckets: i32) -> bool {
    // A count that is not a real one (dynamic or postponed files) says nothing: keep the file.
    if total_buckets <= 0 && table_buckets <= 0 || bucket < 0 {
        return true;
    }
    // The same routing as a point lookup's, so a scan and a `get` agree on where a key lives.
    hashes.iter().any(|&hash| KeyBuckets::Hashed { hash, table_buckets }.holds(bucket, total_buckets).unwrap_or(true))
}

/// Per combination, one value (or none yet) for each bucket-key column, in `bucket_keys` order.
type Tuples = Vec<Vec<Option<Datum>>>;

/// The value combinations of the bucket-key columns `p` allows, or `None` when it allows any.
fn pins(p: &Predicate, bucket_keys: &[String]) -> Option<Tuples> {
    match p {
        Predicate::Compare { column, op: CmpOp::Eq, value } => {
            let i = bucket_keys.iter().position(|k| k == column)?;
            let mut t = vec![None; bucket_keys.len()];
            t[i] = Some(value.clone());
            Some(vec![t])
        }
        Predicate::And(children) => {
            let mut acc: Option<Tuples> = None;
            // A child that pins nothing only narrows the rows further: skipping it keeps every kept row.
            for alternatives in children.iter().filter_map(|c| pins(c, bucket_keys)) {
                acc = Some(match acc {
                    None => alternatives,
                    Some(acc) => combine(&acc, &alternatives)?,
                });
            }
            acc
        }
        Predicate::Or(children) => {
            let mut all = Vec::new();
            for c in children {
                all.extend(pins(c, bucket_keys)?);
                if all.len() > MAX_COMBINATIONS {
                    return None;
                }
            }
            Some(all)
        }
        _ => None,
    }
}

/// Every pair of `a` and `b` merged. Two different values for one column would mean no row matches; that
/// is left to the filter itself (no pruning), not concluded here.
fn combine(a: &Tuples, b: &Tuples) -> Option<Tuples> {
    if a.len().saturating_mul(b.len()) > MAX_COMBINATIONS {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut t = Vec::with_capacity(x.len());
            for (u, v) in x.iter().zip(y) {
                t.push(match (u, v) {
                    (Some(u), Some(v)) if u != v => return None,
                    (Some(u), _) => Some(u.clone()),
                    (None, v) => v.clone(),
                });
            }
            out.push(t);
        }
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use strata_spec::bucket_of;

    fn eq(c: &str, v: i64) -> Predicate {
        Predicate::cmp(c, CmpOp::Eq, Datum::BigInt(v))
    }

    fn keys() -> Vec<String> {
        vec!["id".into()]
    }

    #[test]
    fn an_equality_or_an_in_list_pins_the_buckets_the_writer_chose() {
        let types = [DataType::bigint()];
        for (filter, values) in [
            (eq("id", 7), vec![7]),
            (Predicate::Or(vec![eq("id", 1), eq("id", 2), eq("id", 3)]), vec![1, 2, 3]),
            (Predicate::And(vec![eq("id", 9), Predicate::cmp("v", CmpOp::Gt, Datum::BigInt(0))]), vec![9]),
        ] {
            let hashes = pinned_bucket_hashes(&filter, &keys(), &types).unwrap();
            for buckets in [1, 3, 4, 16] {
                for b in 0..buckets {
                    let writer =
                        values.iter().any(|&v| bucket_of(&[Some(Datum::BigInt(v))], &types, buckets).unwrap() == b);
                    assert_eq!(bucket_may_match(&hashes, b, buckets, 99), writer, "{filter:?} {b}/{buckets}");
                }
            }
        }
    }

    #[test]
    fn a_two_column_bucket_key_needs_both_columns() {
        let (k, types) = (vec!["a".to_string(), "b".to_string()], [DataType::bigint(), DataType::bigint()]);
        assert!(pinned_bucket_hashes(&eq("a", 1), &k, &types).is_none());
        let both = Predicate::And(vec![eq("a", 1), Predicate::Or(vec![eq("b", 2), eq("b", 3)])]);
        let hashes = pinned_bucket_hashes(&both, &k, &types).unwrap();
        let want: Vec<i32> = [2, 3]
            .iter()
            .map(|&b| key_hash(&[Some(Datum::BigInt(1)), Some(Datum::BigInt(b))], &types).unwrap())
            .collect();
        assert_eq!(hashes, want);
    }

    #[test]
    fn what_does_not_pin_every_row_prunes_nothing() {
        let types = [DataType::bigint()];
        for filter in [
            Predicate::cmp("id", CmpOp::Gt, Datum::BigInt(1)),
            Predicate::Or(vec![eq("id", 1), Predicate::cmp("v", CmpOp::Eq, Datum::BigInt(2))]),
            Predicate::IsNull("id".into()),
            // A value of another type than the column's (the writer hashed a BIGINT).
            Predicate::cmp("id", CmpOp::Eq, Datum::Int(7)),
            // Contradictory values: left to the filter.
            Predicate::And(vec![eq("id", 1), eq("id", 2)]),
            Predicate::Or((0..300).map(|i| eq("id", i)).collect()),
        ] {
            assert!(pinned_bucket_hashes(&filter, &keys(), &types).is_none(), "{filter:?}");
        }
        let float = Predicate::cmp("id", CmpOp::Eq, Datum::Double(0.0));
        assert!(pinned_bucket_hashes(&float, &keys(), &[DataType::nullable(TypeRoot::Double)]).is_none());
        // Files without a real bucket count are kept.
        assert!(bucket_may_match(&[], 0, -1, -1));
        assert!(bucket_may_match(&[], -2, 4, 4));
    }
}
