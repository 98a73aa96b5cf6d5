//! [`SizedLayout`]: a layout with the storage length it needs computed once, for code that
//! builds many tensors of one layout (a prepared plan's output, on every operation).
//!
//! A layout of at most `INLINE_AXES` axes is also kept as two fixed arrays: a tensor's copy is
//! then built from them by whole-array moves, where cloning the layout's axis lists copies as
//! many elements as they hold, through a call to `memcpy` each.

use super::{INLINE_AXES, Layout};
use crate::Element;
use crate::TensorError;
use crate::tensor::Tensor;

/// A [`Layout`] together with its [`required_len`](Layout::required_len), computed once when
/// it is made: [`Tensor::from_sized_layout`] then checks a buffer against it in one comparison
/// instead of walking the axes.
///
/// Invariant: `required` is the layout's required length, and `inline` (when present) holds the
/// layout's rank and its shape and strides padded with zeros; the fields are private and set
/// only by [`SizedLayout::new`].
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
    inline: Option<Inline>,
}

/// A layout of at most [`INLINE_AXES`] axes as fixed arrays: rank, shape and strides.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Inline {
    rank: usize,
    shape: [usize; INLINE_AXES],
    strides: [usize; INLINE_AXES],
}

impl Inline {
    fn of(layout: &Layout) -> Option<Inline> {
        let rank = layout.rank();
        if rank > INLINE_AXES {
            return None;
        }
        let (mut shape, mut strides) = ([0; INLINE_AXES], [0; INLINE_AXES]);
        shape[..rank].copy_from_slice(layout.shape());
        strides[..rank].copy_from_slice(layout.strides());
        Some(Inline { rank, shape, strides })
    }

    #[inline]
    fn layout(&self, offset: usize) -> Layout {
        Layout::from_arrays(self.rank, &self.shape, &self.strides, offset)
    }
}

impl SizedLayout {
    /// `layout` with its required storage length.
    ///
    /// # Examples
    ///
    /// See [`SizedLayout`].
    pub fn new(layout: Layout) -> Self {
        let required = layout.required_len();
        let inline = Inline::of(&layout);
        SizedLayout { layout, required, inline }
    }

    /// A copy of the layout: from the fixed arrays when it has them.
    #[inline]
    fn copy(&self) -> Layout {
        match &self.inline {
            Some(inline) => inline.layout(self.layout.offset()),
            None => self.layout.clone(),
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
        if data.len() < layout.required {
            // The general check builds the error.
            layout.layout.check_fits(data.len())?;
        }
        Ok(Tensor::from_checked(data, layout.copy()))
    }
}
