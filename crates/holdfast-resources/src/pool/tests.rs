//! Unit tests of the `pool` module: best fit, contents, retention and eviction, and property
//! tests against a model, of the pool and of a loan over it.

use holdfast_kernels::KernelAlloc;
use holdfast_tensor::{DType, Element};
use proptest::prelude::*;

use super::BufferPool;
use super::free_list::max_fit;

#[test]
fn hit_reuses_the_same_allocation() {
    let mut pool = BufferPool::new();
    let v: Vec<f64> = pool.take(32);
    let ptr = v.as_ptr();
    pool.give(v);
    let w: Vec<f64> = pool.take(20);
    assert_eq!(w.as_ptr(), ptr, "a hit hands back the retained allocation");
    assert_eq!(w.len(), 20);
    let s = pool.stats();
    assert_eq!((s.hits, s.misses, s.len, s.retained_bytes), (1, 1, 0, 0));
}

#[test]
fn best_fit_is_the_smallest_sufficient_capacity() {
    let mut pool = BufferPool::new();
    for cap in [64, 8, 16] {
        pool.give(Vec::<f32>::with_capacity(cap));
    }
    let v: Vec<f32> = pool.take(10);
    assert_eq!(v.capacity(), 16);
    assert_eq!(pool.capacities(DType::F32), vec![8, 64]);
}

#[test]
fn gives_in_any_order_keep_capacities_sorted_and_the_largest_is_taken_from_the_end() {
    let mut pool = BufferPool::new();
    for cap in [16usize, 32, 32, 64, 8, 48, 64] {
        pool.give(Vec::<f64>::with_capacity(cap));
    }
    let caps = pool.capacities(DType::F64);
    assert!(caps.windows(2).all(|w| w[0] <= w[1]), "{caps:?}");
    assert_eq!(caps.len(), 7);
    let largest: Vec<f64> = pool.take(64);
    assert_eq!(largest.capacity(), *caps.last().unwrap());
    let mut rest = caps;
    rest.pop();
    assert_eq!(pool.capacities(DType::F64), rest);
    pool.give(largest);
    assert_eq!(pool.capacities(DType::F64).last(), Some(&64));
}

#[test]
fn a_small_request_does_not_take_a_huge_buffer() {
    let mut pool = BufferPool::new();
    pool.give(Vec::<f64>::with_capacity(10_000));
    let v: Vec<f64> = pool.take(2);
    assert!(v.capacity() < 10_000);
    assert_eq!((pool.len(), pool.stats().misses), (1, 1));
    assert!(max_fit(2) >= 64 && max_fit(1000) == 4000);
}

#[test]
fn dtypes_are_pooled_separately() {
    let mut pool = BufferPool::new();
    pool.give(Vec::<f32>::with_capacity(8));
    let v: Vec<f64> = pool.take(8);
    assert_eq!((pool.len(), pool.stats().misses), (1, 1));
    pool.give(v);
    assert_eq!(pool.capacities(DType::F64), vec![8]);
    assert_eq!(pool.retained_bytes(), 8 * 4 + 8 * 8);
}

#[test]
fn reused_contents_are_kept_and_growth_is_zeroed() {
    let mut pool = BufferPool::new();
    let mut v = Vec::<f64>::with_capacity(8);
    v.extend([1.0, 2.0]);
    pool.give(v);
    let w: Vec<f64> = pool.take(4);
    assert_eq!(w, vec![1.0, 2.0, 0.0, 0.0]);
    pool.give(w);
    let z: Vec<f64> = pool.take_zeroed(3);
    assert_eq!(z, vec![0.0; 3]);
}

#[test]
fn zero_length_takes_and_empty_gives_touch_nothing() {
    let mut pool = BufferPool::new();
    let v: Vec<f64> = pool.take(0);
    assert_eq!(v.capacity(), 0);
    pool.give(v);
    assert_eq!(pool.stats(), BufferPool::new().stats());
}

#[test]
fn the_limit_evicts_the_smallest_first() {
    let mut pool = BufferPool::with_retention_limit(1000);
    pool.give(Vec::<f64>::with_capacity(10)); // 80
    pool.give(Vec::<f32>::with_capacity(30)); // 120
    pool.give(Vec::<f64>::with_capacity(80)); // 640
    assert_eq!(pool.retained_bytes(), 840);
    pool.give(Vec::<f64>::with_capacity(40)); // 320: evicts 80 and 120
    assert_eq!(pool.capacities(DType::F64), vec![40, 80]);
    assert!(pool.capacities(DType::F32).is_empty());
    let s = pool.stats();
    assert_eq!((s.evictions, s.retained_bytes, s.len), (2, 960, 2));
}

