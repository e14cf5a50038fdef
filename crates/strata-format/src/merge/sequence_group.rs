//! Sequence groups of a partial-update table (`fields.<s1,s2>.sequence-group = f1,f2`, Paimon's
//! `PartialUpdateMergeFunction` with field sequences): the columns of a group take a record's values only when
//! its sequence columns are at least the group's current ones, so streams that each update their own columns
//! can arrive out of order. A record whose sequence columns are all NULL leaves its groups alone.
//!
//! A group's columns may fold with an aggregate function (`fields.<f>.aggregate-function`, or
//! `fields.default-aggregate-function`; outside a group only `last_non_null_value`, as Paimon requires): a
//! record newer on the group folds its value in, an older one folds it in reversed (`aggReversed`: as if it
//! came first), a newer retraction retracts it.
//!
//! Functions over a key's row being merged (`GroupRow`: the table's columns and the aggregates' states); the
//! merge (`crate::merge`) feeds them the key's records oldest first.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use strata_spec::{DataField, Datum, Error, Result};

use crate::merge::function::{AggFunction, AggState};

/// A key's row while its records are merged.
#[derive(Debug, Clone, Default)]
pub struct GroupRow {
    /// Every column's value.
    pub values: Vec<Option<Datum>>,
    /// The states of aggregated columns.
    states: Vec<AggState>,
}

impl GroupRow {
    /// A row of `width` NULL columns.
    pub fn new(width: usize) -> Self {
        GroupRow { values: vec![None; width], states: vec![AggState::default(); width] }
    }

    /// A row holding `values` as they are (aggregates start from them).
    fn of(values: &[Option<Datum>]) -> Self {
        let states = values.iter().map(|v| AggState::holding(v.clone(), false)).collect();
        GroupRow { values: values.to_vec(), states }
    }
}

/// One `fields.<sequence columns>.sequence-group` option.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    /// The group's sequence columns (indices into the row), compared in order.
    sequence: Vec<usize>,
}

/// The sequence groups of a table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SequenceGroups {
    groups: Vec<Group>,
    /// The group each column belongs to (as a member or as one of its sequence columns).
    group_of: Vec<Option<usize>>,
    /// `partial-update.remove-record-on-sequence-group`: a DELETE newer on one of these sequence columns
    /// removes the whole row.
    remove_on: BTreeSet<usize>,
    /// The aggregate function of each group member that has one.
    aggregators: Vec<Option<AggFunction>>,
}

impl SequenceGroups {
    /// The groups `options` define over the columns named `fields` (`keys`: the primary key); empty when there
    /// are none.
    pub fn from_options(options: &BTreeMap<String, String>, fields: &[String], keys: &[String]) -> Result<Self> {
        let index = |name: &str, key: &str| {
            fields
                .iter()
                .position(|f| f == name.trim())
                .ok_or_else(|| Error::invalid(format!("option '{key}'"), format!("'{}' is not a column", name.trim())))
        };
        let mut out = SequenceGroups { group_of: vec![None; fields.len()], ..Default::default() };
        for (key, members) in options {
            let Some(sequence) = key.strip_prefix("fields.").and_then(|k| k.strip_suffix(".sequence-group")) else {
                continue;
            };
            let g = out.groups.len();
            let sequence: Vec<usize> = sequence.split(',').map(|s| index(s, key)).collect::<Result<_>>()?;
            for m in members.split(',').filter(|m| !m.trim().is_empty()) {
                let i = index(m, key)?;
                if out.group_of[i].is_some() {
                    return Err(Error::invalid(
                        format!("option '{key}'"),
                        format!("column '{}' is in more than one sequence group", m.trim()),
                    ));
                }
                out.group_of[i] = Some(g);
            }
            for &s in &sequence {
                out.group_of[s] = Some(g);
            }
            out.groups.push(Group { sequence });
        }
        if let Some(names) = options.get("partial-update.remove-record-on-sequence-group") {
            let key = "partial-update.remove-record-on-sequence-group";
            for n in names.split(',') {
                let i = index(n, key)?;
                if !out.groups.iter().any(|g| g.sequence.contains(&i)) {
                    return Err(Error::invalid(
                        format!("option '{key}'"),
                        format!("'{}' is not the sequence column of a sequence group", n.trim()),
                    ));
                }
                out.remove_on.insert(i);
            }
        }
        out.aggregators = vec![None; fields.len()];
        let default = options.get("fields.default-aggregate-function");
        for (i, name) in fields.iter().enumerate() {
            let is_sequence = out.groups.iter().any(|g| g.sequence.contains(&i));
            let Some(f) = options.get(&format!("fields.{name}.aggregate-function")).or(default) else { continue };
            if is_sequence || keys.contains(name) {
                continue;
            }
            let f = AggFunction::parse(f)?;
            if out.group_of[i].is_some() {
                out.aggregators[i] = Some(f);
            } else if f != AggFunction::LastNonNullValue {
                return Err(Error::invalid(
                    format!("column '{name}'"),
                    "a partial-update table aggregates only columns of a sequence group (fields.<sequence>.sequence-group)",
                ));
            }
        }
        Ok(out)
    }

