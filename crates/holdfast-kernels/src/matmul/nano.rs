//! Small products (`m·n·k` ≤ 16³) through nano-gemm, the small-matrix kernels faer itself uses
//! for them, called directly: a [`NanoPlan`] is chosen once (in a prepared
//! [`MatmulPlan`](super::MatmulPlan)) instead of on every call, and faer's per-call dispatch is
//! skipped (the instruction counts are in `docs/perf/measurements.md`).
//!
//! # Unsafe
//!
//! Two things here are `unsafe`: calling `Plan::execute_unchecked` (the caller guarantees the
//! views, see [`NanoPlan::run`]), and declaring a plan `Send` and `Sync`. The latter rests on
//! what a nano-gemm 0.2.2 `Plan` holds (the version is pinned in the workspace manifest for this
//! reason): function pointers to its microkernels, integers, and two `*const ()` that point to
//! `'static` immutable mask tables (or to a promoted `()`), only ever read.

use holdfast_tensor::Element;

/// The normalised operands of one product, oriented as nano-gemm runs it directly when it can:
/// output and left operand column-major, computing the transposed product `Cᵀ = Bᵀ·Aᵀ` when
/// that is the orientation that has them; otherwise, as nano-gemm's planless entry would on
/// every call, the output column-major when its row stride is the smaller one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct NanoShape {
    /// Operands swapped (the transposed product is computed).
    swap: bool,
    m: usize,
    n: usize,
    k: usize,
    dst: (isize, isize),
    lhs: (isize, isize),
    rhs: (isize, isize),
}

impl NanoShape {
    /// The normalised product `C (m×n, strides c) = A (m×k, strides a) · B (k×n, strides b)`.
    /// Strides are non-negative (they come from `usize` strides).
    ///
    /// An axis of length 1 is only ever read at index 0, so its strides are set to 1 first:
    /// einsum hands over vector products with stride 0 there, and nano-gemm runs a product
    /// directly only when the output's and the left operand's row strides are 1 (otherwise it
    /// copies both through scratch blocks on every call).
    pub(crate) fn new(
        (m, n, k): (usize, usize, usize),
        mut c: (isize, isize),
        mut a: (isize, isize),
        mut b: (isize, isize),
    ) -> NanoShape {
        if m == 1 {
            (c.0, a.0) = (1, 1);
        }
        if n == 1 {
            (c.1, b.1) = (1, 1);
        }
        if k == 1 {
            (a.1, b.0) = (1, 1);
        }
        let plain = NanoShape { swap: false, m, n, k, dst: c, lhs: a, rhs: b };
        let swapped = NanoShape {
            swap: true,
            m: n,
            n: m,
            k,
            dst: (c.1, c.0),
            lhs: (b.1, b.0),
            rhs: (a.1, a.0),
        };
        // The orientation nano-gemm runs directly, if either is; else the output column-major
        // when its row stride is the smaller one.
        match (plain.col_major(), swapped.col_major()) {
            (true, _) => plain,
            (false, true) => swapped,
            _ if c.1.unsigned_abs() < c.0.unsigned_abs() => swapped,
            _ => plain,
        }
    }

    pub(super) fn col_major(&self) -> bool {
        self.lhs.0 == 1 && self.dst.0 == 1
    }

    /// Elements nano-gemm moves through its scratch blocks on every run of this shape: none
    /// when it runs the product in place ([`col_major`](Self::col_major)); otherwise the left
    /// operand, copied in, and the output twice (computed in scratch, then added into place)
    /// when its row stride is not 1.
    pub(super) fn scratch_elements(&self) -> usize {
        if self.col_major() {
            return 0;
        }
        let out = if self.dst.0 == 1 { 0 } else { 2 * self.m * self.n };
        self.m * self.k + out
    }
}

/// A scalar nano-gemm has kernels for.
pub(crate) trait NanoScalar: Element {
    /// nano-gemm's plan for `shape`.
    fn plan(shape: &NanoShape) -> nano_gemm::Plan<Self>;
}

