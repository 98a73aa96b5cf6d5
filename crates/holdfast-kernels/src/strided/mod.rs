//! The strided loop engine shared by the elementwise, permute and reduce kernels and by einsum's
//! no-contraction steps (private).
//!
//! A [`Nest`] is a loop nest over one written operand (`out`) and two read operands (`a`, `b`),
//! each with its own strides in elements (0 for a broadcast axis, and for `out`, 0 along a
//! reduced axis). Building a nest drops unit axes, orders the axes by decreasing stride of a
//! chosen operand and merges axes that are contiguous in all three operands, so the innermost
//! loop is as long as the data allows. The innermost loop has fast paths for unit and zero
//! strides (which the compiler vectorises); other strides use indexed access.
//!
//! # Invariant
//!
//! Callers build a nest from layouts that fit their slices (the tensor layer checks this when a
//! view is made, and kernels size their outputs from the same shape), so every position the nest
//! visits is in bounds. Indexing is still checked: a broken invariant panics instead of reading
//! out of bounds.

mod copy;
#[cfg(test)]
mod tests;
mod tile;

use holdfast_tensor::Element;
use rayon::prelude::*;
use smallvec::SmallVec;

pub(crate) use copy::{copy_nest_of, copy_prepared, copy_strided, row_major};

/// Axis lists of a loop nest (inline up to 8 axes after merging).
pub(crate) type Axes = SmallVec<[usize; 8]>;

/// Whether each pair of axis lists (shapes or strides) is equal, every list of one rank: one
/// branch-free pass over the handful of axes for all pairs together, where slice equality
/// calls `bcmp` once a pair, which costs more than the comparison itself. The elementwise
/// kernels' shape check (one pair), the einsum key's match and the einsum executor's operand
/// check (shape and strides) use it.
#[inline]
pub(crate) fn same_dims<const N: usize>(pairs: [(&[usize], &[usize]); N]) -> bool {
    let Some(r) = pairs.first().map(|(x, _)| x.len()) else { return true };
    if pairs.iter().any(|(x, y)| x.len() != r || y.len() != r) {
        return false;
    }
    // Cut to `r` so the compiler knows every index below is in bounds.
    let pairs = pairs.map(|(x, y)| (&x[..r], &y[..r]));
    let mut diff = 0;
    for i in 0..r {
        for (x, y) in &pairs {
            diff |= x[i] ^ y[i];
        }
    }
    diff == 0
}

/// Which operand's strides decide the loop order (outermost = largest stride).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Write `out` in storage order (elementwise, permute).
    Out,
    /// Read `a` in storage order (reductions).
    A,
    /// Write `out` in storage order, except that the axes `a` does not have (stride 0 in `a`)
    /// run innermost: between two of their positions `a` is the same, so the part of `a` one
    /// position reads is still in cache when the next reads it (a GEMM's loops, `a` being the
    /// larger operand).
    OutReusingA,
    /// [`OutReusingA`](Order::OutReusingA) for `b`.
    OutReusingB,
}

/// A simplified loop nest over `out`, `a`, `b` (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Nest {
    pub(crate) shape: Axes,
    pub(crate) so: Axes,
    pub(crate) sa: Axes,
    pub(crate) sb: Axes,
}

impl Nest {
    /// Builds the nest for `shape` with the given strides (all of the same length).
    pub(crate) fn new(
        shape: &[usize],
        so: &[usize],
        sa: &[usize],
        sb: &[usize],
        order: Order,
    ) -> Nest {
        debug_assert!(
            so.len() == shape.len() && sa.len() == shape.len() && sb.len() == shape.len()
        );
        let mut idx: SmallVec<[usize; 16]> = (0..shape.len()).filter(|&i| shape[i] != 1).collect();
        if shape.contains(&0) {
            return Nest {
                shape: SmallVec::from_slice(&[0]),
                so: SmallVec::from_slice(&[0]),
                sa: SmallVec::from_slice(&[0]),
                sb: SmallVec::from_slice(&[0]),
            };
        }
        let key = |i: usize| match order {
            Order::Out => (so[i], sa[i], sb[i]),
            Order::A => (sa[i], so[i], sb[i]),
            Order::OutReusingA => (usize::from(sa[i] != 0), so[i], sb[i]),
            Order::OutReusingB => (usize::from(sb[i] != 0), so[i], sa[i]),
        };
        // Stable: equal keys keep their logical order.
        idx.sort_by_key(|&i| std::cmp::Reverse(key(i)));
        let mut nest =
            Nest { shape: Axes::new(), so: Axes::new(), sa: Axes::new(), sb: Axes::new() };
        for i in idx {
            if let Some(last) = nest.shape.len().checked_sub(1) {
                let d = shape[i];
                if nest.so[last] == so[i] * d
                    && nest.sa[last] == sa[i] * d
                    && nest.sb[last] == sb[i] * d
                {
                    nest.shape[last] *= d;
                    nest.so[last] = so[i];
                    nest.sa[last] = sa[i];
                    nest.sb[last] = sb[i];
                    continue;
                }
            }
            nest.shape.push(shape[i]);
            nest.so.push(so[i]);
            nest.sa.push(sa[i]);
            nest.sb.push(sb[i]);
        }
        nest
    }

