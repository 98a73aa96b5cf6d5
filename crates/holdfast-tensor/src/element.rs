//! Element types a tensor can hold ([`Element`]: `f32`, `f64`) and their runtime tag ([`DType`]).
//!
//! The trait is sealed: kernels below rely on every element being a plain IEEE float that is
//! `Copy`, has no drop glue and can be zero-initialised.

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub};

/// The runtime tag of an element type, used in plan-cache keys and error messages.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{DType, Element};
///
/// assert_eq!(<f64 as Element>::DTYPE, DType::F64);
/// assert_eq!(DType::F32.size_bytes(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DType {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl DType {
    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }

    /// The lower-case name used in messages and file formats (`"f32"`, `"f64"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
}

impl Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A scalar a [`Tensor`](crate::Tensor) can hold: `f32` or `f64`. Sealed.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::Element;
///
/// fn dot<T: Element>(a: &[T], b: &[T]) -> T {
///     a.iter().zip(b).map(|(&x, &y)| x * y).sum()
/// }
/// assert_eq!(dot(&[1.0f32, 2.0], &[3.0, 4.0]), 11.0);
/// ```
pub trait Element:
    sealed::Sealed
    + Copy
    + Send
    + Sync
    + Default
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + MulAssign
    + Sum
{
    /// The real type of the same precision: what a norm, a singular value or an eigenvalue of
    /// a Hermitian matrix of this type is (the type itself for `f32` and `f64`).
    type Real: Element;

    /// The runtime tag of this type.
    const DTYPE: DType;
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;

    /// Converts from `f64`, rounding to nearest for `f32`.
    fn from_f64(v: f64) -> Self;

    /// Converts to `f64` (exact for both types).
    fn to_f64(self) -> f64;

    /// Absolute value.
    fn abs(self) -> Self;
}

impl Element for f32 {
    type Real = f32;
    const DTYPE: DType = DType::F32;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;

    #[allow(clippy::cast_possible_truncation, reason = "rounding to nearest f32 is the contract")]
    fn from_f64(v: f64) -> Self {
        v as f32
    }

    fn to_f64(self) -> f64 {
        f64::from(self)
    }

    fn abs(self) -> Self {
        f32::abs(self)
    }
}

impl Element for f64 {
    type Real = f64;
    const DTYPE: DType = DType::F64;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;

    fn from_f64(v: f64) -> Self {
        v
    }

    fn to_f64(self) -> f64 {
        self
    }

    fn abs(self) -> Self {
        f64::abs(self)
    }
}
