//! Elementwise kernels (SPEC K1): [`add`], [`sub`], [`mul`], [`div`] (and any binary function,
//! [`zip_with`]) on equal shapes or under numpy broadcasting, [`scale`] by a scalar and the
//! complex conjugate [`conj`].
//!
//! Inputs may be any strided view (transposed, sliced, broadcast); they are read in place, never
//! copied first. The output is a new dense row-major tensor whose buffer comes from the caller's
//! [`KernelAlloc`](crate::KernelAlloc). With [`Par::Rayon`](crate::Par) the output is split into
//! row blocks over rayon once it has at least
//! [`FanOut::elementwise`](crate::FanOut) elements.

mod binary;
#[cfg(test)]
mod tests;
mod unary;

pub use binary::{add, broadcast_shapes, div, mul, sub, zip_with};
pub use unary::{conj, scale};
