//! The view's factorizations (SPEC T3, T4) and its copying reshape (T5).
//!
//! Each factorization runs the kernels' `linalg` function with the session's buffer pool as its
//! allocator and the engine's [`LinalgScratch`] as faer's workspace, through the provider's
//! GEMM route (its size the factorization's approximate flop count), so a small factorization
//! never installs the pool and a warm one allocates nothing on the calling thread.

use holdfast_kernels::linalg::{self, LinalgElement, LinalgScratch, Svd, Truncation, factor_flops};
use holdfast_kernels::{Family, KernelError, Par, permute};
use holdfast_resources::BufferPoolLoan;
use holdfast_tensor::{Element, Tensor, TensorError, TensorRead};
use smallvec::SmallVec;

use super::{CpuExecSession, check_access};
use crate::OpError;

/// `(m, n)` of `a` read over `left_axes` (axes out of range count as 1: the kernel rejects them).
fn sides<T: Element>(a: &TensorRead<'_, T>, left_axes: &[usize]) -> (usize, usize) {
    let m: usize =
        left_axes.iter().map(|&axis| a.shape().get(axis).copied().unwrap_or(1)).product();
    let n = a.numel().checked_div(m).unwrap_or(0);
    (m, n)
}

impl CpuExecSession<'_> {
    /// Runs one factorization kernel through the GEMM route at `flops`, with the pool loan and
    /// the factorization workspace; counts the operation.
    fn factor<R: Send>(
        &mut self,
        flops: u64,
        f: impl FnOnce(&mut LinalgScratch, &mut BufferPoolLoan<'_>, Par) -> Result<R, KernelError>
        + Send,
    ) -> Result<R, OpError> {
        self.counters.operations += 1;
        let (loan, scratch) = (&mut self.loan, &mut *self.linalg);
        self.entry
            .with_native_parallelism(Family::Gemm, flops, &mut self.counters.routes, |par| {
                f(scratch, loan, par)
            })
            .map_err(OpError::from)
    }

    /// The thin SVD of `a` over the bipartition `left_axes` | other axes, truncated by `trunc`
    /// (SPEC T3): `u` is `[left dims.., k]`, `s` is `[k]` descending, `vh` is
    /// `[k, right dims..]`, and `discarded_weight` is the relative weight dropped.
    ///
    /// # Errors
    ///
    /// [`OpError::ForeignStorage`] / [`OpError::PendingStorage`] for an inaccessible input;
    /// [`OpError::Kernel`] with [`KernelError::AxisOutOfRange`] or
    /// [`KernelError::DuplicateAxis`] for a bad bipartition,
    /// [`KernelError::InvalidTruncation`] for unusable bounds, [`KernelError::NoConvergence`]
    /// when faer does not converge (NaN or infinite input).
    ///
    /// # Examples
    ///
    /// Split a three-leg tensor between its first leg and the other two, keeping two values:
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor, Truncation};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let t = Tensor::<f64>::from_vec([2, 3, 2], (1..=12).map(f64::from).collect())?;
    /// let mut session = backend.open_session()?;
    /// let f = session.with_session(|v| v.svd(t.read(), &[0], Truncation::none().max_rank(2)))?;
    /// assert_eq!((f.u.shape(), f.s.shape(), f.vh.shape()), (&[2, 2][..], &[2][..], &[2, 3, 2][..]));
    /// assert!(f.s.as_slice()[0] >= f.s.as_slice()[1]);
    /// assert!(f.discarded_weight < 1e-20, "t has rank two");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn svd<T: LinalgElement>(
        &mut self,
        a: TensorRead<'_, T>,
        left_axes: &[usize],
        trunc: Truncation,
    ) -> Result<Svd<T>, OpError> {
        check_access([&a])?;
        let (m, n) = sides(&a, left_axes);
        self.factor(factor_flops(m, n), |scratch, loan, par| {
            linalg::svd(a, left_axes, trunc, scratch, loan, par)
        })
    }

    /// The thin QR decomposition of `a` over the bipartition `left_axes` | other axes: `q` of
    /// shape `[left dims.., k]` with orthonormal columns and `r` of shape `[k, right dims..]`,
    /// upper triangular as a matrix (SPEC T3).
    ///
    /// # Errors
    ///
    /// As [`svd`](Self::svd), for the access and bipartition checks.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([3, 2], vec![3.0, 0.0, 4.0, 0.0, 0.0, 1.0])?;
    /// let (q, r) = backend.with_backend_session(|v| v.qr(a.read(), &[0]))??;
    /// assert_eq!((q.shape(), r.shape()), (&[3, 2][..], &[2, 2][..]));
    /// assert!((r.as_slice()[0].abs() - 5.0).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn qr<T: LinalgElement>(
        &mut self,
        a: TensorRead<'_, T>,
        left_axes: &[usize],
    ) -> Result<(Tensor<T>, Tensor<T>), OpError> {
        check_access([&a])?;
        let (m, n) = sides(&a, left_axes);
        self.factor(factor_flops(m, n), |scratch, loan, par| {
            linalg::qr(a, left_axes, scratch, loan, par)
        })
    }

    /// The eigenvalues (ascending, `[n]`) and eigenvectors (columns of `[n, n]`) of the
    /// Hermitian matrix `a`, of which only the lower triangle is read, as numpy's `eigh` does
    /// by default (SPEC T3).
    ///
    /// # Errors
    ///
    /// As [`svd`](Self::svd) for access; [`OpError::Kernel`] with [`KernelError::NotSquare`]
    /// unless `a` is a square matrix, [`KernelError::NoConvergence`] when faer does not
    /// converge.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let h = Tensor::<f64>::from_vec([2, 2], vec![2.0, 1.0, 1.0, 2.0])?;
    /// let (w, v) = backend.with_backend_session(|view| view.eigh(h.read()))??;
    /// assert!((w.as_slice()[0] - 1.0).abs() < 1e-12 && (w.as_slice()[1] - 3.0).abs() < 1e-12);
    /// assert_eq!(v.shape(), &[2, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(clippy::type_complexity, reason = "the pair SPEC T9 names")]
    pub fn eigh<T: LinalgElement>(
        &mut self,
        a: TensorRead<'_, T>,
    ) -> Result<(Tensor<<T as Element>::Real>, Tensor<T>), OpError> {
        check_access([&a])?;
        let n = a.shape().first().copied().unwrap_or(0);
        self.factor(linalg::eigh_flops(n), |scratch, loan, par| linalg::eigh(a, scratch, loan, par))
    }

    /// `x` with `a · x = b` for a square `a` and `b` of shape `[n]` or `[n, k]` (LU with partial
    /// pivoting; SPEC T3).
    ///
    /// # Errors
    ///
    /// As [`svd`](Self::svd) for access; [`OpError::Kernel`] with [`KernelError::NotSquare`],
    /// [`KernelError::SolveShape`] or [`KernelError::Singular`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![4.0, 0.0, 0.0, 2.0])?;
    /// let b = Tensor::<f64>::from_vec([2], vec![8.0, 2.0])?;
    /// let x = backend.with_backend_session(|v| v.solve(a.read(), b.read()))??;
    /// assert_eq!(x.as_slice(), &[2.0, 1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn solve<T: LinalgElement>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
    ) -> Result<Tensor<T>, OpError> {
        check_access([&a, &b])?;
        let n = a.shape().first().copied().unwrap_or(0);
        self.factor(factor_flops(n, n), |scratch, loan, par| {
            linalg::solve(a, b, scratch, loan, par)
        })
    }

    /// The Frobenius norm of `a`: `sqrt(Σ |x|²)` over every element (numpy's `linalg.norm` of
    /// the flattened tensor).
    ///
    /// # Errors
    ///
    /// [`OpError::ForeignStorage`] / [`OpError::PendingStorage`] for an inaccessible input.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 1.0, 1.0, 1.0])?;
    /// assert_eq!(backend.with_backend_session(|v| v.norm(a.read()))??, 2.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "every view operation takes its reads by value"
    )]
    pub fn norm<T: LinalgElement>(
        &mut self,
        a: TensorRead<'_, T>,
    ) -> Result<<T as Element>::Real, OpError> {
        check_access([&a])?;
        self.counters.operations += 1;
        Ok(linalg::norm(&a))
    }

    /// `a` with shape `shape`, its elements in the same row-major order (numpy's `reshape`),
    /// as a new tensor from the session's pool: one counted copy, whatever `a`'s layout. A
    /// reshape that should not copy is [`TensorRead::reshape`], a view, where the layout
    /// allows it (SPEC T5).
    ///
    /// # Errors
    ///
    /// As [`norm`](Self::norm) for access; [`OpError::Tensor`] with
    /// [`TensorError::ReshapeSize`] when `shape` holds another number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 3], (0..6).map(f64::from).collect())?;
    /// // The transpose flattened: a view cannot express it, the view's reshape copies it.
    /// let flat = backend.with_backend_session(|v| v.reshape(a.read().transpose(), &[6]))??;
    /// assert_eq!(flat.as_slice(), &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reshape<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        shape: &[usize],
    ) -> Result<Tensor<T>, OpError> {
        check_access([&a])?;
        // Checks the element count (and nothing else: the copy below is dense).
        a.layout().reshaped(shape)?;
        let identity: SmallVec<[usize; 8]> = (0..a.rank()).collect();
        let size = a.numel() as u64;
        let dense =
            self.run(Family::Permute, size, |loan, par| permute::permute(a, &identity, loan, par))?;
        let (data, _) = dense.into_parts();
        holdfast_tensor::record_copy(data.len());
        Tensor::from_shape_vec(shape, data).map_err(|e: TensorError| OpError::Tensor(e))
    }
}
