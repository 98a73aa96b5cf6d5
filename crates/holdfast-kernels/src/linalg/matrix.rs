//! [`Matrix`]: a tensor read as a dense row-major matrix over a bipartition of its axes.
//!
//! The rows are the `left` axes in the order given, the columns the remaining axes in their
//! order. When the permuted view is already dense row-major its storage is used in place;
//! otherwise it is copied once into a buffer of the caller's allocator, which [`Matrix::finish`]
//! hands back (or [`Matrix::into_owned`] gives to the caller as a work buffer).

use holdfast_tensor::{Dims, Element, TensorRead};
use smallvec::SmallVec;

use crate::{KernelAlloc, KernelError, Par, permute};

/// The data of a [`Matrix`]: borrowed from the operand, or a dense copy.
enum Data<'a, T> {
    Borrowed(&'a [T]),
    Owned(Vec<T>),
}

/// A tensor as an `m × n` row-major matrix, with the dimensions of its two sides.
pub(super) struct Matrix<'a, T> {
    data: Data<'a, T>,
    pub(super) m: usize,
    pub(super) n: usize,
    /// Dimensions of the row axes, in the order asked for.
    pub(super) left: Dims,
    /// Dimensions of the column axes, in their tensor order.
    pub(super) right: Dims,
}

impl<'a, T: Element> Matrix<'a, T> {
    /// `a` with rows over `left_axes` and columns over its other axes.
    ///
    /// # Errors
    ///
    /// [`KernelError::AxisOutOfRange`] or [`KernelError::DuplicateAxis`] for a bad bipartition.
    pub(super) fn of<A: KernelAlloc + ?Sized>(
        a: TensorRead<'a, T>,
        left_axes: &[usize],
        alloc: &mut A,
        par: Par,
    ) -> Result<Self, KernelError> {
        let rank = a.rank();
        let mut is_left: SmallVec<[bool; 8]> = SmallVec::from_elem(false, rank);
        for &axis in left_axes {
            match is_left.get_mut(axis) {
                None => return Err(KernelError::AxisOutOfRange { axis, rank }),
                Some(seen) if *seen => return Err(KernelError::DuplicateAxis { axis }),
                Some(seen) => *seen = true,
            }
        }
        let mut perm: SmallVec<[usize; 8]> = SmallVec::from_slice(left_axes);
        perm.extend((0..rank).filter(|&axis| !is_left[axis]));
        let shape = a.shape();
        let left: Dims = left_axes.iter().map(|&axis| shape[axis]).collect();
        let right: Dims = perm[left_axes.len()..].iter().map(|&axis| shape[axis]).collect();
        let (m, n) = (left.iter().product(), right.iter().product());
        let view = a.clone().permute(&perm)?;
        let data = match view.contiguous_slice() {
            Some(slice) => Data::Borrowed(slice),
            None => Data::Owned(permute::permute(a, &perm, alloc, par)?.into_parts().0),
        };
        Ok(Matrix { data, m, n, left, right })
    }

    /// The `m·n` elements, row-major.
    pub(super) fn as_slice(&self) -> &[T] {
        match &self.data {
            Data::Borrowed(slice) => slice,
            Data::Owned(vec) => vec,
        }
    }

    /// The elements as a buffer the caller may overwrite: the dense copy when there is one,
    /// else a new copy from `alloc`.
    pub(super) fn into_owned<A: KernelAlloc + ?Sized>(self, alloc: &mut A) -> Vec<T> {
        match self.data {
            Data::Owned(vec) => vec,
            Data::Borrowed(slice) => {
                let mut buf = alloc.take(slice.len());
                buf.copy_from_slice(slice);
                holdfast_tensor::record_copy(slice.len());
                buf
            }
        }
    }

    /// The square matrix with its diagonal's imaginary parts dropped (a dense copy only when
    /// one is not zero): what a Hermitian eigensolver reads, as numpy's `eigh` does. faer's
    /// tridiagonalisation would otherwise take them in.
    pub(super) fn with_real_diagonal<A: KernelAlloc + ?Sized>(self, alloc: &mut A) -> Self {
        let n = self.n;
        let data = self.as_slice();
        if self.m != n || (0..n).all(|i| data[i * n + i].im() == T::Real::ZERO) {
            return self;
        }
        let (m, left, right) = (self.m, self.left.clone(), self.right.clone());
        let mut data = self.into_owned(alloc);
        for i in 0..n {
            data[i * n + i] = T::from_f64(data[i * n + i].re_f64());
        }
        Matrix { data: Data::Owned(data), m, n, left, right }
    }

    /// Hands a dense copy back to `alloc`.
    pub(super) fn finish<A: KernelAlloc + ?Sized>(self, alloc: &mut A) {
        if let Data::Owned(vec) = self.data {
            alloc.give(vec);
        }
    }
}

/// `dims` followed by `last`.
pub(super) fn with_last(dims: &[usize], last: usize) -> Dims {
    let mut out: Dims = SmallVec::from_slice(dims);
    out.push(last);
    out
}

/// `first` followed by `dims`.
pub(super) fn with_first(first: usize, dims: &[usize]) -> Dims {
    let mut out: Dims = SmallVec::with_capacity(dims.len() + 1);
    out.push(first);
    out.extend_from_slice(dims);
    out
}
