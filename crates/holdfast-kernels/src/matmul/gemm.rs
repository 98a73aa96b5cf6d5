//! The GEMM engine (private): strided matrix views handed to faer (or, for small products, to
//! nano-gemm, see [`super::nano`]) without copying, a plain loop for tiny batched items, the
//! batched driver, and [`SingleGemm`], a single product prepared once.
//!
//! # Unsafe
//!
//! Two functions here have `unsafe`: `faer_typed` builds faer views with
//! `MatRef::from_raw_parts` / `MatMut::from_raw_parts_mut`, because faer's safe constructors
//! cannot express arbitrary (or zero) strides, and `Checked::run_nano` runs a nano-gemm plan
//! on the same pointers. Both take their pointers from `Checked::new`, which checks every
//! addressed position against its slice (the views' extents) and proves the element type to
//! be the faer scalar by `TypeId`.

use std::any::TypeId;
use std::marker::PhantomData;

use holdfast_tensor::{DType, Element, c32, c64};
use rayon::prelude::*;

use super::nano::{NanoPlan, NanoScalar, NanoShape};
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
/// With `add`, every item adds its product to C instead of overwriting it (items may then
/// share C: `sc == 0` sums the batch, as einsum's loops over contracted labels do).
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
    add: bool,
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
    // Every item has the same dimensions and strides: the faer views (and nano-gemm's plans for
    // a small product) are made once for the whole batch, only the offsets move.
    let views = (k > 0 && !small).then(|| {
        assert!(
            spec.a.rows == spec.c.rows && spec.b.cols == spec.c.cols && spec.a.cols == spec.b.rows,
            "GEMM dimensions"
        );
        FaerViews { a: View::of(spec.a), b: View::of(spec.b), c: View::of(spec.c) }
    });
    let nano = views.as_ref().and_then(|v| {
        let shape = v.nano_shape()?;
        (spec.batch > 1).then(|| NanoPlans::only::<T>(shape))
    });
    let item = |c: &mut [T], co: usize, i: usize, par: Par| {
        let (ai, bi) = (ao + i * spec.sa, bo + i * spec.sb);
        match &views {
            Some(views) => views.run(c, co, a, ai, b, bi, par, nano.as_ref(), add),
            None if k == 0 => {
                if !add {
                    fill_zero(c, co, spec.c);
                }
            }
            None => loop_gemm(c, co, spec.c, a, ai, spec.a, b, bi, spec.b, add),
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

/// The plain triple loop (row of C outer, contraction middle, row of B inner); with `add`, C
/// keeps its values and the product is added to them.
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
    add: bool,
) {
    let (m, n, k) = (asp.rows, bsp.cols, asp.cols);
    if cs.cs == 1 && bsp.cs == 1 {
        for i in 0..m {
            let row = &mut c[co + i * cs.rs..co + i * cs.rs + n];
            if !add {
                row.fill(T::ZERO);
            }
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
                let at = co + i * cs.rs + j * cs.cs;
                let mut acc = if add { c[at] } else { T::ZERO };
                for p in 0..k {
                    acc += a[ao + i * asp.rs + p * asp.cs] * b[bo + p * bsp.rs + j * bsp.cs];
                }
                c[at] = acc;
            }
        }
    }
}

/// Largest `m·n·k` sent to nano-gemm's small-product kernels directly (faer's own threshold
/// for them: faer would make the same choice after its per-call dispatch).
pub(crate) const NANO_GEMM_MAX_MACS: usize = 16 * 16 * 16;

/// `C = A·B` through faer, on views built from the strides without copying (small products
/// through nano-gemm, a plan chosen per call): one item of [`run_batch`], for the tests.
#[cfg(test)]
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
    assert!(asp.rows == cs.rows && bsp.cols == cs.cols && asp.cols == bsp.rows, "GEMM dimensions");
    let views = FaerViews { a: View::of(asp), b: View::of(bsp), c: View::of(cs) };
    views.run(c, co, a, ao, b, bo, par, None, false);
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

/// One operand as faer sees it: dimensions, strides as `isize`, and the extent that bounds
/// every addressed position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct View {
    rows: usize,
    cols: usize,
    rs: isize,
    cs: isize,
    /// One past the largest position addressed from offset 0 (0 when empty).
    extent: usize,
}

impl View {
    fn of(m: MatSpec) -> View {
        View {
            rows: m.rows,
            cols: m.cols,
            rs: istride(m.rs, m.rows),
            cs: istride(m.cs, m.cols),
            extent: m.extent(),
        }
    }
}