#[test]
fn a_returned_buffer_that_is_the_smallest_is_dropped_instead() {
    let mut pool = BufferPool::with_retention_limit(1000);
    pool.give(Vec::<f64>::with_capacity(120)); // 960
    pool.give(Vec::<f64>::with_capacity(10)); // 80: smaller than everything retained
    assert_eq!(pool.capacities(DType::F64), vec![120]);
    assert_eq!((pool.stats().rejected, pool.stats().evictions), (1, 0));
    pool.give(Vec::<f64>::with_capacity(1000)); // larger than the limit
    assert_eq!(pool.stats().rejected, 2);
}

#[test]
fn a_request_over_the_limit_releases_what_is_retained_and_one_within_does_not() {
    let mut pool = BufferPool::with_retention_limit(1024);
    pool.give(Vec::<f64>::with_capacity(64));
    pool.give(Vec::<f32>::with_capacity(32));
    let within: Vec<f64> = pool.take(100); // 800 bytes: a miss, within the limit
    assert_eq!((pool.len(), pool.stats().evictions), (2, 0));
    let outsized: Vec<f32> = pool.take(257); // 1028 bytes: never retainable
    assert_eq!(outsized.len(), 257);
    let s = pool.stats();
    assert_eq!((s.len, s.retained_bytes, s.evictions, s.misses), (0, 0, 2, 2));
    pool.give(within);
    assert_eq!(pool.len(), 1, "later returns are retained as before");
}

#[test]
fn lowering_the_limit_evicts_and_trim_releases_everything() {
    let mut pool = BufferPool::new();
    for cap in [4, 8, 16] {
        pool.give(Vec::<f64>::with_capacity(cap));
    }
    pool.set_retention_limit(150); // 224 bytes retained: evicts 32 and 64
    assert_eq!(pool.capacities(DType::F64), vec![16]);
    let released = pool.trim();
    drop(released);
    assert!(pool.is_empty());
    assert_eq!(pool.stats().trimmed, 1);
    let v: Vec<f64> = pool.take(4);
    pool.give(v);
    assert_eq!(pool.len(), 1, "the pool works after a trim");
}

#[derive(Debug, Clone)]
enum Op {
    Take { f64: bool, len: usize },
    Give { f64: bool, cap: usize },
    Return(usize),
    Limit(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), 0usize..300).prop_map(|(f64, len)| Op::Take { f64, len }),
        2 => (any::<bool>(), 0usize..300).prop_map(|(f64, cap)| Op::Give { f64, cap }),
        4 => (0usize..8).prop_map(Op::Return),
        1 => (0usize..4000).prop_map(Op::Limit),
    ]
}

/// The reference model: retained `(is_f64, capacity)` pairs and the same policy, written
/// naively.
#[derive(Default)]
struct Model {
    retained: Vec<(bool, usize)>,
    limit: usize,
    hits: u64,
    misses: u64,
    evictions: u64,
}

fn bytes(e: (bool, usize)) -> usize {
    e.1 * if e.0 { 8 } else { 4 }
}

impl Model {
    fn total(&self) -> usize {
        self.retained.iter().map(|&e| bytes(e)).sum()
    }

    fn smallest(&self) -> Option<usize> {
        (0..self.retained.len()).min_by_key(|&i| {
            let e = self.retained[i];
            (bytes(e), e.0, e.1)
        })
    }

    fn take(&mut self, f64: bool, len: usize) -> Option<usize> {
        if len == 0 {
            return Some(0);
        }
        let best = (0..self.retained.len())
            .filter(|&i| self.retained[i].0 == f64)
            .filter(|&i| self.retained[i].1 >= len)
            .min_by_key(|&i| self.retained[i].1);
        match best {
            Some(i) if self.retained[i].1 <= max_fit(len) => {
                self.hits += 1;
                Some(self.retained.remove(i).1)
            }
            _ => {
                self.misses += 1;
                if bytes((f64, len)) > self.limit {
                    self.evictions += self.retained.len() as u64;
                    self.retained.clear();
                }
                None
            }
        }
    }

