//! Unit tests of the `cache` module: LRU eviction by entries and by bytes, recency, collisions,
//! replacement, rejection, clears, the two plan caches, and a property test of the LRU store.

use std::collections::VecDeque;

use holdfast_kernels::einsum::{PlanKey, PlanStore, einsum_cached};
use holdfast_kernels::{HeapAlloc, Par};
use holdfast_tensor::Tensor;
use proptest::prelude::*;

use super::lru::Lru;
use super::{CacheLimits, EinsumPlanCache, GemmAnalysisCache};

/// A deliberately colliding fingerprint, so chains are exercised.
fn fp(k: u32) -> u64 {
    u64::from(k % 3)
}

fn put(lru: &mut Lru<u32, u32>, k: u32, bytes: usize) -> bool {
    lru.insert(fp(k), k, k * 10, bytes, |a, b| a == b).is_ok()
}

fn get(lru: &mut Lru<u32, u32>, k: u32) -> Option<u32> {
    lru.lookup(fp(k), |x| *x == k).map(|i| *lru.value(i))
}

fn order(lru: &Lru<u32, u32>) -> Vec<u32> {
    lru.keys_by_recency().into_iter().copied().collect()
}

#[test]
fn evicts_the_least_recent_by_entries() {
    let mut lru = Lru::new(CacheLimits::new(3, 1 << 20));
    for k in 1..=3 {
        assert!(put(&mut lru, k, 10));
    }
    assert_eq!(get(&mut lru, 1), Some(10)); // 1 becomes most recent
    assert!(put(&mut lru, 4, 10)); // evicts 2, the least recent
    assert_eq!(order(&lru), vec![4, 1, 3]);
    assert_eq!(get(&mut lru, 2), None);
    let s = lru.stats();
    assert_eq!((s.entries, s.evictions, s.hits, s.misses), (3, 1, 1, 1));
}

#[test]
fn evicts_the_least_recent_by_bytes() {
    let mut lru = Lru::new(CacheLimits::new(100, 100));
    assert!(put(&mut lru, 1, 40));
    assert!(put(&mut lru, 2, 40));
    assert!(put(&mut lru, 3, 10));
    assert_eq!(get(&mut lru, 1), Some(10));
    assert!(put(&mut lru, 4, 45)); // 135 > 100: evicts 2 (40) -> 95
    assert_eq!(order(&lru), vec![4, 1, 3]);
    assert_eq!(lru.stats().bytes, 95);
    assert!(put(&mut lru, 5, 100)); // evicts everything else
    assert_eq!(order(&lru), vec![5]);
    assert_eq!(lru.stats().evictions, 4);
}

#[test]
fn an_entry_larger_than_a_bound_is_rejected() {
    let mut lru = Lru::new(CacheLimits::new(4, 100));
    assert!(put(&mut lru, 1, 50));
    assert!(!put(&mut lru, 2, 101));
    assert_eq!(order(&lru), vec![1]);
    assert_eq!(lru.stats().rejected, 1);
    let mut off = Lru::new(CacheLimits::new(0, 100));
    assert!(!put(&mut off, 1, 1));
    assert_eq!(off.len(), 0);
}

#[test]
fn replacing_a_key_keeps_one_entry() {
    let mut lru = Lru::new(CacheLimits::new(4, 100));
    assert!(put(&mut lru, 1, 50));
    assert!(put(&mut lru, 4, 10)); // same fingerprint as 1
    assert!(put(&mut lru, 1, 30));
    assert_eq!(order(&lru), vec![1, 4]);
    assert_eq!(lru.stats().bytes, 40);
    assert_eq!(get(&mut lru, 4), Some(40));
}

#[test]
fn colliding_fingerprints_never_give_a_wrong_hit() {
    let mut lru = Lru::new(CacheLimits::new(3, 1 << 20));
    for k in [0, 3, 6] {
        assert!(put(&mut lru, k, 1)); // all fingerprint 0
    }
    assert_eq!(get(&mut lru, 9), None);
    assert_eq!(get(&mut lru, 3), Some(30));
    assert!(put(&mut lru, 12, 1)); // evicts 0 from the middle of a chain
    assert_eq!(order(&lru), vec![12, 3, 6]);
    for (k, v) in [(3, Some(30)), (6, Some(60)), (12, Some(120)), (0, None)] {
        assert_eq!(get(&mut lru, k), v);
    }
}

#[test]
fn clear_and_shrinking_limits() {
    let mut lru = Lru::new(CacheLimits::new(8, 1 << 20));
    for k in 0..8 {
        assert!(put(&mut lru, k, 8));
    }
    lru.set_limits(CacheLimits::new(2, 1 << 20));
    assert_eq!(order(&lru), vec![7, 6]);
    lru.clear();
    assert_eq!(order(&lru), Vec::<u32>::new());
    let s = lru.stats();
    assert_eq!((s.entries, s.bytes, s.clears, s.evictions), (0, 0, 1, 6));
    assert!(put(&mut lru, 1, 8));
    assert_eq!(get(&mut lru, 1), Some(10));
}