/// The three views of one product, checked to agree in their dimensions when made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FaerViews {
    a: View,
    b: View,
    c: View,
}

/// nano-gemm plans of one small product, per element type: all four for a prepared plan (which
/// does not know the element type it will run with), only the one needed for a batch that is
/// run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NanoPlans {
    f64: Option<NanoPlan<f64>>,
    f32: Option<NanoPlan<f32>>,
    c64: Option<NanoPlan<c64>>,
    c32: Option<NanoPlan<c32>>,
}

impl NanoPlans {
    /// Plans for every element type.
    fn all(shape: NanoShape) -> Self {
        NanoPlans {
            f64: Some(NanoPlan::new(shape)),
            f32: Some(NanoPlan::new(shape)),
            c64: Some(NanoPlan::new(shape)),
            c32: Some(NanoPlan::new(shape)),
        }
    }

    /// The plan for `T` only.
    fn only<T: Element>(shape: NanoShape) -> Self {
        let mut plans = NanoPlans { f64: None, f32: None, c64: None, c32: None };
        match T::DTYPE {
            DType::F64 => plans.f64 = Some(NanoPlan::new(shape)),
            DType::F32 => plans.f32 = Some(NanoPlan::new(shape)),
            DType::C64 => plans.c64 = Some(NanoPlan::new(shape)),
            DType::C32 => plans.c32 = Some(NanoPlan::new(shape)),
            _ => {}
        }
        plans
    }
}

impl FaerViews {
    /// The normalised nano-gemm shape when the product is small enough for nano-gemm.
    fn nano_shape(&self) -> Option<NanoShape> {
        let (m, n, k) = (self.a.rows, self.b.cols, self.a.cols);
        (m * n * k <= NANO_GEMM_MAX_MACS).then(|| {
            NanoShape::new(
                (m, n, k),
                (self.c.rs, self.c.cs),
                (self.a.rs, self.a.cs),
                (self.b.rs, self.b.cs),
            )
        })
    }

    /// Runs `C = A·B` (with `add`, `C += A·B`) on the slices at the given offsets: through
    /// nano-gemm (the prepared `nano` plans when given) or faer; every element type has both
    /// (the loop stays as the fallback the sealed types never reach).
    ///
    /// # Panics
    ///
    /// When an addressed position lies outside its slice (a broken caller invariant).
    #[allow(clippy::too_many_arguments, reason = "three operands with offsets")]
    #[inline]
    fn run<T: Element>(
        &self,
        c: &mut [T],
        co: usize,
        a: &[T],
        ao: usize,
        b: &[T],
        bo: usize,
        par: Par,
        nano: Option<&NanoPlans>,
        add: bool,
    ) {
        if TypeId::of::<T>() == TypeId::of::<f64>() {
            let nano = nano.and_then(|n| n.f64.as_ref());
            faer_typed::<T, f64>(self, c, co, a, ao, b, bo, par, nano, add);
        } else if TypeId::of::<T>() == TypeId::of::<f32>() {
            let nano = nano.and_then(|n| n.f32.as_ref());
            faer_typed::<T, f32>(self, c, co, a, ao, b, bo, par, nano, add);
        } else if TypeId::of::<T>() == TypeId::of::<c64>() {
            let nano = nano.and_then(|n| n.c64.as_ref());
            faer_typed::<T, c64>(self, c, co, a, ao, b, bo, par, nano, add);
        } else if TypeId::of::<T>() == TypeId::of::<c32>() {
            let nano = nano.and_then(|n| n.c32.as_ref());
            faer_typed::<T, c32>(self, c, co, a, ao, b, bo, par, nano, add);
        } else {
            let spec = |v: View| MatSpec {
                rows: v.rows,
                cols: v.cols,
                rs: v.rs.unsigned_abs(),
                cs: v.cs.unsigned_abs(),
            };
            loop_gemm(c, co, spec(self.c), a, ao, spec(self.a), b, bo, spec(self.b), add);
        }
    }
}

/// A single (unbatched) product prepared once: what [`run_batch`] would decide on every call
/// (no transpose, something to contract) is decided when the plan is made, the
/// views' strides and extents are computed then, and so is nano-gemm's plan for a small one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SingleGemm {
    views: FaerViews,
    flops: u64,
    /// Chosen once for a small product.
    nano: Option<NanoPlans>,
}

