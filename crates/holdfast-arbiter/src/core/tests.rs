//! Property test of the admission state machine against a simple sequential model.
//!
//! Random schedules of acquire (queueing), try (non-queueing), deadline expiry (withdrawal of a
//! queued request), join and release are applied to both [`State`] and [`Model`]; after every step
//! the outcome, the active set and the queue must agree, and the state's invariants must hold. At
//! the end every permit is released exactly once and the arbiter must drain to empty.
//!
//! The model is deliberately naive: `BTreeSet` masks, and the grant rule as a fixpoint ("admit the
//! first queued request disjoint from every active reservation and every older queued request,
//! repeat"), not the single pass the state uses.

use super::state::{Request, State, Submit, Ticket};
use crate::owner::{OwnerId, fresh_execution_owner};
use holdfast_cpuset::CpuSet;
use proptest::prelude::*;
use std::collections::BTreeSet;

const CPUS: usize = 6;
const OWNERS: usize = 6;

#[derive(Clone, Debug)]
enum Op {
    /// Submit a request; `queue` false is a try.
    Submit { owner: usize, cpus: BTreeSet<usize>, queue: bool },
    /// Drop the `pick`-th live permit (modulo their number).
    Release { pick: usize },
    /// The `pick`-th queued request reaches its deadline.
    Expire { pick: usize },
    /// Join owner `owner`.
    Join { owner: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..OWNERS, prop::collection::btree_set(0..CPUS, 0..4), any::<bool>())
            .prop_map(|(owner, cpus, queue)| Op::Submit { owner, cpus, queue }),
        4 => any::<usize>().prop_map(|pick| Op::Release { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Expire { pick }),
        1 => (0..OWNERS).prop_map(|owner| Op::Join { owner }),
    ]
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Admitted(Ticket),
    Joined(Ticket),
    Queued(Ticket),
    Blocked,
    Outside,
}

#[derive(Debug)]
struct ModelActive {
    ticket: Ticket,
    owner: usize,
    cpus: BTreeSet<usize>,
    permits: u32,
}

#[derive(Debug, Default)]
struct Model {
    next: Ticket,
    active: Vec<ModelActive>,
    queue: Vec<(Ticket, usize, BTreeSet<usize>)>,
}

impl Model {
    fn submit(&mut self, owner: usize, cpus: &BTreeSet<usize>, queue: bool) -> Outcome {
        if let Some(a) = self.oldest_of(owner) {
            if !cpus.is_subset(&a.cpus) {
                return Outcome::Outside;
            }
            a.permits += 1;
            return Outcome::Joined(a.ticket);
        }
        let busy = self.active.iter().any(|a| !a.cpus.is_disjoint(cpus))
            || self.queue.iter().any(|(_, _, q)| !q.is_disjoint(cpus));
        if busy && !queue {
            return Outcome::Blocked;
        }
        self.next += 1;
        if busy {
            self.queue.push((self.next, owner, cpus.clone()));
            Outcome::Queued(self.next)
        } else {
            self.active.push(ModelActive {
                ticket: self.next,
                owner,
                cpus: cpus.clone(),
                permits: 1,
            });
            Outcome::Admitted(self.next)
        }
    }

    fn oldest_of(&mut self, owner: usize) -> Option<&mut ModelActive> {
        self.active.iter_mut().filter(|a| a.owner == owner).min_by_key(|a| a.ticket)
    }

    fn grant(&mut self) {
        loop {
            let admissible = (0..self.queue.len()).find(|&i| {
                let cpus = &self.queue[i].2;
                self.active.iter().all(|a| a.cpus.is_disjoint(cpus))
                    && self.queue[..i].iter().all(|(_, _, q)| q.is_disjoint(cpus))
            });
            let Some(i) = admissible else { return };
            let (ticket, owner, cpus) = self.queue.remove(i);
            self.active.push(ModelActive { ticket, owner, cpus, permits: 1 });
        }
    }

    fn release(&mut self, ticket: Ticket) {
        let i = self.active.iter().position(|a| a.ticket == ticket).unwrap();
        self.active[i].permits -= 1;
        if self.active[i].permits == 0 {
            self.active.remove(i);
        }
        self.grant();
    }

    fn expire(&mut self, ticket: Ticket) {
        self.queue.retain(|(t, _, _)| *t != ticket);
        self.grant();
    }

    fn join(&mut self, owner: usize) -> Option<Ticket> {
        let a = self.oldest_of(owner)?;
        a.permits += 1;
        Some(a.ticket)
    }

