//! einsum (SPEC K5) with numpy semantics: explicit and implicit output, repeated labels
//! (diagonals, traces), outer products, batch labels; labels are ASCII letters (numpy's), digits
//! and any non-ASCII character (the symbols opt_einsum and the einsum-benchmark instances use
//! past the 52 letters); ASCII punctuation and control characters are malformed.
//!
//! - [`einsum`] chooses a greedy path; [`einsum_with_path`] follows an opt_einsum-format path
//!   (each pair indexes the current operand list; the result is appended); [`pairs_of_steps`]
//!   turns opt_einsum's general paths (steps of one or more operands) into such pairs.
//! - Each pairwise step lowers to (batched) GEMM on strided views, copying an operand only when
//!   its labels cannot be grouped into matrix axes in place; a step with nothing to contract is
//!   an elementwise product; a chain of elementwise products over large results is written once,
//!   every operand of the chain multiplied in one pass. Labels that only one operand has and
//!   nobody needs are summed first.
//!   A large copy that leads with loop labels is made a block of items at a time into one reused
//!   buffer, each block multiplied as soon as it is copied, so the operand never lives twice.
//!   Each intermediate is laid out the way the step that consumes it reads it, and the last step
//!   writes the output's layout directly when that is cheaper than a final permute.
//! - [`EinsumPlan`] is the analysis, prepared once per (spec, dtype, shapes, strides, path) and
//!   executed any number of times; [`einsum_cached`] looks plans up in a caller-supplied
//!   [`PlanStore`] under a content [`PlanKey`].
//! - Buffers come from the caller's [`KernelAlloc`]; each intermediate is given back as soon as
//!   the step that consumes it is done.
//! - With [`Par::Rayon`] and a contraction of at least
//!   [`FanOut::contraction`](crate::FanOut) flops, each step may fan out by its own family's
//!   size.

mod blocks;
mod broadcast;
mod chain;
mod execute;
mod fused;
mod key;
mod layout;
mod lookahead;
mod matched;
mod outer;
mod parse;
mod path;
mod plan;
mod planner;
mod step;
mod steps;
mod store;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

use holdfast_tensor::{Element, Tensor, TensorRead};

pub use key::PlanKey;
pub use matched::Matched;
pub use parse::{EinsumSpec, Term, parse};
pub use plan::EinsumPlan;
pub use steps::pairs_of_steps;
pub use store::{FingerprintHasher, HashMapPlanCache, NoPlanCache, PlanCacheStats, PlanStore};

use crate::{KernelAlloc, KernelError, Par};

/// Evaluates the einsum `spec` on `operands`, contracting pairwise along a greedy path.
///
/// # Errors
///
/// [`KernelError::MalformedSpec`], [`KernelError::UnknownOutputLabel`],
/// [`KernelError::RepeatedOutputLabel`], [`KernelError::OperandCount`],
/// [`KernelError::LabelRankMismatch`] or [`KernelError::LabelDimensionMismatch`].
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::einsum};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let trace = einsum("ii", &[a.read()], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(trace.as_slice(), &[5.0]);
/// let prod = einsum("ij,jk", &[a.read(), a.read()], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(prod.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
/// let u = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let outer = einsum("ë,Ñ->Ñë", &[u.read(), u.read()], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(outer.as_slice(), &[1.0, 2.0, 2.0, 4.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn einsum<T: Element, A: KernelAlloc + ?Sized>(
    spec: &str,
    operands: &[TensorRead<'_, T>],
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    EinsumPlan::prepare(spec, operands, None)?.execute(operands, alloc, par)
}

/// Evaluates the einsum `spec` on `operands` along `path`, in opt_einsum format: each pair
/// names two positions in the current operand list; they are removed and their contraction is
/// appended.
///
/// # Errors
///
/// As [`einsum`], plus [`KernelError::PathIndexOutOfRange`], [`KernelError::PathRepeatedIndex`]
/// and [`KernelError::IncompletePath`].
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::einsum_with_path};
/// use holdfast_tensor::Tensor;
///
/// let v = Tensor::<f64>::from_vec([2], vec![1.0, 2.0])?;
/// let m = Tensor::<f64>::from_vec([2, 2], vec![1.0, 0.0, 0.0, 1.0])?;
/// // vᵀ·M·v: contract M with the second v first, then the result with the first v.
/// let r = einsum_with_path("i,ij,j->", &[v.read(), m.read(), v.read()], &[(1, 2), (0, 1)], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(r.as_slice(), &[5.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn einsum_with_path<T: Element, A: KernelAlloc + ?Sized>(
    spec: &str,
    operands: &[TensorRead<'_, T>],
    path: &[(usize, usize)],
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    EinsumPlan::prepare(spec, operands, Some(path))?.execute(operands, alloc, par)
}

/// [`einsum`] (`path == None`) or [`einsum_with_path`] with the plan looked up in `store` under
/// its content key, and prepared and stored on a miss.
///
/// # Errors
///
/// As [`einsum_with_path`].
///
/// # Examples
///
/// See [`HashMapPlanCache`].
pub fn einsum_cached<T: Element, S: PlanStore, A: KernelAlloc + ?Sized>(
    spec: &str,
    operands: &[TensorRead<'_, T>],
    path: Option<&[(usize, usize)]>,
    store: &mut S,
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    store.lookup(spec, operands, path)?.execute(operands, alloc, par)
}
