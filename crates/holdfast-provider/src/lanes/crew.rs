//! [`Crew`]: the private engine of a lane crew — the state shared by the crew's caller and its
//! parked workers, the run protocol (publish, run lane 0 inline, join) and the workers' loop.
//!
//! # Invariants
//!
//! - The crew has `lanes` lanes: lane 0 is the caller's, lanes `1..lanes` are served by one
//!   parked worker each ([`Crew::serve`]). Only the caller publishes runs and closes the crew, and
//!   it does so from one thread (the facade's `LaneCrew` is `!Sync`), one run at a time.
//! - A run publishes the lane closure and a new generation, runs lane 0, and returns only after
//!   every worker lane has reported done, even when lane 0 or the caller's own code unwinds (the
//!   join is a drop guard). Every lane runs exactly once per run; each writes only its own result
//!   slot.
//! - A worker leaves [`Crew::serve`] only when it reads the [`CLOSED`] generation; it never
//!   unwinds out of a lane (a lane's panic is caught and stored in its slot; anything else that
//!   unwinds in the loop aborts the process, as rayon's `AbortIfPanic` does).
//!
//! # Memory ordering
//!
//! The lane closure lives in [`Crew::run`]'s frame and is reached by the workers through the
//! type-erased [`Job`] in [`JobCell`]. The happens-before chain that keeps every worker's use of
//! it inside the run:
//!
//! 1. The caller writes the job (and resets `remaining`) only when no worker can read it: before
//!    the first run, or after it read `remaining == 0` (`Acquire`) at the end of the previous run.
//! 2. It then stores the new generation (`Release`).
//! 3. A worker reads that generation (`Acquire`) before it reads the job, so it sees the job and
//!    `remaining` of this run.
//! 4. The worker calls the closure, writes its result slot, then decrements `remaining`
//!    (`Release` read-modify-write); after that it touches nothing of the run (only the crew,
//!    which outlives every worker's loop).
//! 5. The caller reads `remaining == 0` (`Acquire`): the decrements form one release sequence, so
//!    every worker's closure call and slot write happen-before the caller's return, its reads of
//!    the slots and its next write of the job.
//!
//! Sleeping and waking follow [`Sleeper`]'s protocol: the generation store and the `remaining`
//! decrement are the condition writes that precede the wakes ([`wake_all`] and
//! [`Sleeper::wake`] put the protocol's `SeqCst` fence after them).
//!
//! The model-checking build checks this chain ([`crate::sync`]; `loom_tests.rs`): every access
//! to the job cell and the result slots is a tracked cell access, so an overlap is a reported
//! data race, and a lost wake-up is a reported deadlock.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use super::sleeper::{Sleeper, wake_all};
use crate::sync::{AtomicUsize, Ordering, UnsafeCell};

/// The generation that tells every worker to leave the crew.
const CLOSED: usize = usize::MAX;

/// A value on a cache line of its own: the caller-written generation, the worker-written
/// `remaining` and each worker's sleeper do not share lines.
#[derive(Debug)]
#[repr(align(128))]
struct Padded<T>(T);

/// One run's lane closure, type-erased: `call(data, lane)` runs lane `lane`.
#[derive(Clone, Copy)]
struct Job {
    /// Points to the run's closure (a `C: Fn(usize) + Sync` in [`Crew::run`]'s frame).
    data: *const (),
    /// `call_erased::<C>`.
    call: unsafe fn(*const (), usize),
}

impl Job {
    fn erase<C: Fn(usize) + Sync>(body: &C) -> Job {
        Job { data: std::ptr::from_ref(body).cast(), call: call_erased::<C> }
    }
}

/// Runs lane `lane` of the closure behind `data`.
///
/// # Safety
///
/// `data` must point to a live `C` for the whole call (the run that published it has not ended).
unsafe fn call_erased<C: Fn(usize) + Sync>(data: *const (), lane: usize) {
    // SAFETY:
    // - `data` was made from a `&C` by `Job::erase::<C>` (the only maker of this pairing), so it
    //   is aligned and points to a `C`;
    // - the caller guarantees the `C` is alive for the call;
    // - `C: Sync`, so a shared reference may be used from this thread.
    let body = unsafe { &*data.cast::<C>() };
    body(lane);
}

