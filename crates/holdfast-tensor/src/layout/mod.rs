//! [`Layout`]: shape, strides (in elements) and offset, with the arithmetic every view needs.
//!
//! # Invariant
//!
//! Every `Layout` value that exists has been checked: its element count and the largest storage
//! position it addresses both fit in `usize`. Operations that derive a layout (permute, slice,
//! broadcast) keep that invariant, so [`Layout::offset_of`] and iteration never overflow. Whether
//! the layout fits a particular storage buffer is a separate check ([`Layout::check_fits`]), made
//! once when a tensor or view is built.

mod reshape;
mod sized;
#[cfg(test)]
mod tests;

pub use sized::SizedLayout;

use std::ops::Range;

use smallvec::SmallVec;

use crate::TensorError;

/// An axis list (shape or strides). Inline up to six axes, so views of ordinary tensors never
/// allocate.
pub type Dims = SmallVec<[usize; INLINE_AXES]>;

/// The axes [`Dims`] keeps inline. Layouts of at most this many axes are also built from fixed
/// arrays ([`Layout::from_arrays`]), which compiles to whole-array moves where a copy of a
/// slice of unknown length calls `memcpy`.
pub(crate) const INLINE_AXES: usize = 6;

/// Shape, strides and offset of a tensor or view, in elements.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::Layout;
///
/// let l = Layout::contiguous(&[2, 3, 4])?;
/// assert_eq!(l.strides(), &[12, 4, 1]);
/// assert_eq!(l.offset_of(&[1, 2, 3]), Some(23));
/// let t = l.permuted(&[2, 0, 1])?;
/// assert_eq!(t.shape(), &[4, 2, 3]);
/// assert!(!t.is_contiguous());
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Dims,
    strides: Dims,
    offset: usize,
}

impl Clone for Layout {
    /// A copy of the axes as slices (`SmallVec`'s own `clone` extends element by element:
    /// several times slower for the handful of axes a layout has; outputs clone a prepared
    /// layout on every operation).
    #[inline]
    fn clone(&self) -> Self {
        Layout {
            shape: Dims::from_slice(&self.shape),
            strides: Dims::from_slice(&self.strides),
            offset: self.offset,
        }
    }
}

impl Layout {
    /// The row-major contiguous layout of `shape`, at offset 0.
    ///
    /// # Errors
    ///
    /// [`TensorError::ShapeOverflow`] when the element count (or any row-major stride) does not
    /// fit in `usize`. Zero-sized dimensions are valid and give zero elements.
    #[inline]
    pub fn contiguous(shape: &[usize]) -> Result<Self, TensorError> {
        Self::contiguous_counted(shape).map(|(layout, _)| layout)
    }

    /// [`contiguous`](Self::contiguous) and its element count, which the stride loop computes
    /// anyway (see [`row_major`](Self::row_major)).
    #[inline]
    pub(crate) fn contiguous_counted(shape: &[usize]) -> Result<(Self, usize), TensorError> {
        match Self::row_major(shape) {
            (layout, Some(count)) => Ok((layout, count)),
            (_, None) => Err(overflow(shape)),
        }
    }

