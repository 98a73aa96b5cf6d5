//! Elementwise, reduce, permute and matmul against naive loops, on dense and strided inputs,
//! f32 and f64, serial and with rayon.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

mod support;

use std::num::NonZeroUsize;

use holdfast_kernels::{FanOut, HeapAlloc, Par, elementwise, matmul, permute, reduce};
use holdfast_tensor::{Tensor, TensorRead};
use support::{SplitMix64, random_tensor, rel_err};

fn pars() -> [Par; 2] {
    [Par::Seq, Par::Rayon(NonZeroUsize::new(2).unwrap(), &FanOut::ALWAYS)]
}

fn naive_matmul(a: &TensorRead<'_, f64>, b: &TensorRead<'_, f64>) -> Vec<f64> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                c[i * n + j] += a.get(&[i, p]).unwrap() * b.get(&[p, j]).unwrap();
            }
        }
    }
    c
}

#[test]
fn matmul_matches_triple_loop() {
    let mut rng = SplitMix64(1);
    for &(m, k, n) in
        &[(1, 1, 1), (2, 2, 2), (3, 5, 4), (4, 4, 4), (17, 9, 33), (64, 64, 64), (130, 70, 90)]
    {
        let a = random_tensor::<f64>(&[m, k], &mut rng);
        let b = random_tensor::<f64>(&[k, n], &mut rng);
        let bt = random_tensor::<f64>(&[n, k], &mut rng);
        for par in pars() {
            let c = matmul::matmul(a.read(), b.read(), &mut HeapAlloc, par).unwrap();
            assert!(rel_err(c.as_slice(), &naive_matmul(&a.read(), &b.read())) < 1e-12);
            // Transposed right operand, read in place.
            let c = matmul::matmul(a.read(), bt.read().transpose(), &mut HeapAlloc, par).unwrap();
            assert!(
                rel_err(c.as_slice(), &naive_matmul(&a.read(), &bt.read().transpose())) < 1e-12
            );
            let mut out = Tensor::<f64>::zeros([m, n]);
            matmul::matmul_into(a.read(), b.read(), &mut out, par).unwrap();
            assert!(rel_err(out.as_slice(), &naive_matmul(&a.read(), &b.read())) < 1e-12);
        }
    }
}

#[test]
fn batched_matmul_matches_per_item() {
    let mut rng = SplitMix64(2);
    let a = random_tensor::<f64>(&[5, 6, 7], &mut rng);
    let b = random_tensor::<f64>(&[5, 7, 3], &mut rng);
    for par in pars() {
        let c = matmul::matmul(a.read(), b.read(), &mut HeapAlloc, par).unwrap();
        assert_eq!(c.shape(), &[5, 6, 3]);
        for i in 0..5 {
            let ai = a.read().slice(0, i..i + 1).unwrap().permute(&[1, 2, 0]).unwrap();
            let ai = ai.slice(2, 0..1).unwrap().to_tensor();
            let ai = Tensor::from_vec([6, 7], ai.as_slice().to_vec()).unwrap();
            let bi = Tensor::from_vec([7, 3], b.as_slice()[i * 21..(i + 1) * 21].to_vec()).unwrap();
            let want = naive_matmul(&ai.read(), &bi.read());
            assert!(rel_err(&c.as_slice()[i * 18..(i + 1) * 18], &want) < 1e-12);
        }
    }
}

