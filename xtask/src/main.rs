//! `cargo xtask`: the project's own commands, in the style of the `cargo-xtask` convention.
//!
//! Every command a newcomer or CI needs is here, so a fresh machine needs nothing but `cargo`:
//!
//! | command | what it does |
//! |---|---|
//! | `cargo xtask test` | the CI gate: system packages, fmt, clippy, every test, rustdoc, repository checks, audit |
//! | `cargo xtask demo` | the main job: the `holdfast` command's demo on its built-in workload |
//! | `cargo xtask audit` | the session-entry audit (`--check`, `--self-test`, `--bless`, `--list`) |
//! | `cargo xtask bench-report` | criterion benches, `holdfast bench` and numpy on the same einsum instances, written to `docs/perf/REPORT.md` |
//! | `cargo xtask soak` | the bounded soak test of sessions under load |
//! | `cargo xtask sanitize` | AddressSanitizer and ThreadSanitizer runs with the nightly toolchain |
//!
//! Every command exits non-zero with a one-line `xtask: error: …` when it fails.
#![allow(clippy::print_stdout, reason = "xtask is a command-line program; printing is its output")]

mod audit;
mod bench_report;
mod cmd;
mod demo;
mod gate;
mod sanitize;
mod soak;
mod sysdeps;
mod tidy;

use std::process::ExitCode;

/// The error every xtask command returns: a one-line message for the user.
type DynError = Box<dyn std::error::Error + Send + Sync>;

const HELP: &str = "\
usage: cargo xtask <command> [args]

commands:
  test           fmt check, clippy -D warnings, every test, rustdoc, repository checks, audit (the CI gate)
  demo           build in release and run `holdfast demo [args]` (the main job)
  audit          session-entry audit: --check (default) | --self-test | --bless | --list
                 [--format json] [--root DIR]
  tidy           repository checks only (layering, module docs)
  deps           install the system packages the workspace links against (hwloc), if missing
  bench-report   run the criterion benches, `holdfast bench` and numpy (installed into
                 target/numpy-venv), write docs/perf/REPORT.md
                 [--quick] [--no-instances] [--no-numpy] [--out FILE]
  soak           bounded soak test of sessions: [--seconds N] [--threads 2,4,8] [--seed S]
  sanitize       AddressSanitizer / ThreadSanitizer (nightly) and valgrind: [asan] [tsan] [valgrind]
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => ("help", &[][..]),
    };
    let result = match command {
        "test" => gate::run(rest),
        "tidy" => tidy::run(),
        "deps" => sysdeps::ensure(),
        "audit" => audit::run(rest),
        "demo" => demo::run(rest),
        "bench-report" => bench_report::run(rest),
        "soak" => soak::run(rest),
        "sanitize" => sanitize::run(rest),
        "help" | "-h" | "--help" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n\n{HELP}").into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
