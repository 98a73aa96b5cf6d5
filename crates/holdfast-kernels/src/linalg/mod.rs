//! Factorizations of tensors on a bipartition of their axes (SPEC T3, T4), through faer: thin
//! [`svd`] with [`Truncation`], thin [`qr`], Hermitian [`eigh`], [`solve`] and the Frobenius
//! [`norm`].
//!
//! # The bipartition
//!
//! A factorization of a tensor reads it as a matrix whose rows are the tensor's `left_axes` (in
//! the order given) and whose columns are its other axes (in their order), both flattened
//! row-major: the matrix tensor-network codes factor when they split a tensor. Outputs keep the
//! tensor's dimensions: `u` is `[left dims.., k]` and `vh` is `[k, right dims..]`, so contracting
//! `u`, `s` and `vh` over `k` gives the tensor back with its axes permuted left-first.
//!
//! # Memory
//!
//! Outputs and the dense copy of an operand that is not already a row-major matrix come from the
//! caller's [`KernelAlloc`](crate::KernelAlloc) (the engine's buffer pool in a session). faer's own workspace comes
//! from a [`LinalgScratch`], which the engine keeps with its other resources and which grows to
//! the largest request and is then reused: a warm factorization allocates nothing on the calling
//! thread. faer runs sequentially below the GEMM family's fan-out threshold.
//!
//! # Element types
//!
//! [`LinalgElement`] is the bridge between holdfast's [`Element`] and faer's scalar traits; it is
//! implemented for every element type faer factors.

mod eigh;
mod matrix;
mod norm;
mod qr;
mod scratch;
mod solve;
mod svd;
#[cfg(test)]
mod tests;
mod truncation;

pub use eigh::eigh;
pub use norm::norm;
pub use qr::qr;
pub use scratch::LinalgScratch;
pub use solve::solve;
pub use svd::{Svd, svd};
pub use truncation::Truncation;

use holdfast_tensor::Element;

/// The approximate flop count of a dense factorization of an `m × n` matrix, `4·m·n·min(m, n)`
/// (saturating at `u64::MAX`): the size by which a session routes an SVD, QR or solve, serially
/// below the GEMM family's fan-out threshold (an eigendecomposition: [`eigh_flops`]).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::factor_flops;
///
/// assert_eq!(factor_flops(32, 32), 4 * 32 * 32 * 32);
/// assert_eq!(factor_flops(2, 100), 4 * 2 * 100 * 2);
/// assert_eq!(factor_flops(usize::MAX, 2), u64::MAX);
/// ```
pub fn factor_flops(m: usize, n: usize) -> u64 {
    4u64.saturating_mul(m as u64).saturating_mul(n as u64).saturating_mul(m.min(n) as u64)
}

/// The approximate flop count of the Hermitian eigendecomposition of an `n × n` matrix, twice
/// [`factor_flops`]`(n, n)` (tridiagonalisation, then the eigenvectors back through it).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::{eigh_flops, factor_flops};
///
/// assert_eq!(eigh_flops(32), 2 * factor_flops(32, 32));
/// assert_eq!(eigh_flops(usize::MAX), u64::MAX);
/// ```
pub fn eigh_flops(n: usize) -> u64 {
    factor_flops(n, n).saturating_mul(2)
}

/// An element type faer can factor: holdfast's [`Element`] with faer's scalar traits.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::LinalgElement;
///
/// fn largest_singular_value<T: LinalgElement>(x: T) -> f64 {
///     holdfast_tensor::Element::modulus(x)
/// }
/// assert_eq!(largest_singular_value(-3.0f32), 3.0);
/// ```
pub trait LinalgElement: Element + faer::traits::ComplexField {
    /// faer's real part type as holdfast's real type (the same type, by another path).
    fn from_faer_real(r: <Self as faer::traits::ComplexField>::Real) -> <Self as Element>::Real;
}

impl LinalgElement for f32 {
    fn from_faer_real(r: f32) -> f32 {
        r
    }
}

impl LinalgElement for f64 {
    fn from_faer_real(r: f64) -> f64 {
        r
    }
}

impl LinalgElement for holdfast_tensor::c32 {
    fn from_faer_real(r: f32) -> f32 {
        r
    }
}

impl LinalgElement for holdfast_tensor::c64 {
    fn from_faer_real(r: f64) -> f64 {
        r
    }
}