/// The published job of the current run.
///
/// # Safety
///
/// The cell is written only by the crew's caller, and only while no worker can read it (step 1 of
/// the module's memory-ordering chain); it is read only by workers, between reading a new
/// generation and reporting done (steps 3-4). Those accesses never overlap, so sharing the cell
/// between threads is sound.
struct JobCell(UnsafeCell<Option<Job>>);

// SAFETY: see the type's `# Safety` contract: writes and reads of the cell are ordered by the
// generation (Release/Acquire) and `remaining` (Release sequence/Acquire) atomics, and the closure
// the job points to is `Sync`.
unsafe impl Sync for JobCell {}

/// One lane's result slot of one run: written once by the lane's thread, read by the caller after
/// the join.
struct LaneSlot<R>(UnsafeCell<Option<std::thread::Result<R>>>);

// SAFETY: slot `i` is written only by lane `i` (each lane runs exactly once per run) and read only
// by the caller after the run's join, which happens-after that write (module docs, step 5). The
// value crosses threads once, so `R: Send` is enough.
unsafe impl<R: Send> Sync for LaneSlot<R> {}

impl<R> LaneSlot<R> {
    fn empty() -> Self {
        LaneSlot(UnsafeCell::new(None))
    }

    /// Stores lane's result.
    ///
    /// # Safety
    ///
    /// Only the lane of this slot may call it, once per run, and nothing reads the slot until the
    /// run's join.
    unsafe fn put(&self, value: std::thread::Result<R>) {
        // SAFETY: exclusive access per the function's contract (one writer, no reader yet).
        self.0.with_mut(|slot| unsafe { *slot = Some(value) });
    }

    fn into_inner(self) -> Option<std::thread::Result<R>> {
        self.0.into_inner()
    }
}

/// Aborts the process if dropped while unwinding out of a worker's loop: a worker that left its
/// loop without reporting done would leave the caller waiting forever.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        std::process::abort();
    }
}

/// The shared state of one open lane crew.
pub(super) struct Crew {
    /// The current run's generation, or [`CLOSED`]. Written by the caller only.
    generation: Padded<AtomicUsize>,
    /// Worker lanes of the current run that have not reported done yet.
    remaining: Padded<AtomicUsize>,
    /// The current run's lane closure.
    job: JobCell,
    /// The caller, waiting for its workers.
    caller: Padded<Sleeper>,
    /// Worker lane `i` (lane `i + 1`), waiting for a run.
    workers: Box<[Padded<Sleeper>]>,
}

