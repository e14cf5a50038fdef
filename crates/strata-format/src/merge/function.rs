//! Merge engines: what one key's records (oldest first) become (Paimon's `MergeFunction`s).

use std::collections::BTreeMap;

use strata_spec::{CoreOptions, DataField, Datum, Error, MergeEngine, Result, TableSchema};

use crate::layout::kv::RowKind;
use crate::merge::sequence_group::SequenceGroups;

/// An aggregate function of the aggregation engine (`fields.<f>.aggregate-function`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunction {
    /// Sum (retractable).
    Sum,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
    /// Count of non-null values (retractable).
    Count,
    /// The last value, null included.
    LastValue,
    /// The last non-null value (the default).
    LastNonNullValue,
    /// The first value, null included.
    FirstValue,
    /// The first non-null value.
    FirstNonNullValue,
    /// Logical AND of booleans.
    BoolAnd,
    /// Logical OR of booleans.
    BoolOr,
    /// The primary-key columns: kept as they are.
    PrimaryKey,
}

impl AggFunction {
    pub(crate) fn parse(s: &str) -> Result<Self> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "sum" => AggFunction::Sum,
            "min" => AggFunction::Min,
            "max" => AggFunction::Max,
            "count" => AggFunction::Count,
            "last_value" => AggFunction::LastValue,
            "last_non_null_value" => AggFunction::LastNonNullValue,
            "first_value" => AggFunction::FirstValue,
            "first_non_null_value" => AggFunction::FirstNonNullValue,
            "bool_and" => AggFunction::BoolAnd,
            "bool_or" => AggFunction::BoolOr,
            other => return Err(Error::unsupported(format!("aggregate function '{other}'"))),
        })
    }
}

/// How a table merges the records of one key.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// The engine.
    pub engine: MergeEngine,
    /// `ignore-delete`: drop retract records before merging.
    pub ignore_delete: bool,
    /// Value-column indices of `sequence.field`, which order records before the sequence number.
    pub sequence_fields: Vec<usize>,
    /// `partial-update.remove-record-on-delete` / `aggregation.remove-record-on-delete`.
    pub remove_record_on_delete: bool,
    /// Aggregation: the function of each value column.
    pub aggregators: Vec<AggFunction>,
    /// Aggregation: `fields.<f>.ignore-retract` per value column.
    pub ignore_retract: Vec<bool>,
    /// Partial-update: the sequence groups (`fields.<s>.sequence-group`).
    pub sequence_groups: SequenceGroups,
    /// The table compacts with lookups (deletion vectors, `changelog-producer = lookup`, `force-lookup`;
    /// not first-row): every lookup compaction merged a key's older copies into its record at the
    /// shallowest level >= 1, so only that record and level-0 records are merged; deeper copies are stale
    /// (Paimon's `LookupMergeFunction`, which Paimon applies to reads too). Without it an aggregation
    /// would count the older copies twice in tables written without deletion vectors. Needs the run levels
    /// ([`crate::merge::iterator::MergeIterator::with_run_levels`]).
    pub lookup_levels: bool,
}

impl MergeConfig {
    /// The merge configuration of a table.
    pub fn from_schema(schema: &TableSchema) -> Result<Self> {
        let options: CoreOptions = schema.core_options();
        let engine = options.merge_engine()?;
        let fields: &[DataField] = &schema.fields;
        let sequence_fields = options
            .sequence_field()
            .iter()
            .map(|n| {
                fields
                    .iter()
                    .position(|f| &f.name == n)
                    .ok_or_else(|| Error::invalid("option 'sequence.field'", format!("'{n}' is not a column")))
            })
            .collect::<Result<Vec<_>>>()?;
        let map: &BTreeMap<String, String> = options.as_map();
        let sequence_groups = match engine {
            MergeEngine::PartialUpdate => {
                let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
                SequenceGroups::from_options(map, &names, &schema.primary_keys)?
            }
            _ => SequenceGroups::default(),
        };
        let default_agg = map.get("fields.default-aggregate-function").map(|s| AggFunction::parse(s)).transpose()?;
        let mut aggregators = Vec::with_capacity(fields.len());
        let mut ignore_retract = Vec::with_capacity(fields.len());
        for f in fields {
            let agg = if schema.primary_keys.contains(&f.name) {
                AggFunction::PrimaryKey
            } else if let Some(a) = map.get(&format!("fields.{}.aggregate-function", f.name)) {
                AggFunction::parse(a)?
            } else {
                default_agg.unwrap_or(AggFunction::LastNonNullValue)
            };
            aggregators.push(agg);
            ignore_retract.push(map.get(&format!("fields.{}.ignore-retract", f.name)).is_some_and(|v| v == "true"));
        }
        let remove_key = match engine {
            MergeEngine::PartialUpdate => "partial-update.remove-record-on-delete",
            _ => "aggregation.remove-record-on-delete",
        };
        Ok(MergeConfig {
            engine,
            ignore_delete: options.ignore_delete()?
                || map.get("partial-update.ignore-delete").is_some_and(|v| v == "true")
                || map.get("first-row.ignore-delete").is_some_and(|v| v == "true"),
            sequence_fields,
            remove_record_on_delete: map.get(remove_key).is_some_and(|v| v == "true"),
            aggregators,
            ignore_retract,
            sequence_groups,
            lookup_levels: engine != MergeEngine::FirstRow
                && (options.deletion_vectors_enabled()?
                    || options.changelog_producer()? == strata_spec::ChangelogProducer::Lookup
                    || map.get("force-lookup").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))),
        })
    }

    /// Last-writer-wins on the sequence number: the default table.
    pub fn deduplicate(value_arity: usize) -> Self {
        MergeConfig {
            engine: MergeEngine::Deduplicate,
            ignore_delete: false,
            sequence_fields: Vec::new(),
            remove_record_on_delete: false,
            aggregators: vec![AggFunction::LastNonNullValue; value_arity],
            ignore_retract: vec![false; value_arity],
            sequence_groups: SequenceGroups::default(),
            lookup_levels: false,
        }
    }
}

