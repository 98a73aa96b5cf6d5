//! The einsum instances against the best peer (SPEC N1-N3): per instance holdfast's median at one
//! thread, from its turn beside the peers, and numpy's, JAX's and TBLIS's, the best of them and the
//! ratio, whether each peer's result agrees with holdfast's, the path's GEMM flops, its GEMM-bound
//! time at the faster of faer's and OpenBLAS's single-thread DGEMM rates, and holdfast's
//! efficiency against that bound; then the targets of the performance issue.
//!
//! Invariant: a ratio divides two medians of this run; a target whose inputs are missing is "not
//! measured", never met.

use std::fmt::Write as _;

use serde_json::Value;

use super::criterion::Medians;
use super::peers::{PEERS, PeersRun};
use super::scaling::Scaling;
use super::targets::Verdict;

/// The criterion id of faer's single-thread DGEMM at 2048³ (`kernels_matmul`).
pub(crate) const FAER_2048: &str = "gemm_bound/faer/2048";

/// How far a peer's result sum (and sum of squares) may be from holdfast's, relative.
const AGREE: f64 = 1e-6;

/// One instance.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) name: String,
    /// holdfast's median at one thread, ms: from its turn beside the peers, else (when it took
    /// none) the held warm median of `holdfast bench`.
    pub(crate) holdfast_ms: Option<f64>,
    /// The held warm median of `holdfast bench` at one thread, ms.
    pub(crate) campaign_ms: Option<f64>,
    /// The same at every CPU, ms.
    pub(crate) holdfast_all_ms: Option<f64>,
    /// Per peer ([`PEERS`] order): its median, ms.
    pub(crate) peer_ms: [Option<f64>; 3],
    /// Per peer: whether its result agrees with holdfast's (`None`: not compared).
    pub(crate) agrees: [Option<bool>; 3],
    /// The path's GEMM flops.
    pub(crate) gemm_flops: Option<f64>,
}

impl Row {
    /// The fastest peer that ran and its median.
    pub(crate) fn best_peer(&self) -> Option<(&'static str, f64)> {
        PEERS
            .iter()
            .zip(self.peer_ms)
            .filter_map(|(&p, ms)| ms.map(|ms| (p, ms)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The best peer's median over holdfast's (above 1: holdfast is faster).
    pub(crate) fn ratio(&self) -> Option<f64> {
        Some(self.best_peer()?.1 / self.holdfast_ms.filter(|&h| h > 0.0)?)
    }

    /// The GEMM-bound time at `gflops`, ms.
    pub(crate) fn bound_ms(&self, gflops: f64) -> Option<f64> {
        Some(self.gemm_flops? / (gflops * 1e6))
    }
}

/// A case of `holdfast bench` at `threads` (`None`: the largest budget above one), by instance
/// name.
fn held<'a>(bench: &'a Value, name: &str, threads: Option<u64>) -> Option<&'a Value> {
    let settings = bench.get("settings")?.as_array()?;
    let budget = |s: &&Value| s["threads"].as_u64().unwrap_or(0);
    let setting = match threads {
        Some(t) => settings.iter().find(|s| budget(s) == t)?,
        None => settings.iter().filter(|s| budget(s) > 1).max_by_key(budget)?,
    };
    let case_name = format!("einsum/{name}");
    setting["cases"].as_array()?.iter().find(|c| c["name"].as_str() == Some(&case_name))
}

fn relative(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { (a - b).abs() / a.abs().max(b.abs()) }
}

/// The rows, one per instance the peers script saw, in name order.
pub(crate) fn rows(bench: Option<&Value>, peers: &PeersRun) -> Vec<Row> {
    peers
        .gemm_flops
        .iter()
        .map(|(name, &flops)| {
            let one = bench.and_then(|b| held(b, name, Some(1)));
            let all = bench.and_then(|b| held(b, name, None));
            let ms = |case: Option<&Value>| {
                case.and_then(|c| c["ways"]["held"]["warm_median_ns"].as_f64()).map(|ns| ns / 1e6)
            };
            let digest = one
                .and_then(|c| Some([c["result_sum"].as_f64()?, c["result_sum_squares"].as_f64()?]));
            let mut row = Row {
                name: name.clone(),
                holdfast_ms: peers.holdfast_ms.get(name).copied().or(ms(one)),
                campaign_ms: ms(one),
                holdfast_all_ms: ms(all),
                gemm_flops: Some(flops),
                ..Row::default()
            };
            for (k, peer) in PEERS.iter().enumerate() {
                let Some(run) = peers.peers.get(*peer) else { continue };
                row.peer_ms[k] = run.medians_ms.get(name).copied();
                row.agrees[k] = match (run.digests.get(name), digest) {
                    (Some(p), Some(h)) => {
                        Some(relative(p[0], h[0]) <= AGREE && relative(p[1], h[1]) <= AGREE)
                    }
                    _ => None,
                };
            }
            row
        })
        .collect()
}

/// faer's DGEMM rate at 2048³ from its criterion median, GFLOP/s.
fn faer_gflops(medians: &Medians) -> Option<f64> {
    medians.get(FAER_2048).map(|ns| 2.0 * 2048f64.powi(3) / ns)
}

/// The faster of faer's (from criterion) and OpenBLAS's DGEMM rates at 2048³, GFLOP/s, with the
/// library's name.
pub(crate) fn gemm_rate(
    medians: &Medians,
    peers: Option<&PeersRun>,
) -> Option<(&'static str, f64)> {
    let faer = faer_gflops(medians);
    let openblas = peers.and_then(|p| p.openblas_gflops);
    match (faer, openblas) {
        (Some(f), Some(o)) if o > f => Some(("OpenBLAS", o)),
        (Some(f), _) => Some(("faer", f)),
        (None, Some(o)) => Some(("OpenBLAS", o)),
        (None, None) => None,
    }
}

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"))
}