#[test]
fn shrinking_a_plan_cache_keeps_its_most_recent_plan() {
    let (a, b) = (Tensor::<f64>::zeros([2, 2]), Tensor::<f64>::zeros([3, 3]));
    let mut cache = GemmAnalysisCache::default();
    cache.get_or_prepare(a.layout(), a.layout()).unwrap();
    cache.get_or_prepare(b.layout(), b.layout()).unwrap();
    cache.set_limits(CacheLimits::new(1, 1 << 20));
    assert_eq!((cache.len(), cache.limits().max_entries), (1, 1));
    assert!(cache.get(b.layout(), b.layout()).is_some(), "the most recent plan stays");
    assert!(cache.get(a.layout(), a.layout()).is_none());
    assert_eq!(cache.stats().evictions, 1);
    cache.clear();
    assert!(cache.is_empty());
}

#[derive(Debug, Clone)]
enum Op {
    Put(u32, usize),
    Get(u32),
}

proptest! {
    #[test]
    fn lru_matches_a_model(
        ops in proptest::collection::vec(
            prop_oneof![
                (0u32..12, 1usize..40).prop_map(|(k, b)| Op::Put(k, b)),
                (0u32..12).prop_map(Op::Get),
            ],
            1..200,
        ),
        max_entries in 0usize..6,
        max_bytes in 0usize..120,
    ) {
        let mut lru = Lru::new(CacheLimits::new(max_entries, max_bytes));
        // Most recent first: (key, bytes).
        let mut model: VecDeque<(u32, usize)> = VecDeque::new();
        for op in ops {
            match op {
                Op::Put(k, b) => {
                    model.retain(|e| e.0 != k);
                    if max_entries > 0 && b <= max_bytes {
                        while model.len() + 1 > max_entries
                            || model.iter().map(|e| e.1).sum::<usize>() + b > max_bytes
                        {
                            model.pop_back();
                        }
                        model.push_front((k, b));
                    }
                    let _ = put(&mut lru, k, b);
                }
                Op::Get(k) => {
                    let pos = model.iter().position(|e| e.0 == k);
                    if let Some(p) = pos {
                        let e = model.remove(p).unwrap();
                        model.push_front(e);
                    }
                    prop_assert_eq!(get(&mut lru, k), pos.map(|_| k * 10));
                }
            }
            let expected: Vec<u32> = model.iter().map(|e| e.0).collect();
            prop_assert_eq!(order(&lru), expected);
            prop_assert_eq!(lru.stats().bytes, model.iter().map(|e| e.1).sum::<usize>());
        }
    }
}

