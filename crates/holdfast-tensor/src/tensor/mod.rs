//! [`Tensor<T>`]: an owned tensor, its constructors and accessors.
//!
//! A tensor owns a `Vec<T>` of storage and a checked [`Layout`] that fits it, plus the storage
//! facts ([`AllocationDomain`], [`Readiness`]). Cloning copies the elements and is counted by
//! [`copy_stats`](crate::copy_stats); reading through [`Tensor::read`] never copies.

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use crate::layout::checked_numel;
use crate::{AllocationDomain, Element, Layout, Readiness, TensorError, TensorRead, record_copy};

/// An owned tensor of `T` (`f32`, `f64`, `c32` or `c64`).
///
/// Built by [`from_vec`](Tensor::from_vec) or [`zeros`](Tensor::zeros) it is row-major and
/// contiguous at offset 0; [`from_parts`](Tensor::from_parts) accepts any strides and offset that
/// fit the storage. Host memory and ready by default.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::Tensor;
///
/// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// assert_eq!(t.shape(), &[2, 2]);
/// assert_eq!(t.as_slice(), &[1.0, 2.0, 3.0, 4.0]);
/// assert_eq!(t.get(&[1, 0]), Some(3.0));
///
/// let z = Tensor::<f32>::zeros([3, 0]); // zero-sized dimensions are fine
/// assert_eq!(z.numel(), 0);
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[derive(Debug)]
pub struct Tensor<T> {
    data: Vec<T>,
    layout: Layout,
    domain: AllocationDomain,
    readiness: Readiness,
}

impl<T: Element> Tensor<T> {
    /// A row-major contiguous tensor of `shape` over `data`.
    ///
    /// # Errors
    ///
    /// [`TensorError::ShapeOverflow`] when the shape's product does not fit in `usize`;
    /// [`TensorError::DataLengthMismatch`] when `data.len()` is not that product.
    pub fn from_vec(shape: impl Into<Vec<usize>>, data: Vec<T>) -> Result<Self, TensorError> {
        Self::from_shape_vec(&shape.into(), data)
    }

    /// [`from_vec`](Tensor::from_vec) with a borrowed shape: builds no shape vector, so a caller
    /// that already has the shape as a slice allocates nothing but `data`.
    ///
    /// # Errors
    ///
    /// As [`from_vec`](Tensor::from_vec).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::from_shape_vec(&[3], vec![1.0f32, 2.0, 3.0])?;
    /// assert_eq!(t.numel(), 3);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    #[inline]
    pub fn from_shape_vec(shape: &[usize], data: Vec<T>) -> Result<Self, TensorError> {
        let (layout, expected) = Layout::contiguous_counted(shape)?;
        if data.len() != expected {
            return Err(TensorError::DataLengthMismatch {
                shape: shape.to_vec(),
                expected,
                actual: data.len(),
            });
        }
        Ok(Tensor::from_checked(data, layout))
    }

    /// A row-major contiguous tensor over `data` with the shape of `like` (numpy's
    /// `empty_like(a, order='C')`, filled from `data`): [`from_shape_vec`](Tensor::from_shape_vec)
    /// for a shape taken from a layout that exists, which needs no overflow check.
    ///
    /// # Errors
    ///
    /// [`TensorError::DataLengthMismatch`] when `data.len()` is not `like`'s element count.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::from_vec([2, 3], vec![0.0; 6])?;
    /// let t = Tensor::from_vec_like(vec![1.0f64; 6], a.read().transpose().layout())?;
    /// assert_eq!((t.shape(), t.strides()), (&[3, 2][..], &[2, 1][..]));
    /// assert!(Tensor::from_vec_like(vec![1.0f64; 5], a.layout()).is_err());
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    #[inline]
    pub fn from_vec_like(data: Vec<T>, like: &Layout) -> Result<Self, TensorError> {
        let expected = like.numel();
        if data.len() != expected {
            return Err(TensorError::DataLengthMismatch {
                shape: like.shape().to_vec(),
                expected,
                actual: data.len(),
            });
        }
        Ok(Tensor::from_checked(data, like.contiguous_like()))
    }

    /// A tensor over `data` with explicit strides and offset (in elements).
    ///
    /// # Errors
    ///
    /// [`TensorError::RankMismatch`], [`TensorError::ShapeOverflow`], or
    /// [`TensorError::StridesOutOfBounds`] when the layout addresses past `data`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// // A column-major 2×3 matrix.
    /// let t = Tensor::<f64>::from_parts(vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0], &[2, 3], &[1, 2], 0)?;
    /// assert_eq!(t.read().to_vec(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn from_parts(
        data: Vec<T>,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<Self, TensorError> {
        Self::from_layout(data, Layout::new(shape, strides, offset)?)
    }

    /// A tensor over `data` with a prepared layout.
    ///
    /// # Errors
    ///
    /// [`TensorError::StridesOutOfBounds`] when `layout` addresses past `data`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Layout, Tensor};
    ///
    /// let t = Tensor::from_layout(vec![0.0f64; 6], Layout::contiguous(&[2, 3])?)?;
    /// assert!(t.is_contiguous());
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn from_layout(data: Vec<T>, layout: Layout) -> Result<Self, TensorError> {
        layout.check_fits(data.len())?;
        Ok(Tensor::from_checked(data, layout))
    }

    /// A row-major tensor of `shape` filled with zeros.
    ///
    /// # Panics
    ///
    /// When the shape's product does not fit in `usize` (no such buffer could be allocated);
    /// use [`try_zeros`](Tensor::try_zeros) to get an error instead.
    pub fn zeros(shape: impl Into<Vec<usize>>) -> Self {
        match Self::try_zeros(&shape.into()) {
            Ok(t) => t,
            Err(e) => panic!("Tensor::zeros: {e}"),
        }
    }

