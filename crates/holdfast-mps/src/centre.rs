//! Moving the orthogonality centre across a bond: after a bond's two-site tensor is split by an
//! SVD `θ ≈ u·s·vh`, the singular values are absorbed on the side the centre moves to.

use holdfast::{CpuExecSession, Element, OpError, Tensor, TensorRead};

/// The bond's new site tensors `(u, s·vh)` when the centre moves right, `(u·s, vh)` when it
/// moves left, for `u` of shape `[a, s₁, r]`, `s` of `[r]` and `vh` of `[r, s₂, b]`. The factor
/// absorbed into the product goes back to the pool in this view; `s` stays the caller's.
///
/// # Errors
///
/// As the view's `mul`.
pub(crate) fn absorb<T: Element>(
    v: &mut CpuExecSession<'_>,
    u: Tensor<T>,
    s: TensorRead<'_, T>,
    vh: Tensor<T>,
    right_moving: bool,
) -> Result<(Tensor<T>, Tensor<T>), OpError> {
    let rank = s.numel();
    if right_moving {
        let sv = v.mul(s.reshape(&[rank, 1, 1])?, vh.read())?;
        v.recycle(vh);
        Ok((u, sv))
    } else {
        let us = v.mul(u.read(), s)?;
        v.recycle(u);
        Ok((us, vh))
    }
}