    fn give(&mut self, f64: bool, cap: usize) {
        let b = bytes((f64, cap));
        if cap == 0 || b > self.limit {
            return;
        }
        while self.total() + b > self.limit {
            match self.smallest() {
                Some(i) if bytes(self.retained[i]) < b => {
                    self.retained.remove(i);
                    self.evictions += 1;
                }
                _ => return,
            }
        }
        self.retained.push((f64, cap));
    }

    fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        while self.total() > self.limit {
            let Some(i) = self.smallest() else { break };
            self.retained.remove(i);
            self.evictions += 1;
        }
    }

    fn capacities(&self, f64: bool) -> Vec<usize> {
        let mut v: Vec<usize> = self.retained.iter().filter(|e| e.0 == f64).map(|e| e.1).collect();
        v.sort_unstable();
        v
    }
}

enum Held {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Takes `len` elements from `pool`, directly or through a loan of its own (finished at once):
/// both must serve the same buffer.
fn take<T: Element>(pool: &mut BufferPool, len: usize, through_loan: bool) -> Vec<T> {
    if !through_loan {
        return pool.take(len);
    }
    let mut loan = pool.loan();
    let buf = loan.take(len);
    loan.finish();
    buf
}

/// Gives `buf` to `pool`, directly or through a loan of its own.
fn give<T: Element>(pool: &mut BufferPool, buf: Vec<T>, through_loan: bool) {
    if !through_loan {
        return pool.give(buf);
    }
    let mut loan = pool.loan();
    loan.give(buf);
    loan.finish();
}

/// Runs `ops` on a pool (directly, or each through a loan) and on the model side by side.
fn matches_the_model(ops: Vec<Op>, through_loan: bool) -> Result<(), TestCaseError> {
    let mut pool = BufferPool::with_retention_limit(2000);
    let mut model = Model { limit: 2000, ..Model::default() };
    let mut held: Vec<Held> = Vec::new();
    for op in ops {
        match op {
            Op::Take { f64, len } => {
                let expected = model.take(f64, len);
                let cap = if f64 {
                    let v: Vec<f64> = take(&mut pool, len, through_loan);
                    prop_assert_eq!(v.len(), len);
                    let c = v.capacity();
                    held.push(Held::F64(v));
                    c
                } else {
                    let v: Vec<f32> = take(&mut pool, len, through_loan);
                    prop_assert_eq!(v.len(), len);
                    let c = v.capacity();
                    held.push(Held::F32(v));
                    c
                };
                if let Some(c) = expected {
                    prop_assert_eq!(cap, c);
                }
            }
            Op::Give { f64, cap } => {
                model.give(f64, cap);
                if f64 {
                    give(&mut pool, Vec::<f64>::with_capacity(cap), through_loan);
                } else {
                    give(&mut pool, Vec::<f32>::with_capacity(cap), through_loan);
                }
            }
            Op::Return(i) => {
                if !held.is_empty() {
                    match held.swap_remove(i % held.len()) {
                        Held::F32(v) => {
                            model.give(false, v.capacity());
                            give(&mut pool, v, through_loan);
                        }
                        Held::F64(v) => {
                            model.give(true, v.capacity());
                            give(&mut pool, v, through_loan);
                        }
                    }
                }
            }
            Op::Limit(l) => {
                model.set_limit(l);
                pool.set_retention_limit(l);
            }
        }
        let s = pool.stats();
        prop_assert!(s.retained_bytes <= s.retention_limit);
        prop_assert_eq!(s.retained_bytes, model.total());
        prop_assert_eq!(s.len, model.retained.len());
        prop_assert_eq!(
            (s.hits, s.misses, s.evictions),
            (model.hits, model.misses, model.evictions)
        );
        prop_assert_eq!((s.in_flight, s.replenished), (0, 0));
        prop_assert_eq!(pool.capacities(DType::F64), model.capacities(true));
        prop_assert_eq!(pool.capacities(DType::F32), model.capacities(false));
    }
    Ok(())
}

proptest! {
    #[test]
    fn pool_matches_the_model(ops in proptest::collection::vec(op(), 1..120)) {
        matches_the_model(ops, false)?;
    }

    /// A loan's take and give (its inline hit, its out-of-line search and miss) serve and
    /// retain exactly as the pool's own.
    #[test]
    fn a_loan_matches_the_model(ops in proptest::collection::vec(op(), 1..120)) {
        matches_the_model(ops, true)?;
    }
}
