//! The bridge to faer and nano-gemm: strided views handed over without copying.
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

use super::nano::{NanoPlan, NanoScalar, NanoShape};
use super::operand::{Accum, MatMut, MatRef, MatSpec};
use super::panels::Panels;
use super::stream::{Stream, Streamed};
use crate::Par;

/// Largest `m·n·k` sent to nano-gemm's small-product kernels directly (faer's own threshold
/// for them: faer would make the same choice after its per-call dispatch).
pub(crate) const NANO_GEMM_MAX_MACS: usize = 16 * 16 * 16;

/// Longest dimension sent to nano-gemm. Its kernels vectorise along `m` and unroll `n` by a
/// few columns; a long `k` or `n` under a single row or column (a dot product, or a vector
/// times a long matrix, within the MAC limit) runs through scalar kernels, where faer's
/// matrix-vector paths, which faer itself takes for such shapes before nano-gemm, vectorise.
pub(crate) const NANO_GEMM_MAX_DIM: usize = 64;

/// True when an `m×k · k×n` product is small enough for nano-gemm, in either orientation.
pub(crate) fn nano_sized(m: usize, n: usize, k: usize) -> bool {
    m * n * k <= NANO_GEMM_MAX_MACS && m.max(n).max(k) <= NANO_GEMM_MAX_DIM
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

    fn spec(self) -> MatSpec {
        MatSpec {
            rows: self.rows,
            cols: self.cols,
            rs: self.rs.unsigned_abs(),
            cs: self.cs.unsigned_abs(),
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

/// nano-gemm plans of one small product, one per element type (a prepared product does not
/// know the element type it will run with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NanoPlans {
    f64: NanoPlan<f64>,
    f32: NanoPlan<f32>,
    c64: NanoPlan<c64>,
    c32: NanoPlan<c32>,
}

impl NanoPlans {
    /// Plans for every element type.
    fn new(shape: NanoShape) -> Self {
        NanoPlans {
            f64: NanoPlan::new(shape),
            f32: NanoPlan::new(shape),
            c64: NanoPlan::new(shape),
            c32: NanoPlan::new(shape),
        }
    }
}

impl FaerViews {
    /// The views of a product of `a` and `b` into `c`.
    ///
    /// # Panics
    ///
    /// When the dimensions disagree (a broken caller invariant: plans validate shapes first).
    pub(crate) fn new(a: MatSpec, b: MatSpec, c: MatSpec) -> Self {
        assert!(a.rows == c.rows && b.cols == c.cols && a.cols == b.rows, "GEMM dimensions");
        FaerViews { a: View::of(a), b: View::of(b), c: View::of(c) }
    }

    /// nano-gemm's plans when the product is small enough for nano-gemm.
    pub(crate) fn nano_plans(&self) -> Option<NanoPlans> {
        self.nano_shape().map(NanoPlans::new)
    }

    /// Elements nano-gemm moves through scratch on each run of this product (0 when the
    /// product is not nano-gemm's or nano-gemm reads it in place).
    pub(crate) fn nano_scratch(&self) -> usize {
        self.nano_shape().map_or(0, |s| s.scratch_elements())
    }

    /// The normalised nano-gemm shape when the product is small enough for nano-gemm.
    fn nano_shape(&self) -> Option<NanoShape> {
        let (m, n, k) = (self.a.rows, self.b.cols, self.a.cols);
        nano_sized(m, n, k).then(|| {
            NanoShape::new(
                (m, n, k),
                (self.c.rs, self.c.cs),
                (self.a.rs, self.a.cs),
                (self.b.rs, self.b.cs),
            )
        })
    }

    /// Runs the product on the operands through its `nano` plan when it has one, and returns
    /// false without doing anything otherwise. Always inlined: a small product then reaches
    /// nano-gemm with no call frame of ours between (each would pass about ten arguments
    /// through memory, comparable to the product itself).
    ///
    /// # Panics
    ///
    /// When an addressed position lies outside its slice (a broken caller invariant).
    #[inline(always)]
    pub(crate) fn run_nano<T: Element>(
        &self,
        c: MatMut<'_, T>,
        a: MatRef<'_, T>,
        b: MatRef<'_, T>,
        nano: &NanoPlans,
        accum: Accum,
    ) -> bool {
        match T::DTYPE {
            DType::F64 => Checked::<f64>::new(self, c, a, b).run_nano(&nano.f64, accum),
            DType::F32 => Checked::<f32>::new(self, c, a, b).run_nano(&nano.f32, accum),
            DType::C64 => Checked::<c64>::new(self, c, a, b).run_nano(&nano.c64, accum),
            DType::C32 => Checked::<c32>::new(self, c, a, b).run_nano(&nano.c32, accum),
            _ => return false,
        }
        true
    }

    /// Runs the product on the operands: through nano-gemm (the prepared `nano` plans when
    /// given) or faer; every element type has both (the loop stays as the fallback the sealed
    /// types never reach).
    ///
    /// # Panics
    ///
    /// When an addressed position lies outside its slice (a broken caller invariant).
    #[inline]
    pub(crate) fn run<T: Element>(
        &self,
        c: MatMut<'_, T>,
        a: MatRef<'_, T>,
        b: MatRef<'_, T>,
        nano: Option<&NanoPlans>,
        accum: Accum,
        par: Par,
    ) {
        match T::DTYPE {
            DType::F64 => faer_typed::<T, f64>(self, c, a, b, nano.map(|n| &n.f64), accum, par),
            DType::F32 => faer_typed::<T, f32>(self, c, a, b, nano.map(|n| &n.f32), accum, par),
            DType::C64 => faer_typed::<T, c64>(self, c, a, b, nano.map(|n| &n.c64), accum, par),
            DType::C32 => faer_typed::<T, c32>(self, c, a, b, nano.map(|n| &n.c32), accum, par),
            _ => {
                let (cs, asp, bsp) = (self.c.spec(), self.a.spec(), self.b.spec());
                super::batch::loop_gemm(c, cs, a, asp, b, bsp, accum);
            }
        }
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
    #[allow(
        clippy::needless_pass_by_value,
        reason = "takes C's exclusive borrow for as long as the pointers live"
    )]
    #[inline(always)]
    fn new<T: Element>(
        views: &'s FaerViews,
        c: MatMut<'s, T>,
        a: MatRef<'s, T>,
        b: MatRef<'s, T>,
    ) -> Self {
        let FaerViews { a: av, b: bv, c: cv } = *views;
        assert!(TypeId::of::<T>() == TypeId::of::<U>(), "faer scalar matches the element type");
        assert!(
            c.at + cv.extent <= c.data.len()
                && a.at + av.extent <= a.data.len()
                && b.at + bv.extent <= b.data.len(),
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
            c: c.data.as_mut_ptr().wrapping_add(c.at).cast::<U>(),
            a: a.data.as_ptr().wrapping_add(a.at).cast::<U>(),
            b: b.data.as_ptr().wrapping_add(b.at).cast::<U>(),
            borrows: PhantomData,
        }
    }
}

impl<U: FaerScalar> Checked<'_, U> {
    /// `C = A·B` (or `C += A·B`) through `plan`, a nano-gemm plan made from these operands'
    /// views.
    #[inline(always)]
    fn run_nano(self, plan: &NanoPlan<U>, accum: Accum) {
        let Checked { views, c, a, b, .. } = self;
        debug_assert!(views.nano_shape() == Some(*plan.shape()), "the plan fits the views");
        // SAFETY: `plan` was made from the dimensions and strides of `views`
        // (`FaerViews::nano_shape`; checked in debug builds), and `Checked::new` proved that
        // every position they address lies inside its slice (the views' extents); the slices
        // were initialised and `c` an exclusive borrow distinct from `a` and `b` (so reading it,
        // with `Accum::Add`, is as sound as writing it); C's strides never alias (the callers
        // build C dense or grouped from a dense layout; checked in debug builds).
        unsafe { plan.run(c, a, b, accum == Accum::Add) };
    }
}