    /// The row-major contiguous layout of this layout's shape, at offset 0: the layout numpy's
    /// `empty_like(a, order='C')` gives, and every elementwise output has.
    ///
    /// It cannot fail: this layout's element count was checked when it was made, so every
    /// row-major stride of a non-empty shape fits. An empty shape's strides address nothing
    /// and saturate instead of overflowing.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Layout;
    ///
    /// let t = Layout::contiguous(&[2, 3])?.permuted(&[1, 0])?;
    /// assert_eq!(t.strides(), &[1, 3]);
    /// let dense = t.contiguous_like();
    /// assert_eq!((dense.shape(), dense.strides(), dense.offset()), (&[3, 2][..], &[2, 1][..], 0));
    /// assert_eq!(dense, Layout::contiguous(&[3, 2])?);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contiguous_like(&self) -> Layout {
        Self::row_major(&self.shape).0
    }

    /// The row-major layout of `shape` at offset 0, and its element count: `None` when the
    /// count or a stride overflows `usize` (the strides past it are then `usize::MAX`). The one
    /// stride loop of
    /// [`contiguous`](Self::contiguous) and [`contiguous_like`](Self::contiguous_like).
    ///
    /// Up to six axes (`Dims`' inline capacity) the loop runs over every inline slot, a fixed
    /// length: a loop to the rank compiles to calls to `memset` and `memcpy`, which cost more
    /// than the whole layout for a few axes, and every elementwise output is laid out here.
    #[inline(always)]
    fn row_major(shape: &[usize]) -> (Layout, Option<usize>) {
        let rank = shape.len();
        let mut acc = Some(1usize);
        if rank <= INLINE_AXES {
            let (mut dims, mut strides) = ([0; INLINE_AXES], [0; INLINE_AXES]);
            for i in (0..INLINE_AXES).rev() {
                if let Some(&dim) = shape.get(i) {
                    dims[i] = dim;
                    strides[i] = acc.unwrap_or(usize::MAX);
                    acc = acc.and_then(|a| a.checked_mul(dim));
                }
            }
            return (Layout::from_arrays(rank, &dims, &strides, 0), acc);
        }
        let mut strides: Dims = SmallVec::from_elem(0, rank);
        for (stride, &dim) in strides.iter_mut().zip(shape).rev() {
            *stride = acc.unwrap_or(usize::MAX);
            acc = acc.and_then(|a| a.checked_mul(dim));
        }
        (Layout { shape: Dims::from_slice(shape), strides, offset: 0 }, acc)
    }

    /// A layout with explicit strides and offset.
    ///
    /// # Errors
    ///
    /// [`TensorError::RankMismatch`] when `shape` and `strides` differ in length;
    /// [`TensorError::ShapeOverflow`] when the element count or the largest addressed position
    /// does not fit in `usize`.
    pub fn new(shape: &[usize], strides: &[usize], offset: usize) -> Result<Self, TensorError> {
        if shape.len() != strides.len() {
            return Err(TensorError::RankMismatch {
                shape_rank: shape.len(),
                strides_rank: strides.len(),
            });
        }
        checked_numel(shape).ok_or_else(|| overflow(shape))?;
        let layout = Layout {
            shape: SmallVec::from_slice(shape),
            strides: SmallVec::from_slice(strides),
            offset,
        };
        layout.checked_extent().ok_or_else(|| overflow(shape))?;
        Ok(layout)
    }

    /// The first `rank` (at most [`INLINE_AXES`]) entries of `shape` and `strides`, at `offset`.
    /// The caller keeps the invariant (module docs): the axes come from a checked layout or
    /// were checked by the caller.
    ///
    /// Each list is made whole from its array and then cut to `rank`: the array is stored once,
    /// into the list. `SmallVec::from_buf_and_len` stores it into a temporary first, which the
    /// next move of the layout reads back across two narrower stores, waiting for them to reach
    /// the cache (see `sized`).
    #[inline]
    pub(crate) fn from_arrays(
        rank: usize,
        shape: &[usize; INLINE_AXES],
        strides: &[usize; INLINE_AXES],
        offset: usize,
    ) -> Self {
        debug_assert!(rank <= INLINE_AXES);
        let (mut shape, mut strides) = (Dims::from_buf(*shape), Dims::from_buf(*strides));
        shape.truncate(rank);
        strides.truncate(rank);
        Layout { shape, strides, offset }
    }

    /// The layout of a rank-0 (scalar) tensor: one element at offset 0.
    pub fn default_scalar() -> Self {
        Layout { shape: SmallVec::new(), strides: SmallVec::new(), offset: 0 }
    }

    /// The length of each axis.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The step, in elements, between neighbours along each axis (0 for a broadcast axis).
    #[inline]
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Storage position of the first element.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of axes.
    #[inline]
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (1 for rank 0; 0 when any axis is empty).
    #[inline]
    pub fn numel(&self) -> usize {
        // Invariant (module docs): the product was checked at construction.
        self.shape.iter().product()
    }

    /// True when the elements are dense in row-major order (axes of length 1 may carry any
    /// stride; an empty layout is contiguous).
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.dense_len().is_some()
    }

    /// The element count when the layout [is contiguous](Self::is_contiguous), found in one
    /// pass over the axes; `None` otherwise.
    #[inline]
    pub(crate) fn dense_len(&self) -> Option<usize> {
        let mut expected = 1;
        let mut dense = true;
        for (&dim, &stride) in self.shape.iter().zip(&self.strides).rev() {
            if dim == 0 {
                return Some(0);
            }
            dense &= dim == 1 || stride == expected;
            expected *= dim;
        }
        dense.then_some(expected)
    }

    /// Storage position of the element at `index`, or `None` when `index` has the wrong rank or
    /// is out of bounds.
    pub fn offset_of(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.rank() {
            return None;
        }
        let mut pos = self.offset;
        for ((&i, &dim), &stride) in index.iter().zip(&self.shape).zip(&self.strides) {
            if i >= dim {
                return None;
            }
            // Cannot overflow: bounded by the extent checked at construction.
            pos += i * stride;
        }
        Some(pos)
    }

    /// The storage length this layout needs: one past the largest addressed position
    /// (0 when the layout has no elements).
    pub fn required_len(&self) -> usize {
        // Invariant (module docs): the extent was checked at construction.
        self.checked_extent().unwrap_or(usize::MAX)
    }

    /// Checks that every addressed position lies inside a storage of `len` elements.
    ///
    /// # Errors
    ///
    /// [`TensorError::StridesOutOfBounds`] when it does not.
    pub fn check_fits(&self, len: usize) -> Result<(), TensorError> {
        if self.required_len() <= len {
            Ok(())
        } else {
            Err(TensorError::StridesOutOfBounds {
                shape: self.shape.to_vec(),
                strides: self.strides.to_vec(),
                offset: self.offset,
                len,
            })
        }
    }

    /// The layout with its axes reordered: axis `i` of the result is axis `perm[i]` of `self`.
    ///
    /// # Errors
    ///
    /// [`TensorError::InvalidPermutation`] unless `perm` names every axis exactly once.
    pub fn permuted(&self, perm: &[usize]) -> Result<Self, TensorError> {
        let rank = self.rank();
        let invalid = || TensorError::InvalidPermutation { perm: perm.to_vec(), rank };
        if perm.len() != rank {
            return Err(invalid());
        }
        let mut seen: SmallVec<[bool; 16]> = SmallVec::from_elem(false, rank);
        for &p in perm {
            match seen.get_mut(p) {
                Some(s) if !*s => *s = true,
                _ => return Err(invalid()),
            }
        }
        Ok(Layout {
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        })
    }

    /// The layout with its axes in reverse order (numpy's `.T`).
    pub fn reversed(&self) -> Self {
        Layout {
            shape: self.shape.iter().rev().copied().collect(),
            strides: self.strides.iter().rev().copied().collect(),
            offset: self.offset,
        }
    }

    /// The sub-layout of `range` along `axis`.
    ///
    /// # Errors
    ///
    /// [`TensorError::AxisOutOfRange`] or [`TensorError::SliceOutOfRange`].
    pub fn sliced(&self, axis: usize, range: Range<usize>) -> Result<Self, TensorError> {
        let rank = self.rank();
        let len = *self.shape.get(axis).ok_or(TensorError::AxisOutOfRange { axis, rank })?;
        if range.start > range.end || range.end > len {
            return Err(TensorError::SliceOutOfRange {
                axis,
                start: range.start,
                end: range.end,
                len,
            });
        }
        let mut out = self.clone();
        out.shape[axis] = range.end - range.start;
        if range.start < range.end {
            // In bounds of the checked extent, so no overflow.
            out.offset += range.start * self.strides[axis];
        }
        Ok(out)
    }

    /// The layout broadcast to `shape` under numpy's rules: axes are aligned at the end, an axis
    /// of length 1 (or a missing leading axis) repeats with stride 0.
    ///
    /// # Errors
    ///
    /// [`TensorError::BroadcastMismatch`] when an axis is neither equal nor 1, or `shape` has
    /// fewer axes; [`TensorError::ShapeOverflow`] when `shape` holds more than `usize::MAX`
    /// elements.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self, TensorError> {
        let mismatch =
            || TensorError::BroadcastMismatch { from: self.shape.to_vec(), to: shape.to_vec() };
        if shape.len() < self.rank() {
            return Err(mismatch());
        }
        checked_numel(shape).ok_or_else(|| overflow(shape))?;
        let lead = shape.len() - self.rank();
        let mut strides: Dims = SmallVec::from_elem(0, shape.len());
        for (i, (&dim, &stride)) in self.shape.iter().zip(&self.strides).enumerate() {
            let target = shape[lead + i];
            if dim == target {
                strides[lead + i] = if dim == 1 { 0 } else { stride };
            } else if dim != 1 {
                return Err(mismatch());
            }
        }
        Ok(Layout { shape: SmallVec::from_slice(shape), strides, offset: self.offset })
    }

    /// One past the largest addressed position, or `None` on overflow; 0 for no elements.
    fn checked_extent(&self) -> Option<usize> {
        if self.shape.contains(&0) {
            return Some(0);
        }
        let mut last = self.offset;
        for (&dim, &stride) in self.shape.iter().zip(&self.strides) {
            last = last.checked_add((dim - 1).checked_mul(stride)?)?;
        }
        last.checked_add(1)
    }
}

/// The product of `shape`, or `None` on overflow.
pub(crate) fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

fn overflow(shape: &[usize]) -> TensorError {
    TensorError::ShapeOverflow { shape: shape.to_vec() }
}
