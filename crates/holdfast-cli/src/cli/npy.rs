//! `.npy` operands and results, through the `npyz` crate: [`read_f64`] and [`write_f64`], and
//! [`read_dir`] for `--inputs DIR`.
//!
//! Invariant: what is read is a C-order `float64` array of the expected shape, or a one-line
//! error naming the file; what is written is a C-order `<f8` array numpy loads as is.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use holdfast::Tensor;
use npyz::{DType, NpyFile, Order, TypeChar, WriteOptions, WriterBuilder};

use super::error::CliError;
use super::npy_header::{READ_BUFFER, check_header};

/// Reads the `float64` array in `path`.
///
/// # Errors
///
/// A missing or unreadable file, a file that is not `.npy`, a dtype other than `float64`, or
/// Fortran order.
pub(crate) fn read_f64(path: &Path) -> Result<Tensor<f64>, CliError> {
    let file = File::open(path).map_err(|e| CliError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| CliError::io(path, e))?.len();
    let mut reader = BufReader::with_capacity(READ_BUFFER, file);
    check_header(&mut reader, file_len).map_err(|reason| CliError::bad_file(path, reason))?;
    let npy = NpyFile::new(reader)
        .map_err(|e| CliError::bad_file(path, format!("not a .npy file: {e}")))?;
    let dtype = npy.dtype();
    match &dtype {
        DType::Plain(ts) if ts.type_char() == TypeChar::Float && ts.size_field() == 8 => {}
        other => {
            return Err(CliError::bad_file(
                path,
                format!("dtype {} is not supported (float64 only)", other.descr()),
            ));
        }
    }
    if npy.order() == Order::Fortran && npy.shape().len() > 1 {
        return Err(CliError::bad_file(
            path,
            "Fortran-order arrays are not supported (save a C-contiguous array)",
        ));
    }
    let shape = npy
        .shape()
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| CliError::bad_file(path, "shape does not fit this machine"))?;
    let data: Vec<f64> = npy
        .into_vec()
        .map_err(|e| CliError::bad_file(path, format!("cannot read the data: {e}")))?;
    Tensor::from_vec(shape, data).map_err(|e| CliError::bad_file(path, e.to_string()))
}

/// Writes `tensor` to `path` as a C-order `<f8` array.
///
/// # Errors
///
/// When the file cannot be created or written.
pub(crate) fn write_f64(path: &Path, tensor: &Tensor<f64>) -> Result<(), CliError> {
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
    use super::{read_f64, write_f64};
    use holdfast::Tensor;

    #[test]
    fn round_trip() {
        let dir = std::env::temp_dir().join(format!("holdfast-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for shape in [vec![], vec![3], vec![2, 3]] {
            let n: usize = shape.iter().product();
            let t =
                Tensor::from_vec(shape.clone(), (0..n).map(|i| i as f64 * 0.5).collect()).unwrap();
            let file = dir.join("t.npy");
            write_f64(&file, &t).unwrap();
            let back = read_f64(&file).unwrap();
            assert_eq!(back.shape(), &shape[..]);
            assert_eq!(back.as_slice(), t.as_slice());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
