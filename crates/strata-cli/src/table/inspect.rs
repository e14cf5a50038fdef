//! `strata inspect`: a table's schema, snapshots, and files per bucket and level.

use strata_spec::Error;

use crate::context::Context;

/// `strata inspect`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct InspectArgs {
    /// The table directory.
    table_dir: String,
    /// Inspect this snapshot instead of the latest.
    #[arg(long)]
    snapshot: Option<i64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `strata inspect`.
pub(crate) fn run(ctx: &Context, args: InspectArgs) -> Result<(), Error> {
    let table = ctx.open_table(&args.table_dir)?;
    let report = strata_table::inspect(&table, args.snapshot)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| Error::internal_from("report", e))?);
    } else {
        print_report(&report);
    }
    Ok(())
}

/// The report as text: schema, snapshots, then files per bucket and level.
fn print_report(r: &serde_json::Value) {
    println!("table     {}", r["path"].as_str().unwrap_or(""));
    let schema = &r["schema"];
    let fields: Vec<String> = schema["fields"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| format!("{} {}", f["name"].as_str().unwrap_or(""), f["type"].as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    println!("schema    {} (id {})", fields.join(", "), schema["id"]);
    let no_keys = schema["primaryKeys"].as_array().is_none_or(Vec::is_empty);
    match no_keys {
        true => println!("keys      none: an append table; partition {}", schema["partitionKeys"]),
        false => println!("keys      primary {} partition {}", schema["primaryKeys"], schema["partitionKeys"]),
    }
    println!("options   {}", schema["options"]);
    let snaps = r["snapshots"].as_array().map(Vec::len).unwrap_or(0);
    println!("snapshots {} (earliest {}, latest {})", snaps, r["earliestSnapshot"], r["latestSnapshot"]);
    for s in r["snapshots"].as_array().into_iter().flatten() {
        println!(
            "  #{:<5} {:<8} rows {:>10} (delta {:>8})  user {}",
            s["id"],
            s["commitKind"].as_str().unwrap_or(""),
            s["totalRecordCount"],
            s["deltaRecordCount"],
            s["commitUser"].as_str().unwrap_or("")
        );
    }
    let t = &r["totals"];
    println!("snapshot {}: {} files, {} rows, {} bytes", r["snapshot"], t["fileCount"], t["rowCount"], t["fileSize"]);
    for b in r["buckets"].as_array().into_iter().flatten() {
        println!("  partition {} bucket {}", b["partition"], b["bucket"]);
        for l in b["levels"].as_array().into_iter().flatten() {
            println!(
                "    level {}: {} files, {} rows, {} bytes",
                l["level"], l["fileCount"], l["rowCount"], l["fileSize"]
            );
        }
        if let Some(ix) = b["indexFile"].as_object() {
            let n = ix.get("deletionVectors").and_then(|d| d.as_array()).map(Vec::len).unwrap_or(0);
            println!("    deletion vectors: {} in {}", n, ix.get("fileName").and_then(|f| f.as_str()).unwrap_or(""));
        }
        if let Some(ix) = b["hashIndexFile"].as_object() {
            let name = ix.get("fileName").and_then(|f| f.as_str()).unwrap_or("");
            println!("    key hashes: {} in {name}", ix.get("keyHashes").unwrap_or(&serde_json::Value::Null));
        }
    }
}
