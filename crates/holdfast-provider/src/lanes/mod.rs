//! [`CpuDomain::lane_crew`] and [`LaneCrew`]: the lanes of a phase lease, the provider's second
//! (and last) pool site.
//!
//! [`with_native_parallelism`](crate::CpuOperationEntry::with_native_parallelism) installs the
//! pool around one lower-library call that splits its own work. A phase lease
//! (`holdfast-session`'s `CpuHeldSession::phase`) lends the whole pool to an outer scheduler
//! instead: it runs one *lane* per thread of the budget, many times per phase, and each lane runs
//! many small operations serially. That is a different shape — the work is split by the caller,
//! not by a kernel — so it has its own, separately reviewed site here, listed with the other in
//! `docs/design/provider-routes.md`.
//!
//! A lane crew keeps the pool's workers hot for the length of a phase: opening it parks `n - 1`
//! workers (budget `n`) in a crew loop, inside one rayon `in_place_scope` + `spawn_broadcast`
//! for the whole phase, so that a run costs two atomic stores and a join instead of a broadcast
//! that wakes sleeping workers every time. The engine ([`crew`]) publishes each run's lane closure
//! to the parked workers; [`sleeper`] is how its threads wait (spin, yield, park) and wake.
//!
//! # Invariants
//!
//! - **Lanes.** Exactly [`CpuDomain::threads`] lanes run per [`LaneCrew::run`], numbered
//!   `0..threads`, each exactly once; the results come back in lane order.
//! - **Placement.** Lane 0 runs inline on the crew's caller. With a pool (budget `n > 1`), lanes
//!   `1..n` run on `n - 1` pool workers parked in the crew for its whole life: workers `1..n`
//!   (lane `i` on worker `i`), or, when the caller is itself worker `k` of the pool, every worker
//!   but `k`. The remaining worker stays free for rayon work (an operation install from lane 0 runs
//!   there). So exactly `n` threads run lanes, never more than the budget, and no lane waits for
//!   a worker held by another lane. Without a pool (budget one) lane 0 runs inline and the crew
//!   has no threads.
//! - **Join.** A run returns only after every lane has returned. A lane that panics does not stop
//!   its peers; the panic (the lowest panicking lane's) is resumed on the caller after every lane
//!   has finished (callers that must report every lane catch panics inside the lane).
//! - **Idle workers.** Between runs the parked workers spin, then yield, then park (bounded:
//!   [`sleeper`]); the caller waits for its peers the same way. No wake-up is lost.
//! - **Release.** When the crew's callback returns or unwinds, the crew is closed (a drop guard):
//!   every worker leaves its loop, the scope ends, and the callback's panic (if any) is resumed.
//! - **One crew per domain.** While a crew is open, its workers run nothing else of the pool. A
//!   second `lane_crew` on the same domain (from a lane of the first, or from another thread)
//!   does not wait for them: it runs its lanes one after another on its own caller (still each
//!   lane once, in lane order, panics resumed after the last). A pool `broadcast` issued from
//!   inside an open crew waits for the crew's workers, so it must not be issued there; the
//!   session's lanes never do.
//!
//! # Memory ordering
//!
//! See [`crew`] (the publish/join chain that keeps each worker's use of a run's closure inside
//! the run) and [`sleeper`] (the wake-up protocol). The domain's crew flag is taken with `Acquire`
//! and released with `Release`.

mod crew;
#[cfg(all(test, loom))]
mod loom_tests;
mod sleeper;
#[cfg(test)]
mod tests;

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::CpuDomain;
use crew::Crew;

/// How a [`LaneCrew`] runs its lanes.
#[derive(Debug)]
enum Mode<'c> {
    /// Lane 0 on the caller, lanes `1..` on the crew's parked workers.
    Crew(&'c Crew),
    /// Every lane on the caller, one after another: a one-thread budget (one lane), or a crew
    /// opened while another is open on the same domain.
    Serial {
        /// Lanes per run.
        lanes: usize,
    },
}

