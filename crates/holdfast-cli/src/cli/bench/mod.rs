//! `holdfast bench`: the paired measurement campaign of SPEC M1-M3, in one run: every case
//! (f64 add of 2 and 1024 elements, square matmul of 2…256, SVD, QR and eigh of 32 × 32, every
//! einsum-benchmark instance end to end) four ways (kernels direct, held session, scoped entry
//! per operation, naive baseline), at one thread and at every thread, cold and warm, with the
//! counters of M2; a table on standard output, and a Markdown and a JSON report when asked.
//!
//! | module | owns |
//! |---|---|
//! | [`cases`] | the cases and their generated operands |
//! | [`campaign`] | measuring one case four ways on one engine |
//! | [`report`] | the tables, the Markdown report, the JSON document, the M2 checks |
//!
//! Invariant: the ways take turns round by round on the same engine with the same operands, and
//! the campaign fails (non-zero exit) when their results differ by more than 1e-12 relative.
#![allow(clippy::print_stdout, reason = "the report is the program's output")]

mod campaign;
mod cases;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use holdfast::{CpuBackend, ResourceLimits};

use super::error::CliError;
use super::progress::Progress;
use campaign::{Budget, CaseResult, Ways};

/// Relative tolerance of the agreement check between ways.
const TOLERANCE: f64 = 1e-12;

/// Options of `holdfast bench`.
#[derive(Debug, Clone, Args)]
pub(crate) struct BenchArgs {
    /// Thread budgets to measure, comma separated: numbers, or `all` for every CPU the process
    /// may use.
    #[arg(long, value_delimiter = ',', default_value = "1,all", value_name = "LIST")]
    pub(crate) threads: Vec<String>,
    /// Timed rounds per way and case at most (the median is reported).
    #[arg(long, default_value_t = 11, value_name = "R")]
    pub(crate) rounds: usize,
    /// Cold samples per way and case at most (first operation after the resources were
    /// emptied).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub(crate) cold: usize,
    /// Target length of one timed round in microseconds: small operations repeat inside it.
    #[arg(long, default_value_t = 2000, value_name = "US")]
    pub(crate) round_us: u64,
    /// Time the ways together may spend on one case's timed rounds, in milliseconds: slow cases
    /// get fewer rounds (at least one).
    #[arg(long, default_value_t = 4000, value_name = "MS")]
    pub(crate) case_budget_ms: u64,
    /// Buffer-pool retention limit of every way's resources, in MiB. The default holds the
    /// buffers of the largest instance's warm run (gm_queen5_5_3 takes about 2.2 GB of them, a
    /// 985 MiB intermediate among them), so that warm runs reuse memory instead of faulting in
    /// fresh pages; the engine's own default is 100 MiB.
    #[arg(long, default_value_t = 4096, value_name = "MIB")]
    pub(crate) retention_mib: usize,
    /// Folder of einsum-benchmark instances (default: $HOLDFAST_EINSUM_INSTANCES, else
    /// ../shared/einsum-instances when it exists; skipped with a message when absent).
    #[arg(long, value_name = "DIR")]
    pub(crate) instances: Option<PathBuf>,
    /// Skip the einsum instances.
    #[arg(long)]
    pub(crate) no_instances: bool,
    /// Only the cases whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,
    /// Seed of the generated operands.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Also write the report as Markdown to this file.
    #[arg(long, value_name = "FILE.md")]
    pub(crate) markdown: Option<PathBuf>,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE.json")]
    pub(crate) json_out: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// Everything measured at one thread budget.
#[derive(Debug)]
pub(crate) struct Setting {
    /// The thread budget.
    pub(crate) threads: usize,
    /// The engine's CPUs.
    pub(crate) cpus: String,
    /// One result per case.
    pub(crate) cases: Vec<CaseResult>,
}

/// The thread budgets named by `--threads`.
fn thread_budgets(list: &[String]) -> Result<Vec<Option<usize>>, CliError> {
    let mut budgets = Vec::new();
    for item in list {
        let budget = match item.trim() {
            "all" => None,
            n => match n.parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    return Err(CliError::Usage(format!(
                        "--threads: `{item}` is neither a positive number nor `all`"
                    )));
                }
            },
        };
        if !budgets.contains(&budget) {
            budgets.push(budget);
        }
    }
    if budgets.is_empty() {
        return Err(CliError::Usage("--threads names no thread budget".into()));
    }
    Ok(budgets)
}