impl std::fmt::Debug for Crew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crew")
            .field("lanes", &self.lanes())
            .field("generation", &self.generation.0.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Crew {
    /// A crew of `lanes` lanes (at least one) whose caller is the calling thread.
    pub(super) fn new(lanes: usize) -> Self {
        Crew {
            generation: Padded(AtomicUsize::new(0)),
            remaining: Padded(AtomicUsize::new(0)),
            job: JobCell(UnsafeCell::new(None)),
            caller: Padded(Sleeper::for_current()),
            workers: (1..lanes.max(1)).map(|_| Padded(Sleeper::new())).collect(),
        }
    }

    /// Lanes per run: the caller's lane 0 and one per worker.
    pub(super) fn lanes(&self) -> usize {
        self.workers.len() + 1
    }

    /// The loop of the worker that serves lane `lane` (`1..lanes`): waits for each run, runs its
    /// lane, reports done; returns once the crew is closed.
    pub(super) fn serve(&self, lane: usize) {
        let Some(me) = lane.checked_sub(1).and_then(|i| self.workers.get(i)) else {
            return; // Not a worker lane of this crew: nothing to serve.
        };
        let me = &me.0;
        me.register();
        let mut seen = 0;
        loop {
            let generation = me.wait_for(|| {
                let g = self.generation.0.load(Ordering::Acquire);
                (g != seen).then_some(g)
            });
            if generation == CLOSED {
                return;
            }
            seen = generation;
            let bomb = AbortOnUnwind;
            // SAFETY: step 3 of the module's chain: this worker read the run's generation with
            // Acquire, which synchronizes with the caller's Release store made after it wrote the
            // job; the caller writes the job again only after this worker's decrement below, so
            // the read does not race.
            let job = self.job.0.with(|job| unsafe { *job });
            if let Some(job) = job {
                // SAFETY: the run that published `job` waits for this worker's decrement below
                // before it returns, so the closure behind `job.data` is alive for the call;
                // `job` was made by `Job::erase`, pairing `data` with its own `call`.
                unsafe { (job.call)(job.data, lane) };
            }
            // Step 4: report done; nothing of the run is touched after this.
            if self.remaining.0.fetch_sub(1, Ordering::Release) == 1 {
                self.caller.0.wake();
            }
            std::mem::forget(bomb);
        }
    }

    /// Runs `lane(i)` for every lane: lane 0 on the calling thread (the crew's caller), the others
    /// on the workers; returns the results in lane order once every lane has finished. A lane's
    /// panic is resumed here after that (the lowest panicking lane's payload).
    pub(super) fn run<R, F>(&self, lane: F) -> Vec<R>
    where
        R: Send,
        F: Fn(usize) -> R + Sync,
    {
        let lanes = self.lanes();
        let slots: Box<[LaneSlot<R>]> = (0..lanes).map(|_| LaneSlot::empty()).collect();
        let body = |i: usize| {
            let result = catch_unwind(AssertUnwindSafe(|| lane(i)));
            if let Some(slot) = slots.get(i) {
                // SAFETY: lane `i` runs once per run (lane 0 here below, lane `i > 0` on its one
                // worker, once per generation), and the caller reads the slots only after the
                // join.
                unsafe { slot.put(result) };
            }
        };
        {
            // SAFETY: step 1 of the module's chain: no worker reads the job now: before the first
            // run none has seen a generation, and after a run the caller read `remaining == 0`
            // (Acquire) in the previous run's join, which happens-after every worker's last read
            // of the job.
            self.job.0.with_mut(|job| unsafe { *job = Some(Job::erase(&body)) });
            self.remaining.0.store(lanes - 1, Ordering::Relaxed);
            let next = (self.generation.0.load(Ordering::Relaxed) + 1) % CLOSED;
            // Step 2: publish (Release for the job and `remaining`), then wake.
            self.generation.0.store(next, Ordering::Release);
            wake_all(self.workers.iter().map(|worker| &worker.0));
            // Joins the workers even if lane 0 (or anything here) unwinds: `body` and `slots`
            // must outlive every worker's use of them.
            let _join = JoinOnDrop(self);
            body(0);
        }
        collect(slots)
    }

    /// Tells every worker to leave the crew. Called once, when no run is in progress.
    pub(super) fn close(&self) {
        self.generation.0.store(CLOSED, Ordering::Release);
        wake_all(self.workers.iter().map(|worker| &worker.0));
    }
}

/// Waits, when dropped, until every worker lane of the current run has reported done.
struct JoinOnDrop<'c>(&'c Crew);

impl Drop for JoinOnDrop<'_> {
    fn drop(&mut self) {
        let crew = self.0;
        // Step 5: Acquire of the last decrement.
        crew.caller.0.wait_for(|| (crew.remaining.0.load(Ordering::Acquire) == 0).then_some(()));
    }
}

/// The run's results in lane order; resumes the lowest lane's panic, if any.
fn collect<R>(slots: Box<[LaneSlot<R>]>) -> Vec<R> {
    let mut results = Vec::with_capacity(slots.len());
    let mut panic: Option<Box<dyn Any + Send>> = None;
    let mut unfilled = 0;
    for slot in slots {
        match slot.into_inner() {
            Some(Ok(value)) => results.push(value),
            Some(Err(payload)) => {
                panic.get_or_insert(payload);
            }
            None => unfilled += 1,
        }
    }
    debug_assert_eq!(unfilled, 0, "every lane ran before the join returned");
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
    results
}
