//! A fixed loop of einsum plan-cache hits on the session's path (the most recent entry,
//! matched against the spec and operands without building a key), for instruction-level
//! profiling: `valgrind --tool=callgrind target/release/examples/profile_plan_hit`.
#![allow(clippy::unwrap_used, reason = "profiling harness")]

use std::hint::black_box;

use holdfast_kernels::einsum::{PlanStore, einsum_cached};
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_resources::EinsumPlanCache;
use holdfast_tensor::Tensor;

fn main() {
    let mut cache = EinsumPlanCache::default();
    let a = Tensor::<f64>::zeros([2, 3, 4]);
    let b = Tensor::<f64>::zeros([4, 5]);
    let ops = [a.read(), b.read()];
    let spec = "abc,cd->abd";
    einsum_cached(spec, &ops, None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    let mut hits = 0u32;
    for _ in 0..100_000 {
        hits += u32::from(cache.find_recent(black_box(spec), black_box(&ops), None).is_some());
    }
    assert_eq!(hits, 100_000);
}
