//! Element types a tensor can hold ([`Element`]: `f32`, `f64`, [`c32`], [`c64`]) and their
//! runtime tag ([`DType`]).
//!
//! The trait is sealed: kernels below rely on every element being a plain IEEE value (a float,
//! or a pair of floats for the complex types, laid out as numpy's `complex64`/`complex128`) that
//! is `Copy`, has no drop glue and can be zero-initialised. The complex types are num-complex's,
//! the type faer computes with.

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub};

use num_complex::Complex;

/// `Complex<f32>`: numpy's `complex64`.
#[allow(non_camel_case_types, reason = "the name numerical Rust uses (faer, nano-gemm)")]
pub type c32 = Complex<f32>;
/// `Complex<f64>`: numpy's `complex128`.
#[allow(non_camel_case_types, reason = "the name numerical Rust uses (faer, nano-gemm)")]
pub type c64 = Complex<f64>;

/// The runtime tag of an element type, used in plan-cache keys, pool lists and error messages.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{c64, DType, Element};
///
/// assert_eq!(<f64 as Element>::DTYPE, DType::F64);
/// assert_eq!(<c64 as Element>::DTYPE, DType::C64);
/// assert_eq!(DType::F32.size_bytes(), 4);
/// assert_eq!(DType::C64.size_bytes(), 16);
/// assert_eq!(DType::C32.name(), "c32");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DType {
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// A pair of binary32 (real, imaginary): numpy's `complex64`.
    C32,
    /// A pair of binary64 (real, imaginary): numpy's `complex128`.
    C64,
}

impl DType {
    /// Every element type, in tag order.
    pub const ALL: [DType; 4] = [DType::F32, DType::F64, DType::C32, DType::C64];

    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 | DType::C32 => 8,
            DType::C64 => 16,
        }
    }

    /// The lower-case name used in messages (`"f32"`, `"f64"`, `"c32"`, `"c64"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C32 => "c32",
            DType::C64 => "c64",
        }
    }

    /// Whether the type is complex.
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::C64)
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
    impl Sealed for super::c32 {}
    impl Sealed for super::c64 {}
}

/// A scalar a [`Tensor`](crate::Tensor) can hold: `f32`, `f64`, [`c32`] or [`c64`]. Sealed.
///
/// # Examples
///
/// ```
/// use holdfast_tensor::{c64, Element};
///
/// fn dot<T: Element>(a: &[T], b: &[T]) -> T {
///     a.iter().zip(b).map(|(&x, &y)| x.conj() * y).sum()
/// }
/// assert_eq!(dot(&[1.0f32, 2.0], &[3.0, 4.0]), 11.0);
/// let i = c64::new(0.0, 1.0);
/// assert_eq!(dot(&[i], &[i]), c64::new(1.0, 0.0));
/// ```
pub trait Element:
    sealed::Sealed
    + Copy
    + Send
    + Sync
    + Default
    + PartialEq
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
    type Real: Element<Real = Self::Real> + PartialOrd;

    /// The runtime tag of this type.
    const DTYPE: DType;
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;

    /// The value with real part `v` (rounded to nearest for single precision) and no imaginary
    /// part.
    fn from_f64(v: f64) -> Self;

    /// The value with real part `re` and imaginary part `im` (rounded to nearest for single
    /// precision); `im` is dropped for a real type.
    fn from_parts(re: f64, im: f64) -> Self;

    /// The real part.
    fn re(self) -> Self::Real;

    /// The imaginary part (0 for a real type).
    fn im(self) -> Self::Real;

    /// The complex conjugate (the value itself for a real type).
    #[must_use]
    fn conj(self) -> Self;

    /// The value times a real factor.
    #[must_use]
    fn scale_real(self, factor: Self::Real) -> Self;

    /// The modulus `|x|`, in `f64` (exact for real types).
    fn modulus(self) -> f64;

    /// The squared modulus `|x|²`, in `f64`.
    fn abs2(self) -> f64;

    /// The real part in `f64` (exact).
    fn re_f64(self) -> f64;
}

macro_rules! real_element {
    ($t:ty, $dtype:expr) => {
        impl Element for $t {
            type Real = $t;
            const DTYPE: DType = $dtype;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;

            #[allow(
                clippy::cast_possible_truncation,
                reason = "rounding to nearest is the contract"
            )]
            fn from_f64(v: f64) -> Self {
                v as $t
            }

            fn from_parts(re: f64, _im: f64) -> Self {
                Self::from_f64(re)
            }

            fn re(self) -> Self {
                self
            }

            fn im(self) -> Self {
                0.0
            }

            fn conj(self) -> Self {
                self
            }

            fn scale_real(self, factor: Self) -> Self {
                self * factor
            }

            fn modulus(self) -> f64 {
                f64::from(self).abs()
            }

            fn abs2(self) -> f64 {
                let x = f64::from(self);
                x * x
            }

            fn re_f64(self) -> f64 {
                f64::from(self)
            }
        }
    };
}

real_element!(f32, DType::F32);
real_element!(f64, DType::F64);

macro_rules! complex_element {
    ($r:ty, $dtype:expr) => {
        impl Element for Complex<$r> {
            type Real = $r;
            const DTYPE: DType = $dtype;
            const ZERO: Self = Complex::new(0.0, 0.0);
            const ONE: Self = Complex::new(1.0, 0.0);

            fn from_f64(v: f64) -> Self {
                Complex::new(<$r>::from_f64(v), 0.0)
            }

            fn from_parts(re: f64, im: f64) -> Self {
                Complex::new(<$r>::from_f64(re), <$r>::from_f64(im))
            }

            fn re(self) -> $r {
                self.re
            }

            fn im(self) -> $r {
                self.im
            }

            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }

            fn scale_real(self, factor: $r) -> Self {
                Complex::new(self.re * factor, self.im * factor)
            }

            fn modulus(self) -> f64 {
                f64::from(self.re).hypot(f64::from(self.im))
            }

            fn abs2(self) -> f64 {
                let (re, im) = (f64::from(self.re), f64::from(self.im));
                re * re + im * im
            }

            fn re_f64(self) -> f64 {
                f64::from(self.re)
            }
        }
    };
}

complex_element!(f32, DType::C32);
complex_element!(f64, DType::C64);

#[cfg(test)]
mod tests {
    use super::{DType, Element, c32, c64};

    #[test]
    fn tags_sizes_and_layout_match_numpy() {
        assert_eq!(std::mem::size_of::<c32>(), DType::C32.size_bytes());
        assert_eq!(std::mem::size_of::<c64>(), DType::C64.size_bytes());
        // num-complex's Complex is #[repr(C)] { re, im }: numpy's interleaved layout.
        assert_eq!(std::mem::offset_of!(c64, re), 0);
        assert_eq!(std::mem::offset_of!(c64, im), 8);
        assert_eq!(std::mem::offset_of!(c32, im), 4);
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(d.is_complex(), i >= 2);
        }
    }

    #[test]
    fn complex_helpers() {
        let z = c64::from_parts(3.0, -4.0);
        assert_eq!((z.re(), z.im(), z.modulus(), z.abs2()), (3.0, -4.0, 5.0, 25.0));
        assert_eq!(z.conj(), c64::new(3.0, 4.0));
        assert_eq!(z.scale_real(2.0), c64::new(6.0, -8.0));
        assert_eq!(c32::from_f64(1.5), c32::new(1.5, 0.0));
        assert_eq!(2.5f32.conj(), 2.5);
        assert_eq!((-2.0f64).modulus(), 2.0);
        assert_eq!(f64::from_parts(1.0, 9.0), 1.0);
    }
}
