//! Bad einsum input gives a typed error, never a panic: malformed specs, label/rank mismatch,
//! wrong operand count, bad paths, conflicting dimensions; and a parser fuzz test.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

use holdfast_kernels::einsum::{einsum, einsum_with_path, parse};
use holdfast_kernels::{HeapAlloc, KernelError, Par};
use holdfast_tensor::Tensor;
use proptest::prelude::*;

fn t(shape: &[usize]) -> Tensor<f64> {
    Tensor::zeros(shape.to_vec())
}

#[test]
fn malformed_specs() {
    for (spec, position) in [("ij-k", 2), ("ij>k", 2), ("i->j->k", 4), ("ij->i,j", 5), ("-", 0)] {
        match parse(spec) {
            Err(KernelError::MalformedSpec { position: p, .. }) => {
                assert_eq!(p, position, "{spec}");
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
    assert_eq!(parse("ij->ik").unwrap_err(), KernelError::UnknownOutputLabel { label: 'k' });
    assert_eq!(parse("ij->ii").unwrap_err(), KernelError::RepeatedOutputLabel { label: 'i' });
    let msg = parse("ab-c").unwrap_err().to_string();
    assert!(msg.contains("'-' not followed by '>'"), "{msg}");
}

#[test]
fn operand_and_label_errors() {
    let a = t(&[2, 3]);
    let b = t(&[4, 5]);
    let err = einsum("ij,jk->ik", &[a.read()], &mut HeapAlloc, Par::Seq).unwrap_err();
    assert_eq!(err, KernelError::OperandCount { expected: 2, actual: 1 });
    let err = einsum("ijk->i", &[a.read()], &mut HeapAlloc, Par::Seq).unwrap_err();
    assert!(matches!(err, KernelError::LabelRankMismatch { operand: 0, labels: 3, rank: 2, .. }));
    let err = einsum("ij,jk->ik", &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap_err();
    assert_eq!(
        err,
        KernelError::LabelDimensionMismatch { label: 'j', first: 3, second: 4, operand: 1 }
    );
    assert!(err.to_string().contains("label 'j'"));
    // A repeated label with two dimensions in one operand.
    let err = einsum("ii->i", &[a.read()], &mut HeapAlloc, Par::Seq).unwrap_err();
    assert!(matches!(err, KernelError::LabelDimensionMismatch { label: 'i', .. }));
}

#[test]
fn path_errors() {
    let a = t(&[2, 3]);
    let b = t(&[3, 4]);
    let c = t(&[4, 2]);
    let ops = [a.read(), b.read(), c.read()];
    let spec = "ij,jk,ki->";
    let run = |p: &[(usize, usize)]| einsum_with_path(spec, &ops, p, &mut HeapAlloc, Par::Seq);
    assert_eq!(
        run(&[(0, 3), (0, 1)]).unwrap_err(),
        KernelError::PathIndexOutOfRange { step: 0, index: 3, len: 3 }
    );
    assert_eq!(
        run(&[(0, 1), (0, 2)]).unwrap_err(),
        KernelError::PathIndexOutOfRange { step: 1, index: 2, len: 2 }
    );
    assert_eq!(
        run(&[(1, 1), (0, 1)]).unwrap_err(),
        KernelError::PathRepeatedIndex { step: 0, index: 1 }
    );
    assert_eq!(run(&[(0, 1)]).unwrap_err(), KernelError::IncompletePath { remaining: 2 });
    assert!(run(&[(0, 1), (0, 1)]).is_ok());
}

#[test]
fn elementwise_and_matmul_shape_errors() {
    use holdfast_kernels::{elementwise, matmul, permute, reduce};
    let a = t(&[2, 3]);
    let b = t(&[3, 2]);
    assert!(matches!(
        elementwise::mul(a.read(), b.read(), &mut HeapAlloc, Par::Seq),
        Err(KernelError::BroadcastMismatch { .. })
    ));
    assert!(matches!(
        matmul::matmul(a.read(), a.read(), &mut HeapAlloc, Par::Seq),
        Err(KernelError::MatmulShape { reason: "inner dimensions differ", .. })
    ));
    let c = t(&[2, 2, 3]);
    assert!(matches!(
        matmul::matmul(c.read(), a.read(), &mut HeapAlloc, Par::Seq),
        Err(KernelError::MatmulShape { .. })
    ));
    let mut wrong = t(&[3, 3]);
    assert!(matches!(
        matmul::matmul_into(a.read(), b.read(), &mut wrong, Par::Seq),
        Err(KernelError::OutputShape { .. })
    ));
    assert!(matches!(
        permute::permute(a.read(), &[0, 0], &mut HeapAlloc, Par::Seq),
        Err(KernelError::InvalidPermutation { .. })
    ));
    assert_eq!(
        reduce::sum(a.read(), &[2], &mut HeapAlloc, Par::Seq).unwrap_err(),
        KernelError::AxisOutOfRange { axis: 2, rank: 2 }
    );
    assert_eq!(
        reduce::sum(a.read(), &[1, 1], &mut HeapAlloc, Par::Seq).unwrap_err(),
        KernelError::DuplicateAxis { axis: 1 }
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary strings never make the parser panic.
    #[test]
    fn parser_never_panics(s in "\\PC{0,24}") {
        let _ = parse(&s);
    }

    /// Strings over the spec alphabet never make parse or einsum panic.
    #[test]
    fn einsum_never_panics(s in "[ijk,\\->ë ]{0,16}", n in 0usize..4, d in 0usize..3) {
        let a = Tensor::<f64>::zeros(vec![d; 2]);
        let ops: Vec<_> = (0..n).map(|_| a.read()).collect();
        let _ = einsum(&s, &ops, &mut HeapAlloc, Par::Seq);
    }
}