/// A faer scalar we hand views of (every element type).
trait FaerScalar: faer::traits::ComplexField + NanoScalar + Streamed {
    /// Runs a single-threaded product on a kernel of this crate's own when its shape has one
    /// (`thin`), returning `true`; `false` leaves it, untouched, to faer.
    fn own_kernel(
        _c: faer::MatMut<'_, Self>,
        _accum: faer::Accum,
        _a: faer::MatRef<'_, Self>,
        _b: faer::MatRef<'_, Self>,
    ) -> bool {
        false
    }
}

impl FaerScalar for f32 {}

impl FaerScalar for f64 {
    fn own_kernel(
        c: faer::MatMut<'_, f64>,
        accum: faer::Accum,
        a: faer::MatRef<'_, f64>,
        b: faer::MatRef<'_, f64>,
    ) -> bool {
        super::thin::try_run(c, accum, a, b)
    }
}

impl FaerScalar for c32 {}

impl FaerScalar for c64 {}

#[inline]
fn faer_typed<T: Element, U: FaerScalar>(
    views: &FaerViews,
    c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    nano: Option<&NanoPlan<U>>,
    accum: Accum,
    par: Par,
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
    let ptrs = Checked::<U>::new(views, c, a, b);
    if let Some(plan) = nano {
        return ptrs.run_nano(plan, accum);
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
    match par {
        Par::Rayon(threads, _) if threads.get() > 1 => {
            super::split::matmul(cv, accum.to_faer(), av, bv, seq_product::<U>, threads);
        }
        _ => seq_product(cv, accum.to_faer(), av, bv),
    }
}

/// One single-threaded product: this crate's own kernel when the shape has one, else faer,
/// after reading a left operand it would fetch across pages into cache (`warm`), into a
/// scratch then out past the cache when the output's rows are short and far apart (`stream`),
/// in panels along the output's contiguous dimension when it is long (`panels`).
fn seq_product<U: FaerScalar>(
    mut c: faer::MatMut<'_, U>,
    accum: faer::Accum,
    a: faer::MatRef<'_, U>,
    b: faer::MatRef<'_, U>,
) {
    if U::own_kernel(c.as_mut(), accum, a, b) {
        return;
    }
    super::warm::warm(a);
    let (rows, cols, rs, cs) = (c.nrows(), c.ncols(), c.row_stride(), c.col_stride());
    match Stream::of(rows, cols, rs, cs, size_of::<U>(), accum) {
        Some(how) => super::stream::run(how, c, a, b, in_panels::<U>),
        None => in_panels(c, accum, a, b),
    }
}

/// One faer call, or one per panel when `C` is long along its contiguous dimension.
fn in_panels<U: FaerScalar>(
    c: faer::MatMut<'_, U>,
    accum: faer::Accum,
    a: faer::MatRef<'_, U>,
    b: faer::MatRef<'_, U>,
) {
    let (rows, cols, rs, cs) = (c.nrows(), c.ncols(), c.row_stride(), c.col_stride());
    match Panels::of(rows, cols, rs, cs, a.ncols(), size_of::<U>()) {
        Some(cut) => super::panels::run(cut, c, accum, a, b, faer_seq::<U>),
        None => faer_seq(c, accum, a, b),
    }
}

/// One faer call at `Par::Seq`.
fn faer_seq<U: FaerScalar>(
    c: faer::MatMut<'_, U>,
    accum: faer::Accum,
    a: faer::MatRef<'_, U>,
    b: faer::MatRef<'_, U>,
) {
    faer::linalg::matmul::matmul(c, accum, a, b, U::ONE, faer::Par::Seq);
}
