//! Strata as an embedded key-value store: create a table with deletion vectors, put, delete, commit,
//! get (one-off and through a long-lived `TableQuery`), and scan with a filter.
//!
//! `cargo run --example kv_store [WAREHOUSE]` (a temporary directory by default).

use std::collections::BTreeMap;
use std::sync::Arc;

use strata::spec::{DataType, Datum, TableSchema};
use strata::{get, Catalog, CmpOp, LocalFileIO, Predicate, ReadBuilder, TableQuery, TableWriter};

fn main() -> strata::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| strata::Error::io("tempdir", e))?;
    let warehouse = std::env::args().nth(1).unwrap_or_else(|| dir.path().to_string_lossy().into_owned());
    let catalog = Catalog::new(Arc::new(LocalFileIO::new()), &warehouse);
    catalog.create_database("app", true)?;
    let schema = TableSchema::new(
        vec![
            ("user_id".into(), DataType::bigint()),
            ("email".into(), DataType::string()),
            ("visits".into(), DataType::bigint()),
        ],
        vec![],
        vec!["user_id".into()],
        BTreeMap::from([
            ("bucket".to_string(), "4".to_string()),
            ("deletion-vectors.enabled".to_string(), "true".to_string()),
        ]),
        0,
    )?;
    let table = catalog.create_table("app", "users", schema, true)?;

    let mut writer = TableWriter::new(&table, "kv-example")?;
    for id in 0..1000i64 {
        writer.put(vec![
            Some(Datum::BigInt(id)),
            Some(Datum::String(format!("user{id}@example.com"))),
            Some(Datum::BigInt(0)),
        ])?;
    }
    writer.commit()?;
    // Update some, delete some: the old rows are marked in deletion vectors, not merged on read.
    for id in (0..1000i64).step_by(10) {
        writer.put(vec![
            Some(Datum::BigInt(id)),
            Some(Datum::String(format!("user{id}@example.org"))),
            Some(Datum::BigInt(id)),
        ])?;
    }
    for id in (5..1000i64).step_by(100) {
        writer.delete(vec![Some(Datum::BigInt(id))])?;
    }
    let snapshot = writer.commit()?;

    let row = get(&table, &[Some(Datum::BigInt(20))], None)?;
    assert!(row.is_some(), "user 20 is there");
    assert!(get(&table, &[Some(Datum::BigInt(105))], None)?.is_none(), "user 105 was deleted");
    // Many lookups: a query keeps local lookup files of the files it touched, and follows new commits
    // when refreshed.
    let query = TableQuery::new(&table)?;
    for id in (0..1000i64).step_by(7) {
        let found = query.get(&[Some(Datum::BigInt(id))])?.is_some();
        assert_eq!(found, id % 100 != 5, "user {id}");
    }
    writer.delete(vec![Some(Datum::BigInt(20))])?;
    writer.commit()?;
    assert!(query.get(&[Some(Datum::BigInt(20))])?.is_some(), "the query still reads its snapshot");
    query.refresh()?;
    assert!(query.get(&[Some(Datum::BigInt(20))])?.is_none(), "refreshed, it sees the delete");
    let count = ReadBuilder::new(&table).count()?;
    assert_eq!(count, 989);
    let busy = ReadBuilder::new(&table)
        .with_filter(Predicate::cmp("visits", CmpOp::Gt, Datum::BigInt(500)))
        .with_projection(&["user_id", "visits"])
        .read()?;
    println!(
        "snapshot {snapshot:?}: {count} users; {} with more than 500 visits; user 20 = {:?}",
        busy.num_rows(),
        row.map(|b| b.num_rows())
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_runs() {
        super::main().unwrap_or_else(|e| panic!("{e}"));
    }
}