fn num_add(a: &Datum, b: &Datum, negate: bool) -> Result<Datum> {
    let s = if negate { -1 } else { 1 };
    Ok(match (a, b) {
        (Datum::TinyInt(x), Datum::TinyInt(y)) => Datum::TinyInt(x.wrapping_add(y.wrapping_mul(s as i8))),
        (Datum::SmallInt(x), Datum::SmallInt(y)) => Datum::SmallInt(x.wrapping_add(y.wrapping_mul(s as i16))),
        (Datum::Int(x), Datum::Int(y)) => Datum::Int(x.wrapping_add(y.wrapping_mul(s))),
        (Datum::BigInt(x), Datum::BigInt(y)) => Datum::BigInt(x.wrapping_add(y.wrapping_mul(i64::from(s)))),
        (Datum::Float(x), Datum::Float(y)) => Datum::Float(x + y * s as f32),
        (Datum::Double(x), Datum::Double(y)) => Datum::Double(x + y * f64::from(s)),
        (Datum::Decimal(x), Datum::Decimal(y)) => Datum::Decimal(x + y * i128::from(s)),
        (a, _) => return Err(Error::unsupported(format!("sum over {a:?}"))),
    })
}

/// The running state of one aggregated column.
#[derive(Debug, Clone, Default)]
pub(crate) struct AggState {
    value: Option<Datum>,
    /// For first_value: whether a value (possibly null) was taken.
    seen: bool,
}

impl AggState {
    /// A state holding `value`; `seen` says whether a first value counts as taken.
    pub(crate) fn holding(value: Option<Datum>, seen: bool) -> Self {
        AggState { value, seen }
    }

    /// Clears the state (a record was removed on delete).
    pub(crate) fn reset(&mut self) {
        *self = AggState::default();
    }

    /// The current value.
    pub(crate) fn value(&self) -> Option<Datum> {
        self.value.clone()
    }

    /// Folds in an added value.
    pub(crate) fn add(&mut self, f: AggFunction, v: Option<Datum>) -> Result<()> {
        match f {
            AggFunction::PrimaryKey | AggFunction::LastValue => self.value = v,
            AggFunction::LastNonNullValue => {
                if v.is_some() {
                    self.value = v
                }
            }
            AggFunction::FirstValue => {
                if !self.seen {
                    self.value = v;
                    self.seen = true;
                }
            }
            AggFunction::FirstNonNullValue => {
                if self.value.is_none() {
                    self.value = v
                }
            }
            AggFunction::Sum => {
                if let Some(v) = v {
                    self.value = Some(match &self.value {
                        None => v,
                        Some(c) => num_add(c, &v, false)?,
                    })
                }
            }
            AggFunction::Count => {
                let c = match &self.value {
                    Some(Datum::BigInt(c)) => *c,
                    _ => 0,
                };
                self.value = Some(Datum::BigInt(c + i64::from(v.is_some())));
            }
            AggFunction::Min | AggFunction::Max => {
                if let Some(v) = v {
                    let replace = match &self.value {
                        None => true,
                        Some(c) => {
                            let o = v.compare(c);
                            if f == AggFunction::Min {
                                o.is_lt()
                            } else {
                                o.is_gt()
                            }
                        }
                    };
                    if replace {
                        self.value = Some(v);
                    }
                }
            }
            AggFunction::BoolAnd | AggFunction::BoolOr => {
                if let Some(Datum::Boolean(b)) = v {
                    let cur = match &self.value {
                        Some(Datum::Boolean(c)) => Some(*c),
                        _ => None,
                    };
                    self.value = Some(Datum::Boolean(match (cur, f) {
                        (None, _) => b,
                        (Some(c), AggFunction::BoolAnd) => c && b,
                        (Some(c), _) => c || b,
                    }));
                }
            }
        }
        Ok(())
    }

    /// Folds in a retracted value.
    pub(crate) fn retract(&mut self, f: AggFunction, v: Option<Datum>, field: &str) -> Result<()> {
        match f {
            AggFunction::PrimaryKey => Ok(()),
            AggFunction::Sum => {
                if let Some(v) = v {
                    self.value = Some(match &self.value {
                        None => num_add(&zero_like(&v), &v, true)?,
                        Some(c) => num_add(c, &v, true)?,
                    })
                }
                Ok(())
            }
            AggFunction::Count => {
                let c = match &self.value {
                    Some(Datum::BigInt(c)) => *c,
                    _ => 0,
                };
                self.value = Some(Datum::BigInt(c - i64::from(v.is_some())));
                Ok(())
            }
            other => Err(Error::unsupported(format!(
                "aggregate function {other:?} of column '{field}' cannot retract; set fields.{field}.ignore-retract"
            ))),
        }
    }
}

fn zero_like(v: &Datum) -> Datum {
    match v {
        Datum::TinyInt(_) => Datum::TinyInt(0),
        Datum::SmallInt(_) => Datum::SmallInt(0),
        Datum::Int(_) => Datum::Int(0),
        Datum::Float(_) => Datum::Float(0.0),
        Datum::Double(_) => Datum::Double(0.0),
        Datum::Decimal(_) => Datum::Decimal(0),
        _ => Datum::BigInt(0),
    }
}

/// Whether a row kind byte retracts.
pub(crate) fn is_retract(kind: i8) -> bool {
    RowKind::byte_is_retract(kind)
}
