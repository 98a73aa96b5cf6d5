//! The demo's `holdfast dmrg --compare` (the critical Ising chain, L = 64, schedule 16, 32):
//! the time of every sweep in one held session, with a scoped entry per operation and on the
//! naive baseline, side by side in one process pinned to one CPU at one thread, and the heap
//! allocations the held run's calling thread made in each sweep (SPEC W5, N1).
//!
//! A sweep of this chain lasts tens of milliseconds, so one run's three ways can land in
//! different phases of a shared machine's speed. The command runs [`RUNS`] times; each sweep's
//! time per way is the median over the runs, and its allocations the largest any run made.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::quimb::json_of;
use crate::DynError;
use crate::cmd::pinned;

/// One sweep: seconds held, scoped, naive; the held run's allocations (count, bytes) and its
/// largest bond.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sweep {
    pub(crate) seconds: [f64; 3],
    pub(crate) allocations: u64,
    pub(crate) bytes: u64,
    pub(crate) max_bond: u64,
}

/// Runs of `holdfast dmrg --compare` combined by [`median_of`].
pub(crate) const RUNS: usize = 3;

/// Runs `holdfast` (the release program) [`RUNS`] times with `--compare`.
pub(crate) fn measure(holdfast: &Path) -> Result<Vec<Sweep>, DynError> {
    let mut runs = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut cmd = pinned(holdfast);
        cmd.args(crate::demo::DMRG).arg("--json");
        runs.push(parse(&json_of(cmd)?)?);
    }
    Ok(median_of(&runs))
}

/// Per sweep (over the sweeps every run has): each way's median time, the largest allocation
/// count and bytes, and the first run's largest bond.
fn median_of(runs: &[Vec<Sweep>]) -> Vec<Sweep> {
    let sweeps = runs.iter().map(Vec::len).min().unwrap_or(0);
    (0..sweeps)
        .map(|i| {
            let mut out = runs[0][i];
            for (way, seconds) in out.seconds.iter_mut().enumerate() {
                let mut all: Vec<f64> = runs.iter().map(|r| r[i].seconds[way]).collect();
                all.sort_by(f64::total_cmp);
                *seconds = all[all.len() / 2];
            }
            out.allocations = runs.iter().map(|r| r[i].allocations).max().unwrap_or(0);
            out.bytes = runs.iter().map(|r| r[i].bytes).max().unwrap_or(0);
            out
        })
        .collect()
}

fn parse(doc: &Value) -> Result<Vec<Sweep>, DynError> {
    let list = |way: &str| -> Result<Vec<f64>, DynError> {
        doc["compare"][way]
            .as_array()
            .ok_or_else(|| format!("no compare.{way} in holdfast's JSON"))?
            .iter()
            .map(|s| s["seconds"].as_f64().ok_or_else(|| "a sweep without seconds".into()))
            .collect()
    };
    let (held, scoped, naive) = (list("held")?, list("scoped")?, list("naive")?);
    let sweeps = doc["sweeps"].as_array().ok_or("no sweeps in holdfast's JSON")?;
    Ok(sweeps
        .iter()
        .zip(held.iter().zip(&scoped).zip(&naive))
        .map(|(s, ((&h, &c), &n))| Sweep {
            seconds: [h, c, n],
            allocations: s["allocations"].as_u64().unwrap_or(0),
            bytes: s["allocated_bytes"].as_u64().unwrap_or(0),
            max_bond: s["max_bond"].as_u64().unwrap_or(0),
        })
        .collect())
}

/// The report's section.
pub(crate) fn table(sweeps: &[Sweep]) -> String {
    let mut s = String::from("## DMRG held vs scoped vs naive, per sweep\n\n");
    let _ = writeln!(
        s,
        "`holdfast {} --json` pinned to CPU 0 (the demo's run): the same DMRG in one held session, with a scoped entry \
         per operation, and on the naive baseline (a mutex around the resources locked and a \
         pool installed per operation), each way on an engine of its own from cold resources. \
         Each sweep's time is the median of {RUNS} runs of the command. Heap allocations: the \
         most the held run's calling thread made during the sweep in any run (the first \
         sweep's include building the MPO, the state and its environments).\n",
        crate::demo::DMRG.join(" ")
    );
    let _ = writeln!(
        s,
        "| sweep | max bond | held s | scoped s | naive s | scoped / held | naive / held | held heap allocations |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for (i, w) in sweeps.iter().enumerate() {
        let [h, c, n] = w.seconds;
        let _ = writeln!(
            s,
            "| {} | {} | {h:.3} | {c:.3} | {n:.3} | {:.2}x | {:.2}x | {} ({} B) |",
            i + 1,
            w.max_bond,
            c / h,
            n / h,
            w.allocations,
            w.bytes
        );
    }
    let total = |k: usize| sweeps.iter().map(|w| w.seconds[k]).sum::<f64>();
    let (h, c, n) = (total(0), total(1), total(2));
    let _ = writeln!(s, "| all | | {h:.3} | {c:.3} | {n:.3} | {:.2}x | {:.2}x | |", c / h, n / h);
    s
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Sweep, median_of, parse, table};

    #[test]
    fn reads_the_three_ways_and_the_allocations() {
        let doc = json!({
            "sweeps": [
                {"seconds": 0.2, "allocations": 900, "allocated_bytes": 4096, "max_bond": 16},
                {"seconds": 0.1, "allocations": 0, "allocated_bytes": 0, "max_bond": 32},
            ],
            "compare": {
                "held": [{"seconds": 0.2}, {"seconds": 0.1}],
                "scoped": [{"seconds": 0.3}, {"seconds": 0.1}],
                "naive": [{"seconds": 0.4}, {"seconds": 0.2}],
            },
        });
        let sweeps = parse(&doc).unwrap();
        assert_eq!(
            sweeps[1],
            Sweep { seconds: [0.1, 0.1, 0.2], allocations: 0, bytes: 0, max_bond: 32 }
        );
        let t = table(&sweeps);
        assert!(
            t.contains("| 1 | 16 | 0.200 | 0.300 | 0.400 | 1.50x | 2.00x | 900 (4096 B) |"),
            "{t}"
        );
        assert!(t.contains("| all | | 0.300 | 0.400 | 0.600 | 1.33x | 2.00x | |"), "{t}");
        assert!(parse(&json!({"sweeps": []})).is_err());
    }

    #[test]
    fn sweeps_are_the_median_of_the_runs() {
        let sweep = |h: f64, c: f64, n: f64, allocations: u64| Sweep {
            seconds: [h, c, n],
            allocations,
            bytes: allocations * 8,
            max_bond: 32,
        };
        let runs = [
            vec![sweep(0.5, 0.3, 0.9, 0), sweep(0.1, 0.1, 0.1, 0)],
            vec![sweep(0.2, 0.4, 0.6, 2)],
            vec![sweep(0.3, 0.2, 0.7, 1), sweep(0.1, 0.1, 0.1, 0)],
        ];
        // Only the sweeps every run has; each way's median on its own; the most allocations.
        assert_eq!(median_of(&runs), vec![sweep(0.3, 0.3, 0.7, 2)]);
    }
}
