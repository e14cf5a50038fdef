//! Every rule of `apply_schema_changes`, accepted and refused, and a property test over random change
//! sequences.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;
use crate::ErrorKind;

fn ty(s: &str) -> DataType {
    s.parse().unwrap()
}

/// `id BIGINT (pk), p STRING (partition, pk), v BIGINT, k STRING`, with `extra` options.
fn base(extra: &[(&str, &str)]) -> TableSchema {
    let columns = vec![
        ("id".to_string(), ty("BIGINT")),
        ("p".to_string(), ty("STRING")),
        ("v".to_string(), ty("BIGINT")),
        ("k".to_string(), ty("STRING")),
    ];
    let mut options: BTreeMap<String, String> = [("bucket".to_string(), "1".to_string())].into();
    for (k, v) in extra {
        options.insert(k.to_string(), v.to_string());
    }
    TableSchema::new(columns, vec!["p".into()], vec!["id".into(), "p".into()], options, 7).unwrap()
}

fn names(s: &TableSchema) -> Vec<&str> {
    s.fields.iter().map(|f| f.name.as_str()).collect()
}

fn field<'s>(s: &'s TableSchema, name: &str) -> &'s DataField {
    s.field(name).unwrap()
}

/// Applies `changes` to `schema`, expecting an invalid-input error whose text holds every needle.
fn refused(schema: &TableSchema, changes: &[SchemaChange], needles: &[&str]) {
    let e = match apply_schema_changes(schema, changes) {
        Ok(s) => panic!("{changes:?} was accepted: {:?}", names(&s)),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
    for n in needles {
        assert!(e.to_string().contains(n), "{changes:?}: '{e}' lacks '{n}'");
    }
}

fn add_at(name: &str, t: &str, position: Option<ColumnMove>) -> SchemaChange {
    SchemaChange::AddColumn { name: name.into(), data_type: ty(t), position, comment: None }
}

#[test]
fn an_added_column_gets_the_next_field_id_and_nothing_else_changes() {
    let old = base(&[]);
    let new = apply_schema_changes(
        &old,
        &[SchemaChange::AddColumn {
            name: "c".into(),
            data_type: ty("DECIMAL(10, 2)"),
            position: None,
            comment: Some("price".into()),
        }],
    )
    .unwrap();
    assert_eq!(new.id, old.id + 1);
    assert_eq!(names(&new), ["id", "p", "v", "k", "c"]);
    assert_eq!(field(&new, "c").id, 4);
    assert_eq!(field(&new, "c").description.as_deref(), Some("price"));
    assert_eq!(new.highest_field_id, 4);
    assert_eq!(new.fields[..4], old.fields[..]);
    assert_eq!(
        (&new.primary_keys, &new.partition_keys, &new.options),
        (&old.primary_keys, &old.partition_keys, &old.options)
    );
    assert_eq!((new.comment.as_ref(), new.time_millis), (old.comment.as_ref(), old.time_millis));
}

#[test]
fn added_columns_go_where_asked() {
    let old = base(&[]);
    let at = |position| names(&apply_schema_changes(&old, &[add_at("c", "INT", position)]).unwrap()).join(" ");
    assert_eq!(at(Some(ColumnMove::First)), "c id p v k");
    assert_eq!(at(Some(ColumnMove::After("p".into()))), "id p c v k");
    assert_eq!(at(Some(ColumnMove::Before("p".into()))), "id c p v k");
    assert_eq!(at(Some(ColumnMove::Last)), "id p v k c");
    let before_partition = base(&[(ADD_COLUMN_BEFORE_PARTITION, "true")]);
    let new = apply_schema_changes(&before_partition, &[SchemaChange::add_column("c", ty("INT"))]).unwrap();
    assert_eq!(names(&new), ["id", "c", "p", "v", "k"]);
    refused(&old, &[add_at("c", "INT", Some(ColumnMove::After("nope".into())))], &["'nope'", "no such column"]);
}

#[test]
fn added_columns_must_be_nullable_and_new() {
    let old = base(&[]);
    refused(&old, &[SchemaChange::add_column("c", ty("INT NOT NULL"))], &["'c'", "cannot be NOT NULL"]);
    refused(&old, &[SchemaChange::add_column("v", ty("INT"))], &["'v'", "already exists"]);
    refused(&old, &[SchemaChange::add_column("V", ty("INT"))], &["'V'", "only in case", "did you mean 'v'?"]);
    refused(&old, &[SchemaChange::add_column("", ty("INT"))], &["empty"]);
    refused(&old, &[SchemaChange::add_column("  ", ty("INT"))], &["empty"]);
    refused(&old, &[SchemaChange::add_column("_KEY_v", ty("INT"))], &["_KEY_"]);
    for system in SYSTEM_FIELD_NAMES {
        refused(&old, &[SchemaChange::add_column(*system, ty("BIGINT"))], &[system, "system field"]);
    }
    refused(
        &old,
        &[SchemaChange::add_column("c", ty("INT")), SchemaChange::add_column("c", ty("STRING"))],
        &["'c'", "already exists"],
    );
}

#[test]
fn dropped_columns_leave_their_ids_behind() {
    let old = base(&[]);
    let new = apply_schema_changes(&old, &[SchemaChange::drop_column("v")]).unwrap();
    assert_eq!(names(&new), ["id", "p", "k"]);
    assert_eq!(new.highest_field_id, 3);
    // Dropped and added back: a new column, with a new id.
    let again =
        apply_schema_changes(&old, &[SchemaChange::drop_column("v"), SchemaChange::add_column("v", ty("STRING"))])
            .unwrap();
    assert_eq!((field(&again, "v").id, again.highest_field_id), (4, 4));
    let later = apply_schema_changes(&new, &[SchemaChange::add_column("v", ty("BIGINT"))]).unwrap();
    assert_eq!(field(&later, "v").id, 4, "the id of a column dropped in an earlier schema is not reused");
}

#[test]
fn key_columns_and_the_last_column_cannot_be_dropped() {
    let old = base(&[]);
    refused(&old, &[SchemaChange::drop_column("p")], &["'p'", "partition column"]);
    refused(&old, &[SchemaChange::drop_column("id")], &["'id'", "primary-key column"]);
    refused(&old, &[SchemaChange::drop_column("nope")], &["'nope'", "no such column", "id, p, v, k"]);
    refused(&old, &[SchemaChange::drop_column("V")], &["did you mean 'v'?"]);
    refused(&old, &[SchemaChange::drop_column("v"), SchemaChange::drop_column("v")], &["'v'", "no such column"]);
    let one = TableSchema::new(vec![("a".into(), ty("INT"))], vec![], vec![], BTreeMap::new(), 0).unwrap();
    refused(&one, &[SchemaChange::drop_column("a")], &["'a'", "last column"]);
    // A renamed key column is still a key column.
    refused(&old, &[SchemaChange::rename_column("id", "key"), SchemaChange::drop_column("key")], &["primary-key"]);
}

#[test]
fn columns_named_by_options_cannot_be_dropped() {
    for (key, value, column) in [
        ("sequence.field", "v", "v"),
        ("fields.k.aggregate-function", "max", "k"),
        ("fields.k.default-value", "x", "k"),
        ("fields.v.sequence-group", "k", "k"),
    ] {
        let mut extra = vec![(key, value)];
        if key.contains("aggregate") {
            extra.push(("merge-engine", "aggregation"));
        }
        if key.contains("sequence-group") {
            extra.push(("merge-engine", "partial-update"));
        }
        refused(&base(&extra), &[SchemaChange::drop_column(column)], &[&format!("'{column}'"), key]);
    }
}

#[test]
fn renames_keep_the_field_id_and_carry_the_primary_key() {
    let old = base(&[]);
    let new = apply_schema_changes(&old, &[SchemaChange::rename_column("id", "key")]).unwrap();
    assert_eq!(names(&new), ["key", "p", "v", "k"]);
    assert_eq!(field(&new, "key"), &DataField { name: "key".into(), ..old.fields[0].clone() });
    assert_eq!(new.primary_keys, ["key", "p"]);
    assert_eq!(new.trimmed_primary_keys(), ["key"]);
    assert_eq!(new.highest_field_id, old.highest_field_id);
    // A change of case of the column's own name is a rename like any other.
    let upper = apply_schema_changes(&old, &[SchemaChange::rename_column("v", "V")]).unwrap();
    assert_eq!((field(&upper, "V").id, names(&upper)), (2, vec!["id", "p", "V", "k"]));
    // A chain of renames ends where it ends.
    let chain = apply_schema_changes(
        &old,
        &[
            SchemaChange::rename_column("id", "a"),
            SchemaChange::rename_column("a", "b"),
            SchemaChange::rename_column("v", "id"),
        ],
    )
    .unwrap();
    assert_eq!((names(&chain), chain.primary_keys.clone()), (vec!["b", "p", "id", "k"], vec!["b".into(), "p".into()]));
}

#[test]
fn renames_are_refused_for_partition_columns_and_taken_names() {
    let old = base(&[]);
    refused(&old, &[SchemaChange::rename_column("p", "q")], &["'p'", "partition column"]);
    refused(&old, &[SchemaChange::rename_column("v", "k")], &["'k'", "already exists"]);
    refused(&old, &[SchemaChange::rename_column("v", "v")], &["'v'", "already exists"]);
    refused(&old, &[SchemaChange::rename_column("v", "K")], &["'K'", "only in case", "did you mean 'k'?"]);
    refused(&old, &[SchemaChange::rename_column("nope", "x")], &["'nope'", "no such column"]);
    refused(&old, &[SchemaChange::rename_column("v", "")], &["empty"]);
    refused(&old, &[SchemaChange::rename_column("v", "_KEY_id")], &["_KEY_"]);
    refused(&old, &[SchemaChange::rename_column("v", "_SEQUENCE_NUMBER")], &["system field"]);
    refused(&old, &[SchemaChange::rename_column("v", "_VALUE_KIND")], &["system field"]);
}

#[test]
fn renames_follow_into_the_options_paimon_renames() {
    let old = base(&[
        ("sequence.field", "v"),
        ("merge-engine", "partial-update"),
        ("fields.v.sequence-group", "k"),
        ("fields.k.ignore-retract", "true"),
    ]);
    let new =
        apply_schema_changes(&old, &[SchemaChange::rename_column("v", "ts"), SchemaChange::rename_column("k", "name")])
            .unwrap();
    assert_eq!(new.options.get("sequence.field").map(String::as_str), Some("ts"));
    assert_eq!(new.options.get("fields.ts.sequence-group").map(String::as_str), Some("name"));
    assert_eq!(new.options.get("fields.name.ignore-retract").map(String::as_str), Some("true"));
    assert!(!new.options.contains_key("fields.v.sequence-group"));
    assert_eq!(new.options.len(), old.options.len());
    assert_eq!(
        options_after_renames(
            &old.options,
            &[SchemaChange::rename_column("v", "ts"), SchemaChange::rename_column("k", "name")]
        ),
        new.options
    );
    // Aggregation keys move with their column.
    let agg = base(&[("merge-engine", "aggregation"), ("fields.v.aggregate-function", "sum")]);
    let new = apply_schema_changes(&agg, &[SchemaChange::rename_column("v", "total")]).unwrap();
    assert_eq!(new.options.get("fields.total.aggregate-function").map(String::as_str), Some("sum"));
    // bucket-key names key columns only; the primary key and the option move together.
    let bucketed = base(&[("bucket-key", "id")]);
    let new = apply_schema_changes(&bucketed, &[SchemaChange::rename_column("id", "key")]).unwrap();
    assert_eq!(
        (new.options.get("bucket-key").map(String::as_str), new.bucket_keys()),
        (Some("key"), vec!["key".into()])
    );
}

#[test]
fn renames_are_refused_where_paimon_would_leave_an_option_naming_the_old_name() {
    let with = |k: &'static str, v: &'static str| base(&[(k, v)]);
    refused(&with("rowkind.field", "k"), &[SchemaChange::rename_column("k", "kind")], &["'k'", "rowkind.field"]);
    refused(
        &with("fields.k.default-value", "x"),
        &[SchemaChange::rename_column("k", "j")],
        &["fields.k.default-value"],
    );
}

#[test]
fn type_changes_widen_and_keep_the_field_id() {
    let old = base(&[]);
    let widen = |column: &str, from: &str, to: &str| {
        let start = apply_schema_changes(&old, &[SchemaChange::add_column(column, ty(from))]).unwrap();
        let new = apply_schema_changes(&start, &[SchemaChange::update_column_type(column, ty(to))])
            .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
        assert_eq!(field(&new, column).data_type, ty(to));
        assert_eq!(field(&new, column).id, field(&start, column).id);
        assert_eq!(new.highest_field_id, start.highest_field_id);
    };
    for (from, to) in [
        ("TINYINT", "SMALLINT"),
        ("SMALLINT", "INT"),
        ("INT", "BIGINT"),
        ("SMALLINT", "FLOAT"),
        ("INT", "DOUBLE"),
        ("FLOAT", "DOUBLE"),
        ("INT", "DECIMAL(10, 0)"),
        ("BIGINT", "DECIMAL(21, 2)"),
        ("DECIMAL(10, 2)", "DECIMAL(12, 2)"),
        ("DECIMAL(10, 2)", "DECIMAL(11, 3)"),
        ("DECIMAL(10, 2)", "DECIMAL(20, 2)"),
        ("VARCHAR(5)", "VARCHAR(10)"),
        ("VARCHAR(5)", "STRING"),
        ("CHAR(3)", "VARCHAR(3)"),
        ("BINARY(4)", "BYTES"),
        ("VARBINARY(4)", "VARBINARY(8)"),
        ("TIMESTAMP(3)", "TIMESTAMP(6)"),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(9) WITH LOCAL TIME ZONE"),
        ("INT", "INT"),
        ("DATE", "DATE"),
    ] {
        widen("c", from, to);
    }
    // NOT NULL may become nullable; with a widening too.
    let strict = TableSchema::new(
        vec![("a".into(), ty("INT")), ("b".into(), ty("INT NOT NULL"))],
        vec![],
        vec!["a".into()],
        BTreeMap::new(),
        0,
    )
    .unwrap();
    let new = apply_schema_changes(&strict, &[SchemaChange::update_column_type("b", ty("BIGINT"))]).unwrap();
    assert_eq!(field(&new, "b").data_type, ty("BIGINT"));
    let new = apply_schema_changes(&strict, &[SchemaChange::update_column_type("b", ty("INT"))]).unwrap();
    assert!(field(&new, "b").data_type.nullable);
}

#[test]
fn narrowing_lossy_and_key_type_changes_are_refused() {
    let old = base(&[]);
    let refuse = |from: &str, to: &str, needle: &str| {
        let start = apply_schema_changes(&old, &[SchemaChange::add_column("c", ty(from))]).unwrap();
        refused(&start, &[SchemaChange::update_column_type("c", ty(to))], &["'c'", from, to, needle]);
    };
    refuse("BIGINT", "INT", "not a widening");
    refuse("STRING", "INT", "not a widening");
    refuse("DOUBLE", "FLOAT", "not a widening");
    refuse("INT", "STRING", "not a widening");
    refuse("BIGINT", "DOUBLE", "rounded");
    refuse("INT", "FLOAT", "rounded");
    refuse("DECIMAL(10, 2)", "DOUBLE", "rounded");
    refuse("DOUBLE", "DECIMAL(38, 10)", "rounded");
    refuse("INT", "DECIMAL(10, 2)", "overflow");
    refuse("DECIMAL(10, 2)", "DECIMAL(10, 1)", "rounded to 1 decimal places");
    refuse("DECIMAL(10, 2)", "DECIMAL(10, 3)", "overflow");
    refuse("VARCHAR(10)", "VARCHAR(5)", "longer than 5");
    refuse("STRING", "VARCHAR(100)", "longer than 100");
    refuse("CHAR(5)", "VARCHAR(3)", "longer than 3");
    refuse("VARCHAR(3)", "CHAR(3)", "not a widening");
    refuse("CHAR(3)", "CHAR(5)", "pads");
    refuse("BINARY(3)", "BINARY(5)", "pads");
    refuse("VARBINARY(8)", "BINARY(8)", "not a widening");
    refuse("TIMESTAMP(6)", "TIMESTAMP(3)", "precision 3");
    refuse("TIMESTAMP(6)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "time zone");
    refuse("TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(6)", "time zone");
    refuse("TIMESTAMP(6)", "DATE", "time of day");
    refuse("TIME(0)", "TIME(3)", "TIME precisions");
    refuse("DATE", "TIMESTAMP(6)", "not a widening");
    refuse("BOOLEAN", "INT", "not a widening");
    refuse("INT", "INT NOT NULL", "nulls");
    refused(&old, &[SchemaChange::update_column_type("p", ty("STRING"))], &["'p'", "partition column"]);
    refused(&old, &[SchemaChange::update_column_type("id", ty("DECIMAL(38, 0)"))], &["'id'", "primary-key column"]);
    refused(&old, &[SchemaChange::update_column_type("nope", ty("INT"))], &["'nope'", "no such column"]);
    let indexed = base(&[("pk-btree.index.columns", "v")]);
    refused(&indexed, &[SchemaChange::update_column_type("v", ty("DECIMAL(38, 0)"))], &["pk-btree.index.columns"]);
}

/// Paimon's implicit casts by type root (`DataTypeCasts`), transcribed as facts to check Strata against.
fn paimon_implicit_cast(from: TypeRoot, to: TypeRoot) -> bool {
    use TypeRoot as T;
    let same_root = std::mem::discriminant(&from) == std::mem::discriminant(&to);
    let numeric = |t: TypeRoot| {
        matches!(t, T::TinyInt | T::SmallInt | T::Int | T::BigInt | T::Float | T::Double | T::Decimal { .. })
    };
    same_root
        || match to {
            T::VarChar(_) => matches!(from, T::Char(_)),
            T::VarBinary(_) => matches!(from, T::Binary(_)),
            T::Decimal { .. } | T::Double => numeric(from),
            T::SmallInt => matches!(from, T::TinyInt),
            T::Int => matches!(from, T::TinyInt | T::SmallInt),
            T::BigInt => matches!(from, T::TinyInt | T::SmallInt | T::Int),
            T::Float => matches!(from, T::TinyInt | T::SmallInt | T::Int | T::BigInt | T::Decimal { .. }),
            T::Date => matches!(from, T::Timestamp(_)),
            T::Time(_) => matches!(from, T::Timestamp(_)),
            T::Timestamp(_) => matches!(from, T::LocalZonedTimestamp(_)),
            T::LocalZonedTimestamp(_) => matches!(from, T::Timestamp(_)),
            _ => false,
        }
}

fn sample_roots() -> Vec<TypeRoot> {
    use TypeRoot as T;
    let mut roots = vec![T::Boolean, T::TinyInt, T::SmallInt, T::Int, T::BigInt, T::Float, T::Double, T::Date];
    for n in [1, 3, 10, crate::schema::types::MAX_LENGTH] {
        roots.extend([T::Char(n), T::VarChar(n), T::Binary(n), T::VarBinary(n)]);
    }
    for p in [0, 3, 6, 9] {
        roots.extend([T::Time(p), T::Timestamp(p), T::LocalZonedTimestamp(p)]);
    }
    for (precision, scale) in [(1, 0), (5, 0), (10, 0), (10, 2), (12, 2), (19, 0), (20, 2), (38, 10), (38, 0)] {
        roots.push(T::Decimal { precision, scale });
    }
    roots
}

#[test]
fn every_widening_is_a_paimon_implicit_cast() {
    let roots = sample_roots();
    let mut allowed = 0;
    for &from in &roots {
        for &to in &roots {
            if type_change_refusal(from, to).is_none() {
                allowed += 1;
                assert!(paimon_implicit_cast(from, to), "{from} -> {to} is not implicit in Paimon");
                // Widening is an order: no two different types widen into each other.
                assert!(from == to || type_change_refusal(to, from).is_some(), "{from} <-> {to}");
            }
        }
    }
    assert!(allowed > roots.len() * 2, "{allowed} widenings among {} types", roots.len());
}

#[test]
fn changes_display_as_they_read() {
    let change = SchemaChange::AddColumn {
        name: "c".into(),
        data_type: ty("DECIMAL(10, 2)"),
        position: Some(ColumnMove::After("v".into())),
        comment: None,
    };
    assert_eq!(change.to_string(), "add column c DECIMAL(10, 2) after v");
    assert_eq!(SchemaChange::rename_column("a", "b").to_string(), "rename column a to b");
    assert_eq!(SchemaChange::update_column_type("a", ty("BIGINT")).to_string(), "change column a to BIGINT");
}

/// One random change over a small pool of names and types (many refused, which is the point).
fn change_strategy() -> impl Strategy<Value = SchemaChange> {
    const NAMES: &[&str] = &["id", "p", "v", "k", "a", "b", "B", "c"];
    const TYPES: &[&str] =
        &["INT", "BIGINT", "STRING", "VARCHAR(3)", "DECIMAL(10, 2)", "DECIMAL(12, 2)", "DOUBLE", "INT NOT NULL"];
    let name = proptest::sample::select(NAMES);
    let type_ = proptest::sample::select(TYPES);
    prop_oneof![
        (name.clone(), type_.clone(), proptest::option::of(name.clone())).prop_map(|(n, t, after)| {
            SchemaChange::AddColumn {
                name: n.to_string(),
                data_type: ty(t),
                position: after.map(|a| ColumnMove::After(a.to_string())),
                comment: None,
            }
        }),
        name.clone().prop_map(SchemaChange::drop_column),
        (name.clone(), name.clone()).prop_map(|(a, b)| SchemaChange::rename_column(a, b)),
        (name, type_).prop_map(|(n, t)| SchemaChange::update_column_type(n, ty(t))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever sequence of changes is accepted, one at a time or all at once: field ids stay unique and
    /// below `highestFieldId`, which never shrinks; a column keeps its id while it lives and a new column
    /// never gets an id seen before; the keys stay columns.
    #[test]
    fn accepted_changes_keep_the_schema_sound(changes in proptest::collection::vec(change_strategy(), 1..24)) {
        let mut schema = base(&[("sequence.field", "v")]);
        let mut seen: BTreeSet<i32> = schema.fields.iter().map(|f| f.id).collect();
        let mut accepted = Vec::new();
        for change in changes {
            let Ok(next) = apply_schema_changes(&schema, std::slice::from_ref(&change)) else { continue };
            let ids: BTreeSet<i32> = next.fields.iter().map(|f| f.id).collect();
            prop_assert_eq!(ids.len(), next.fields.len(), "duplicate field id after {}", change);
            prop_assert!(next.fields.iter().all(|f| f.id <= next.highest_field_id));
            prop_assert!(next.highest_field_id >= schema.highest_field_id);
            prop_assert_eq!(next.id, schema.id + 1);
            for f in &next.fields {
                match schema.fields.iter().find(|old| old.id == f.id) {
                    Some(old) => {
                        let renamed = matches!(change, SchemaChange::RenameColumn { .. });
                        prop_assert!(old.name == f.name || renamed, "{} renamed by {}", old.name, change);
                    }
                    None => prop_assert!(!seen.contains(&f.id), "id {} handed out again", f.id),
                }
            }
            for key in next.primary_keys.iter().chain(&next.partition_keys) {
                prop_assert!(next.fields.iter().any(|f| &f.name == key), "key {} lost after {}", key, change);
            }
            prop_assert!(next.validate().is_ok());
            seen.extend(ids);
            accepted.push(change);
            schema = next;
        }
        let at_once = apply_schema_changes(&base(&[("sequence.field", "v")]), &accepted);
        prop_assert!(at_once.is_ok(), "accepted one by one, refused together: {:?}", at_once.err());
        if let Ok(at_once) = at_once {
            prop_assert_eq!(&at_once.fields, &schema.fields);
            prop_assert_eq!(&at_once.primary_keys, &schema.primary_keys);
            prop_assert_eq!(&at_once.options, &schema.options);
            prop_assert_eq!(at_once.highest_field_id, schema.highest_field_id);
        }
    }
}
