//! `holdfast einsum FILE.json…`: einsum-benchmark instances run end to end, each in one held
//! session (`--spec` evaluates one expression on `.npy` files instead, see
//! [`super::einsum_spec`]): operands of the instance's `dtype` (or `--dtype`'s) from `--inputs
//! DIR` (`.npy`, lexicographic order) or generated from `--seed`; the median time over
//! `--repeat` runs and the session's telemetry are printed, and `--out` writes the result as
//! `.npy`.
//!
//! Invariant: every input is validated (count, dtype, shape) before the session opens, so a bad
//! input is a one-line error and never a half-run.
#![allow(clippy::print_stdout, reason = "the report is the program's output")]

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use holdfast::{DType, SessionStats, Tensor, TensorRead, c32, c64};
use serde_json::json;

use super::error::CliError;
use super::instance::{Instance, PathChoice};
use super::measure::median;
use super::npy::{self, NpyElement};
use super::progress::Progress;
use super::rng::SplitMix64;
use super::table::Table;

/// Options of `holdfast einsum`.
#[derive(Debug, Clone, Args)]
pub(crate) struct EinsumArgs {
    /// Instance files in the einsum-benchmark JSON format; with `--spec`, the operands'
    /// `.npy` files.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Evaluate this einsum expression (numpy's syntax, `...` included) on the `.npy` files
    /// given, instead of running instances: `holdfast einsum --spec 'ij,jk->ik' a.npy b.npy`.
    #[arg(long, value_name = "SPEC")]
    pub(crate) spec: Option<String>,
    /// Contraction path: the instance's opt_flops or opt_size path, or holdfast's greedy one.
    #[arg(long, value_enum, default_value_t = PathChoice::OptFlops)]
    pub(crate) path: PathChoice,
    /// Thread budget of the engine (default: every CPU the process may use).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// Runs per instance; the median is reported.
    #[arg(long, default_value_t = 3, value_name = "R")]
    pub(crate) repeat: usize,
    /// Buffer-pool retention limit of the session, in MiB (default: the engine's, 100 MiB).
    /// Repeated runs of an instance whose buffers fit reuse them instead of faulting in fresh
    /// pages.
    #[arg(long, value_name = "MIB")]
    pub(crate) retention_mib: Option<usize>,
    /// Element type of the operands, instead of the instance's `dtype` (complex operands are
    /// random in both parts).
    #[arg(long, value_enum, value_name = "DTYPE")]
    pub(crate) dtype: Option<NumpyDtype>,
    /// Directory of operands, one `.npy` file per operand (of the instance's element type, C or
    /// Fortran order), taken in lexicographic order of their file names. Without it, operands
    /// are random in [0, 1).
    #[arg(long, value_name = "DIR")]
    pub(crate) inputs: Option<PathBuf>,
    /// Seed of the random operands.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Write the result to this `.npy` file.
    #[arg(long, value_name = "FILE.npy")]
    pub(crate) out: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// numpy's element types, by numpy's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum NumpyDtype {
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `complex64`.
    Complex64,
    /// `complex128`.
    Complex128,
}

impl NumpyDtype {
    fn dtype(self) -> DType {
        match self {
            NumpyDtype::Float32 => DType::F32,
            NumpyDtype::Float64 => DType::F64,
            NumpyDtype::Complex64 => DType::C32,
            NumpyDtype::Complex128 => DType::C64,
        }
    }
}

/// What one instance measured.
#[derive(Debug)]
struct Outcome {
    name: String,
    dtype: DType,
    operands: usize,
    out_shape: Vec<usize>,
    /// Seconds per run, sorted.
    seconds: Vec<f64>,
    stats: SessionStats,
}

