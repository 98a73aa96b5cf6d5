//! The campaign's output: tables for standard output, the Markdown report (`--markdown`, which
//! `cargo xtask bench-report` folds into `docs/perf/REPORT.md`), the JSON document
//! (`--json`, `--json-out`), and the checks of SPEC M2 on the held session's warm operations.
//!
//! Invariant: every figure printed is a median of the timed rounds (or of the cold samples),
//! and every ratio divides two medians measured in the same run, rounds interleaved.

use std::fmt::Write as _;

use holdfast::ResourceLimits;
use serde_json::{Value, json};

use super::super::measure::median;
use super::super::table::Table;
use super::campaign::{CaseResult, Counters, Way, WayResult};
use super::{BenchArgs, Setting};

/// A duration in nanoseconds with a readable unit.
pub(crate) fn fmt_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn ratio(num: f64, den: f64) -> String {
    if den > 0.0 && num.is_finite() { format!("{:.2}x", num / den) } else { "-".to_owned() }
}

fn way(case: &CaseResult, way: Way) -> Option<&WayResult> {
    case.ways.iter().find(|w| w.way == way)
}

fn warm(case: &CaseResult, w: Way) -> f64 {
    way(case, w).map_or(f64::NAN, |r| median(&r.warm_ns))
}

fn cold(case: &CaseResult, w: Way) -> f64 {
    way(case, w).map_or(f64::NAN, |r| median(&r.cold_ns))
}

fn counters(case: &CaseResult, w: Way) -> Counters {
    way(case, w).map(|r| r.counters).unwrap_or_default()
}