    /// A row-major tensor of `shape` filled with zeros, or an error for an impossible shape.
    ///
    /// # Errors
    ///
    /// [`TensorError::ShapeOverflow`] when the shape's product does not fit in `usize`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Tensor, TensorError};
    ///
    /// let err = Tensor::<f64>::try_zeros(&[usize::MAX, 2]).unwrap_err();
    /// assert!(matches!(err, TensorError::ShapeOverflow { .. }));
    /// ```
    pub fn try_zeros(shape: &[usize]) -> Result<Self, TensorError> {
        Self::try_full(shape, T::ZERO)
    }

    /// A row-major tensor of `shape` with every element `value`.
    ///
    /// # Errors
    ///
    /// [`TensorError::ShapeOverflow`] when the shape's product does not fit in `usize`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::try_full(&[2], 1.5f32)?;
    /// assert_eq!(t.as_slice(), &[1.5, 1.5]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn try_full(shape: &[usize], value: T) -> Result<Self, TensorError> {
        let layout = Layout::contiguous(shape)?;
        let data = vec![value; layout.numel()];
        Ok(Tensor::from_checked(data, layout))
    }

    /// A rank-0 tensor holding `value`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let s = Tensor::scalar(2.0f64);
    /// assert_eq!((s.rank(), s.get(&[])), (0, Some(2.0)));
    /// ```
    pub fn scalar(value: T) -> Self {
        Tensor::from_checked(vec![value], Layout::default_scalar())
    }

    pub(crate) fn from_checked(data: Vec<T>, layout: Layout) -> Self {
        debug_assert!(layout.required_len() <= data.len());
        Tensor { data, layout, domain: AllocationDomain::Host, readiness: Readiness::Ready }
    }

    /// The length of each axis.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// Strides in elements.
    #[inline]
    pub fn strides(&self) -> &[usize] {
        self.layout.strides()
    }

    /// Storage position of the first element.
    #[inline]
    pub fn offset(&self) -> usize {
        self.layout.offset()
    }

    /// The full layout (shape, strides, offset).
    #[inline]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Number of axes.
    #[inline]
    pub fn rank(&self) -> usize {
        self.layout.rank()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.layout.numel()
    }

    /// True when the elements are dense in row-major order.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// The whole storage buffer, in storage order.
    ///
    /// For a tensor built by [`from_vec`](Tensor::from_vec) or [`zeros`](Tensor::zeros) this is
    /// exactly the elements in row-major order. For one built by
    /// [`from_parts`](Tensor::from_parts) it is the raw buffer; use [`read`](Tensor::read) to
    /// walk the logical elements.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The whole storage buffer, mutably (see [`as_slice`](Tensor::as_slice)).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// A borrowed view of the tensor: no copy.
    pub fn read(&self) -> TensorRead<'_, T> {
        TensorRead::from_checked(
            &self.data,
            Cow::Borrowed(&self.layout),
            self.domain,
            self.readiness,
        )
    }

    /// The element at `index`, or `None` when it is out of bounds or of the wrong rank.
    pub fn get(&self, index: &[usize]) -> Option<T> {
        self.layout.offset_of(index).and_then(|p| self.data.get(p).copied())
    }

    /// Who allocated the storage.
    #[inline]
    pub fn domain(&self) -> AllocationDomain {
        self.domain
    }

    /// Whether the elements may be read now.
    #[inline]
    pub fn readiness(&self) -> Readiness {
        self.readiness
    }

    /// The same tensor, marked as allocated by `domain`.
    #[must_use]
    pub fn with_domain(mut self, domain: AllocationDomain) -> Self {
        self.domain = domain;
        self
    }

    /// The same tensor, marked `readiness`.
    #[must_use]
    pub fn with_readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    /// Marks the elements written (or not) in place.
    pub fn set_readiness(&mut self, readiness: Readiness) {
        self.readiness = readiness;
    }

    /// The storage buffer and layout, giving up the tensor (for recycling the buffer).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let (buf, layout) = Tensor::<f64>::zeros([4]).into_parts();
    /// assert_eq!((buf.len(), layout.shape()), (4, &[4][..]));
    /// ```
    pub fn into_parts(self) -> (Vec<T>, Layout) {
        (self.data, self.layout)
    }

    /// The storage buffer, in storage order, without the layout: what a pool takes back
    /// when a tensor is spent (numpy has no owned buffer to hand back; this is
    /// [`into_parts`](Self::into_parts) without building the layout's copy).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::<f64>::from_parts(vec![1.0, 4.0, 2.0, 5.0], &[2, 2], &[1, 2], 0)?;
    /// assert_eq!(t.into_storage(), vec![1.0, 4.0, 2.0, 5.0]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    #[inline]
    pub fn into_storage(self) -> Vec<T> {
        self.data
    }

    /// The element count of `shape`, or `None` when it overflows `usize`.
    pub fn checked_numel(shape: &[usize]) -> Option<usize> {
        checked_numel(shape)
    }
}

impl<T: Element> Clone for Tensor<T> {
    /// Copies the storage; counted by [`copy_stats`](crate::copy_stats).
    fn clone(&self) -> Self {
        record_copy(self.data.len());
        Tensor {
            data: self.data.clone(),
            layout: self.layout.clone(),
            domain: self.domain,
            readiness: self.readiness,
        }
    }
}
