//! `.npy` operands and results, through the `npyz` crate: [`read_f64`] and [`write_f64`], and
//! [`read_dir`] for `--inputs DIR`.
//!
//! Invariant: what is read is a C-order `float64` array of the expected shape, or a one-line
//! error naming the file; what is written is a C-order `<f8` array numpy loads as is.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter};
use std::path::{Path, PathBuf};

use holdfast::Tensor;
use npyz::{DType, NpyFile, Order, TypeChar, WriteOptions, WriterBuilder};

use super::error::CliError;

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

/// numpy's own default limit on a header's length (`max_header_size` of `numpy.load`).
const MAX_HEADER_LEN: u64 = 10_000;

/// The deepest bracket nesting accepted in a header. A plain array's header is a dict holding a
/// shape tuple (depth 2); structured dtypes, which are rejected later anyway, nest a little more.
const MAX_HEADER_DEPTH: usize = 4;

/// Room to buffer the preamble and the longest accepted header at once.
const READ_BUFFER: usize = 16 << 10;

/// Checks a `.npy` preamble and header before `npyz` parses them, without consuming anything.
/// Both rules guard against a tiny file that costs the program a great deal (found by the
/// `npy_read` fuzz target; `tests/cli_npy_fuzz_regressions.rs`):
///
/// - the announced header length must fit in the file and in numpy's own limit: `npyz`
///   allocates a buffer of that length before reading, so a 32-byte file could ask for 4 GB;
/// - brackets may nest at most [`MAX_HEADER_DEPTH`] deep: `npyz`'s header parser backtracks
///   exponentially on nested braces (a 14-brace header took 77 s to reject, each more brace
///   multiplies that by about three).
///
/// Anything else wrong with the preamble or the header is left to `npyz` to report.
fn check_header(reader: &mut impl BufRead, file_len: u64) -> Result<(), String> {
    let head = reader.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
    if head.len() < 10 || !head.starts_with(b"\x93NUMPY") {
        return Ok(());
    }
    let (header_len, preamble): (u64, usize) = match (head[6], head.get(8..12)) {
        (1, _) => (u64::from(u16::from_le_bytes([head[8], head[9]])), 10),
        (_, Some(&[a, b, c, d])) => (u64::from(u32::from_le_bytes([a, b, c, d])), 12),
        _ => return Ok(()),
    };
    if header_len > file_len.saturating_sub(preamble as u64) {
        return Err(format!(
            "not a .npy file: its header claims {header_len} bytes, more than the file holds"
        ));
    }
    if header_len > MAX_HEADER_LEN {
        return Err(format!(
            "its header is {header_len} bytes long, more than numpy's default limit of \
             {MAX_HEADER_LEN}"
        ));
    }
    // At most MAX_HEADER_LEN bytes, so the cast is exact; a regular file fills the buffer.
    let header = head
        .get(preamble..preamble + header_len as usize)
        .ok_or("not a .npy file: its header could not be read at once")?;
    let depth = bracket_depth(header);
    if depth > MAX_HEADER_DEPTH {
        return Err(format!(
            "its header nests brackets {depth} deep; at most {MAX_HEADER_DEPTH} are accepted \
             (a plain array's header nests 2)"
        ));
    }
    Ok(())
}

/// The deepest nesting of `{`, `[` and `(` outside Python string literals (with their
/// backslash escapes), in a `.npy` header.
fn bracket_depth(header: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &b in header {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'{' | b'[' | b'(' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b'}' | b']' | b')' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
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
