//! Two threads against one on the largest einsum instances (SPEC N2), measured in turn: each
//! round runs `holdfast einsum INSTANCE --threads 1` pinned to CPU 0, then `--threads 2` pinned
//! to CPUs 0 and 1, each a held session of [`REPEAT`] runs (the first cold) whose median it
//! reports. A round's ratio divides two medians taken seconds apart, so a load spike on a shared
//! machine moves both or neither; the target reads the median of the rounds' ratios. The rounds
//! go round the instances (round 1 of each, then round 2 of each, ...), so that a slow stretch
//! of the machine, which lasts minutes on a shared host, falls on a round of every instance
//! rather than on every round of one.
//!
//! Invariant: every ratio printed divides two medians of the same round.

use std::path::Path;
use std::process::Command;

use super::quimb::json_of;
use crate::DynError;

/// Runs per `holdfast einsum` call.
const REPEAT: &str = "5";
/// Rounds per instance: the median of seven stands when three rounds are disturbed (a load spike
/// on a shared machine hitting one call of a pair).
pub(crate) const ROUNDS: usize = 7;

/// One instance's rounds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scaling {
    pub(crate) name: String,
    /// Per round: the one-thread median and the two-thread median, seconds.
    pub(crate) rounds: Vec<(f64, f64)>,
}

impl Scaling {
    /// Each round's one-thread median over its two-thread median.
    pub(crate) fn ratios(&self) -> Vec<f64> {
        self.rounds.iter().map(|&(one, two)| one / two).collect()
    }

    /// The median of [`ratios`](Self::ratios) (the upper middle one for an even count).
    pub(crate) fn median(&self) -> Option<f64> {
        let mut r = self.ratios();
        r.sort_by(f64::total_cmp);
        r.get(r.len() / 2).copied()
    }

    /// "1.62x (1.55x, 1.62x, 1.70x)": the median, then every round's ratio in order.
    pub(crate) fn describe(&self) -> String {
        let rounds: Vec<String> = self.ratios().iter().map(|x| format!("{x:.2}x")).collect();
        match self.median() {
            Some(m) => format!("{m:.2}x ({})", rounds.join(", ")),
            None => "-".to_owned(),
        }
    }
}

/// One `holdfast einsum` call on `cpus` at `threads`: its median, seconds.
fn median_seconds(
    holdfast: &Path,
    file: &Path,
    cpus: &str,
    threads: &str,
) -> Result<f64, DynError> {
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", cpus]).arg(holdfast).arg("einsum").arg(file);
    cmd.args(["--threads", threads, "--repeat", REPEAT, "--retention-mib", "4096", "--json", "-q"]);
    let doc = json_of(cmd)?;
    doc["instances"][0]["median_seconds"]
        .as_f64()
        .ok_or_else(|| format!("holdfast einsum {}: no median", file.display()).into())
}

/// [`ROUNDS`] rounds of every instance in `names` (files `DIR/NAME.json`), each round going
/// through the instances in order.
pub(crate) fn measure(
    holdfast: &Path,
    dir: &Path,
    names: &[String],
) -> Result<Vec<Scaling>, DynError> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    if cpus < 2 {
        return Err("fewer than two CPUs".into());
    }
    let mut out: Vec<Scaling> = names
        .iter()
        .map(|name| Scaling { name: name.clone(), rounds: Vec::with_capacity(ROUNDS) })
        .collect();
    for round in 1..=ROUNDS {
        for scaling in &mut out {
            let (name, file) = (&scaling.name, dir.join(format!("{}.json", scaling.name)));
            let one = median_seconds(holdfast, &file, "0", "1")?;
            let two = median_seconds(holdfast, &file, "0,1", "2")?;
            eprintln!(
                "bench-report: {name}: round {round}: 1 thread {one:.3} s, 2 threads {two:.3} s"
            );
            scaling.rounds.push((one, two));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::Scaling;

    #[test]
    fn the_median_ratio_reads_every_round_in_turn() {
        let s = Scaling { name: "a".into(), rounds: vec![(2.0, 1.0), (1.5, 1.0), (3.4, 2.0)] };
        assert_eq!(s.ratios(), vec![2.0, 1.5, 1.7]);
        assert_eq!(s.median(), Some(1.7));
        assert_eq!(s.describe(), "1.70x (2.00x, 1.50x, 1.70x)");
        let empty = Scaling { name: "b".into(), rounds: vec![] };
        assert_eq!((empty.median(), empty.describe()), (None, "-".to_owned()));
    }
}
