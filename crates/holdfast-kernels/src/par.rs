//! [`Par`], the parallelism argument every kernel takes last, and the per-family fan-out
//! thresholds (SPEC B5, P3).
//!
//! A kernel never installs a thread pool. With [`Par::Rayon`] it may split its work with rayon
//! (`par_chunks_mut`, `join`, faer's own rayon parallelism), which runs on whatever pool the
//! caller has installed (the provider layer installs the engine's pool around the call, and only
//! when [`Family::should_fan_out`] says the operation is big enough). Below its family's
//! threshold a kernel runs serially even when given `Par::Rayon`, so the decision is the same at
//! both layers.

use std::num::NonZeroUsize;

/// Elementwise kernels (add, sub, mul, div, scale) fan out from this many output elements.
pub const ELEMENTWISE_PAR_MIN_ELEMENTS: usize = 1 << 15;
/// `reduce::sum` fans out from this many input elements.
pub const REDUCE_PAR_MIN_ELEMENTS: usize = 1 << 15;
/// `permute::permute` (and einsum's operand copies) fan out from this many elements.
pub const PERMUTE_PAR_MIN_ELEMENTS: usize = 1 << 15;
/// `matmul` fans out from this many floating-point operations (`2·batch·m·n·k`), about a
/// 128×128×128 product.
pub const GEMM_PAR_MIN_FLOPS: u64 = 1 << 22;
/// `einsum` fans out (step by step, each step by its own family's threshold) when the whole
/// contraction costs at least this many floating-point operations.
pub const CONTRACTION_PAR_MIN_FLOPS: u64 = 1 << 22;

/// How a kernel may use threads. Always the last argument of a kernel.
///
/// # Examples
///
/// ```
/// use std::num::NonZeroUsize;
/// use holdfast_kernels::{Family, Par};
///
/// let two = Par::Rayon(NonZeroUsize::new(2).unwrap());
/// assert_eq!(two.threads(), 2);
/// // A 4-element add runs inline even when threads are offered.
/// assert_eq!(two.for_size(Family::Elementwise, 4), Par::Seq);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Par {
    /// Run on the calling thread only.
    #[default]
    Seq,
    /// Split the work into at most this many parts with rayon, on the pool the caller has
    /// installed (kernels never install one).
    Rayon(NonZeroUsize),
}

impl Par {
    /// The number of threads the kernel may use (1 for [`Par::Seq`]).
    pub const fn threads(self) -> usize {
        match self {
            Par::Seq => 1,
            Par::Rayon(n) => n.get(),
        }
    }

    /// `self` when an operation of `size` (the family's unit) is at or above the family's
    /// threshold and more than one thread is offered, else [`Par::Seq`].
    #[must_use]
    pub fn for_size(self, family: Family, size: u64) -> Par {
        match self {
            Par::Rayon(n) if n.get() > 1 && family.should_fan_out(size) => self,
            _ => Par::Seq,
        }
    }

    /// faer's equivalent of this setting.
    pub(crate) fn to_faer(self) -> faer::Par {
        match self {
            Par::Seq => faer::Par::Seq,
            Par::Rayon(n) => faer::Par::Rayon(n),
        }
    }
}

/// A kernel family, each with its own fan-out threshold.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::Family;
///
/// assert!(!Family::Gemm.should_fan_out(2 * 4 * 4 * 4));
/// assert!(Family::Gemm.should_fan_out(2 * 512 * 512 * 512));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// add, sub, mul, div, scale: size is the output element count.
    Elementwise,
    /// sum over axes: size is the input element count.
    Reduce,
    /// materialising permute: size is the element count.
    Permute,
    /// matrix product: size is `2·batch·m·n·k` floating-point operations.
    Gemm,
    /// einsum: size is the path's total floating-point operations.
    Contraction,
}

impl Family {
    /// The family's threshold, in its size unit.
    pub const fn threshold(self) -> u64 {
        match self {
            Family::Elementwise => ELEMENTWISE_PAR_MIN_ELEMENTS as u64,
            Family::Reduce => REDUCE_PAR_MIN_ELEMENTS as u64,
            Family::Permute => PERMUTE_PAR_MIN_ELEMENTS as u64,
            Family::Gemm => GEMM_PAR_MIN_FLOPS,
            Family::Contraction => CONTRACTION_PAR_MIN_FLOPS,
        }
    }

    /// True when an operation of `size` is big enough to be worth a pool install.
    pub const fn should_fan_out(self, size: u64) -> bool {
        size >= self.threshold()
    }
}
