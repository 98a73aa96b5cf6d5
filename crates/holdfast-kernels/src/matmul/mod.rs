//! Matrix products (SPEC K4): [`matmul`] and [`matmul_into`] on 2-D `[m, k]·[k, n]` and batched
//! 3-D `[batch, m, k]·[batch, k, n]` operands, through faer.
//!
//! Operands are handed to faer as strided views of their storage (transposed or sliced views
//! included), never copied first. [`MatmulPlan`] is the validated product (shapes and strides);
//! preparing it once and executing it many times skips validation. With
//! [`Par::Rayon`](crate::Par) and at least [`GEMM_PAR_MIN_FLOPS`](crate::GEMM_PAR_MIN_FLOPS)
//! floating-point operations, faer parallelises each product, or a batch is split over rayon.
//!
//! # Unsafe
//!
//! `gemm::faer_typed` builds faer views from raw parts or runs a nano-gemm plan on them (see
//! that module); `nano` declares nano-gemm plans `Send` and `Sync` (see that module).

pub(crate) mod gemm;
mod nano;
#[cfg(test)]
mod tests;

use holdfast_tensor::{Dims, Element, Layout, SizedLayout, Tensor, TensorRead};
use smallvec::SmallVec;

use crate::{KernelAlloc, KernelError, Par};
use gemm::{BatchSpec, MatSpec, SingleGemm, run_batch};

/// A validated matrix product: operand shapes and strides, and how faer will see them.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{Par, matmul::MatmulPlan};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let b = Tensor::<f64>::from_vec([2, 2], vec![5.0, 6.0, 7.0, 8.0])?;
/// let plan = MatmulPlan::new(a.layout(), b.layout())?;
/// let mut out = Tensor::<f64>::zeros(plan.out_shape().to_vec());
/// for _ in 0..3 {
///     plan.execute_into(&a.read(), &b.read(), &mut out, Par::Seq)?;
/// }
/// assert_eq!(out.as_slice(), &[19.0, 22.0, 43.0, 50.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MatmulPlan {
    a_shape: Axes3,
    a_strides: Axes3,
    b_shape: Axes3,
    b_strides: Axes3,
    out_shape: Axes3,
    /// The dense row-major strides of the output.
    out_strides: Axes3,
    /// The output's dense layout and element count, for [`execute`](Self::execute).
    out_layout: SizedLayout,
    out_len: usize,
    spec: BatchSpec,
    /// The product prepared for faer when it is a plain single product (most are).
    single: Option<SingleGemm>,
}

impl MatmulPlan {
    /// Validates a product of operands with layouts `a` and `b` (offsets are not part of the
    /// plan).
    ///
    /// # Errors
    ///
    /// [`KernelError::MatmulShape`] unless both are 2-D or both 3-D, the inner dimensions agree
    /// and (3-D) the batch dimensions agree.
    pub fn new(a: &Layout, b: &Layout) -> Result<Self, KernelError> {
        let (spec, out_shape) = spec_of(a, b)?;
        // `spec_of` checked the element count, so the layout exists.
        let out_layout = Layout::contiguous(&out_shape)
            .map_err(|_| KernelError::SizeOverflow { shape: out_shape.to_vec() })?;
        let out_strides = Axes3::of(out_layout.strides());
        let out_len = out_layout.numel();
        Ok(MatmulPlan {
            a_shape: Axes3::of(a.shape()),
            a_strides: Axes3::of(a.strides()),
            b_shape: Axes3::of(b.shape()),
            b_strides: Axes3::of(b.strides()),
            out_shape: Axes3::of(&out_shape),
            out_strides,
            out_layout: SizedLayout::new(out_layout),
            out_len,
            single: SingleGemm::new(&spec),
            spec,
        })
    }

    /// The result's shape: `[m, n]` or `[batch, m, n]`.
    pub fn out_shape(&self) -> &[usize] {
        self.out_shape.as_slice()
    }

    /// Floating-point operations of one execution (`2·batch·m·n·k`).
    pub fn flops(&self) -> u64 {
        2 * self.spec.macs()
    }