/// A domain's lanes for the length of a phase: built by [`CpuDomain::lane_crew`] and lent to its
/// callback. `!Send + !Sync`: it runs only on the thread that opened it, and a lane (which must
/// be `Sync`) cannot capture it.
///
/// # Examples
///
/// ```
/// use holdfast_affinity::Topology;
/// use holdfast_provider::CpuDomain;
///
/// let allowed = *Topology::get()?.allowed();
/// let domain = CpuDomain::new(allowed, allowed.len())?;
/// let caller = std::thread::current().id();
/// let total: usize = domain.lane_crew(|crew| {
///     (0..100).map(|_| crew.run(|lane| lane + 1).into_iter().sum::<usize>()).sum()
/// });
/// let per_run: usize = (1..=domain.threads()).sum();
/// assert_eq!(total, 100 * per_run);
/// // Lane 0 always runs on the caller.
/// let lane0 = domain.lane_crew(|crew| crew.run(|_| std::thread::current().id())[0]);
/// assert_eq!(lane0, caller);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LaneCrew<'c> {
    mode: Mode<'c>,
    _not_send_sync: PhantomData<*const ()>,
}

impl LaneCrew<'_> {
    /// Runs `lane(i)` once for every lane `i` in `0..self.lanes()`: lane 0 inline on the caller,
    /// the others concurrently on the crew's parked workers; returns the results in lane order
    /// once every lane has returned.
    ///
    /// # Panics
    ///
    /// A panic in a lane is resumed here after every lane has returned (the lowest panicking
    /// lane's payload; the others are dropped).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::Topology;
    /// use holdfast_provider::CpuDomain;
    ///
    /// let domain = CpuDomain::new(*Topology::get()?.allowed(), 1)?;
    /// let runs = domain.lane_crew(|crew| crew.run(|lane| lane * 10));
    /// assert_eq!(runs, vec![0], "a one-thread budget: one lane, inline");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<R, F>(&self, lane: F) -> Vec<R>
    where
        R: Send,
        F: Fn(usize) -> R + Sync,
    {
        match self.mode {
            Mode::Crew(crew) => crew.run(lane),
            Mode::Serial { lanes: 1 } => vec![lane(0)],
            Mode::Serial { lanes } => run_serially(lanes, &lane),
        }
    }

    /// Lanes per run: the domain's thread budget.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::Topology;
    /// use holdfast_provider::CpuDomain;
    ///
    /// let allowed = *Topology::get()?.allowed();
    /// let domain = CpuDomain::new(allowed, allowed.len())?;
    /// let lanes = domain.lane_crew(|crew| crew.lanes());
    /// assert_eq!(lanes, domain.threads());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lanes(&self) -> usize {
        match self.mode {
            Mode::Crew(crew) => crew.lanes(),
            Mode::Serial { lanes } => lanes,
        }
    }

    /// True when the lanes run concurrently on parked workers (a budget above one, and no other
    /// crew open on the domain).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::Topology;
    /// use holdfast_provider::CpuDomain;
    ///
    /// let allowed = *Topology::get()?.allowed();
    /// let domain = CpuDomain::new(allowed, allowed.len())?;
    /// domain.lane_crew(|crew| {
    ///     assert_eq!(crew.is_concurrent(), domain.threads() > 1);
    ///     // A crew opened inside an open one runs its lanes serially on its caller.
    ///     crew.run(|_| domain.lane_crew(|inner| assert!(!inner.is_concurrent())));
    /// });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_concurrent(&self) -> bool {
        matches!(self.mode, Mode::Crew(_))
    }
}

