//! The `unsafe` code of holdfast-kernels, driven to its edges for the memory checkers
//! (`cargo xtask sanitize`: AddressSanitizer, ThreadSanitizer and valgrind memcheck run this
//! binary; it also runs in the normal suite):
//!
//! - the small-product path (`matmul::nano`, products of at most 16³ multiply-adds) is reached
//!   by the small cases below (4³ and 5·7·3, dense, transposed and offset) with the same checks;
//! - `matmul::bridge::faer_typed` builds faer views from raw parts: views with offsets ending at
//!   the last element of their storage, transposed (column-major) strides, empty dimensions whose
//!   offset equals the storage length, batched operands, f32 and f64, serial and on a rayon pool
//!   (faer's own threads write disjoint blocks of the output);
//! - `matmul::thin` runs an AVX-512 kernel (where the CPU has it) on a thin `f64` product whose
//!   large operand is transposed storage: sliced so that the last element each view addresses
//!   is the last of its storage, with a ragged last group of rows and a partial chunk of `k`,
//!   serial and cut into blocks over two threads;
//! - `nontemporal` writes a product's output past the cache (`matmul::stream`): a
//!   batch whose every product writes rows of 16 elements 1024 apart in a 32 MiB output, `f64`
//!   and complex, serial and on two threads;
//! - `alloc::advise_huge_pages` calls `madvise` on the page-aligned interior of fresh buffers of
//!   [`HUGE_PAGE_MIN_BYTES`] and more (odd lengths included); the buffers must stay zeroed and
//!   fully usable.
//!
//! Every result is compared with a straightforward triple loop.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

use std::num::NonZeroUsize;

use holdfast_kernels::{FanOut, HUGE_PAGE_MIN_BYTES, HeapAlloc, KernelAlloc, Par, einsum, matmul};
use holdfast_tensor::{Element, Layout, Tensor, TensorRead};

fn values<T: Element>(n: usize, seed: u64) -> Vec<T> {
    (0..n).map(|i| T::from_f64(((i as u64 * 37 + seed * 11) % 19) as f64 / 8.0 - 1.0)).collect()
}

/// `a·b` by the triple loop, for 2-D logical views.
fn naive<T: Element>(a: &TensorRead<'_, T>, b: &TensorRead<'_, T>) -> Vec<f64> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    let (av, bv) = (a.to_vec(), b.to_vec());
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let x = av[i * k + p].re_f64();
            for j in 0..n {
                c[i * n + j] += x * bv[p * n + j].re_f64();
            }
        }
    }
    c
}

fn assert_close<T: Element>(got: &Tensor<T>, want: &[f64], tol: f64) {
    assert_eq!(got.numel(), want.len());
    for (i, (g, w)) in got.read().to_vec().iter().zip(want).enumerate() {
        let g = g.re_f64();
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "element {i}: {g} vs {w}");
    }
}

fn pars() -> [Par; 2] {
    [Par::Seq, Par::Rayon(NonZeroUsize::new(2).unwrap(), &FanOut::ALWAYS)]
}

/// Runs `f` on a two-thread rayon pool, as the provider installs one around a kernel call.
fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(f)
}

fn gemm_cases<T: Element>(tol: f64) {
    // (m, k, n): below and above the loop kernel's 64-MAC cut-over, and big enough to fan out.
    for &(m, k, n) in &[(4, 4, 4), (5, 7, 3), (16, 9, 33), (64, 65, 63), (128, 128, 128)] {
        for par in pars() {
            // Dense.
            let a = Tensor::<T>::from_vec([m, k], values(m * k, 1)).unwrap();
            let b = Tensor::<T>::from_vec([k, n], values(k * n, 2)).unwrap();
            let want = naive(&a.read(), &b.read());
            assert_close(
                &on_pool(|| matmul::matmul(a.read(), b.read(), &mut HeapAlloc, par)).unwrap(),
                &want,
                tol,
            );
            // Transposed storage: column-major strides for both operands.
            let at = Tensor::<T>::from_vec([k, m], values(m * k, 3)).unwrap();
            let bt = Tensor::<T>::from_vec([n, k], values(k * n, 4)).unwrap();
            let (av, bv) = (at.read().transpose(), bt.read().transpose());
            let want = naive(&av, &bv);
            assert_close(
                &on_pool(|| matmul::matmul(av, bv, &mut HeapAlloc, par)).unwrap(),
                &want,
                tol,
            );
            // Sliced views whose last element is the last element of their storage (offsets).
            let big_a =
                Tensor::<T>::from_vec([m + 3, k + 2], values((m + 3) * (k + 2), 5)).unwrap();
            let big_b =
                Tensor::<T>::from_vec([k + 1, n + 4], values((k + 1) * (n + 4), 6)).unwrap();
            let la = Layout::contiguous(&[m + 3, k + 2])
                .unwrap()
                .sliced(0, 3..m + 3)
                .unwrap()
                .sliced(1, 2..k + 2)
                .unwrap();
            let lb = Layout::contiguous(&[k + 1, n + 4])
                .unwrap()
                .sliced(0, 1..k + 1)
                .unwrap()
                .sliced(1, 4..n + 4)
                .unwrap();
            let av = TensorRead::from_layout(big_a.as_slice(), la).unwrap();
            let bv = TensorRead::from_layout(big_b.as_slice(), lb).unwrap();
            let want = naive(&av, &bv);
            assert_close(
                &on_pool(|| matmul::matmul(av, bv, &mut HeapAlloc, par)).unwrap(),
                &want,
                tol,
            );
            // Into a caller-owned output.
            let mut out = Tensor::<T>::zeros([m, n]);
            let want = naive(&a.read(), &b.read());
            on_pool(|| matmul::matmul_into(a.read(), b.read(), &mut out, par)).unwrap();
            assert_close(&out, &want, tol);
        }
    }
}

