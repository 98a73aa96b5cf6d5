//! `cargo xtask bench-report`: runs the criterion benches that carry the issues' targets and the
//! `holdfast bench` campaign in one go, and writes `docs/perf/REPORT.md` (with the campaign's
//! JSON beside it as `docs/perf/REPORT.json`): the machine, the versions, the load, the thread
//! settings, every target with its measured value or ratio and met or missed, and the campaign's
//! tables.
//!
//! | module | owns |
//! |---|---|
//! | [`benches`] | the criterion benches that carry targets, and how each is run |
//! | [`machine`] | CPU, kernel, memory, load and versions, read from the system |
//! | [`memory`] | the resident peak of `holdfast einsum` against numpy's, per instance |
//! | [`complex`] | complex128 einsum on three instances against numpy, in the same run |
//! | [`criterion`] | criterion's medians, only those written by this run |
//! | [`peers`] | numpy, JAX and TBLIS measured in the same run, in a venv this command installs, with holdfast's turn beside them |
//! | [`quimb`] | `holdfast dmrg` against quimb's `DMRG2`, side by side, in a venv this command installs |
//! | [`scaling`] | two threads against one on the four largest instances, rounds in turn |
//! | [`targets`] | the targets and their verdicts |
//! | [`venv`] | the peers' Python environments, installed by this command |
//! | [`versus`] | the einsum instances against the best peer, the GEMM bound, and their targets |
//! | [`ways`] | `holdfast dmrg --compare`: held vs scoped vs naive per sweep, with the held run's allocations |
//!
//! Invariant: the report states only what this run measured; a target without a fresh
//! measurement is "not measured".

mod benches;
mod complex;
mod criterion;
mod machine;
mod memory;
mod peers;
mod quimb;
mod scaling;
mod targets;
mod venv;
mod versus;
mod ways;
mod why;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::DynError;
use crate::cmd::{cargo, run as exec, target_dir, workspace_root};
use machine::Machine;
use targets::Verdict;

/// Options of `cargo xtask bench-report`.
#[derive(Debug, Default)]
struct Options {
    /// Shorter measurements (for a smoke run; the committed report uses the full ones).
    quick: bool,
    /// Skip the einsum instances in `holdfast bench` (and the peers).
    no_instances: bool,
    /// Do not run the einsum peers (numpy, JAX, TBLIS) beside the campaign.
    no_numpy: bool,
    /// Do not run the DMRG comparison with quimb.
    no_quimb: bool,
    /// Where to write the report (default `docs/perf/REPORT.md`).
    out: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, DynError> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--no-instances" => o.no_instances = true,
            "--no-numpy" => o.no_numpy = true,
            "--no-quimb" => o.no_quimb = true,
            "--out" => {
                o.out = Some(it.next().ok_or("--out needs a file name")?.into());
            }
            other => {
                return Err(format!(
                    "bench-report: unknown argument `{other}` (expected --quick, --no-instances, --no-numpy, --no-quimb, --out FILE)"
                )
                .into());
            }
        }
    }
    Ok(o)
}

