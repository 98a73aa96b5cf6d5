//! The targets the kernels, resources, sessions and phase-lease issues set, and their verdicts
//! from this run's criterion medians and `holdfast bench` report.
//!
//! Invariant: a target whose measurements are missing is reported as "not measured", never as
//! met; every ratio divides two medians of the same run.

use std::collections::BTreeMap;

use serde_json::Value;

use super::criterion::Medians;

/// The numpy 2.4 + opt_einsum 3.4 medians (ms, one thread, the instance's `opt_flops` path)
/// measured on this machine and quoted in the kernels issue: the reference of the einsum target.
/// One table for the project, also read by the kernels' instance tests.
const NUMPY_QUOTED_JSON: &str = include_str!("../../../../scripts/numpy-quoted-ms.json");

/// [`NUMPY_QUOTED_JSON`] as (instance, ms) pairs, in the issue's order.
pub(crate) fn numpy_quoted() -> Vec<(String, f64)> {
    // The file is part of this repository and checked by the unit test below.
    serde_json::from_str(NUMPY_QUOTED_JSON).unwrap_or_default()
}

/// How a target is measured.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// `median(num) / median(den) <= max`; when the two ran as side-by-side repetitions
    /// (`num/1`, `den/1`, `num/2`, …), the median of the repetitions' ratios.
    Ratio { num: &'static str, den: &'static str, max: f64 },
    /// `median(id) <= max_ns`.
    Below { id: &'static str, max_ns: f64 },
    /// `median(a) - median(b) <= max_ns`; when the two ran as side-by-side repetitions, the
    /// median of the repetitions' differences.
    Over { a: &'static str, b: &'static str, max_ns: f64 },
}

/// One target of an issue.
#[derive(Debug, Clone, Copy)]
struct Target {
    issue: &'static str,
    what: &'static str,
    rule: Rule,
}

const fn ratio(
    issue: &'static str,
    what: &'static str,
    num: &'static str,
    den: &'static str,
    max: f64,
) -> Target {
    Target { issue, what, rule: Rule::Ratio { num, den, max } }
}

const fn below(issue: &'static str, what: &'static str, id: &'static str, max_ns: f64) -> Target {
    Target { issue, what, rule: Rule::Below { id, max_ns } }
}

/// The fixed cost of a held operation of `fixed_cost/<case>`: held minus the kernel into a
/// buffer, at most 30 ns (the performance issue's bound).
const fn fixed(what: &'static str, held: &'static str, kernel: &'static str) -> Target {
    Target { issue: "peers", what, rule: Rule::Over { a: held, b: kernel, max_ns: 30.0 } }
}

