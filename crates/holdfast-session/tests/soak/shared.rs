//! State the soak's workers share: the engines under test, the admission-order log, the
//! single-holder check, per-worker progress for the watchdog, and the first failure.
//!
//! # The FIFO check
//!
//! Every engine of the soak covers the same CPUs and uses the process-wide arbiter, so every
//! root request conflicts with every other and at most one reservation exists at a time. A
//! worker that holds a reservation asks the arbiter for its ticket
//! (`ResourceArbiter::reservation_ticket`, feature `test-hooks`) and swaps it into
//! `last_ticket`. Tickets are taken in arrival order, so FIFO admission means the tickets seen
//! by successive holders never decrease; a waiter that younger requests overtake forever is
//! caught by the watchdog instead (its progress stops).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use holdfast_arbiter::{OwnerId, ResourceArbiter};
use holdfast_session::CpuBackend;

/// One engine under test.
#[derive(Debug)]
pub struct Engine {
    pub name: &'static str,
    pub backend: CpuBackend,
    /// The buffer pool's retention limit, in bytes.
    pub retention_limit: usize,
    /// Root entries that checked this engine's resources out (held sessions, scoped entries,
    /// shared-scope entries): each must be matched by exactly one return.
    pub checkouts: AtomicU64,
}

/// What a worker is doing, for the watchdog's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Idle = 0,
    Opening = 1,
    InSession = 2,
    Scoped = 3,
    Scope = 4,
    Management = 5,
    Closing = 6,
    Done = 7,
}

impl Phase {
    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::Opening,
            2 => Phase::InSession,
            3 => Phase::Scoped,
            4 => Phase::Scope,
            5 => Phase::Management,
            6 => Phase::Closing,
            7 => Phase::Done,
            _ => Phase::Idle,
        }
    }
}

/// Everything the workers share.
#[derive(Debug)]
pub struct Shared {
    pub engines: Vec<Engine>,
    pub end: Instant,
    pub stop: AtomicBool,
    holding: AtomicUsize,
    last_ticket: AtomicU64,
    /// Distinct reservations whose ticket order was checked.
    pub fifo_checked: AtomicU64,
    progress: Vec<AtomicU64>,
    phases: Vec<AtomicU8>,
    failure: Mutex<Option<String>>,
}

/// A reservation being held: counted in `holding` until dropped.
#[derive(Debug)]
#[must_use]
pub struct Hold<'a> {
    shared: &'a Shared,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.shared.holding.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Shared {
    pub fn new(engines: Vec<Engine>, workers: usize, end: Instant) -> Self {
        Shared {
            engines,
            end,
            stop: AtomicBool::new(false),
            holding: AtomicUsize::new(0),
            last_ticket: AtomicU64::new(0),
            fifo_checked: AtomicU64::new(0),
            progress: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            phases: (0..workers).map(|_| AtomicU8::new(0)).collect(),
            failure: Mutex::new(None),
        }
    }

    /// Called by whoever holds the reservation of `owner`, once per reservation: checks that no
    /// other reservation is held and that admission followed ticket (arrival) order.
    pub fn hold_begin(&self, owner: Option<OwnerId>) -> Result<Hold<'_>, String> {
        let others = self.holding.fetch_add(1, Ordering::SeqCst);
        let hold = Hold { shared: self };
        if others != 0 {
            return Err(format!("{others} other reservation(s) of overlapping CPUs held at once"));
        }
        let owner = owner.ok_or("a holder without an owner marker")?;
        let ticket = ResourceArbiter::global()
            .reservation_ticket(owner)
            .map_err(|e| format!("arbiter: {e}"))?
            .ok_or_else(|| format!("owner {owner:?} holds no reservation while running"))?;
        let last = self.last_ticket.swap(ticket, Ordering::SeqCst);
        if ticket < last {
            return Err(format!("FIFO violated: ticket {ticket} admitted after ticket {last}"));
        }
        if ticket != last {
            self.fifo_checked.fetch_add(1, Ordering::Relaxed);
        }
        Ok(hold)
    }

    pub fn tick(&self, worker: usize) {
        self.progress[worker].fetch_add(1, Ordering::Relaxed);
    }

    pub fn progress(&self, worker: usize) -> u64 {
        self.progress[worker].load(Ordering::Relaxed)
    }

    pub fn set_phase(&self, worker: usize, phase: Phase) {
        self.phases[worker].store(phase as u8, Ordering::Relaxed);
    }

    pub fn phase(&self, worker: usize) -> Phase {
        Phase::from_u8(self.phases[worker].load(Ordering::Relaxed))
    }

    /// Records the first failure and stops every worker.
    pub fn fail(&self, message: String) {
        let mut first = self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        first.get_or_insert(message);
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn failure(&self) -> Option<String> {
        self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.end
    }
}
