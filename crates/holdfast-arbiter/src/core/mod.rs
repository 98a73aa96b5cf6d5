//! The private arbiter engine: the admission [`State`] behind one mutex, plus one condition
//! variable for queued requests. The public facade (`crate::arbiter`) wraps it the way tokio's
//! `Semaphore` wraps its private `batch_semaphore`.
//!
//! # Protocol
//!
//! Every state change happens under the mutex. A request that must wait is queued with a ticket,
//! the waiter counts itself in `sleepers` and blocks on the condition variable (atomically
//! releasing the mutex). Admission of queued requests is decided by whoever changes the state —
//! a release, or a waiter withdrawing on its deadline — through the FIFO grant pass, which moves
//! the admitted requests into the active table *before* any waiter runs. A woken waiter only
//! checks whether its ticket left the queue. Hence no lost wake-up: a waiter is counted in
//! `sleepers` before the mutex is released, and a releaser that grants anything while
//! `sleepers > 0` calls `notify_all`. A release that grants nothing, or finds no sleeper, pays
//! for no notify (std's `notify_all` is a system call even with nobody waiting).
//!
//! # Memory ordering
//!
//! The mutex orders everything: a permit's release happens-before the admission it enables, so
//! whatever the previous holder wrote before dropping its permit is visible to the next holder
//! after its `acquire` returns. The one atomic is a statistics counter of lock acquisitions,
//! written (load and store, no read-modify-write) only while the mutex is held and read anywhere.
//!
//! # Poison
//!
//! The state is modified only by code that cannot panic between two consistent states (no user
//! code, no indexing without a prior check), so a poisoned mutex means a foreign panic (for
//! example an allocation failure). Admission reports it as `AdmissionError::Poisoned`; release
//! still recovers the guard and removes its reservation, because release is infallible (A1) and a
//! waiter must not stay blocked behind a permit that is gone.

pub(crate) mod state;

use crate::error::AdmissionError;
use crate::owner::OwnerId;
use crate::sync::{Condvar, Mutex, MutexGuard};
use state::{Request, State, Submit, Ticket};
use std::time::Instant;

/// How long a request may wait, as the core sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// Never queue.
    Never,
    /// Queue and wait until admitted.
    Forever,
    /// Queue and wait until admitted or `Instant` passes.
    Until(Instant),
}

/// The arbiter core.
#[derive(Debug)]
pub(crate) struct Core {
    state: Mutex<State>,
    wake: Condvar,
    /// Acquisitions of `state`'s mutex (measurements prove a held session's operations take
    /// none). Written only while the mutex is held, so a load and a store suffice: no
    /// read-modify-write.
    locks: std::sync::atomic::AtomicU64,
    /// Broadcasts made (tests check that a release with no waiter makes none).
    #[cfg(test)]
    notifies: std::sync::atomic::AtomicUsize,
}

/// How an admission ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Admitted {
    pub(crate) ticket: Ticket,
    /// Whether the owner was already active and this permit joined its reservation.
    pub(crate) joined: bool,
}