    /// Checks that `a` and `b` have the shapes and strides this plan was made for and binds
    /// them to it: the [`BoundMatmul`] executes without checking them again. This is how a caller
    /// that looks a plan up and then runs it (a session's plan cache) checks the operands once.
    ///
    /// # Errors
    ///
    /// [`KernelError::PlanMismatch`] when `a` or `b` differs in shape or strides from the layouts
    /// the plan was made for.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::Par;
    /// use holdfast_kernels::matmul::MatmulPlan;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let plan = MatmulPlan::new(a.layout(), a.layout())?;
    /// let (ra, rb) = (a.read(), a.read());
    /// let bound = plan.bind(&ra, &rb)?;
    /// let mut out = Tensor::<f64>::zeros([2, 2]);
    /// bound.execute_into(&mut out, Par::Seq)?;
    /// assert_eq!(out.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// assert!(plan.bind(&ra.transpose(), &rb).is_err(), "another layout");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn bind<'x, T: Element>(
        &'x self,
        a: &'x TensorRead<'_, T>,
        b: &'x TensorRead<'_, T>,
    ) -> Result<BoundMatmul<'x, T>, KernelError> {
        self.try_bind(a, b).ok_or_else(|| {
            let reason = if self.a_shape.is(a.shape()) && self.a_strides.is(a.strides()) {
                "right operand layout"
            } else {
                "left operand layout"
            };
            KernelError::PlanMismatch { reason }
        })
    }

    /// [`bind`](Self::bind) without the error's detail: `None` when `a` or `b` is not laid out
    /// as the plan expects.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::matmul::MatmulPlan;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::zeros([2, 3]);
    /// let plan = MatmulPlan::new(a.layout(), Tensor::<f64>::zeros([3, 2]).layout())?;
    /// assert!(plan.try_bind(&a.read(), &Tensor::zeros([3, 2]).read()).is_some());
    /// assert!(plan.try_bind(&a.read(), &Tensor::zeros([3, 4]).read()).is_none());
    /// # Ok::<(), holdfast_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn try_bind<'x, T: Element>(
        &'x self,
        a: &'x TensorRead<'_, T>,
        b: &'x TensorRead<'_, T>,
    ) -> Option<BoundMatmul<'x, T>> {
        self.matches(a.layout(), b.layout()).then(|| self.bind_matched(a, b))
    }

    /// Binds operands the caller has just checked with [`matches`](Self::matches), without
    /// checking them again: a plan cache's hit path, which must finish its own bookkeeping
    /// between the check and the binding. Operands that do not match are a caller bug; they can
    /// give a wrong product or a panic on the kernel's bounds check, never an out-of-bounds
    /// access (checked in debug builds).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::{HeapAlloc, Par, matmul::MatmulPlan};
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let plan = MatmulPlan::new(a.layout(), a.layout())?;
    /// let (ra, rb) = (a.read(), a.read());
    /// assert!(plan.matches(ra.layout(), rb.layout()));
    /// let c = plan.bind_matched(&ra, &rb).execute(&mut HeapAlloc, Par::Seq)?;
    /// assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    pub fn bind_matched<'x, T: Element>(
        &'x self,
        a: &'x TensorRead<'_, T>,
        b: &'x TensorRead<'_, T>,
    ) -> BoundMatmul<'x, T> {
        debug_assert!(self.matches(a.layout(), b.layout()), "the caller checked the operands");
        BoundMatmul { plan: self, a: a.storage(), ao: a.offset(), b: b.storage(), bo: b.offset() }
    }

    /// Runs the plan on `a` and `b`, writing `a·b` into `out` (dense row-major of the product's
    /// shape), without allocating.
    ///
    /// # Errors
    ///
    /// [`KernelError::PlanMismatch`] when `a` or `b` differs in shape or strides from the layouts
    /// the plan was made for; [`KernelError::OutputShape`] or
    /// [`KernelError::OutputNotContiguous`] for a wrong `out`.
    pub fn execute_into<T: Element>(
        &self,
        a: &TensorRead<'_, T>,
        b: &TensorRead<'_, T>,
        out: &mut Tensor<T>,
        par: Par,
    ) -> Result<(), KernelError> {
        self.bind(a, b)?.execute_into(out, par)
    }

    /// True when operands laid out as `a` and `b` are the ones this plan was made for (shapes
    /// and strides; offsets are not part of a plan).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::matmul::MatmulPlan;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::zeros([2, 3]);
    /// let b = Tensor::<f64>::zeros([3, 2]);
    /// let plan = MatmulPlan::new(a.layout(), b.layout())?;
    /// assert!(plan.matches(a.layout(), b.layout()));
    /// assert!(!plan.matches(b.layout(), a.layout()));
    /// # Ok::<(), holdfast_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn matches(&self, a: &Layout, b: &Layout) -> bool {
        self.a_shape.is(a.shape())
            && self.a_strides.is(a.strides())
            && self.b_shape.is(b.shape())
            && self.b_strides.is(b.strides())
    }

    /// `a·b` in a new dense tensor whose buffer comes from `alloc`.
    ///
    /// # Errors
    ///
    /// [`KernelError::PlanMismatch`] as for [`execute_into`](Self::execute_into).
    pub fn execute<T: Element, A: KernelAlloc + ?Sized>(
        &self,
        a: &TensorRead<'_, T>,
        b: &TensorRead<'_, T>,
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, KernelError> {
        self.bind(a, b)?.execute(alloc, par)
    }
}