const TARGETS: &[Target] = &[
    ratio(
        "kernels",
        "matmul n=4, prepared plan vs direct faer",
        "matmul_f64_pairs/plan_execute_into/4",
        "matmul_f64_pairs/faer_direct/4",
        1.2,
    ),
    ratio(
        "kernels",
        "matmul n=8, prepared plan vs direct faer",
        "matmul_f64_pairs/plan_execute_into/8",
        "matmul_f64_pairs/faer_direct/8",
        1.2,
    ),
    ratio(
        "kernels",
        "matmul n=16, prepared plan vs direct faer",
        "matmul_f64_pairs/plan_execute_into/16",
        "matmul_f64_pairs/faer_direct/16",
        1.2,
    ),
    ratio(
        "kernels",
        "matmul n=64, prepared plan vs direct faer",
        "matmul_f64_pairs/plan_execute_into/64",
        "matmul_f64_pairs/faer_direct/64",
        1.2,
    ),
    ratio(
        "kernels",
        "matmul n=256, prepared plan vs direct faer",
        "matmul_f64_pairs/plan_execute_into/256",
        "matmul_f64_pairs/faer_direct/256",
        1.2,
    ),
    below("resources", "resource checkout take + return", "checkout/take_return", 50.0),
    Target {
        issue: "resources",
        what: "loan around an op taking one pooled buffer, over the bare op",
        rule: Rule::Over { a: "loan/loan_op", b: "loan/bare_op", max_ns: 25.0 },
    },
    below(
        "resources",
        "einsum plan-cache hit, 4-label pairwise (session path)",
        "plan_cache/hit_4label_recent",
        30.0,
    ),
    ratio(
        "sessions",
        "held matmul_into 4x4 vs direct faer into a buffer",
        "held_session_dispatch/held_matmul_into",
        "held_session_dispatch/direct_faer_into",
        1.5,
    ),
    ratio(
        "sessions",
        "held matmul 4x4 vs direct faer allocating its output",
        "held_session_dispatch/held_matmul",
        "held_session_dispatch/direct_faer_alloc",
        1.5,
    ),
    ratio(
        "tensor networks",
        "held c64 matmul_into 4x4 vs direct faer into a buffer",
        "held_tensor_network/c64_held_matmul_into",
        "held_tensor_network/c64_direct_faer_into",
        1.5,
    ),
    ratio(
        "tensor networks",
        "held SVD f64 16x16 vs faer thin_svd",
        "held_tensor_network/svd_held_f64_16",
        "held_tensor_network/svd_direct_faer_f64_16",
        1.2,
    ),
    ratio(
        "tensor networks",
        "held SVD f64 64x64 vs faer thin_svd",
        "held_tensor_network/svd_held_f64_64",
        "held_tensor_network/svd_direct_faer_f64_64",
        1.2,
    ),
    ratio(
        "tensor networks",
        "held SVD c64 16x16 vs faer thin_svd",
        "held_tensor_network/svd_held_c64_16",
        "held_tensor_network/svd_direct_faer_c64_16",
        1.2,
    ),
    ratio(
        "tensor networks",
        "held SVD c64 64x64 vs faer thin_svd",
        "held_tensor_network/svd_held_c64_64",
        "held_tensor_network/svd_direct_faer_c64_64",
        1.2,
    ),
    below("sessions", "held open + close", "held_session_dispatch/held_open_close", 150.0),
    below("sessions", "scoped empty entry", "held_session_dispatch/scoped_empty", 200.0),
    below(
        "admission",
        "arbiter acquire + release, uncontended (global)",
        "arbiter/acquire_release_uncontended/global",
        60.0,
    ),
    below("admission", "owner marker enter + exit", "owner/guard_enter_exit", 5.0),
    below(
        "admission",
        "affinity guard, unchanged mask",
        "affinity/enter_finish_unchanged_whole_domain",
        10.0,
    ),
    below(
        "phase lease",
        "phase run of 2 lanes, empty bodies, warm",
        "phase_lease/2_threads/run_lanes_empty",
        10_000.0,
    ),
    fixed(
        "fixed cost of a warm held add of 2 f64 elements (held - the sum into a buffer)",
        "fixed_cost/add2_f64/held",
        "fixed_cost/add2_f64/kernel",
    ),
    fixed(
        "fixed cost of a warm held f64 matmul 2x2 (held - prepared plan into a buffer)",
        "fixed_cost/matmul2_f64/held",
        "fixed_cost/matmul2_f64/kernel",
    ),
    fixed(
        "fixed cost of a warm held f64 matmul 4x4 (held - prepared plan into a buffer)",
        "fixed_cost/matmul4_f64/held",
        "fixed_cost/matmul4_f64/kernel",
    ),
    fixed(
        "fixed cost of a warm held c64 matmul 2x2 (held - prepared plan into a buffer)",
        "fixed_cost/matmul2_c64/held",
        "fixed_cost/matmul2_c64/kernel",
    ),
    fixed(
        "fixed cost of a warm held c64 matmul 4x4 (held - prepared plan into a buffer)",
        "fixed_cost/matmul4_c64/held",
        "fixed_cost/matmul4_c64/kernel",
    ),
    fixed(
        "fixed cost of a warm held einsum ij,jk->ik on 4x4 f64 (held - prepared product into a buffer)",
        "fixed_cost/einsum_ij_jk_4_f64/held",
        "fixed_cost/einsum_ij_jk_4_f64/kernel",
    ),
];

/// One row of the targets table.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    pub(crate) issue: String,
    pub(crate) what: String,
    pub(crate) measured: String,
    pub(crate) target: String,
    /// `None`: not measured in this run.
    pub(crate) met: Option<bool>,
}

fn ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{v:.1} ns")
    }
}