    fn active_tickets(&self) -> Vec<Ticket> {
        let mut tickets: Vec<_> = self.active.iter().map(|a| a.ticket).collect();
        tickets.sort_unstable();
        tickets
    }

    /// One entry per live permit.
    fn permits(&self) -> Vec<Ticket> {
        let mut permits = Vec::new();
        for a in &self.active {
            permits.extend(std::iter::repeat_n(a.ticket, a.permits as usize));
        }
        permits.sort_unstable();
        permits
    }
}

fn mask_of(cpus: &BTreeSet<usize>) -> CpuSet {
    CpuSet::from_cpus(cpus.iter().copied()).unwrap()
}

fn run_schedule(ops: &[Op]) -> Result<(), TestCaseError> {
    let owners: Vec<OwnerId> = (0..OWNERS).map(|_| fresh_execution_owner().unwrap()).collect();
    let mut state = State::new();
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Submit { owner, cpus, queue } => {
                let mask = mask_of(cpus);
                let request = Request { mask: &mask, owner: owners[*owner], thread: None };
                let got = match state.submit(request, || *queue) {
                    Submit::Admitted(t) => Outcome::Admitted(t),
                    Submit::Joined(t) => Outcome::Joined(t),
                    Submit::Queued(t) => Outcome::Queued(t),
                    Submit::Blocked { .. } => Outcome::Blocked,
                    Submit::OutsideReservation => Outcome::Outside,
                };
                prop_assert_eq!(got, model.submit(*owner, cpus, *queue), "{:?}", op);
            }
            Op::Release { pick } => {
                let permits = model.permits();
                if !permits.is_empty() {
                    let ticket = permits[pick % permits.len()];
                    prop_assert!(state.release(ticket), "live permit {} not active", ticket);
                    state.grant();
                    model.release(ticket);
                }
            }
            Op::Expire { pick } => {
                let queued = state.queued_tickets();
                if !queued.is_empty() {
                    let ticket = queued[pick % queued.len()];
                    prop_assert!(state.withdraw(ticket));
                    prop_assert!(!state.withdraw(ticket), "withdrawn twice");
                    state.grant();
                    model.expire(ticket);
                }
            }
            Op::Join { owner } => {
                prop_assert_eq!(state.join(owners[*owner]), model.join(*owner));
            }
        }
        prop_assert_eq!(state.active_tickets(), model.active_tickets(), "after {:?}", op);
        let model_queue: Vec<Ticket> = model.queue.iter().map(|(t, _, _)| *t).collect();
        prop_assert_eq!(state.queued_tickets(), model_queue, "after {:?}", op);
        if let Err(violation) = state.check_invariants() {
            return Err(TestCaseError::fail(format!("after {op:?}: {violation}")));
        }
    }
    // Drain: release every live permit exactly once; granted waiters become permits in turn.
    let mut rounds = 0;
    while !model.active.is_empty() {
        for ticket in model.permits() {
            prop_assert!(state.release(ticket));
            state.grant();
            model.release(ticket);
        }
        rounds += 1;
        prop_assert!(rounds <= ops.len() + 1, "drain does not progress");
    }
    prop_assert_eq!((state.holders(), state.waiters()), (0, 0));
    prop_assert!(!state.release(1), "a released ticket is released again");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn state_matches_sequential_model(ops in prop::collection::vec(op(), 1..60)) {
        run_schedule(&ops)?;
    }
}

#[test]
fn disjoint_request_passes_but_conflicting_one_queues_behind_older_waiter() {
    let owners: Vec<OwnerId> = (0..4).map(|_| fresh_execution_owner().unwrap()).collect();
    let masks: Vec<CpuSet> = [&[0][..], &[0, 1], &[1], &[2]]
        .iter()
        .map(|cpus| CpuSet::from_cpus(cpus.iter().copied()).unwrap())
        .collect();
    let req = |o: usize| Request { mask: &masks[o], owner: owners[o], thread: None };
    let mut state = State::new();
    let Submit::Admitted(h) = state.submit(req(0), || true) else { panic!() };
    let Submit::Queued(a) = state.submit(req(1), || true) else { panic!() };
    // Disjoint from the holder but conflicting with the older waiter: must queue.
    let Submit::Queued(b) = state.submit(req(2), || true) else { panic!() };
    // Disjoint from everything: passes.
    assert!(matches!(state.submit(req(3), || true), Submit::Admitted(_)));
    assert!(state.release(h));
    assert_eq!(state.grant(), 1);
    assert!(!state.is_queued(a) && state.is_queued(b));
    assert!(state.release(a));
    assert_eq!(state.grant(), 1);
    assert!(!state.is_queued(b));
}
