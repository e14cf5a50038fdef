//! `strata demo`: the README's main job.

use std::collections::BTreeMap;

use strata_spec::{parse_columns, Error, TableSchema};
use strata_table::{inspect, now_millis, Table};

use crate::context::{absolute, Context};

/// `strata demo`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct DemoArgs {
    /// The warehouse directory.
    #[arg(long, default_value = "strata-warehouse")]
    warehouse: String,
    /// Commits to stream.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Rows per commit.
    #[arg(long, default_value_t = 20_000)]
    rows: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `strata demo` in the `--warehouse` directory.
pub(crate) fn run(ctx: &Context, args: DemoArgs) -> Result<(), Error> {
    demo(ctx, &absolute(&args.warehouse), args.rounds, args.rows, args.json)
}

/// The README's main job: two tables in a local warehouse, one with deletion vectors and one merge-on-read,
/// the same stream of upserts and deletes into both, then scans both ways.
fn demo(ctx: &Context, warehouse: &str, rounds: usize, rows_per_round: usize, json: bool) -> Result<(), Error> {
    use std::time::Instant;

    let catalog = strata_table::FileSystemCatalog::new(ctx.io(), warehouse);
    let tables = demo_tables(ctx, &catalog)?;
    let mut report = serde_json::Map::new();
    let say = |line: String| {
        if !json {
            println!("{line}");
        }
    };
    say(format!(
        "warehouse {warehouse}: tables demo.kv_dv (deletion vectors) and demo.kv_mor (merge-on-read), 4 buckets"
    ));
    for (name, table) in &tables {
        let started = Instant::now();
        let deletes = write_rounds(table, rounds, rows_per_round)?;
        let write_secs = started.elapsed().as_secs_f64();
        let total = rounds * rows_per_round;
        let inspected = inspect(table, None)?;
        let vectors: usize = inspected["buckets"]
            .as_array()
            .map(|bs| bs.iter().filter_map(|b| b["indexFile"]["deletionVectors"].as_array().map(Vec::len)).sum())
            .unwrap_or(0);
        let scan_started = Instant::now();
        let scanned = strata_table::scan(table, &Default::default())?;
        let scan_secs = scan_started.elapsed().as_secs_f64();
        say(format!(
            "{name}: {rounds} commits of {rows_per_round} rows ({deletes} deletes) in {write_secs:.2}s ({:.0} rows/s, compaction included); {} files, {vectors} deletion vectors; scan {} rows in {:.3}s ({})",
            total as f64 / write_secs,
            inspected["totals"]["fileCount"],
            scanned.num_rows(),
            scan_secs,
            if name.ends_with("dv") { "no merging" } else { "merge-on-read" },
        ));
        report.insert(
            name.to_string(),
            serde_json::json!({"commits": rounds, "rows": total, "deletes": deletes, "writeSeconds": write_secs,
                "files": inspected["totals"]["fileCount"], "deletionVectors": vectors,
                "scanRows": scanned.num_rows(), "scanSeconds": scan_secs}),
        );
    }
    // The same data both ways: the DV table merge-on-read must give the same rows as its raw read.
    let dv_table = &tables[0].1;
    let raw = strata_table::scan(dv_table, &Default::default())?.num_rows();
    let merged = strata_table::scan(dv_table, &strata_table::ScanOptions { force_merge: true, ..Default::default() })?
        .num_rows();
    let mor = strata_table::scan(&tables[1].1, &Default::default())?.num_rows();
    say(format!("kv_dv read raw: {raw} rows; kv_dv merge-on-read: {merged} rows; kv_mor: {mor} rows"));
    if raw != merged || raw != mor {
        return Err(Error::corrupt_file(
            warehouse.to_string(),
            format!("demo tables disagree: raw {raw}, merged {merged}, mor {mor}"),
        ));
    }
    say(format!("inspect them: strata inspect {}", catalog.table_path("demo", "kv_dv")));
    report.insert("agree".to_string(), serde_json::json!(true));
    if json {
        println!("{}", serde_json::Value::Object(report));
    }
    Ok(())
}

/// The demo's two tables, created afresh (the demo owns them): `demo.kv_dv` with deletion vectors and
/// `demo.kv_mor` merge-on-read, 4 buckets each.
fn demo_tables(ctx: &Context, catalog: &strata_table::FileSystemCatalog) -> Result<Vec<(&'static str, Table)>, Error> {
    catalog.create_database("demo", true)?;
    let mut tables = Vec::new();
    for (name, dv) in [("kv_dv", true), ("kv_mor", false)] {
        Table::delete_table_dir(&ctx.io(), &catalog.table_path("demo", name))?;
        let schema = TableSchema::new(
            parse_columns("id BIGINT NOT NULL, name STRING, v BIGINT")?,
            vec![],
            vec!["id".to_string()],
            BTreeMap::from([
                ("bucket".to_string(), "4".to_string()),
                ("deletion-vectors.enabled".to_string(), dv.to_string()),
            ]),
            now_millis(),
        )?;
        tables.push((name, catalog.create_table("demo", name, schema, false)?));
    }
    Ok(tables)
}

/// Writes `rounds` commits of `rows_per_round` random upserts, a tenth of them deletes, into `table` (the
/// same stream for every table: a fixed seed); returns the number of deletes.
fn write_rounds(table: &Table, rounds: usize, rows_per_round: usize) -> Result<usize, Error> {
    use rand::{Rng, SeedableRng};
    let key_space = (rows_per_round * 4).max(1) as i64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut write = strata_table::TableWrite::new(table)?;
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("name", arrow_schema::DataType::Utf8, true),
        arrow_schema::Field::new("v", arrow_schema::DataType::Int64, true),
    ]));
    let mut deletes = 0usize;
    for round in 0..rounds {
        let ids: Vec<i64> = (0..rows_per_round).map(|_| rng.random_range(0..key_space)).collect();
        let kinds: Vec<i8> = ids.iter().map(|_| if rng.random_bool(0.1) { 3 } else { 0 }).collect();
        deletes += kinds.iter().filter(|k| **k == 3).count();
        let batch = arrow_array::RecordBatch::try_new(
            schema.clone(),
            vec![
                std::sync::Arc::new(arrow_array::Int64Array::from(ids.clone())),
                std::sync::Arc::new(arrow_array::StringArray::from_iter_values(
                    ids.iter().map(|i| format!("name-{i}-r{round}")),
                )),
                std::sync::Arc::new(arrow_array::Int64Array::from_iter_values(
                    ids.iter().map(|i| i * 10 + round as i64),
                )),
            ],
        )
        .map_err(|e| Error::internal_from("demo rows", e))?;
        write.write_with_kinds(&batch, &kinds)?;
        let messages = write.prepare_commit()?;
        let c = strata_table::Committable { identifier: round as i64 + 1, messages, kind: None, properties: None };
        table.new_commit("strata-demo")?.commit(&c)?;
    }
    Ok(deletes)
}
