//! Warm held sweeps are served by the session's pool: once the bond dimensions stop changing, a
//! DMRG sweep makes no heap allocation on the calling thread, and a TEBD step allocates only
//! for its measurement (SPEC W5). Counted by this test binary's global allocator.
#![allow(clippy::expect_used, reason = "a failed expect is a failed test")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use holdfast::CpuBackend;
use holdfast_mps::dmrg::dmrg_observed;
use holdfast_mps::tebd::{InitialState, TebdConfig, tebd_observed};
use holdfast_mps::{DmrgConfig, Model};

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting the allocations of each thread.
struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments; the count touches only
// a `const`-initialised thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: `ptr`/`layout` from `System`; the caller guarantees `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

fn backend() -> CpuBackend {
    CpuBackend::builder().threads(1).private_arbiter().build().expect("a one-thread backend")
}

#[test]
fn warm_held_dmrg_sweeps_allocate_nothing() {
    let backend = backend();
    let mut session = backend.open_session().expect("held");
    // Bond dimension 8 saturates on 10 sites from the first sweep, so every later sweep has
    // the shapes of the one before; tolerance 0 keeps all ten sweeps. A later sweep may still
    // miss once: the pool serves a request from the best-fitting buffer up to a few times its
    // size, so which buffer plays which role drifts over the first sweeps before it settles
    // (one miss at the sixth sweep seen, for the 12-element environment next to the first
    // site). It never allocates again for it: the last four sweeps allocate nothing.
    for model in [Model::Heisenberg { j: 1.0 }, Model::Tfim { j: 1.0, h: 0.7 }] {
        let config = DmrgConfig::new(vec![8]).sweeps(10).cutoff(0.0).tolerance(0.0);
        let mut per_sweep = Vec::with_capacity(10);
        let mut last = allocations();
        let run = dmrg_observed(&mut session, &model, 10, &config, |_, _| {
            let now = allocations();
            per_sweep.push(now - last);
            last = allocations();
        })
        .expect("dmrg");
        assert_eq!(run.sweeps.len(), 10);
        assert!(per_sweep[0] > 0, "the first sweep builds plans and buffers: {per_sweep:?}");
        let warm: u64 = per_sweep[1..].iter().sum();
        assert!(warm <= 4, "{model:?}: allocations per sweep {per_sweep:?}");
        assert_eq!(&per_sweep[6..], &[0; 4], "{model:?}: allocations per sweep {per_sweep:?}");
    }
    let stats = session.close().expect("close");
    assert!(stats.buffer_hits > 10 * stats.buffer_misses, "{stats:?}");
}

#[test]
fn warm_held_tebd_gates_allocate_nothing_but_measurements() {
    let backend = backend();
    let mut session = backend.open_session().expect("held");
    let model = Model::Tfim { j: 1.0, h: 0.5 };
    // Bond dimension 4 on 6 sites: the bonds saturate within the first steps.
    let config = TebdConfig::new(0.05, 0.6).bond_dim(4).cutoff(0.0);
    let run = tebd_observed(&mut session, &model, 6, InitialState::Plus, &config, |_| ())
        .expect("warm-up run");
    assert!(run.steps.iter().any(|s| s.max_bond == 4), "the bonds saturate");
    // A second run from the same state on a warm session: its gate sweeps reuse the first's
    // buffers. What a step still allocates is its measurement: the record's lists, the
    // one-site operators and the environments of the observables (about 96 at 6 sites). Each
    // of the 10 gate applications of a step allocated at least 7 buffers when the gates did not
    // recycle, which this bound does not leave room for.
    let before = allocations();
    let again = tebd_observed(&mut session, &model, 6, InitialState::Plus, &config, |_| ())
        .expect("second run");
    let total = allocations() - before;
    assert_eq!(again.steps.len(), run.steps.len());
    let per_step = total / again.steps.len() as u64;
    assert!(per_step <= 110, "{total} allocations over {} steps", again.steps.len());
}
