//! The admission state machine, without any locking or blocking: the part the proptest model and
//! the loom model check.
//!
//! Invariants (checked by [`State::check_invariants`] in tests):
//! - I1. masks of distinct active reservations are pairwise disjoint;
//! - I2. every queued request conflicts with an active reservation or an older queued request
//!   (after every operation the grant pass has run: nothing admissible is left waiting);
//! - I3. tickets are unique across `active` and `queue`, and the queue is in ticket order (FIFO);
//! - I4. an active reservation has at least one permit.
//!
//! FIFO rule: a request is admitted at once only when it conflicts with no active reservation
//! *and* with no queued request; otherwise it queues at the back. The grant pass walks the queue
//! front to back and admits each request that conflicts with no active reservation and with no
//! older request still queued, so a younger conflicting request never overtakes an older one,
//! while a request disjoint from every older waiter may pass.
//!
//! Allocation: `active` and `queue` are pre-sized; they only grow when more reservations coexist
//! than ever before, and never shrink, so steady-state admission allocates nothing.

use crate::error::Holder;
use crate::owner::OwnerId;
use holdfast_cpuset::CpuSet;
use std::collections::VecDeque;
use std::thread::ThreadId;

/// Identifies one reservation (shared by all permits of a joined owner) or one queued request.
pub(crate) type Ticket = u64;

/// Initial capacity of the active table and of the queue.
const INITIAL_CAPACITY: usize = 16;

/// A request as the state machine sees it. Borrowed: the mask is copied once, straight into the
/// table that keeps it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request<'a> {
    pub(crate) mask: &'a CpuSet,
    pub(crate) owner: OwnerId,
    /// The requesting thread, for holder reports (`None` under loom and in the model tests).
    pub(crate) thread: Option<ThreadId>,
}

/// One admitted reservation; its mask is kept at the same index of `State::active_masks`.
#[derive(Debug)]
struct Active {
    ticket: Ticket,
    owner: OwnerId,
    thread: Option<ThreadId>,
    /// Permits alive for this reservation: the root's plus one per joined child.
    permits: u32,
}

/// One queued request.
#[derive(Debug)]
struct Queued {
    ticket: Ticket,
    owner: OwnerId,
    thread: Option<ThreadId>,
    mask: CpuSet,
}

/// Outcome of [`State::submit`].
#[derive(Debug)]
pub(crate) enum Submit {
    /// Admitted now; the ticket names the reservation.
    Admitted(Ticket),
    /// The owner was already active; its reservation gained a permit.
    Joined(Ticket),
    /// Queued at the back (only when the caller allowed queueing).
    Queued(Ticket),
    /// Not admissible now and the caller did not allow queueing.
    Blocked { holder: Option<Holder>, waiters_ahead: usize },
    /// The owner is active but the request reaches outside its reservation.
    OutsideReservation,
}

/// The arbiter's admission state.
///
/// The active table is split in two parallel vectors (same index, same length): the small
/// per-reservation records and the 128-byte masks. Keeping the masks apart keeps every record
/// move small, which halves the cost of an uncontended admission.
#[derive(Debug)]
pub(crate) struct State {
    next_ticket: Ticket,
    active: Vec<Active>,
    active_masks: Vec<CpuSet>,
    queue: VecDeque<Queued>,
    /// Threads blocked (or about to block) on the condition variable. A release with no sleeper
    /// skips the notify.
    pub(crate) sleepers: usize,
}

impl State {
    pub(crate) fn new() -> Self {
        Self {
            next_ticket: 1,
            active: Vec::with_capacity(INITIAL_CAPACITY),
            active_masks: Vec::with_capacity(INITIAL_CAPACITY),
            queue: VecDeque::with_capacity(INITIAL_CAPACITY),
            sleepers: 0,
        }
    }

    /// Submits a new request; queues it only when `may_queue` says so (called at most once, and
    /// only when the request cannot be admitted at once: the probe may be costly).
    pub(crate) fn submit(
        &mut self,
        request: Request<'_>,
        may_queue: impl FnOnce() -> bool,
    ) -> Submit {
        if let Some(index) = self.oldest_reservation_of(request.owner) {
            if !request.mask.is_subset(&self.active_masks[index]) {
                return Submit::OutsideReservation;
            }
            let active = &mut self.active[index];
            active.permits += 1;
            return Submit::Joined(active.ticket);
        }
        let holder = self.conflicting_holder(request.mask);
        let waiters_ahead = if self.queue.is_empty() {
            0
        } else {
            self.queue.iter().filter(|q| q.mask.overlaps(request.mask)).count()
        };
        if holder.is_none() && waiters_ahead == 0 {
            let ticket = self.take_ticket();
            self.active.push(Active {
                ticket,
                owner: request.owner,
                thread: request.thread,
                permits: 1,
            });
            self.active_masks.push(*request.mask);
            return Submit::Admitted(ticket);
        }
        if !may_queue() {
            return Submit::Blocked { holder, waiters_ahead };
        }
        let ticket = self.take_ticket();
        self.queue.push_back(Queued {
            ticket,
            owner: request.owner,
            thread: request.thread,
            mask: *request.mask,
        });
        Submit::Queued(ticket)
    }

    /// Adds a permit to `owner`'s active reservation, if it has one.
    pub(crate) fn join(&mut self, owner: OwnerId) -> Option<Ticket> {
        let index = self.oldest_reservation_of(owner)?;
        let active = &mut self.active[index];
        active.permits += 1;
        Some(active.ticket)
    }

