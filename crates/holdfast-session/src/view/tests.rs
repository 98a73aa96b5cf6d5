//! Tests of the view: access compatibility (S9) and copy-free reads across engines.

use holdfast_tensor::{AllocationDomain, ProviderId, Readiness, Tensor, copy_stats};

use crate::{CpuBackend, OpError};

fn backend(threads: usize) -> CpuBackend {
    CpuBackend::builder().threads(threads).private_arbiter().build().unwrap()
}

#[test]
fn host_data_from_one_backend_is_read_by_another_without_a_copy() {
    let first = backend(1);
    let a = Tensor::<f64>::from_vec([4, 4], (0..16).map(f64::from).collect()).unwrap();
    let made = first.with_backend_session(|v| v.add(a.read(), a.read())).unwrap().unwrap();
    let threads = first.cpus().len();
    let second = backend(threads);
    let before = copy_stats();
    let again = second
        .with_backend_session(|v| v.matmul(made.read(), made.read().transpose()))
        .unwrap()
        .unwrap();
    let s = second.with_backend_session(|v| v.sum(made.read().transpose(), &[0])).unwrap().unwrap();
    assert_eq!(copy_stats(), before, "no copy to cross engines or read strided views");
    assert_eq!(again.shape(), &[4, 4]);
    assert_eq!(s.as_slice()[0], 2.0 * (0.0 + 1.0 + 2.0 + 3.0));
}

#[test]
fn foreign_and_pending_inputs_are_rejected_before_any_fast_path() {
    let b = backend(1);
    let dev = AllocationDomain::Foreign(ProviderId::new(7).unwrap());
    let host = Tensor::<f64>::from_vec([2, 2], vec![1.0; 4]).unwrap();
    let foreign = host.clone().with_domain(dev);
    let pending = host.clone().with_readiness(Readiness::Pending);
    let mut s = b.open_session().unwrap();
    let results = s.with_session(|v| {
        vec![
            v.add(host.read(), foreign.read()).map(|_| ()),
            v.scale(pending.read(), 1.0).map(|_| ()), // a no-op scale is still rejected
            v.permute(foreign.read(), &[0, 1]).map(|_| ()), // an identity permutation too
            v.sum(pending.read(), &[]).map(|_| ()),
            v.matmul(foreign.read(), host.read()).map(|_| ()),
            v.einsum("ij", &[pending.read()]).map(|_| ()), // a single-operand einsum too
            v.einsum("ij,jk->ik", &[host.read(), foreign.read()]).map(|_| ()),
        ]
    });
    assert!(matches!(results[0], Err(OpError::ForeignStorage { operand: 1, .. })));
    assert!(matches!(results[1], Err(OpError::PendingStorage { operand: 0 })));
    assert!(matches!(results[2], Err(OpError::ForeignStorage { operand: 0, .. })));
    assert!(matches!(results[3], Err(OpError::PendingStorage { operand: 0 })));
    assert!(matches!(results[4], Err(OpError::ForeignStorage { operand: 0, .. })));
    assert!(matches!(results[5], Err(OpError::PendingStorage { operand: 0 })));
    assert!(matches!(results[6], Err(OpError::ForeignStorage { operand: 1, .. })));
    let mut out = Tensor::<f64>::zeros([2, 2]).with_readiness(Readiness::Pending);
    let r = s.with_session(|v| v.matmul_into(host.read(), host.read(), &mut out));
    assert!(matches!(r, Err(OpError::BadOutput(_))));
    let st = s.close().unwrap();
    assert_eq!(st.operations, 0, "rejected before any kernel ran");
    assert_eq!((st.buffer_hits, st.buffer_misses, st.plan_misses), (0, 0, 0));
}

#[test]
fn zeros_are_served_by_the_pool_zeroed_and_overflow_is_a_typed_error() {
    let backend = backend(1);
    let mut session = backend.open_session().unwrap();
    let ones = Tensor::<f64>::from_vec([6], vec![1.0; 6]).unwrap();
    session.with_session(|v| v.recycle(ones));
    let z = session.with_session(|v| v.zeros::<f64>(&[3, 2])).unwrap();
    assert_eq!((z.shape(), z.as_slice()), (&[3usize, 2][..], &[0.0; 6][..]));
    assert_eq!(session.stats().buffer_hits, 1, "the recycled buffer served it");
    let empty = session.with_session(|v| v.zeros::<f64>(&[4, 0])).unwrap();
    assert_eq!((empty.shape(), empty.numel()), (&[4usize, 0][..], 0));
    let scalar = session.with_session(|v| v.zeros::<holdfast_tensor::c64>(&[])).unwrap();
    assert_eq!(scalar.as_slice(), &[holdfast_tensor::c64::new(0.0, 0.0)]);
    let huge = session.with_session(|v| v.zeros::<f64>(&[usize::MAX, 2]));
    assert!(matches!(huge, Err(OpError::Tensor(_))), "{huge:?}");
}
