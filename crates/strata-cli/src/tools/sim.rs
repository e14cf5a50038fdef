//! `strata replay` and `strata soak`: workloads against a model (`strata-sim`), from a file or generated.

use strata_spec::Error;

use crate::context::{absolute, location, Context};
use crate::output::report;

/// `strata replay`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ReplayArgs {
    /// The workload (JSON lines, docs/WORKLOADS.md).
    file: String,
    /// Fail a storage operation in this share of the commits (0..=1).
    #[arg(long, default_value_t = 0.0)]
    faults: f64,
    /// Where the table goes (a temporary directory by default).
    #[arg(long)]
    dir: Option<String>,
    /// On a divergence, shrink the workload and write it here.
    #[arg(long)]
    shrink: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `strata soak`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct SoakArgs {
    /// How long to run.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Commits per workload.
    #[arg(long, default_value_t = 12)]
    commits: usize,
    /// Share of commits with an injected fault.
    #[arg(long, default_value_t = 0.3)]
    faults: f64,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where failing workloads are saved.
    #[arg(long, default_value = "soak-failures")]
    save: String,
    /// Put the workloads' tables under this location (a store URI such as s3://bucket/soak) instead of a
    /// local temporary directory.
    #[arg(long)]
    warehouse: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Replays the workload in `file` (with a share `faults` of commits failing a storage operation) and prints
/// the first divergence, shrunk into `shrink` when given.
pub(crate) fn replay_file(args: ReplayArgs) -> Result<(), Error> {
    let ReplayArgs { file, faults, dir, shrink, json } = args;
    use strata_sim::{replay, FaultPlan, Workload};
    if !(0.0..=1.0).contains(&faults) {
        return Err(Error::invalid("--faults", format!("{faults} is outside 0..=1")));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    let w = Workload::parse(&text).map_err(|e| e.in_file(&file))?;
    let tmp = std::env::temp_dir().join(format!("strata-replay-{}", uuid::Uuid::new_v4()));
    let dir = dir.unwrap_or_else(|| tmp.to_string_lossy().into_owned());
    let plan = (faults > 0.0).then_some(FaultPlan { rate: faults, seed: 1 });
    let outcome = replay(&absolute(&dir), &w, plan)?;
    let _ = std::fs::remove_dir_all(&tmp);
    match outcome {
        Ok(stats) => report(
            json,
            &serde_json::json!({"ok": true, "stats": stats}),
            &format!(
                "ok: {} steps, {} commits, {} faults injected ({} commits failed and recovered, {} with only their APPEND snapshot); the table equals the model",
                stats.steps, stats.commits, stats.faults, stats.failed_commits, stats.half_landed_commits
            ),
        ),
        Err(d) => {
            if let Some(out) = shrink {
                let small = strata_sim::shrink(&tmp.to_string_lossy(), &w, plan, 500);
                std::fs::write(&out, small.to_text()).map_err(|e| Error::io(&out, e))?;
                let _ = std::fs::remove_dir_all(&tmp);
                eprintln!("shrunk to {} steps: {out}", small.ops.len());
            }
            return Err(Error::corrupt_file(file, d.to_string()));
        }
    }
    Ok(())
}

/// Replays random workloads for `seconds`, saving shrunk failing ones under `save`; with `warehouse` (a store
/// location), the tables live there (a failing workload is saved as it is: shrinking replays it many times).
pub(crate) fn soak(ctx: &Context, args: SoakArgs) -> Result<(), Error> {
    let SoakArgs { seconds, commits, faults, seed, save, warehouse, json } = args;
    use strata_sim::{replay_on, shrink, FaultPlan, Workload};
    let started = std::time::Instant::now();
    let tmp = std::env::temp_dir().join(format!("strata-soak-{}", uuid::Uuid::new_v4()));
    let (io, dir) = match &warehouse {
        Some(w) => (ctx.io(), format!("{}/strata-soak-{}", location(w)?, uuid::Uuid::new_v4())),
        None => (ctx.io(), tmp.to_string_lossy().into_owned()),
    };
    let (mut runs, mut injected, mut failed_commits, mut failures) = (0u64, 0usize, 0usize, Vec::new());
    let mut half_landed = 0usize;
    let mut s = seed;
    while started.elapsed().as_secs() < seconds {
        let w = Workload::generate(s, commits);
        let plan = (faults > 0.0).then_some(FaultPlan { rate: faults, seed: s });
        match replay_on(io.clone(), &dir, &w, plan)? {
            Ok(stats) => {
                injected += stats.faults;
                failed_commits += stats.failed_commits;
                half_landed += stats.half_landed_commits;
            }
            Err(d) => {
                let small = if warehouse.is_some() { w.clone() } else { shrink(&dir, &w, plan, 200) };
                std::fs::create_dir_all(&save).map_err(|e| Error::io(&save, e))?;
                let path = format!("{save}/seed-{s}.jsonl");
                std::fs::write(&path, small.to_text()).map_err(|e| Error::io(&path, e))?;
                eprintln!("seed {s}: {d} (shrunk to {} steps: {path})", small.ops.len());
                failures.push(s);
            }
        }
        // Every fourth seed also runs an append-table workload (no shrinking: it is saved as generated).
        if s % 4 == 3 {
            let w = strata_sim::AppendWorkload::generate(s, commits);
            match strata_sim::replay_append(io.clone(), &dir, &w, plan)? {
                Ok(stats) => {
                    injected += stats.faults;
                    failed_commits += stats.failed_commits;
                }
                Err(d) => {
                    std::fs::create_dir_all(&save).map_err(|e| Error::io(&save, e))?;
                    let path = format!("{save}/seed-{s}-append.txt");
                    std::fs::write(&path, format!("{w:#?}\n")).map_err(|e| Error::io(&path, e))?;
                    eprintln!("seed {s} (append table): {d} ({path})");
                    failures.push(s);
                }
            }
            runs += 1;
        }
        runs += 1;
        s += 1;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let secs = started.elapsed().as_secs_f64();
    report(
        json,
        &serde_json::json!({"workloads": runs, "seconds": secs, "workloadsPerSecond": runs as f64 / secs,
            "faultsInjected": injected, "failedCommits": failed_commits, "halfLandedCommits": half_landed,
            "failures": failures}),
        &format!(
            "{runs} workloads in {secs:.0}s ({:.2}/s), {injected} faults injected ({failed_commits} commits failed and recovered, {half_landed} with only their APPEND snapshot), {} divergences{}",
            runs as f64 / secs,
            failures.len(),
            if failures.is_empty() {
                String::new()
            } else {
                format!(": seeds {}", failures.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
            }
        ),
    );
    if !failures.is_empty() {
        return Err(Error::corrupt_file(save, format!("{} workloads diverged", failures.len())));
    }
    Ok(())
}
