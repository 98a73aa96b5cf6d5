//! [`Instance`]: one problem of the einsum-benchmark format (`../shared/einsum-instances`):
//! `format_string`, `shapes`, `dtype` and opt_einsum-format `paths.opt_flops` / `paths.opt_size`.
//!
//! Invariant: a loaded instance is consistent before any operand is made: the spec parses, it
//! names as many operands as there are shapes, each operand's rank matches its term, every
//! operand's element count fits in memory arithmetic, and the dtype is one of numpy's float32,
//! float64, complex64 and complex128.

use std::path::Path;

use clap::ValueEnum;
use holdfast::layers::kernels::einsum::parse;
use holdfast::{DType, Tensor};
use serde::Deserialize;

use super::error::CliError;

/// Which contraction path to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub(crate) enum PathChoice {
    /// The instance's `paths.opt_flops.path`.
    OptFlops,
    /// The instance's `paths.opt_size.path`.
    OptSize,
    /// holdfast's own greedy path (no path from the file).
    Greedy,
}

impl PathChoice {
    /// The name as written on the command line.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            PathChoice::OptFlops => "opt_flops",
            PathChoice::OptSize => "opt_size",
            PathChoice::Greedy => "greedy",
        }
    }
}

#[derive(Debug, Deserialize)]
struct RawInstance {
    name: Option<String>,
    format_string: String,
    shapes: Vec<Vec<usize>>,
    dtype: Option<String>,
    #[serde(default)]
    paths: RawPaths,
}

#[derive(Debug, Default, Deserialize)]
struct RawPaths {
    opt_flops: Option<RawPath>,
    opt_size: Option<RawPath>,
}

#[derive(Debug, Deserialize)]
struct RawPath {
    path: Vec<(usize, usize)>,
}

/// A validated instance.
#[derive(Debug, Clone)]
pub(crate) struct Instance {
    /// `name`, or the file stem.
    pub(crate) name: String,
    /// The operands' element type (`float64` when the file names none).
    pub(crate) dtype: DType,
    /// The numpy einsum spec (row-major).
    pub(crate) spec: String,
    /// One shape per operand.
    pub(crate) shapes: Vec<Vec<usize>>,
    opt_flops: Option<Vec<(usize, usize)>>,
    opt_size: Option<Vec<(usize, usize)>>,
}

impl Instance {
    /// Reads and validates the instance in `file`.
    ///
    /// # Errors
    ///
    /// A missing or unreadable file, malformed JSON, a missing field, a dtype other than
    /// numpy's four (see [`numpy_dtype`]), a spec that does not parse or does not fit the shapes.
    pub(crate) fn load(file: &Path) -> Result<Self, CliError> {
        let text = std::fs::read_to_string(file).map_err(|e| CliError::io(file, e))?;
        let raw: RawInstance = serde_json::from_str(&text).map_err(|e| {
            CliError::bad_file(file, format!("not an einsum-benchmark instance: {e}"))
        })?;
        let dtype = match raw.dtype.as_deref() {
            None => DType::F64,
            Some(name) => numpy_dtype(name).ok_or_else(|| {
                CliError::bad_file(
                    file,
                    format!(
                        "dtype `{name}` is not supported (float32, float64, complex64 or complex128)"
                    ),
                )
            })?,
        };
        let spec = parse(&raw.format_string)
            .map_err(|e| CliError::bad_file(file, format!("bad format_string: {e}")))?;
        if spec.num_inputs() != raw.shapes.len() {
            return Err(CliError::bad_file(
                file,
                format!(
                    "format_string has {} operands but shapes has {}",
                    spec.num_inputs(),
                    raw.shapes.len()
                ),
            ));
        }
        for (i, (term, shape)) in spec.inputs().iter().zip(&raw.shapes).enumerate() {
            if term.len() != shape.len() {
                return Err(CliError::bad_file(
                    file,
                    format!(
                        "operand {i}: term has {} labels but shape {shape:?} has {} axes",
                        term.len(),
                        shape.len()
                    ),
                ));
            }
            if Tensor::<f64>::checked_numel(shape).is_none_or(|n| {
                n.checked_mul(dtype.size_bytes()).is_none_or(|b| b > isize::MAX as usize)
            }) {
                return Err(CliError::bad_file(
                    file,
                    format!("operand {i}: shape {shape:?} is too large"),
                ));
            }
        }
        let name = raw.name.unwrap_or_else(|| {
            file.file_stem()
                .map_or_else(|| "instance".to_owned(), |s| s.to_string_lossy().into_owned())
        });
        Ok(Instance {
            name,
            dtype,
            spec: raw.format_string,
            shapes: raw.shapes,
            opt_flops: raw.paths.opt_flops.map(|p| p.path),
            opt_size: raw.paths.opt_size.map(|p| p.path),
        })
    }

    /// The path to follow, `None` for greedy.
    ///
    /// # Errors
    ///
    /// When the instance has no path of that kind.
    pub(crate) fn path(
        &self,
        choice: PathChoice,
        file: &Path,
    ) -> Result<Option<&[(usize, usize)]>, CliError> {
        let path = match choice {
            PathChoice::Greedy => return Ok(None),
            PathChoice::OptFlops => self.opt_flops.as_deref(),
            PathChoice::OptSize => self.opt_size.as_deref(),
        };
        path.map(Some).ok_or_else(|| {
            CliError::bad_file(file, format!("the instance has no paths.{}.path", choice.name()))
        })
    }
}

/// The element type of numpy's dtype `name`: `float32`, `float64`, `complex64`, `complex128`,
/// or their type strings (`f4`, `<f8`, `c8`, `<c16`, …, little-endian or native).
pub(crate) fn numpy_dtype(name: &str) -> Option<DType> {
    match name.trim_start_matches(['<', '=', '|']) {
        "float32" | "f4" => Some(DType::F32),
        "float64" | "f8" | "float" | "double" => Some(DType::F64),
        "complex64" | "c8" => Some(DType::C32),
        "complex128" | "c16" | "complex" => Some(DType::C64),
        _ => None,
    }
}
