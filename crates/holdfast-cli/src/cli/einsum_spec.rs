//! `holdfast einsum --spec SPEC A.npy B.npy … [--out C.npy]`: one expression on `.npy` files in
//! one held session, as a numpy user would call `numpy.einsum` (SPEC T8). The operands' element
//! type (float32, float64, complex64 or complex128, C or Fortran order) is the computation's;
//! operands of different types are refused, as the result's type would be ambiguous.
#![allow(clippy::print_stdout, reason = "the report is the program's output")]

use std::path::{Path, PathBuf};
use std::time::Instant;

use holdfast::{CpuBackend, Element, Tensor, TensorRead};
use npyz::AutoSerialize;
use serde_json::json;

use super::error::CliError;
use super::npy::{self, NpyTensor};

/// Runs `spec` on the operands in `files`; writes the result to `out` when given and prints a
/// summary (JSON with `json`).
///
/// # Errors
///
/// A file that cannot be read, operands of different element types, a spec numpy would refuse
/// for these shapes, or a result that cannot be written: each one line.
pub(crate) fn run(
    backend: &CpuBackend,
    spec: &str,
    files: &[PathBuf],
    out: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let operands: Vec<NpyTensor> =
        files.iter().map(|f| npy::read_any(f)).collect::<Result<_, _>>()?;
    let first = operands.first().map_or("float64", NpyTensor::dtype_name);
    if let Some((i, other)) = operands.iter().enumerate().find(|(_, t)| t.dtype_name() != first) {
        return Err(CliError::Usage(format!(
            "operand {i} ({}) is {} but operand 0 is {first}: every operand needs one element type",
            files[i].display(),
            other.dtype_name()
        )));
    }
    macro_rules! typed {
        ($variant:ident) => {{
            let tensors: Vec<&Tensor<_>> = operands
                .iter()
                .filter_map(|t| match t {
                    NpyTensor::$variant(t) => Some(t),
                    _ => None,
                })
                .collect();
            evaluate(backend, spec, &tensors, first, out, json)
        }};
    }
    match operands.first() {
        Some(NpyTensor::F32(_)) => typed!(F32),
        Some(NpyTensor::C32(_)) => typed!(C32),
        Some(NpyTensor::C64(_)) => typed!(C64),
        _ => typed!(F64),
    }
}

fn evaluate<T: Element + AutoSerialize>(
    backend: &CpuBackend,
    spec: &str,
    tensors: &[&Tensor<T>],
    dtype: &str,
    out: Option<&Path>,
    json: bool,
) -> Result<(), CliError> {
    let reads: Vec<TensorRead<'_, T>> = tensors.iter().map(|t| t.read()).collect();
    let mut session = backend.open_session()?;
    let start = Instant::now();
    let result = session.with_session(|v| v.einsum(spec, &reads));
    let seconds = start.elapsed().as_secs_f64();
    session.close()?;
    let result = result.map_err(|e| CliError::Usage(format!("einsum {spec:?}: {e}")))?;
    if let Some(out) = out {
        npy::write(out, &result)?;
    }
    if json {
        println!(
            "{}",
            json!({
                "spec": spec,
                "dtype": dtype,
                "shape": result.shape(),
                "seconds": seconds,
                "out": out.map(|p| p.display().to_string()),
            })
        );
    } else {
        println!(
            "einsum {spec:?} on {} operand(s) of {dtype}: result shape {:?}, {:.3} ms in one held session{}",
            tensors.len(),
            result.shape(),
            seconds * 1e3,
            out.map(|p| format!(", written to {}", p.display())).unwrap_or_default()
        );
        if result.numel() <= 16 {
            let values: Vec<String> = result.as_slice().iter().map(ToString::to_string).collect();
            println!("values  [{}]", values.join(", "));
        }
    }
    Ok(())
}
