//! Tests of the phase lease (SPEC B1): lane coverage and results, the inline one-thread case,
//! the pool-worker refusal, cancellation, panics and error precedence after every lane joined,
//! reuse after failure, bounded concurrency, admission while lanes run, warm lane resources, lane
//! placement (lane 0 inline on the owner thread, lane `i` on worker `i`) and the release of the
//! pool when the phase callback panics.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use holdfast_arbiter::{current_owner, has_active_execution};
use holdfast_resources::EngineResourceCheckout;
use holdfast_tensor::Tensor;

use crate::{
    CpuBackend, CpuPhaseError, CpuThreadExecution, OpError, PhaseRunError, SessionEntryError,
    current_cpu_execution,
};

/// Generous bound for anything a test waits on: a broken protocol fails the test, never hangs it.
const DEADLINE: Duration = Duration::from_secs(30);

fn backend(threads: usize) -> CpuBackend {
    CpuBackend::builder().threads(threads).private_arbiter().build().unwrap()
}

/// Every CPU of the process as the budget (2 on the project's machines).
fn all_threads() -> usize {
    holdfast_affinity::Topology::get().unwrap().allowed().len().max(1)
}

/// Waits (bounded) until `cond` holds; false if the deadline passed first.
fn wait_until(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + DEADLINE;
    while !cond() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// Three small matrices of one tensor-network instance `k`.
fn instance(k: usize) -> [Tensor<f64>; 3] {
    let m = |shape: [usize; 2], salt: usize| {
        let n = shape[0] * shape[1];
        let data = (0..n).map(|i| ((i * 7 + k * 13 + salt) % 11) as f64 * 0.25 - 1.0).collect();
        Tensor::from_vec(shape, data).unwrap()
    };
    [m([3, 4], 1), m([4, 5], 2), m([5, 2], 3)]
}

const SPEC: &str = "ij,jk,kl->il";

#[test]
fn every_lane_runs_and_the_lanes_match_a_single_threaded_result() {
    let b = backend(all_threads());
    let units = 24;
    let instances: Vec<_> = (0..units).map(instance).collect();
    let mut s = b.open_session().unwrap();
    let expected: Vec<Tensor<f64>> = instances
        .iter()
        .map(|[x, y, z]| {
            s.with_session(|v| v.einsum(SPEC, &[x.read(), y.read(), z.read()])).unwrap()
        })
        .collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(vec![None; units]);
    let seen = Mutex::new(vec![0usize; b.threads()]);
    let (lanes, stats) = s
        .phase(|phase| {
            phase
                .run(|lane, view| {
                    assert_eq!(current_cpu_execution(), CpuThreadExecution::Active);
                    seen.lock().unwrap()[lane] += 1;
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some([x, y, z]) = instances.get(k) else { return Ok(()) };
                        let r = view.einsum(SPEC, &[x.read(), y.read(), z.read()])?;
                        results.lock().unwrap()[k] = Some(r);
                    }
                })
                .map_err(|e: PhaseRunError<OpError>| e.to_string())?;
            Ok::<_, String>((phase.lanes(), phase.lane_stats().to_vec()))
        })
        .unwrap()
        .unwrap();
    assert_eq!(lanes, b.threads());
    assert_eq!(seen.into_inner().unwrap(), vec![1; lanes], "each lane ran exactly once");
    for (k, (got, want)) in results.into_inner().unwrap().iter().zip(&expected).enumerate() {
        let got = got.as_ref().unwrap_or_else(|| panic!("unit {k} was not run"));
        assert_eq!(got.shape(), want.shape());
        for (g, w) in got.as_slice().iter().zip(want.as_slice()) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "unit {k}: {g} vs {w}");
        }
    }
    assert!(stats.iter().all(|l| l.runs == 1 && l.failures == 0));
    assert_eq!(stats.iter().map(|l| l.operations).sum::<u64>(), units as u64);
    let st = s.close().unwrap();
    assert_eq!((st.operations, st.phase_runs, st.lane_operations), (units as u64, 1, units as u64));
}

