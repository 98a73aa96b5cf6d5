//! `holdfast dmrg`: the ground state of a spin chain by two-site DMRG in one held session
//! (SPEC W6), a table per sweep, the exact energy beside it where one is known, `--json` with
//! every number, the calling thread's heap allocations per sweep, and `--compare` timing the
//! same run with a scoped entry per operation and on the naive baseline.
#![allow(clippy::print_stdout, reason = "the report is the program's output")]

use clap::Args;
use holdfast::ResourceLimits;
use holdfast::layers::session::NaiveBaseline;
use holdfast_mps::dmrg::dmrg_observed;
use holdfast_mps::{DmrgConfig, DmrgRun, Executor, Model, Naive, Scoped};
use serde_json::{Value, json};

use super::alloc_count::{self, Allocations};
use super::backend_with_threads;
use super::chain::{ChainArgs, describe, mps_error};
use super::error::CliError;
use super::progress::Progress;
use super::table::Table;

/// Options of `holdfast dmrg`.
#[derive(Debug, Clone, Args)]
pub(crate) struct DmrgArgs {
    #[command(flatten)]
    pub(crate) chain: ChainArgs,
    /// Bond dimension, or a schedule of one per sweep (the last repeated), e.g. 16,32,64.
    #[arg(long, value_name = "CHI[,CHI..]", value_delimiter = ',', required = true)]
    pub(crate) bond_dim: Vec<usize>,
    /// At most this many sweeps (the run stops earlier once the energy moves less than 1e-12).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub(crate) sweeps: usize,
    /// Relative discarded-weight cutoff of each truncation.
    #[arg(long, default_value_t = 1e-12, value_name = "E")]
    pub(crate) cutoff: f64,
    /// Thread budget of the engine (default: every CPU the process may use).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// Also run with a scoped entry per operation and on the naive baseline, and print the three
    /// times per sweep.
    #[arg(long)]
    pub(crate) compare: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
}

impl DmrgArgs {
    fn config(&self) -> DmrgConfig {
        DmrgConfig::new(self.bond_dim.clone()).sweeps(self.sweeps).cutoff(self.cutoff)
    }
}

/// One way's run, with the heap allocations the calling thread made in each sweep (the first
/// sweep's include building the MPO, the initial state and its environments).
struct Way {
    run: DmrgRun,
    allocations: Vec<Allocations>,
}

/// Runs DMRG on `exec`, with a progress bar when `visible`.
fn run_on(
    exec: &mut impl Executor,
    model: &Model,
    args: &DmrgArgs,
    label: &str,
    visible: bool,
) -> Result<Way, CliError> {
    let progress = Progress::new(args.sweeps as u64, label, visible);
    let mut allocations = Vec::with_capacity(args.sweeps);
    let mut last = alloc_count::snapshot();
    let run = dmrg_observed(exec, model, args.chain.sites, &args.config(), |_, stats| {
        allocations.push(alloc_count::snapshot().since(last));
        progress.set_message(format!("E = {:.12}", stats.energy));
        progress.inc();
        // What the report itself allocates is not the sweep's.
        last = alloc_count::snapshot();
    });
    progress.finish();
    Ok(Way { run: run.map_err(mps_error)?, allocations })
}

/// Runs `holdfast dmrg`.
///
/// # Errors
///
/// A one-line error for a bad flag (unknown model, fewer than 2 sites, a bond dimension of 0, a
/// field for a model without one…), an engine that cannot be built or an operation that fails.
pub(crate) fn run(args: &DmrgArgs) -> Result<(), CliError> {
    let model = args.chain.model()?;
    let backend = backend_with_threads(args.threads)?;
    let visible = !args.json;
    if args.compare {
        // One untimed sweep first: the process's first contractions pay one-time costs (heap
        // growth, faer's per-thread packing buffers, page faults) that would favour whichever
        // way runs second.
        let warm = DmrgConfig::new(vec![args.bond_dim[0]]).sweeps(1);
        let warm_backend = backend_with_threads(args.threads)?;
        let mut session = warm_backend.open_session()?;
        holdfast_mps::dmrg(&mut session, &model, args.chain.sites, &warm).map_err(mps_error)?;
        session.close()?;
    }
    let mut session = backend.open_session()?;
    let held = run_on(&mut session, &model, args, "dmrg", visible)?;
    let exact = model.exact_energy(&mut session, args.chain.sites).map_err(mps_error)?;
    session.close()?;
    // The scoped and naive runs get engines of their own, so that each starts from cold
    // resources as the held run did (the held run's warm pool and plan caches would otherwise
    // favour them).
    let compared = if args.compare {
        let fresh = backend_with_threads(args.threads)?;
        let scoped = run_on(&mut Scoped(&fresh), &model, args, "dmrg (scoped)", visible)?;
        let fresh = backend_with_threads(args.threads)?;
        let baseline = NaiveBaseline::new(&fresh, ResourceLimits::default())
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let naive = run_on(&mut Naive(&baseline), &model, args, "dmrg (naive)", visible)?;
        Some([scoped.run, naive.run])
    } else {
        None
    };
    let report = Report {
        model: &model,
        args,
        threads: backend.threads(),
        held: &held,
        exact,
        compared: compared.as_ref(),
    };
    if args.json {
        println!("{}", report.json());
    } else {
        report.print();
    }
    Ok(())
}

