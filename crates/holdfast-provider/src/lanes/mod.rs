//! [`CpuDomain::fan_out_lanes`]: the lane fan-out of a phase lease, the provider's second (and
//! last) pool-install site.
//!
//! [`with_native_parallelism`](crate::CpuOperationEntry::with_native_parallelism) installs the
//! pool around one lower-library call that splits its own work. A phase lease
//! (`holdfast-session`'s `CpuHeldSession::phase`) lends the whole pool to an outer scheduler
//! instead: it runs one *lane* per thread of the budget, and each lane runs many small operations
//! serially. That is a different shape — the work is split by the caller, not by a kernel — so it
//! has its own, separately reviewed site here, listed with the other in
//! `docs/design/provider-routes.md`.
//!
//! # Invariants
//!
//! - Exactly [`CpuDomain::threads`] lanes run per call, numbered `0..threads`, each exactly once.
//! - With a pool (budget above one), lane `i` runs on the pool's worker `i` (a rayon broadcast):
//!   every worker runs one lane, so at most `threads` lanes run at once and no lane waits for a
//!   worker held by another lane. Without a pool (budget one), lane 0 runs inline on the caller.
//! - The call returns only after every lane has returned: the results are in lane order. A lane
//!   that panics does not stop its peers; the panic is resumed on the caller after all lanes
//!   have finished (callers that must report every lane catch panics inside the lane).
//! - Called from a worker of this same pool, the caller's own worker would run one of the lanes
//!   while it waits for the others; the session layer refuses that case before it gets here.

#[cfg(test)]
mod tests;

use crate::CpuDomain;

impl CpuDomain {
    /// Runs `lane(i)` once for every `i` in `0..self.threads()`, concurrently on the pool's
    /// workers (lane `i` on worker `i`), or inline on the caller for a one-thread budget, and
    /// returns the lanes' results in lane order once every lane has returned.
    ///
    /// # Panics
    ///
    /// A panic in a lane is resumed here after every lane has returned (rayon's broadcast
    /// semantics).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_affinity::Topology;
    /// use holdfast_provider::CpuDomain;
    ///
    /// let allowed = *Topology::get()?.allowed();
    /// let domain = CpuDomain::new(allowed, allowed.len())?;
    /// let lanes = domain.fan_out_lanes(|lane| lane * 10);
    /// assert_eq!(lanes, (0..domain.threads()).map(|i| i * 10).collect::<Vec<_>>());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fan_out_lanes<R, F>(&self, lane: F) -> Vec<R>
    where
        R: Send,
        F: Fn(usize) -> R + Sync,
    {
        match self.pool() {
            // The lane install site (docs/design/provider-routes.md): one lane per worker.
            Some(pool) => pool.broadcast(|ctx| lane(ctx.index())),
            None => vec![lane(0)],
        }
    }
}