fn per_op(c: &Counters, total: u64) -> String {
    let v = c.per_op(total);
    if v == 0.0 {
        "0".to_owned()
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn warm_table(setting: &Setting) -> Table {
    let mut t = Table::new(&[
        "case",
        "direct",
        "held",
        "scoped",
        "naive",
        "held/direct",
        "scoped/held",
        "naive/held",
    ]);
    for c in &setting.cases {
        let (d, h, s, n) =
            (warm(c, Way::Direct), warm(c, Way::Held), warm(c, Way::Scoped), warm(c, Way::Naive));
        t.row(vec![
            c.name.clone(),
            fmt_time(d),
            fmt_time(h),
            fmt_time(s),
            fmt_time(n),
            ratio(h, d),
            ratio(s, h),
            ratio(n, h),
        ]);
    }
    t
}

fn cold_table(setting: &Setting) -> Table {
    let mut t = Table::new(&["case", "direct", "held", "scoped", "naive", "held cold/warm"]);
    for c in &setting.cases {
        t.row(vec![
            c.name.clone(),
            fmt_time(cold(c, Way::Direct)),
            fmt_time(cold(c, Way::Held)),
            fmt_time(cold(c, Way::Scoped)),
            fmt_time(cold(c, Way::Naive)),
            ratio(cold(c, Way::Held), warm(c, Way::Held)),
        ]);
    }
    t
}

fn counter_table(setting: &Setting) -> Table {
    let mut t = Table::new(&[
        "case",
        "held allocs",
        "held locks",
        "held installs",
        "held plan preps",
        "held pool misses",
        "held copies",
        "scoped allocs",
        "scoped locks",
        "naive allocs",
        "naive locks",
        "naive installs",
    ]);
    for c in &setting.cases {
        let (h, s, n) = (counters(c, Way::Held), counters(c, Way::Scoped), counters(c, Way::Naive));
        t.row(vec![
            c.name.clone(),
            per_op(&h, h.allocations),
            per_op(&h, h.slot_locks + h.arbiter_locks),
            per_op(&h, h.pool_installs.unwrap_or(0)),
            h.plan_preparations.to_string(),
            per_op(&h, h.buffer_misses),
            per_op(&h, h.copies),
            per_op(&s, s.allocations),
            per_op(&s, s.slot_locks + s.arbiter_locks),
            per_op(&n, n.allocations),
            per_op(&n, n.baseline_locks),
            per_op(&n, n.pool_installs.unwrap_or(0)),
        ]);
    }
    t
}

/// One M2 check on the held session's warm operations.
#[derive(Debug)]
struct Check {
    what: &'static str,
    met: bool,
    detail: String,
}

/// Cases far below every fan-out threshold: a held session must run them inline at any budget.
/// Every add and every factorization the campaign runs, and the products up to 16 × 16.
fn tiny(case: &CaseResult) -> bool {
    let size = || case.name.rsplit('/').next().and_then(|n| n.parse::<usize>().ok());
    match case.family {
        "add" | "linalg" => true,
        "matmul" => size().is_some_and(|n| n <= 16),
        _ => false,
    }
}

fn checks(settings: &[Setting]) -> Vec<Check> {
    let mut locks = Vec::new();
    let mut installs = Vec::new();
    let mut preps = Vec::new();
    let mut misses = Vec::new();
    let mut allocs = Vec::new();
    let mut fanned_allocs = Vec::new();
    for s in settings {
        for c in &s.cases {
            let h = counters(c, Way::Held);
            let tag = || format!("{} (threads={})", c.name, s.threads);
            if h.slot_locks + h.arbiter_locks > 0 {
                locks.push(tag());
            }
            if (s.threads == 1 || tiny(c)) && h.pool_installs.unwrap_or(0) > 0 {
                installs.push(tag());
            }
            if h.plan_preparations > 0 {
                preps.push(tag());
            }
            // A buffer above the pool's retention limit is allocated every time by any pool
            // with that limit: the direct way's own pool (same limits) shows which misses are
            // structural.
            let d = counters(c, Way::Direct);
            if h.buffer_misses > d.buffer_misses {
                misses.push(tag());
            }
            if matches!(c.family, "add" | "matmul" | "linalg") && h.allocations > 0 {
                // A fanned-out operation enters the rayon pool, whose global job queue (crossbeam's
                // injector) allocates a block per 63 injected jobs: rayon's, not a buffer the
                // session's pool could serve. Those are reported, not failed.
                let line = format!("{} {}/op", tag(), per_op(&h, h.allocations));
                if h.pool_installs.unwrap_or(0) > 0 {
                    fanned_allocs.push(line);
                } else {
                    allocs.push(line);
                }
            }
        }
    }
    let check = |what, failed: Vec<String>| Check {
        what,
        met: failed.is_empty(),
        detail: if failed.is_empty() { "every case".to_owned() } else { failed.join(", ") },
    };
    vec![
        check("0 lock acquisitions (resource slot, arbiter) per warm held operation", locks),
        check(
            "0 pool installs below threshold (every case at 1 thread; add, matmul <= 16 and the 32 x 32 factorizations at any budget)",
            installs,
        ),
        check("0 plan preparations after the first operation", preps),
        check(
            "no pool miss on warm held operations that a pool with the same limits serves (the direct way's pool: buffers above the retention limit miss in both)",
            misses,
        ),
        Check {
            what: "0 heap allocations per warm held add, matmul or factorization run inline (calling thread)",
            met: allocs.is_empty(),
            detail: match (allocs.is_empty(), fanned_allocs.is_empty()) {
                (true, true) => "every case".to_owned(),
                (true, false) => format!(
                    "every inline case; fanned out through the pool (rayon's job queue): {}",
                    fanned_allocs.join(", ")
                ),
                _ => allocs.join(", "),
            },
        },
    ]
}

fn settings_line(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| format!("{} (CPUs {})", s.threads, s.cpus))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tables for standard output.
pub(crate) fn tables(settings: &[Setting], worst: f64, tolerance: f64, notes: &[String]) -> String {
    let mut out = String::new();
    for s in settings {
        let _ = writeln!(out, "holdfast bench: thread budget {} on CPUs {}", s.threads, s.cpus);
        let _ = writeln!(out, "\nwarm, median per operation");
        out.push_str(&warm_table(s).render());
        let _ =
            writeln!(out, "\ncold, median of the first operation after the resources were emptied");
        out.push_str(&cold_table(s).render());
        let _ = writeln!(
            out,
            "\ncounters per warm operation (plan preps: total over the timed rounds)"
        );
        out.push_str(&counter_table(s).render());
        out.push('\n');
    }
    for c in checks(settings) {
        let _ =
            writeln!(out, "{} {}: {}", if c.met { "met   " } else { "MISSED" }, c.what, c.detail);
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    let verdict = if worst <= tolerance { "OK" } else { "FAILED" };
    let _ = writeln!(
        out,
        "correctness: {verdict}, the four ways agree (largest relative difference {worst:.1e}, tolerance {tolerance:e})"
    );
    out
}

fn markdown_table(t: &Table) -> String {
    // The plain table's rows, re-joined with pipes.
    let rendered = t.render();
    let mut out = String::new();
    for (i, line) in rendered.lines().enumerate() {
        if i == 1 {
            continue;
        }
        let cells: Vec<&str> = split_cells(line);
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if i == 0 {
            let align: Vec<&str> =
                (0..cells.len()).map(|c| if c == 0 { "---" } else { "---:" }).collect();
            let _ = writeln!(out, "|{}|", align.join("|"));
        }
    }
    out
}

/// The cells of one rendered table line: columns are separated by at least two spaces.
fn split_cells(line: &str) -> Vec<&str> {
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

/// The Markdown report (a section of `docs/perf/REPORT.md`).
pub(crate) fn markdown(
    settings: &[Setting],
    args: &BenchArgs,
    worst: f64,
    tolerance: f64,
    notes: &[String],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Thread budgets: {}. Up to {} timed rounds per way and case (a round lasts about {} µs; \
         slow cases get fewer rounds within {} ms per case), up to {} cold samples; the ways take \
         turns round by round. Every way's buffer pool retains up to {} MiB (the engine's default \
         is {} MiB; `--retention-mib`). Ways: **direct** = kernels on caller-owned resources (no \
         lock, no admission, one pool install per round); **held** = one `open_session`, `with_session` per \
         operation; **scoped** = `with_backend_session` per operation; **naive** = a `Mutex` \
         around the resources and a pool install per call.\n",
        settings_line(settings),
        args.rounds,
        args.round_us,
        args.case_budget_ms,
        args.cold,
        args.retention_mib,
        ResourceLimits::default().buffer_retention_bytes >> 20,
    );
    for s in settings {
        let _ = writeln!(out, "### Warm, median per operation: {} thread(s)\n", s.threads);
        out.push_str(&markdown_table(&warm_table(s)));
        let _ = writeln!(
            out,
            "\n### Cold (first operation after emptying the pool and plan caches): {} thread(s)\n",
            s.threads
        );
        out.push_str(&markdown_table(&cold_table(s)));
        let _ = writeln!(out, "\n### Counters per warm operation: {} thread(s)\n", s.threads);
        out.push_str(&markdown_table(&counter_table(s)));
        out.push('\n');
    }
    let _ = writeln!(out, "### Checks on warm held operations (SPEC M2)\n");
    let _ = writeln!(out, "| check | | where |\n|---|---|---|");
    for c in checks(settings) {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            c.what,
            if c.met { "met" } else { "missed" },
            c.detail
        );
    }
    out.push('\n');
    for n in notes {
        let _ = writeln!(out, "Note: {n}\n");
    }
    let verdict = if worst <= tolerance { "agree" } else { "DISAGREE" };
    let _ = writeln!(
        out,
        "Results of the four ways {verdict}: largest relative difference {worst:.1e} (tolerance {tolerance:e}).\n\n\
         Allocations are counted on the calling thread only (work a kernel fans out to pool \
         workers is not counted); locks are the engine's resource-slot and arbiter mutexes \
         (held, scoped) and the baseline's own mutex (naive); scoped entries do not report pool \
         installs."
    );
    out
}

fn counters_json(c: &Counters) -> Value {
    json!({
        "ops": c.ops,
        "allocations": c.allocations,
        "allocated_bytes": c.allocated_bytes,
        "slot_locks": c.slot_locks,
        "arbiter_locks": c.arbiter_locks,
        "baseline_locks": c.baseline_locks,
        "pool_installs": c.pool_installs,
        "plan_preparations": c.plan_preparations,
        "plan_hits": c.plan_hits,
        "buffer_hits": c.buffer_hits,
        "buffer_misses": c.buffer_misses,
        "copied_elements": c.copies,
    })
}

/// The JSON document.
pub(crate) fn json(
    settings: &[Setting],
    args: &BenchArgs,
    worst: f64,
    tolerance: f64,
    notes: &[String],
) -> Value {
    let checks: Vec<Value> = checks(settings)
        .into_iter()
        .map(|c| json!({ "check": c.what, "met": c.met, "where": c.detail }))
        .collect();
    let settings: Vec<Value> = settings
        .iter()
        .map(|s| {
            let cases: Vec<Value> = s
                .cases
                .iter()
                .map(|c| {
                    let ways: serde_json::Map<String, Value> = c
                        .ways
                        .iter()
                        .map(|w| {
                            (
                                w.way.name().to_owned(),
                                json!({
                                    "warm_median_ns": median(&w.warm_ns),
                                    "warm_ns": w.warm_ns,
                                    "cold_median_ns": median(&w.cold_ns),
                                    "cold_ns": w.cold_ns,
                                    "counters": counters_json(&w.counters),
                                }),
                            )
                        })
                        .collect();
                    json!({
                        "name": c.name,
                        "family": c.family,
                        "ops_per_round": c.ops_per_round,
                        "rounds": c.rounds,
                        "max_relative_difference": c.max_difference,
                        "result_sum": c.digest.map(|d| d[0]),
                        "result_sum_squares": c.digest.map(|d| d[1]),
                        "ways": ways,
                    })
                })
                .collect();
            json!({ "threads": s.threads, "cpus": s.cpus, "cases": cases })
        })
        .collect();
    json!({
        "rounds": args.rounds,
        "cold_samples": args.cold,
        "round_us": args.round_us,
        "case_budget_ms": args.case_budget_ms,
        "retention_mib": args.retention_mib,
        "seed": args.seed,
        "settings": settings,
        "checks": checks,
        "notes": notes,
        "max_relative_difference": worst,
        "tolerance": tolerance,
        "agree": worst <= tolerance,
    })
}

#[cfg(test)]
mod tests;