    /// Whether the table has any.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Folds an added record (`incoming`, every column) into `row`: a column outside the groups takes a
    /// non-NULL value; a group's columns take theirs (NULL included), or fold them in, when the record's
    /// sequence columns are at least the row's, and fold them in reversed when older.
    pub fn add(&self, row: &mut GroupRow, incoming: &[Option<Datum>]) -> Result<()> {
        let mut empty = vec![false; row.values.len()];
        for i in 0..row.values.len() {
            let Some(g) = self.group_of.get(i).copied().flatten() else {
                if incoming[i].is_some() {
                    row.values[i] = incoming[i].clone();
                }
                continue;
            };
            let seq = &self.groups[g].sequence;
            if self.empty_group(seq, incoming, &mut empty) {
                continue;
            }
            let newer = compare(seq, incoming, &row.values).is_ge();
            match self.aggregators[i] {
                Some(f) if newer => row.states[i].add(f, incoming[i].clone())?,
                Some(f) => {
                    // As if the record had come first.
                    let before = std::mem::replace(&mut row.states[i], AggState::holding(incoming[i].clone(), true));
                    row.states[i].add(f, before.value())?;
                }
                None if !newer => continue,
                // The sequence columns move together.
                None if seq.contains(&i) => {
                    seq.iter().for_each(|&s| row.values[s] = incoming[s].clone());
                    continue;
                }
                None => {
                    row.values[i] = incoming[i].clone();
                    continue;
                }
            }
            row.values[i] = row.states[i].value();
        }
        Ok(())
    }

    /// Folds a retraction (`incoming`, `delete`: a DELETE rather than an UPDATE_BEFORE) into `row`: when it is
    /// at least as new as a group, the group's columns go NULL (or retract the value from their aggregate)
    /// and its sequence columns take the record's. Returns true when the retraction removes the row
    /// (`partial-update.remove-record-on-sequence-group`); `row` then holds the record's values.
    pub fn retract(
        &self,
        row: &mut GroupRow,
        incoming: &[Option<Datum>],
        delete: bool,
        fields: &[DataField],
    ) -> Result<bool> {
        let mut empty = vec![false; row.values.len()];
        let mut moved: BTreeSet<usize> = BTreeSet::new();
        for i in 0..row.values.len() {
            let Some(g) = self.group_of.get(i).copied().flatten() else { continue };
            let seq = &self.groups[g].sequence;
            if self.empty_group(seq, incoming, &mut empty) || compare(seq, incoming, &row.values).is_lt() {
                continue;
            }
            if !seq.contains(&i) {
                row.values[i] = match self.aggregators[i] {
                    Some(f) => {
                        let name = fields.get(i).map_or("", |f| f.name.as_str());
                        row.states[i].retract(f, incoming[i].clone(), name)?;
                        row.states[i].value()
                    }
                    None => None,
                };
                continue;
            }
            for &s in seq {
                if moved.contains(&s) {
                    continue;
                }
                if delete && self.remove_on.contains(&s) {
                    *row = GroupRow::of(incoming);
                    return Ok(true);
                }
                row.values[s] = incoming[s].clone();
                moved.insert(s);
            }
        }
        Ok(false)
    }

    /// A row that starts from a record's values (a key whose first record is a retraction).
    pub fn start_from(incoming: &[Option<Datum>]) -> GroupRow {
        GroupRow::of(incoming)
    }

    /// Whether the record's sequence columns `seq` are all NULL (remembered in `empty` for the group).
    fn empty_group(&self, seq: &[usize], incoming: &[Option<Datum>], empty: &mut [bool]) -> bool {
        if seq.first().is_some_and(|&s| empty[s]) {
            return true;
        }
        if seq.iter().any(|&s| incoming[s].is_some()) {
            return false;
        }
        seq.iter().for_each(|&s| empty[s] = true);
        true
    }
}

