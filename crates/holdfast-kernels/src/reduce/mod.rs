//! Reductions (SPEC K2): [`sum`] over a set of axes; the reduced axes are dropped, as in numpy.
//!
//! The input is read in its own storage order (whatever its strides), accumulating into a zeroed
//! output. With [`Par::Rayon`](crate::Par) and at least
//! [`FanOut::reduce`](crate::FanOut) input elements the work is split
//! over rayon: by disjoint output blocks when the outermost loop is over a kept axis, otherwise
//! into per-task partial sums (scratch from the caller's allocator) that are added at the end.

mod sum;
#[cfg(test)]
mod tests;

pub(crate) use sum::run_sum;
pub use sum::sum;
