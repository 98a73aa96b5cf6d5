//! The criterion benches that carry targets, and how each is run: built on every CPU, then run
//! pinned to CPU 0 or on every CPU, as one process or one process per side-by-side repetition.

use std::path::Path;

use crate::DynError;
use crate::cmd::{cargo, run as exec};

/// A criterion bench that carries targets.
pub(super) struct Bench {
    package: &'static str,
    /// The bench target.
    bench: &'static str,
    /// The criterion filter (empty: every case).
    filter: &'static str,
    /// Measures one thread against one thread and runs on CPU 0 alone; the others measure
    /// threads meeting (the arbiter, affinity changes, phase leases) and keep every CPU.
    pinned: bool,
    /// When not 0, every case id ends in `/R`, side-by-side repetitions `R = 1..=processes`,
    /// and each repetition runs in a process of its own: where the kernel places a process's
    /// stack moves a few-nanosecond operation by as much as its fixed cost's margin, so the
    /// median over repetitions is taken over that many placements, not one.
    processes: usize,
}

impl Bench {
    /// `package`'s bench `bench`, every case in one process.
    const fn new(package: &'static str, bench: &'static str, pinned: bool) -> Self {
        Bench { package, bench, filter: "", pinned, processes: 0 }
    }

    /// Only the cases `filter` matches.
    const fn filtered(self, filter: &'static str) -> Self {
        Bench { filter, ..self }
    }

    /// Each of `processes` repetitions in a process of its own.
    const fn repeated(self, processes: usize) -> Self {
        Bench { processes, ..self }
    }

    /// The criterion filters of this bench's processes, one process per entry.
    fn filters(&self) -> Vec<String> {
        if self.processes == 0 {
            return vec![self.filter.to_owned()];
        }
        (1..=self.processes)
            .map(|rep| {
                if self.filter.is_empty() {
                    format!("/{rep}$")
                } else {
                    format!("({})/{rep}$", self.filter)
                }
            })
            .collect()
    }
}

/// The criterion benches that carry targets.
pub(super) const BENCHES: &[Bench] = &[
    Bench::new("holdfast-kernels", "kernels_matmul", true)
        .filtered("matmul_f64(_pairs)?/(faer_direct|plan_execute_into)/|gemm_bound/"),
    Bench::new("holdfast-resources", "resources", true),
    Bench::new("holdfast-session", "held_session_dispatch", true),
    Bench::new("holdfast-arbiter", "arbiter", false),
    Bench::new("holdfast-affinity", "affinity", false),
    Bench::new("holdfast-session", "phase_lease", false),
    Bench::new("holdfast-session", "held_tensor_network", true),
    Bench::new("holdfast-session", "fixed_cost", true).repeated(5),
];

/// Builds and runs every bench of [`BENCHES`] under `root` with criterion's warm-up and
/// measurement times (seconds, as criterion takes them); a bench whose file does not exist yet
/// is skipped with a line saying so.
pub(super) fn run_all(root: &Path, warm_up: &str, measure: &str) -> Result<(), DynError> {
    for entry in BENCHES {
        let Bench { package, bench, pinned, .. } = *entry;
        let file = root.join("crates").join(package).join("benches").join(format!("{bench}.rs"));
        if !file.exists() {
            eprintln!(
                "bench-report: {package}/{bench} does not exist yet; its targets are not measured"
            );
            continue;
        }
        // Built first on every CPU, so that pinning the run does not pin the build.
        let mut build = cargo();
        build.args(["bench", "-p", package, "--bench", bench, "--no-run"]);
        exec(build)?;
        for filter in entry.filters() {
            let mut cmd =
                if pinned { crate::cmd::pinned(crate::cmd::cargo_program()) } else { cargo() };
            cmd.args(["bench", "-p", package, "--bench", bench, "--"]);
            if !filter.is_empty() {
                cmd.arg(filter);
            }
            cmd.args(["--warm-up-time", warm_up, "--measurement-time", measure, "--noplot"]);
            exec(cmd)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{BENCHES, Bench};

    #[test]
    fn repetitions_run_one_process_each_and_others_one_process() {
        let fixed = BENCHES.iter().find(|b| b.bench == "fixed_cost").unwrap();
        assert_eq!(fixed.filters(), ["/1$", "/2$", "/3$", "/4$", "/5$"]);
        let some = Bench::new("p", "b", true).filtered("x|y").repeated(2);
        assert_eq!(some.filters(), ["(x|y)/1$", "(x|y)/2$"]);
        let one = Bench::new("p", "b", true).filtered("x|y");
        assert_eq!(one.filters(), ["x|y"]);
    }
}