impl SingleGemm {
    /// The prepared product, or `None` when `spec` is batched, empty, contracts nothing, or
    /// wants its output transposed (those go through [`run_batch`]).
    pub(crate) fn new(spec: &BatchSpec) -> Option<SingleGemm> {
        let (m, n, k) = (spec.a.rows, spec.b.cols, spec.a.cols);
        let plain = spec.batch == 1
            && m > 0
            && n > 0
            && k > 0
            && !(spec.c.cs != 1 && spec.c.rs == 1 && spec.c.rows > 1);
        plain.then(|| {
            let views = FaerViews { a: View::of(spec.a), b: View::of(spec.b), c: View::of(spec.c) };
            let nano = views.nano_shape().map(NanoPlans::all);
            SingleGemm { views, flops: 2 * spec.macs(), nano }
        })
    }

    /// Runs the product; the same result as [`run_batch`] on the spec it was made from.
    ///
    /// # Panics
    ///
    /// When an addressed position lies outside its slice (a broken caller invariant).
    #[allow(clippy::too_many_arguments, reason = "three operands with offsets")]
    #[inline(always)]
    pub(crate) fn run<T: Element>(
        &self,
        c: &mut [T],
        co: usize,
        a: &[T],
        ao: usize,
        b: &[T],
        bo: usize,
        par: Par,
    ) {
        // A small product runs through its prepared nano-gemm plan from here, inlined into the
        // caller: no parallelism to decide, and no call frames between the caller and nano-gemm
        // (each frame passes about ten arguments through memory, comparable to the product).
        if let Some(nano) = &self.nano {
            if let (true, Some(plan)) = (TypeId::of::<T>() == TypeId::of::<f64>(), &nano.f64) {
                let ptrs = Checked::<f64>::new(&self.views, c, co, a, ao, b, bo);
                return ptrs.run_nano(plan, false);
            }
            if let (true, Some(plan)) = (TypeId::of::<T>() == TypeId::of::<f32>(), &nano.f32) {
                let ptrs = Checked::<f32>::new(&self.views, c, co, a, ao, b, bo);
                return ptrs.run_nano(plan, false);
            }
            if let (true, Some(plan)) = (TypeId::of::<T>() == TypeId::of::<c64>(), &nano.c64) {
                let ptrs = Checked::<c64>::new(&self.views, c, co, a, ao, b, bo);
                return ptrs.run_nano(plan, false);
            }
            if let (true, Some(plan)) = (TypeId::of::<T>() == TypeId::of::<c32>(), &nano.c32) {
                let ptrs = Checked::<c32>::new(&self.views, c, co, a, ao, b, bo);
                return ptrs.run_nano(plan, false);
            }
        }
        let par = match par {
            Par::Seq => Par::Seq,
            par => par.for_size(Family::Gemm, self.flops),
        };
        self.views.run(c, co, a, ao, b, bo, par, self.nano.as_ref(), false);
    }
}

/// The typed pointers of a product's three operands, made only by [`Checked::new`] after it
/// checked that the element type is `U` and that every position the views address lies inside
/// its slice: holding one is the proof the `unsafe` calls below rely on. It keeps the slices
/// borrowed (`c` exclusively) for as long as the pointers live.
struct Checked<'s, U> {
    views: &'s FaerViews,
    c: *mut U,
    a: *const U,
    b: *const U,
    borrows: PhantomData<(&'s mut [U], &'s [U])>,
}

impl<'s, U: 'static> Checked<'s, U> {
    /// Checks the operands against `views` and takes their pointers.
    ///
    /// # Panics
    ///
    /// When `T` is not `U`, or an addressed position lies outside its slice (a broken caller
    /// invariant).
    #[allow(clippy::too_many_arguments, reason = "three operands with offsets")]
    #[inline(always)]
    fn new<T: Element>(
        views: &'s FaerViews,
        c: &'s mut [T],
        co: usize,
        a: &'s [T],
        ao: usize,
        b: &'s [T],
        bo: usize,
    ) -> Self {
        let FaerViews { a: av, b: bv, c: cv } = *views;
        assert!(TypeId::of::<T>() == TypeId::of::<U>(), "faer scalar matches the element type");
        assert!(
            co + cv.extent <= c.len() && ao + av.extent <= a.len() && bo + bv.extent <= b.len(),
            "GEMM operands lie inside their slices"
        );
        debug_assert!(
            av.rows == cv.rows && bv.cols == cv.cols && av.cols == bv.rows,
            "GEMM dimensions agree"
        );
        debug_assert!(
            cv.rows <= 1 || cv.cols <= 1 || (cv.rs != cv.cs && cv.rs != 0 && cv.cs != 0),
            "C does not alias itself"
        );
        // Offsets of empty operands may equal the slice length; `wrapping_add` keeps the
        // pointer arithmetic defined in that case (nothing dereferences an empty view).
        Checked {
            views,
            c: c.as_mut_ptr().wrapping_add(co).cast::<U>(),
            a: a.as_ptr().wrapping_add(ao).cast::<U>(),
            b: b.as_ptr().wrapping_add(bo).cast::<U>(),
            borrows: PhantomData,
        }
    }
}

