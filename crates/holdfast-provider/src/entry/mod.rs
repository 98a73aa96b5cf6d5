//! [`CpuOperationEntry`]: the per-operation context value, and the operation pool-install site.
//!
//! An entry is `Copy` and owns nothing: it borrows the domain and carries the [`ParallelMode`], so
//! making one per operation costs two words and has nothing to retire (P4).
//!
//! [`CpuOperationEntry::with_native_parallelism`] is the only place in the workspace that installs
//! an engine's pool around an operation (P2); the other pool site is the lane crew of a phase
//! lease ([`CpuDomain::lane_crew`](crate::CpuDomain::lane_crew)). It installs it around exactly
//! one lower-library call, and only when
//! [`CpuOperationEntry::par_for`] says the operation fans out: inner mode, a budget above one, a
//! pool, and a size at or above the family's threshold (B5). Everything else runs inline on the
//! caller's thread, so a small operation on a multi-thread engine never pays for an install. The
//! caller's continuation (the code after the call returns) never runs inside the pool.

#[cfg(test)]
mod tests;

use holdfast_kernels::{Family, Par};

use crate::CpuDomain;

/// Whether operations may fan out over the domain's pool.
///
/// # Examples
///
/// ```
/// use holdfast_provider::ParallelMode;
///
/// assert_eq!(ParallelMode::default(), ParallelMode::Inner);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ParallelMode {
    /// Every operation runs on the calling thread.
    Serial,
    /// Operations above their family's threshold fan out over the domain's pool.
    #[default]
    Inner,
}

/// How calls were routed: plain counters a session keeps for its telemetry (no atomics).
///
/// # Examples
///
/// ```
/// use holdfast_provider::RouteCounters;
///
/// let mut r = RouteCounters::default();
/// r.inline += 1;
/// assert_eq!(r.total(), 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteCounters {
    /// Calls that installed the domain's pool.
    pub installs: u64,
    /// Calls that ran inline on the caller's thread with [`Par::Seq`].
    pub inline: u64,
    /// Calls that fanned out from a thread already inside the domain's pool (no install needed).
    pub in_pool: u64,
}

impl RouteCounters {
    /// All routed calls.
    pub fn total(&self) -> u64 {
        self.installs + self.inline + self.in_pool
    }
}

/// The context of one operation: a borrowed domain and a mode. `Copy`; nothing to retire.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{Family, Par};
/// use holdfast_provider::{CpuDomain, CpuOperationEntry, ParallelMode};
///
/// let domain = CpuDomain::process_default()?;
/// let serial = CpuOperationEntry::new(&domain, ParallelMode::Serial);
/// assert_eq!(serial.par_for(Family::Gemm, u64::MAX), Par::Seq);
/// # Ok::<(), holdfast_provider::ProviderError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CpuOperationEntry<'d> {
    domain: &'d CpuDomain,
    mode: ParallelMode,
}

impl<'d> CpuOperationEntry<'d> {
    /// An entry on `domain` in `mode`.
    pub const fn new(domain: &'d CpuDomain, mode: ParallelMode) -> Self {
        CpuOperationEntry { domain, mode }
    }