/// Entry point of `cargo xtask bench-report [--quick] [--no-instances] [--no-numpy] [--no-quimb]
/// [--out FILE]`.
pub(crate) fn run(args: &[String]) -> Result<(), DynError> {
    let options = parse(args)?;
    crate::sysdeps::ensure()?;
    let root = workspace_root();
    let machine = Machine::read();
    let load_before = machine::load();
    // A second of slack: file times may be coarser than the clock.
    let started = SystemTime::now() - Duration::from_secs(1);
    let begun = std::time::Instant::now();

    let (warm_up, measure) = if options.quick { ("0.3", "1") } else { ("1", "3") };
    benches::run_all(&root, warm_up, measure)?;
    let medians = criterion::read_medians(&target_dir().join("criterion"), started);

    let mut build = cargo();
    build.args(["build", "--release", "-p", "holdfast-cli", "--bin", "holdfast"]);
    exec(build)?;
    let scratch = target_dir().join("bench-report");
    std::fs::create_dir_all(&scratch)?;
    let bench_md = scratch.join("holdfast-bench.md");
    let json_path = root.join("docs/perf/REPORT.json");
    let mut bench = std::process::Command::new(target_dir().join("release/holdfast"));
    bench.current_dir(&root).arg("bench").arg("--quiet");
    bench.arg("--markdown").arg(&bench_md).arg("--json-out").arg(&json_path);
    if options.quick {
        bench.args(["--rounds", "3", "--cold", "2", "--case-budget-ms", "800"]);
    }
    if options.no_instances {
        bench.arg("--no-instances");
    }
    exec(bench)?;
    let bench_doc: Option<serde_json::Value> =
        std::fs::read_to_string(&json_path).ok().and_then(|t| serde_json::from_str(&t).ok());
    let bench_section = std::fs::read_to_string(&bench_md)?;

    let instances = std::env::var_os("HOLDFAST_EINSUM_INSTANCES")
        .map_or_else(|| root.join("../shared/einsum-instances"), PathBuf::from);
    let venv = target_dir().join("peers-venv");
    let holdfast = target_dir().join("release/holdfast");
    let peers_run = if options.no_instances || options.no_numpy {
        None
    } else {
        let request = peers::Request {
            instances: &instances,
            budget_s: if options.quick { 1.0 } else { 6.0 },
            only: &[],
            dtype: "float64",
            peers: &peers::PEERS,
            gemm_bound: true,
            holdfast: Some(&holdfast),
        };
        match peers::measure(&venv, &request) {
            Ok(run) => Some(run),
            Err(e) => {
                eprintln!("bench-report: the einsum peers not measured: {e}");
                None
            }
        }
    };

    // Two threads against one on the four largest instances, in turn (`scaling`).
    let scaling_run = peers_run.as_ref().and_then(|run| {
        scaling::measure(&holdfast, &instances, &versus::largest(run, 4))
            .map_err(|e| eprintln!("bench-report: 2 threads vs 1 not measured in turn: {e}"))
            .ok()
    });

    let complex_run = if options.no_instances || options.no_numpy {
        None
    } else {
        let holdfast = target_dir().join("release/holdfast");
        match complex::measure(&holdfast, &venv, &instances, options.quick) {
            Ok(run) => Some(run),
            Err(e) => {
                eprintln!("bench-report: complex einsum not measured: {e}");
                None
            }
        }
    };

    // A fixed three runs of every instance, numpy's largest taking over a minute: not in --quick.
    let memory_rows = if options.no_instances || options.no_numpy || options.quick {
        None
    } else {
        match memory::measure(&holdfast, &venv.join("bin/python"), &instances) {
            Ok(rows) => Some(rows),
            Err(e) => {
                eprintln!("bench-report: peak memory not measured: {e}");
                None
            }
        }
    };

    let dmrg = if options.no_quimb {
        None
    } else {
        match quimb::measure(&target_dir().join("quimb-venv"), &holdfast, options.quick) {
            Ok(run) => Some(run),
            Err(e) => {
                eprintln!("bench-report: quimb not measured: {e}");
                None
            }
        }
    };

    let ways_section = match ways::measure(&target_dir().join("release/holdfast")) {
        Ok(sweeps) => ways::table(&sweeps),
        Err(e) => {
            eprintln!("bench-report: held vs scoped vs naive not measured: {e}");
            "## DMRG held vs scoped vs naive, per sweep\n\nNot measured in this run.\n".to_owned()
        }
    };

    let mut verdicts = targets::criterion_verdicts(&medians);
    let (einsum_rows, einsum_verdicts) = targets::einsum_verdicts(
        bench_doc.as_ref(),
        peers_run.as_ref().and_then(peers::PeersRun::numpy_medians),
        peers_run.as_ref().map(|p| &p.holdfast_ms),
    );
    verdicts.extend(einsum_verdicts);
    let versus_rows =
        peers_run.as_ref().map(|p| versus::rows(bench_doc.as_ref(), p)).unwrap_or_default();
    verdicts.extend(versus::verdicts(
        &versus_rows,
        peers_run.as_ref(),
        &medians,
        scaling_run.as_deref(),
    ));
    let versus_section = versus::table(&versus_rows, peers_run.as_ref(), &medians);
    verdicts.extend(memory::verdicts(memory_rows.as_deref()));
    let memory_section = memory::table(memory_rows.as_deref());
    verdicts.extend(targets::bench_verdicts(bench_doc.as_ref()));
    if let Some((_, rows)) = &complex_run {
        verdicts.extend(complex::verdicts(rows));
    }
    let dmrg_section = match &dmrg {
        Some((versions, rows)) => {
            verdicts.extend(quimb::verdicts(rows));
            quimb::table(rows, versions)
        }
        None => "## DMRG against quimb\n\nNot measured in this run.\n".to_owned(),
    };

    let report = render(&Render {
        machine: &machine,
        load_before: &load_before,
        load_after: &machine::load(),
        minutes: begun.elapsed().as_secs_f64() / 60.0,
        quick: options.quick,
        verdicts: &verdicts,
        einsum: &einsum_rows,
        numpy_versions: peers_run
            .as_ref()
            .and_then(|p| p.peers.get("numpy"))
            .and_then(|n| n.version.as_deref()),
        complex_versions: complex_run.as_ref().map(|(v, _)| v.as_str()),
        medians: &medians,
        bench_section: &bench_section,
        versus_section: &versus_section,
        memory_section: &memory_section,
        dmrg_section: &dmrg_section,
        ways_section: &ways_section,
    });
    let out = options.out.unwrap_or_else(|| root.join("docs/perf/REPORT.md"));
    std::fs::write(&out, report)?;
    let met = verdicts.iter().filter(|v| v.met == Some(true)).count();
    let missed = verdicts.iter().filter(|v| v.met == Some(false)).count();
    eprintln!(
        "bench-report: wrote {} ({met} targets met, {missed} missed, {} not measured)",
        out.display(),
        verdicts.len() - met - missed
    );
    Ok(())
}

