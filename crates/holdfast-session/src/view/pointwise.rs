//! The view's elementwise operations, reductions and permutes (SPEC K1–K3, T2): each checks
//! access, then runs its kernel through the provider's route for its family and size.

use holdfast_kernels::{Family, elementwise, permute, reduce};
use holdfast_tensor::{Element, Tensor, TensorRead};

use super::{CpuExecSession, check_access, size_of_op};
use crate::OpError;

impl CpuExecSession<'_> {
    /// Checks access and runs `op` elementwise on the route for the operation's size. The views
    /// stay in this frame and the kernel borrows them: moved into the route's closure, each
    /// would be copied whole on every call.
    #[inline]
    fn binary<T: Element>(
        &mut self,
        a: &TensorRead<'_, T>,
        b: &TensorRead<'_, T>,
        op: impl Fn(T, T) -> T + Sync + Send,
    ) -> Result<Tensor<T>, OpError> {
        check_access([a, b])?;
        let size = size_of_op(a.numel().max(b.numel()));
        self.run(Family::Elementwise, size, |loan, par| elementwise::zip_with(a, b, loan, par, op))
    }

    /// `a + b`, elementwise with numpy broadcasting (K1).
    ///
    /// # Errors
    ///
    /// [`OpError::ForeignStorage`] / [`OpError::PendingStorage`] for an inaccessible input;
    /// [`OpError::Kernel`] for shapes that do not broadcast.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let col = Tensor::<f64>::from_vec([2, 1], vec![10.0, 20.0])?;
    /// let row = Tensor::<f64>::from_vec([3], vec![1.0, 2.0, 3.0])?;
    /// let s = backend.with_backend_session(|v| v.add(col.read(), row.read()))??;
    /// assert_eq!(s.shape(), &[2, 3]);
    /// assert_eq!(s.as_slice(), &[11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "SPEC API: every operation takes its views by value"
    )]
    pub fn add<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
    ) -> Result<Tensor<T>, OpError> {
        self.binary(&a, &b, |x, y| x + y)
    }

    /// `a - b`, elementwise with broadcasting.
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2], vec![5.0, 7.0])?;
    /// let d = backend.with_backend_session(|v| v.sub(a.read(), a.read()))??;
    /// assert_eq!(d.as_slice(), &[0.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "SPEC API: every operation takes its views by value"
    )]
    pub fn sub<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
    ) -> Result<Tensor<T>, OpError> {
        self.binary(&a, &b, |x, y| x - y)
    }

    /// `a * b`, elementwise with broadcasting.
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f32>::from_vec([2], vec![2.0, 3.0])?;
    /// let p = backend.with_backend_session(|v| v.mul(a.read(), a.read()))??;
    /// assert_eq!(p.as_slice(), &[4.0, 9.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "SPEC API: every operation takes its views by value"
    )]
    pub fn mul<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
    ) -> Result<Tensor<T>, OpError> {
        self.binary(&a, &b, |x, y| x * y)
    }

    /// `a / b`, elementwise with broadcasting (IEEE semantics: division by zero gives ±inf/NaN).
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2], vec![1.0, 4.0])?;
    /// let two = Tensor::<f64>::from_vec([1], vec![2.0])?;
    /// let q = backend.with_backend_session(|v| v.div(a.read(), two.read()))??;
    /// assert_eq!(q.as_slice(), &[0.5, 2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "SPEC API: every operation takes its views by value"
    )]
    pub fn div<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        b: TensorRead<'_, T>,
    ) -> Result<Tensor<T>, OpError> {
        self.binary(&a, &b, |x, y| x / y)
    }

    /// `alpha · a`.
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
    /// let a = Tensor::<f64>::from_vec([2], vec![1.0, -2.0])?;
    /// let s = backend.with_backend_session(|v| v.scale(a.read(), -3.0))??;
    /// assert_eq!(s.as_slice(), &[-3.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scale<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        alpha: T,
    ) -> Result<Tensor<T>, OpError> {
        check_access([&a])?;
        let size = size_of_op(a.numel());
        self.run(Family::Elementwise, size, |loan, par| elementwise::scale(a, alpha, loan, par))
    }

    /// The complex conjugate of every element (SPEC T2); a copy for `f32` and `f64`, as numpy's
    /// `conj`.
    ///
    /// # Errors
    ///
    /// [`OpError::ForeignStorage`] / [`OpError::PendingStorage`] for an inaccessible input.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor, c64};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<c64>::from_vec([1], vec![c64::new(1.0, 2.0)])?;
    /// let c = backend.with_backend_session(|v| v.conj(a.read()))??;
    /// assert_eq!(c.as_slice(), &[c64::new(1.0, -2.0)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn conj<T: Element>(&mut self, a: TensorRead<'_, T>) -> Result<Tensor<T>, OpError> {
        check_access([&a])?;
        let size = size_of_op(a.numel());
        self.run(Family::Elementwise, size, |loan, par| elementwise::conj(a, loan, par))
    }

    /// Sum over `axes` (reduced axes are dropped, as in numpy) (K2).
    ///
    /// # Errors
    ///
    /// As [`scale`](Self::scale); [`OpError::Kernel`] for an out-of-range or repeated axis.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let rows = backend.with_backend_session(|v| v.sum(a.read(), &[1]))??;
    /// assert_eq!(rows.as_slice(), &[3.0, 7.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sum<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        axes: &[usize],
    ) -> Result<Tensor<T>, OpError> {
        check_access([&a])?;
        let size = size_of_op(a.numel());
        self.run(Family::Reduce, size, |loan, par| reduce::sum(a, axes, loan, par))
    }

    /// A materialised permutation of `a`'s axes (K3); strided inputs are read directly.
    ///
    /// # Errors
    ///
    /// As [`scale`](Self::scale); [`OpError::Kernel`] for an invalid permutation.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_session::{CpuBackend, Tensor};
    ///
    /// let backend = CpuBackend::builder().threads(1).build()?;
    /// let a = Tensor::<f64>::from_vec([2, 3], (0..6).map(f64::from).collect())?;
    /// let t = backend.with_backend_session(|v| v.permute(a.read(), &[1, 0]))??;
    /// assert_eq!(t.as_slice(), &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn permute<T: Element>(
        &mut self,
        a: TensorRead<'_, T>,
        perm: &[usize],
    ) -> Result<Tensor<T>, OpError> {
        check_access([&a])?;
        let size = size_of_op(a.numel());
        self.run(Family::Permute, size, |loan, par| permute::permute(a, perm, loan, par))
    }
}
