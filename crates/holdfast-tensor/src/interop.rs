//! ndarray interop (SPEC T7, the `ndarray` feature): views and arrays in, arrays out, without a
//! copy wherever the layouts allow.
//!
//! | conversion | copy |
//! |---|---|
//! | [`TensorRead::from_ndarray`] (an `ArrayView`) | never; a view that is not one contiguous block of memory, or has a negative stride, is a typed error naming the fix |
//! | [`TensorRead::to_ndarray`] (an `ArrayViewD`) | never |
//! | [`Tensor::from_ndarray`] (an owned `Array`) | none in standard (row-major) layout; otherwise one, counted by [`copy_stats`](crate::copy_stats) |
//! | [`Tensor::into_ndarray`] (an `ArrayD`) | none for a dense row-major tensor; otherwise one, counted |
//!
//! A borrowed view needs its elements as one `&[T]`: ndarray hands that out safely only for a
//! view that is contiguous in memory (in any axis order), and a view with gaps may come from
//! memory the gaps do not belong to, so no slice over them is made. Strides of axes of length
//! 0 or 1 address nothing and are taken as 0.

use ndarray::{Array, ArrayD, ArrayView, ArrayViewD, Dimension, IxDyn, ShapeBuilder};

use crate::{Element, Layout, Tensor, TensorError, TensorRead, record_copy};

/// `strides` as holdfast's, or the first negative one.
fn unsigned_strides(shape: &[usize], strides: &[isize]) -> Result<Vec<usize>, TensorError> {
    shape
        .iter()
        .zip(strides)
        .enumerate()
        .map(|(axis, (&len, &stride))| match usize::try_from(stride) {
            _ if len <= 1 => Ok(0),
            Ok(s) => Ok(s),
            Err(_) => Err(TensorError::NdarrayNegativeStride { axis, stride }),
        })
        .collect()
}

impl<'a, T: Element> TensorRead<'a, T> {
    /// A view of `view`'s elements, without a copy.
    ///
    /// # Errors
    ///
    /// [`TensorError::NdarrayNegativeStride`] for a view with a reversed axis;
    /// [`TensorError::NdarrayNotContiguous`] for a view whose elements are not one block of
    /// memory (a stepped slice, say): both name the fix.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::TensorRead;
    /// use ndarray::{Array2, s};
    ///
    /// let a = Array2::from_shape_fn((2, 3), |(i, j)| (i * 3 + j) as f64);
    /// let t = TensorRead::from_ndarray(a.t())?; // the transpose: strides [1, 3], no copy
    /// assert_eq!((t.shape(), t.strides()), (&[3, 2][..], &[1, 3][..]));
    /// assert_eq!(t.get(&[2, 1]), Some(5.0));
    /// assert!(TensorRead::from_ndarray(a.slice(s![.., ..;2])).is_err(), "a stepped slice");
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    #[allow(
        clippy::needless_pass_by_value,
        reason = "views are taken by value, as ndarray's own functions and the operation API take them"
    )]
    pub fn from_ndarray<D: Dimension>(view: ArrayView<'a, T, D>) -> Result<Self, TensorError> {
        let shape = view.shape().to_vec();
        let strides = unsigned_strides(&shape, view.strides())?;
        let signed = view.strides().to_vec();
        let data = view
            .to_slice_memory_order()
            .ok_or(TensorError::NdarrayNotContiguous { shape: shape.clone(), strides: signed })?;
        // Every stride is non-negative, so the first element is the lowest address: offset 0.
        TensorRead::from_layout(data, Layout::new(&shape, &strides, 0)?)
    }

    /// This view as an ndarray view of the same elements, without a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::Tensor;
    ///
    /// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let v = t.read().transpose().to_ndarray();
    /// assert_eq!(v[[0, 1]], 3.0);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn to_ndarray(&self) -> ArrayViewD<'a, T> {
        let storage = self.storage();
        let shape = IxDyn(self.shape()).strides(IxDyn(self.strides()));
        // A valid view's elements lie inside its storage from its offset on (its layout was
        // checked against the storage when it was made), so ndarray's own check passes.
        match ArrayView::from_shape(shape, &storage[self.offset().min(storage.len())..]) {
            Ok(view) => view,
            Err(_) => unreachable_layout(),
        }
    }
}

/// A checked layout that ndarray refuses: a broken invariant of this crate.
#[cold]
fn unreachable_layout() -> ! {
    unreachable!("a checked holdfast layout is a valid ndarray layout")
}

impl<T: Element> Tensor<T> {
    /// A tensor owning `array`'s elements: its buffer as it is when the array is in standard
    /// (row-major) layout, else one counted copy into row-major order.
    ///
    /// # Errors
    ///
    /// Only if the array's own buffer did not hold its elements (never for an `Array`).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Tensor, copy_stats};
    /// use ndarray::Array2;
    ///
    /// let before = copy_stats();
    /// let a = Array2::from_shape_fn((2, 3), |(i, j)| (i * 3 + j) as f64);
    /// let t = Tensor::from_ndarray(a)?;
    /// assert_eq!((t.shape(), t.get(&[1, 2])), (&[2, 3][..], Some(5.0)));
    /// assert_eq!(copy_stats(), before, "standard layout: no copy");
    /// let f = Tensor::from_ndarray(Array2::from_shape_fn((2, 3), |(i, j)| (i + j) as f64).reversed_axes())?;
    /// assert_eq!(copy_stats().copies, before.copies + 1, "column-major: one copy");
    /// assert_eq!(f.shape(), &[3, 2]);
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn from_ndarray<D: Dimension>(array: Array<T, D>) -> Result<Self, TensorError> {
        let shape = array.shape().to_vec();
        if !array.is_standard_layout() {
            record_copy(array.len());
            return Tensor::from_vec(shape, array.iter().copied().collect());
        }
        let contiguous = Layout::contiguous(&shape)?;
        let (data, offset) = array.into_raw_vec_and_offset();
        let layout = Layout::new(&shape, contiguous.strides(), offset.unwrap_or(0))?;
        Tensor::from_layout(data, layout)
    }

    /// This tensor as an owned ndarray array: its buffer as it is for a dense row-major tensor
    /// starting at its buffer's first element, else one counted copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Tensor, copy_stats};
    ///
    /// let t = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let before = copy_stats();
    /// let a = t.into_ndarray();
    /// assert_eq!((a.shape(), a[[1, 0]]), (&[2, 2][..], 3.0));
    /// assert_eq!(copy_stats(), before, "no copy");
    /// # Ok::<(), holdfast_tensor::TensorError>(())
    /// ```
    pub fn into_ndarray(self) -> ArrayD<T> {
        let dense = self.is_contiguous() && self.offset() == 0;
        let shape = self.shape().to_vec();
        let numel = self.numel();
        let data = if dense {
            let (mut data, _) = self.into_parts();
            // A pooled buffer may be longer than the tensor: the tail is dropped, not copied.
            data.truncate(numel);
            data
        } else {
            record_copy(numel);
            self.read().to_vec()
        };
        match ArrayD::from_shape_vec(IxDyn(&shape), data) {
            Ok(array) => array,
            Err(_) => unreachable_layout(),
        }
    }
}

#[cfg(test)]
mod tests;