    /// Index of the owner's reservation. An owner normally has at most one; it can have several
    /// only if it submitted from two threads before either was admitted, and then the oldest is
    /// chosen.
    fn oldest_reservation_of(&self, owner: OwnerId) -> Option<usize> {
        (0..self.active.len())
            .filter(|&i| self.active[i].owner == owner)
            .min_by_key(|&i| self.active[i].ticket)
    }

    /// The ticket of `owner`'s reservation, if it holds one (test hook, feature `test-hooks`).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn ticket_of(&self, owner: OwnerId) -> Option<Ticket> {
        self.oldest_reservation_of(owner).map(|index| self.active[index].ticket)
    }

    /// Drops one permit of reservation `ticket`; returns whether the ticket was active. The
    /// reservation ends with its last permit; the caller then runs [`State::grant`].
    pub(crate) fn release(&mut self, ticket: Ticket) -> bool {
        let Some(index) = self.active.iter().position(|a| a.ticket == ticket) else {
            return false;
        };
        let active = &mut self.active[index];
        active.permits -= 1;
        if active.permits == 0 {
            // Order of the active table carries no meaning; both vectors move alike.
            self.active.swap_remove(index);
            self.active_masks.swap_remove(index);
        }
        true
    }

    /// Withdraws queued request `ticket` (deadline passed, or poison); returns whether it was
    /// still queued. The caller then runs [`State::grant`]: the withdrawn request may have been
    /// the only obstacle of a younger one.
    pub(crate) fn withdraw(&mut self, ticket: Ticket) -> bool {
        match self.queue.iter().position(|q| q.ticket == ticket) {
            Some(index) => {
                self.queue.remove(index);
                true
            }
            None => false,
        }
    }

    /// Whether `ticket` is still queued (a queued ticket leaves the queue only by [`State::grant`]
    /// or by its own waiter's [`State::withdraw`]).
    pub(crate) fn is_queued(&self, ticket: Ticket) -> bool {
        self.queue.iter().any(|q| q.ticket == ticket)
    }

    /// The grant pass: admits, in FIFO order, every queued request that conflicts with no active
    /// reservation and no older queued request. Returns how many were admitted.
    pub(crate) fn grant(&mut self) -> usize {
        let mut granted = 0;
        let mut index = 0;
        while index < self.queue.len() {
            let mask = &self.queue[index].mask;
            let blocked = self.active_masks.iter().any(|a| a.overlaps(mask))
                || self.queue.iter().take(index).any(|q| q.mask.overlaps(mask));
            if blocked {
                index += 1;
            } else if let Some(queued) = self.queue.remove(index) {
                self.active.push(Active {
                    ticket: queued.ticket,
                    owner: queued.owner,
                    thread: queued.thread,
                    permits: 1,
                });
                self.active_masks.push(queued.mask);
                granted += 1;
            }
        }
        granted
    }

    /// The first active reservation conflicting with `mask`.
    pub(crate) fn conflicting_holder(&self, mask: &CpuSet) -> Option<Holder> {
        let index = self.active_masks.iter().position(|a| a.overlaps(mask))?;
        let active = &self.active[index];
        Some(Holder {
            owner: active.owner,
            thread: active.thread.and_then(crate::registry::lookup),
        })
    }

    /// The first active reservation conflicting with queued request `ticket`.
    pub(crate) fn conflicting_holder_of(&self, ticket: Ticket) -> Option<Holder> {
        let queued = self.queue.iter().find(|q| q.ticket == ticket)?;
        self.conflicting_holder(&queued.mask)
    }

    /// Number of active reservations.
    pub(crate) fn holders(&self) -> usize {
        self.active.len()
    }

    /// Number of queued requests.
    pub(crate) fn waiters(&self) -> usize {
        self.queue.len()
    }

    fn take_ticket(&mut self) -> Ticket {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        ticket
    }

    /// Active tickets, sorted (tests compare them with the model).
    #[cfg(test)]
    pub(crate) fn active_tickets(&self) -> Vec<Ticket> {
        let mut tickets: Vec<_> = self.active.iter().map(|a| a.ticket).collect();
        tickets.sort_unstable();
        tickets
    }

    /// Queued tickets, front to back.
    #[cfg(test)]
    pub(crate) fn queued_tickets(&self) -> Vec<Ticket> {
        self.queue.iter().map(|q| q.ticket).collect()
    }

    /// Checks invariants I1–I4; returns a description of the first violation.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        if self.active.len() != self.active_masks.len() {
            return Err("active records and masks out of step".to_owned());
        }
        for (i, a) in self.active.iter().enumerate() {
            if a.permits == 0 {
                return Err(format!("I4: reservation {} has no permit", a.ticket));
            }
            for (j, b) in self.active.iter().enumerate().skip(i + 1) {
                if self.active_masks[i].overlaps(&self.active_masks[j]) {
                    return Err(format!("I1: {} and {} overlap", a.ticket, b.ticket));
                }
                if a.ticket == b.ticket {
                    return Err(format!("I3: duplicate active ticket {}", a.ticket));
                }
            }
        }
        for (i, q) in self.queue.iter().enumerate() {
            let blocked = self.active_masks.iter().any(|a| a.overlaps(&q.mask))
                || self.queue.iter().take(i).any(|o| o.mask.overlaps(&q.mask));
            if !blocked {
                return Err(format!("I2: queued {} is admissible", q.ticket));
            }
            if i > 0 && self.queue[i - 1].ticket >= q.ticket {
                return Err(format!("I3: queue out of ticket order at {}", q.ticket));
            }
            if self.active.iter().any(|a| a.ticket == q.ticket) {
                return Err(format!("I3: ticket {} both active and queued", q.ticket));
            }
        }
        Ok(())
    }
}
