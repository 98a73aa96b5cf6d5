//! Tests of the lane crew: lane count, order and placement (lane 0 on the caller, lane `i` on
//! worker `i`), the inline one-thread case, bounded concurrency, panics (in a lane, in the crew's
//! callback), parking and waking between runs, a caller that is a worker of the pool, a nested
//! crew, and a bounded-time stress of thousands of runs with random pauses.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use holdfast_affinity::Topology;

use super::lane_of_worker;
use super::sleeper::YIELD_FOR;
use crate::CpuDomain;

/// Generous bound for anything a test waits on: a broken protocol fails the test, never hangs it.
const DEADLINE: Duration = Duration::from_secs(60);

fn domain(threads: usize) -> CpuDomain {
    CpuDomain::new(*Topology::get().unwrap().allowed(), threads).unwrap()
}

fn all_threads() -> usize {
    Topology::get().unwrap().allowed().len()
}

/// Runs `f(n, domain)` on a domain of all `n` allowed CPUs, [`bounded`]; skipped on a machine
/// of one CPU, where no two lanes can run at once.
fn on_concurrent_domain(f: impl FnOnce(usize, CpuDomain) + Send + 'static) {
    let n = all_threads();
    if n >= 2 {
        bounded(move || f(n, domain(n)));
    }
}

/// Runs `f` on a fresh thread and fails the test if it does not finish within [`DEADLINE`] (a
/// lost wake-up would otherwise hang the test binary).
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let value = catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(());
        value
    });
    rx.recv_timeout(DEADLINE).expect("the crew did not finish in time (lost wake-up?)");
    match handle.join().unwrap() {
        Ok(value) => value,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// A small xorshift generator: deterministic pauses without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn workers_map_to_lanes_around_the_free_one() {
    assert_eq!(
        (0..4).map(|w| lane_of_worker(w, 0)).collect::<Vec<_>>(),
        [None, Some(1), Some(2), Some(3)]
    );
    assert_eq!(
        (0..4).map(|w| lane_of_worker(w, 2)).collect::<Vec<_>>(),
        [Some(1), Some(2), None, Some(3)]
    );
}

#[test]
fn one_thread_runs_lane_zero_inline_on_the_caller() {
    let d = domain(1);
    let caller = std::thread::current().id();
    let lanes = d.lane_crew(|crew| {
        assert!(!crew.is_concurrent());
        assert_eq!(crew.lanes(), 1);
        crew.run(|lane| (lane, std::thread::current().id()))
    });
    assert_eq!(lanes, vec![(0, caller)]);
}

#[test]
fn lane_zero_runs_on_the_caller_and_lane_i_on_worker_i() {
    on_concurrent_domain(|n, d| {
        let pool = d.pool().unwrap();
        let caller = std::thread::current().id();
        d.lane_crew(|crew| {
            assert!(crew.is_concurrent());
            for _ in 0..50 {
                let lanes = crew.run(|lane| {
                    (lane, pool.current_thread_index(), std::thread::current().id() == caller)
                });
                let expected: Vec<_> = (0..n).map(|i| (i, (i > 0).then_some(i), i == 0)).collect();
                assert_eq!(lanes, expected);
            }
        });
    });
}

#[test]
fn concurrency_never_exceeds_the_budget_and_a_panic_surfaces_after_all_lanes() {
    on_concurrent_domain(|n, d| {
        for panicking in [0, n - 1] {
            let (active, peak, finished) =
                (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
            let deadline = Instant::now() + DEADLINE;
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                d.lane_crew(|crew| {
                    crew.run(|lane| {
                        let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        // Wait (bounded) until every lane is inside, so they overlap.
                        while peak.load(Ordering::SeqCst) < n && Instant::now() < deadline {
                            std::hint::spin_loop();
                        }
                        active.fetch_sub(1, Ordering::SeqCst);
                        if lane == panicking {
                            panic!("lane {lane} fails");
                        }
                        std::thread::sleep(Duration::from_millis(5));
                        finished.fetch_add(1, Ordering::SeqCst);
                    })
                })
            }));
            let payload = outcome.unwrap_err();
            assert_eq!(payload.downcast_ref::<String>(), Some(&format!("lane {panicking} fails")));
            assert_eq!(finished.load(Ordering::SeqCst), n - 1, "every other lane finished first");
            assert_eq!(peak.load(Ordering::SeqCst), n, "lanes overlapped, never above the budget");
        }
    });
}

