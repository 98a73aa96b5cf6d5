//! `holdfast dmrg` against quimb's `DMRG2`, side by side in the same run (SPEC §12 W6, §13 N1).
//!
//! quimb, numba and threadpoolctl are installed by this command into a virtual environment under
//! the target directory (`target/quimb-venv`); `scripts/quimb_dmrg_reference.py` runs quimb
//! (its numba kernels warmed up on a short chain first, the MPO built untimed) and prints one
//! JSON object. Both programs run pinned to one CPU (`taskset -c 0` when available) at one
//! thread, on the same model, chain, schedule (16, 32, then chi), sweep count and relative
//! discarded-weight cutoff, taking turns [`RUNS`] times case by case; each side's run of median
//! time is the one compared (quimb's sweep times vary by a factor of two from run to run on a
//! shared machine). Compared: the summed time of the sweeps each ran, the energy (relative
//! difference), and the sweep count.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::targets::Verdict;
use crate::DynError;
use crate::cmd::{pinned, workspace_root};

/// quimb and what its DMRG needs, pinned to the minor versions measured.
const REQUIREMENTS: &[&str] = &["quimb==1.16.*", "numba", "threadpoolctl"];

/// Sweeps per run, and the cutoff (W6 and the DMRG issue).
const SWEEPS: u32 = 6;
const CUTOFF: &str = "1e-12";

/// Runs of each program per case, taking turns; the median is reported.
const RUNS: usize = 3;

/// One comparison: model, sites, final bond dimension, and the speed-up the issue asks for.
#[derive(Debug, Clone, Copy)]
struct Case {
    model: &'static str,
    sites: u32,
    chi: u32,
    goal: f64,
}

const CASES: &[Case] = &[
    Case { model: "tfim", sites: 64, chi: 32, goal: 10.0 },
    Case { model: "heisenberg", sites: 100, chi: 64, goal: 4.0 },
    Case { model: "heisenberg", sites: 100, chi: 128, goal: 1.5 },
];

/// What one program did on one case.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    pub(crate) energy: f64,
    pub(crate) seconds: f64,
    pub(crate) sweeps: usize,
}

/// One case's row of the report.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) label: String,
    pub(crate) holdfast: Run,
    pub(crate) quimb: Run,
    pub(crate) goal: f64,
}

impl Row {
    /// quimb's time over holdfast's.
    pub(crate) fn speedup(&self) -> f64 {
        self.quimb.seconds / self.holdfast.seconds
    }

    /// |E_holdfast − E_quimb| / |E_quimb|.
    pub(crate) fn energy_gap(&self) -> f64 {
        (self.holdfast.energy - self.quimb.energy).abs() / self.quimb.energy.abs()
    }
}

/// Runs every case (the first only with `quick`); `holdfast` is the release program.
pub(crate) fn measure(
    venv: &Path,
    holdfast: &Path,
    quick: bool,
) -> Result<(String, Vec<Row>), DynError> {
    let python = super::venv::ensure(venv, REQUIREMENTS, "quimb, numba")?;
    let script = workspace_root().join("scripts/quimb_dmrg_reference.py");
    let cases = if quick { &CASES[..1] } else { CASES };
    let mut rows = Vec::new();
    let mut versions = String::from("quimb not run");
    for case in cases {
        let schedule = format!("16,32,{}", case.chi);
        let (sites, sweeps) = (case.sites.to_string(), SWEEPS.to_string());
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let mut hf = pinned(holdfast);
            hf.args(["dmrg", "--model", case.model, "--sites", &sites, "--bond-dim", &schedule]);
            hf.args(["--sweeps", &sweeps, "--cutoff", CUTOFF, "--threads", "1", "--json"]);
            ours.push(holdfast_run(&json_of(hf)?)?);
            let mut qm = pinned(&python);
            // The OpenBLAS core-type overrides of old builds slow a current one: not for this run.
            qm.env_remove("OPENBLAS_CORETYPE").env_remove("OPENBLAS_L2_SIZE");
            qm.arg(&script).args(["--model", case.model, "--sites", &sites]);
            qm.args(["--chi", &case.chi.to_string(), "--schedule", "16,32", "--sweeps", &sweeps]);
            qm.args(["--cutoff", CUTOFF]);
            let qm_doc = json_of(qm)?;
            versions = quimb_versions(&qm_doc);
            theirs.push(quimb_run(&qm_doc)?);
        }
        rows.push(Row {
            label: format!("{} L={} chi={}", case.model, case.sites, case.chi),
            holdfast: median_run(ours).ok_or("holdfast dmrg: no run")?,
            quimb: median_run(theirs).ok_or("quimb script: no run")?,
            goal: case.goal,
        });
    }
    Ok((versions, rows))
}

pub(crate) fn json_of(mut cmd: Command) -> Result<Value, DynError> {
    let out = cmd.stderr(Stdio::inherit()).output()?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed ({})", out.status).into());
    }
    Ok(serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim())?)
}

/// `holdfast dmrg --json`: the final energy and the sweeps' times.
fn holdfast_run(doc: &Value) -> Result<Run, DynError> {
    let sweeps = doc["sweeps"].as_array().ok_or("holdfast dmrg --json: no sweeps")?;
    let seconds = sweeps.iter().filter_map(|s| s["seconds"].as_f64()).sum();
    let energy = doc["energy"].as_f64().ok_or("holdfast dmrg --json: no energy")?;
    Ok(Run { energy, seconds, sweeps: sweeps.len() })
}

