//! Shared test support: a deterministic generator, random tensors, a brute-force reference
//! einsum and a counting allocator.

#![allow(dead_code, reason = "each test binary uses a different part of the support code")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failed unwrap is a failed test"
)]

use std::collections::HashMap;

use holdfast_kernels::{HeapAlloc, KernelAlloc};
use holdfast_tensor::{Element, Tensor, TensorRead};

/// SplitMix64: tiny, fast, deterministic.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(pub u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// Uniform in 0..n (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A dense tensor of `shape` with values in [-1, 1).
pub(crate) fn random_tensor<T: Element>(shape: &[usize], rng: &mut SplitMix64) -> Tensor<T> {
    let n: usize = shape.iter().product();
    let data = (0..n).map(|_| T::from_f64(rng.next_f64())).collect();
    Tensor::from_vec(shape.to_vec(), data).unwrap()
}

/// A dense tensor of `shape` with real and imaginary parts in [-1, 1) (real types keep the
/// real part only).
pub(crate) fn random_complex<T: Element>(shape: &[usize], rng: &mut SplitMix64) -> Tensor<T> {
    let n: usize = shape.iter().product();
    let data = (0..n).map(|_| T::from_parts(rng.next_f64(), rng.next_f64())).collect();
    Tensor::from_vec(shape.to_vec(), data).unwrap()
}

/// Max `|got - want|` over max `|want|` (or 1e-300), for any element type.
pub(crate) fn rel_err_of<T: Element>(got: &[T], want: &[T]) -> f64 {
    assert_eq!(got.len(), want.len(), "lengths differ");
    let scale = want.iter().fold(0.0f64, |m, &x| m.max(x.modulus())).max(1e-300);
    got.iter().zip(want).fold(0.0f64, |m, (&g, &w)| m.max((g - w).modulus())) / scale
}

/// Brute-force einsum: loops over every assignment of every label.
pub(crate) fn reference_einsum<T: Element>(
    spec: &str,
    operands: &[TensorRead<'_, T>],
) -> (Vec<usize>, Vec<T>) {
    let (shape, out, _) = reference_einsum_with_magnitude(spec, operands);
    (shape, out)
}

/// [`reference_einsum`] plus, per output element, the sum of the absolute values of the terms
/// it adds up: the scale of the rounding error any summation order may make (cancellation can
/// leave a result far smaller than its terms, and its relative error large).
pub(crate) fn reference_einsum_with_magnitude<T: Element>(
    spec: &str,
    operands: &[TensorRead<'_, T>],
) -> (Vec<usize>, Vec<T>, Vec<f64>) {
    let parsed = holdfast_kernels::einsum::parse(spec).unwrap();
    let nl = parsed.labels().len();
    let mut dims = vec![1usize; nl];
    for (term, op) in parsed.inputs().iter().zip(operands) {
        for (&l, &d) in term.iter().zip(op.shape()) {
            dims[l as usize] = d;
        }
    }
    let out_shape: Vec<usize> = parsed.output().iter().map(|&l| dims[l as usize]).collect();
    let out_len: usize = out_shape.iter().product();
    let mut out = vec![T::ZERO; out_len];
    let mut magnitude = vec![0.0; out_len];
    let total: usize = dims.iter().product();
    let mut assign = vec![0usize; nl];
    let mut idx: Vec<usize> = Vec::new();
    for _ in 0..total {
        let mut p = T::ONE;
        for (term, op) in parsed.inputs().iter().zip(operands) {
            idx.clear();
            idx.extend(term.iter().map(|&l| assign[l as usize]));
            p *= op.get(&idx).unwrap();
        }
        let mut o = 0;
        for &l in parsed.output() {
            o = o * dims[l as usize] + assign[l as usize];
        }
        if out_len > 0 {
            out[o] += p;
            magnitude[o] += p.modulus();
        }
        for l in (0..nl).rev() {
            assign[l] += 1;
            if assign[l] < dims[l] {
                break;
            }
            assign[l] = 0;
        }
    }
    (out_shape, out, magnitude)
}

/// Max error relative to the terms' magnitude (see [`reference_einsum_with_magnitude`]): the
/// largest `|got - want|` over the largest per-element sum of absolute terms (or 1e-300).
pub(crate) fn term_rel_err(got: &[f64], want: &[f64], magnitude: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "lengths differ");
    let scale = magnitude.iter().fold(0.0f64, |m, &x| m.max(x)).max(1e-300);
    got.iter().zip(want).fold(0.0f64, |m, (&g, &w)| m.max((g - w).abs())) / scale
}

/// Max relative error, scaled by the larger of the max |value| and 1e-300.
pub(crate) fn rel_err(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "lengths differ");
    let scale = want.iter().fold(0.0f64, |m, &x| m.max(x.abs())).max(1e-300);
    got.iter().zip(want).fold(0.0f64, |m, (&g, &w)| m.max((g - w).abs())) / scale
}

/// An allocator that recycles buffers by length and counts what it does.
#[derive(Debug, Default)]
pub(crate) struct CountingAlloc {
    pub(crate) takes: usize,
    pub(crate) gives: usize,
    pub(crate) reused: usize,
    f64_pool: HashMap<usize, Vec<Vec<f64>>>,
}

impl KernelAlloc for CountingAlloc {
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        self.takes += 1;
        if let (holdfast_tensor::DType::F64, Some(v)) =
            (T::DTYPE, self.f64_pool.get_mut(&len).and_then(Vec::pop))
        {
            {
                self.reused += 1;
                // Element type proven by DTYPE; convert through f64 values (test code, no unsafe).
                return v.into_iter().map(T::from_f64).collect();
            }
        }
        HeapAlloc.take(len)
    }

    fn give<T: Element>(&mut self, buf: Vec<T>) {
        self.gives += 1;
        if T::DTYPE == holdfast_tensor::DType::F64 {
            let len = buf.len();
            self.f64_pool.entry(len).or_default().push(buf.into_iter().map(T::re_f64).collect());
        }
    }
}