/// A [`MatmulPlan`] with operands whose layouts it has checked ([`MatmulPlan::bind`]): executes
/// without checking them again. It borrows the plan and the operands' storage.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::matmul::MatmulPlan;
/// use holdfast_kernels::{HeapAlloc, Par};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let b = Tensor::<f64>::from_vec([3, 1], vec![1.0, 0.0, -1.0])?;
/// let plan = MatmulPlan::new(a.layout(), b.layout())?;
/// let (ra, rb) = (a.read(), b.read());
/// let bound = plan.bind(&ra, &rb)?;
/// assert_eq!(bound.flops(), 2 * 2 * 3);
/// let c = bound.execute(&mut HeapAlloc, Par::Seq)?;
/// assert_eq!((c.shape(), c.as_slice()), (&[2, 1][..], &[-2.0, -2.0][..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BoundMatmul<'x, T> {
    plan: &'x MatmulPlan,
    a: &'x [T],
    ao: usize,
    b: &'x [T],
    bo: usize,
}

impl<T: Element> BoundMatmul<'_, T> {
    /// The plan's floating-point operation count (see [`MatmulPlan::flops`]).
    ///
    /// # Examples
    ///
    /// See [`BoundMatmul`].
    #[inline]
    pub fn flops(&self) -> u64 {
        self.plan.flops()
    }

    /// Writes the product into `out` (dense row-major of the product's shape).
    ///
    /// # Errors
    ///
    /// [`KernelError::OutputShape`] or [`KernelError::OutputNotContiguous`] for a wrong `out`.
    ///
    /// # Examples
    ///
    /// See [`MatmulPlan::bind`].
    #[inline]
    pub fn execute_into(&self, out: &mut Tensor<T>, par: Par) -> Result<(), KernelError> {
        let plan = self.plan;
        // A dense output of the right shape has exactly the plan's strides, unless it has unit
        // axes; only then is the general check needed.
        if !plan.out_shape.is(out.shape()) || !plan.out_strides.is(out.strides()) {
            check_out(out, plan.out_shape.as_slice())?;
        }
        let co = out.offset();
        self.run(out.as_mut_slice(), co, par);
        Ok(())
    }

    /// The product in a new dense tensor whose buffer comes from `alloc`.
    ///
    /// # Errors
    ///
    /// Only if the plan's own output layout were inconsistent (it is built checked).
    ///
    /// # Examples
    ///
    /// See [`BoundMatmul`].
    #[inline]
    pub fn execute<A: KernelAlloc + ?Sized>(
        &self,
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, KernelError> {
        let plan = self.plan;
        // The product goes into the bare buffer (dense, the plan's output layout) and the tensor
        // is built last, straight into the result: no tensor is moved around the kernel call.
        let mut buf = alloc.take::<T>(plan.out_len);
        self.run(&mut buf, 0, par);
        Ok(Tensor::from_sized_layout(buf, &plan.out_layout)?)
    }

    /// Writes the product into `c` from offset `co`, laid out as the plan's output. Always
    /// inlined: a small product then reaches nano-gemm without a call frame of ours between.
    #[inline(always)]
    fn run(&self, c: &mut [T], co: usize, par: Par) {
        let (a, ao, b, bo) = (self.a, self.ao, self.b, self.bo);
        match &self.plan.single {
            Some(single) => single.run(c, co, a, ao, b, bo, par),
            None => run_batch(&self.plan.spec, c, co, a, ao, b, bo, par, false),
        }
    }
}

/// The 2 or 3 axes of a matrix operand, stored inline, compared without `memcmp` or a loop
/// (either costs several times an unrolled comparison at this length).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Axes3 {
    len: usize,
    v: [usize; 3],
}

impl Axes3 {
    /// `x` (2 or 3 values: `spec_of` admits nothing else).
    fn of(x: &[usize]) -> Axes3 {
        let mut v = [0; 3];
        let len = x.len().min(3);
        v[..len].copy_from_slice(&x[..len]);
        Axes3 { len, v }
    }

    fn as_slice(&self) -> &[usize] {
        &self.v[..self.len.min(3)]
    }

    /// True when `x` holds exactly these values.
    #[inline]
    fn is(&self, x: &[usize]) -> bool {
        match (x, self.len) {
            ([x0, x1], 2) => *x0 == self.v[0] && *x1 == self.v[1],
            ([x0, x1, x2], 3) => *x0 == self.v[0] && *x1 == self.v[1] && *x2 == self.v[2],
            _ => false,
        }
    }
}