#[test]
fn a_panicking_callback_releases_the_workers() {
    on_concurrent_domain(|n, d| {
        let out = catch_unwind(AssertUnwindSafe(|| {
            d.lane_crew(|crew| {
                crew.run(|lane| lane);
                panic!("the phase gave up");
            })
        }));
        assert_eq!(out.unwrap_err().downcast_ref::<&str>(), Some(&"the phase gave up"));
        // The workers left the crew: a broadcast needs every one of them, and a new crew opens.
        assert_eq!(d.pool().unwrap().broadcast(|ctx| ctx.index()), (0..n).collect::<Vec<_>>());
        let reopened = d.lane_crew(|crew| (crew.is_concurrent(), crew.run(|lane| lane)));
        assert_eq!(reopened, (true, (0..n).collect::<Vec<_>>()));
    });
}

#[test]
fn workers_park_between_slow_runs_and_wake_for_the_next() {
    on_concurrent_domain(|n, d| {
        d.lane_crew(|crew| {
            for round in 0..5 {
                // Longer than the spin and yield windows: the workers are parked by now.
                std::thread::sleep(YIELD_FOR * 10);
                let lanes = crew.run(|lane| lane * round);
                assert_eq!(lanes, (0..n).map(|i| i * round).collect::<Vec<_>>());
            }
            // And the caller parks while a slow worker lane runs.
            let lanes = crew.run(|lane| {
                if lane > 0 {
                    std::thread::sleep(YIELD_FOR * 10);
                }
                lane
            });
            assert_eq!(lanes, (0..n).collect::<Vec<_>>());
        });
    });
}

#[test]
fn a_worker_of_the_pool_may_open_a_crew_and_keeps_lane_zero() {
    on_concurrent_domain(|n, d| {
        let pool = d.pool().unwrap();
        // The caller is worker k; the crew uses every other worker.
        let (k, lanes) = pool.install(|| {
            let k = pool.current_thread_index().unwrap();
            let lanes = d.lane_crew(|crew| {
                let mut lanes = Vec::new();
                for _ in 0..20 {
                    lanes = crew.run(|_| pool.current_thread_index());
                }
                lanes
            });
            (k, lanes)
        });
        assert_eq!(lanes[0], Some(k), "lane 0 on the calling worker");
        let mut workers: Vec<_> = lanes.iter().map(|w| w.unwrap()).collect();
        workers.sort_unstable();
        assert_eq!(workers, (0..n).collect::<Vec<_>>(), "each lane on its own worker");
    });
}

#[test]
fn a_crew_opened_inside_an_open_crew_runs_its_lanes_serially() {
    let n = all_threads();
    bounded(move || {
        let d = domain(n);
        let inner = d.lane_crew(|crew| {
            crew.run(|_| {
                let me = std::thread::current().id();
                d.lane_crew(|inner| {
                    let threads = inner.run(|lane| (lane, std::thread::current().id() == me));
                    (inner.is_concurrent(), threads)
                })
            })
        });
        for (concurrent, threads) in inner {
            assert!(!concurrent);
            assert_eq!(threads, (0..n).map(|i| (i, true)).collect::<Vec<_>>());
        }
    });
}

/// Thousands of runs with random pauses between them (none, a spin, a yield, a park-length
/// sleep) and random lane lengths, checking every run's results: a lost wake-up or a run that
/// returned early fails the test instead of hanging it.
#[test]
fn stress_thousands_of_runs_with_random_pauses() {
    on_concurrent_domain(|n, d| {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let done = AtomicBool::new(true);
        d.lane_crew(|crew| {
            for run in 0..4000_usize {
                let pause = rng.next();
                match pause % 16 {
                    0 => std::thread::sleep(YIELD_FOR * 2),
                    1..=3 => std::thread::yield_now(),
                    4..=7 => {
                        for _ in 0..(pause >> 8) % 2000 {
                            std::hint::spin_loop();
                        }
                    }
                    _ => {}
                }
                let slow_lane = (pause >> 4) as usize % (4 * n);
                let counter = AtomicUsize::new(0);
                let lanes = crew.run(|lane| {
                    if lane == slow_lane {
                        std::thread::sleep(Duration::from_micros(300));
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    (lane, run)
                });
                if lanes != (0..n).map(|i| (i, run)).collect::<Vec<_>>()
                    || counter.load(Ordering::SeqCst) != n
                {
                    done.store(false, Ordering::SeqCst);
                    break;
                }
            }
        });
        assert!(done.load(Ordering::SeqCst), "every run returned every lane, once, in order");
    });
}