/// The operands of `instance`: read from `inputs`, or generated from `seed`.
fn operands<T: NpyElement>(
    instance: &Instance,
    inputs: Option<&Path>,
    seed: u64,
) -> Result<Vec<Tensor<T>>, CliError> {
    let Some(dir) = inputs else {
        let mut rng = SplitMix64::new(seed);
        return instance
            .shapes
            .iter()
            .map(|shape| {
                let n = shape.iter().product();
                let data = (0..n)
                    .map(|_| {
                        let re = rng.next_f64();
                        let im = if T::DTYPE.is_complex() { rng.next_f64() } else { 0.0 };
                        T::from_parts(re, im)
                    })
                    .collect();
                Ok(Tensor::from_vec(shape.clone(), data)?)
            })
            .collect();
    };
    let files = npy::read_dir(dir)?;
    if files.len() != instance.shapes.len() {
        return Err(CliError::bad_file(
            dir,
            format!(
                "holds {} .npy files but the instance has {} operands",
                files.len(),
                instance.shapes.len()
            ),
        ));
    }
    files
        .iter()
        .zip(&instance.shapes)
        .enumerate()
        .map(|(i, (file, shape))| {
            let t = T::take(npy::read_any(file)?).map_err(|held| {
                CliError::bad_file(
                    file,
                    format!(
                        "dtype {}, but the instance's operands are {}",
                        held,
                        npy::numpy_name(T::DTYPE)
                    ),
                )
            })?;
            if t.shape() != &shape[..] {
                return Err(CliError::bad_file(
                    file,
                    format!(
                        "shape {:?} but operand {i} of the instance has shape {shape:?}",
                        t.shape()
                    ),
                ));
            }
            Ok(t)
        })
        .collect()
}

/// Runs one instance `repeat` times in one held session, in its element type (or `--dtype`'s),
/// and writes the result to `--out`.
fn run_instance(
    file: &Path,
    args: &EinsumArgs,
    backend: &holdfast::CpuBackend,
    progress: &Progress,
) -> Result<Outcome, CliError> {
    let instance = Instance::load(file)?;
    match args.dtype.map_or(instance.dtype, NumpyDtype::dtype) {
        DType::F32 => run_typed::<f32>(file, instance, args, backend, progress),
        DType::C32 => run_typed::<c32>(file, instance, args, backend, progress),
        DType::C64 => run_typed::<c64>(file, instance, args, backend, progress),
        _ => run_typed::<f64>(file, instance, args, backend, progress),
    }
}

fn run_typed<T: NpyElement>(
    file: &Path,
    instance: Instance,
    args: &EinsumArgs,
    backend: &holdfast::CpuBackend,
    progress: &Progress,
) -> Result<Outcome, CliError> {
    let path = instance.path(args.path, file)?;
    let tensors = operands::<T>(&instance, args.inputs.as_deref(), args.seed)?;
    let reads: Vec<TensorRead<'_, T>> = tensors.iter().map(Tensor::read).collect();
    progress.set_message(instance.name.clone());

    let mut session = backend.open_session()?;
    let mut seconds = Vec::with_capacity(args.repeat);
    let mut result: Option<Tensor<T>> = None;
    for _ in 0..args.repeat {
        let start = Instant::now();
        let out = session.with_session(|v| match path {
            Some(p) => v.einsum_with_path(&instance.spec, &reads, p),
            None => v.einsum(&instance.spec, &reads),
        });
        seconds.push(start.elapsed().as_secs_f64());
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                drop(session.close());
                return Err(CliError::bad_file(file, format!("einsum failed: {e}")));
            }
        };
        if let Some(previous) = result.replace(out) {
            session.with_session(|v| v.recycle(previous));
        }
        progress.inc();
    }
    let stats = session.close()?;
    let result = result.ok_or_else(|| CliError::Usage("--repeat must be at least 1".into()))?;
    seconds.sort_by(f64::total_cmp);
    if let Some(out) = &args.out {
        npy::write(out, &result)?;
    }
    Ok(Outcome {
        name: instance.name,
        dtype: T::DTYPE,
        operands: tensors.len(),
        out_shape: result.shape().to_vec(),
        seconds,
        stats,
    })
}