#[test]
fn faer_views_over_dense_strided_and_offset_operands_f64() {
    gemm_cases::<f64>(1e-12);
}

#[test]
fn faer_views_over_dense_strided_and_offset_operands_f32() {
    gemm_cases::<f32>(1e-4);
}

#[test]
fn a_thin_product_over_a_transposed_large_operand() {
    // `A` is `[k, m]` storage read transposed (unit row stride), `B` and `C` are row-major with
    // 21 columns: `matmul::thin`'s shape. `m = 8·40 + 3` rows, `k = 32·9 + 7`.
    let (m, k, n) = (323, 295, 21);
    let big_a = Tensor::<f64>::from_vec([k + 2, m + 1], values((k + 2) * (m + 1), 7)).unwrap();
    let la = Layout::contiguous(&[k + 2, m + 1])
        .unwrap()
        .sliced(0, 2..k + 2)
        .unwrap()
        .sliced(1, 1..m + 1)
        .unwrap();
    let av = TensorRead::from_layout(big_a.as_slice(), la).unwrap().transpose();
    let b = Tensor::<f64>::from_vec([k, n], values(k * n, 8)).unwrap();
    let want = naive(&av, &b.read());
    // On two threads the product is cut into two blocks of rows, each still of the kernel's
    // shape.
    for par in pars() {
        let got = on_pool(|| matmul::matmul(av.clone(), b.read(), &mut HeapAlloc, par)).unwrap();
        assert_close(&got, &want, 1e-12);
        // Into a caller-owned output holding other values: every element is replaced.
        let mut out = Tensor::<f64>::from_vec([m, n], values(m * n, 9)).unwrap();
        on_pool(|| matmul::matmul_into(av.clone(), b.read(), &mut out, par)).unwrap();
        assert_close(&out, &want, 1e-12);
    }
}

#[test]
fn faer_views_over_empty_dimensions_at_the_end_of_their_storage() {
    for &(m, k, n) in &[(0, 8, 8), (8, 0, 8), (8, 8, 0), (0, 0, 0), (65, 0, 65)] {
        for par in pars() {
            // Views sliced to an empty range at the very end of their storage: offset == len.
            let big_a =
                Tensor::<f64>::from_vec([m + 1, k + 1], values((m + 1) * (k + 1), 7)).unwrap();
            let big_b =
                Tensor::<f64>::from_vec([k + 1, n + 1], values((k + 1) * (n + 1), 8)).unwrap();
            let la = Layout::contiguous(&[m + 1, k + 1])
                .unwrap()
                .sliced(0, 1..m + 1)
                .unwrap()
                .sliced(1, 1..k + 1)
                .unwrap();
            let lb = Layout::contiguous(&[k + 1, n + 1])
                .unwrap()
                .sliced(0, 1..k + 1)
                .unwrap()
                .sliced(1, 1..n + 1)
                .unwrap();
            let av = TensorRead::from_layout(big_a.as_slice(), la).unwrap();
            let bv = TensorRead::from_layout(big_b.as_slice(), lb).unwrap();
            let c = on_pool(|| matmul::matmul(av, bv, &mut HeapAlloc, par)).unwrap();
            assert_eq!(c.shape(), &[m, n]);
            assert!(c.as_slice().iter().all(|&x| x == 0.0), "an empty sum is zero");
        }
    }
}