#[test]
fn indexed_plan_cache_serves_einsum_by_content() {
    let a = Tensor::<f64>::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let b = Tensor::<f64>::from_vec([3, 2], vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
    let mut cache = EinsumPlanCache::new(CacheLimits::new(2, 1 << 20));
    let ops = [a.read(), b.read()];
    let c1 = einsum_cached("ij,jk->ik", &ops, None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    let c2 = einsum_cached("ij,jk->ik", &ops, None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(c1.as_slice(), c2.as_slice());
    // A transposed view has other strides: another key.
    let t = [b.read().transpose(), a.read().transpose()];
    einsum_cached("ij,jk->ik", &t, None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    // A third content evicts the least recent (the first).
    einsum_cached("ij->ji", &[a.read()], None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    let s = cache.stats();
    assert_eq!((s.entries, s.hits, s.misses, s.evictions), (2, 1, 3, 1));
    assert!(cache.find(&PlanKey::new("ij,jk->ik", &ops, None)).is_none());
    assert!(cache.find(&PlanKey::new("ij->ji", &[a.read()], None)).is_some());
    assert!(s.bytes > 0);
}

/// The run after a matched lookup does not compare the operands with the plan again, so the
/// lookup must never hand out the most recent plan for operands it was not made for: the same
/// spec on a same-shaped view with other strides, on another shape, or at another element type.
#[test]
fn matched_lookup_never_runs_a_plan_on_other_layouts() {
    let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let b = Tensor::<f64>::from_vec([2, 2], vec![5.0, 6.0, 7.0, 8.0]).unwrap();
    let wide = Tensor::<f64>::from_vec([2, 3], vec![1.0, 0.0, 2.0, 0.0, 1.0, 3.0]).unwrap();
    let mut cache = EinsumPlanCache::new(CacheLimits::new(8, 1 << 20));
    let mut run = |ops: &[holdfast_tensor::TensorRead<'_, f64>]| -> Vec<f64> {
        let matched = cache.lookup_matched("ij,jk->ik", ops, None).unwrap();
        let c: Tensor<f64> = matched
            .execute_as::<holdfast_kernels::KernelError, _>(&mut HeapAlloc, Par::Seq)
            .unwrap();
        c.as_slice().to_vec()
    };
    assert_eq!(run(&[a.read(), b.read()]), [19.0, 22.0, 43.0, 50.0]);
    // The same shapes, `b` read transposed: its strides differ from the front plan's.
    assert_eq!(run(&[a.read(), b.read().transpose()]), [17.0, 23.0, 39.0, 53.0]);
    // Back to the first layouts, then a wider right operand.
    assert_eq!(run(&[a.read(), b.read()]), [19.0, 22.0, 43.0, 50.0]);
    assert_eq!(run(&[a.read(), wide.read()]), [1.0, 2.0, 8.0, 3.0, 4.0, 18.0]);
    let s = cache.stats();
    assert_eq!((s.misses, s.hits), (3, 1));
    // The same spec and shapes at another element type is another plan, not the front one.
    let af = Tensor::<f32>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let ops = [af.read(), af.read()];
    let matched = cache.lookup_matched("ij,jk->ik", &ops, None).unwrap();
    let c: Tensor<f32> =
        matched.execute_as::<holdfast_kernels::KernelError, _>(&mut HeapAlloc, Par::Seq).unwrap();
    assert_eq!(c.as_slice(), [7.0, 10.0, 15.0, 22.0]);
    assert_eq!(cache.stats().misses, 4);
}

#[test]
fn indexed_plan_cache_is_bounded_by_bytes() {
    let a = Tensor::<f32>::zeros([2, 2]);
    let mut probe = EinsumPlanCache::default();
    einsum_cached("ij->ji", &[a.read()], None, &mut probe, &mut HeapAlloc, Par::Seq).unwrap();
    let one = probe.stats().bytes;
    let mut cache = EinsumPlanCache::new(CacheLimits::new(100, one * 2 + one / 2));
    for spec in ["ij->ji", "ij->ij", "ij->i", "ij->j"] {
        einsum_cached(spec, &[a.read()], None, &mut cache, &mut HeapAlloc, Par::Seq).unwrap();
    }
    let s = cache.stats();
    assert!(s.bytes <= one * 2 + one / 2);
    assert!(s.evictions >= 1 && s.entries < 4, "{s:?}");
}

#[test]
fn gemm_cache_hits_errors_and_rejection() {
    let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let bad = Tensor::<f64>::zeros([3, 3]);
    let mut cache = GemmAnalysisCache::new(CacheLimits::new(4, 1 << 16));
    assert!(cache.get_or_prepare(a.layout(), bad.layout()).is_err());
    assert_eq!(cache.len(), 0, "errors are not stored");
    cache.get_or_prepare(a.layout(), a.layout()).unwrap();
    assert_eq!(cache.len(), 1);
    assert!(cache.get(a.layout(), a.layout()).is_some());
    let t = a.read().transpose();
    assert!(cache.get(t.layout(), a.layout()).is_none(), "strides are part of the key");
    let mut tiny = GemmAnalysisCache::new(CacheLimits::new(4, 8));
    let uncached = tiny.get_or_prepare(a.layout(), a.layout()).unwrap();
    assert_eq!(uncached.out_shape(), &[2, 2], "too large to keep, prepared all the same");
    assert_eq!((tiny.len(), tiny.stats().rejected), (0, 1));
    let mut out = Tensor::<f64>::zeros([2, 2]);
    tiny.bind(&a.read(), &a.read()).unwrap().execute_into(&mut out, Par::Seq).unwrap();
    assert_eq!(out.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
}

#[test]
fn gemm_bind_checks_once_and_falls_back_on_another_layout() {
    let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let bad = Tensor::<f64>::zeros([3, 3]);
    let mut cache = GemmAnalysisCache::new(CacheLimits::new(4, 1 << 16));
    let mut out = Tensor::<f64>::zeros([2, 2]);
    let (ra, rbad) = (a.read(), bad.read());
    assert!(cache.bind(&ra, &rbad).is_err(), "no product");
    // Miss, then a hit on the most recent plan.
    for _ in 0..2 {
        cache.bind(&ra, &ra).unwrap().execute_into(&mut out, Par::Seq).unwrap();
    }
    assert_eq!(out.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    assert_eq!((cache.stats().misses, cache.stats().hits), (2, 1));
    // A transposed operand is another plan: the front plan does not bind it, the fallback
    // prepares the right one (a plan bound to the wrong layout would give [7, 10, 15, 22]).
    let t = a.read().transpose();
    cache.bind(&t, &ra).unwrap().execute_into(&mut out, Par::Seq).unwrap();
    assert_eq!(out.as_slice(), &[10.0, 14.0, 14.0, 20.0]);
    assert_eq!(cache.len(), 2);
    // The first plan again: found by key, not at the front.
    cache.bind(&ra, &ra).unwrap().execute_into(&mut out, Par::Seq).unwrap();
    assert_eq!(out.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    assert_eq!(cache.stats().hits, 2);
}