#[test]
fn a_one_thread_budget_runs_one_lane_inline_on_the_caller() {
    let b = backend(1);
    let caller = std::thread::current().id();
    let calls = Mutex::new(Vec::new());
    let mut s = b.open_session().unwrap();
    let owner = s.owner();
    let inline_runs = s
        .phase(|phase| {
            for _ in 0..3 {
                phase
                    .run(|lane, view| {
                        assert!(view.is_inline());
                        assert_eq!(current_owner(), Some(owner), "the lane runs as the session");
                        calls.lock().unwrap().push((lane, std::thread::current().id()));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
            }
            phase.lane_stats()[0].inline_runs
        })
        .unwrap();
    assert_eq!(calls.into_inner().unwrap(), vec![(0, caller); 3]);
    assert_eq!(inline_runs, 3);
    assert_eq!(current_owner(), Some(owner), "the caller's marker is the session's again");
    s.close().unwrap();
}

#[test]
fn a_worker_of_the_engines_own_pool_is_refused_before_any_work() {
    if all_threads() < 2 {
        return;
    }
    let b = backend(2);
    let pool = b.domain().pool().unwrap();
    let ran = AtomicBool::new(false);
    let refused = pool.install(|| {
        let mut s = b.open_session().unwrap();
        let r = s.phase(|_| ran.store(true, Ordering::SeqCst));
        s.close().unwrap();
        r
    });
    assert!(matches!(refused, Err(CpuPhaseError::PoolWorker { .. })), "{refused:?}");
    assert!(!ran.load(Ordering::SeqCst), "the phase callback never ran");
    // A worker of an unrelated pool may lend this engine's pool.
    let other = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let lanes = other.install(|| {
        let mut s = b.open_session().unwrap();
        let lanes = AtomicUsize::new(0);
        s.phase(|phase| {
            phase.run(|_, _| {
                lanes.fetch_add(1, Ordering::SeqCst);
                Ok::<(), ()>(())
            })
        })
        .unwrap()
        .unwrap();
        s.close().unwrap();
        lanes.into_inner()
    });
    assert_eq!(lanes, 2);
}

/// A run's result, or the panic it resumed.
type RunOutcome<E> = std::thread::Result<Result<(), PhaseRunError<E>>>;

/// Runs `failing` on lane 0 and makes every other lane wait for cancellation (bounded), then
/// record that it finished. Returns the run's result and the peers' (saw cancel, finished) flags.
fn run_with_failing_lane_zero<E: Send>(
    b: &CpuBackend,
    failing: impl Fn() -> Result<(), E> + Sync,
) -> (RunOutcome<E>, Vec<(bool, bool)>) {
    let n = b.threads();
    let flags: Vec<_> = (0..n).map(|_| (AtomicBool::new(false), AtomicBool::new(false))).collect();
    let mut s = b.open_session().unwrap();
    let out = s
        .phase(|phase| {
            catch_unwind(AssertUnwindSafe(|| {
                phase.run(|lane, view| {
                    if lane == 0 {
                        return failing();
                    }
                    flags[lane].0.store(wait_until(|| view.cancelled()), Ordering::SeqCst);
                    // Linger, so that a run that did not join its lanes would return first.
                    std::thread::sleep(Duration::from_millis(20));
                    flags[lane].1.store(true, Ordering::SeqCst);
                    Ok(())
                })
            }))
        })
        .unwrap();
    // The session is usable after the failure.
    let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0]).unwrap();
    let sum = s.with_session(|v| v.add(a.read(), a.read())).unwrap();
    assert_eq!(sum.as_slice(), &[2.0, 4.0]);
    s.close().unwrap();
    let flags = flags
        .iter()
        .skip(1)
        .map(|(c, f)| (c.load(Ordering::SeqCst), f.load(Ordering::SeqCst)))
        .collect();
    (out, flags)
}

#[test]
fn a_lane_error_cancels_peers_and_is_reported_after_every_lane_joined() {
    let b = backend(all_threads());
    let (out, peers) = run_with_failing_lane_zero(&b, || Err("lane zero failed"));
    match out.unwrap() {
        Err(PhaseRunError::Lane { lane: 0, error: "lane zero failed", failed_lanes: 1 }) => {}
        other => panic!("expected lane 0's error, got {other:?}"),
    }
    assert!(peers.iter().all(|&(cancelled, finished)| cancelled && finished), "{peers:?}");
}

