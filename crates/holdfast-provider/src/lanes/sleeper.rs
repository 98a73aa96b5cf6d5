//! [`Sleeper`]: how one thread of a lane crew waits for a condition another thread makes true —
//! bounded spinning, then yielding, then parking — and how that other thread wakes it.
//!
//! # Invariants
//!
//! - A waiter spins for at most [`SPIN_FOR`], then yields the CPU until [`YIELD_FOR`] has passed
//!   since it started waiting, then parks (`std::thread::park`) until woken. So a thread that waits
//!   longer than that costs no CPU.
//! - No lost wake-up: a waiter that parks has first announced itself (`sleeping = true`) and then
//!   re-checked the condition; a waker first makes the condition true and then reads `sleeping`,
//!   unparking the thread if it is set (the protocol of `rayon-core/src/sleep/README.md`, reduced
//!   to one sleeper per flag).
//! - A spurious or stale unpark only makes the waiter re-check its condition.
//!
//! # Memory ordering
//!
//! The protocol is a store-then-load on each side: the waiter stores `sleeping = true` and then
//! re-reads the condition; the waker writes the condition and then reads `sleeping`. A
//! `fence(SeqCst)` sits between the two accesses on each side ([`Sleeper::wait_for`]'s park path,
//! [`wake_all`]). The two fences are totally ordered: when the waiter's comes first, the waker's
//! read of `sleeping` sees `true` (or the `false` the waiter stores after a later wake-up, by
//! which time it is awake and re-checks) and unparks it; when the waker's comes first, the
//! waiter's re-check sees the condition and it does not park. `unpark` before `park` makes the
//! `park` return at once. The condition is read with `Acquire` throughout, which is all a waiter
//! needs to see what the waker wrote before it (the waker's condition write is a `Release`).

use std::time::{Duration, Instant};

use crate::sync::{self, AtomicBool, MODEL, OnceLock, Ordering, Thread, fence};

/// How long a waiter spins before it starts yielding.
pub(super) const SPIN_FOR: Duration = Duration::from_micros(50);

/// How long after it started waiting a waiter yields before it parks.
pub(super) const YIELD_FOR: Duration = Duration::from_micros(200);

/// Spins between two reads of the clock.
const SPINS_PER_CLOCK_READ: u32 = 64;

/// One thread that waits, and what another thread needs to wake it.
///
/// Only the thread registered in `thread` may wait on a sleeper (one waiter per sleeper); any
/// thread may wake it.
pub(super) struct Sleeper {
    /// True while the waiter is about to park or parked.
    sleeping: AtomicBool,
    /// The waiting thread, registered before its first wait.
    thread: OnceLock<Thread>,
}

impl std::fmt::Debug for Sleeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sleeping = self.sleeping.load(Ordering::Relaxed);
        f.debug_struct("Sleeper").field("sleeping", &sleeping).finish_non_exhaustive()
    }
}

impl Sleeper {
    /// A sleeper with no waiter registered yet.
    pub(super) fn new() -> Self {
        Sleeper { sleeping: AtomicBool::new(false), thread: OnceLock::new() }
    }

    /// A sleeper for the calling thread.
    pub(super) fn for_current() -> Self {
        let sleeper = Sleeper::new();
        sleeper.register();
        sleeper
    }

    /// Registers the calling thread as this sleeper's waiter (the first registration wins; a
    /// sleeper has one waiter for its whole life).
    pub(super) fn register(&self) {
        let _first = self.thread.set(sync::current());
    }

    /// Waits on the registered thread until `ready` returns a value, and returns it: spins, yields,
    /// then parks (module docs). `ready` reads the condition with `Acquire`.
    pub(super) fn wait_for<T>(&self, mut ready: impl FnMut() -> Option<T>) -> T {
        let mut backoff = Backoff::default();
        loop {
            if let Some(value) = ready() {
                return value;
            }
            if !MODEL && backoff.keep_spinning() {
                continue;
            }
            self.sleeping.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if let Some(value) = ready() {
                self.sleeping.store(false, Ordering::Relaxed);
                return value;
            }
            sync::park();
            self.sleeping.store(false, Ordering::Relaxed);
        }
    }

    /// Wakes the waiter if it announced a park. Call it after making the waiter's condition true
    /// with a `Release` write (module docs).
    pub(super) fn wake(&self) {
        wake_all(std::slice::from_ref(self).iter());
    }

    /// The second half of a wake-up, after the caller's fence: unparks the waiter if it announced
    /// a park.
    fn unpark_if_sleeping(&self) {
        if self.sleeping.load(Ordering::Relaxed)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }
}

/// Wakes every waiter of `sleepers` that announced a park, behind one `SeqCst` fence. Call it
/// after making their conditions true with `Release` writes (module docs).
pub(super) fn wake_all<'s>(sleepers: impl IntoIterator<Item = &'s Sleeper>) {
    fence(Ordering::SeqCst);
    for sleeper in sleepers {
        sleeper.unpark_if_sleeping();
    }
}

/// A waiter's timed spin and yield phases before it parks.
#[derive(Debug, Default)]
struct Backoff {
    started: Option<Instant>,
    spins: u32,
}

impl Backoff {
    /// Spins or yields once and returns true while the waiter is in its spin or yield phase;
    /// false once it is time to park.
    fn keep_spinning(&mut self) -> bool {
        self.spins = self.spins.wrapping_add(1);
        if !self.spins.is_multiple_of(SPINS_PER_CLOCK_READ) {
            std::hint::spin_loop();
            return true;
        }
        let waited = self.started.get_or_insert_with(Instant::now).elapsed();
        if waited < SPIN_FOR {
            std::hint::spin_loop();
            true
        } else if waited < YIELD_FOR {
            std::thread::yield_now();
            true
        } else {
            false
        }
    }
}
