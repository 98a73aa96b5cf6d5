//! [`TensorRead<'a, T>`]: a borrowed, strided view of tensor storage.
//!
//! A view is a storage slice plus a checked [`Layout`] that fits it, plus the storage facts. Every
//! view operation (permute, transpose, slice, broadcast) builds a new layout over the same slice:
//! no element is copied and the copy counter does not move. Only [`TensorRead::to_tensor`],
//! [`TensorRead::to_vec`] and [`TensorRead::copy_into`] copy, and they count it.

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::ops::Range;

use smallvec::SmallVec;

use crate::{AllocationDomain, Element, Layout, Readiness, Tensor, TensorError, record_copy};

/// A borrowed view of tensor elements with its own shape, strides and offset.
///
/// Made by [`Tensor::read`] or [`TensorRead::from_slice`]; cloning a view clones only its layout
/// (inline up to six axes, so no allocation).
///
/// # Examples
///
/// ```
/// use holdfast_tensor::Tensor;
///
/// let t = Tensor::<f64>::from_vec([2, 3], (0..6).map(f64::from).collect())?;
/// let v = t.read().permute(&[1, 0])?; // 3×2, no copy
/// assert_eq!(v.shape(), &[3, 2]);
/// assert_eq!(v.to_vec(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[derive(Debug, Clone)]
pub struct TensorRead<'a, T> {
    data: &'a [T],
    /// Borrowed from the tensor for a plain [`Tensor::read`] (free to make and to clone); owned
    /// once a view operation derives a new layout.
    layout: Cow<'a, Layout>,
    domain: AllocationDomain,
    readiness: Readiness,
}

impl<'a, T: Element> TensorRead<'a, T> {
    /// A row-major view of `shape` over `data` (host memory, ready).
    ///
    /// # Errors
    ///
    /// [`TensorError::ShapeOverflow`], or [`TensorError::DataLengthMismatch`] when `data.len()`
    /// is not the shape's product.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::TensorRead;
    ///
    /// let data = [1.0f32, 2.0, 3.0, 4.0];
    /// let v = TensorRead::from_slice(&[2, 2], &data)?;
    /// assert_eq!(v.get(&[1, 1]), Some(4.0));
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn from_slice(shape: &[usize], data: &'a [T]) -> Result<Self, TensorError> {
        let layout = Layout::contiguous(shape)?;
        if layout.numel() != data.len() {
            return Err(TensorError::DataLengthMismatch {
                shape: shape.to_vec(),
                expected: layout.numel(),
                actual: data.len(),
            });
        }
        Ok(Self::from_checked(data, Cow::Owned(layout), AllocationDomain::Host, Readiness::Ready))
    }

