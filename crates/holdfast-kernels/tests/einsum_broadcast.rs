//! numpy's ellipsis and size-1 broadcasting in einsum (SPEC T6): each case against the reference
//! on the spec written out with plain labels and the operands broadcast by hand, and the typed
//! errors for what numpy refuses.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failed unwrap is a failed test"
)]

mod support;

use holdfast_kernels::einsum::{HashMapPlanCache, einsum, einsum_cached};
use holdfast_kernels::{HeapAlloc, KernelError, Par};
use holdfast_tensor::{Tensor, TensorRead, c64};
use support::{SplitMix64, random_complex, random_tensor, reference_einsum, rel_err_of};

fn random(shape: &[usize], seed: u64) -> Tensor<f64> {
    random_tensor(shape, &mut SplitMix64(seed))
}

/// `spec` on `operands` agrees with the reference of `plain` on `plain_operands`.
fn agrees(
    spec: &str,
    operands: &[TensorRead<'_, f64>],
    plain: &str,
    plain_operands: &[TensorRead<'_, f64>],
) {
    let got =
        einsum(spec, operands, &mut HeapAlloc, Par::Seq).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let (shape, want) = reference_einsum(plain, plain_operands);
    assert_eq!(got.shape(), shape.as_slice(), "{spec}");
    assert!(rel_err_of(got.as_slice(), &want) < 1e-12, "{spec}");
}

#[test]
fn ellipsis_broadcasts_like_numpy() {
    let a = random(&[2, 3, 4], 1);
    let b = random(&[4, 5], 2);
    agrees("...ij,...jk->...ik", &[a.read(), b.read()], "bij,jk->bik", &[a.read(), b.read()]);
    agrees("...ij,jk", &[a.read(), b.read()], "bij,jk->bik", &[a.read(), b.read()]);
    let v = random(&[2, 3], 3);
    let w = random(&[3], 4);
    // Implicit output: the broadcast axes, then the labels seen once (none here).
    agrees("...i,...i", &[v.read(), w.read()], "bi,i->b", &[v.read(), w.read()]);
    agrees("i...->...", &[a.read()], "ijk->jk", &[a.read()]);
    let sq = random(&[2, 3, 3], 5);
    agrees("...ii->...i", &[sq.read()], "bii->bi", &[sq.read()]);
    agrees("...ii", &[sq.read()], "bii->b", &[sq.read()]);
    agrees("i...i", &[random(&[3, 2, 3], 6).read()], "ibi->b", &[random(&[3, 2, 3], 6).read()]);
    // An ellipsis of no axes at all.
    let m = random(&[3, 4], 7);
    agrees("...ij->...ji", &[m.read()], "ij->ji", &[m.read()]);
    agrees("ij...->", &[m.read()], "ij->", &[m.read()]);
    // Ellipses of different lengths align from the right.
    let big = random(&[2, 3, 4, 5], 8);
    let small = random(&[4, 5], 9);
    agrees(
        "...,...->...",
        &[big.read(), small.read()],
        "abcd,cd->abcd",
        &[big.read(), small.read()],
    );
    // Implicit output with an ellipsis: the broadcast axes first, then the single labels (numpy
    // 2.4 gives shape (4, 3) here).
    let t = random(&[2, 3, 4], 22);
    let u = random(&[2], 23);
    agrees("ba...,b", &[t.read(), u.read()], "bac,b->ca", &[t.read(), u.read()]);
}

#[test]
fn length_one_axes_broadcast_against_longer_ones() {
    let col = random(&[3, 1], 10);
    let full = random(&[3, 4], 11);
    let col_b = col.read().broadcast_to(&[3, 4]).unwrap();
    agrees("ij,ij->ij", &[col.read(), full.read()], "ij,ij->ij", &[col_b.clone(), full.read()]);
    agrees("ij,ij->i", &[full.read(), col.read()], "ij,ij->i", &[full.read(), col_b]);
    // Under an ellipsis, as numpy's batch broadcasting.
    let a = random(&[1, 3, 4], 12);
    let b = random(&[5, 4, 2], 13);
    let a_b = a.read().broadcast_to(&[5, 3, 4]).unwrap();
    agrees("...ij,...jk->...ik", &[a.read(), b.read()], "bij,bjk->bik", &[a_b, b.read()]);
}

#[test]
fn complex_operands_broadcast_too() {
    let mut rng = SplitMix64(14);
    let a = random_complex::<c64>(&[2, 3, 4], &mut rng);
    let b = random_complex::<c64>(&[4], &mut rng);
    let got = einsum("...j,j->...", &[a.read(), b.read()], &mut HeapAlloc, Par::Seq).unwrap();
    let (_, want) = reference_einsum("abj,j->ab", &[a.read(), b.read()]);
    assert!(rel_err_of(got.as_slice(), &want) < 1e-12);
}

#[test]
fn cached_plans_of_ellipsis_specs_are_reused() {
    let a = random(&[2, 3, 4], 15);
    let b = random(&[4, 5], 16);
    let mut cache = HashMapPlanCache::default();
    for _ in 0..3 {
        einsum_cached(
            "...ij,jk->...ik",
            &[a.read(), b.read()],
            None,
            &mut cache,
            &mut HeapAlloc,
            Par::Seq,
        )
        .unwrap();
    }
    assert_eq!((cache.stats().misses, cache.stats().hits), (1, 2));
    // Another rank under the ellipsis is another plan.
    let c = random(&[3, 4], 17);
    let r = einsum_cached(
        "...ij,jk->...ik",
        &[c.read(), b.read()],
        None,
        &mut cache,
        &mut HeapAlloc,
        Par::Seq,
    )
    .unwrap();
    assert_eq!(r.shape(), &[3, 5]);
    assert_eq!(cache.stats().misses, 2);
}

#[test]
fn what_numpy_refuses_is_a_typed_error() {
    let m = random(&[3, 4], 18);
    let t = random(&[2, 3, 4], 19);
    let run = |spec: &str, ops: &[TensorRead<'_, f64>]| {
        einsum(spec, ops, &mut HeapAlloc, Par::Seq).map(|_| ())
    };
    let malformed = |spec: &str, ops: &[TensorRead<'_, f64>]| {
        assert!(
            matches!(run(spec, ops), Err(KernelError::MalformedSpec { .. })),
            "{spec}: {:?}",
            run(spec, ops)
        );
    };
    malformed("i.j", &[m.read()]);
    malformed("ij.", &[m.read()]);
    malformed("..ij", &[m.read()]);
    malformed("...i...j", &[m.read()]);
    malformed("ij->i.", &[m.read()]);
    malformed("ij->......", &[m.read()]);
    // Broadcast axes with an explicit output that has no place for them.
    malformed("...ij->ij", &[t.read()]);
    // More explicit labels than axes.
    assert!(matches!(run("...ijk", &[m.read()]), Err(KernelError::LabelRankMismatch { .. })));
    // Two lengths that are neither equal nor 1.
    let other = random(&[3, 5], 20);
    assert!(matches!(
        run("ij,ij->ij", &[m.read(), other.read()]),
        Err(KernelError::LabelDimensionMismatch { label: 'j', .. })
    ));
    // Within one operand a repeated label is not broadcast.
    assert!(matches!(
        run("ii", &[random(&[1, 3], 21).read()]),
        Err(KernelError::LabelDimensionMismatch { .. })
    ));
    assert!(matches!(
        run("...,...", &[m.read()]),
        Err(KernelError::OperandCount { expected: 2, actual: 1 })
    ));
    // Ellipses that do not broadcast (numpy: "operands could not be broadcast together").
    let w = random(&[3], 24);
    assert!(matches!(
        run("...a,...", &[random(&[2, 3], 25).read(), w.read()]),
        Err(KernelError::LabelDimensionMismatch { .. })
    ));
}
