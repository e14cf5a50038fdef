//! What commands print: rows in the format asked for, and one-line reports (or JSON with `--json`).

use strata_spec::Error;

/// How rows are printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    /// One JSON object per row, keyed by column name; nulls as null.
    Jsonl,
    /// Comma-separated values with a header.
    Csv,
    /// An aligned text table.
    Table,
}

/// Prints what a maintenance command (`expire`, `clean`) did, or would have done in a dry run.
pub(crate) fn maintenance_report(json: bool, r: &strata_table::MaintenanceReport, what: &str) -> Result<(), Error> {
    if json {
        println!("{}", serde_json::to_string(r).map_err(|e| Error::internal_from("report", e))?);
    } else {
        println!(
            "{}{what}: {} snapshots, {} data files, {} index files, {} manifests, {} other files",
            if r.dry_run { "dry run, would have " } else { "" },
            r.snapshots.len(),
            r.data_files.len(),
            r.index_files.len(),
            r.manifests.len(),
            r.other_files.len()
        );
    }
    Ok(())
}

/// Prints `value` with `--json`, else `text`.
pub(crate) fn report(json: bool, value: &serde_json::Value, text: &str) {
    if json {
        println!("{value}");
    } else {
        println!("{text}");
    }
}

/// Prints `batches` in `format` (CSV with a header line).
pub(crate) fn print_batches(batches: &[arrow_array::RecordBatch], format: OutputFormat) -> Result<(), Error> {
    write_batches(batches, format, true)
}

/// Prints `batches` in `format` (CSV with a header line when `csv_header`) and flushes stdout.
pub(crate) fn write_batches(
    batches: &[arrow_array::RecordBatch],
    format: OutputFormat,
    csv_header: bool,
) -> Result<(), Error> {
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let fail = |e: &dyn std::fmt::Display| Error::io("stdout", std::io::Error::other(e.to_string()));
    match format {
        OutputFormat::Jsonl => {
            let mut w = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::LineDelimited>(&mut out);
            for b in batches {
                w.write(b).map_err(|e| fail(&e))?;
            }
            w.finish().map_err(|e| fail(&e))?;
        }
        OutputFormat::Csv => {
            let mut w = arrow_csv::WriterBuilder::new().with_header(csv_header).build(&mut out);
            for b in batches {
                w.write(b).map_err(|e| fail(&e))?;
            }
        }
        OutputFormat::Table => {
            let table = arrow_cast::pretty::pretty_format_batches(batches).map_err(|e| fail(&e))?;
            use std::io::Write;
            writeln!(out, "{table}").map_err(|e| fail(&e))?;
        }
    }
    use std::io::Write;
    out.flush().map_err(|e| fail(&e))
}