    /// A view of `data` through `layout` (host memory, ready).
    ///
    /// # Errors
    ///
    /// [`TensorError::StridesOutOfBounds`] when `layout` addresses past `data`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Layout, TensorRead};
    ///
    /// let data = [1.0f64, 2.0, 3.0, 4.0];
    /// let every_other = TensorRead::from_layout(&data, Layout::new(&[2], &[2], 1)?)?;
    /// assert_eq!(every_other.to_vec(), vec![2.0, 4.0]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn from_layout(data: &'a [T], layout: Layout) -> Result<Self, TensorError> {
        layout.check_fits(data.len())?;
        Ok(Self::from_checked(data, Cow::Owned(layout), AllocationDomain::Host, Readiness::Ready))
    }

    pub(crate) fn from_checked(
        data: &'a [T],
        layout: Cow<'a, Layout>,
        domain: AllocationDomain,
        readiness: Readiness,
    ) -> Self {
        debug_assert!(layout.required_len() <= data.len());
        TensorRead { data, layout, domain, readiness }
    }

    /// The length of each axis.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// Strides in elements (0 along a broadcast axis).
    #[inline]
    pub fn strides(&self) -> &[usize] {
        self.layout.strides()
    }

    /// Storage position of the first element.
    #[inline]
    pub fn offset(&self) -> usize {
        self.layout.offset()
    }

    /// The full layout.
    #[inline]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// True when this view's layout is borrowed from its tensor (a plain [`Tensor::read`]) rather
    /// than derived; such a view cost nothing to make.
    pub fn borrows_layout(&self) -> bool {
        matches!(self.layout, Cow::Borrowed(_))
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

    /// True when the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.numel() == 0
    }

    /// The whole borrowed storage slice (the view addresses part of it through its layout).
    #[inline]
    pub fn storage(&self) -> &'a [T] {
        self.data
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

    /// True when the elements are dense in row-major order.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// The elements as one row-major slice, when the view is contiguous; no copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// assert_eq!(t.read().contiguous_slice(), Some(&[1.0, 2.0, 3.0, 4.0][..]));
    /// assert_eq!(t.read().transpose().contiguous_slice(), None);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    #[inline]
    pub fn contiguous_slice(&self) -> Option<&'a [T]> {
        let len = self.layout.dense_len()?;
        let start = if len == 0 { 0 } else { self.offset() };
        self.data.get(start..start + len)
    }

    /// The element at `index`, or `None` when it is out of bounds or of the wrong rank.
    pub fn get(&self, index: &[usize]) -> Option<T> {
        self.layout.offset_of(index).and_then(|p| self.data.get(p).copied())
    }

    /// The view with its axes reordered: axis `i` of the result is axis `perm[i]` of `self`.
    ///
    /// # Errors
    ///
    /// [`TensorError::InvalidPermutation`] unless `perm` names every axis once.
    pub fn permute(self, perm: &[usize]) -> Result<Self, TensorError> {
        let layout = self.layout.permuted(perm)?;
        Ok(TensorRead { layout: Cow::Owned(layout), ..self })
    }

    /// The view with shape `shape` over the same elements in the same row-major order (numpy's
    /// `reshape`), without a copy: the layout must allow it (see [`Layout::reshaped`]). A view
    /// that only a copy can reshape, such as a transposed matrix flattened, is an error; the
    /// operation view's `reshape` copies it once instead.
    ///
    /// # Errors
    ///
    /// [`TensorError::ReshapeSize`] when `shape` holds another number of elements;
    /// [`TensorError::ReshapeNeedsCopy`] when no strides over the storage express the reshape.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Tensor, TensorError};
    ///
    /// let t = Tensor::<f64>::from_vec([2, 3], (0..6).map(f64::from).collect())?;
    /// let flat = t.read().reshape(&[3, 2])?;
    /// assert_eq!(flat.get(&[2, 1]), Some(5.0));
    /// assert!(matches!(t.read().transpose().reshape(&[6]), Err(TensorError::ReshapeNeedsCopy { .. })));
    /// # Ok::<(), TensorError>(())
    /// ```
    pub fn reshape(self, shape: &[usize]) -> Result<Self, TensorError> {
        match self.layout.reshaped(shape)? {
            Some(layout) => Ok(TensorRead { layout: Cow::Owned(layout), ..self }),
            None => Err(TensorError::ReshapeNeedsCopy {
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
                to: shape.to_vec(),
            }),
        }
    }

    /// The view with its axes reversed (numpy's `.T`; for a matrix, the transpose).
    #[must_use]
    pub fn transpose(self) -> Self {
        let layout = self.layout.reversed();
        TensorRead { layout: Cow::Owned(layout), ..self }
    }

    /// The view with axes `a` and `b` exchanged.
    ///
    /// # Errors
    ///
    /// [`TensorError::AxisOutOfRange`] when either axis is not smaller than the rank.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::<f32>::zeros([2, 3, 4]);
    /// assert_eq!(t.read().swap_axes(0, 2)?.shape(), &[4, 3, 2]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn swap_axes(self, a: usize, b: usize) -> Result<Self, TensorError> {
        let rank = self.rank();
        for axis in [a, b] {
            if axis >= rank {
                return Err(TensorError::AxisOutOfRange { axis, rank });
            }
        }
        let mut perm: SmallVec<[usize; 8]> = (0..rank).collect();
        perm.swap(a, b);
        self.permute(&perm)
    }

    /// The sub-view of `range` along `axis` (the axis is kept, with the range's length).
    ///
    /// # Errors
    ///
    /// [`TensorError::AxisOutOfRange`] or [`TensorError::SliceOutOfRange`].
    pub fn slice(self, axis: usize, range: Range<usize>) -> Result<Self, TensorError> {
        let layout = self.layout.sliced(axis, range)?;
        Ok(TensorRead { layout: Cow::Owned(layout), ..self })
    }

    /// The view broadcast to `shape` under numpy's rules (repeated axes have stride 0).
    ///
    /// # Errors
    ///
    /// [`TensorError::BroadcastMismatch`] or [`TensorError::ShapeOverflow`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let row = Tensor::<f64>::from_vec([3], vec![1.0, 2.0, 3.0])?;
    /// let grid = row.read().broadcast_to(&[2, 3])?;
    /// assert_eq!(grid.to_vec(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn broadcast_to(self, shape: &[usize]) -> Result<Self, TensorError> {
        let layout = self.layout.broadcast_to(shape)?;
        Ok(TensorRead { layout: Cow::Owned(layout), ..self })
    }

    /// Iterates the elements in row-major logical order.
    pub fn iter(&self) -> TensorReadIter<'a, T> {
        TensorReadIter::new(self.data, self.layout.clone().into_owned())
    }

    /// Writes the elements in row-major logical order into `out`; counted as one copy.
    ///
    /// # Errors
    ///
    /// [`TensorError::DataLengthMismatch`] when `out.len()` differs from the element count.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let mut out = [0.0; 4];
    /// t.read().transpose().copy_into(&mut out)?;
    /// assert_eq!(out, [1.0, 3.0, 2.0, 4.0]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn copy_into(&self, out: &mut [T]) -> Result<(), TensorError> {
        if out.len() != self.numel() {
            return Err(TensorError::DataLengthMismatch {
                shape: self.shape().to_vec(),
                expected: self.numel(),
                actual: out.len(),
            });
        }
        record_copy(out.len());
        match self.contiguous_slice() {
            Some(src) => out.copy_from_slice(src),
            None => out.iter_mut().zip(self.iter()).for_each(|(o, v)| *o = v),
        }
        Ok(())
    }

    /// The elements in row-major logical order, as a new vector; counted as one copy.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = vec![T::ZERO; self.numel()];
        // Lengths agree by construction.
        let _ = self.copy_into(&mut out);
        out
    }

    /// A contiguous owned copy with the same shape, domain and readiness; counted as one copy.
    pub fn to_tensor(&self) -> Tensor<T> {
        let data = self.to_vec();
        match Tensor::from_shape_vec(self.shape(), data) {
            Ok(t) => t.with_domain(self.domain).with_readiness(self.readiness),
            // Unreachable: the shape's product was checked when this view's layout was built
            // and `data` has exactly that many elements.
            Err(_) => Tensor::scalar(T::ZERO),
        }
    }
}

