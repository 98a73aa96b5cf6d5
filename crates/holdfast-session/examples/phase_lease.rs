//! A phase lease end to end: a held stage prepares a batch of small tensor networks, then a phase
//! lends the engine's pool to an outer scheduler whose lanes pull networks from a shared counter
//! and contract them independently; the per-lane telemetry is printed after each round.
//!
//! Run: `cargo run -p holdfast-session --release --example phase_lease [networks] [rounds]`.
#![allow(clippy::print_stdout, reason = "an example reports what it did")]

use std::error::Error;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use holdfast_session::{CpuBackend, OpError, Tensor};

/// One network: a ring of four bond-dimension-`D` matrices, contracted to a scalar.
const RING: &str = "ab,bc,cd,da->";
const D: usize = 12;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let networks: usize = args.next().map_or(Ok(96), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(3), |a| a.parse())?;

    let backend = CpuBackend::try_default()?;
    println!(
        "engine: {} thread(s) on CPUs {:?}; {networks} networks × {rounds} rounds",
        backend.threads(),
        backend.cpus().iter().collect::<Vec<_>>()
    );
    let base = Tensor::<f64>::from_vec(
        [D, D],
        (0..D * D).map(|i| ((i * 37 % 17) as f64 - 8.0) / 16.0).collect(),
    )?;

    let mut session = backend.open_session()?;

    // Held stage: the root prepares every network's four site matrices, one operation at a time.
    let mut sites = Vec::with_capacity(networks);
    for k in 0..networks {
        let mut ring = Vec::with_capacity(4);
        for s in 0..4 {
            let alpha = 1.0 + (k * 4 + s) as f64 / 64.0;
            let scaled = session.with_session(|v| v.scale(base.read(), alpha))?;
            ring.push(session.with_session(|v| v.permute(scaled.read(), &[(s % 2), 1 - s % 2]))?);
        }
        sites.push(ring);
    }
    // The reference, single-threaded, on the root.
    let expected: Vec<f64> = sites
        .iter()
        .map(|r| -> Result<f64, OpError> {
            let t = session.with_session(|v| {
                v.einsum(RING, &[r[0].read(), r[1].read(), r[2].read(), r[3].read()])
            })?;
            Ok(t.as_slice()[0])
        })
        .collect::<Result<_, _>>()?;
    println!("held stage: {} operations on the root", session.stats().operations);

    // Phase: the lanes pull networks from a shared counter.
    let results = Mutex::new(vec![f64::NAN; networks]);
    let units: Vec<AtomicU64> = (0..backend.threads()).map(|_| AtomicU64::new(0)).collect();
    session.phase(|phase| -> Result<(), Box<dyn Error>> {
        for round in 0..rounds {
            let next = AtomicUsize::new(0);
            phase.run(|lane, view| {
                while !view.cancelled() {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = sites.get(k) else { break };
                    let t =
                        view.einsum(RING, &[r[0].read(), r[1].read(), r[2].read(), r[3].read()])?;
                    let value = t.as_slice()[0];
                    view.recycle(t);
                    results.lock().map_err(|_| OpError::BadOutput("poisoned"))?[k] = value;
                    units[lane].fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), OpError>(())
            })?;
            println!("round {round}:");
            println!("  lane  networks  runs  ops  buffer hit/miss  plan hit/miss");
            for stats in phase.lane_stats() {
                println!(
                    "  {:>4}  {:>8}  {:>4}  {:>3}  {:>7}/{:<7}  {:>6}/{:<6}",
                    stats.lane,
                    units[stats.lane].swap(0, Ordering::Relaxed),
                    stats.runs,
                    stats.operations,
                    stats.buffer_hits,
                    stats.buffer_misses,
                    stats.plan_hits,
                    stats.plan_misses,
                );
            }
        }
        println!("lane resources built: {} (once, then reused)", phase.lane_resources_built());
        Ok(())
    })??;

    let results = results.into_inner().map_err(|_| "a lane panicked holding the results")?;
    let worst = results
        .iter()
        .zip(&expected)
        .map(|(got, want)| (got - want).abs() / want.abs().max(1.0))
        .fold(0.0, f64::max);
    let stats = session.close()?;
    println!(
        "session: {} root operations, {} phase runs, {} lane operations; \
         worst relative error vs the root: {worst:.1e}",
        stats.operations, stats.phase_runs, stats.lane_operations
    );
    if worst > 1e-12 {
        return Err(format!("lanes disagree with the root: {worst:e}").into());
    }
    Ok(())
}