#[test]
fn matmul_f32_and_empty() {
    let a = Tensor::<f32>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let c = matmul::matmul(a.read(), a.read(), &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(c.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    let e = Tensor::<f64>::zeros([3, 0]);
    let f = Tensor::<f64>::zeros([0, 2]);
    let c = matmul::matmul(e.read(), f.read(), &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(c.as_slice(), &[0.0; 6]);
}

#[test]
fn elementwise_with_broadcasting_and_strides() {
    let mut rng = SplitMix64(3);
    let a = random_tensor::<f64>(&[4, 1, 5], &mut rng);
    let b = random_tensor::<f64>(&[3, 1], &mut rng);
    for par in pars() {
        let c = elementwise::div(a.read(), b.read(), &mut HeapAlloc, par).unwrap();
        assert_eq!(c.shape(), &[4, 3, 5]);
        for i in 0..4 {
            for j in 0..3 {
                for k in 0..5 {
                    let want = a.get(&[i, 0, k]).unwrap() / b.get(&[j, 0]).unwrap();
                    assert_eq!(c.get(&[i, j, k]).unwrap(), want);
                }
            }
        }
    }
    // Big enough to fan out, with a transposed operand.
    let x = random_tensor::<f64>(&[300, 200], &mut rng);
    let y = random_tensor::<f64>(&[200, 300], &mut rng);
    for par in pars() {
        let s = elementwise::add(x.read(), y.read().transpose(), &mut HeapAlloc, par).unwrap();
        let want: Vec<f64> =
            x.read().iter().zip(y.read().transpose().iter()).map(|(p, q)| p + q).collect();
        assert_eq!(s.as_slice(), &want[..]);
        let d = elementwise::sub(x.read(), x.read(), &mut HeapAlloc, par).unwrap();
        assert!(d.as_slice().iter().all(|&v| v == 0.0));
        let m = elementwise::mul(x.read(), x.read(), &mut HeapAlloc, par).unwrap();
        assert_eq!(m.as_slice()[7], x.as_slice()[7] * x.as_slice()[7]);
        let sc = elementwise::scale(x.read().transpose(), 3.0, &mut HeapAlloc, par).unwrap();
        assert_eq!(sc.get(&[5, 9]).unwrap(), 3.0 * x.get(&[9, 5]).unwrap());
    }
    // Scalars and empty tensors.
    let s = Tensor::scalar(2.0f64);
    let c = elementwise::mul(s.read(), a.read(), &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(c.shape(), a.shape());
    let e = Tensor::<f64>::zeros([0, 3]);
    let c = elementwise::add(e.read(), b.read().transpose(), &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(c.shape(), &[0, 3]);
}

#[test]
fn sum_over_axes() {
    let mut rng = SplitMix64(4);
    let a = random_tensor::<f64>(&[40, 30, 50], &mut rng);
    for par in pars() {
        for axes in [&[][..], &[0], &[1], &[2], &[0, 2], &[2, 0, 1], &[1, 2]] {
            let got = reduce::sum(a.read(), axes, &mut HeapAlloc, par).unwrap();
            let kept: Vec<usize> = (0..3).filter(|i| !axes.contains(i)).collect();
            let shape: Vec<usize> = kept.iter().map(|&i| a.shape()[i]).collect();
            assert_eq!(got.shape(), &shape[..]);
            let mut want = vec![0.0; shape.iter().product()];
            for i in 0..40 {
                for j in 0..30 {
                    for k in 0..50 {
                        let idx = [i, j, k];
                        let o = kept.iter().fold(0, |acc, &ax| acc * a.shape()[ax] + idx[ax]);
                        want[o] += a.get(&idx).unwrap();
                    }
                }
            }
            assert!(rel_err(got.as_slice(), &want) < 1e-12, "{axes:?}");
        }
        // Strided input.
        let t =
            reduce::sum(a.read().permute(&[2, 0, 1]).unwrap(), &[2], &mut HeapAlloc, par).unwrap();
        let u = reduce::sum(a.read(), &[1], &mut HeapAlloc, par).unwrap();
        let ut = permute::permute(u.read(), &[1, 0], &mut HeapAlloc, par).unwrap();
        assert!(rel_err(t.as_slice(), ut.as_slice()) < 1e-12);
    }
}

#[test]
fn permute_matches_views() {
    let mut rng = SplitMix64(5);
    let a = random_tensor::<f64>(&[7, 33, 20, 3], &mut rng);
    for par in pars() {
        for perm in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2], [2, 0, 3, 1], [0, 2, 1, 3]] {
            let p = permute::permute(a.read(), &perm, &mut HeapAlloc, par).unwrap();
            assert_eq!(p.as_slice(), &a.read().permute(&perm).unwrap().to_vec()[..]);
        }
    }
    let big = random_tensor::<f32>(&[300, 257], &mut rng);
    let p = permute::permute(big.read(), &[1, 0], &mut HeapAlloc, pars()[1]).unwrap();
    assert_eq!(p.as_slice(), &big.read().transpose().to_vec()[..]);
}
