//! [`TensorError`]: everything that can be wrong with a shape, a layout or a view request.
//!
//! Errors carry the values the caller passed, so a message says what was asked and why it cannot
//! be done. They allocate only when an error is actually built.

/// A shape, stride or view request that does not describe valid data.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{Tensor, TensorError};
///
/// let err = Tensor::<f32>::from_vec([2, 2], vec![1.0; 3]).unwrap_err();
/// assert!(matches!(err, TensorError::DataLengthMismatch { expected: 4, actual: 3, .. }));
/// assert_eq!(err.to_string(), "data has 3 elements but shape [2, 2] holds 4");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TensorError {
    /// The data vector's length differs from the product of the shape.
    #[error("data has {actual} elements but shape {shape:?} holds {expected}")]
    DataLengthMismatch {
        /// The requested shape.
        shape: Vec<usize>,
        /// Elements the shape holds.
        expected: usize,
        /// Elements the data has.
        actual: usize,
    },
    /// The product of the shape (or the extent of the strides) does not fit in `usize`.
    #[error("shape {shape:?} holds more elements than fit in usize")]
    ShapeOverflow {
        /// The requested shape.
        shape: Vec<usize>,
    },
    /// An axis number is not smaller than the rank.
    #[error("axis {axis} is out of range for rank {rank}")]
    AxisOutOfRange {
        /// The axis asked for.
        axis: usize,
        /// The tensor's rank.
        rank: usize,
    },
    /// A permutation does not name every axis exactly once.
    #[error("{perm:?} is not a permutation of the {rank} axes")]
    InvalidPermutation {
        /// The permutation asked for.
        perm: Vec<usize>,
        /// The tensor's rank.
        rank: usize,
    },
    /// A slice range is reversed or reaches past the axis.
    #[error("range {start}..{end} is out of bounds for axis {axis} of length {len}")]
    SliceOutOfRange {
        /// The axis sliced.
        axis: usize,
        /// Range start.
        start: usize,
        /// Range end (exclusive).
        end: usize,
        /// The axis length.
        len: usize,
    },
    /// A shape cannot be broadcast to another under numpy's rules.
    #[error("shape {from:?} cannot be broadcast to {to:?}")]
    BroadcastMismatch {
        /// The shape being broadcast.
        from: Vec<usize>,
        /// The target shape.
        to: Vec<usize>,
    },
    /// Shape and strides have different lengths.
    #[error("shape has {shape_rank} axes but strides have {strides_rank}")]
    RankMismatch {
        /// Length of the shape.
        shape_rank: usize,
        /// Length of the strides.
        strides_rank: usize,
    },
    /// Strides and offset address elements past the end of the storage.
    #[error(
        "shape {shape:?} with strides {strides:?} and offset {offset} reaches past the {len} \
         elements of storage"
    )]
    StridesOutOfBounds {
        /// The shape.
        shape: Vec<usize>,
        /// The strides, in elements.
        strides: Vec<usize>,
        /// The offset of the first element.
        offset: usize,
        /// Length of the storage.
        len: usize,
    },
    /// A reshape to a shape with another element count.
    #[error("cannot reshape {from:?} ({from_numel} elements) into {to:?} ({to_numel} elements)")]
    ReshapeSize {
        /// The shape of the tensor or view.
        from: Vec<usize>,
        /// Its element count.
        from_numel: usize,
        /// The shape asked for.
        to: Vec<usize>,
        /// The element count of that shape (saturated at `usize::MAX`).
        to_numel: usize,
    },
    /// An ndarray view with a reversed axis: holdfast's strides are never negative.
    #[error(
        "axis {axis} of the ndarray view has stride {stride}: holdfast views need non-negative \
         strides; restore the axis (`invert_axis`) or copy the view (`to_owned`) first"
    )]
    NdarrayNegativeStride {
        /// The axis.
        axis: usize,
        /// Its stride, in elements.
        stride: isize,
    },
    /// An ndarray view whose elements are not one contiguous block of memory.
    #[error(
        "the ndarray view of shape {shape:?} with strides {strides:?} is not one contiguous block \
         of memory, which a borrowed view needs; copy it once with `Tensor::from_ndarray(view.to_owned())`"
    )]
    NdarrayNotContiguous {
        /// The view's shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<isize>,
    },
    /// A reshape that no strides over the same storage can express (numpy would copy).
    #[error(
        "a view of shape {shape:?} with strides {strides:?} cannot be reshaped to {to:?} \
         without a copy; use the operation view's `reshape`, which copies once"
    )]
    ReshapeNeedsCopy {
        /// The shape of the view.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<usize>,
        /// The shape asked for.
        to: Vec<usize>,
    },
}
