//! Complex elements through every kernel (SPEC T1, T2): random `c64` and `c32` operands against
//! straightforward references, 1e-12 relative to the result's largest modulus for `c64` and
//! 1e-5 for `c32`; strided and broadcast inputs; nano-gemm, faer and the loop kernel all reached
//! by the matmul sizes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

mod support;

use holdfast_kernels::{HeapAlloc, Par, einsum, elementwise, matmul, permute, reduce};
use holdfast_tensor::{Element, Tensor, TensorRead, c32, c64};
use support::{SplitMix64, random_complex, reference_einsum, rel_err_of};

/// The tolerance of SPEC T2 for `T`.
fn tolerance<T: Element>() -> f64 {
    if std::mem::size_of::<T>() == 16 { 1e-12 } else { 1e-5 }
}

/// `a ∘ b` elementwise under numpy broadcasting, by index arithmetic (the reference).
fn broadcast_reference<T: Element>(
    a: &TensorRead<'_, T>,
    b: &TensorRead<'_, T>,
    op: impl Fn(T, T) -> T,
) -> (Vec<usize>, Vec<T>) {
    let rank = a.rank().max(b.rank());
    let pad = |s: &[usize]| {
        let mut v = vec![1; rank - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (sa, sb) = (pad(a.shape()), pad(b.shape()));
    let shape: Vec<usize> = sa.iter().zip(&sb).map(|(&x, &y)| x.max(y)).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0usize; rank];
    for _ in 0..n {
        let pick = |s: &[usize], own: usize| -> Vec<usize> {
            index[rank - own..]
                .iter()
                .zip(&s[rank - own..])
                .map(|(&i, &d)| if d == 1 { 0 } else { i })
                .collect()
        };
        let x = a.get(&pick(&sa, a.rank())).unwrap();
        let y = b.get(&pick(&sb, b.rank())).unwrap();
        out.push(op(x, y));
        for axis in (0..rank).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    (shape, out)
}

fn elementwise_case<T: Element>(seed: u64) {
    let mut rng = SplitMix64(seed);
    let tol = tolerance::<T>();
    let a = random_complex::<T>(&[3, 1, 4], &mut rng);
    let b = random_complex::<T>(&[5, 1], &mut rng);
    type Kernel<T> = fn(
        TensorRead<'_, T>,
        TensorRead<'_, T>,
        &mut HeapAlloc,
        Par,
    ) -> Result<Tensor<T>, holdfast_kernels::KernelError>;
    type Case<T> = (Kernel<T>, fn(T, T) -> T);
    let cases: [Case<T>; 4] = [
        (|a, b, h, p| elementwise::add(a, b, h, p), |x, y| x + y),
        (|a, b, h, p| elementwise::sub(a, b, h, p), |x, y| x - y),
        (|a, b, h, p| elementwise::mul(a, b, h, p), |x, y| x * y),
        (|a, b, h, p| elementwise::div(a, b, h, p), |x, y| x / y),
    ];
    for (kernel, op) in cases {
        let got = kernel(a.read(), b.read(), &mut HeapAlloc, Par::Seq).unwrap();
        let (shape, want) = broadcast_reference(&a.read(), &b.read(), op);
        assert_eq!(got.shape(), shape.as_slice());
        assert!(rel_err_of(got.as_slice(), &want) <= tol);
        // The same through a transposed (strided) first operand.
        let at = a.read().permute(&[2, 1, 0]).unwrap();
        let bt = random_complex::<T>(&[3], &mut rng);
        let got = kernel(at.clone(), bt.read(), &mut HeapAlloc, Par::Seq).unwrap();
        let (_, want) = broadcast_reference(&at, &bt.read(), op);
        assert!(rel_err_of(got.as_slice(), &want) <= tol);
    }
    let alpha = T::from_parts(0.5, -2.0);
    let scaled = elementwise::scale(a.read().transpose(), alpha, &mut HeapAlloc, Par::Seq).unwrap();
    let want: Vec<T> = a.read().transpose().iter().map(|x| alpha * x).collect();
    assert!(rel_err_of(scaled.as_slice(), &want) <= tol);
    let conj = elementwise::conj(a.read().transpose(), &mut HeapAlloc, Par::Seq).unwrap();
    let want: Vec<T> = a.read().transpose().iter().map(Element::conj).collect();
    assert_eq!(conj.as_slice(), want.as_slice());
}

#[test]
fn elementwise_kernels_on_complex_operands() {
    elementwise_case::<c64>(1);
    elementwise_case::<c32>(2);
}

fn reduce_and_permute_case<T: Element>(seed: u64) {
    let mut rng = SplitMix64(seed);
    let a = random_complex::<T>(&[3, 4, 5], &mut rng);
    let s = reduce::sum(a.read(), &[0, 2], &mut HeapAlloc, Par::Seq).unwrap();
    let want: Vec<T> = (0..4)
        .map(|j| {
            (0..3)
                .flat_map(|i| (0..5).map(move |k| (i, k)))
                .map(|(i, k)| a.read().get(&[i, j, k]).unwrap())
                .sum()
        })
        .collect();
    assert!(rel_err_of(s.as_slice(), &want) <= tolerance::<T>());
    let p = permute::permute(a.read(), &[2, 0, 1], &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(p.as_slice(), a.read().permute(&[2, 0, 1]).unwrap().to_vec().as_slice());
}

#[test]
fn reductions_and_permutes_on_complex_operands() {
    reduce_and_permute_case::<c64>(3);
    reduce_and_permute_case::<c32>(4);
}

fn matmul_case<T: Element>(seed: u64) {
    let mut rng = SplitMix64(seed);
    let tol = tolerance::<T>();
    // 2 and 4: nano-gemm; 20 and 48: faer; a transposed operand; a batched product.
    for n in [2, 4, 20, 48] {
        let a = random_complex::<T>(&[n, n + 1], &mut rng);
        let b = random_complex::<T>(&[n, n + 1], &mut rng);
        let bt = b.read().transpose();
        let got = matmul::matmul(a.read(), bt.clone(), &mut HeapAlloc, Par::Seq).unwrap();
        let (_, want) = reference_einsum("ij,jk->ik", &[a.read(), bt]);
        assert!(rel_err_of(got.as_slice(), &want) <= tol, "n = {n}");
    }
    let a = random_complex::<T>(&[3, 4, 5], &mut rng);
    let b = random_complex::<T>(&[3, 5, 2], &mut rng);
    let got = matmul::matmul(a.read(), b.read(), &mut HeapAlloc, Par::Seq).unwrap();
    let (_, want) = reference_einsum("bij,bjk->bik", &[a.read(), b.read()]);
    assert!(rel_err_of(got.as_slice(), &want) <= tol);
}

#[test]
fn matmul_on_complex_operands() {
    matmul_case::<c64>(5);
    matmul_case::<c32>(6);
}

fn einsum_case<T: Element>(seed: u64) {
    let mut rng = SplitMix64(seed);
    let tol = tolerance::<T>();
    let cases: &[(&str, &[&[usize]])] = &[
        ("ij,jk->ik", &[&[3, 4], &[4, 5]]),
        ("ii->", &[&[4, 4]]),
        ("ii->i", &[&[3, 3]]),
        ("ijk,kl->lji", &[&[2, 3, 4], &[4, 2]]),
        ("abc,cd,de->abe", &[&[2, 3, 4], &[4, 3], &[3, 2]]),
        ("i,i->", &[&[7], &[7]]),
        ("i,j->ij", &[&[3], &[4]]),
        ("bij,bjk->bik", &[&[2, 3, 4], &[2, 4, 3]]),
    ];
    for &(spec, shapes) in cases {
        let ts: Vec<Tensor<T>> = shapes.iter().map(|s| random_complex::<T>(s, &mut rng)).collect();
        let reads: Vec<TensorRead<'_, T>> = ts.iter().map(Tensor::read).collect();
        let got = einsum::einsum(spec, &reads, &mut HeapAlloc, Par::Seq).unwrap();
        let (shape, want) = reference_einsum(spec, &reads);
        assert_eq!(got.shape(), shape.as_slice(), "{spec}");
        assert!(rel_err_of(got.as_slice(), &want) <= tol, "{spec}");
    }
}

#[test]
fn einsum_on_complex_operands() {
    einsum_case::<c64>(7);
    einsum_case::<c32>(8);
}

#[test]
fn matmul_into_a_complex_output() {
    let mut rng = SplitMix64(9);
    let a = random_complex::<c64>(&[4, 4], &mut rng);
    let b = random_complex::<c64>(&[4, 4], &mut rng);
    let mut out = Tensor::<c64>::zeros([4, 4]);
    matmul::matmul_into(a.read(), b.read(), &mut out, Par::Seq).unwrap();
    let (_, want) = reference_einsum("ij,jk->ik", &[a.read(), b.read()]);
    assert!(rel_err_of(out.as_slice(), &want) <= 1e-12);
    // The product is genuinely complex (not the real parts multiplied).
    assert!(out.as_slice().iter().any(|z| z.im.abs() > 1e-3));
}
