//! Regression tests for inputs found by the cargo-fuzz target `einsum_spec` (`fuzz/`, issue 10).
//! Each test names what the input does; its crash artifact is kept in `fuzz/seeds/einsum_spec/`.
//!
//! - `zero_sized_loop_labels_…`: `fuzz/seeds/einsum_spec/crash-hij-bjk-zero-dims` and
//!   `crash-repeated-labels-zero-dims`. A pairwise step whose loop labels have dimension 0 made
//!   the layout cost model compute `reps - 1` with `reps == 0` (`einsum/layout.rs`, "attempt to
//!   subtract with overflow" in debug builds, a wrapped cost in release).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

use holdfast_kernels::einsum::{einsum, einsum_with_path};
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_tensor::Tensor;

fn zeros(shape: &[usize]) -> Tensor<f64> {
    Tensor::zeros(shape.to_vec())
}

#[test]
fn zero_sized_loop_labels_in_a_pairwise_step_plan_and_run() {
    // The fuzzer's minimal input: every label of size 0.
    let (a, b) = (zeros(&[0, 0, 0]), zeros(&[0, 0, 0]));
    let out = einsum("hij,bjk->bik", &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(out.shape(), &[0, 0, 0]);
    // One zero-sized label at a time, the others not: the result has the output's shape, and is
    // zero wherever it is not empty (an empty sum).
    let specs: &[(&str, &[&[usize]])] = &[
        ("hij,bjk->bik", &[&[2, 3, 4], &[5, 4, 6]]),
        ("bij,bjk->bik", &[&[2, 3, 4], &[2, 4, 5]]),
        ("ijk,kl->ijl", &[&[2, 3, 4], &[4, 5]]),
        ("ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 5]]),
    ];
    for &(spec, shapes) in specs {
        let (inputs, output) = spec.split_once("->").unwrap();
        let labels: Vec<char> = inputs.chars().filter(|c| c.is_alphabetic()).collect();
        for &zero in &labels {
            let shapes: Vec<Vec<usize>> = inputs
                .split(',')
                .zip(shapes)
                .map(|(term, shape)| {
                    term.chars()
                        .zip(shape.iter())
                        .map(|(c, &d)| if c == zero { 0 } else { d })
                        .collect()
                })
                .collect();
            let tensors: Vec<Tensor<f64>> = shapes
                .iter()
                .map(|s| Tensor::from_vec(s.clone(), vec![1.0; s.iter().product()]).unwrap())
                .collect();
            let reads: Vec<_> = tensors.iter().map(Tensor::read).collect();
            let out = einsum(spec, &reads, &mut HeapAlloc, Par::Seq)
                .unwrap_or_else(|e| panic!("{spec} with {zero} = 0: {e}"));
            let want: Vec<usize> = output
                .chars()
                .map(|c| {
                    let (t, i) = inputs
                        .split(',')
                        .enumerate()
                        .find_map(|(t, term)| term.chars().position(|x| x == c).map(|i| (t, i)))
                        .unwrap();
                    shapes[t][i]
                })
                .collect();
            assert_eq!(out.shape(), want.as_slice(), "{spec} with {zero} = 0");
            assert!(
                out.as_slice().iter().all(|&x| x == 0.0),
                "{spec} with {zero} = 0: an empty sum is 0"
            );
            if reads.len() == 3 {
                let path =
                    einsum_with_path(spec, &reads, &[(1, 2), (0, 1)], &mut HeapAlloc, Par::Seq)
                        .unwrap();
                assert_eq!(path.shape(), out.shape());
            }
        }
    }
}

#[test]
fn zero_sized_loop_labels_with_repeated_labels_plan_and_run() {
    // The other fuzzer input: a diagonal (`b` twice) and a long run of one label, all of size 0.
    // The fuzzer wrote its labels as control characters, which are malformed now (as in numpy);
    // the same shape of spec with letters plans and runs.
    let a = zeros(&[0, 0, 0, 0]);
    let b = zeros(&[0; 12]);
    let fuzzed = "\u{c}bijb,jk\u{4}\0\0\0\0\0\0\0\0\0";
    let err = einsum(fuzzed, &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap_err();
    assert!(matches!(err, holdfast_kernels::KernelError::MalformedSpec { .. }), "{err}");
    let spec = "\u{c}bijb,jkczzzzzzzzz";
    let out = einsum(spec, &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(out.numel(), 0);
}
