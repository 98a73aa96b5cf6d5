//! Unary elementwise kernels: [`scale`] (every element times one scalar) and [`conj`] (the
//! complex conjugate), through one strided map.

use holdfast_tensor::{Element, Tensor, TensorRead};
use smallvec::SmallVec;

use crate::strided::{Axes, Nest, Order, row_major};
use crate::{Family, KernelAlloc, KernelError, Par};

/// `alpha · a`, elementwise. `a` may be any strided view; the result is dense row-major.
///
/// # Errors
///
/// None in practice: the result has the input's (already valid) shape. The `Result` keeps the
/// kernel signatures uniform.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, elementwise};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f32>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let c = elementwise::scale(a.read().transpose(), 2.0, &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(c.as_slice(), &[2.0, 6.0, 4.0, 8.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scale<T: Element, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    alpha: T,
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    map(a, move |x| alpha * x, alloc, par)
}

/// The complex conjugate of every element (a copy for real types, as numpy's `conj`). `a` may
/// be any strided view; the result is dense row-major.
///
/// # Errors
///
/// None in practice, as [`scale`].
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, elementwise};
/// use holdfast_tensor::{Tensor, c64};
///
/// let a = Tensor::<c64>::from_vec([2], vec![c64::new(1.0, 2.0), c64::new(0.0, -1.0)])?;
/// let c = elementwise::conj(a.read(), &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(c.as_slice(), &[c64::new(1.0, -2.0), c64::new(0.0, 1.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn conj<T: Element, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    map(a, Element::conj, alloc, par)
}

/// `op` of every element of `a`, into a dense row-major tensor from `alloc`.
#[allow(
    clippy::needless_pass_by_value,
    reason = "views are passed by value, as in the operation API (SPEC §6)"
)]
fn map<T: Element, A: KernelAlloc + ?Sized>(
    a: TensorRead<'_, T>,
    op: impl Fn(T) -> T + Sync,
    alloc: &mut A,
    par: Par,
) -> Result<Tensor<T>, KernelError> {
    let numel = a.numel();
    let mut buf = alloc.take::<T>(numel);
    let par = par.for_size(Family::Elementwise, numel as u64);
    if let (Some(xs), Par::Seq) = (a.contiguous_slice(), par) {
        for (o, &x) in buf.iter_mut().zip(xs) {
            *o = op(x);
        }
    } else {
        let so = row_major(a.shape());
        let zeros: Axes = SmallVec::from_elem(0, a.rank());
        let nest = Nest::new(a.shape(), &so, a.strides(), &zeros, Order::Out);
        let op = |o: &mut T, x: T, _y: T| *o = op(x);
        let (data, off) = (a.storage(), a.offset());
        match par {
            Par::Seq => nest.run(&mut buf, 0, data, off, data, off, &op),
            p => nest.run_par(&mut buf, 0, data, off, data, off, &op, p.threads()),
        }
    }
    Ok(Tensor::from_shape_vec(a.shape(), buf)?)
}
