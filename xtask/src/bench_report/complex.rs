//! Complex einsum against numpy: three einsum-benchmark instances with complex128 operands,
//! `holdfast einsum --dtype complex128` beside numpy + opt_einsum in the same run (the
//! tensor-network operations issue, point 7).
//!
//! Both run at one thread, holdfast pinned to CPU 0 (numpy's BLAS pinned to one thread by its
//! script), on the instance's `opt_flops` path with random operands of both parts; the report
//! divides numpy's median by holdfast's.

use std::collections::BTreeMap;
use std::path::Path;

use super::peers;
use super::quimb::json_of;
use super::targets::Verdict;
use crate::DynError;
use crate::cmd::pinned;

/// The instances, by file stem: a tensor-network contraction, a permutation-heavy network and
/// a language-model likelihood (operands made complex).
pub(crate) const INSTANCES: &[&str] = &[
    "str_mps_varying_inner_product_200",
    "tensornetwork_permutation_light_415",
    "lm_batch_likelihood_brackets_4_4d",
];

/// One instance's medians.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) holdfast_ms: f64,
    pub(crate) numpy_ms: Option<f64>,
}

/// Runs holdfast on each instance of [`INSTANCES`] in `dir`, then numpy on the same ones.
pub(crate) fn measure(
    holdfast: &Path,
    venv: &Path,
    dir: &Path,
    quick: bool,
) -> Result<(String, Vec<Row>), DynError> {
    let repeat = if quick { "3" } else { "7" };
    let mut rows = Vec::new();
    for stem in INSTANCES {
        let file = dir.join(format!("{stem}.json"));
        let mut cmd = pinned(holdfast);
        cmd.arg("einsum").arg(&file);
        cmd.args(["--dtype", "complex128", "--threads", "1", "--repeat", repeat, "--json", "-q"]);
        let doc = json_of(cmd)?;
        let instance = &doc["instances"][0];
        let name = instance["name"].as_str().unwrap_or(stem).to_owned();
        let seconds = instance["median_seconds"].as_f64().ok_or("holdfast einsum: no median")?;
        rows.push(Row { name, holdfast_ms: seconds * 1e3, numpy_ms: None });
    }
    let budget = if quick { 1.0 } else { 6.0 };
    let request = peers::Request {
        instances: dir,
        budget_s: budget,
        only: INSTANCES,
        dtype: "complex128",
        peers: &["numpy"],
        gemm_bound: false,
        holdfast: None,
    };
    let run = peers::measure(venv, &request)?;
    let numpy = run.numpy_medians().cloned().unwrap_or_default();
    attach(&mut rows, &numpy);
    Ok((run.versions(), rows))
}

fn attach(rows: &mut [Row], medians: &BTreeMap<String, f64>) {
    for row in rows {
        row.numpy_ms = medians.get(&row.name).copied();
    }
}

/// One verdict per instance: holdfast no slower than numpy.
pub(crate) fn verdicts(rows: &[Row]) -> Vec<Verdict> {
    rows.iter()
        .map(|r| {
            let (measured, met) = match r.numpy_ms {
                Some(np) => (
                    format!(
                        "numpy {np:.3} ms / holdfast {:.3} ms = {:.2}x",
                        r.holdfast_ms,
                        np / r.holdfast_ms
                    ),
                    Some(np >= r.holdfast_ms),
                ),
                None => ("numpy not measured".to_owned(), None),
            };
            Verdict {
                issue: "tensor networks".to_owned(),
                what: format!("complex128 einsum {} vs numpy + opt_einsum, 1 thread", r.name),
                measured,
                target: ">= 1.0x (none slower)".to_owned(),
                met,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{Row, attach, verdicts};

    #[test]
    fn numpy_medians_are_matched_by_name_and_judged() {
        let mut rows = vec![
            Row { name: "a".into(), holdfast_ms: 2.0, numpy_ms: None },
            Row { name: "b".into(), holdfast_ms: 2.0, numpy_ms: None },
            Row { name: "c".into(), holdfast_ms: 2.0, numpy_ms: None },
        ];
        let medians = BTreeMap::from([("a".to_owned(), 3.0), ("b".to_owned(), 1.0)]);
        attach(&mut rows, &medians);
        let met: Vec<_> = verdicts(&rows).iter().map(|v| v.met).collect();
        assert_eq!(met, vec![Some(true), Some(false), None]);
    }
}
