//! Unit tests of the `loan` module: unwinding replenishes, partial outputs are never retained,
//! `finish` clears the record, and the record does not grow in steady state.

use std::panic::{AssertUnwindSafe, catch_unwind};

use holdfast_kernels::{KernelAlloc, Par, elementwise};
use holdfast_tensor::{DType, Tensor};

use crate::BufferPool;

fn warm_pool() -> BufferPool {
    let mut pool = BufferPool::new();
    for cap in [8, 16, 64, 256] {
        pool.give(Vec::<f64>::with_capacity(cap));
    }
    pool.give(Vec::<f32>::with_capacity(32));
    pool
}

fn snapshot(pool: &BufferPool) -> (usize, usize, Vec<usize>, Vec<usize>) {
    (pool.len(), pool.retained_bytes(), pool.capacities(DType::F64), pool.capacities(DType::F32))
}

#[test]
fn a_panic_inside_a_loan_leaves_the_pool_as_before() {
    let mut pool = warm_pool();
    let before = snapshot(&pool);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut loan = pool.loan();
        let scratch: Vec<f64> = loan.take(60); // hit (64)
        let out: Vec<f64> = loan.take(200); // hit (256)
        let small: Vec<f32> = loan.take(30); // hit (32)
        let fresh: Vec<f64> = loan.take(5000); // miss: not recorded
        loan.give(scratch); // back before the failure: no longer in flight
        assert_eq!(loan.in_flight(), 2);
        drop((out, small, fresh));
        panic!("kernel failure");
    }));
    assert!(r.is_err());
    assert_eq!(snapshot(&pool), before);
    let s = pool.stats();
    assert_eq!((s.in_flight, s.replenished), (0, 2));
}

#[test]
fn a_partially_written_output_is_never_retained() {
    struct GiveBackOnUnwind<'a, 'p> {
        loan: &'a mut crate::BufferPoolLoan<'p>,
        out: Option<Vec<f64>>,
    }
    impl Drop for GiveBackOnUnwind<'_, '_> {
        fn drop(&mut self) {
            if let Some(out) = self.out.take() {
                self.loan.give(out); // a kernel that "helpfully" recycles during unwind
            }
        }
    }

    let mut pool = warm_pool();
    let before = snapshot(&pool);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut loan = pool.loan();
        let mut out: Vec<f64> = loan.take(16);
        out[..8].fill(42.0); // half written
        let _guard = GiveBackOnUnwind { loan: &mut loan, out: Some(out) };
        panic!("interrupted while writing the output");
    }));
    assert!(r.is_err());
    assert_eq!(snapshot(&pool), before, "replenished in place of the discarded output");
    assert_eq!(pool.stats().discarded, 1);
    let again: Vec<f64> = pool.take(16);
    assert!(again.iter().all(|&x| x == 0.0), "the half-written buffer did not come back");
}

#[test]
fn finish_hands_outputs_to_the_caller() {
    let mut pool = warm_pool();
    let a = Tensor::<f64>::from_vec([8], vec![1.0; 8]).unwrap();
    let mut loan = pool.loan();
    let c = elementwise::add(a.read(), a.read(), &mut loan, Par::Seq).unwrap();
    assert_eq!(loan.in_flight(), 1);
    loan.finish();
    assert_eq!(c.as_slice(), &[2.0; 8]);
    let s = pool.stats();
    assert_eq!((s.in_flight, s.len, s.hits, s.replenished), (0, 4, 1, 0));
}

#[test]
fn a_loan_dropped_without_finish_replenishes() {
    let mut pool = warm_pool();
    let before = snapshot(&pool);
    let out = {
        let mut loan = pool.loan();
        let out: Vec<f64> = loan.take(8);
        out
    };
    assert_eq!(out.len(), 8);
    assert_eq!(snapshot(&pool), before);
}

#[test]
fn the_record_does_not_grow_in_steady_state() {
    let mut pool = warm_pool();
    let cap = pool.record.capacity();
    for _ in 0..1000 {
        let mut loan = pool.loan();
        let a: Vec<f64> = loan.take(8);
        let b: Vec<f64> = loan.take(16);
        loan.give(a);
        loan.finish();
        pool.give(b);
    }
    assert_eq!(pool.record.capacity(), cap);
    assert_eq!(pool.stats().misses, 0);
}

#[test]
fn a_give_of_a_foreign_capacity_is_an_addition() {
    let mut pool = warm_pool();
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut loan = pool.loan();
        loan.give(Vec::<f64>::with_capacity(100));
        panic!("after a legitimate give");
    }));
    assert!(r.is_err());
    assert_eq!(pool.capacities(DType::F64), vec![8, 16, 64, 100, 256]);
}
