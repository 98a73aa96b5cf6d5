//! The `holdfast` command line: argument parsing (clap), dispatch to one module per subcommand,
//! and the shared helpers they use.
//!
//! | module | owns |
//! |---|---|
//! | [`demo`] | `holdfast demo` (the default): three ways, one engine, one table |
//! | [`info`] | `holdfast info`: topology, default domain, thresholds |
//! | [`einsum`], [`einsum_spec`] | `holdfast einsum FILE.json…`: benchmark instances in one held session; `--spec SPEC A.npy…`: one expression on files |
//! | [`dmrg`], [`chain`] | `holdfast dmrg`: two-site DMRG of a spin chain in one held session; the model flags |
//! | [`tebd`] | `holdfast tebd`: TEBD in real or imaginary time in one held session |
//! | [`mod@bench`] | `holdfast bench`: the measurement campaign (four ways, cold and warm, counters) |
//! | [`instance`], [`npy`], [`npy_header`] | the instance JSON format, `.npy` operands and their header checks |
//! | [`exec`], [`baseline`], [`workload`], [`measure`] | the measured ways, workloads and timing (shared by `demo` and `bench`) |
//! | [`table`], [`progress`], [`rng`], [`error`] | output, progress bars, operand generation, errors |
//!
//! Invariant: a failure is reported as exactly one line on standard error (`holdfast: error: …`)
//! and a non-zero exit code (2 for a usage error, 1 otherwise); nothing panics on bad input, and a
//! panic that slips through is still reported as one line (the panic hook below).
#![allow(clippy::print_stderr, reason = "the program reports its errors on standard error")]

mod alloc_count;
mod baseline;
mod bench;
mod chain;
mod demo;
mod dmrg;
mod einsum;
mod einsum_spec;
mod error;
mod exec;
mod info;
mod instance;
mod measure;
mod npy;
mod npy_header;
mod progress;
mod rng;
mod table;
mod tebd;
mod workload;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use holdfast::{CpuBackend, ResourceLimits};

use error::CliError;

/// CPU tensor operations inside sessions that own their admission.
#[derive(Debug, Parser)]
#[command(name = "holdfast", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// The subcommands; `demo` runs when none is given.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the built-in workload three ways (held session, scoped entry per operation, naive
    /// baseline) and compare per-operation cost and results.
    Demo(demo::DemoArgs),
    /// Run einsum-benchmark instances (JSON) end to end in one held session.
    Einsum(einsum::EinsumArgs),
    /// Find the ground state of a spin chain (tfim, heisenberg, xxz) by two-site DMRG in one
    /// held session.
    Dmrg(dmrg::DmrgArgs),
    /// Evolve a spin chain in real or imaginary time by second-order TEBD in one held session.
    Tebd(tebd::TebdArgs),
    /// Describe the topology, the default domain, thread budget and thresholds.
    Info(info::InfoArgs),
    /// Run the measurement campaign: every case four ways (direct, held, scoped, naive), at one
    /// thread and at all, cold and warm, with per-operation counters; tables, Markdown, JSON.
    Bench(bench::BenchArgs),
}

/// Parses the command line, runs the subcommand and maps its outcome to an exit code.
pub(crate) fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let place =
            info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("holdfast: internal error: {}{place}", one_line(&message));
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let result = match cli.command.unwrap_or_else(|| Command::Demo(demo::DemoArgs::default())) {
        Command::Demo(args) => demo::run(&args),
        Command::Einsum(args) => einsum::run(&args),
        Command::Dmrg(args) => dmrg::run(&args),
        Command::Tebd(args) => tebd::run(&args),
        Command::Info(args) => info::run(&args),
        Command::Bench(args) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("holdfast: error: {}", one_line(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}

/// Help and version go to standard output as clap renders them; a real usage error becomes one
/// line on standard error and exit code 2.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let rendered = e.render().to_string();
    let text: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let text = text.join(" ");
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    eprintln!("holdfast: error: {text} (see `holdfast --help`)");
    ExitCode::from(2)
}

/// `text` with every line break folded into a space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A backend over every allowed CPU, with `threads` as its budget when given.
///
/// # Errors
///
/// When the engine cannot be built (for instance a zero or oversubscribing budget).
fn backend_with_threads(threads: Option<usize>) -> Result<CpuBackend, CliError> {
    backend_with(threads, None)
}

/// As [`backend_with_threads`], its buffer pool retaining up to `retention_mib` MiB when given
/// (the engine's default otherwise).
///
/// # Errors
///
/// As [`backend_with_threads`]; a usage error when the limit does not fit in bytes.
fn backend_with(
    threads: Option<usize>,
    retention_mib: Option<usize>,
) -> Result<CpuBackend, CliError> {
    let mut builder = CpuBackend::builder();
    if let Some(n) = threads {
        builder = builder.threads(n);
    }
    if let Some(mib) = retention_mib {
        builder = builder.resource_limits(limits_with_retention(mib)?);
    }
    Ok(builder.build()?)
}

/// The engine's default resource limits with a buffer-pool retention limit of `mib` MiB.
///
/// # Errors
///
/// A usage error when `mib` MiB does not fit in `usize` bytes.
fn limits_with_retention(mib: usize) -> Result<ResourceLimits, CliError> {
    let bytes = mib
        .checked_mul(1 << 20)
        .ok_or_else(|| CliError::Usage(format!("--retention-mib {mib} is too large")))?;
    Ok(ResourceLimits { buffer_retention_bytes: bytes, ..ResourceLimits::default() })
}

/// Nanoseconds for a table: integral from 100 ns, one decimal below.
fn fmt_ns(ns: f64) -> String {
    if ns >= 100.0 { format!("{ns:.0}") } else { format!("{ns:.1}") }
}
