//! Allocation counts of the per-operation paths (a process-global counting allocator, so this
//! is its own test binary): a checkout's take and return, a loan over a warm pool and plan-cache
//! hits allocate nothing.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations;

use holdfast_kernels::einsum::{PlanKey, PlanStore, einsum_cached};
use holdfast_kernels::{HeapAlloc, KernelAlloc, Par};
use holdfast_resources::{EngineResourceCheckout, EngineResourceSlot, EngineResources};
use holdfast_tensor::Tensor;

#[test]
fn checkout_take_and_return_allocate_nothing() {
    let slot = EngineResourceSlot::new(EngineResources::default());
    drop(EngineResourceCheckout::take(&slot));
    let ((), n) = allocations(|| {
        for _ in 0..1000 {
            let c = EngineResourceCheckout::take(&slot).unwrap();
            std::hint::black_box(&c);
        }
    });
    assert_eq!(n, 0);
    assert_eq!(slot.counters().returns, 1001);
}

#[test]
fn a_loan_over_a_warm_pool_allocates_nothing() {
    let mut r = EngineResources::default();
    let a = Tensor::<f64>::from_vec([16], vec![1.0; 16]).unwrap();
    let warm = |r: &mut EngineResources| {
        let mut loan = r.buffers.loan();
        let scratch: Vec<f64> = loan.take(64);
        let out =
            holdfast_kernels::elementwise::add(a.read(), a.read(), &mut loan, Par::Seq).unwrap();
        loan.give(scratch);
        loan.finish();
        r.buffers.give(out.into_parts().0); // the caller recycles its result
    };
    warm(&mut r);
    let ((), n) = allocations(|| {
        for _ in 0..100 {
            warm(&mut r);
        }
    });
    // `Tensor` keeps its shape inline; the buffers come from the pool.
    assert_eq!(n, 0);
    assert_eq!(r.buffers.stats().misses, 2);
}

#[test]
fn plan_cache_hits_allocate_nothing() {
    let mut r = EngineResources::default();
    let a = Tensor::<f64>::zeros([2, 3, 4]);
    let b = Tensor::<f64>::zeros([4, 5]);
    let ops = [a.read(), b.read()];
    einsum_cached("abc,cd->abd", &ops, None, &mut r.indexed_plan_cache, &mut HeapAlloc, Par::Seq)
        .unwrap();
    let c = Tensor::<f64>::zeros([3, 3]);
    r.gemm_analysis_cache.get_or_prepare(c.layout(), c.layout()).unwrap();
    let ((), n) = allocations(|| {
        for _ in 0..1000 {
            let key = PlanKey::new("abc,cd->abd", &ops, None);
            assert!(r.indexed_plan_cache.find(&key).is_some());
            assert!(r.indexed_plan_cache.find_recent("abc,cd->abd", &ops, None).is_some());
            assert!(r.indexed_plan_cache.lookup("abc,cd->abd", &ops, None).is_ok());
            assert!(r.gemm_analysis_cache.get(c.layout(), c.layout()).is_some());
        }
    });
    assert_eq!(n, 0);
}