/// Runs `holdfast einsum`.
///
/// # Errors
///
/// Bad arguments or input files, an engine or session failure, or an einsum that fails.
pub(crate) fn run(args: &EinsumArgs) -> Result<(), CliError> {
    if let Some(spec) = &args.spec {
        if args.inputs.is_some() {
            return Err(CliError::Usage("--inputs goes with instance files, not --spec".into()));
        }
        let backend = super::backend_with(args.threads, args.retention_mib)?;
        return super::einsum_spec::run(
            &backend,
            spec,
            &args.files,
            args.out.as_deref(),
            args.json,
        );
    }
    if args.repeat == 0 {
        return Err(CliError::Usage("--repeat must be at least 1".into()));
    }
    if args.files.len() > 1 && (args.inputs.is_some() || args.out.is_some()) {
        return Err(CliError::Usage("--inputs and --out need exactly one instance file".into()));
    }
    let backend = super::backend_with(args.threads, args.retention_mib)?;
    let steps = (args.files.len() * args.repeat) as u64;
    let progress = Progress::new(steps, "einsum", !args.json && !args.quiet);
    let mut outcomes = Vec::with_capacity(args.files.len());
    for file in &args.files {
        match run_instance(file, args, &backend, &progress) {
            Ok(outcome) => outcomes.push(outcome),
            Err(e) => {
                progress.finish();
                return Err(e);
            }
        }
    }
    progress.finish();
    if args.json {
        print_json(&backend, args, &outcomes);
    } else {
        print_table(&backend, args, &outcomes);
    }
    Ok(())
}

fn ms(seconds: f64) -> String {
    let ms = seconds * 1e3;
    if ms >= 100.0 {
        format!("{ms:.0}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.4}")
    }
}

fn print_table(backend: &holdfast::CpuBackend, args: &EinsumArgs, outcomes: &[Outcome]) {
    println!(
        "holdfast einsum: path {}, {} run(s) per instance in one held session, CPUs {}, thread budget {}",
        args.path.name(),
        args.repeat,
        backend.cpus(),
        backend.threads()
    );
    println!();
    let mut table = Table::new(&["instance", "dtype", "operands", "output", "median ms", "min ms"]);
    for o in outcomes {
        table.row(vec![
            o.name.clone(),
            npy::numpy_name(o.dtype).to_owned(),
            o.operands.to_string(),
            format!("{:?}", o.out_shape),
            ms(median(&o.seconds)),
            ms(o.seconds.first().copied().unwrap_or(0.0)),
        ]);
    }
    print!("{}", table.render());
    println!();
    let mut telemetry = Table::new(&[
        "session telemetry",
        "ops",
        "pool installs",
        "inline runs",
        "buffer hits",
        "buffer misses",
        "retained KiB",
        "plan hits",
        "plan misses",
        "affinity syscalls",
        "admission wait us",
    ]);
    for o in outcomes {
        let s = &o.stats;
        telemetry.row(vec![
            o.name.clone(),
            s.operations.to_string(),
            s.pool_installs.to_string(),
            s.inline_runs.to_string(),
            s.buffer_hits.to_string(),
            s.buffer_misses.to_string(),
            (s.buffer_retained_bytes >> 10).to_string(),
            s.plan_hits.to_string(),
            s.plan_misses.to_string(),
            s.affinity_syscalls.to_string(),
            s.admission_wait.as_micros().to_string(),
        ]);
    }
    print!("{}", telemetry.render());
    if let Some(out) = &args.out {
        println!();
        println!("result written to {}", out.display());
    }
}

fn print_json(backend: &holdfast::CpuBackend, args: &EinsumArgs, outcomes: &[Outcome]) {
    let instances: Vec<_> = outcomes
        .iter()
        .map(|o| {
            let s = &o.stats;
            json!({
                "name": o.name,
                "dtype": npy::numpy_name(o.dtype),
                "operands": o.operands,
                "output_shape": o.out_shape,
                "median_seconds": median(&o.seconds),
                "min_seconds": o.seconds.first(),
                "seconds": o.seconds,
                "telemetry": {
                    "operations": s.operations,
                    "pool_installs": s.pool_installs,
                    "inline_runs": s.inline_runs,
                    "buffer_hits": s.buffer_hits,
                    "buffer_misses": s.buffer_misses,
                    "buffer_retained_bytes": s.buffer_retained_bytes,
                    "plan_hits": s.plan_hits,
                    "plan_misses": s.plan_misses,
                    "affinity_syscalls": s.affinity_syscalls,
                    "admission_wait_seconds": s.admission_wait.as_secs_f64(),
                },
            })
        })
        .collect();
    let doc = json!({
        "path": args.path.name(),
        "repeat": args.repeat,
        "cpus": backend.cpus().to_string(),
        "threads": backend.threads(),
        "out": args.out.as_ref().map(|p| p.display().to_string()),
        "instances": instances,
    });
    println!("{doc}");
}
