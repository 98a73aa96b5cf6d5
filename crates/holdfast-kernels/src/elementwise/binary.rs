//! Binary elementwise arithmetic with numpy broadcasting.

use holdfast_tensor::{Dims, Element, Tensor, TensorRead};
use smallvec::SmallVec;

use crate::strided::{Nest, Order, row_major, same_dims};
use crate::{Family, KernelAlloc, KernelError, Par};

/// The numpy broadcast of two shapes: axes are aligned at the end; each pair must be equal or
/// contain a 1.
///
/// # Errors
///
/// [`KernelError::BroadcastMismatch`] when some aligned pair differs and neither is 1.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::elementwise::broadcast_shapes;
///
/// assert_eq!(broadcast_shapes(&[2, 1, 4], &[3, 1])?.as_slice(), &[2, 3, 4]);
/// assert!(broadcast_shapes(&[2], &[3]).is_err());
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Dims, KernelError> {
    let rank = a.len().max(b.len());
    let mut out: Dims = SmallVec::from_elem(1, rank);
    for (i, o) in out.iter_mut().enumerate() {
        let da = (i + a.len()).checked_sub(rank).map_or(1, |k| a[k]);
        let db = (i + b.len()).checked_sub(rank).map_or(1, |k| b[k]);
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(KernelError::BroadcastMismatch { a: a.to_vec(), b: b.to_vec() }),
        };
    }
    Ok(out)
}

macro_rules! binary_fn {
    ($name:ident, $op:tt, $verb:literal, $example:literal) => {
        #[doc = concat!("Elementwise `a ", stringify!($op), " b` (", $verb, ") with numpy broadcasting.")]
        ///
        /// Both inputs may be any strided view; the result is dense row-major with the broadcast
        /// shape, in a buffer taken from `alloc`.
        ///
        /// # Errors
        ///
        /// [`KernelError::BroadcastMismatch`] when the shapes cannot be broadcast together.
        ///
        /// # Panics
        ///
        /// Never on bad input.
        ///
        /// # Examples
        ///
        /// ```
        /// use holdfast_kernels::{HeapAlloc, Par, elementwise};
        /// use holdfast_tensor::Tensor;
        ///
        /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
        /// let b = Tensor::<f64>::from_vec([2], vec![10.0, 20.0])?; // broadcast over rows
        #[doc = concat!("let c = elementwise::", stringify!($name), "(a.read(), b.read(), &mut HeapAlloc, Par::Seq)?;")]
        #[doc = concat!("assert_eq!(c.as_slice(), &", $example, ");")]
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        pub fn $name<T: Element, A: KernelAlloc + ?Sized>(
            a: TensorRead<'_, T>,
            b: TensorRead<'_, T>,
            alloc: &mut A,
            par: Par,
        ) -> Result<Tensor<T>, KernelError> {
            zip_with(&a, &b, alloc, par, |x: T, y: T| x $op y)
        }
    };
}

binary_fn!(add, +, "sum", "[11.0, 22.0, 13.0, 24.0]");
binary_fn!(sub, -, "difference", "[-9.0, -18.0, -7.0, -16.0]");
binary_fn!(mul, *, "product", "[10.0, 40.0, 30.0, 80.0]");
binary_fn!(div, /, "quotient", "[0.1, 0.1, 0.3, 0.2]");

/// `f(a, b)` elementwise with numpy broadcasting, into a new dense row-major tensor whose
/// buffer comes from `alloc`: the body of [`add`], [`sub`], [`mul`] and [`div`], for any other
/// binary function (numpy's binary ufuncs; ndarray's `Zip::map_collect`).
///
/// The views are borrowed, so a caller that keeps them pays no copy of their layouts.
///
/// # Errors
///
/// [`KernelError::BroadcastMismatch`] when the shapes cannot be broadcast together.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, elementwise};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, -2.0, 3.0, -4.0])?;
/// let b = Tensor::<f64>::from_vec([2], vec![0.0, 1.0])?; // broadcast over rows
/// let m = elementwise::zip_with(&a.read(), &b.read(), &mut HeapAlloc, Par::Seq, f64::max)?;
/// assert_eq!(m.as_slice(), &[1.0, 1.0, 3.0, 1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[inline]
pub fn zip_with<T: Element, A: KernelAlloc + ?Sized, F: Fn(T, T) -> T + Sync>(
    a: &TensorRead<'_, T>,
    b: &TensorRead<'_, T>,
    alloc: &mut A,
    par: Par,
    f: F,
) -> Result<Tensor<T>, KernelError> {
    // Fast path: equal shapes, both dense.
    if let (true, Some(xs), Some(ys)) =
        (same_dims([(a.shape(), b.shape())]), a.contiguous_slice(), b.contiguous_slice())
    {
        {
            let mut buf = alloc.take::<T>(xs.len());
            let par = par.for_size(Family::Elementwise, xs.len() as u64);
            if par == Par::Seq {
                for ((o, &x), &y) in buf.iter_mut().zip(xs).zip(ys) {
                    *o = f(x, y);
                }
            } else {
                zip_par(&mut buf, xs, ys, &f, par.threads());
            }
            return Ok(Tensor::from_vec_like(buf, a.layout())?);
        }
    }
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    let numel = Tensor::<T>::checked_numel(&shape)
        .ok_or_else(|| KernelError::SizeOverflow { shape: shape.to_vec() })?;
    let av = a.clone().broadcast_to(&shape)?;
    let bv = b.clone().broadcast_to(&shape)?;
    let so = row_major(&shape);
    let nest = Nest::new(&shape, &so, av.strides(), bv.strides(), Order::Out);
    let mut buf = alloc.take::<T>(numel);
    let op = |o: &mut T, x: T, y: T| *o = f(x, y);
    match par.for_size(Family::Elementwise, numel as u64) {
        Par::Seq => {
            nest.run(&mut buf, 0, av.storage(), av.offset(), bv.storage(), bv.offset(), &op);
        }
        p => nest.run_par(
            &mut buf,
            0,
            av.storage(),
            av.offset(),
            bv.storage(),
            bv.offset(),
            &op,
            p.threads(),
        ),
    }
    Ok(Tensor::from_shape_vec(&shape, buf)?)
}

fn zip_par<T: Element, F: Fn(T, T) -> T + Sync>(
    out: &mut [T],
    xs: &[T],
    ys: &[T],
    f: &F,
    threads: usize,
) {
    use rayon::prelude::*;
    let chunk = out.len().div_ceil(threads * 4).max(1);
    out.par_chunks_mut(chunk).zip(xs.par_chunks(chunk)).zip(ys.par_chunks(chunk)).for_each(
        |((o, x), y)| {
            for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                *o = f(x, y);
            }
        },
    );
}
