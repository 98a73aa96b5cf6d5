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

/// An element type faer can factor: holdfast's [`Element`] with faer's scalar traits.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::linalg::LinalgElement;
///
/// fn squared_modulus<T: LinalgElement>(x: T) -> f64 {
///     x.abs2()
/// }
/// assert_eq!(squared_modulus(-3.0f32), 9.0);
/// ```
pub trait LinalgElement: Element + faer::traits::ComplexField {
    /// faer's real part type as holdfast's real type (the same type for real elements).
    fn from_faer_real(r: <Self as faer::traits::ComplexField>::Real) -> <Self as Element>::Real;

    /// The complex conjugate (the value itself for real elements).
    #[must_use]
    fn conj(self) -> Self;

    /// The squared modulus, in `f64`.
    fn abs2(self) -> f64;
}

impl LinalgElement for f32 {
    fn from_faer_real(r: f32) -> f32 {
        r
    }

    fn conj(self) -> Self {
        self
    }

    fn abs2(self) -> f64 {
        let x = f64::from(self);
        x * x
    }
}

impl LinalgElement for f64 {
    fn from_faer_real(r: f64) -> f64 {
        r
    }

    fn conj(self) -> Self {
        self
    }

    fn abs2(self) -> f64 {
        self * self
    }
}
