//! Thread registry: lets admission errors name the holder's thread without the admission path
//! touching a reference count.
//!
//! A reservation records only the holder's `ThreadId` (a `Copy` value read from a thread-local).
//! Each thread that requests admission registers its `Thread` handle here once, on first use, and
//! removes it when the thread exits (thread-local destructor). An error that wants to name a
//! holder looks the id up; a holder whose thread has already exited is reported without a name
//! ("where known", SPEC A2).
//!
//! Cloning a `Thread` on every admission would cost two atomic reference-count updates per
//! acquire/release pair, on a path that is otherwise a few tens of nanoseconds.
//!
//! Lock order: the arbiter's state lock may be held while this registry is locked, never the
//! reverse (registration and removal take only the registry lock).

use std::sync::Mutex;
use std::thread::{Thread, ThreadId};

/// Live registered threads. Grows once per thread that ever requests admission, shrinks when it
/// exits.
static THREADS: Mutex<Vec<Thread>> = Mutex::new(Vec::new());

/// Registration of the current thread; removes it from [`THREADS`] when the thread exits.
struct Registration(ThreadId);

impl Registration {
    fn new() -> Self {
        let thread = std::thread::current();
        let id = thread.id();
        if let Ok(mut threads) = THREADS.lock() {
            threads.push(thread);
        }
        Self(id)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Never panic in a thread-local destructor: a poisoned registry just keeps the entry.
        if let Ok(mut threads) = THREADS.lock() {
            threads.retain(|thread| thread.id() != self.0);
        }
    }
}

thread_local! {
    static REGISTERED: Registration = Registration::new();
}

/// The calling thread's id, registering the thread on first use. `None` during thread teardown.
#[inline]
pub(crate) fn current() -> Option<ThreadId> {
    REGISTERED.try_with(|registration| registration.0).ok()
}

/// The handle of a registered, still-running thread.
pub(crate) fn lookup(id: ThreadId) -> Option<Thread> {
    let threads = THREADS.lock().ok()?;
    threads.iter().find(|thread| thread.id() == id).cloned()
}