#[test]
fn a_lane_panic_surfaces_after_every_lane_joined_and_the_session_stays_usable() {
    let b = backend(all_threads());
    let (out, peers) = run_with_failing_lane_zero::<()>(&b, || panic!("lane zero panicked"));
    let payload = out.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"lane zero panicked"));
    assert!(peers.iter().all(|&(cancelled, finished)| cancelled && finished), "{peers:?}");
}

#[test]
fn a_lane_panic_leaves_the_lane_whole_and_the_phase_runs_again() {
    let b = backend(all_threads());
    let [x, y, z] = instance(3);
    let mut s = b.open_session().unwrap();
    s.phase(|phase| {
        let slots = phase.lane_slots();
        let panicked = catch_unwind(AssertUnwindSafe(|| {
            phase.run(|lane, view| {
                view.einsum(SPEC, &[x.read(), y.read(), z.read()])?;
                let t = view.add(x.read(), x.read())?; // a buffer in flight ...
                if lane == 0 {
                    panic!("after taking a buffer"); // ... when the lane panics
                }
                view.recycle(t);
                Ok::<(), OpError>(())
            })
        }));
        assert!(panicked.is_err());
        {
            let lane0 = EngineResourceCheckout::take(&slots[0]).unwrap();
            assert_eq!(lane0.buffers.stats().in_flight, 0, "the loan made the pool whole");
        }
        phase
            .run(|_, view| {
                view.einsum(SPEC, &[x.read(), y.read(), z.read()])?;
                Ok::<(), OpError>(())
            })
            .unwrap();
        let lane0 = phase.lane_stats()[0];
        assert_eq!((lane0.runs, lane0.panics, lane0.operations), (2, 1, 3));
        assert_eq!(phase.runs(), 2);
    })
    .unwrap();
    s.close().unwrap();
}

#[test]
fn a_session_error_outranks_a_lane_error_and_the_phase_runs_again() {
    let b = backend(all_threads());
    if b.threads() < 2 {
        return;
    }
    let mut s = b.open_session().unwrap();
    s.phase(|phase| {
        let slots = phase.lane_slots();
        // Lane 1's private resources are held elsewhere: its admission is refused (Contended,
        // never a wait) while lane 0 fails on its own.
        let held = EngineResourceCheckout::take(&slots[1]).unwrap();
        let out = phase.run(|lane, _| if lane == 0 { Err("lane error") } else { Ok(()) });
        match out {
            Err(PhaseRunError::Session {
                lane: 1,
                source: SessionEntryError::Contended { .. },
            }) => {}
            other => panic!("expected lane 1's session error, got {other:?}"),
        }
        drop(held);
        // The failure left nothing behind: the next run is clean.
        phase.run(|_, _| Ok::<(), ()>(())).unwrap();
        let stats = phase.lane_stats();
        assert_eq!((stats[0].runs, stats[0].failures), (2, 1));
        assert_eq!((stats[1].runs, stats[1].refusals), (1, 1));
    })
    .unwrap();
    s.close().unwrap();
}

#[test]
fn concurrent_lanes_never_exceed_the_budget() {
    for threads in [1, all_threads()] {
        let b = backend(threads);
        let (active, peak, next) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
        let a = Tensor::<f64>::from_vec([4, 4], (0..16).map(f64::from).collect()).unwrap();
        let mut s = b.open_session().unwrap();
        s.phase(|phase| {
            for _ in 0..5 {
                phase
                    .run(|_, view| {
                        while next.fetch_add(1, Ordering::Relaxed) < 400 {
                            let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                            peak.fetch_max(now, Ordering::SeqCst);
                            let c = view.matmul(a.read(), a.read())?;
                            view.recycle(c);
                            active.fetch_sub(1, Ordering::SeqCst);
                        }
                        Ok::<(), OpError>(())
                    })
                    .unwrap();
                next.store(0, Ordering::Relaxed);
            }
        })
        .unwrap();
        s.close().unwrap();
        let peak = peak.into_inner();
        assert!((1..=threads).contains(&peak), "peak {peak} lanes with a budget of {threads}");
    }
}

