//! Sum over a set of axes.

use holdfast_tensor::{Dims, Element, Tensor, TensorRead};
use rayon::prelude::*;
use smallvec::SmallVec;

use crate::strided::{Axes, Nest, Order};
use crate::{Family, KernelAlloc, KernelError, Par};

/// The sum of `a` over `axes`; the result has `a`'s other axes, in order (rank 0 when every axis
/// is reduced). An empty `axes` copies `a` into a dense tensor.
///
/// # Errors
///
/// [`KernelError::AxisOutOfRange`] when an axis is not smaller than the rank;
/// [`KernelError::DuplicateAxis`] when an axis is named twice.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, reduce};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let rows = reduce::sum(a.read(), &[1], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!((rows.shape(), rows.as_slice()), (&[2][..], &[6.0, 15.0][..]));
/// let all = reduce::sum(a.read(), &[0, 1], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(all.as_slice(), &[21.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(
    clippy::needless_pass_by_value,
    reason = "views are passed by value, as in the operation API (SPEC §6)"
)]
pub fn sum<T: Element, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    axes: &[usize],
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    let rank = a.rank();
    let mut reduced: SmallVec<[bool; 8]> = SmallVec::from_elem(false, rank);
    for &axis in axes {
        match reduced.get_mut(axis) {
            None => return Err(KernelError::AxisOutOfRange { axis, rank }),
            Some(true) => return Err(KernelError::DuplicateAxis { axis }),
            Some(r) => *r = true,
        }
    }
    let out_shape: Dims = (0..rank).filter(|&i| !reduced[i]).map(|i| a.shape()[i]).collect();
    // Output strides per input axis: row-major over the kept axes, 0 along reduced ones.
    let mut so: Axes = SmallVec::from_elem(0, rank);
    let mut acc = 1;
    for i in (0..rank).rev() {
        if !reduced[i] {
            so[i] = acc;
            acc *= a.shape()[i];
        }
    }
    let out_len = acc;
    let mut buf = alloc.take_zeroed::<T>(out_len);
    sum_into(&a, &so, &mut buf, alloc, par);
    Ok(Tensor::from_shape_vec(&out_shape, buf)?)
}

/// Adds every element of `a` into `out` at the position given by the output strides `so` (one per
/// axis of `a`, 0 along summed axes). `out` must be zeroed (or hold values to add to).
pub(crate) fn sum_into<T: Element, A: KernelAlloc + ?Sized>(
    a: &TensorRead<'_, T>,
    so: &[usize],
    out: &mut [T],
    alloc: &mut A,
    par: Par,
) {
    let zeros: Axes = SmallVec::from_elem(0, a.rank());
    let nest = Nest::new(a.shape(), so, a.strides(), &zeros, Order::A);
    run_sum(&nest, a.storage(), a.offset(), out, alloc, par);
}

/// Runs a prepared reduction nest (`out` strides 0 along summed axes) from `data` at `off`
/// into `out` (zeroed, or holding values to add to).
pub(crate) fn run_sum<T: Element, A: KernelAlloc + ?Sized>(
    nest: &Nest,
    data: &[T],
    off: usize,
    out: &mut [T],
    alloc: &mut A,
    par: Par,
) {
    let op = |o: &mut T, x: T, _y: T| *o += x;
    let numel = nest.numel();
    let threads = par.for_size(Family::Reduce, numel as u64).threads();
    let d0 = nest.shape.first().copied().unwrap_or(1);
    if threads < 2 || d0 < 2 {
        return nest.run(out, 0, data, off, data, off, &op);
    }
    if nest.so[0] != 0 {
        // Each outer index writes its own block of `out`; `run_par` checks disjointness.
        return nest.run_par(out, 0, data, off, data, off, &op, threads);
    }
    // The outermost loop is over a summed axis: per-task partial sums, added at the end. Only
    // worth it when the output is small next to the input.
    if out.len().saturating_mul(threads * 4) > numel {
        return nest.run(out, 0, data, off, data, off, &op);
    }
    let parts = threads.min(d0);
    let rows = d0.div_ceil(parts);
    let mut partials: Vec<Vec<T>> = (1..parts).map(|_| alloc.take_zeroed::<T>(out.len())).collect();
    let sa0 = nest.sa[0];
    let mut slots: Vec<&mut [T]> = Vec::with_capacity(parts);
    slots.push(&mut *out);
    slots.extend(partials.iter_mut().map(Vec::as_mut_slice));
    slots.into_par_iter().enumerate().for_each(|(ci, slot)| {
        let r0 = ci * rows;
        if r0 < d0 {
            let mut sub = nest.clone();
            sub.shape[0] = rows.min(d0 - r0);
            sub.run(slot, 0, data, off + r0 * sa0, data, off, &op);
        }
    });
    for p in partials {
        for (o, &x) in out.iter_mut().zip(&p) {
            *o += x;
        }
        alloc.give(p);
    }
}
