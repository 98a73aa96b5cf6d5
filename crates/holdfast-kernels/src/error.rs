//! [`KernelError`]: every way a kernel call can be refused.
//!
//! Kernels validate their inputs once, up front, and report a typed error naming the bad shape,
//! axis, label or path index; after validation they do not fail. Errors allocate only when they
//! are built.

use holdfast_tensor::{DType, TensorError};

/// A kernel input that does not describe a valid operation.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, KernelError, Par, elementwise};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::zeros([2, 3]);
/// let b = Tensor::<f64>::zeros([4]);
/// let err = elementwise::add(a.read(), b.read(), &mut HeapAlloc, Par::Seq).unwrap_err();
/// assert!(matches!(err, KernelError::BroadcastMismatch { .. }));
/// assert_eq!(err.to_string(), "shapes [2, 3] and [4] cannot be broadcast together");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// A shape, stride or view error from the tensor layer.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// Two shapes cannot be broadcast together under numpy's rules.
    #[error("shapes {a:?} and {b:?} cannot be broadcast together")]
    BroadcastMismatch {
        /// Shape of the first operand.
        a: Vec<usize>,
        /// Shape of the second operand.
        b: Vec<usize>,
    },
    /// An axis number is not smaller than the rank.
    #[error("axis {axis} is out of range for rank {rank}")]
    AxisOutOfRange {
        /// The axis asked for.
        axis: usize,
        /// The operand's rank.
        rank: usize,
    },
    /// An axis is named twice in a reduction.
    #[error("axis {axis} is named more than once")]
    DuplicateAxis {
        /// The repeated axis.
        axis: usize,
    },
    /// A permutation does not name every axis exactly once.
    #[error("{perm:?} is not a permutation of the {rank} axes")]
    InvalidPermutation {
        /// The permutation asked for.
        perm: Vec<usize>,
        /// The operand's rank.
        rank: usize,
    },
    /// Matrix product operands of the wrong rank or with disagreeing dimensions.
    #[error("cannot multiply shapes {a:?} and {b:?}: {reason}")]
    MatmulShape {
        /// Shape of the left operand.
        a: Vec<usize>,
        /// Shape of the right operand.
        b: Vec<usize>,
        /// What is wrong.
        reason: &'static str,
    },
    /// A caller-supplied output has the wrong shape.
    #[error("output has shape {actual:?} but the result has shape {expected:?}")]
    OutputShape {
        /// The shape the result has.
        expected: Vec<usize>,
        /// The shape of the output given.
        actual: Vec<usize>,
    },
    /// A caller-supplied output is not dense row-major.
    #[error("output with shape {shape:?} and strides {strides:?} is not contiguous row-major")]
    OutputNotContiguous {
        /// The output's shape.
        shape: Vec<usize>,
        /// The output's strides.
        strides: Vec<usize>,
    },
    /// An einsum specification that cannot be parsed.
    #[error("malformed einsum spec {spec:?} at character {position}: {reason}")]
    MalformedSpec {
        /// The specification.
        spec: String,
        /// Character (not byte) position of the problem.
        position: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// The output of an einsum names a label no input has.
    #[error("output label {label:?} does not appear in any input")]
    UnknownOutputLabel {
        /// The label.
        label: char,
    },
    /// The output of an einsum names a label twice.
    #[error("output label {label:?} appears more than once")]
    RepeatedOutputLabel {
        /// The label.
        label: char,
    },
    /// The number of operands differs from the number of input terms.
    #[error("the spec has {expected} input terms but {actual} operands were given")]
    OperandCount {
        /// Input terms in the spec.
        expected: usize,
        /// Operands given.
        actual: usize,
    },
    /// An operand's rank differs from the number of labels of its term.
    #[error("operand {operand} has rank {rank} but its term {term:?} has {labels} labels")]
    LabelRankMismatch {
        /// Operand position.
        operand: usize,
        /// The term's labels.
        term: String,
        /// Number of labels.
        labels: usize,
        /// The operand's rank.
        rank: usize,
    },
    /// One label is bound to two different dimensions.
    #[error(
        "label {label:?} has dimension {first} but operand {operand} gives it dimension {second}"
    )]
    LabelDimensionMismatch {
        /// The label.
        label: char,
        /// The dimension seen first.
        first: usize,
        /// The conflicting dimension.
        second: usize,
        /// The operand where the conflict was found.
        operand: usize,
    },
    /// A contraction path names a position past the current operand list.
    #[error("path step {step} names operand {index} but only {len} operands are left")]
    PathIndexOutOfRange {
        /// Step number (0-based).
        step: usize,
        /// The index given.
        index: usize,
        /// The current operand count.
        len: usize,
    },
    /// A contraction path step names the same operand twice.
    #[error("path step {step} names operand {index} twice")]
    PathRepeatedIndex {
        /// Step number (0-based).
        step: usize,
        /// The repeated index.
        index: usize,
    },
    /// A step of a general contraction path names no operand.
    #[error("path step {step} names no operand")]
    EmptyPathStep {
        /// Step number (0-based).
        step: usize,
    },
    /// A contraction path ends with more than one operand left.
    #[error("the contraction path leaves {remaining} operands; it must reduce them to one")]
    IncompletePath {
        /// Operands left after the path.
        remaining: usize,
    },
    /// A prepared plan was executed on operands it was not prepared for.
    #[error("the plan was prepared for other operands: {reason}")]
    PlanMismatch {
        /// What differs.
        reason: &'static str,
    },
    /// The element type has no kernel for this operation.
    #[error("no kernel for element type {dtype}")]
    UnsupportedDType {
        /// The element type.
        dtype: DType,
    },
    /// A result would hold more elements than fit in `usize`.
    #[error("the result of shape {shape:?} holds more elements than fit in usize")]
    SizeOverflow {
        /// The result's shape.
        shape: Vec<usize>,
    },
    /// A factorization that needs a square matrix was given another shape.
    #[error("{routine} needs a square matrix, got shape {shape:?}")]
    NotSquare {
        /// The factorization (`eigh`, `solve`).
        routine: &'static str,
        /// The shape given.
        shape: Vec<usize>,
    },
    /// The right-hand side of a solve does not match its matrix.
    #[error(
        "solve of a matrix of shape {a:?} needs a right-hand side of shape [n] or [n, k], got {b:?}"
    )]
    SolveShape {
        /// The matrix's shape.
        a: Vec<usize>,
        /// The right-hand side's shape.
        b: Vec<usize>,
    },
    /// The matrix of a solve is singular: its LU factorization has a zero pivot.
    #[error("{routine}: the matrix is singular (a zero pivot in its LU factorization)")]
    Singular {
        /// The routine (`solve`).
        routine: &'static str,
    },
    /// An iterative factorization did not converge (faer's answer to NaN or infinite input too).
    #[error("{routine} did not converge (is the input finite?)")]
    NoConvergence {
        /// The factorization (`svd`, `eigh`).
        routine: &'static str,
    },
    /// The bounds of a truncated SVD cannot be used.
    #[error("invalid truncation: {reason}")]
    InvalidTruncation {
        /// What is wrong.
        reason: &'static str,
    },
}
