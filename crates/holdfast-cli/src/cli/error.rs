//! [`CliError`]: every way a subcommand can fail, each rendered as one line for the user.
//!
//! Invariant: a `CliError`'s `Display` is a single line (the program's `main` also folds any
//! stray line break), so the program never prints more than one line of error.

use std::path::{Path, PathBuf};

use holdfast::{BuildError, CpuHeldSessionError, OpError, SessionEntryError, TensorError};

/// What went wrong in a subcommand.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An input file is not what the subcommand expects (malformed JSON, wrong dtype, shape…).
    #[error("{}: {message}", path.display())]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Arguments that parse but do not fit together.
    #[error("{0}")]
    Usage(String),
    /// The engine could not be built.
    #[error("cannot build the CPU engine: {0}")]
    Build(#[from] BuildError),
    /// A session could not be entered.
    #[error("cannot enter a session: {0}")]
    Entry(#[from] SessionEntryError),
    /// A session's close failed.
    #[error("closing the session failed: {0}")]
    Close(#[from] CpuHeldSessionError),
    /// An operation failed.
    #[error("operation failed: {0}")]
    Op(#[from] OpError),
    /// A kernel failed (naive baseline).
    #[error("operation failed: {0}")]
    Kernel(#[from] holdfast::layers::kernels::KernelError),
    /// A tensor could not be built.
    #[error("bad tensor: {0}")]
    Tensor(#[from] TensorError),
    /// The ways of running a workload gave different results.
    #[error("{0}")]
    Disagreement(String),
}

impl CliError {
    /// An I/O failure on `path`.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        CliError::Io { path: path.to_path_buf(), source }
    }

    /// A file whose contents are wrong.
    pub(crate) fn bad_file(path: &Path, message: impl Into<String>) -> Self {
        CliError::BadFile { path: path.to_path_buf(), message: message.into() }
    }
}
