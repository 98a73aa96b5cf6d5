//! The GEMM engine (private): strided matrix views handed to faer without copying, a plain loop
//! for tiny products, and the batched driver.
//!
//! # Unsafe
//!
//! [`faer_gemm`] is the only function here with `unsafe`: it builds faer views with
//! `MatRef::from_raw_parts` / `MatMut::from_raw_parts_mut`, because faer's safe constructors
//! cannot express arbitrary (or zero) strides. Each block is preceded by a bounds check of every
//! addressed position against the slice, and the element type is proven to be the faer scalar by
//! `TypeId`.

use std::any::TypeId;

use holdfast_tensor::Element;
use rayon::prelude::*;

use crate::{Family, Par};

/// Largest `m·n·k` computed by the plain loop instead of faer (faer's fixed cost dominates
/// below it).
pub(crate) const SMALL_GEMM_MAX_MACS: usize = 8;

/// One matrix operand: its dimensions, strides and the position of its first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MatSpec {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) rs: usize,
    pub(crate) cs: usize,
}

impl MatSpec {
    /// One past the largest position addressed from offset 0 (0 when empty).
    fn extent(self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            0
        } else {
            (self.rows - 1) * self.rs + (self.cols - 1) * self.cs + 1
        }
    }

    /// The transposed operand.
    fn t(self) -> MatSpec {
        MatSpec { rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
}

/// A batch of GEMMs `C[i] = A[i]·B[i]`, item `i` at offsets `off + i·batch_stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BatchSpec {
    pub(crate) batch: usize,
    pub(crate) a: MatSpec,
    pub(crate) b: MatSpec,
    pub(crate) c: MatSpec,
    pub(crate) sa: usize,
    pub(crate) sb: usize,
    pub(crate) sc: usize,
}

impl BatchSpec {
    /// Multiply-adds of the whole batch.
    pub(crate) fn macs(&self) -> u64 {
        (self.batch as u64) * (self.a.rows as u64) * (self.b.cols as u64) * (self.a.cols as u64)
    }

    /// The same product computed as `Cᵀ = Bᵀ·Aᵀ`.
    fn transposed(self) -> BatchSpec {
        BatchSpec { a: self.b.t(), b: self.a.t(), c: self.c.t(), sa: self.sb, sb: self.sa, ..self }
    }
}

/// Runs the batch: `c`, `a`, `b` are whole slices, `co`, `ao`, `bo` the offsets of item 0.
///
/// # Panics
///
/// When an addressed position lies outside its slice (a broken caller invariant, never bad
/// user input: the public kernels validate shapes first).
#[allow(clippy::too_many_arguments, reason = "three operands with offsets")]
pub(crate) fn run_batch<T: Element>(
    spec: &BatchSpec,
    c: &mut [T],
    co: usize,
    a: &[T],
    ao: usize,
    b: &[T],
    bo: usize,
    par: Par,
) {
    let mut spec = *spec;
    let (mut a, mut ao, mut b, mut bo) = (a, ao, b, bo);
    // Prefer a unit column stride in C: the loop kernel and faer both like row-contiguous output.
    if spec.c.cs != 1 && spec.c.rs == 1 && spec.c.rows > 1 {
        spec = spec.transposed();
        std::mem::swap(&mut a, &mut b);
        std::mem::swap(&mut ao, &mut bo);
    }
    let (m, n, k) = (spec.a.rows, spec.b.cols, spec.a.cols);
    if spec.batch == 0 || m == 0 || n == 0 {
        return;
    }
    let small = m * n * k <= SMALL_GEMM_MAX_MACS;
    let par = par.for_size(Family::Gemm, 2 * spec.macs());
    let item = |c: &mut [T], co: usize, i: usize, par: Par| {
        let (ai, bi) = (ao + i * spec.sa, bo + i * spec.sb);
        if k == 0 {
            fill_zero(c, co, spec.c);
        } else if small {
            loop_gemm(c, co, spec.c, a, ai, spec.a, b, bi, spec.b);
        } else {
            faer_gemm(c, co, spec.c, a, ai, spec.a, b, bi, spec.b, par);
        }
    };
    let span = spec.c.extent();
    let threads = par.threads();
    if threads > 1 && spec.batch >= 2 && spec.sc >= span && spec.sc > 0 {
        // Items write disjoint blocks of C: one rayon task per group of items.
        let per = spec.batch.div_ceil(threads * 2).max(1);
        let per_item_par = if spec.batch >= threads { Par::Seq } else { par };
        let region = &mut c[co..];
        region.par_chunks_mut(per * spec.sc).enumerate().for_each(|(g, chunk)| {
            let first = g * per;
            for i in first..(first + per).min(spec.batch) {
                item(chunk, (i - first) * spec.sc, i, per_item_par);
            }
        });
    } else {
        for i in 0..spec.batch {
            item(c, co + i * spec.sc, i, par);
        }
    }
}

fn fill_zero<T: Element>(c: &mut [T], co: usize, cs: MatSpec) {
    for i in 0..cs.rows {
        for j in 0..cs.cols {
            c[co + i * cs.rs + j * cs.cs] = T::ZERO;
        }
    }
}

