//! `.npy` operands and results, through the `npyz` crate: [`read_any`] (`float32`, `float64`,
//! `complex64`, `complex128`, C or Fortran order, either byte order), [`NpyElement::take`] for
//! operands of a known element type, [`write`], and [`read_dir`] for `--inputs DIR`.
//!
//! Invariant: what is read is an array of one of the four element types, in row-major order
//! whatever the file's order, or a one-line error naming the file; what is written is a C-order
//! little-endian array numpy loads as is.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use holdfast::{Element, Tensor, c32, c64};
use npyz::{
    AutoSerialize, DType, Deserialize, NpyFile, Order, TypeChar, WriteOptions, WriterBuilder,
};

use super::error::CliError;
use super::npy_header::{READ_BUFFER, check_header};

/// An array read from a `.npy` file, of one of the four element types.
#[derive(Debug)]
pub(crate) enum NpyTensor {
    /// `<f4`.
    F32(Tensor<f32>),
    /// `<f8`.
    F64(Tensor<f64>),
    /// `<c8` (numpy's complex64).
    C32(Tensor<c32>),
    /// `<c16` (numpy's complex128).
    C64(Tensor<c64>),
}

/// An element type a `.npy` array can be taken out of [`NpyTensor`] as.
pub(crate) trait NpyElement: Element + AutoSerialize {
    /// The array, when it holds this element type; else numpy's name of the type it holds.
    fn take(t: NpyTensor) -> Result<Tensor<Self>, &'static str>;
}

macro_rules! npy_element {
    ($t:ty, $variant:ident) => {
        impl NpyElement for $t {
            fn take(t: NpyTensor) -> Result<Tensor<Self>, &'static str> {
                match t {
                    NpyTensor::$variant(t) => Ok(t),
                    other => Err(other.dtype_name()),
                }
            }
        }
    };
}

npy_element!(f32, F32);
npy_element!(f64, F64);
npy_element!(c32, C32);
npy_element!(c64, C64);

/// numpy's name of element type `d`.
pub(crate) fn numpy_name(d: holdfast::DType) -> &'static str {
    match d {
        holdfast::DType::F32 => "float32",
        holdfast::DType::C32 => "complex64",
        holdfast::DType::C64 => "complex128",
        _ => "float64",
    }
}

impl NpyTensor {
    /// numpy's name of the element type.
    pub(crate) fn dtype_name(&self) -> &'static str {
        numpy_name(match self {
            NpyTensor::F32(_) => holdfast::DType::F32,
            NpyTensor::F64(_) => holdfast::DType::F64,
            NpyTensor::C32(_) => holdfast::DType::C32,
            NpyTensor::C64(_) => holdfast::DType::C64,
        })
    }
}

/// Reads the array in `path`, whatever its element type among the four and its order.
///
/// # Errors
///
/// A missing or unreadable file, a file that is not `.npy`, another dtype, or data that does
/// not match its header.
pub(crate) fn read_any(path: &Path) -> Result<NpyTensor, CliError> {
    let npy = open(path)?;
    let dtype = npy.dtype();
    let DType::Plain(ts) = &dtype else {
        return Err(unsupported(path, &dtype));
    };
    match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => Ok(NpyTensor::F32(into_tensor(path, npy)?)),
        (TypeChar::Float, 8) => Ok(NpyTensor::F64(into_tensor(path, npy)?)),
        (TypeChar::Complex, 8) => Ok(NpyTensor::C32(into_tensor(path, npy)?)),
        (TypeChar::Complex, 16) => Ok(NpyTensor::C64(into_tensor(path, npy)?)),
        _ => Err(unsupported(path, &dtype)),
    }
}

fn unsupported(path: &Path, dtype: &DType) -> CliError {
    CliError::bad_file(
        path,
        format!(
            "dtype {} is not supported (float32, float64, complex64, complex128 only)",
            dtype.descr()
        ),
    )
}

