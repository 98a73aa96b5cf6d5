//! [`Layout::reshaped`]: a reshape as new strides over the same storage, when one exists.
//!
//! A reshape keeps the row-major order of the elements (numpy's default `order='C'`). It can be
//! a view exactly when every group of old axes that the new shape splits or merges is itself
//! one evenly strided run: within a group, each axis's stride is the next axis's stride times
//! the next axis's length. Axes of length 1 never constrain anything and are left out of the
//! grouping; a layout with no elements reshapes to anything of the same (zero) count.

use smallvec::SmallVec;

use super::{Dims, Layout, checked_numel};
use crate::TensorError;

impl Layout {
    /// The layout of the same elements, in the same row-major order, with shape `shape`: `Ok(Some)`
    /// when strides over the same storage express it, `Ok(None)` when only a copy can.
    ///
    /// # Errors
    ///
    /// [`TensorError::ReshapeSize`] when `shape` holds another number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Layout;
    ///
    /// let dense = Layout::contiguous(&[2, 3, 4])?;
    /// let merged = dense.reshaped(&[6, 4])?.expect("a dense layout reshapes freely");
    /// assert_eq!(merged.strides(), &[4, 1]);
    /// // The transpose of a matrix cannot be flattened without a copy.
    /// let t = Layout::contiguous(&[2, 3])?.reversed();
    /// assert_eq!(t.reshaped(&[6])?, None);
    /// // ... but splitting one of its axes can.
    /// assert_eq!(t.reshaped(&[3, 2, 1])?.map(|l| l.strides().to_vec()), Some(vec![1, 3, 1]));
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn reshaped(&self, shape: &[usize]) -> Result<Option<Layout>, TensorError> {
        let numel = self.numel();
        let to_numel = checked_numel(shape).unwrap_or(usize::MAX);
        if to_numel != numel || checked_numel(shape).is_none() {
            return Err(TensorError::ReshapeSize {
                from: self.shape().to_vec(),
                from_numel: numel,
                to: shape.to_vec(),
                to_numel,
            });
        }
        if numel == 0 {
            // No element is addressed: any strides will do; keep the offset.
            let mut dense = Layout::contiguous(shape)?;
            dense.offset = self.offset;
            return Ok(Some(dense));
        }
        let old: SmallVec<[(usize, usize); 6]> = self
            .shape()
            .iter()
            .zip(self.strides())
            .filter(|(dim, _)| **dim != 1)
            .map(|(&dim, &stride)| (dim, stride))
            .collect();
        let mut strides: Dims = SmallVec::from_elem(1, shape.len());
        let (mut oi, mut ni) = (0, 0);
        while oi < old.len() {
            // The smallest groups old[oi..oj] and shape[ni..nj] with equal products. Both lists
            // hold `numel` elements and old lengths are at least 2, so the indices stay in range.
            let (mut op, mut np) = (old[oi].0, shape[ni]);
            let (mut oj, mut nj) = (oi + 1, ni + 1);
            while op != np {
                if np < op {
                    np *= shape[nj];
                    nj += 1;
                } else {
                    op *= old[oj].0;
                    oj += 1;
                }
            }
            if old[oi..oj].windows(2).any(|w| w[0].1 != w[1].1 * w[1].0) {
                return Ok(None);
            }
            strides[nj - 1] = old[oj - 1].1;
            for k in (ni..nj - 1).rev() {
                strides[k] = strides[k + 1] * shape[k + 1];
            }
            (oi, ni) = (oj, nj);
        }
        // What is left of `shape` are axes of length 1 (the products are already equal).
        Ok(Some(Layout { shape: SmallVec::from_slice(shape), strides, offset: self.offset }))
    }
}