/// The plain triple loop (row of C outer, contraction middle, row of B inner).
#[allow(clippy::too_many_arguments, reason = "three strided operands")]
fn loop_gemm<T: Element>(
    c: &mut [T],
    co: usize,
    cs: MatSpec,
    a: &[T],
    ao: usize,
    asp: MatSpec,
    b: &[T],
    bo: usize,
    bsp: MatSpec,
) {
    let (m, n, k) = (asp.rows, bsp.cols, asp.cols);
    if cs.cs == 1 && bsp.cs == 1 {
        for i in 0..m {
            let row = &mut c[co + i * cs.rs..co + i * cs.rs + n];
            row.fill(T::ZERO);
            for p in 0..k {
                let x = a[ao + i * asp.rs + p * asp.cs];
                let brow = &b[bo + p * bsp.rs..bo + p * bsp.rs + n];
                for (o, &y) in row.iter_mut().zip(brow) {
                    *o += x * y;
                }
            }
        }
    } else {
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::ZERO;
                for p in 0..k {
                    acc += a[ao + i * asp.rs + p * asp.cs] * b[bo + p * bsp.rs + j * bsp.cs];
                }
                c[co + i * cs.rs + j * cs.cs] = acc;
            }
        }
    }
}

/// A faer scalar we hand views of (`f32`, `f64`).
trait FaerScalar: faer::traits::ComplexField + Copy + 'static {
    const ONE: Self;
}

impl FaerScalar for f32 {
    const ONE: Self = 1.0;
}

impl FaerScalar for f64 {
    const ONE: Self = 1.0;
}

/// `C = A·B` through faer, on views built from the strides without copying.
#[allow(clippy::too_many_arguments, reason = "three strided operands")]
pub(crate) fn faer_gemm<T: Element>(
    c: &mut [T],
    co: usize,
    cs: MatSpec,
    a: &[T],
    ao: usize,
    asp: MatSpec,
    b: &[T],
    bo: usize,
    bsp: MatSpec,
    par: Par,
) {
    if TypeId::of::<T>() == TypeId::of::<f64>() {
        faer_typed::<T, f64>(c, co, cs, a, ao, asp, b, bo, bsp, par);
    } else if TypeId::of::<T>() == TypeId::of::<f32>() {
        faer_typed::<T, f32>(c, co, cs, a, ao, asp, b, bo, bsp, par);
    } else {
        loop_gemm(c, co, cs, a, ao, asp, b, bo, bsp);
    }
}

/// A stride as faer wants it. Strides of unit dimensions are never used to address anything, so
/// they are replaced by 0 when they would not fit.
fn istride(stride: usize, dim: usize) -> isize {
    match isize::try_from(stride) {
        Ok(s) => s,
        Err(_) => {
            debug_assert!(dim <= 1, "a used stride fits isize (it addresses inside a slice)");
            0
        }
    }
}

#[allow(clippy::too_many_arguments, reason = "three strided operands")]
#[inline]
fn faer_typed<T: Element, U: FaerScalar>(
    c: &mut [T],
    co: usize,
    cs: MatSpec,
    a: &[T],
    ao: usize,
    asp: MatSpec,
    b: &[T],
    bo: usize,
    bsp: MatSpec,
    par: Par,
) {
    assert!(TypeId::of::<T>() == TypeId::of::<U>(), "faer scalar matches the element type");
    assert!(asp.rows == cs.rows && bsp.cols == cs.cols && asp.cols == bsp.rows, "GEMM dimensions");
    assert!(
        co + cs.extent() <= c.len() && ao + asp.extent() <= a.len() && bo + bsp.extent() <= b.len(),
        "GEMM operands lie inside their slices"
    );
    debug_assert!(
        cs.rows <= 1 || cs.cols <= 1 || (cs.rs != cs.cs && cs.rs != 0 && cs.cs != 0),
        "C does not alias itself"
    );
    // Offsets of empty operands may equal the slice length; `wrapping_add` keeps the pointer
    // arithmetic defined in that case (faer does not dereference an empty view).
    let ap = a.as_ptr().wrapping_add(ao).cast::<U>();
    let bp = b.as_ptr().wrapping_add(bo).cast::<U>();
    let cp = c.as_mut_ptr().wrapping_add(co).cast::<U>();
    // SAFETY:
    // - `T` and `U` are the same type (checked by `TypeId` above), so the casts keep size,
    //   alignment and validity.
    // - Every position addressed by the three views, `off + i·rs + j·cs` for `i < rows`,
    //   `j < cols`, lies inside its slice (checked by the extent assertion above); the slices are
    //   initialised.
    // - `a` and `b` are shared borrows and `c` is an exclusive borrow of a different slice, so
    //   nothing writes the read views and nothing else accesses the written view while faer runs.
    // - C's strides never map two positions to one address (the callers build C dense or
    //   grouped from a dense layout; checked in debug builds above).
    let (av, bv, cv) = unsafe {
        (
            faer::MatRef::<U>::from_raw_parts(
                ap,
                asp.rows,
                asp.cols,
                istride(asp.rs, asp.rows),
                istride(asp.cs, asp.cols),
            ),
            faer::MatRef::<U>::from_raw_parts(
                bp,
                bsp.rows,
                bsp.cols,
                istride(bsp.rs, bsp.rows),
                istride(bsp.cs, bsp.cols),
            ),
            faer::MatMut::<U>::from_raw_parts_mut(
                cp,
                cs.rows,
                cs.cols,
                istride(cs.rs, cs.rows),
                istride(cs.cs, cs.cols),
            ),
        )
    };
    faer::linalg::matmul::matmul(cv, faer::Accum::Replace, av, bv, U::ONE, par.to_faer());
}