impl CpuDomain {
    /// Opens the domain's lane crew, runs `f` with it, closes it and returns `f`'s value: with a
    /// pool, `threads - 1` workers stay parked in the crew until `f` returns, so each
    /// [`LaneCrew::run`] inside `f` starts its lanes without waking a sleeping worker.
    ///
    /// Lane 0 of every run runs inline on the caller; for a one-thread budget it is the only lane.
    /// While the crew is open the parked workers run nothing else of the pool: a pool `broadcast`
    /// issued from inside `f` would wait for them (module docs). A crew opened while another is
    /// open on this domain runs its lanes serially on its caller ([`LaneCrew::is_concurrent`]).
    ///
    /// # Panics
    ///
    /// A panic in `f` is resumed after the crew's workers have been released.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use holdfast_affinity::Topology;
    /// use holdfast_provider::CpuDomain;
    ///
    /// let allowed = *Topology::get()?.allowed();
    /// let domain = CpuDomain::new(allowed, allowed.len())?;
    /// let next = AtomicUsize::new(0);
    /// let per_lane = domain.lane_crew(|crew| {
    ///     // Lanes pull work items from a shared counter until it runs out.
    ///     crew.run(|_lane| {
    ///         let mut mine = 0;
    ///         while next.fetch_add(1, Ordering::Relaxed) < 1000 {
    ///             mine += 1;
    ///         }
    ///         mine
    ///     })
    /// });
    /// assert_eq!(per_lane.len(), domain.threads());
    /// assert_eq!(per_lane.iter().sum::<usize>(), 1000);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lane_crew<T>(&self, f: impl FnOnce(&LaneCrew<'_>) -> T) -> T {
        let serial = |lanes| LaneCrew { mode: Mode::Serial { lanes }, _not_send_sync: PhantomData };
        let Some(pool) = self.pool() else {
            return f(&serial(1));
        };
        let Some(_open) = CrewFlag::take(self.crew_flag()) else {
            return f(&serial(self.threads()));
        };
        // The worker left free: the caller's own, if it is one of this pool's workers.
        let free = pool.current_thread_index().unwrap_or(0);
        let crew = Crew::new(pool.current_num_threads());
        // The lane site (docs/design/provider-routes.md): one scope for the whole crew, one
        // broadcast job per worker; the crew's workers stay in `serve` until the crew closes.
        pool.in_place_scope(|scope| {
            scope.spawn_broadcast(|_, ctx| {
                if let Some(lane) = lane_of_worker(ctx.index(), free) {
                    crew.serve(lane);
                }
            });
            let _close = CloseOnDrop(&crew);
            f(&LaneCrew { mode: Mode::Crew(&crew), _not_send_sync: PhantomData })
        })
    }
}

/// The lane worker `worker` serves when worker `free` is left out of the crew: workers below
/// `free` serve lanes `1..=free`, workers above it serve their own index.
fn lane_of_worker(worker: usize, free: usize) -> Option<usize> {
    match worker.cmp(&free) {
        std::cmp::Ordering::Less => Some(worker + 1),
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(worker),
    }
}

/// Every lane on the caller, in lane order; the lowest lane's panic is resumed after the last.
fn run_serially<R>(lanes: usize, lane: &impl Fn(usize) -> R) -> Vec<R> {
    let mut results = Vec::with_capacity(lanes);
    let mut panic = None;
    for i in 0..lanes {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lane(i))) {
            Ok(value) => results.push(value),
            Err(payload) => {
                panic.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
    results
}

/// Closes the crew when the crew's callback returns or unwinds.
struct CloseOnDrop<'c>(&'c Crew);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The domain's "a crew is open" flag, held for the crew's life.
struct CrewFlag<'d>(&'d AtomicBool);

impl<'d> CrewFlag<'d> {
    fn take(flag: &'d AtomicBool) -> Option<Self> {
        // Not `then_some`: a guard built for a failed take would clear the flag when dropped.
        let taken = flag.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed);
        taken.is_ok().then(|| CrewFlag(flag))
    }
}

impl Drop for CrewFlag<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}