/// What a run reports, for the table or the JSON.
struct Report<'a> {
    model: &'a Model,
    args: &'a DmrgArgs,
    threads: usize,
    held: &'a Way,
    exact: Option<f64>,
    /// The scoped and the naive runs.
    compared: Option<&'a [DmrgRun; 2]>,
}

impl Report<'_> {
    fn print(&self) {
        let Report { model, args, threads, held, exact, compared } = *self;
        let Way { run: held, allocations } = held;
        println!(
            "two-site DMRG of {} on {} sites, bond dimensions {:?}, cutoff {:e}, {} thread(s), one held session",
            describe(model),
            args.chain.sites,
            args.bond_dim,
            args.cutoff,
            threads
        );
        let mut table =
            Table::new(&["sweep", "energy", "max bond", "discarded", "seconds", "heap allocs"]);
        for (i, (s, a)) in held.sweeps.iter().zip(allocations).enumerate() {
            table.row(vec![
                (i + 1).to_string(),
                format!("{:.12}", s.energy),
                s.max_bond.to_string(),
                format!("{:.2e}", s.discarded_weight),
                format!("{:.3}", s.seconds),
                format!("{} ({} B)", a.count, a.bytes),
            ]);
        }
        print!("{}", table.render());
        println!("energy  {:.12}", held.energy);
        if let Some(e) = exact {
            println!(
                "exact   {e:.12}  (free fermions; relative error {:.1e})",
                relative(held.energy, e)
            );
        }
        println!("heap allocs: made by the calling thread during the sweep (count and bytes)");
        if let Some([scoped, naive]) = compared {
            println!();
            println!(
                "time per sweep: one held session, a scoped entry per operation, the naive baseline"
            );
            let mut table = Table::new(&[
                "sweep",
                "held s",
                "scoped s",
                "naive s",
                "scoped / held",
                "naive / held",
            ]);
            for (i, ((h, s), n)) in
                held.sweeps.iter().zip(&scoped.sweeps).zip(&naive.sweeps).enumerate()
            {
                table.row(vec![
                    (i + 1).to_string(),
                    format!("{:.3}", h.seconds),
                    format!("{:.3}", s.seconds),
                    format!("{:.3}", n.seconds),
                    format!("{:.2}", s.seconds / h.seconds),
                    format!("{:.2}", n.seconds / h.seconds),
                ]);
            }
            print!("{}", table.render());
            let (h, s, n) = (total(held), total(scoped), total(naive));
            println!(
                "total   held {h:.3} s, scoped {s:.3} s ({:.2}x), naive {n:.3} s ({:.2}x); energies agree to {:.1e}",
                s / h,
                n / h,
                (held.energy - scoped.energy).abs().max((held.energy - naive.energy).abs())
            );
            println!(
                "scoped: with_backend_session per operation; naive: a Mutex around the resources locked and a pool installed per operation"
            );
        }
    }

    fn json(&self) -> Value {
        let Report { model, args, threads, held, exact, compared } = *self;
        let Way { run: held, allocations } = held;
        let mut sweeps = sweeps_json(held);
        if let Value::Array(rows) = &mut sweeps {
            for (row, a) in rows.iter_mut().zip(allocations) {
                row["allocations"] = json!(a.count);
                row["allocated_bytes"] = json!(a.bytes);
            }
        }
        let mut doc = json!({
            "model": model.name(),
            "parameters": format!("{model:?}"),
            "sites": args.chain.sites,
            "bond_dims": args.bond_dim,
            "cutoff": args.cutoff,
            "threads": threads,
            "energy": held.energy,
            "exact": exact,
            "sweeps": sweeps,
        });
        if let Some([scoped, naive]) = compared {
            doc["compare"] = json!({
                "held": sweeps_json(held),
                "scoped": sweeps_json(scoped),
                "naive": sweeps_json(naive),
                "total_seconds": {
                    "held": total(held),
                    "scoped": total(scoped),
                    "naive": total(naive),
                },
            });
        }
        doc
    }
}

/// Seconds over every sweep of `run`.
fn total(run: &DmrgRun) -> f64 {
    run.sweeps.iter().map(|s| s.seconds).sum()
}

fn relative(value: f64, exact: f64) -> f64 {
    ((value - exact) / exact).abs()
}

fn sweeps_json(run: &DmrgRun) -> Value {
    run.sweeps
        .iter()
        .map(|s| {
            json!({
                "energy": s.energy,
                "max_bond": s.max_bond,
                "discarded_weight": s.discarded_weight,
                "seconds": s.seconds,
            })
        })
        .collect()
}