impl Core {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State::new()),
            wake: Condvar::new(),
            locks: std::sync::atomic::AtomicU64::new(0),
            #[cfg(test)]
            notifies: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, AdmissionError> {
        let guard = self.state.lock().map_err(|_| AdmissionError::Poisoned)?;
        self.count_lock();
        Ok(guard)
    }

    /// Counts one acquisition of the state mutex; called only while it is held.
    fn count_lock(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        self.locks.store(self.locks.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// Acquisitions of the state mutex so far (by admissions, joins, releases and snapshots).
    pub(crate) fn lock_acquisitions(&self) -> u64 {
        self.locks.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Admits `request`, waiting as `wait` allows. `may_park` is asked (at most once, under the
    /// lock) only when the request would have to queue; `false` turns a wait into a try.
    pub(crate) fn admit(
        &self,
        request: Request<'_>,
        wait: Wait,
        may_park: impl FnOnce() -> bool,
    ) -> Result<Admitted, AdmissionError> {
        let owner = request.owner;
        let mut state = self.lock()?;
        let mut started = None;
        let submit = state.submit(request, || match wait {
            Wait::Never => false,
            Wait::Forever => may_park(),
            Wait::Until(deadline) => {
                let now = Instant::now();
                started = Some(now);
                now < deadline && may_park()
            }
        });
        let ticket = match submit {
            Submit::Admitted(ticket) => return Ok(Admitted { ticket, joined: false }),
            Submit::Joined(ticket) => return Ok(Admitted { ticket, joined: true }),
            Submit::OutsideReservation => {
                return Err(AdmissionError::Reentered {
                    owner,
                    cause: crate::error::ReentryCause::OutsideReservation,
                });
            }
            Submit::Blocked { holder, waiters_ahead } => {
                return Err(match (wait, started) {
                    // The deadline had already passed: report a timeout of zero length.
                    (Wait::Until(deadline), Some(now)) if now >= deadline => {
                        AdmissionError::TimedOut { waited: std::time::Duration::ZERO, holder }
                    }
                    _ => AdmissionError::Contended { holder, waiters_ahead },
                });
            }
            Submit::Queued(ticket) => ticket,
        };
        self.wait_queued(state, ticket, wait, started)
    }

    /// Blocks until queued `ticket` is granted, its deadline passes, or the state is poisoned.
    fn wait_queued(
        &self,
        mut state: MutexGuard<'_, State>,
        ticket: Ticket,
        wait: Wait,
        started: Option<Instant>,
    ) -> Result<Admitted, AdmissionError> {
        state.sleepers += 1;
        loop {
            if !state.is_queued(ticket) {
                state.sleepers -= 1;
                return Ok(Admitted { ticket, joined: false });
            }
            let woken = match wait {
                Wait::Until(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        state.sleepers -= 1;
                        return Err(self.give_up(state, ticket, started.unwrap_or(now), now));
                    }
                    match self.wake.wait_timeout(state, deadline - now) {
                        Ok((guard, _)) => Ok(guard),
                        Err(poisoned) => Err(poisoned.into_inner().0),
                    }
                }
                Wait::Never | Wait::Forever => {
                    self.wake.wait(state).map_err(std::sync::PoisonError::into_inner)
                }
            };
            state = match woken {
                Ok(guard) => guard,
                Err(mut state) => {
                    state.sleepers -= 1;
                    // Withdraw, or if the grant already happened, release: either way the
                    // request leaves no trace, and whoever it blocked is considered again.
                    if !state.withdraw(ticket) {
                        state.release(ticket);
                    }
                    self.grant_and_notify(&mut state);
                    return Err(AdmissionError::Poisoned);
                }
            };
        }
    }

    /// The deadline passed while `ticket` was still queued: withdraw it and let younger requests
    /// it was blocking through.
    fn give_up(
        &self,
        mut state: MutexGuard<'_, State>,
        ticket: Ticket,
        started: Instant,
        now: Instant,
    ) -> AdmissionError {
        let holder = state.conflicting_holder_of(ticket);
        state.withdraw(ticket);
        self.grant_and_notify(&mut state);
        AdmissionError::TimedOut { waited: now.saturating_duration_since(started), holder }
    }

    /// Adds a permit to `owner`'s reservation, if it has one; never waits.
    pub(crate) fn join(&self, owner: OwnerId) -> Result<Option<Ticket>, AdmissionError> {
        Ok(self.lock()?.join(owner))
    }

    /// Drops one permit of reservation `ticket`; infallible. Returns whether the ticket was
    /// active (false would mean a double release, which the permit's ownership rules out).
    pub(crate) fn release(&self, ticket: Ticket) -> bool {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.count_lock();
        let released = state.release(ticket);
        self.grant_and_notify(&mut state);
        released
    }

    /// Runs the grant pass and wakes the sleepers if anything was granted and anyone sleeps.
    fn grant_and_notify(&self, state: &mut State) {
        if state.waiters() > 0 && state.grant() > 0 && state.sleepers > 0 {
            #[cfg(test)]
            self.notifies.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.wake.notify_all();
        }
    }

    /// The ticket of `owner`'s active reservation (test hook, feature `test-hooks`).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn reservation_ticket(
        &self,
        owner: OwnerId,
    ) -> Result<Option<Ticket>, AdmissionError> {
        Ok(self.lock()?.ticket_of(owner))
    }

    /// `(holders, waiters, sleepers)`.
    pub(crate) fn snapshot(&self) -> Result<(usize, usize, usize), AdmissionError> {
        let state = self.lock()?;
        Ok((state.holders(), state.waiters(), state.sleepers))
    }

    /// Broadcasts made so far.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn notifies(&self) -> usize {
        self.notifies.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Poisons the state mutex by panicking while holding it (test seam for A5).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn poison_for_test(&self) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _guard = self.state.lock();
            panic!("poisoning the arbiter state on purpose");
        }));
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