/// Runs `holdfast bench`.
///
/// # Errors
///
/// Bad arguments or instance files, an engine or session failure, an unwritable report, or
/// ways whose results disagree.
pub(crate) fn run(args: &BenchArgs) -> Result<(), CliError> {
    if args.rounds == 0 || args.round_us == 0 || args.case_budget_ms == 0 {
        return Err(CliError::Usage(
            "--rounds, --round-us and --case-budget-ms must be at least 1".into(),
        ));
    }
    let limits = super::limits_with_retention(args.retention_mib)?;
    let budgets = thread_budgets(&args.threads)?;
    let mut cases = cases::kernel_cases(args.seed)?;
    let mut notes = Vec::new();
    if !args.no_instances {
        match cases::instance_dir(args.instances.as_deref()) {
            Some(dir) => cases.extend(cases::einsum_cases(&dir, args.seed)?),
            None => notes.push(
                "einsum instances skipped: ../shared/einsum-instances not found (set --instances or HOLDFAST_EINSUM_INSTANCES)"
                    .to_owned(),
            ),
        }
    }
    if let Some(filter) = &args.filter {
        cases.retain(|c| c.name.contains(filter.as_str()));
    }
    if cases.is_empty() {
        return Err(CliError::Usage("no case to measure (check --filter)".into()));
    }
    let budget = Budget {
        rounds: args.rounds,
        cold: args.cold,
        round: Duration::from_micros(args.round_us),
        per_case: Duration::from_millis(args.case_budget_ms),
    };

    let steps = (budgets.len() * cases.len()) as u64;
    let progress = Progress::new(steps, "bench", !args.json && !args.quiet);
    let mut settings = Vec::with_capacity(budgets.len());
    for threads in budgets {
        let measured = measure_setting(threads, limits, &cases, budget, &progress);
        match measured {
            Ok(setting) => settings.push(setting),
            Err(e) => {
                progress.finish();
                return Err(e);
            }
        }
    }
    progress.finish();

    let worst =
        settings.iter().flat_map(|s| &s.cases).map(|c| c.max_difference).fold(0.0f64, f64::max);
    let doc = report::json(&settings, args, worst, TOLERANCE, &notes);
    let markdown = report::markdown(&settings, args, worst, TOLERANCE, &notes);
    if let Some(path) = &args.json_out {
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| CliError::Usage(format!("cannot render the JSON report: {e}")))?;
        std::fs::write(path, text + "\n").map_err(|e| CliError::io(path, e))?;
    }
    if let Some(path) = &args.markdown {
        std::fs::write(path, &markdown).map_err(|e| CliError::io(path, e))?;
    }
    if args.json {
        println!("{doc}");
    } else {
        print!("{}", report::tables(&settings, worst, TOLERANCE, &notes));
    }
    if worst <= TOLERANCE {
        Ok(())
    } else {
        Err(CliError::Disagreement(format!(
            "the ways disagree: largest relative difference {worst:.3e} > {TOLERANCE:e}"
        )))
    }
}

/// Every case at one thread budget, on one engine.
fn measure_setting(
    threads: Option<usize>,
    limits: ResourceLimits,
    cases: &[cases::Case],
    budget: Budget,
    progress: &Progress,
) -> Result<Setting, CliError> {
    let builder = CpuBackend::builder().resource_limits(limits);
    let backend = match threads {
        Some(n) => builder.threads(n).build()?,
        None => builder.build()?,
    };
    let mut ways = Ways::new(&backend, limits)?;
    let mut results = Vec::with_capacity(cases.len());
    for case in cases {
        progress.set_message(format!("{} threads={}", case.name, backend.threads()));
        results.push(ways.measure(case, budget)?);
        progress.inc();
    }
    Ok(Setting { threads: backend.threads(), cpus: backend.cpus().to_string(), cases: results })
}

#[cfg(test)]
mod tests {
    use super::thread_budgets;

    #[test]
    fn thread_lists() {
        let list = |s: &str| s.split(',').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(thread_budgets(&list("1,all")).unwrap(), vec![Some(1), None]);
        assert_eq!(thread_budgets(&list("2,2,all,all")).unwrap(), vec![Some(2), None]);
        assert!(thread_budgets(&list("0")).is_err());
        assert!(thread_budgets(&list("x")).is_err());
    }
}