#[test]
fn an_unrelated_owner_is_contended_or_waits_while_lanes_run() {
    let b = backend(all_threads());
    let (try_tx, try_rx) = mpsc::channel::<bool>();
    let (wait_go_tx, wait_go_rx) = mpsc::channel::<()>();
    let (waited_tx, waited_rx) = mpsc::channel::<bool>();
    let (trier, waiter) = (b.clone(), b.clone());
    let (lanes_running_tx, lanes_running_rx) = mpsc::channel::<()>();
    let try_thread = std::thread::spawn(move || {
        lanes_running_rx.recv_timeout(DEADLINE).unwrap();
        let r = trier.try_open_session();
        try_tx.send(matches!(r, Err(SessionEntryError::Contended { .. }))).unwrap();
    });
    let wait_thread = std::thread::spawn(move || {
        wait_go_rx.recv_timeout(DEADLINE).unwrap();
        let r = waiter.open_session().map(|s| s.close().is_ok());
        waited_tx.send(matches!(r, Ok(true))).unwrap();
    });
    let lanes_running_tx = Mutex::new(lanes_running_tx);
    let (try_rx, wait_go_tx) = (Mutex::new(try_rx), Mutex::new(wait_go_tx));
    let arbiter = b.engine.arbiter.clone();
    let mut s = b.open_session().unwrap();
    let (contended, queued) = s
        .phase(|phase| {
            let outcome = Mutex::new((false, false));
            phase
                .run(|lane, _| {
                    if lane != 0 {
                        return Ok(());
                    }
                    lanes_running_tx.lock().unwrap().send(()).unwrap();
                    let contended = try_rx.lock().unwrap().recv_timeout(DEADLINE).unwrap();
                    wait_go_tx.lock().unwrap().send(()).unwrap();
                    let queued = wait_until(|| arbiter.snapshot().unwrap().waiters == 1);
                    *outcome.lock().unwrap() = (contended, queued);
                    Ok::<(), ()>(())
                })
                .unwrap();
            outcome.into_inner().unwrap()
        })
        .unwrap();
    assert!(contended, "a try-opener is Contended while lanes run");
    assert!(queued, "a waiting opener queues while lanes run");
    assert!(waited_rx.try_recv().is_err(), "and is not admitted while the session is held");
    s.close().unwrap();
    assert!(waited_rx.recv_timeout(DEADLINE).unwrap(), "admitted once the session closed");
    try_thread.join().unwrap();
    wait_thread.join().unwrap();
}

#[test]
fn lanes_reuse_their_resources_across_runs_and_phases() {
    let b = backend(all_threads());
    let n = b.threads() as u64;
    let a = Tensor::<f64>::from_vec([8, 8], (0..64).map(f64::from).collect()).unwrap();
    let body = |_: usize, view: &mut crate::PhaseLane<'_, '_>| {
        let c = view.einsum("ij,jk->ik", &[a.read(), a.read()])?;
        view.recycle(c);
        Ok::<(), OpError>(())
    };
    let mut s = b.open_session().unwrap();
    let first = s
        .phase(|phase| {
            assert_eq!(
                phase.lane_resources_built(),
                n,
                "one set per lane, built at the first phase"
            );
            phase.run(body).unwrap();
            let after_one = phase.lane_stats().to_vec();
            // Warm runs never touch admission: the lanes joined the owner when the phase
            // opened.
            let arbiter_locks = b.arbiter_lock_acquisitions();
            for _ in 0..4 {
                phase.run(body).unwrap();
            }
            assert_eq!(b.arbiter_lock_acquisitions(), arbiter_locks, "a run takes no arbiter lock");
            assert_eq!(phase.lane_resources_built(), n, "runs reuse the lanes' resources");
            for (one, five) in after_one.iter().zip(phase.lane_stats()) {
                assert_eq!((one.buffer_misses, one.plan_misses), (1, 1), "cold first run");
                assert_eq!(five.buffer_misses, one.buffer_misses, "warm pool: no new allocation");
                assert_eq!(five.plan_misses, one.plan_misses, "warm plan cache: no new plan");
                assert_eq!((five.buffer_hits, five.plan_hits), (4, 4));
                assert_eq!(five.runs, 5);
            }
            phase.lane_stats().to_vec()
        })
        .unwrap();
    // A later phase of the same session finds the same lanes, still warm.
    s.phase(|phase| {
        assert_eq!(phase.lane_resources_built(), n);
        phase.run(body).unwrap();
        for (before, after) in first.iter().zip(phase.lane_stats()) {
            assert_eq!(after.buffer_misses, before.buffer_misses);
            assert_eq!(after.plan_misses, before.plan_misses);
            assert_eq!(after.runs, before.runs + 1);
        }
    })
    .unwrap();
    let st = s.close().unwrap();
    assert_eq!((st.phase_runs, st.lane_operations, st.operations), (6, 6 * n, 0));
}

