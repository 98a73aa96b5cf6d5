//! `holdfast tebd`: real- or imaginary-time evolution of a spin chain by second-order TEBD in one
//! held session (SPEC W6): a table per step (energy, magnetisations, the middle bond's
//! entanglement), the exact energy beside it (the conserved initial energy in real time, the
//! free-fermion ground energy in imaginary time where one is known), `--json` with every
//! observable of every step, the first at time 0, and `--compare` timing the same run with a
//! scoped entry per operation and on the naive baseline.
#![allow(clippy::print_stdout, reason = "the report is the program's output")]

use clap::Args;
use holdfast::ResourceLimits;
use holdfast::layers::session::NaiveBaseline;
use holdfast_mps::tebd::{InitialState, TebdConfig, TebdRun, TebdStep, tebd_observed};
use holdfast_mps::{Executor, Model, Naive, Scoped};
use serde_json::{Value, json};

use super::backend_with_threads;
use super::chain::{ChainArgs, describe, mps_error};
use super::error::CliError;
use super::progress::Progress;
use super::table::Table;

/// Options of `holdfast tebd`.
#[derive(Debug, Clone, Args)]
pub(crate) struct TebdArgs {
    #[command(flatten)]
    pub(crate) chain: ChainArgs,
    /// The time step.
    #[arg(long, value_name = "DT", allow_negative_numbers = true)]
    pub(crate) dt: f64,
    /// The total time (imaginary time with --imaginary).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub(crate) time: f64,
    /// Evolve in imaginary time, towards the ground state.
    #[arg(long)]
    pub(crate) imaginary: bool,
    /// The initial product state: up (all along +Z), neel, or plus (all along +X).
    #[arg(long, default_value = "up", value_name = "STATE")]
    pub(crate) init: String,
    /// The largest bond dimension kept.
    #[arg(long, default_value_t = 64, value_name = "CHI")]
    pub(crate) bond_dim: usize,
    /// Relative discarded-weight cutoff of each truncation.
    #[arg(long, default_value_t = 1e-12, value_name = "E")]
    pub(crate) cutoff: f64,
    /// Thread budget of the engine (default: every CPU the process may use).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// Also run with a scoped entry per operation and on the naive baseline, and print the
    /// three times.
    #[arg(long)]
    pub(crate) compare: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs TEBD on `exec`, with a progress bar when `visible`.
fn run_on(
    exec: &mut impl Executor,
    model: &Model,
    args: &TebdArgs,
    label: &str,
    visible: bool,
) -> Result<TebdRun, CliError> {
    let init: InitialState = args.init.parse().map_err(mps_error)?;
    let config = TebdConfig::new(args.dt, args.time)
        .imaginary(args.imaginary)
        .bond_dim(args.bond_dim)
        .cutoff(args.cutoff);
    let progress = Progress::new(config.steps() as u64 + 1, label, visible);
    let result = tebd_observed(exec, model, args.chain.sites, init, &config, |step| {
        progress.set_message(format!("t = {:.3}, E = {:.10}", step.time, step.energy));
        progress.inc();
    });
    progress.finish();
    result.map_err(mps_error)
}

/// Seconds over every step of `run`.
fn total(run: &TebdRun) -> f64 {
    run.steps.iter().map(|s| s.seconds).sum()
}

/// Runs `holdfast tebd`.
///
/// # Errors
///
/// A one-line error for a bad flag (unknown model or state, fewer than 2 sites, a step that is
/// not positive, a bond dimension of 0…), an engine that cannot be built or an operation that
/// fails.
pub(crate) fn run(args: &TebdArgs) -> Result<(), CliError> {
    let model = args.chain.model()?;
    let backend = backend_with_threads(args.threads)?;
    let visible = !args.json;
    let mut session = backend.open_session()?;
    let run = run_on(&mut session, &model, args, "tebd", visible)?;
    let ground = if args.imaginary {
        model.exact_energy(&mut session, args.chain.sites).map_err(mps_error)?
    } else {
        None
    };
    session.close()?;
    // As for `dmrg --compare`: each other way on an engine of its own, from cold resources.
    let compared = if args.compare {
        let fresh = backend_with_threads(args.threads)?;
        let scoped = run_on(&mut Scoped(&fresh), &model, args, "tebd (scoped)", visible)?;
        let fresh = backend_with_threads(args.threads)?;
        let baseline = NaiveBaseline::new(&fresh, ResourceLimits::default())
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let naive = run_on(&mut Naive(&baseline), &model, args, "tebd (naive)", visible)?;
        Some([scoped, naive])
    } else {
        None
    };
    if args.json {
        println!("{}", report_json(args, &run, ground, compared.as_ref()));
    } else {
        print_report(&model, args, &run, backend.threads(), ground);
        if let Some([scoped, naive]) = &compared {
            let (h, s, n) = (total(&run), total(scoped), total(naive));
            let agree = run
                .steps
                .iter()
                .zip(&scoped.steps)
                .zip(&naive.steps)
                .map(|((h, s), n)| (h.energy - s.energy).abs().max((h.energy - n.energy).abs()))
                .fold(0.0, f64::max);
            println!(
                "time over every step: held {h:.3} s, scoped {s:.3} s ({:.2}x), naive {n:.3} s ({:.2}x); energies agree to {agree:.1e}",
                s / h,
                n / h
            );
            println!(
                "scoped: with_backend_session per operation; naive: a Mutex around the resources locked and a pool installed per operation"
            );
        }
    }
    Ok(())
}

fn mean(values: &[f64]) -> f64 {
    #[allow(clippy::cast_precision_loss, reason = "a site count")]
    let n = values.len().max(1) as f64;
    values.iter().sum::<f64>() / n
}

fn print_report(
    model: &Model,
    args: &TebdArgs,
    run: &TebdRun,
    threads: usize,
    ground: Option<f64>,
) {
    println!(
        "second-order TEBD of {} on {} sites from {}, {} time, dt {}, bond dimension {}, {} thread(s), one held session",
        describe(model),
        args.chain.sites,
        args.init,
        if args.imaginary { "imaginary" } else { "real" },
        args.dt,
        args.bond_dim,
        threads
    );
    let middle = args.chain.sites / 2 - 1;
    let mut table = Table::new(&[
        "time",
        "energy",
        "mean <Z>",
        "mean <X>",
        "S(middle)",
        "max bond",
        "discarded",
        "seconds",
    ]);
    let every = (run.steps.len() / 20).max(1);
    let last = run.steps.len() - 1;
    for (_, s) in run.steps.iter().enumerate().filter(|(k, _)| k % every == 0 || *k == last) {
        table.row(row(s, middle));
    }
    print!("{}", table.render());
    if let (Some(first), Some(end)) = (run.steps.first(), run.steps.last()) {
        println!(
            "energy {:.12} at t = 0, {:.12} at t = {} (change {:.2e}); {:.3} s in all",
            first.energy,
            end.energy,
            end.time,
            end.energy - first.energy,
            total(run)
        );
        if args.imaginary {
            if let Some(e) = ground {
                println!(
                    "exact ground energy {e:.12} (free fermions); relative error {:.1e}",
                    ((end.energy - e) / e).abs()
                );
            }
        } else {
            println!(
                "exact energy {:.12} at every time (conserved: the initial product state's energy); relative change {:.1e}",
                first.energy,
                ((end.energy - first.energy) / first.energy).abs()
            );
        }
    }
}

fn row(s: &TebdStep, middle: usize) -> Vec<String> {
    vec![
        format!("{:.3}", s.time),
        format!("{:.10}", s.energy),
        format!("{:.6}", mean(&s.z)),
        format!("{:.6}", mean(&s.x)),
        format!("{:.6}", s.entropy.get(middle).copied().unwrap_or(0.0)),
        s.max_bond.to_string(),
        format!("{:.1e}", s.discarded_weight),
        format!("{:.4}", s.seconds),
    ]
}

fn report_json(
    args: &TebdArgs,
    run: &TebdRun,
    ground: Option<f64>,
    compared: Option<&[TebdRun; 2]>,
) -> Value {
    let seconds = |r: &TebdRun| r.steps.iter().map(|s| s.seconds).collect::<Vec<_>>();
    let mut doc = json!({
        "model": args.chain.model,
        "sites": args.chain.sites,
        "dt": args.dt,
        "time": args.time,
        "imaginary": args.imaginary,
        "init": args.init,
        "bond_dim": args.bond_dim,
        "steps": run.steps.iter().map(|s| json!({
            "time": s.time,
            "energy": s.energy,
            "z": s.z,
            "x": s.x,
            "entropy": s.entropy,
            "max_bond": s.max_bond,
            "discarded_weight": s.discarded_weight,
            "seconds": s.seconds,
        })).collect::<Vec<_>>(),
        "exact_ground_energy": ground,
    });
    if let Some([scoped, naive]) = compared {
        doc["compare"] = json!({
            "held": seconds(run),
            "scoped": seconds(scoped),
            "naive": seconds(naive),
            "total_seconds": { "held": total(run), "scoped": total(scoped), "naive": total(naive) },
        });
    }
    doc
}
