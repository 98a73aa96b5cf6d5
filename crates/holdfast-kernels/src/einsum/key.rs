//! [`PlanKey`]: the content key of a prepared einsum (SPEC B3).
//!
//! A key is the spec string, the element type, the optional path and every operand's shape and
//! strides (offsets are not part of it: they do not change the analysis). Building a key for a
//! lookup borrows the spec and path and keeps the dimensions inline (up to [`INLINE_DIMS`]
//! numbers: one rank, shape and strides per operand, so five operands of rank 5), so a lookup
//! formats nothing and, for ordinary operands, allocates nothing. The key's 64-bit
//! fingerprint is computed once, when the key is built; `Hash` writes only the fingerprint and
//! `Eq` compares the full content, so a fingerprint collision is never a wrong hit.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use holdfast_tensor::{DType, Element, TensorRead};
use smallvec::SmallVec;

use crate::fingerprint::mix;
use crate::strided::same_dims;

/// Dimensions a key holds without allocating: an operand of rank `r` takes `2r + 1`.
const INLINE_DIMS: usize = 64;

/// A key's dimensions.
type Dims = SmallVec<[usize; INLINE_DIMS]>;

/// The content key of a prepared einsum.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::einsum::PlanKey;
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::zeros([2, 3]);
/// let k1 = PlanKey::new("ij->ji", &[a.read()], None);
/// let k2 = PlanKey::new("ij->ji", &[a.read()], None).into_owned();
/// assert_eq!(k1, k2);
/// assert_ne!(k1, PlanKey::new("ij->ji", &[a.read().transpose()], None));
/// ```
#[derive(Debug, Clone)]
pub struct PlanKey<'a> {
    fingerprint: u64,
    dtype: DType,
    spec: Cow<'a, str>,
    path: Option<Cow<'a, [(usize, usize)]>>,
    dims: Dims,
}

impl<'a> PlanKey<'a> {
    /// The key of `spec` on operands shaped and strided like `operands`, with `path` (or the
    /// greedy path when `None`).
    pub fn new<T: Element>(
        spec: &'a str,
        operands: &[TensorRead<'_, T>],
        path: Option<&'a [(usize, usize)]>,
    ) -> Self {
        let mut dims = Dims::new();
        for op in operands {
            dims.push(op.rank());
            dims.extend_from_slice(op.shape());
            dims.extend_from_slice(op.strides());
        }
        let mut h = mix(0, T::DTYPE as u64);
        let bytes = spec.as_bytes();
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = mix(h, u64::from_le_bytes(w));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        h = mix(h, u64::from_le_bytes(tail) ^ ((bytes.len() as u64) << 56));
        for &d in &dims {
            h = mix(h, d as u64);
        }
        match path {
            Some(p) => {
                h = mix(h, p.len() as u64 + 1);
                for &(i, j) in p {
                    h = mix(h, ((i as u64) << 32) ^ j as u64);
                }
            }
            None => h = mix(h, 0),
        }
        PlanKey {
            fingerprint: h,
            dtype: T::DTYPE,
            spec: Cow::Borrowed(spec),
            path: path.map(Cow::Borrowed),
            dims,
        }
    }

    /// True when this key is the key of `spec` on `operands` with `path`, decided without
    /// building that key: no copy, no hash. A cache uses it to test its most recent entry first.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::einsum::PlanKey;
    /// use holdfast_tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::zeros([2, 3]);
    /// let key = PlanKey::new("ij->ji", &[a.read()], None).into_owned();
    /// assert!(key.matches("ij->ji", &[a.read()], None));
    /// assert!(!key.matches("ij->ij", &[a.read()], None));
    /// assert!(!key.matches("ij->ji", &[a.read().transpose()], None));
    /// assert!(!key.matches("ij->ji", &[a.read()], Some(&[])));
    /// ```
    #[inline]
    pub fn matches<T: Element>(
        &self,
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> bool {
        if self.dtype != T::DTYPE
            || !same_bytes(self.spec.as_bytes(), spec.as_bytes())
            || self.path.as_deref() != path
        {
            return false;
        }
        // `dims` holds, per operand, its rank, shape and strides. One pass, branch-free inside
        // an operand (this is the session's per-operation plan check).
        let mut rest: &[usize] = &self.dims;
        for op in operands {
            let layout = op.layout();
            let (shape, strides) = (layout.shape(), layout.strides());
            let r = shape.len();
            let Some(([rank, want_shape @ ..], tail)) = rest.split_at_checked(r + 1) else {
                return false;
            };
            let Some((want_strides, tail)) = tail.split_at_checked(r) else { return false };
            if *rank != r || !same_axes(shape, strides, want_shape, want_strides) {
                return false;
            }
            rest = tail;
        }
        rest.is_empty()
    }

    /// The precomputed 64-bit fingerprint (what `Hash` writes).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The element type in the key.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// An owned copy of the key, for storing.
    pub fn into_owned(self) -> PlanKey<'static> {
        PlanKey {
            fingerprint: self.fingerprint,
            dtype: self.dtype,
            spec: Cow::Owned(self.spec.into_owned()),
            path: self.path.map(|p| Cow::Owned(p.into_owned())),
            dims: self.dims,
        }
    }

    /// Approximate size of an owned key, in bytes.
    pub fn approx_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.spec.len()
            + self.path.as_ref().map_or(0, |p| p.len() * 16)
            + if self.dims.spilled() { self.dims.len() * 8 } else { 0 }
    }
}

/// `a == b`. Einsum specs are short: for 8 to 16 bytes two possibly overlapping words from each
/// end cover every byte, so the compare makes no call; other lengths compare as slices.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if !(8..=16).contains(&n) {
        return a == b;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    ((word(a, 0) ^ word(b, 0)) | (word(a, n - 8) ^ word(b, n - 8))) == 0
}

impl PartialEq for PlanKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.fingerprint == other.fingerprint
            && self.dtype == other.dtype
            && self.dims == other.dims
            && self.spec == other.spec
            && self.path == other.path
    }
}

impl Eq for PlanKey<'_> {}

impl Hash for PlanKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.fingerprint);
    }
}

/// Whether `shape` and `strides` equal `want_shape` and `want_strides`, in one pass
/// ([`same_dims`]). The plan key's match and the executor's
/// operand check both use it.
#[inline]
pub(super) fn same_axes(
    shape: &[usize],
    strides: &[usize],
    want_shape: &[usize],
    want_strides: &[usize],
) -> bool {
    same_dims([(shape, want_shape), (strides, want_strides)])
}