/// The report's section.
pub(crate) fn table(rows: &[Row], peers: Option<&PeersRun>, medians: &Medians) -> String {
    let mut s = String::from("## einsum instances against the best peer\n\n");
    let Some(peers) = peers else {
        s.push_str("Not measured in this run.\n");
        return s;
    };
    let faer = faer_gflops(medians);
    let rate = gemm_rate(medians, Some(peers));
    let _ = writeln!(
        s,
        "One thread each, pinned to CPU 0, float64 operands `holdfast bench` draws (SplitMix64, \
         seed 0), the instance's `opt_flops` path; each peer runs an instance once untimed (JAX: \
         its compilation), then the median of the runs that fit six seconds, the peers taking \
         turns instance by instance (`scripts/einsum_peers.py`). holdfast: its own turn after the \
         peers on each instance, `holdfast einsum --threads 1` pinned to CPU 0 (one held session, \
         the median of its runs over about the same budget, the first of them cold); beside it \
         the held warm median of `holdfast bench` below, measured earlier in this run. The ratio \
         and the efficiency use the turn's median. Peers: {}. A peer's result agrees when its sum \
         and sum of squares are within {AGREE:e} of holdfast's (`holdfast bench`'s result, \
         relative).\n",
        peers.versions()
    );
    for (name, p) in &peers.peers {
        if let Some(why) = &p.unavailable {
            let _ = writeln!(s, "- {name}: not measured ({why})");
        }
        for (instance, e) in &p.errors {
            let _ = writeln!(s, "- {name} failed on {instance}: {e}");
        }
    }
    let _ = writeln!(
        s,
        "\nDGEMM at 2048³, one thread: faer {}, OpenBLAS {}; the GEMM bound below uses the faster \
         ({}).\n",
        faer.map_or_else(|| "not measured".to_owned(), |g| format!("{g:.1} GFLOP/s")),
        peers
            .openblas_gflops
            .map_or_else(|| "not measured".to_owned(), |g| format!("{g:.1} GFLOP/s")),
        rate.map_or("none", |r| r.0),
    );
    let _ = writeln!(
        s,
        "| instance | holdfast ms | holdfast bench ms | numpy ms | JAX ms | TBLIS ms | best peer | \
         best / holdfast | results agree | GEMM GFLOP | GEMM-bound ms | efficiency |\n\
         |---|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|"
    );
    for r in rows {
        let agree: Vec<String> = PEERS
            .iter()
            .zip(r.agrees)
            .filter_map(|(p, a)| a.map(|a| format!("{p} {}", if a { "yes" } else { "**no**" })))
            .collect();
        let bound = rate.and_then(|(_, g)| r.bound_ms(g));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            ms(r.holdfast_ms),
            ms(r.campaign_ms),
            ms(r.peer_ms[0]),
            ms(r.peer_ms[1]),
            ms(r.peer_ms[2]),
            r.best_peer().map_or("-", |b| b.0),
            r.ratio().map_or_else(|| "-".to_owned(), |x| format!("{x:.2}x")),
            if agree.is_empty() { "-".to_owned() } else { agree.join(", ") },
            r.gemm_flops.map_or_else(|| "-".to_owned(), |f| format!("{:.3}", f / 1e9)),
            ms(bound),
            match (bound, r.holdfast_ms) {
                (Some(b), Some(h)) if h > 0.0 => format!("{:.0}%", 100.0 * b / h),
                _ => "-".to_owned(),
            },
        );
    }
    s
}