/// Validates a product and returns how faer sees it, and the result's shape.
fn spec_of(a: &Layout, b: &Layout) -> Result<(BatchSpec, Dims), KernelError> {
    let bad =
        |reason| KernelError::MatmulShape { a: a.shape().to_vec(), b: b.shape().to_vec(), reason };
    let (ash, bsh, ast, bst) = (a.shape(), b.shape(), a.strides(), b.strides());
    let (batch, sa, sb, lead) = match (ash.len(), bsh.len()) {
        (2, 2) => (1, 0, 0, 0),
        (3, 3) if ash[0] == bsh[0] => (ash[0], ast[0], bst[0], 1),
        (3, 3) => return Err(bad("batch dimensions differ")),
        _ => return Err(bad("operands must both be 2-D or both 3-D")),
    };
    let (m, k, k2, n) = (ash[lead], ash[lead + 1], bsh[lead], bsh[lead + 1]);
    if k != k2 {
        return Err(bad("inner dimensions differ"));
    }
    let out_shape: Dims = if lead == 1 {
        SmallVec::from_slice(&[batch, m, n])
    } else {
        SmallVec::from_slice(&[m, n])
    };
    Tensor::<f64>::checked_numel(&out_shape)
        .ok_or_else(|| KernelError::SizeOverflow { shape: out_shape.to_vec() })?;
    let spec = BatchSpec {
        batch,
        a: MatSpec { rows: m, cols: k, rs: ast[lead], cs: ast[lead + 1] },
        b: MatSpec { rows: k, cols: n, rs: bst[lead], cs: bst[lead + 1] },
        c: MatSpec { rows: m, cols: n, rs: n, cs: 1 },
        sa,
        sb,
        sc: m * n,
    };
    Ok((spec, out_shape))
}

/// Checks a caller-supplied output against the result's shape.
fn check_out<T: Element>(out: &Tensor<T>, shape: &[usize]) -> Result<(), KernelError> {
    if out.shape() != shape {
        return Err(KernelError::OutputShape {
            expected: shape.to_vec(),
            actual: out.shape().to_vec(),
        });
    }
    if !out.is_contiguous() {
        return Err(KernelError::OutputNotContiguous {
            shape: out.shape().to_vec(),
            strides: out.strides().to_vec(),
        });
    }
    Ok(())
}

/// The matrix product `a·b`: `[m, k]·[k, n] → [m, n]`, or batched
/// `[batch, m, k]·[batch, k, n] → [batch, m, n]`. Operands may be any strided views; the result
/// is dense row-major in a buffer from `alloc`.
///
/// # Errors
///
/// [`KernelError::MatmulShape`] for operands of the wrong rank or with disagreeing dimensions.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, matmul::matmul};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// // aᵀ·a through a transposed view: no copy.
/// let g = matmul(a.read().transpose(), a.read(), &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(g.shape(), &[3, 3]);
/// assert_eq!(g.as_slice()[..3], [17.0, 22.0, 27.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(
    clippy::needless_pass_by_value,
    reason = "views are passed by value, as in the operation API (SPEC §6)"
)]
pub fn matmul<T: Element, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    b: TensorRead<'_, T>,
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    MatmulPlan::new(a.layout(), b.layout())?.execute(&a, &b, alloc, par)
}

/// Writes `a·b` into the caller's `out` (dense row-major, of the result's shape). Allocates
/// nothing.
///
/// # Errors
///
/// [`KernelError::MatmulShape`] for bad operands; [`KernelError::OutputShape`] or
/// [`KernelError::OutputNotContiguous`] for a wrong `out`.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{Par, matmul::matmul_into};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f32>::from_vec([2, 1, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let b = Tensor::<f32>::from_vec([2, 2, 1], vec![1.0, 1.0, 2.0, 0.5])?;
/// let mut out = Tensor::<f32>::zeros([2, 1, 1]);
/// matmul_into(a.read(), b.read(), &mut out, Par::Seq)?;
/// assert_eq!(out.as_slice(), &[3.0, 8.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(
    clippy::needless_pass_by_value,
    reason = "views are passed by value, as in the operation API (SPEC §6)"
)]
pub fn matmul_into<T: Element>(
    a: TensorRead<'_, T>,
    b: TensorRead<'_, T>,
    out: &mut Tensor<T>,
    par: Par,
) -> Result<(), KernelError> {
    let (spec, out_shape) = spec_of(a.layout(), b.layout())?;
    check_out(out, &out_shape)?;
    let co = out.offset();
    run_batch(
        &spec,
        out.as_mut_slice(),
        co,
        a.storage(),
        a.offset(),
        b.storage(),
        b.offset(),
        par,
        false,
    );
    Ok(())
}