/// The verdicts of the criterion targets.
pub(crate) fn criterion_verdicts(m: &Medians) -> Vec<Verdict> {
    TARGETS
        .iter()
        .map(|t| {
            let (measured, target, met) = match t.rule {
                Rule::Ratio { num, den, max } => match (m.get(num), m.get(den)) {
                    (Some(&a), Some(&b)) if b > 0.0 => (
                        format!("{} / {} = {:.2}x", ns(a), ns(b), a / b),
                        format!("<= {max}x"),
                        Some(a / b <= max),
                    ),
                    _ => match paired(m, num, den) {
                        Some((text, r)) => (text, format!("<= {max}x"), Some(r <= max)),
                        None => ("not measured".to_owned(), format!("<= {max}x"), None),
                    },
                },
                Rule::Below { id, max_ns } => match m.get(id) {
                    Some(&a) => (ns(a), format!("<= {}", ns(max_ns)), Some(a <= max_ns)),
                    None => ("not measured".to_owned(), format!("<= {}", ns(max_ns)), None),
                },
                Rule::Over { a, b, max_ns } => match (m.get(a), m.get(b)) {
                    (Some(&x), Some(&y)) => (
                        format!("{} - {} = {}", ns(x), ns(y), ns(x - y)),
                        format!("<= {}", ns(max_ns)),
                        Some(x - y <= max_ns),
                    ),
                    _ => match paired_difference(m, a, b) {
                        Some((text, d)) => (text, format!("<= {}", ns(max_ns)), Some(d <= max_ns)),
                        None => ("not measured".to_owned(), format!("<= {}", ns(max_ns)), None),
                    },
                },
            };
            Verdict { issue: t.issue.to_owned(), what: t.what.to_owned(), measured, target, met }
        })
        .collect()
}

/// The median ratio of the side-by-side repetitions `num/R` over `den/R` (R = 1, 2, …, up to
/// the first missing one), with a description listing each pair; `None` when none ran.
fn paired(m: &Medians, num: &str, den: &str) -> Option<(String, f64)> {
    let mut pairs = Vec::new();
    for rep in 1.. {
        match (m.get(&format!("{num}/{rep}")), m.get(&format!("{den}/{rep}"))) {
            (Some(&a), Some(&b)) if b > 0.0 => pairs.push((a, b)),
            _ => break,
        }
    }
    let mut ratios: Vec<f64> = pairs.iter().map(|(a, b)| a / b).collect();
    ratios.sort_by(f64::total_cmp);
    let median = *ratios.get(ratios.len() / 2)?;
    let each: Vec<String> =
        pairs.iter().map(|&(a, b)| format!("{} / {} = {:.2}x", ns(a), ns(b), a / b)).collect();
    let text =
        format!("median of {} side-by-side pairs {median:.2}x ({})", pairs.len(), each.join("; "));
    Some((text, median))
}

/// The median difference of the side-by-side repetitions `a/R` minus `b/R`, described pair by
/// pair; `None` when none ran.
fn paired_difference(m: &Medians, a: &str, b: &str) -> Option<(String, f64)> {
    let mut pairs = Vec::new();
    for rep in 1.. {
        match (m.get(&format!("{a}/{rep}")), m.get(&format!("{b}/{rep}"))) {
            (Some(&x), Some(&y)) => pairs.push((x, y)),
            _ => break,
        }
    }
    let mut differences: Vec<f64> = pairs.iter().map(|(x, y)| x - y).collect();
    differences.sort_by(f64::total_cmp);
    let median = *differences.get(differences.len() / 2)?;
    let each: Vec<String> =
        pairs.iter().map(|&(x, y)| format!("{} - {} = {}", ns(x), ns(y), ns(x - y))).collect();
    let text = format!(
        "median of {} side-by-side pairs {} ({})",
        pairs.len(),
        ns(median),
        each.join("; ")
    );
    Some((text, median))
}

/// The held session's warm median (ns) of einsum instance `name` at one thread, from the
/// `holdfast bench` JSON document.
fn held_one_thread_ns(bench: &Value, name: &str) -> Option<f64> {
    let settings = bench.get("settings")?.as_array()?;
    let one = settings.iter().find(|s| s.get("threads").and_then(Value::as_u64) == Some(1))?;
    let case = one
        .get("cases")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(&format!("einsum/{name}")))?;
    case.get("ways")?.get("held")?.get("warm_median_ns")?.as_f64()
}

/// One instance against numpy.
#[derive(Debug, Clone)]
pub(crate) struct EinsumRow {
    pub(crate) name: String,
    /// The median the kernels issue quotes.
    pub(crate) numpy_ms: f64,
    /// numpy measured in this run, beside the campaign (`None`: not measured).
    pub(crate) numpy_now_ms: Option<f64>,
    /// The held warm median of `holdfast bench` at one thread.
    pub(crate) held_ms: Option<f64>,
    /// holdfast's median from its turn beside the peers (`None`: it took none).
    pub(crate) turn_ms: Option<f64>,
}

