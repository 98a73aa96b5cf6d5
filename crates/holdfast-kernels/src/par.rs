//! [`Par`], the parallelism argument every kernel takes last, and [`FanOut`], the per-family
//! sizes from which a kernel splits its work (SPEC B5, P3).
//!
//! A kernel never installs a thread pool. With [`Par::Rayon`] it may split its work with rayon
//! (`par_chunks_mut`, `join`, faer's own rayon parallelism), which runs on whatever pool the
//! caller has installed. `Par::Rayon` carries the [`FanOut`] sizes its caller decided with: below
//! its family's size a kernel (or one step of an einsum) runs serially even when given
//! `Par::Rayon`, so the decision is the same at both layers. The values are the provider's
//! (`holdfast_provider::FAN_OUT`, which installs the engine's pool on the same sizes); this crate
//! defines only their shape.

use std::num::NonZeroUsize;

/// The size, per kernel family, from which work fans out: an operation of at least that size
/// (in the family's unit, see [`Family`]) may be split over threads.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{Family, FanOut};
///
/// let sizes = FanOut { gemm: 1 << 22, ..FanOut::ALWAYS };
/// assert!(!sizes.fans_out(Family::Gemm, 2 * 4 * 4 * 4));
/// assert!(sizes.fans_out(Family::Gemm, 2 * 512 * 512 * 512));
/// assert!(sizes.fans_out(Family::Elementwise, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FanOut {
    /// add, sub, mul, div, scale, conj: output elements.
    pub elementwise: u64,
    /// sum over axes: input elements.
    pub reduce: u64,
    /// materialising permute (and einsum's operand copies): elements.
    pub permute: u64,
    /// matrix product: `2·batch·m·n·k` floating-point operations.
    pub gemm: u64,
    /// einsum: the path's total floating-point operations.
    pub contraction: u64,
}

impl FanOut {
    /// Every operation fans out, whatever its size: for tests of the parallel paths on small
    /// inputs.
    pub const ALWAYS: FanOut =
        FanOut { elementwise: 0, reduce: 0, permute: 0, gemm: 0, contraction: 0 };

    /// The size from which `family` fans out.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::{Family, FanOut};
    /// assert_eq!(FanOut::ALWAYS.min_size(Family::Reduce), 0);
    /// ```
    pub const fn min_size(&self, family: Family) -> u64 {
        match family {
            Family::Elementwise => self.elementwise,
            Family::Reduce => self.reduce,
            Family::Permute => self.permute,
            Family::Gemm => self.gemm,
            Family::Contraction => self.contraction,
        }
    }

    /// True when an operation of `family` and `size` is big enough to fan out.
    ///
    /// # Examples
    ///
    /// See [`FanOut`].
    pub const fn fans_out(&self, family: Family, size: u64) -> bool {
        size >= self.min_size(family)
    }
}

/// How a kernel may use threads. Always the last argument of a kernel.
///
/// # Examples
///
/// ```
/// use std::num::NonZeroUsize;
/// use holdfast_kernels::{Family, FanOut, Par};
///
/// static SIZES: FanOut = FanOut { elementwise: 1 << 15, ..FanOut::ALWAYS };
/// let two = Par::Rayon(NonZeroUsize::new(2).unwrap(), &SIZES);
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
    /// installed (kernels never install one), for operations of at least the given sizes.
    Rayon(NonZeroUsize, &'static FanOut),
}

impl Par {
    /// The number of threads the kernel may use (1 for [`Par::Seq`]).
    pub const fn threads(self) -> usize {
        match self {
            Par::Seq => 1,
            Par::Rayon(n, _) => n.get(),
        }
    }

    /// `self` when an operation of `size` (the family's unit) is at or above the family's
    /// fan-out size and more than one thread is offered, else [`Par::Seq`].
    #[must_use]
    pub fn for_size(self, family: Family, size: u64) -> Par {
        match self {
            Par::Rayon(n, sizes) if n.get() > 1 && sizes.fans_out(family, size) => self,
            _ => Par::Seq,
        }
    }

    /// faer's equivalent of this setting.
    pub(crate) fn to_faer(self) -> faer::Par {
        match self {
            Par::Seq => faer::Par::Seq,
            Par::Rayon(n, _) => faer::Par::Rayon(n),
        }
    }
}

/// A kernel family, each with its own fan-out size ([`FanOut`]).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{Family, FanOut};
///
/// assert_eq!(FanOut::ALWAYS.min_size(Family::Contraction), 0);
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