    /// Number of iterations.
    pub(crate) fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Calls `f(po, pa, pb)` with the offsets of every position (from 0), serially.
    pub(crate) fn for_each_offset(&self, mut f: impl FnMut(usize, usize, usize)) {
        if self.shape.contains(&0) {
            return;
        }
        let r = self.shape.len();
        let mut index: SmallVec<[usize; 8]> = SmallVec::from_elem(0, r);
        let (mut po, mut pa, mut pb) = (0, 0, 0);
        loop {
            f(po, pa, pb);
            let mut axis = r;
            loop {
                if axis == 0 {
                    return;
                }
                axis -= 1;
                index[axis] += 1;
                po += self.so[axis];
                pa += self.sa[axis];
                pb += self.sb[axis];
                if index[axis] < self.shape[axis] {
                    break;
                }
                po -= self.so[axis] * self.shape[axis];
                pa -= self.sa[axis] * self.shape[axis];
                pb -= self.sb[axis] * self.shape[axis];
                index[axis] = 0;
            }
        }
    }

    /// Runs `f(out, a, b)` at every position, serially.
    #[allow(clippy::too_many_arguments, reason = "three operands with offsets, plus the op")]
    pub(crate) fn run<T: Element, F: Fn(&mut T, T, T)>(
        &self,
        out: &mut [T],
        oo: usize,
        a: &[T],
        ao: usize,
        b: &[T],
        bo: usize,
        f: &F,
    ) {
        run_from(&self.shape, &self.so, &self.sa, &self.sb, out, oo, a, ao, b, bo, f);
    }

    /// Runs `f` at every position, splitting the outermost axis over up to `threads` rayon tasks
    /// when each part writes a disjoint range of `out` (otherwise serially).
    #[allow(clippy::too_many_arguments, reason = "three operands with offsets, plus the op")]
    pub(crate) fn run_par<T: Element, F: Fn(&mut T, T, T) + Sync>(
        &self,
        out: &mut [T],
        oo: usize,
        a: &[T],
        ao: usize,
        b: &[T],
        bo: usize,
        f: &F,
        threads: usize,
    ) {
        let Some((&d0, rest)) = self.shape.split_first() else {
            return self.run(out, oo, a, ao, b, bo, f);
        };
        let so0 = self.so[0];
        let inner_span: usize =
            1 + rest.iter().zip(&self.so[1..]).map(|(&d, &s)| (d - 1) * s).sum::<usize>();
        if threads < 2 || d0 < 2 || so0 == 0 || inner_span > so0 {
            return self.run(out, oo, a, ao, b, bo, f);
        }
        let parts = (threads * 4).min(d0);
        let rows = d0.div_ceil(parts);
        let (sa0, sb0) = (self.sa[0], self.sb[0]);
        let out = &mut out[oo..];
        out.par_chunks_mut(rows * so0).enumerate().for_each(|(ci, chunk)| {
            let r0 = ci * rows;
            if r0 >= d0 {
                return;
            }
            let mut shape = self.shape.clone();
            shape[0] = rows.min(d0 - r0);
            run_from(
                &shape,
                &self.so,
                &self.sa,
                &self.sb,
                chunk,
                0,
                a,
                ao + r0 * sa0,
                b,
                bo + r0 * sb0,
                f,
            );
        });
    }
}

#[allow(clippy::too_many_arguments, reason = "three operands with offsets, plus the op")]
fn run_from<T: Element, F: Fn(&mut T, T, T)>(
    shape: &[usize],
    so: &[usize],
    sa: &[usize],
    sb: &[usize],
    out: &mut [T],
    oo: usize,
    a: &[T],
    ao: usize,
    b: &[T],
    bo: usize,
    f: &F,
) {
    let Some((&n, outer)) = shape.split_last() else {
        f(&mut out[oo], a[ao], b[bo]);
        return;
    };
    if n == 0 || outer.contains(&0) {
        return;
    }
    let r = outer.len();
    let (iso, isa, isb) = (so[r], sa[r], sb[r]);
    let mut index: SmallVec<[usize; 8]> = SmallVec::from_elem(0, r);
    let (mut po, mut pa, mut pb) = (oo, ao, bo);
    loop {
        inner(n, out, po, iso, a, pa, isa, b, pb, isb, f);
        // Odometer step over the outer axes.
        let mut axis = r;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            po += so[axis];
            pa += sa[axis];
            pb += sb[axis];
            if index[axis] < outer[axis] {
                break;
            }
            po -= so[axis] * outer[axis];
            pa -= sa[axis] * outer[axis];
            pb -= sb[axis] * outer[axis];
            index[axis] = 0;
        }
    }
}

/// The innermost loop: `n` steps with strides `so`, `sa`, `sb`.
#[allow(clippy::too_many_arguments, reason = "three operands with offsets and strides")]
#[inline]
fn inner<T: Element, F: Fn(&mut T, T, T)>(
    n: usize,
    out: &mut [T],
    po: usize,
    so: usize,
    a: &[T],
    pa: usize,
    sa: usize,
    b: &[T],
    pb: usize,
    sb: usize,
    f: &F,
) {
    match (so, sa, sb) {
        (1, 1, 1) => {
            let (o, a, b) = (&mut out[po..po + n], &a[pa..pa + n], &b[pb..pb + n]);
            for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
                f(o, x, y);
            }
        }
        (1, 1, 0) => {
            let y = b[pb];
            for (o, &x) in out[po..po + n].iter_mut().zip(&a[pa..pa + n]) {
                f(o, x, y);
            }
        }
        (1, 0, 1) => {
            let x = a[pa];
            for (o, &y) in out[po..po + n].iter_mut().zip(&b[pb..pb + n]) {
                f(o, x, y);
            }
        }
        (0, 1, 0) => {
            // A reduction of a contiguous run into one output element.
            let y = b[pb];
            let o = &mut out[po];
            for &x in &a[pa..pa + n] {
                f(o, x, y);
            }
        }
        _ => {
            let (mut po, mut pa, mut pb) = (po, pa, pb);
            for _ in 0..n {
                f(&mut out[po], a[pa], b[pb]);
                po += so;
                pa += sa;
                pb += sb;
            }
        }
    }
}