    /// The domain this entry runs on.
    pub const fn domain(&self) -> &'d CpuDomain {
        self.domain
    }

    /// The entry's mode.
    pub const fn mode(&self) -> ParallelMode {
        self.mode
    }

    /// True when inner parallelism is possible at all: mode `Inner`, a budget above one and a
    /// pool (P1).
    pub fn uses_inner_parallelism(&self) -> bool {
        self.mode == ParallelMode::Inner
            && self.domain.threads() > 1
            && self.domain.pool().is_some()
    }

    /// The parallelism an operation of `family` and `size` gets: the whole budget when it fans
    /// out, [`Par::Seq`] otherwise.
    #[inline]
    pub fn par_for(&self, family: Family, size: u64) -> Par {
        match std::num::NonZeroUsize::new(self.domain.threads()) {
            Some(n) if self.uses_inner_parallelism() => {
                Par::Rayon(n, &crate::FAN_OUT).for_size(family, size)
            }
            _ => Par::Seq,
        }
    }

    /// Where one lower-library call of `family` and `size` runs, decided once and counted in
    /// `routes`: inline on the caller's thread ([`Par::Seq`]), fanned out from a thread already
    /// inside the domain's pool, or through an install of the pool. The caller then hands the
    /// kernel call to [`Route::run`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::{Family, Par};
    /// use holdfast_provider::{CpuDomain, CpuOperationEntry, ParallelMode, RouteCounters};
    ///
    /// let domain = CpuDomain::process_default()?;
    /// let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    /// let mut routes = RouteCounters::default();
    /// let small = entry.route(Family::Gemm, 2 * 4 * 4 * 4, &mut routes);
    /// assert_eq!(small.run(|par| par), Par::Seq);
    /// assert_eq!(routes.inline, 1);
    /// # Ok::<(), holdfast_provider::ProviderError>(())
    /// ```
    #[inline]
    pub fn route(self, family: Family, size: u64, routes: &mut RouteCounters) -> Route<'d> {
        let par = self.par_for(family, size);
        match (par, self.domain.pool()) {
            (Par::Rayon(..), Some(pool)) => fan_out(pool, par, routes),
            _ => {
                routes.inline += 1;
                Route::Inline
            }
        }
    }

    /// [`route`](Self::route) and [`Route::run`] in one call: runs `f` inside the domain's pool
    /// when the operation fans out, inline otherwise.
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates to the caller (rayon carries it out of the pool).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::{Family, Par};
    /// use holdfast_provider::{CpuDomain, CpuOperationEntry, ParallelMode, RouteCounters};
    ///
    /// let domain = CpuDomain::process_default()?;
    /// let entry = CpuOperationEntry::new(&domain, ParallelMode::Inner);
    /// let mut routes = RouteCounters::default();
    /// let flops = 2 * 512u64.pow(3);
    /// let used = entry.with_native_parallelism(Family::Gemm, flops, &mut routes, |par| par.threads());
    /// assert_eq!(used, domain.threads());
    /// assert_eq!(routes.installs, u64::from(domain.threads() > 1));
    /// # Ok::<(), holdfast_provider::ProviderError>(())
    /// ```
    #[inline]
    pub fn with_native_parallelism<R, F>(
        self,
        family: Family,
        size: u64,
        routes: &mut RouteCounters,
        f: F,
    ) -> R
    where
        R: Send,
        F: FnOnce(Par) -> R + Send,
    {
        self.route(family, size, routes).run(f)
    }
}

/// Where one lower-library call runs ([`CpuOperationEntry::route`]).
#[derive(Debug, Clone, Copy)]
pub enum Route<'d> {
    /// On the caller's thread, serially: the common, small case.
    Inline,
    /// On the caller's thread, which is already a worker of the domain's pool: the kernel may
    /// fan out with this parallelism without an install.
    InPool(Par),
    /// Inside an install of the domain's pool, with this parallelism.
    Install(&'d rayon::ThreadPool, Par),
}

impl Route<'_> {
    /// Runs one kernel call `f` on this route; `f` receives the [`Par`] to pass to the kernel.
    /// The pool is installed for `f` only: when this returns, the caller is back on its own
    /// thread, outside the pool (P2).
    ///
    /// # Panics
    ///
    /// A panic in `f` propagates to the caller.
    ///
    /// # Examples
    ///
    /// See [`CpuOperationEntry::route`].
    #[inline]
    pub fn run<R: Send>(self, f: impl FnOnce(Par) -> R + Send) -> R {
        match self {
            Route::Inline => f(Par::Seq),
            Route::InPool(par) => f(par),
            // The operation install site (docs/design/provider-routes.md).
            Route::Install(pool, par) => pool.install(|| f(par)),
        }
    }
}

/// The fanning-out arm of [`CpuOperationEntry::route`]: in place on a worker of the pool, else
/// through an install. Out of line: the inlined route stays small.
#[inline(never)]
fn fan_out<'d>(pool: &'d rayon::ThreadPool, par: Par, routes: &mut RouteCounters) -> Route<'d> {
    if pool.current_thread_index().is_some() {
        routes.in_pool += 1;
        Route::InPool(par)
    } else {
        routes.installs += 1;
        Route::Install(pool, par)
    }
}