fn verdict(what: String, measured: String, target: &str, met: Option<bool>) -> Verdict {
    Verdict { issue: "peers".to_owned(), what, measured, target: target.to_owned(), met }
}

/// The `count` instances with the most GEMM flops, most first.
pub(crate) fn largest(peers: &PeersRun, count: usize) -> Vec<String> {
    let mut by_flops: Vec<(&String, f64)> = peers.gemm_flops.iter().map(|(n, &f)| (n, f)).collect();
    by_flops.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_flops.into_iter().take(count).map(|(n, _)| n.clone()).collect()
}

/// The targets of the performance issue that this section measures. Two threads against one
/// read `scaling` (rounds in turn) when it was measured, else the campaign's two settings.
pub(crate) fn verdicts(
    rows: &[Row],
    peers: Option<&PeersRun>,
    medians: &Medians,
    scaling: Option<&[Scaling]>,
) -> Vec<Verdict> {
    let all_peers = peers.is_some_and(|p| {
        PEERS.iter().all(|n| p.peers.get(*n).is_some_and(|r| r.unavailable.is_none()))
    });
    let ratios: Vec<(&str, f64)> =
        rows.iter().filter_map(|r| r.ratio().map(|x| (r.name.as_str(), x))).collect();
    let complete = all_peers && !rows.is_empty() && ratios.len() == rows.len();
    let slower: Vec<String> =
        ratios.iter().filter(|(_, x)| *x < 1.0).map(|(n, x)| format!("{n} {x:.2}x")).collect();
    let mut v = vec![verdict(
        "einsum instances, 1 thread: none slower than the best of numpy, JAX and TBLIS".to_owned(),
        if ratios.is_empty() {
            "not measured".to_owned()
        } else if slower.is_empty() {
            format!("0 of {} slower", ratios.len())
        } else {
            format!("{} of {} slower: {}", slower.len(), ratios.len(), slower.join(", "))
        },
        "0 slower",
        complete.then_some(slower.is_empty()),
    )];
    #[allow(clippy::cast_precision_loss, reason = "fourteen instances")]
    let geomean = (!ratios.is_empty())
        .then(|| (ratios.iter().map(|(_, x)| x.ln()).sum::<f64>() / ratios.len() as f64).exp());
    v.push(verdict(
        "einsum instances, 1 thread: geometric-mean speed-up over the per-instance best peer"
            .to_owned(),
        geomean.map_or_else(
            || "not measured".to_owned(),
            |g| format!("{g:.2}x over {} instances", ratios.len()),
        ),
        ">= 1.5x",
        complete.then(|| geomean.is_some_and(|g| g >= 1.5)),
    ));
    let disagree: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            PEERS
                .iter()
                .zip(r.agrees)
                .filter(|(_, a)| *a == Some(false))
                .map(move |(p, _)| format!("{p} on {}", r.name))
        })
        .collect();
    let compared = rows.iter().flat_map(|r| r.agrees).filter(Option::is_some).count();
    v.push(verdict(
        "peers' results agree with holdfast's (sum and sum of squares)".to_owned(),
        if disagree.is_empty() {
            format!("{compared} results compared, all agree")
        } else {
            format!("disagree: {}", disagree.join(", "))
        },
        "all agree",
        (compared > 0).then_some(disagree.is_empty()),
    ));
    let rate = gemm_rate(medians, peers);
    for mera in ["str_nw_mera_open_26", "str_nw_mera_closed_120"] {
        let row = rows.iter().find(|r| r.name == mera);
        let eff = row.and_then(|r| Some((r.bound_ms(rate?.1)?, r.holdfast_ms?)));
        v.push(verdict(
            format!("{mera}: holdfast's time over its GEMM-bound time, 1 thread"),
            eff.map_or_else(|| "not measured".to_owned(), |(b, h)| bound_share(b, h)),
            ">= 80%",
            eff.map(|(b, h)| b / h >= 0.8),
        ));
    }
    v.push(two_threads(rows, scaling));
    v
}