impl<U: FaerScalar> Checked<'_, U> {
    /// `C = A·B` (with `add`, `C += A·B`) through `plan`, a nano-gemm plan made from these
    /// operands' views.
    #[inline(always)]
    fn run_nano(self, plan: &NanoPlan<U>, add: bool) {
        let Checked { views, c, a, b, .. } = self;
        debug_assert!(views.nano_shape() == Some(*plan.shape()), "the plan fits the views");
        // SAFETY: `plan` was made from the dimensions and strides of `views`
        // (`FaerViews::nano_shape`; checked in debug builds), and `Checked::new` proved that
        // every position they address lies inside its slice (the views' extents); the slices
        // were initialised and `c` an exclusive borrow distinct from `a` and `b` (so reading it,
        // with `add`, is as sound as writing it); C's strides never alias (the callers build C
        // dense or grouped from a dense layout; checked in debug builds).
        unsafe { plan.run(c, a, b, add) };
    }
}

/// A faer scalar we hand views of (every element type).
trait FaerScalar: faer::traits::ComplexField + NanoScalar + Copy + 'static {}

impl FaerScalar for f32 {}

impl FaerScalar for f64 {}

impl FaerScalar for c32 {}

impl FaerScalar for c64 {}

#[allow(clippy::too_many_arguments, reason = "three operands with offsets")]
#[inline]
fn faer_typed<T: Element, U: FaerScalar>(
    views: &FaerViews,
    c: &mut [T],
    co: usize,
    a: &[T],
    ao: usize,
    b: &[T],
    bo: usize,
    par: Par,
    nano: Option<&NanoPlan<U>>,
    add: bool,
) {
    // A prepared plan is used in place (it is too big to copy for free); otherwise one is
    // chosen now, as nano-gemm's own planless entry would.
    let chosen;
    let nano = match nano {
        Some(plan) => Some(plan),
        None => {
            chosen = views.nano_shape().map(NanoPlan::<U>::new);
            chosen.as_ref()
        }
    };
    let ptrs = Checked::<U>::new(views, c, co, a, ao, b, bo);
    if let Some(plan) = nano {
        return ptrs.run_nano(plan, add);
    }
    let (FaerViews { a: av, b: bv, c: cv }, cp, ap, bp) = (*views, ptrs.c, ptrs.a, ptrs.b);
    // SAFETY:
    // - `T` and `U` are the same type (checked by `TypeId` in `Checked::new`), so the casts
    //   keep size, alignment and validity.
    // - Every position addressed by the three views, `off + i·rs + j·cs` for `i < rows`,
    //   `j < cols`, lies inside its slice: each view's `extent` was computed from the same
    //   dimensions and strides (`View::of`, never modified after) and is checked against the
    //   slice by `Checked::new`; the slices are initialised.
    // - `a` and `b` are shared borrows and `c` is an exclusive borrow of a different slice, so
    //   nothing writes the read views and nothing else accesses the written view while faer runs.
    // - C's strides never map two positions to one address (the callers build C dense or
    //   grouped from a dense layout; checked in debug builds by `Checked::new`).
    let (av, bv, cv) = unsafe {
        (
            faer::MatRef::<U>::from_raw_parts(ap, av.rows, av.cols, av.rs, av.cs),
            faer::MatRef::<U>::from_raw_parts(bp, bv.rows, bv.cols, bv.rs, bv.cs),
            faer::MatMut::<U>::from_raw_parts_mut(cp, cv.rows, cv.cols, cv.rs, cv.cs),
        )
    };
    let accum = if add { faer::Accum::Add } else { faer::Accum::Replace };
    faer::linalg::matmul::matmul(cv, accum, av, bv, U::ONE, par.to_faer());
}