/// The run of median time (the upper median of an even count); `None` when there is none.
fn median_run(mut runs: Vec<Run>) -> Option<Run> {
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let middle = runs.len() / 2;
    runs.into_iter().nth(middle)
}

/// The quimb script's JSON: the final energy and the sweeps' times.
fn quimb_run(doc: &Value) -> Result<Run, DynError> {
    let times = doc["sweep_seconds"].as_array().ok_or("quimb script: no sweep_seconds")?;
    let seconds = times.iter().filter_map(Value::as_f64).sum();
    let energy = doc["energy"].as_f64().ok_or("quimb script: no energy")?;
    Ok(Run { energy, seconds, sweeps: times.len() })
}

fn quimb_versions(doc: &Value) -> String {
    let v = |k: &str| doc["versions"][k].as_str().unwrap_or("?").to_owned();
    format!(
        "quimb {}, numba {}, numpy {}, scipy {}",
        v("quimb"),
        v("numba"),
        v("numpy"),
        v("scipy")
    )
}

/// The targets of the DMRG issue: the speed-up goal and the same energy to 1e-8.
pub(crate) fn verdicts(rows: &[Row]) -> Vec<Verdict> {
    rows.iter()
        .map(|r| {
            let (speedup, gap) = (r.speedup(), r.energy_gap());
            Verdict {
                issue: "mps".to_owned(),
                what: format!("DMRG {} vs quimb DMRG2, {SWEEPS} sweeps, 1 thread", r.label),
                measured: format!(
                    "quimb {:.3} s / holdfast {:.3} s = {speedup:.2}x; energies differ by {gap:.1e} (rel.)",
                    r.quimb.seconds, r.holdfast.seconds
                ),
                target: format!(">= {:.1}x, energy within 1e-8", r.goal),
                met: Some(speedup >= r.goal && gap <= 1e-8),
            }
        })
        .collect()
}

/// The report's table.
pub(crate) fn table(rows: &[Row], versions: &str) -> String {
    let mut s = format!(
        "## DMRG against quimb\n\n{versions}, in a venv this command installs (`target/quimb-venv`), \
         `scripts/quimb_dmrg_reference.py`; both pinned to CPU 0 at one thread, taking turns {RUNS} \
         times per case; each side's run of median time is shown. \
         Schedule 16, 32, then chi; at most {SWEEPS} sweeps (each stops early once the energy moves \
         less than 1e-12); relative discarded-weight cutoff {CUTOFF}. Times are the sum of the \
         sweeps each ran (MPO construction and numba compilation not timed).\n\n\
         | case | holdfast s | sweeps | quimb s | sweeps | quimb / holdfast | goal | holdfast energy | quimb energy | rel. difference |\n\
         |---|---|---|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {:.3} | {} | {:.3} | {} | {:.2}x | {:.1}x | {:.12} | {:.12} | {:.1e} |\n",
            r.label,
            r.holdfast.seconds,
            r.holdfast.sweeps,
            r.quimb.seconds,
            r.quimb.sweeps,
            r.speedup(),
            r.goal,
            r.holdfast.energy,
            r.quimb.energy,
            r.energy_gap()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Run, holdfast_run, median_run, quimb_run, verdicts};

    #[test]
    fn the_median_run_is_the_middle_time() {
        let run = |seconds| Run { energy: -1.0, seconds, sweeps: 6 };
        assert_eq!(median_run(vec![run(3.0), run(1.0), run(2.0)]), Some(run(2.0)));
        assert_eq!(median_run(vec![run(4.0), run(1.0)]), Some(run(4.0)));
        assert_eq!(median_run(Vec::new()), None);
    }

    #[test]
    fn reads_both_programs_and_judges_speed_and_energy() {
        let hf = json!({"energy": -2.0, "sweeps": [{"seconds": 0.5}, {"seconds": 0.25}]});
        let qm = json!({"energy": -2.0 - 1e-9, "sweep_seconds": [3.0, 4.5]});
        let (hf, qm) = (holdfast_run(&hf).unwrap(), quimb_run(&qm).unwrap());
        assert_eq!(hf, Run { energy: -2.0, seconds: 0.75, sweeps: 2 });
        assert_eq!((qm.seconds, qm.sweeps), (7.5, 2));
        let row =
            super::Row { label: "x".into(), holdfast: hf.clone(), quimb: qm.clone(), goal: 10.0 };
        assert_eq!(verdicts(&[row]).first().and_then(|v| v.met), Some(true));
        let slow = super::Row { label: "x".into(), holdfast: hf.clone(), quimb: qm, goal: 20.0 };
        assert_eq!(verdicts(&[slow]).first().and_then(|v| v.met), Some(false));
        let far = Run { energy: -2.1, ..hf.clone() };
        let wrong = super::Row { label: "x".into(), holdfast: far, quimb: hf, goal: 0.5 };
        assert_eq!(verdicts(&[wrong]).first().and_then(|v| v.met), Some(false));
        assert!(holdfast_run(&json!({"energy": 1.0})).is_err());
    }
}