impl EinsumRow {
    /// The quoted numpy time over ours (above 1: we are faster).
    pub(crate) fn speedup(&self) -> Option<f64> {
        self.held_ms.filter(|&h| h > 0.0).map(|h| self.numpy_ms / h)
    }

    /// numpy's time in this run over ours: over holdfast's turn beside numpy when it took one
    /// (medians seconds apart), else over the campaign's.
    pub(crate) fn speedup_now(&self) -> Option<f64> {
        let ours = self.turn_ms.or(self.held_ms).filter(|&h| h > 0.0)?;
        self.numpy_now_ms.map(|n| n / ours)
    }
}

/// The two einsum verdicts (none slower, geometric mean at least 3x) for one numpy column.
fn einsum_pair(
    rows: &[EinsumRow],
    against: &str,
    speedup: fn(&EinsumRow) -> Option<f64>,
) -> [Verdict; 2] {
    let speedups: Vec<f64> = rows.iter().filter_map(speedup).collect();
    // No rows (an unreadable quote table) is "not measured", never vacuously met.
    let complete = !rows.is_empty() && speedups.len() == rows.len();
    let slower = speedups.iter().filter(|&&s| s < 1.0).count();
    #[allow(clippy::cast_precision_loss, reason = "a handful of instances")]
    let geomean = if speedups.is_empty() {
        f64::NAN
    } else {
        (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp()
    };
    [
        Verdict {
            issue: "kernels".to_owned(),
            what: format!("einsum instances, 1 thread: none slower than numpy ({against})"),
            measured: if complete {
                format!("{slower} of {} slower", rows.len())
            } else {
                format!("{} of {} measured, {slower} slower", speedups.len(), rows.len())
            },
            target: "0 slower".to_owned(),
            met: complete.then_some(slower == 0),
        },
        Verdict {
            issue: "kernels".to_owned(),
            what: format!(
                "einsum instances, 1 thread: geometric-mean speed-up over numpy ({against})"
            ),
            measured: format!("{geomean:.2}x over {} instances", speedups.len()),
            target: ">= 3x".to_owned(),
            met: complete.then_some(geomean >= 3.0),
        },
    ]
}

/// Every quoted instance with our one-thread held median (and numpy's median of this run, when
/// measured), and the einsum verdicts: no instance slower than numpy, geometric-mean speed-up at
/// least 3x; first against the issue's quoted medians, then against numpy measured beside us.
pub(crate) fn einsum_verdicts(
    bench: Option<&Value>,
    numpy_now: Option<&BTreeMap<String, f64>>,
    turn: Option<&BTreeMap<String, f64>>,
) -> (Vec<EinsumRow>, Vec<Verdict>) {
    let rows: Vec<EinsumRow> = numpy_quoted()
        .into_iter()
        .map(|(name, numpy_ms)| EinsumRow {
            numpy_ms,
            numpy_now_ms: numpy_now.and_then(|m| m.get(&name).copied()),
            held_ms: bench.and_then(|b| held_one_thread_ns(b, &name)).map(|ns| ns / 1e6),
            turn_ms: turn.and_then(|m| m.get(&name).copied()),
            name,
        })
        .collect();
    let mut verdicts = einsum_pair(&rows, "quoted medians", EinsumRow::speedup).to_vec();
    verdicts.extend(einsum_pair(&rows, "measured in this run", EinsumRow::speedup_now));
    (rows, verdicts)
}

/// The M2 checks `holdfast bench` evaluated.
pub(crate) fn bench_verdicts(bench: Option<&Value>) -> Vec<Verdict> {
    let Some(checks) = bench.and_then(|b| b.get("checks")).and_then(Value::as_array) else {
        return vec![Verdict {
            issue: "measurement".to_owned(),
            what: "counters of warm held operations (M2)".to_owned(),
            measured: "not measured".to_owned(),
            target: "see holdfast bench".to_owned(),
            met: None,
        }];
    };
    checks
        .iter()
        .map(|c| Verdict {
            issue: "measurement".to_owned(),
            what: c.get("check").and_then(Value::as_str).unwrap_or("?").to_owned(),
            measured: c.get("where").and_then(Value::as_str).unwrap_or("?").to_owned(),
            target: "holds".to_owned(),
            met: c.get("met").and_then(Value::as_bool),
        })
        .collect()
}

#[cfg(test)]
mod tests;
