//! Steady-state admission allocates nothing (SPEC A2): a counting global allocator, counting only
//! the measuring thread's allocations. One binary because the allocator is process-global.

// Helpers outside #[test] fns unwrap too: a failed unwrap is a failed test (see clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cpus, eventually, owner, within};
use holdfast_arbiter::{AdmissionError, AdmissionMode, ResourceArbiter};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards every call to `System` unchanged; the counting touches only an atomic and a
// const-initialised thread-local without destructor, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MEASURING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if MEASURING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    MEASURING.with(|m| m.set(true));
    f();
    MEASURING.with(|m| m.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn uncontended_acquire_release_and_join_allocate_nothing() {
    for arbiter in [ResourceArbiter::new(), ResourceArbiter::global().clone()] {
        let mask = cpus(&[0, 1]);
        let owners: Vec<_> = (0..1000).map(|_| owner()).collect();
        // Warm-up: first use may size tables and create this thread's handle.
        drop(arbiter.acquire(&mask, owners[0], AdmissionMode::Wait).unwrap());
        let count = allocations_in(|| {
            for &o in &owners {
                let permit = arbiter.acquire(&mask, o, AdmissionMode::Wait).unwrap();
                let child = arbiter.join(o).unwrap();
                drop(child);
                drop(permit);
            }
        });
        assert_eq!(count, 0, "{arbiter:?}: steady-state admission allocated");
    }
}

#[test]
fn contended_try_and_queued_wait_allocate_nothing() {
    within(|| {
        let arbiter = ResourceArbiter::new();
        let mask = cpus(&[3]);
        let owners: Vec<_> = (0..200).map(|_| owner()).collect();
        drop(arbiter.acquire(&mask, owners[0], AdmissionMode::Wait).unwrap());

        // Contended tries.
        let held = arbiter.acquire(&mask, owner(), AdmissionMode::Wait).unwrap();
        let count = allocations_in(|| {
            for &o in &owners {
                let result = arbiter.acquire(&mask, o, AdmissionMode::Try);
                assert!(matches!(result, Err(AdmissionError::Contended { .. })));
            }
        });
        assert_eq!(count, 0, "a contended try allocated");
        drop(held);

        // Queued waits handed over by a releasing helper.
        let (hold_tx, hold_rx) = std::sync::mpsc::sync_channel::<()>(0);
        let helper_arbiter = arbiter.clone();
        let rounds = owners.len();
        let helper = std::thread::spawn(move || {
            for _ in 0..rounds {
                let permit = helper_arbiter.acquire(&mask, owner(), AdmissionMode::Wait).unwrap();
                hold_tx.send(()).unwrap();
                eventually(|| helper_arbiter.snapshot().unwrap().parked == 1);
                drop(permit);
            }
        });
        let mut count = 0;
        for &o in &owners {
            hold_rx.recv().unwrap();
            count += allocations_in(|| {
                drop(arbiter.acquire(&mask, o, AdmissionMode::Wait).unwrap());
            });
        }
        helper.join().unwrap();
        assert_eq!(count, 0, "a queued wait allocated");
    });
}