/// `NanoScalar` for `$t`, through nano-gemm's column-major constructor `$col` when the shape is
/// column-major in its left operand and output, else the general one `$general`.
macro_rules! nano_scalar {
    ($t:ty, $col:ident, $general:ident) => {
        impl NanoScalar for $t {
            fn plan(s: &NanoShape) -> nano_gemm::Plan<$t> {
                if s.col_major() {
                    nano_gemm::Plan::$col(s.m, s.n, s.k)
                } else {
                    nano_gemm::Plan::$general(s.m, s.n, s.k)
                }
            }
        }
    };
}

nano_scalar!(f64, new_colmajor_lhs_and_dst_f64, new_f64);
nano_scalar!(f32, new_colmajor_lhs_and_dst_f32, new_f32);
nano_scalar!(holdfast_tensor::c64, new_colmajor_lhs_and_dst_c64, new_c64);
nano_scalar!(holdfast_tensor::c32, new_colmajor_lhs_and_dst_c32, new_c32);

/// A chosen nano-gemm plan with the shape it was chosen for.
#[derive(Clone, Copy)]
pub(crate) struct NanoPlan<U: NanoScalar> {
    shape: NanoShape,
    plan: nano_gemm::Plan<U>,
}

// SAFETY: a nano-gemm 0.2.2 plan (pinned) holds function pointers, integers and two pointers to
// `'static` immutable data that are only read (module docs); nothing in it is tied to a thread.
unsafe impl<U: NanoScalar> Send for NanoPlan<U> {}
// SAFETY: as for `Send`: shared access only ever reads the plan.
unsafe impl<U: NanoScalar> Sync for NanoPlan<U> {}

impl<U: NanoScalar> std::fmt::Debug for NanoPlan<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NanoPlan").field("shape", &self.shape).finish_non_exhaustive()
    }
}

// The plan is a function of the shape: equality and hashing look at the shape only.
impl<U: NanoScalar> PartialEq for NanoPlan<U> {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
    }
}

impl<U: NanoScalar> Eq for NanoPlan<U> {}

impl<U: NanoScalar> std::hash::Hash for NanoPlan<U> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.shape.hash(state);
    }
}

impl<U: NanoScalar> NanoPlan<U> {
    /// The plan for `shape`.
    pub(crate) fn new(shape: NanoShape) -> Self {
        NanoPlan { shape, plan: U::plan(&shape) }
    }

    /// The shape the plan was chosen for.
    pub(crate) fn shape(&self) -> &NanoShape {
        &self.shape
    }

    /// `C = A·B` (`C` overwritten, never read), or with `add` `C += A·B`, with the pointers of
    /// the un-normalised operands.
    ///
    /// # Safety
    ///
    /// With the dimensions and strides this plan's shape was made from, `c` addresses only
    /// writable positions of a live buffer and `a`, `b` only readable positions of live
    /// buffers (readable too, and initialised, with `add`); no position of `c` is addressed
    /// twice, and `c` overlaps neither `a` nor `b`.
    #[inline]
    pub(crate) unsafe fn run(&self, c: *mut U, a: *const U, b: *const U, add: bool) {
        let s = &self.shape;
        let (lhs, rhs) = if s.swap { (b, a) } else { (a, b) };
        // SAFETY: the caller's contract covers every position the (normalised) views address:
        // normalising only transposes the product, so it addresses the same positions.
        unsafe {
            self.plan.execute_unchecked(
                s.m,
                s.n,
                s.k,
                c,
                s.dst.0,
                s.dst.1,
                lhs,
                s.lhs.0,
                s.lhs.1,
                rhs,
                s.rhs.0,
                s.rhs.1,
                // nano-gemm computes `dst = alpha·dst + beta·lhs·rhs`: alpha 0 overwrites, 1 adds.
                if add { U::ONE } else { U::ZERO },
                U::ONE,
                false,
                false,
            );
        }
    }
}
