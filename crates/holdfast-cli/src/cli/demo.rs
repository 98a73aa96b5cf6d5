//! `holdfast demo`: the built-in workload run three ways on one engine (a held session, a scoped
//! entry per operation, the naive baseline), with per-operation costs, speed-ups and a check
//! that the three results agree.
//!
//! Invariant: the three ways run the same [`Workload`]s with the same operands in the same order
//! (see [`super::exec`]), so their results must agree to [`TOLERANCE`]; a disagreement is an
//! error (non-zero exit), not a footnote.
#![allow(clippy::print_stdout, reason = "the demo's table is the program's output")]

use clap::Args;
use holdfast::{CpuBackend, ResourceLimits};
use serde_json::json;

use super::baseline::NaiveEngine;
use super::error::CliError;
use super::exec::{Held, Scoped};
use super::measure::{Samples, relative_difference, time_once};
use super::progress::Progress;
use super::rng::SplitMix64;
use super::table::Table;
use super::workload::{GemmChain, MpsInnerProduct, Workload};
use super::{backend_with_threads, fmt_ns};

/// Relative tolerance of the agreement check.
pub(crate) const TOLERANCE: f64 = 1e-12;

/// Options of `holdfast demo`.
#[derive(Debug, Clone, Args)]
pub(crate) struct DemoArgs {
    /// Thread budget of the engine (default: every CPU the process may use).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// Timed rounds per way (after one warm-up round); the median is reported.
    #[arg(long, default_value_t = 7, value_name = "R")]
    pub(crate) repeat: usize,
    /// GEMMs in the chain.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub(crate) gemms: usize,
    /// Matrix size of the chain's GEMMs.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub(crate) gemm_size: usize,
    /// Sites of each MPS.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub(crate) sites: usize,
    /// Bond dimension of each MPS.
    #[arg(long, default_value_t = 12, value_name = "D")]
    pub(crate) bond: usize,
    /// Sweeps of the MPS inner product per round.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub(crate) sweeps: usize,
    /// Seed of the generated operands.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

impl Default for DemoArgs {
    fn default() -> Self {
        DemoArgs {
            threads: None,
            repeat: 7,
            gemms: 20_000,
            gemm_size: 4,
            sites: 20,
            bond: 12,
            sweeps: 200,
            seed: 0,
            json: false,
            quiet: false,
        }
    }
}

/// What one workload measured.
#[derive(Debug)]
struct Outcome {
    name: String,
    ops: u64,
    /// Per way: held session, scoped entry, naive baseline.
    samples: [Samples; 3],
    /// Largest relative difference of the scoped and naive results from the held one.
    difference: f64,
}

/// Runs one workload three ways: a warm-up round of each, then `rounds` timed rounds with the
/// ways interleaved (held, scoped, naive, held, …). The held session is opened before and closed
/// after each of its rounds, outside the timing: a scoped entry cannot run while this thread
/// holds a session.
fn measure<W: Workload>(
    workload: &W,
    backend: &CpuBackend,
    naive: &mut NaiveEngine<'_>,
    rounds: usize,
    progress: &Progress,
) -> Result<Outcome, CliError> {
    progress.set_message(workload.name());
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut results = Vec::with_capacity(3);
    for round in 0..=rounds {
        let mut session = backend.open_session()?;
        let held = time_once(workload, &mut Held(&mut session));
        session.close()?;
        let scoped = time_once(workload, &mut Scoped(backend))?;
        let naive = time_once(workload, naive)?;
        let outcome = [held?, scoped, naive];
        if round > 0 {
            for (way, (ns, _)) in outcome.iter().enumerate() {
                times[way].push(*ns);
            }
        }
        if round == rounds {
            results.extend(outcome.into_iter().map(|(_, result)| result));
        }
        progress.inc();
    }
    let difference = match &results[..] {
        [held, scoped, naive] => {
            relative_difference(scoped, held).max(relative_difference(naive, held))
        }
        _ => f64::INFINITY,
    };
    let [held, scoped, naive] = times.map(Samples::new);
    Ok(Outcome {
        name: workload.name(),
        ops: workload.ops(),
        samples: [held, scoped, naive],
        difference,
    })
}

/// Runs `holdfast demo`.
///
/// # Errors
///
/// Bad arguments, an engine or session failure, or results that disagree.
pub(crate) fn run(args: &DemoArgs) -> Result<(), CliError> {
    if args.repeat == 0 || args.gemm_size == 0 || args.sites == 0 || args.bond == 0 {
        return Err(CliError::Usage(
            "--repeat, --gemm-size, --sites and --bond must be at least 1".into(),
        ));
    }
    let backend = backend_with_threads(args.threads)?;
    let mut naive = NaiveEngine::new(&backend, ResourceLimits::default())?;
    let mut rng = SplitMix64::new(args.seed);
    let chain = GemmChain::new(args.gemm_size, args.gemms, 64, &mut rng)?;
    let mps = MpsInnerProduct::new(args.sites, args.bond, args.sweeps, &mut rng)?;

    let steps = 2 * (args.repeat as u64 + 1);
    let progress = Progress::new(steps, "demo", !args.json && !args.quiet);
    let outcomes = [
        measure(&chain, &backend, &mut naive, args.repeat, &progress)?,
        measure(&mps, &backend, &mut naive, args.repeat, &progress)?,
    ];
    progress.finish();

    let worst = outcomes.iter().map(|o| o.difference).fold(0.0f64, f64::max);
    let agree = worst <= TOLERANCE;
    if args.json {
        print_json(&backend, args, &outcomes, worst, agree);
    } else {
        print_table(&backend, args, &outcomes, worst, agree);
    }
    if agree {
        Ok(())
    } else {
        Err(CliError::Disagreement(format!(
            "the three ways disagree: largest relative difference {worst:.3e} > {TOLERANCE:e}"
        )))
    }
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 { num / den } else { f64::NAN }
}

fn print_table(
    backend: &CpuBackend,
    args: &DemoArgs,
    outcomes: &[Outcome],
    worst: f64,
    agree: bool,
) {
    println!(
        "holdfast demo: one engine on CPUs {} with a thread budget of {} (median of {} interleaved rounds after a warm-up)",
        backend.cpus(),
        backend.threads(),
        args.repeat
    );
    println!();
    let mut table = Table::new(&[
        "workload",
        "ops/round",
        "held ns/op",
        "scoped ns/op",
        "naive ns/op",
        "scoped/held",
        "naive/held",
    ]);
    for o in outcomes {
        let [held, scoped, naive] = &o.samples;
        let (h, s, n) = (held.median(), scoped.median(), naive.median());
        table.row(vec![
            o.name.clone(),
            o.ops.to_string(),
            fmt_ns(h),
            fmt_ns(s),
            fmt_ns(n),
            format!("{:.1}x", ratio(s, h)),
            format!("{:.1}x", ratio(n, h)),
        ]);
    }
    print!("{}", table.render());
    println!();
    println!(
        "held: one open_session, then with_session per operation; scoped: with_backend_session per operation;"
    );
    println!(
        "naive: Mutex<EngineResources> locked and a rayon pool installed per call, the operation run on the same view."
    );
    if agree {
        println!(
            "correctness: OK, the three ways agree (largest relative difference {worst:.1e} <= {TOLERANCE:e})"
        );
    } else {
        println!("correctness: FAILED, largest relative difference {worst:.3e} > {TOLERANCE:e}");
    }
}

fn print_json(
    backend: &CpuBackend,
    args: &DemoArgs,
    outcomes: &[Outcome],
    worst: f64,
    agree: bool,
) {
    let workloads: Vec<_> = outcomes
        .iter()
        .map(|o| {
            let way = |s: &Samples| json!({ "median_ns_per_op": s.median(), "min_ns_per_op": s.min(), "rounds_ns_per_op": s.ns_per_op });
            let [held, scoped, naive] = &o.samples;
            json!({
                "name": o.name,
                "ops_per_round": o.ops,
                "held": way(held),
                "scoped": way(scoped),
                "naive": way(naive),
                "speedup_scoped_over_held": ratio(scoped.median(), held.median()),
                "speedup_naive_over_held": ratio(naive.median(), held.median()),
                "max_relative_difference": o.difference,
            })
        })
        .collect();
    let doc = json!({
        "cpus": backend.cpus().to_string(),
        "threads": backend.threads(),
        "rounds": args.repeat,
        "seed": args.seed,
        "workloads": workloads,
        "max_relative_difference": worst,
        "tolerance": TOLERANCE,
        "agree": agree,
    });
    println!("{doc}");
}