#[test]
fn faer_views_over_batched_operands() {
    let (batch, m, k, n) = (3, 9, 10, 11);
    for par in pars() {
        let a = Tensor::<f64>::from_vec([batch, m, k], values(batch * m * k, 9)).unwrap();
        let b = Tensor::<f64>::from_vec([batch, k, n], values(batch * k * n, 10)).unwrap();
        let c = on_pool(|| matmul::matmul(a.read(), b.read(), &mut HeapAlloc, par)).unwrap();
        assert_eq!(c.shape(), &[batch, m, n]);
        for bi in 0..batch {
            let a2 = Tensor::<f64>::from_vec(
                [m, k],
                a.as_slice()[bi * m * k..(bi + 1) * m * k].to_vec(),
            )
            .unwrap();
            let b2 = Tensor::<f64>::from_vec(
                [k, n],
                b.as_slice()[bi * k * n..(bi + 1) * k * n].to_vec(),
            )
            .unwrap();
            let want = naive(&a2.read(), &b2.read());
            let got = Tensor::<f64>::from_vec(
                [m, n],
                c.as_slice()[bi * m * n..(bi + 1) * m * n].to_vec(),
            )
            .unwrap();
            assert_close(&got, &want, 1e-12);
        }
    }
}

#[test]
fn huge_page_advice_keeps_fresh_buffers_zeroed_and_usable() {
    let f64s = HUGE_PAGE_MIN_BYTES / 8;
    for len in [f64s - 1, f64s, f64s + 1, f64s + 4097, 3 * f64s + 5] {
        let mut buf: Vec<f64> = HeapAlloc.take(len);
        assert_eq!(buf.len(), len);
        assert!(buf.iter().all(|&x| x == 0.0), "fresh buffers are zeroed");
        // Every element, first and last page included, is writable and reads back.
        for (i, x) in buf.iter_mut().enumerate().step_by(511) {
            *x = i as f64;
        }
        let last = len - 1;
        buf[last] = -1.0;
        assert_eq!(buf[last], -1.0);
        assert_eq!(buf[511], 511.0);
        HeapAlloc.give(buf);
    }
    let f32s = HUGE_PAGE_MIN_BYTES / 4 + 3;
    let zeroed: Vec<f32> = HeapAlloc.take_zeroed(f32s);
    assert!(zeroed.iter().all(|&x| x == 0.0));
}

#[test]
fn a_gemm_output_large_enough_for_huge_pages_is_correct() {
    // 1024 × 1024 f64 output = 8 MiB: allocated fresh, advised, then written by faer.
    let (m, k, n) = (1024, 1, 1024);
    let a = Tensor::<f64>::from_vec([m, k], values(m * k, 11)).unwrap();
    let b = Tensor::<f64>::from_vec([k, n], values(k * n, 12)).unwrap();
    let c = on_pool(|| {
        matmul::matmul(
            a.read(),
            b.read(),
            &mut HeapAlloc,
            Par::Rayon(NonZeroUsize::new(2).unwrap(), &FanOut::ALWAYS),
        )
    })
    .unwrap();
    for &(i, j) in &[(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1), (517, 3)] {
        let want = a.as_slice()[i] * b.as_slice()[j];
        assert_eq!(c.as_slice()[i * n + j], want);
    }
}

/// `bik,kj->ibj` with each product's output rows (16 elements) 1024 apart in a 32 MiB output:
/// the products are streamed, and every element must be the triple loop's.
fn streamed_case<T: Element>(tol: f64) {
    let (nb, ni, nk, nj) = (64, 4096, 2, 16);
    let a = Tensor::from_vec([nb, ni, nk], values::<T>(nb * ni * nk, 3)).unwrap();
    let b = Tensor::from_vec([nk, nj], values::<T>(nk * nj, 5)).unwrap();
    let (av, bv) = (a.read().to_vec(), b.read().to_vec());
    let mut want = vec![0.0; ni * nb * nj];
    for (at, w) in want.iter_mut().enumerate() {
        let (i, q, j) = (at / (nb * nj), at / nj % nb, at % nj);
        *w = (0..nk).map(|p| av[(q * ni + i) * nk + p].re_f64() * bv[p * nj + j].re_f64()).sum();
    }
    for par in pars() {
        let ops = [a.read(), b.read()];
        let c = on_pool(|| einsum::einsum("bik,kj->ibj", &ops, &mut HeapAlloc, par)).unwrap();
        assert_eq!(c.shape(), &[ni, nb, nj]);
        assert_close(&c, &want, tol);
    }
}

#[test]
fn products_writing_short_rows_far_apart_stream_their_output() {
    streamed_case::<f64>(1e-12);
    streamed_case::<holdfast_tensor::c64>(1e-12);
}
