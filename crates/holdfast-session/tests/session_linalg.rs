//! The view's factorizations in a held session (SPEC T3, T4): results agree with the kernels
//! called directly, errors are typed and leave the session usable with its pool whole, and a
//! warm held SVD, QR or eigh of a 32×32 matrix makes no heap allocation on the calling thread
//! (a process-global counting allocator, so this is its own test binary).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a failed unwrap is a failed test")]

#[path = "../../holdfast-resources/tests/support/counting_alloc.rs"]
mod counting_alloc;

use holdfast_kernels::linalg::{self, LinalgScratch};
use holdfast_kernels::{HeapAlloc, KernelError, Par};
use holdfast_session::{CpuBackend, OpError, Tensor, Truncation};

use counting_alloc::allocations;

fn random(shape: &[usize], seed: u64) -> Tensor<f64> {
    let mut state = seed;
    let n = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    Tensor::from_vec(shape.to_vec(), data).unwrap()
}

fn backend() -> CpuBackend {
    CpuBackend::builder().threads(1).private_arbiter().build().unwrap()
}

#[test]
fn warm_held_factorizations_of_32x32_allocate_nothing() {
    let a = random(&[32, 32], 1);
    let b = random(&[32], 2);
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    // One round of every factorization, its outputs handed back to the session's pool.
    let round = |session: &mut holdfast_session::CpuHeldSession<'_>| {
        session.with_session(|v| {
            let f = v.svd(a.read(), &[0], Truncation::none()).unwrap();
            let (q, r) = v.qr(a.read(), &[0]).unwrap();
            let (w, vecs) = v.eigh(a.read()).unwrap();
            let x = v.solve(a.read(), b.read()).unwrap();
            let n = v.norm(a.read()).unwrap();
            let s0 = f.s.as_slice()[0];
            for t in [f.u, f.vh, q, r, vecs, x] {
                v.recycle(t);
            }
            v.recycle(f.s);
            v.recycle(w);
            (s0, n)
        })
    };
    let cold = round(&mut session);
    round(&mut session);
    let (warm, n) = allocations(|| round(&mut session));
    assert_eq!(warm, cold, "the same answers warm and cold");
    assert_eq!(n, 0, "a warm held round of svd, qr, eigh, solve and norm allocated {n} times");
    session.close().unwrap();
}

#[test]
fn the_view_gives_the_kernels_answers() {
    let t = random(&[3, 4, 5], 3);
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    let held = session.with_session(|v| v.svd(t.read(), &[2, 0], Truncation::none().max_rank(3)));
    let held = held.unwrap();
    let mut scratch = LinalgScratch::new();
    let direct = linalg::svd(
        t.read(),
        &[2, 0],
        Truncation::none().max_rank(3),
        &mut scratch,
        &mut HeapAlloc,
        Par::Seq,
    )
    .unwrap();
    assert_eq!(held.s.as_slice(), direct.s.as_slice());
    assert_eq!(held.u.shape(), &[5, 3, 3]);
    assert_eq!(held.vh.shape(), &[3, 4]);
    assert_eq!(held.discarded_weight, direct.discarded_weight);
    assert!(held.discarded_weight > 0.0, "rank 3 of 4 drops weight");
    let stats = session.close().unwrap();
    assert_eq!(stats.operations, 1);
}