/// The record's sequence columns against the row's, in order; NULL first.
fn compare(seq: &[usize], a: &[Option<Datum>], b: &[Option<Datum>]) -> Ordering {
    for &s in seq {
        let o = match (&a[s], &b[s]) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.compare(y),
        };
        if o.is_ne() {
            return o;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn groups(options: &[(&str, &str)]) -> SequenceGroups {
        let fields = names(&["k", "a", "b", "s1", "c", "s2"]);
        let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        SequenceGroups::from_options(&options, &fields, &["k".to_string()]).unwrap()
    }

    fn row(v: [Option<i64>; 6]) -> Vec<Option<Datum>> {
        v.iter().map(|x| x.map(Datum::BigInt)).collect()
    }

    fn add(g: &SequenceGroups, r: &mut GroupRow, v: [Option<i64>; 6]) {
        g.add(r, &row(v)).unwrap();
    }

    /// Two groups (a, b by s1; c by s2): each takes a record's values only when newer on its own sequence,
    /// NULLs included; a record without a group's sequence leaves that group alone.
    #[test]
    fn groups_take_values_by_their_own_sequence() {
        let g = groups(&[("fields.s1.sequence-group", "a,b"), ("fields.s2.sequence-group", "c")]);
        let mut r = GroupRow::new(6);
        add(&g, &mut r, [Some(1), Some(10), Some(20), Some(5), Some(30), Some(7)]);
        assert_eq!(r.values, row([Some(1), Some(10), Some(20), Some(5), Some(30), Some(7)]));
        // Older on s1, newer on s2: only c changes.
        add(&g, &mut r, [Some(1), Some(11), Some(21), Some(4), None, Some(8)]);
        assert_eq!(r.values, row([Some(1), Some(10), Some(20), Some(5), None, Some(8)]));
        // Newer on s1 with b NULL: a and b both change; s2 NULL leaves c's group alone.
        add(&g, &mut r, [Some(1), Some(12), None, Some(6), Some(99), None]);
        assert_eq!(r.values, row([Some(1), Some(12), None, Some(6), None, Some(8)]));
        // Equal sequence counts as newer.
        add(&g, &mut r, [Some(1), Some(13), Some(23), Some(6), None, None]);
        assert_eq!(r.values, row([Some(1), Some(13), Some(23), Some(6), None, Some(8)]));
    }

    /// A group member with an aggregate function folds every record in, newer or older; a retraction newer
    /// on the group retracts its value; outside a group only last_non_null_value is taken.
    #[test]
    fn aggregated_members_fold_records_of_any_order() {
        let g = groups(&[("fields.s1.sequence-group", "a,b"), ("fields.a.aggregate-function", "sum")]);
        let mut r = GroupRow::new(6);
        add(&g, &mut r, [Some(1), Some(10), Some(20), Some(5), None, None]);
        add(&g, &mut r, [Some(1), Some(7), Some(21), Some(4), None, None]);
        assert_eq!(r.values, row([Some(1), Some(17), Some(20), Some(5), None, None]));
        let retraction = row([Some(1), Some(10), Some(20), Some(6), None, None]);
        assert!(!g.retract(&mut r, &retraction, false, &[]).unwrap());
        assert_eq!(r.values, row([Some(1), Some(7), None, Some(6), None, None]));
        let fields = names(&["k", "a", "b", "s1", "c", "s2"]);
        let opts = |o: &[(&str, &str)]| o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let outside = opts(&[("fields.s1.sequence-group", "a"), ("fields.c.aggregate-function", "sum")]);
        assert!(SequenceGroups::from_options(&outside, &fields, &[]).is_err());
        let last = opts(&[("fields.s1.sequence-group", "a"), ("fields.c.aggregate-function", "last_non_null_value")]);
        assert!(SequenceGroups::from_options(&last, &fields, &[]).is_ok());
    }

    /// A retraction newer on a group's sequence clears the group's columns and moves its sequence; an older
    /// one changes nothing; with remove-record-on-sequence-group a newer DELETE removes the row.
    #[test]
    fn retractions_clear_their_groups_or_remove_the_row() {
        let g = groups(&[("fields.s1.sequence-group", "a,b"), ("fields.s2.sequence-group", "c")]);
        let mut r = GroupRow::new(6);
        add(&g, &mut r, [Some(1), Some(10), Some(20), Some(5), Some(30), Some(7)]);
        let older_on_s1 = row([Some(1), Some(10), Some(20), Some(4), Some(30), Some(9)]);
        assert!(!g.retract(&mut r, &older_on_s1, false, &[]).unwrap());
        assert_eq!(r.values, row([Some(1), Some(10), Some(20), Some(5), None, Some(9)]));
        let g = groups(&[
            ("fields.s1.sequence-group", "a,b"),
            ("fields.s2.sequence-group", "c"),
            ("partial-update.remove-record-on-sequence-group", "s1"),
        ]);
        let delete = row([Some(1), None, None, Some(6), None, None]);
        assert!(g.retract(&mut r, &delete, true, &[]).unwrap());
        assert_eq!(r.values, delete);
    }

    #[test]
    fn a_column_in_two_groups_and_unknown_columns_are_refused() {
        let fields = names(&["k", "a", "s"]);
        let opts = |o: &[(&str, &str)]| o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let two = opts(&[("fields.s.sequence-group", "a"), ("fields.k.sequence-group", "a")]);
        assert!(SequenceGroups::from_options(&two, &fields, &[]).is_err());
        let unknown = opts(&[("fields.nope.sequence-group", "a")]);
        assert!(SequenceGroups::from_options(&unknown, &fields, &[]).is_err());
    }
}