/// "bound B ms / holdfast H ms = S%", the share rounded down to a tenth of a percent, so that
/// a share just under a line never reads as on it.
fn bound_share(bound_ms: f64, holdfast_ms: f64) -> String {
    let share = (1000.0 * bound_ms / holdfast_ms).floor() / 10.0;
    format!("bound {bound_ms:.1} ms / holdfast {holdfast_ms:.1} ms = {share:.1}%")
}

/// "2 threads vs 1 on the four largest instances": from the rounds in turn when they ran (each
/// instance's median ratio, then every round's), else from the campaign's two settings.
fn two_threads(rows: &[Row], scaling: Option<&[Scaling]>) -> Verdict {
    let what = "2 threads vs 1 on the four largest instances (by GEMM flops)".to_owned();
    let (described, ratios): (Vec<String>, Vec<Option<f64>>) = match scaling {
        Some(s) => s.iter().map(|x| (format!("{} {}", x.name, x.describe()), x.median())).unzip(),
        None => {
            let mut largest: Vec<&Row> = rows.iter().filter(|r| r.gemm_flops.is_some()).collect();
            largest.sort_by(|a, b| {
                b.gemm_flops.unwrap_or(0.0).total_cmp(&a.gemm_flops.unwrap_or(0.0))
            });
            largest.truncate(4);
            largest
                .iter()
                .map(|r| {
                    let x = r.campaign_ms.zip(r.holdfast_all_ms).map(|(one, all)| one / all);
                    (format!("{} {}", r.name, x.map_or("-".to_owned(), |x| format!("{x:.2}x"))), x)
                })
                .unzip()
        }
    };
    let measured = ratios.len() == 4 && ratios.iter().all(Option::is_some);
    let how = if scaling.is_some() {
        format!("median of {} rounds in turn: ", super::scaling::ROUNDS)
    } else {
        "campaign settings: ".to_owned()
    };
    verdict(
        what,
        if described.is_empty() {
            "not measured".to_owned()
        } else {
            format!("{how}{}", described.join("; "))
        },
        ">= 1.8x each",
        measured.then(|| ratios.iter().all(|x| x.is_some_and(|x| x >= 1.8))),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::super::criterion::Medians;
    use super::super::peers::{PeerRun, PeersRun};
    use super::super::scaling::Scaling;
    use super::{FAER_2048, bound_share, largest, rows, verdicts};

    fn peer(ms: f64, digest: [f64; 2]) -> PeerRun {
        PeerRun {
            version: Some("v".into()),
            medians_ms: BTreeMap::from([("a".to_owned(), ms)]),
            digests: BTreeMap::from([("a".to_owned(), digest)]),
            ..PeerRun::default()
        }
    }

    #[test]
    fn a_bound_share_is_rounded_down() {
        assert_eq!(bound_share(275.4, 344.4), "bound 275.4 ms / holdfast 344.4 ms = 79.9%");
        assert_eq!(bound_share(80.0, 100.0), "bound 80.0 ms / holdfast 100.0 ms = 80.0%");
    }

    #[test]
    fn best_peer_ratio_agreement_and_bound() {
        let bench = json!({"settings": [
            {"threads": 1, "cases": [{"name": "einsum/a", "result_sum": 10.0,
              "result_sum_squares": 20.0, "ways": {"held": {"warm_median_ns": 2e6}}}]},
            {"threads": 2, "cases": [{"name": "einsum/a", "ways": {"held": {"warm_median_ns": 1e6}}}]},
        ]});
        let peers = PeersRun {
            peers: BTreeMap::from([
                ("numpy".to_owned(), peer(6.0, [10.0, 20.0])),
                ("jax".to_owned(), peer(3.0, [10.0, 20.0 + 1e-9])),
                ("tblis".to_owned(), peer(4.0, [11.0, 20.0])),
            ]),
            gemm_flops: BTreeMap::from([("a".to_owned(), 4e7)]),
            openblas_gflops: Some(10.0),
            holdfast_ms: BTreeMap::new(),
        };
        let r = rows(Some(&bench), &peers);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].best_peer(), Some(("jax", 3.0)));
        assert_eq!(r[0].ratio(), Some(1.5), "no turn taken: the campaign's median");
        assert_eq!(r[0].agrees, [Some(true), Some(true), Some(false)]);
        assert_eq!(r[0].bound_ms(20.0), Some(2.0));
        let mut medians = Medians::new();
        medians.insert(FAER_2048.to_owned(), 2.0 * 2048f64.powi(3) / 20.0);
        let v = verdicts(&r, Some(&peers), &medians, None);
        assert_eq!(v[0].met, Some(true), "{:?}", v[0]);
        assert_eq!(v[1].met, Some(true), "geomean 1.5 over one instance: {:?}", v[1]);
        assert_eq!(v[2].met, Some(false), "tblis disagrees: {:?}", v[2]);
        assert!(v[2].measured.contains("tblis on a"), "{:?}", v[2]);
        assert_eq!(v[3].met, None, "no mera instance here");
        assert_eq!(v[5].met, None, "fewer than four instances: {:?}", v[5]);
    }

    #[test]
    fn a_missing_peer_is_never_met() {
        let peers = PeersRun {
            peers: BTreeMap::from([("numpy".to_owned(), peer(6.0, [1.0, 1.0]))]),
            gemm_flops: BTreeMap::from([("a".to_owned(), 1.0)]),
            openblas_gflops: None,
            holdfast_ms: BTreeMap::new(),
        };
        let bench = json!({"settings": [{"threads": 1, "cases": [
            {"name": "einsum/a", "ways": {"held": {"warm_median_ns": 1e6}}}]}]});
        let v = verdicts(&rows(Some(&bench), &peers), Some(&peers), &Medians::new(), None);
        assert_eq!(v[0].met, None, "{:?}", v[0]);
        assert_eq!(v[1].met, None, "{:?}", v[1]);
        assert!(verdicts(&[], None, &Medians::new(), None).iter().all(|v| v.met.is_none()));
    }

    #[test]
    fn the_turn_beside_the_peers_and_the_rounds_in_turn_decide() {
        let bench = json!({"settings": [{"threads": 1, "cases": [
            {"name": "einsum/a", "ways": {"held": {"warm_median_ns": 4e6}}}]}]});
        let names = ["a", "b", "c", "d", "e"];
        let peers = PeersRun {
            peers: BTreeMap::from([
                ("numpy".to_owned(), peer(6.0, [1.0, 1.0])),
                ("jax".to_owned(), peer(3.0, [1.0, 1.0])),
                ("tblis".to_owned(), peer(4.0, [1.0, 1.0])),
            ]),
            gemm_flops: names
                .iter()
                .zip(1..)
                .map(|(n, f)| ((*n).to_owned(), f64::from(f)))
                .collect(),
            openblas_gflops: None,
            holdfast_ms: BTreeMap::from([("a".to_owned(), 2.0)]),
        };
        let r = rows(Some(&bench), &peers);
        // The turn's 2 ms, not the campaign's 4 ms.
        assert_eq!(
            (r[0].holdfast_ms, r[0].campaign_ms, r[0].ratio()),
            (Some(2.0), Some(4.0), Some(1.5))
        );
        assert_eq!(largest(&peers, 4), vec!["e", "d", "c", "b"]);
        let round = |one: f64| Scaling { name: "x".into(), rounds: vec![(one, 1.0); 3] };
        let fast: Vec<Scaling> = (0..4).map(|_| round(1.9)).collect();
        let v = verdicts(&r, Some(&peers), &Medians::new(), Some(&fast));
        let two = v.last().unwrap();
        assert_eq!(two.met, Some(true), "{two:?}");
        assert!(two.measured.starts_with("median of 7 rounds in turn: x 1.90x"), "{two:?}");
        let mut slow = fast.clone();
        slow[2] = round(1.7);
        let v = verdicts(&r, Some(&peers), &Medians::new(), Some(&slow[..]));
        assert_eq!(v.last().unwrap().met, Some(false));
        let v = verdicts(&r, Some(&peers), &Medians::new(), Some(&slow[..3]));
        assert_eq!(v.last().unwrap().met, None, "three instances are not four");
    }
}