#[test]
fn a_lane_is_a_child_of_the_session_owner_and_restores_its_worker() {
    let b = backend(all_threads());
    let a = Tensor::<f64>::from_vec([2], vec![1.0, 2.0]).unwrap();
    let mut s = b.open_session().unwrap();
    let owner = s.owner();
    s.phase(|phase| {
        phase
            .run(|_, view| {
                assert_eq!(current_owner(), Some(owner));
                // A root entry from a lane is a re-entry, refused before blocking ...
                assert!(matches!(b.open_session(), Err(SessionEntryError::Reentered { .. })));
                // ... while the lane's own children join the session's owner.
                let child = view.child_execution();
                let r = child.with_backend_session(|cv| cv.add(a.read(), a.read())).unwrap()?;
                assert_eq!(r.as_slice(), &[2.0, 4.0]);
                assert_eq!(view.stats().operations, 0, "the child's operation is its own");
                Ok::<(), OpError>(())
            })
            .unwrap();
    })
    .unwrap();
    if let Some(pool) = b.domain().pool() {
        let markers = pool.broadcast(|_| has_active_execution());
        assert!(markers.iter().all(|set| !set), "every worker's marker was restored");
    }
    s.close().unwrap();
}

#[test]
fn lane_zero_runs_inline_on_the_owner_thread_and_lane_i_on_worker_i() {
    let b = backend(all_threads());
    if b.threads() < 2 {
        return;
    }
    let pool = b.domain().pool().unwrap();
    let caller = std::thread::current().id();
    let mut s = b.open_session().unwrap();
    let owner = s.owner();
    let placements = Mutex::new(Vec::new());
    let stats = s
        .phase(|phase| {
            for _ in 0..20 {
                phase
                    .run(|lane, view| {
                        assert_eq!(current_owner(), Some(owner), "every lane runs as the session");
                        let on_caller = std::thread::current().id() == caller;
                        placements.lock().unwrap().push((
                            lane,
                            view.is_inline(),
                            on_caller,
                            pool.current_thread_index(),
                        ));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
            }
            phase.lane_stats().to_vec()
        })
        .unwrap();
    let placements = placements.into_inner().unwrap();
    assert_eq!(placements.len(), 20 * b.threads());
    for (lane, inline, on_caller, worker) in placements {
        if lane == 0 {
            assert!(inline && on_caller && worker.is_none(), "lane 0 inline on the owner thread");
        } else {
            assert!(!inline && !on_caller, "lane {lane} on a pool worker");
            assert_eq!(worker, Some(lane), "lane {lane} always on worker {lane}");
        }
    }
    assert_eq!((stats[0].runs, stats[0].inline_runs), (20, 20));
    assert!(stats[1..].iter().all(|l| l.runs == 20 && l.inline_runs == 0));
    assert_eq!(current_owner(), Some(owner), "the caller's marker is the session's again");
    s.close().unwrap();
}

#[test]
fn a_panicking_phase_callback_releases_the_pool_and_the_session_stays_usable() {
    let b = backend(all_threads());
    let mut s = b.open_session().unwrap();
    let out = catch_unwind(AssertUnwindSafe(|| {
        s.phase(|phase| {
            phase.run(|_, _| Ok::<(), ()>(())).unwrap();
            panic!("the outer scheduler gave up");
        })
    }));
    assert_eq!(out.unwrap_err().downcast_ref::<&str>(), Some(&"the outer scheduler gave up"));
    if let Some(pool) = b.domain().pool() {
        // The phase's parked workers were released: a broadcast needs every one of them.
        let workers = pool.broadcast(|ctx| ctx.index());
        assert_eq!(workers, (0..b.threads()).collect::<Vec<_>>());
    }
    // The next phase opens its crew again and runs.
    let lanes = AtomicUsize::new(0);
    s.phase(|phase| {
        phase
            .run(|_, _| {
                lanes.fetch_add(1, Ordering::SeqCst);
                Ok::<(), ()>(())
            })
            .unwrap();
    })
    .unwrap();
    assert_eq!(lanes.into_inner(), b.threads());
    let st = s.close().unwrap();
    assert_eq!(st.phase_runs, 2);
}
