//! loom models of the lane crew's engine ([`Crew`]) and its sleepers: hand-off of a run's closure
//! to the workers and back, close ("cancel") of a crew whose workers may be parked, not yet
//! started or mid-run, a panicking worker lane and a panicking caller lane, with two and three
//! lanes.
//!
//! Run with (`cargo xtask test` does; see `docs/design/held-session.md` §10):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p holdfast-provider --release --lib loom
//! ```
//!
//! The workers are plain loom threads running [`Crew::serve`], as rayon's workers do inside the
//! crew's scope. In this build the sleepers park at once instead of spinning, so every interleaving
//! of the park protocol is explored: a lost wake-up shows up as a loom deadlock report (every
//! thread blocked), a worker reading the job while the caller writes it (or a slot read before its
//! lane wrote it) as a loom data-race report, a lane run twice or not at all as a wrong result
//! vector, and a join that returns early as a worker's side effect missing after the run.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::panic::{AssertUnwindSafe, catch_unwind};

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread::{self, JoinHandle};

use super::crew::Crew;

/// Runs `body` with a crew of `lanes` lanes whose caller is the model's main thread and whose
/// workers are loom threads serving their lanes, then closes the crew and joins the workers.
/// The crew is leaked (`&'static`) so that loom threads can borrow it, as rayon's scoped workers
/// do; so are the counters the models share with lanes.
fn with_crew(lanes: usize, body: impl FnOnce(&'static Crew)) {
    let crew: &'static Crew = Box::leak(Box::new(Crew::new(lanes)));
    let workers: Vec<JoinHandle<()>> =
        (1..crew.lanes()).map(|lane| thread::spawn(move || crew.serve(lane))).collect();
    body(crew);
    crew.close();
    for worker in workers {
        worker.join().unwrap();
    }
}

/// A counter the model's lanes and its caller share.
fn counter() -> &'static AtomicUsize {
    Box::leak(Box::new(AtomicUsize::new(0)))
}

/// Runs one crew run whose lanes panic, and returns the resumed panic's message.
fn run_expecting_panic(crew: &Crew, lane: impl Fn(usize) + Sync) -> String {
    let caught = catch_unwind(AssertUnwindSafe(|| crew.run(lane))).unwrap_err();
    message(&*caught)
}

/// The payload of a caught panic, as text.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Two runs on two lanes, then close: each run hands its closure to the worker and returns only
/// with both lanes' results, in lane order; the worker leaves its loop on close.
#[test]
fn loom_two_lanes_hand_off_two_runs_and_close() {
    loom::model(|| {
        with_crew(2, |crew| {
            for run in 0..2 {
                assert_eq!(crew.run(|lane| lane * 10 + run), vec![run, 10 + run]);
            }
        });
    });
}

/// One run on three lanes, then close: both workers run their lane exactly once, and the join
/// happens after both lanes' side effects.
#[test]
fn loom_three_lanes_run_each_lane_once() {
    loom::model(|| {
        with_crew(3, |crew| {
            let ran = counter();
            let out = crew.run(|lane| {
                ran.fetch_add(1 << (8 * lane), Ordering::Relaxed);
                lane
            });
            assert_eq!(out, vec![0, 1, 2]);
            assert_eq!(ran.load(Ordering::Relaxed), 0x01_01_01, "each lane once, before the join");
        });
    });
}

/// Close with no run: a worker that has not started, is about to park or is parked leaves its
/// loop (the crew's callback returned or unwound before its first run).
#[test]
fn loom_close_releases_waiting_workers() {
    loom::model(|| with_crew(3, |_| ()));
}

/// A worker lane panics: the run still joins both lanes, resumes the worker lane's panic on the
/// caller, and the crew serves the next run.
#[test]
fn loom_worker_lane_panic_is_resumed_after_the_join() {
    loom::model(|| {
        with_crew(2, |crew| {
            let lane0 = counter();
            let resumed = run_expecting_panic(crew, |lane| {
                assert_ne!(lane, 1, "lane 1 fails");
                lane0.store(1, Ordering::Relaxed);
            });
            assert!(resumed.contains("lane 1 fails"), "{resumed}");
            assert_eq!(lane0.load(Ordering::Relaxed), 1, "lane 0 ran to the end");
            assert_eq!(crew.run(|lane| lane), vec![0, 1], "the crew serves the next run");
        });
    });
}

/// The caller's lane 0 panics (and lane 1 too): the caller unwinds only after the worker lane
/// has finished, and the lowest lane's panic is the one resumed.
#[test]
fn loom_caller_lane_panic_waits_for_the_workers() {
    loom::model(|| {
        with_crew(2, |crew| {
            let lane1 = counter();
            let resumed = run_expecting_panic(crew, |lane| {
                if lane == 1 {
                    lane1.store(1, Ordering::Relaxed);
                }
                panic!("lane {lane} fails");
            });
            assert_eq!(resumed, "lane 0 fails");
            assert_eq!(lane1.load(Ordering::Relaxed), 1, "the worker lane finished first");
        });
    });
}
