//! Validation of a matrix product's operands ([`spec_of`]), the inline axes a plan compares
//! operands with ([`Axes3`]), and the check of a caller-supplied output ([`check_out`]).

use holdfast_tensor::{Dims, Element, Layout, Tensor};
use smallvec::SmallVec;

use super::operand::{BatchSpec, MatSpec};
use crate::KernelError;

/// The 2 or 3 axes of a matrix operand, stored inline, compared without `memcmp` or a loop
/// (either costs several times an unrolled comparison at this length).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(super) struct Axes3 {
    len: usize,
    v: [usize; 3],
}

impl Axes3 {
    /// `x` (2 or 3 values: `spec_of` admits nothing else).
    pub(super) fn of(x: &[usize]) -> Axes3 {
        let mut v = [0; 3];
        let len = x.len().min(3);
        v[..len].copy_from_slice(&x[..len]);
        Axes3 { len, v }
    }

    pub(super) fn as_slice(&self) -> &[usize] {
        &self.v[..self.len.min(3)]
    }

    /// True when `x` holds exactly these values.
    #[inline]
    pub(super) fn is(&self, x: &[usize]) -> bool {
        match (x, self.len) {
            ([x0, x1], 2) => *x0 == self.v[0] && *x1 == self.v[1],
            ([x0, x1, x2], 3) => *x0 == self.v[0] && *x1 == self.v[1] && *x2 == self.v[2],
            _ => false,
        }
    }
}

/// Validates a product and returns how faer sees it, and the result's shape.
pub(super) fn spec_of(a: &Layout, b: &Layout) -> Result<(BatchSpec, Dims), KernelError> {
    let bad =
        |reason| KernelError::MatmulShape { a: a.shape().to_vec(), b: b.shape().to_vec(), reason };
    let (ash, bsh, ast, bst) = (a.shape(), b.shape(), a.strides(), b.strides());
    let (batch, sa, sb, lead) = match (ash.len(), bsh.len()) {
        (2, 2) => (1, 0, 0, 0),
        (3, 3) if ash[0] == bsh[0] => (ash[0], ast[0], bst[0], 1),
        (3, 3) => return Err(bad("batch dimensions differ")),
        _ => return Err(bad("operands must both be 2-D or both 3-D")),
    };
    let (m, k, k2, n) = (ash[lead], ash[lead + 1], bsh[lead], bsh[lead + 1]);
    if k != k2 {
        return Err(bad("inner dimensions differ"));
    }
    let out_shape: Dims = if lead == 1 {
        SmallVec::from_slice(&[batch, m, n])
    } else {
        SmallVec::from_slice(&[m, n])
    };
    Tensor::<f64>::checked_numel(&out_shape)
        .ok_or_else(|| KernelError::SizeOverflow { shape: out_shape.to_vec() })?;
    let spec = BatchSpec {
        batch,
        a: MatSpec { rows: m, cols: k, rs: ast[lead], cs: ast[lead + 1] },
        b: MatSpec { rows: k, cols: n, rs: bst[lead], cs: bst[lead + 1] },
        c: MatSpec { rows: m, cols: n, rs: n, cs: 1 },
        sa,
        sb,
        sc: m * n,
    };
    Ok((spec, out_shape))
}

/// Checks a caller-supplied output against the result's shape.
pub(super) fn check_out<T: Element>(out: &Tensor<T>, shape: &[usize]) -> Result<(), KernelError> {
    if out.shape() != shape {
        return Err(KernelError::OutputShape {
            expected: shape.to_vec(),
            actual: out.shape().to_vec(),
        });
    }
    if !out.is_contiguous() {
        return Err(KernelError::OutputNotContiguous {
            shape: out.shape().to_vec(),
            strides: out.strides().to_vec(),
        });
    }
    Ok(())
}
