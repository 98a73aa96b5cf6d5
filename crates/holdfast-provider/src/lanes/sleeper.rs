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
//! The four accesses of the protocol — the waiter's store of `sleeping = true` and its re-check of
//! the condition, the waker's write of the condition and its load of `sleeping` — are all
//! `SeqCst`, and so is every other store of `sleeping`. In their single total order either the
//! waiter's re-check comes after the waker's write (it sees the condition and does not park) or the
//! waker's load comes after the waiter's announcement (it sees `sleeping == true`, or the `false`
//! written after a later wake-up, by which time the waiter is awake and re-checks) and unparks it;
//! `unpark` before `park` makes the `park` return at once. Outside the park path the condition
//! is read with `Acquire`, which is all a waiter needs to see what the waker wrote before it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

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
#[derive(Debug, Default)]
pub(super) struct Sleeper {
    /// True while the waiter is about to park or parked.
    sleeping: AtomicBool,
    /// The waiting thread, registered before its first wait.
    thread: OnceLock<Thread>,
}

impl Sleeper {
    /// A sleeper for the calling thread.
    pub(super) fn for_current() -> Self {
        let sleeper = Sleeper::default();
        sleeper.register();
        sleeper
    }

    /// Registers the calling thread as this sleeper's waiter (the first registration wins; a
    /// sleeper has one waiter for its whole life).
    pub(super) fn register(&self) {
        let _first = self.thread.set(thread::current());
    }

    /// Waits on the registered thread until `ready` returns a value, and returns it: spins, yields,
    /// then parks (module docs). `ready` is called with the ordering to read the condition with:
    /// `Acquire`, or `SeqCst` for the re-check after announcing a park.
    pub(super) fn wait_for<T>(&self, mut ready: impl FnMut(Ordering) -> Option<T>) -> T {
        let mut started = None;
        let mut spins: u32 = 0;
        loop {
            if let Some(value) = ready(Ordering::Acquire) {
                return value;
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(SPINS_PER_CLOCK_READ) {
                std::hint::spin_loop();
                continue;
            }
            let waited = started.get_or_insert_with(Instant::now).elapsed();
            if waited < SPIN_FOR {
                std::hint::spin_loop();
            } else if waited < YIELD_FOR {
                thread::yield_now();
            } else {
                self.sleeping.store(true, Ordering::SeqCst);
                if let Some(value) = ready(Ordering::SeqCst) {
                    self.sleeping.store(false, Ordering::SeqCst);
                    return value;
                }
                thread::park();
                self.sleeping.store(false, Ordering::SeqCst);
            }
        }
    }

    /// Wakes the waiter if it announced a park. Call it after making the waiter's condition true
    /// with a `SeqCst` write (module docs).
    pub(super) fn wake(&self) {
        if self.sleeping.load(Ordering::SeqCst)
            && let Some(thread) = self.thread.get()
        {
            thread.unpark();
        }
    }
}
