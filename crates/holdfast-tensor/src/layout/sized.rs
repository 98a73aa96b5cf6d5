//! [`SizedLayout`]: a layout with the storage length it needs computed once, for code that
//! builds many tensors of one layout (a prepared plan's output, on every operation).
//!
//! # The copy
//!
//! A tensor built from a `SizedLayout` takes a copy of its layout. When neither axis list has
//! spilled to the heap (at most `INLINE_AXES` axes), the layout owns no heap memory, and the
//! copy is a bitwise copy of the whole value: one fixed-size move from the plan into the new
//! tensor. Building it field by field instead (`SmallVec`'s inline buffer after its length)
//! goes through stack temporaries that the next move of the tensor reads back at other offsets,
//! and each such read waits for the stores before it to reach the cache. A spilled layout is
//! cloned.

use super::Layout;
use crate::Element;
use crate::TensorError;
use crate::tensor::Tensor;

/// A [`Layout`] together with its [`required_len`](Layout::required_len), computed once when
/// it is made: [`Tensor::from_sized_layout`] then checks a buffer against it in one comparison
/// instead of walking the axes.
///
/// Invariant: `required` is the layout's required length, and `inline` is true exactly when
/// neither of the layout's axis lists has spilled to the heap; the fields are private, set only
/// by [`SizedLayout::new`], and the layout is never changed after.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{Layout, SizedLayout, Tensor};
///
/// let sized = SizedLayout::new(Layout::contiguous(&[2, 3])?);
/// assert_eq!(sized.required_len(), 6);
/// assert_eq!(sized.layout().shape(), &[2, 3]);
/// let t = Tensor::from_sized_layout(vec![0.0f64; 6], &sized)?;
/// assert_eq!(t.shape(), &[2, 3]);
/// assert!(Tensor::from_sized_layout(vec![0.0f64; 5], &sized).is_err());
/// # Ok::<(), holdfast_tensor::TensorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SizedLayout {
    layout: Layout,
    required: usize,
    inline: bool,
}

impl SizedLayout {
    /// `layout` with its required storage length.
    ///
    /// # Examples
    ///
    /// See [`SizedLayout`].
    pub fn new(layout: Layout) -> Self {
        let required = layout.required_len();
        let inline = !layout.shape.spilled() && !layout.strides.spilled();
        SizedLayout { layout, required, inline }
    }

    /// A copy of the layout (module docs).
    #[inline]
    fn copy(&self) -> Layout {
        if self.inline {
            // SAFETY:
            // - The source is valid, aligned and initialised: it is a reference to a field.
            // - The copy owns nothing its source owns: `inline` says neither axis list has
            //   spilled (invariant, and the layout never changes), so the axes sit in
            //   `SmallVec`'s inline buffers, and `Layout`'s other field is `offset: usize`.
            //   Both values are dropped; an inline `SmallVec` of `usize` frees nothing, so
            //   nothing is freed twice.
            unsafe { std::ptr::read(&self.layout) }
        } else {
            self.layout.clone()
        }
    }

    /// The layout.
    ///
    /// # Examples
    ///
    /// See [`SizedLayout`].
    #[inline]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The storage length the layout needs (see [`Layout::required_len`]).
    ///
    /// # Examples
    ///
    /// See [`SizedLayout`].
    #[inline]
    pub fn required_len(&self) -> usize {
        self.required
    }
}

impl<T: Element> Tensor<T> {
    /// A tensor over `data` with a copy of `layout`'s layout: [`from_layout`](Tensor::from_layout)
    /// with the fit check reduced to one comparison.
    ///
    /// # Errors
    ///
    /// [`TensorError::StridesOutOfBounds`] when `data` is shorter than the layout needs.
    ///
    /// # Examples
    ///
    /// See [`SizedLayout`].
    #[inline]
    pub fn from_sized_layout(data: Vec<T>, layout: &SizedLayout) -> Result<Self, TensorError> {
        Self::from_sized_layout_with(data, layout, |e| e)
    }

    /// [`from_sized_layout`](Tensor::from_sized_layout), its error converted by `map_err` where
    /// it arises, so the tensor is built straight into the caller's result type: converting a
    /// returned `Result` afterwards would move the tensor from one result to the other.
    ///
    /// # Errors
    ///
    /// `map_err` of [`TensorError::StridesOutOfBounds`] when `data` is shorter than the layout
    /// needs.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_tensor::{Layout, SizedLayout, Tensor, TensorError};
    ///
    /// #[derive(Debug)]
    /// struct MyError(TensorError);
    ///
    /// let sized = SizedLayout::new(Layout::contiguous(&[2, 2])?);
    /// let t = Tensor::from_sized_layout_with(vec![1.0, 2.0, 3.0, 4.0], &sized, MyError);
    /// assert_eq!(t.map_err(|e| e.0)?.shape(), &[2, 2]);
    /// let short = Tensor::from_sized_layout_with(vec![1.0], &sized, MyError);
    /// assert!(matches!(short, Err(MyError(TensorError::StridesOutOfBounds { .. }))));
    /// # Ok::<(), TensorError>(())
    /// ```
    #[inline]
    pub fn from_sized_layout_with<E>(
        data: Vec<T>,
        layout: &SizedLayout,
        map_err: impl FnOnce(TensorError) -> E,
    ) -> Result<Self, E> {
        if data.len() < layout.required {
            // The general check builds the error.
            if let Err(e) = layout.layout.check_fits(data.len()) {
                return Err(map_err(e));
            }
        }
        Ok(Tensor::from_checked(data, layout.copy()))
    }
}
