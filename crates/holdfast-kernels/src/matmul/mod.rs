//! Matrix products (SPEC K4): [`matmul`] and [`matmul_into`] on 2-D `[m, k]·[k, n]` and batched
//! 3-D `[batch, m, k]·[batch, k, n]` operands, through faer.
//!
//! Operands are handed to faer as strided views of their storage (transposed or sliced views
//! included), never copied first. [`MatmulPlan`] is the validated product (shapes and strides);
//! preparing it once and executing it many times skips validation. With
//! [`Par::Rayon`](crate::Par) and at least its [`FanOut::gemm`](crate::FanOut) floating-point
//! operations, a batch is split over rayon, or each product is cut into blocks of its output
//! that run as independent single-threaded faer calls (`split`).
//!
//! | module | what |
//! |---|---|
//! | this one | [`MatmulPlan`], [`BoundMatmul`] and the entry points |
//! | `shape` | validation of a product's operands, and the output check |
//! | `operand` | the engine's spec and operand types (`MatSpec`, `BatchSpec`, `MatRef`, `MatMut`, `Accum`) |
//! | `batch` | the batch driver, `PreparedGemm`, shared with einsum's contraction steps |
//! | `bridge` | the unsafe bridge: strided views handed to faer and nano-gemm |
//! | `nano` | nano-gemm's prepared small-product plans |
//! | `split` | one product over several threads, as independent blocks of its output |
//! | `stream` | a product whose output rows are short and far apart, written past the cache |
//! | `thin` | a thin `f64` product whose large operand is read across its contiguous axis |
//! | `warm` | a left operand faer would read across pages, read into cache first |
//!
//! # Unsafe
//!
//! `bridge` builds faer views from raw parts or runs a nano-gemm plan on them (see that
//! module); `nano` declares nano-gemm plans `Send` and `Sync` (see that module); `thin` runs an
//! AVX-512 kernel through raw pointers taken from faer views (see that module). `stream`'s
//! stores past the cache are the crate's `nontemporal` module's.

pub(crate) mod batch;
mod bridge;
mod nano;
pub(crate) mod operand;
mod panels;
mod shape;
mod split;
mod stream;
#[cfg(test)]
mod tests;
mod thin;
mod warm;

pub(crate) use bridge::nano_sized;

use holdfast_tensor::{Element, Layout, SizedLayout, Tensor, TensorRead};

use crate::{KernelAlloc, KernelError, Par};
use batch::{PreparedGemm, run_batch};
use operand::{Accum, MatMut, MatRef};
use shape::{Axes3, check_out, spec_of};

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
    /// The product, prepared: orientation, kernel, faer views, nano-gemm plans.
    gemm: PreparedGemm,
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
            gemm: PreparedGemm::new(&spec),
        })
    }

    /// The result's shape: `[m, n]` or `[batch, m, n]`.
    pub fn out_shape(&self) -> &[usize] {
        self.out_shape.as_slice()
    }

    /// Floating-point operations of one execution (`2·batch·m·n·k`).
    pub fn flops(&self) -> u64 {
        self.gemm.flops()
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
        self.execute_as(alloc, par)
    }

    /// [`execute`](Self::execute), its error converted to the caller's type `E` where it
    /// arises, so the tensor is written once, straight into the caller's result: a result
    /// converted afterwards would move the tensor from one result type to the other.
    ///
    /// # Errors
    ///
    /// As [`execute`](Self::execute), converted with `E::from`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::matmul::MatmulPlan;
    /// use holdfast_kernels::{HeapAlloc, KernelError, Par};
    /// use holdfast_tensor::Tensor;
    ///
    /// #[derive(Debug)]
    /// struct MyError(KernelError);
    /// impl From<KernelError> for MyError {
    ///     fn from(e: KernelError) -> Self {
    ///         MyError(e)
    ///     }
    /// }
    ///
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let plan = MatmulPlan::new(a.layout(), a.layout())?;
    /// let (ra, rb) = (a.read(), a.read());
    /// let bound = plan.bind(&ra, &rb)?;
    /// let c: Result<Tensor<f64>, MyError> = bound.execute_as(&mut HeapAlloc, Par::Seq);
    /// assert_eq!(c.map_err(|e| e.0)?.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn execute_as<E: From<KernelError>, A: KernelAlloc + ?Sized>(
        &self,
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, E> {
        let plan = self.plan;
        // The product goes into the bare buffer (dense, the plan's output layout) and the tensor
        // is built last, straight into the result: no tensor is moved around the kernel call.
        let mut buf = alloc.take::<T>(plan.out_len);
        self.run(&mut buf, 0, par);
        Tensor::from_sized_layout_with(buf, &plan.out_layout, |e| E::from(KernelError::from(e)))
    }

    /// Writes the product into `c` from offset `co`, laid out as the plan's output. Always
    /// inlined: a small product then reaches nano-gemm without a call frame of ours between.
    #[inline(always)]
    fn run(&self, c: &mut [T], co: usize, par: Par) {
        let (a, b) = (MatRef::new(self.a, self.ao), MatRef::new(self.b, self.bo));
        self.plan.gemm.run(MatMut::new(c, co), a, b, Accum::Replace, par);
    }
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
    let (ra, rb) = (MatRef::new(a.storage(), a.offset()), MatRef::new(b.storage(), b.offset()));
    run_batch(&spec, MatMut::new(out.as_mut_slice(), co), ra, rb, Accum::Replace, par);
    Ok(())
}