/// Opens `path` as a `.npy` file, its header checked first.
fn open(path: &Path) -> Result<NpyFile<BufReader<File>>, CliError> {
    let file = File::open(path).map_err(|e| CliError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| CliError::io(path, e))?.len();
    let mut reader = BufReader::with_capacity(READ_BUFFER, file);
    check_header(&mut reader, file_len).map_err(|reason| CliError::bad_file(path, reason))?;
    NpyFile::new(reader).map_err(|e| CliError::bad_file(path, format!("not a .npy file: {e}")))
}

/// The data of `npy` as a row-major tensor (a Fortran-order file is transposed once).
fn into_tensor<T: Element + Deserialize>(
    path: &Path,
    npy: NpyFile<BufReader<File>>,
) -> Result<Tensor<T>, CliError> {
    let shape = npy
        .shape()
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| CliError::bad_file(path, "shape does not fit this machine"))?;
    let fortran = npy.order() == Order::Fortran && shape.len() > 1;
    let data: Vec<T> = npy
        .into_vec()
        .map_err(|e| CliError::bad_file(path, format!("cannot read the data: {e}")))?;
    let bad = |e: holdfast::TensorError| CliError::bad_file(path, e.to_string());
    if !fortran {
        return Tensor::from_vec(shape, data).map_err(bad);
    }
    // Column-major data of `shape` is row-major data of the reversed shape, transposed.
    let reversed: Vec<usize> = shape.iter().rev().copied().collect();
    let t = Tensor::from_vec(reversed, data).map_err(bad)?;
    Tensor::from_vec(shape, t.read().transpose().to_vec()).map_err(bad)
}

/// Writes `tensor` to `path` as a C-order little-endian array of its element type.
///
/// # Errors
///
/// When the file cannot be created or written.
pub(crate) fn write<T: Element + AutoSerialize>(
    path: &Path,
    tensor: &Tensor<T>,
) -> Result<(), CliError> {
    let io = |e| CliError::io(path, e);
    let shape: Vec<u64> = tensor.shape().iter().map(|&d| d as u64).collect();
    let file = File::create(path).map_err(io)?;
    let mut writer = WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(BufWriter::new(file))
        .begin_nd()
        .map_err(io)?;
    writer.extend(tensor.read().to_vec()).map_err(io)?;
    writer.finish().map_err(io)
}

/// The `.npy` files of `dir`, in lexicographic order of their file names.
///
/// # Errors
///
/// When `dir` cannot be listed.
pub(crate) fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let entries = std::fs::read_dir(dir).map_err(|e| CliError::io(dir, e))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| CliError::io(dir, e))?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "npy") {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::{NpyElement, NpyTensor, read_any, write};
    use holdfast::{Tensor, c64};

    #[test]
    fn round_trip() {
        let dir = std::env::temp_dir().join(format!("holdfast-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for shape in [vec![], vec![3], vec![2, 3]] {
            let n: usize = shape.iter().product();
            let t =
                Tensor::from_vec(shape.clone(), (0..n).map(|i| i as f64 * 0.5).collect()).unwrap();
            let file = dir.join("t.npy");
            write(&file, &t).unwrap();
            let back = f64::take(read_any(&file).unwrap()).unwrap();
            assert_eq!(back.shape(), &shape[..]);
            assert_eq!(back.as_slice(), t.as_slice());
        }
        let z =
            Tensor::<c64>::from_vec([2], vec![c64::new(1.0, -2.0), c64::new(0.5, 3.0)]).unwrap();
        let file = dir.join("z.npy");
        write(&file, &z).unwrap();
        match read_any(&file).unwrap() {
            NpyTensor::C64(back) => assert_eq!(back.as_slice(), z.as_slice()),
            other => panic!("read back as {}", other.dtype_name()),
        }
        assert!(f64::take(read_any(&file).unwrap()).is_err(), "complex128 is not float64");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