impl<'a, T: Element> IntoIterator for &TensorRead<'a, T> {
    type Item = T;
    type IntoIter = TensorReadIter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over a view's elements in row-major logical order (see [`TensorRead::iter`]).
///
/// # Examples
///
/// ```
/// use holdfast_tensor::Tensor;
///
/// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let sum: f64 = t.read().transpose().iter().sum();
/// assert_eq!(sum, 10.0);
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[derive(Debug, Clone)]
pub struct TensorReadIter<'a, T> {
    data: &'a [T],
    layout: Layout,
    index: SmallVec<[usize; 6]>,
    pos: usize,
    remaining: usize,
}

impl<'a, T: Element> TensorReadIter<'a, T> {
    fn new(data: &'a [T], layout: Layout) -> Self {
        let remaining = layout.numel();
        let index = SmallVec::from_elem(0, layout.rank());
        let pos = layout.offset();
        TensorReadIter { data, layout, index, pos, remaining }
    }
}

impl<T: Element> Iterator for TensorReadIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.remaining == 0 {
            return None;
        }
        let value = self.data.get(self.pos).copied();
        self.remaining -= 1;
        if self.remaining > 0 {
            // Odometer step: bump the last axis, carrying into earlier ones.
            let shape = self.layout.shape();
            let strides = self.layout.strides();
            for axis in (0..self.index.len()).rev() {
                self.index[axis] += 1;
                self.pos += strides[axis];
                if self.index[axis] < shape[axis] {
                    break;
                }
                self.pos -= strides[axis] * shape[axis];
                self.index[axis] = 0;
            }
        }
        value
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T: Element> ExactSizeIterator for TensorReadIter<'_, T> {}