#[test]
fn factorization_errors_are_typed_and_leave_the_pool_whole() {
    let backend = backend();
    let t = random(&[2, 3], 4);
    let nan = Tensor::<f64>::from_vec([2, 2], vec![f64::NAN, 0.0, 0.0, 1.0]).unwrap();
    let singular = Tensor::<f64>::zeros([2, 2]);
    let rhs = random(&[2], 5);
    let mut session = backend.open_session().unwrap();
    session.with_session(|v| {
        let kernel = |e: OpError| match e {
            OpError::Kernel(k) => k,
            other => panic!("expected a kernel error, got {other:?}"),
        };
        assert_eq!(
            kernel(v.svd(t.read(), &[5], Truncation::none()).unwrap_err()),
            KernelError::AxisOutOfRange { axis: 5, rank: 2 }
        );
        assert!(matches!(
            kernel(v.svd(t.read(), &[0], Truncation::none().max_rank(0)).unwrap_err()),
            KernelError::InvalidTruncation { .. }
        ));
        assert_eq!(
            kernel(v.svd(nan.read(), &[0], Truncation::none()).unwrap_err()),
            KernelError::NoConvergence { routine: "svd" }
        );
        assert!(matches!(kernel(v.eigh(t.read()).unwrap_err()), KernelError::NotSquare { .. }));
        assert_eq!(
            kernel(v.solve(singular.read(), rhs.read()).unwrap_err()),
            KernelError::Singular { routine: "solve" }
        );
        assert!(matches!(
            kernel(v.solve(t.read(), rhs.read()).unwrap_err()),
            KernelError::NotSquare { .. }
        ));
        assert!(matches!(v.reshape(t.read(), &[7]), Err(OpError::Tensor(_))));
        // The session still works after every refusal.
        let f = v.svd(t.read(), &[0], Truncation::none()).unwrap();
        assert_eq!(f.s.shape(), &[2]);
    });
    let stats = session.close().unwrap();
    // Seven factorizations ran (six refused by their kernel); the reshape was refused before it
    // ran, as an access check would be.
    assert_eq!(stats.operations, 7);
    // The error paths handed their buffers back: none in flight, and the later operations were
    // served from them (the SVD that did not converge gave back u, vh and s; the singular solve
    // took two of them).
    let pool = backend.buffer_pool_stats().unwrap();
    assert_eq!(pool.in_flight, 0, "{pool:?}");
    assert!(pool.hits >= 2, "{pool:?}");
}

#[test]
fn reshape_copies_once_and_the_read_view_copies_never() {
    let t = random(&[4, 6], 6);
    let backend = backend();
    let before = holdfast_tensor::copy_stats();
    let view = t.read().reshape(&[2, 2, 3, 2]).unwrap();
    assert_eq!(holdfast_tensor::copy_stats(), before, "a reshape view copies nothing");
    assert_eq!(view.get(&[1, 1, 2, 1]), t.read().get(&[3, 5]));
    let transposed = t.read().transpose();
    let flat = backend.with_backend_session(|v| v.reshape(transposed, &[24])).unwrap().unwrap();
    let after = holdfast_tensor::copy_stats();
    assert_eq!(after.copies - before.copies, 1, "one counted copy");
    assert_eq!(flat.as_slice(), t.read().transpose().to_vec().as_slice());
}

#[test]
fn warm_held_complex_operations_allocate_nothing() {
    use holdfast_session::c64;
    let n = 32;
    let a = Tensor::<c64>::from_vec(
        [n, n],
        random(&[n, n], 7)
            .as_slice()
            .iter()
            .zip(random(&[n, n], 8).as_slice())
            .map(|(&re, &im)| c64::new(re, im))
            .collect(),
    )
    .unwrap();
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    let round = |session: &mut holdfast_session::CpuHeldSession<'_>| {
        session.with_session(|v| {
            let f = v.svd(a.read(), &[0], Truncation::none().max_rank(8)).unwrap();
            let (q, r) = v.qr(a.read(), &[0]).unwrap();
            let (w, vecs) = v.eigh(a.read()).unwrap();
            let c = v.conj(a.read()).unwrap();
            let p = v.matmul(a.read(), c.read()).unwrap();
            let e = v.einsum("ij,jk->ik", &[p.read(), a.read()]).unwrap();
            let first = e.as_slice()[0];
            for t in [f.u, f.vh, q, r, vecs, c, p, e] {
                v.recycle(t);
            }
            v.recycle(f.s);
            v.recycle(w);
            first
        })
    };
    let cold = round(&mut session);
    round(&mut session);
    let (warm, n) = allocations(|| round(&mut session));
    assert_eq!(warm, cold);
    assert_eq!(n, 0, "a warm held complex round allocated {n} times");
    session.close().unwrap();
}