struct Render<'a> {
    machine: &'a Machine,
    load_before: &'a str,
    load_after: &'a str,
    minutes: f64,
    quick: bool,
    verdicts: &'a [Verdict],
    einsum: &'a [targets::EinsumRow],
    numpy_versions: Option<&'a str>,
    /// numpy's versions in the complex einsum comparison (`None`: not measured).
    complex_versions: Option<&'a str>,
    medians: &'a criterion::Medians,
    bench_section: &'a str,
    versus_section: &'a str,
    memory_section: &'a str,
    dmrg_section: &'a str,
    ways_section: &'a str,
}

fn render(r: &Render<'_>) -> String {
    let m = r.machine;
    let mut s = String::new();
    let _ = writeln!(s, "# Performance report\n");
    let _ = writeln!(
        s,
        "Generated by `cargo xtask bench-report`{} on {}. Do not edit by hand: run the command \
         again. Medians and ratios come from one run; the machine is shared, so compare ratios \
         inside this report rather than absolute times across reports.\n",
        if r.quick { " --quick" } else { "" },
        today(),
    );
    let _ = writeln!(s, "## Machine\n");
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| CPU | {} |", m.cpu_model);
    let _ = writeln!(s, "| CPUs available | {} |", m.cpus);
    let _ = writeln!(s, "| memory | {} |", m.memory);
    let _ = writeln!(s, "| kernel | {} |", m.kernel);
    let _ = writeln!(
        s,
        "| load average (1, 5, 15 min) | before {}; after {} |",
        r.load_before, r.load_after
    );
    let _ = writeln!(s, "| toolchain | {} |", m.rustc);
    let _ = writeln!(s, "| faer, rayon, hwloc | {}, {}, {} |", m.faer, m.rayon, m.hwloc);
    let _ = writeln!(
        s,
        "| profile | `bench` (thin LTO, one codegen unit) for criterion; `release` for `holdfast bench` |"
    );
    let _ = writeln!(
        s,
        "| threads | criterion benches: 1 (kernels, resources, held sessions and tensor networks pinned to CPU 0 by `taskset`; arbiter, affinity and phase leases on every CPU); `holdfast bench`: 1 and every CPU (see below) |"
    );
    let _ = writeln!(s, "| run time | {:.1} min |\n", r.minutes);

    let _ = writeln!(s, "## Targets\n");
    let _ = writeln!(s, "| issue | target | measured | goal | |\n|---|---|---|---|---|");
    for v in r.verdicts {
        let verdict = match v.met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "not measured",
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            v.issue, v.what, v.measured, v.target, verdict
        );
    }

    s.push_str(&why::render(r.verdicts));

    let _ = writeln!(s, "\n## einsum instances against numpy\n");
    let _ = writeln!(
        s,
        "**quoted**: numpy 2.4 + opt_einsum 3.4, one thread, the instance's `opt_flops` path, as \
         quoted in the kernels issue (measured on this machine at another time). **now**: {} \
         run by this command after the campaign, one BLAS thread, the same path and float64 \
         operands of a fixed seed, one untimed run then the median of the runs that fit six \
         seconds (`scripts/einsum_peers.py`, its numpy column). holdfast: the held session's warm \
         median at one thread from `holdfast bench` below (the same operands), which the quoted \
         medians divide; and its turn after the peers on each instance (`holdfast einsum \
         --threads 1`, see the next section), which numpy's median of this run divides.\n",
        r.numpy_versions.map_or_else(
            || "numpy was not measured in this run".to_owned(),
            |v| format!("{v} in a venv this command installs (`target/peers-venv`),")
        ),
    );
    let _ = writeln!(
        s,
        "| instance | numpy quoted ms | numpy now ms | holdfast ms | holdfast in turn ms | \
         vs quoted | vs now |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    let fmt = |x: Option<f64>, suffix: &str| {
        x.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}{suffix}"))
    };
    for row in r.einsum {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            row.name,
            row.numpy_ms,
            fmt(row.numpy_now_ms, ""),
            row.held_ms.map_or_else(|| "-".to_owned(), |h| format!("{h:.3}")),
            row.turn_ms.map_or_else(|| "-".to_owned(), |h| format!("{h:.3}")),
            fmt(row.speedup(), "x"),
            fmt(row.speedup_now(), "x"),
        );
    }

    let _ = writeln!(
        s,
        "\nComplex einsum (the `tensor networks` targets above): {} instances with complex128 \
         operands (both parts random), `holdfast einsum --dtype complex128 --threads 1` pinned to \
         CPU 0, median of 7 runs, beside {} in the same run.",
        complex::INSTANCES.join(", "),
        r.complex_versions.unwrap_or("numpy (not measured in this run)")
    );
    let _ = writeln!(s);
    s.push_str(r.versus_section);
    s.push('\n');
    s.push_str(r.memory_section);
    s.push('\n');
    s.push_str(r.dmrg_section);
    s.push('\n');
    s.push_str(r.ways_section);
    let _ = writeln!(s, "\n## The campaign: `holdfast bench`\n");
    s.push_str(r.bench_section);

    let _ = writeln!(s, "\n## Every criterion median of this run\n");
    let _ = writeln!(s, "| benchmark | median |\n|---|---:|");
    for (id, median) in r.medians {
        let _ = writeln!(s, "| `{id}` | {median:.1} ns |");
    }
    s
}

/// Today's date (UTC) as `YYYY-MM-DD`, from `date`, or `unknown`.
fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        )
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn options() {
        let o = parse(&["--quick".into(), "--out".into(), "x.md".into()]).unwrap();
        assert!(o.quick && !o.no_instances && !o.no_numpy);
        assert!(parse(&["--no-numpy".into()]).unwrap().no_numpy);
        assert_eq!(o.out.unwrap().to_str(), Some("x.md"));
        assert!(parse(&["--bogus".into()]).is_err());
        assert!(parse(&["--out".into()]).is_err());
    }
}
