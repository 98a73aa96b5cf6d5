//! Shared helpers of the `cli_*` tests: run the built `holdfast` binary, make scratch
//! directories, write `.npy` operands, find the einsum instances.
#![allow(dead_code, reason = "each test binary uses a different part")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The result of one run of the binary.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `holdfast args…`.
pub(crate) fn holdfast(args: &[&str]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_holdfast"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the holdfast binary runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `holdfast args…` and checks that it fails cleanly: non-zero exit, exactly one line on
/// standard error starting `holdfast: error:`, no panic, no backtrace. Returns that line.
pub(crate) fn fails_cleanly(args: &[&str]) -> String {
    let run = holdfast(args);
    assert!(matches!(run.code, Some(c) if c != 0), "{args:?} should fail: {run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one error line expected, got {:?}", run.stderr);
    assert!(lines[0].starts_with("holdfast: error: "), "{args:?}: {}", lines[0]);
    for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace", "internal error"] {
        assert!(!run.stderr.contains(bad), "{args:?}: {}", run.stderr);
    }
    lines[0].to_owned()
}

/// A fresh scratch directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("holdfast-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `data` with `shape` as a C-order `<f8` `.npy` file.
pub(crate) fn write_npy_f64(path: &Path, shape: &[u64], data: &[f64]) {
    use npyz::WriterBuilder;
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w =
        npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// Writes `data` with `shape` as a `<f4` `.npy` file (a wrong dtype for holdfast).
pub(crate) fn write_npy_f32(path: &Path, shape: &[u64], data: &[f32]) {
    use npyz::WriterBuilder;
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w =
        npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// Writes complex128 `data` with `shape` as a C-order `<c16` `.npy` file.
pub(crate) fn write_npy_c16(path: &Path, shape: &[u64], data: &[num_complex::Complex<f64>]) {
    use npyz::WriterBuilder;
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w =
        npyz::WriteOptions::new().default_dtype().shape(shape).writer(file).begin_nd().unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// Reads a `<f8` `.npy` file: (shape, data).
pub(crate) fn read_npy_f64(path: &Path) -> (Vec<u64>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec().unwrap())
}

/// The einsum instances: `$HOLDFAST_EINSUM_INSTANCES` or `../shared/einsum-instances` beside the
/// repository; `None` when absent.
pub(crate) fn instances_dir() -> Option<PathBuf> {
    let dir =
        std::env::var_os("HOLDFAST_EINSUM_INSTANCES").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/einsum-instances")
        });
    dir.is_dir().then_some(dir)
}

/// Path as a `&str` for arguments.
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
