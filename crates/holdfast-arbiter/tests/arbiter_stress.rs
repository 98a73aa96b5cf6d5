//! Bounded stress test of the arbiter: threads × iterations of random wait/try/deadline/join
//! admissions over random CPU sets, driven from a parameter table.
//!
//! Checked: no two holders ever share a CPU (per-CPU occupancy counters), every request ends
//! (admitted, contended or timed out: a lost wake-up trips the watchdog, which fails the test
//! instead of hanging it), every permit is released exactly once (the arbiter drains to empty).

// Helpers outside #[test] fns unwrap too: a failed unwrap is a failed test (see clippy.toml).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{WATCHDOG, owner};
use holdfast_arbiter::{AdmissionError, AdmissionMode, CpuSet, ResourceArbiter};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One stress configuration.
struct Case {
    threads: usize,
    iterations: usize,
    cpus: usize,
}

/// Small and large contention; sized to finish in about a second each on 2 cores.
const CASES: &[Case] = &[
    Case { threads: 2, iterations: 12_000, cpus: 1 },
    Case { threads: 4, iterations: 6000, cpus: 3 },
    Case { threads: 8, iterations: 3000, cpus: 6 },
    Case { threads: 3, iterations: 6000, cpus: 64 },
];

#[derive(Default)]
struct Counts {
    admitted: AtomicUsize,
    contended: AtomicUsize,
    timed_out: AtomicUsize,
    joined: AtomicUsize,
}

/// xorshift64: deterministic per-thread randomness without a dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn run_case(case: &Case) {
    let arbiter = ResourceArbiter::new();
    let occupancy: Arc<Vec<AtomicUsize>> =
        Arc::new((0..case.cpus).map(|_| AtomicUsize::new(0)).collect());
    let overlap = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let handles: Vec<_> = (0..case.threads)
        .map(|t| {
            let (arbiter, occupancy, overlap, counts) = (
                arbiter.clone(),
                Arc::clone(&occupancy),
                Arc::clone(&overlap),
                Arc::clone(&counts),
            );
            let (iterations, ncpus) = (case.iterations, case.cpus);
            std::thread::spawn(move || {
                let mut rng =
                    0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
                for _ in 0..iterations {
                    let mut mask = CpuSet::new();
                    let width = 1 + (next(&mut rng) % 3) as usize;
                    for _ in 0..width {
                        mask.insert((next(&mut rng) % ncpus as u64) as usize).unwrap();
                    }
                    let mode = match next(&mut rng) % 10 {
                        0..=5 => AdmissionMode::Wait,
                        6 | 7 => AdmissionMode::Try,
                        _ => AdmissionMode::timeout(Duration::from_micros(next(&mut rng) % 300)),
                    };
                    let me = owner();
                    match arbiter.acquire(&mask, me, mode) {
                        Ok(permit) => {
                            counts.admitted.fetch_add(1, Ordering::Relaxed);
                            for cpu in mask.iter() {
                                if occupancy[cpu].fetch_add(1, Ordering::SeqCst) != 0 {
                                    overlap.store(true, Ordering::SeqCst);
                                }
                            }
                            if next(&mut rng).is_multiple_of(4) {
                                let child = arbiter.join(me).unwrap();
                                counts.joined.fetch_add(1, Ordering::Relaxed);
                                drop(child);
                            }
                            for _ in 0..(next(&mut rng) % 64) {
                                std::hint::spin_loop();
                            }
                            for cpu in mask.iter() {
                                occupancy[cpu].fetch_sub(1, Ordering::SeqCst);
                            }
                            drop(permit);
                        }
                        Err(AdmissionError::Contended { .. }) => {
                            counts.contended.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(AdmissionError::TimedOut { .. }) => {
                            counts.timed_out.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(other) => panic!("unexpected admission error: {other}"),
                    }
                }
            })
        })
        .collect();

    let deadline = Instant::now() + WATCHDOG;
    for handle in handles {
        while !handle.is_finished() {
            assert!(
                Instant::now() < deadline,
                "deadlock: {} threads × {} iterations over {} CPUs did not finish; {:?}",
                case.threads,
                case.iterations,
                case.cpus,
                arbiter.snapshot()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        handle.join().unwrap();
    }
    assert!(!overlap.load(Ordering::SeqCst), "two holders shared a CPU");
    let total = counts.admitted.load(Ordering::Relaxed)
        + counts.contended.load(Ordering::Relaxed)
        + counts.timed_out.load(Ordering::Relaxed);
    assert_eq!(total, case.threads * case.iterations);
    assert!(counts.admitted.load(Ordering::Relaxed) > 0);
    let snapshot = arbiter.snapshot().unwrap();
    assert_eq!((snapshot.holders, snapshot.waiters, snapshot.parked), (0, 0, 0), "permits leaked");
}

#[test]
fn stress_table() {
    for case in CASES {
        run_case(case);
    }
}
