//! Locks on the GPU: the sources' spinlock as they write it, and [`Mutex`] / [`TicketLock`],
//! the ones to use.
//!
//! # Why a GPU lock is harder than a CPU one
//!
//! - **Lanes of a warp wait on each other.** Before Volta (sm_70) the 32 lanes of a warp shared
//!   one program counter: when one lane won the lock and the others spun in `lock()`, the winner
//!   could not leave the function until they did, and they waited for it to unlock — a deadlock
//!   at `<<<1, 128>>>`. Independent thread scheduling (sm_70+, the only targets this crate
//!   builds) lets the winner run on, so the locks here need sm_70 or newer.
//! - **A lock word is not a fence.** CUDA's `atomicCAS` and `atomicExch` are relaxed: taking the
//!   lock says nothing about when the protected data written by the previous holder becomes
//!   visible. Without a fence after acquiring and before releasing (or acquire / release
//!   ordering on the operations themselves), the next holder can read a stale value and an
//!   update is lost.
//! - **A spin can wait forever** on a thread that never releases (a bug, a trap, a block that is
//!   never scheduled). [`Mutex`] and [`TicketLock`] bound their spin: past a deadline they
//!   record a timeout in the lock's state and give up, and the host reports an error.
//!
//! The progression of lock kernels built on these is in [`crate::mutex`].

use crate::atomic::{
    LoadOrder, Order, Scope, StoreOrder, atomic_cas_device, atomic_exch_device, compare_and_swap,
    fetch_add, load, store,
};
use crate::sync::threadfence;
use crate::time::{globaltimer_ns, nanosleep};
use core::marker::PhantomData;

/// The lock word's value when no thread holds it.
pub const UNLOCKED: u32 = 0;
/// The lock word's value while a thread holds it.
pub const LOCKED: u32 = 1;

/// The sources' `lock`, without the fence: spin on `atomicCAS(mutex, 0, 1)` until it returns 0.
///
/// Source: the blog's `CudaKernelLock::lock` (`while (atomicCAS(mutex, 0, 1) != 0);`).
/// Scope: device. Ordering: relaxed — which is the bug: the critical section's loads may be
/// served before the lock is held, from a cache that still has the previous holder's old data.
/// CUDA: `atomicCAS`. PTX: `atom.relaxed.gpu.cas.b32` in an unbounded loop.
///
/// # Safety
/// `mutex` points to a `u32` in global memory, accessed only by these functions while kernels
/// run. The spin is unbounded: a holder that never unlocks hangs the kernel.
#[inline(always)]
pub unsafe fn spin_lock_unfenced(mutex: *mut u32) {
    // SAFETY: forwarded to the caller.
    while unsafe { atomic_cas_device(mutex, UNLOCKED, LOCKED) } != UNLOCKED {}
}

/// The sources' `unlock`, without the fence: `atomicExch(mutex, 0)`.
///
/// Ordering: relaxed — the critical section's stores may become visible after the lock is seen
/// free. CUDA: `atomicExch`. PTX: `atom.relaxed.gpu.exch.b32`.
///
/// # Safety
/// As [`spin_lock_unfenced`]; the caller holds the lock.
#[inline(always)]
pub unsafe fn spin_unlock_unfenced(mutex: *mut u32) {
    // SAFETY: forwarded to the caller.
    unsafe { atomic_exch_device(mutex, UNLOCKED) };
}

/// The Numba tutorial's `lock(mutex)`: the CAS spin, then `cuda.threadfence()`.
///
/// Source: Numba CUDA by example, part 4, example 4.5, and the blog's fixed `CudaKernelLock`.
/// Scope: device. Ordering: the fence after the CAS keeps the critical section's accesses from
/// being performed before the lock is taken (an acquire, built from a relaxed CAS and a full
/// fence). PTX: `atom.relaxed.gpu.cas.b32` loop, `membar.gl`.
///
/// # Safety
/// As [`spin_lock_unfenced`].
#[inline(always)]
pub unsafe fn spin_lock(mutex: *mut u32) {
    // SAFETY: forwarded to the caller.
    while unsafe { atomic_cas_device(mutex, UNLOCKED, LOCKED) } != UNLOCKED {}
    threadfence();
}

/// The Numba tutorial's `unlock(mutex)`: `cuda.threadfence()`, then `atomicExch(mutex, 0)`.
///
/// Ordering: the fence makes the critical section's writes visible to the whole GPU before the
/// lock is seen free (a release). PTX: `membar.gl`, `atom.relaxed.gpu.exch.b32`.
///
/// # Safety
/// As [`spin_lock_unfenced`]; the caller holds the lock.
#[inline(always)]
pub unsafe fn spin_unlock(mutex: *mut u32) {
    threadfence();
    // SAFETY: forwarded to the caller.
    unsafe { atomic_exch_device(mutex, UNLOCKED) };
}

/// Why a bounded lock gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockError {
    /// This thread waited past the lock's timeout.
    TimedOut,
    /// Another thread already timed out on this lock, so this one did not wait: the lock is
    /// presumed held forever, and the launch is failing anyway.
    Abandoned,
}

/// How long a GPU thread may wait for a lock before giving up, when the host does not say:
/// two seconds, far beyond any sane critical section yet short of the display watchdog.
pub const DEFAULT_TIMEOUT_NS: u64 = 2_000_000_000;
/// The first back-off sleep of a waiting thread, in nanoseconds.
pub const DEFAULT_BACKOFF_MIN_NS: u32 = 32;
/// The longest back-off sleep; it doubles from the minimum up to this. Chosen from the sweep in
/// `gridsync bench mutex --sweep` (docs/perf-notes.md).
pub const DEFAULT_BACKOFF_MAX_NS: u32 = 1024;

/// The device memory behind a [`Mutex`]: the lock word, the error word, and the spin bounds the
/// host chose. The host's `DeviceMutex` owns one and passes `*mut MutexState` to kernels.
///
/// The error word lives on its own 128-byte line so that reading it while waiting does not add
/// traffic to the line every waiter hammers.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MutexState {
    /// [`UNLOCKED`] or [`LOCKED`].
    pub word: u32,
    /// First back-off sleep, in nanoseconds.
    pub backoff_min_ns: u32,
    /// Longest back-off sleep, in nanoseconds.
    pub backoff_max_ns: u32,
    _pad0: u32,
    /// Nanoseconds a thread may wait before giving up.
    pub timeout_ns: u64,
    _pad: [u32; 26],
    /// The number of threads that gave up (timed out, or saw the lock abandoned). Non-zero
    /// after a launch means the launch failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
}

const _: () = assert!(size_of::<MutexState>() == 256);

impl MutexState {
    /// An unlocked lock with these bounds.
    pub const fn new(timeout_ns: u64, backoff_min_ns: u32, backoff_max_ns: u32) -> MutexState {
        MutexState {
            word: UNLOCKED,
            backoff_min_ns,
            backoff_max_ns,
            _pad0: 0,
            timeout_ns,
            _pad: [0; 26],
            timeouts: 0,
            _pad2: [0; 31],
        }
    }
}

impl Default for MutexState {
    fn default() -> MutexState {
        MutexState::new(
            DEFAULT_TIMEOUT_NS,
            DEFAULT_BACKOFF_MIN_NS,
            DEFAULT_BACKOFF_MAX_NS,
        )
    }
}

/// A device-scope spinlock with bounded, backed-off waiting: the one to use.
///
/// Scope: device (every thread of the GPU; not the host). CUDA: what
/// `cuda::binary_semaphore<thread_scope_device>` provides. PTX: acquire is
/// `atom.acquire.gpu.cas.b32`, release is `st.release.gpu.u32`.
///
/// # Memory ordering
///
/// Everything a thread does before its [`MutexGuard`] is dropped happens-before everything the
/// next thread to acquire the mutex does after [`Mutex::lock`] returns — for every thread of the
/// GPU, in any block. No extra fence is needed inside or around the critical section.
///
/// # Waiting
///
/// Test-and-test-and-set with exponential back-off: a thread that finds the lock held sleeps
/// (`nanosleep`, doubling from `backoff_min_ns` to `backoff_max_ns`), then reads the word and
/// tries the compare-and-swap only if it looks free. Sleeping frees the issue slots and the
/// memory bandwidth that the holder needs to finish; reading before swapping keeps the
/// thousands of waiters from queueing atomics in front of the holder's release.
///
/// The wait is bounded: past `timeout_ns` the thread adds one to the state's `timeouts` word
/// and returns [`LockError::TimedOut`]; once any thread has, others return
/// [`LockError::Abandoned`] instead of waiting out their own deadline. The host checks the word
/// after the launch and returns an error, so a lock that is never released fails the launch
/// instead of hanging it.
///
/// Precondition: sm_70 or newer (independent thread scheduling), like every lock here.
#[derive(Clone, Copy, Debug)]
pub struct Mutex {
    state: *mut MutexState,
}

/// Proof that the calling thread holds a [`Mutex`]; releases it when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct MutexGuard<'a> {
    // The word itself, not `&Mutex`: a reference to the handle would make the handle's address
    // escape, and the compiler would keep it in local memory.
    word: *mut u32,
    _mutex: PhantomData<&'a Mutex>,
}

impl Mutex {
    /// A handle to the mutex whose state is at `state`. The handle does not own the memory:
    /// dropping it frees nothing (the host's `DeviceMutex` does, once).
    ///
    /// # Safety
    /// `state` points to a [`MutexState`] in global memory that stays valid while this handle
    /// is used, and is accessed by kernels only through `Mutex` handles.
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut MutexState) -> Mutex {
        Mutex { state }
    }

    #[inline(always)]
    fn word(&self) -> *mut u32 {
        // SAFETY: `from_ptr`'s contract; no reference is formed, only a field address.
        unsafe { &raw mut (*self.state).word }
    }

    /// Whether some thread holds the lock right now (a relaxed load; stale the moment it
    /// returns — for diagnostics and tests, not for deciding to enter).
    #[inline(always)]
    pub fn is_locked(&self) -> bool {
        // SAFETY: `from_ptr`'s contract; the word is only accessed atomically.
        unsafe { load(self.word(), Scope::Device, LoadOrder::Relaxed) != UNLOCKED }
    }

    /// One attempt: the lock if it was free, `None` if it was held. Never waits.
    #[inline(always)]
    pub fn try_lock(&self) -> Option<MutexGuard<'_>> {
        // SAFETY: `from_ptr`'s contract; the word is only accessed atomically.
        let seen = unsafe {
            compare_and_swap(self.word(), UNLOCKED, LOCKED, Scope::Device, Order::Acquire)
        };
        (seen == UNLOCKED).then_some(MutexGuard {
            word: self.word(),
            _mutex: PhantomData,
        })
    }

    /// Takes the lock, waiting with back-off until it is free or the timeout passes.
    ///
    /// # Errors
    /// [`LockError::TimedOut`] past the state's `timeout_ns`; [`LockError::Abandoned`] if
    /// another thread already timed out. Either way the state's `timeouts` word is incremented.
    #[inline(always)]
    pub fn lock(&self) -> Result<MutexGuard<'_>, LockError> {
        match self.try_lock() {
            Some(guard) => Ok(guard),
            None => self.lock_contended(),
        }
    }

    #[inline(always)]
    fn lock_contended(&self) -> Result<MutexGuard<'_>, LockError> {
        // SAFETY (every block below): `from_ptr`'s contract; the words are only accessed
        // atomically, the bounds only read.
        let s = self.state;
        let (timeout_ns, min_ns, max_ns) = unsafe {
            (
                (*s).timeout_ns,
                (*s).backoff_min_ns.max(1),
                (*s).backoff_max_ns,
            )
        };
        let timeouts = unsafe { &raw mut (*s).timeouts };
        let start = globaltimer_ns();
        let mut backoff = min_ns;
        loop {
            if unsafe { load(timeouts, Scope::Device, LoadOrder::Relaxed) } != 0 {
                unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                return Err(LockError::Abandoned);
            }
            nanosleep(backoff);
            backoff = backoff.saturating_mul(2).min(max_ns.max(min_ns));
            let free = unsafe { load(self.word(), Scope::Device, LoadOrder::Relaxed) } == UNLOCKED;
            if free && let Some(guard) = self.try_lock() {
                return Ok(guard);
            }
            if globaltimer_ns().wrapping_sub(start) > timeout_ns {
                unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                return Err(LockError::TimedOut);
            }
        }
    }
}

impl Drop for MutexGuard<'_> {
    /// Releases the lock: `st.release.gpu` of [`UNLOCKED`].
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the word of a live `Mutex` (the guard borrows it); only the holder — the
        // guard's owner — writes it now.
        unsafe { store(self.word, UNLOCKED, Scope::Device, StoreOrder::Release) };
    }
}

/// The device memory behind a [`TicketLock`].
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketState {
    /// The next ticket to hand out.
    pub next: u32,
    /// The ticket being served (whose holder may enter).
    pub serving: u32,
    /// Nanoseconds a thread may wait before giving up.
    pub timeout_ns: u64,
    /// Nanoseconds to sleep per ticket ahead of this one, between polls.
    pub backoff_per_ticket_ns: u32,
    _pad: [u32; 27],
    /// Threads that gave up; non-zero after a launch means the launch failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
}

/// The default sleep per waiting ticket ahead, in nanoseconds: about one hand-off.
pub const DEFAULT_BACKOFF_PER_TICKET_NS: u32 = 256;

const _: () = assert!(size_of::<TicketState>() == 256);

impl TicketState {
    /// A fresh lock (ticket 0 served next) with these bounds.
    pub const fn new(timeout_ns: u64, backoff_per_ticket_ns: u32) -> TicketState {
        TicketState {
            next: 0,
            serving: 0,
            timeout_ns,
            backoff_per_ticket_ns,
            _pad: [0; 27],
            timeouts: 0,
            _pad2: [0; 31],
        }
    }
}

impl Default for TicketState {
    fn default() -> TicketState {
        TicketState::new(DEFAULT_TIMEOUT_NS, DEFAULT_BACKOFF_PER_TICKET_NS)
    }
}

/// A fair (first come, first served) device-scope lock: take a ticket with one atomic add,
/// wait until it is served.
///
/// Scope: device. PTX: `atom.relaxed.gpu.add.u32` for the ticket, `ld.acquire.gpu.u32` to wait,
/// `st.release.gpu.u32` to serve the next ticket.
///
/// # Memory ordering
///
/// As [`Mutex`]: the releasing thread's accesses happen-before the next ticket holder's
/// critical section (release store of `serving`, acquire load of it).
///
/// # Trade-off
///
/// Fair, and one atomic per acquisition however many wait — but the lock passes to the next
/// ticket even if that thread is asleep in its back-off, so hand-offs are slower than a
/// [`Mutex`]'s. A thread that gives up leaves its ticket unserved forever, so after one timeout
/// every later ticket fails ([`LockError::Abandoned`] once seen).
#[derive(Clone, Copy, Debug)]
pub struct TicketLock {
    state: *mut TicketState,
}

/// Proof that the calling thread holds a [`TicketLock`]; serves the next ticket when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct TicketGuard<'a> {
    serving: *mut u32,
    ticket: u32,
    _lock: PhantomData<&'a TicketLock>,
}

impl TicketLock {
    /// A handle to the lock whose state is at `state`; owns nothing.
    ///
    /// # Safety
    /// As [`Mutex::from_ptr`], for a [`TicketState`].
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut TicketState) -> TicketLock {
        TicketLock { state }
    }

    /// Takes a ticket and waits for it to be served, sleeping in proportion to the number of
    /// tickets ahead.
    ///
    /// # Errors
    /// As [`Mutex::lock`].
    #[inline(always)]
    pub fn lock(&self) -> Result<TicketGuard<'_>, LockError> {
        let s = self.state;
        // SAFETY (every block below): `from_ptr`'s contract; the counters are only accessed
        // atomically, the bounds only read.
        let (timeout_ns, per_ticket) = unsafe { ((*s).timeout_ns, (*s).backoff_per_ticket_ns) };
        let (next, serving, timeouts) = unsafe {
            (
                &raw mut (*s).next,
                &raw mut (*s).serving,
                &raw mut (*s).timeouts,
            )
        };
        let ticket = unsafe { fetch_add(next, 1, Scope::Device, Order::Relaxed) };
        let start = globaltimer_ns();
        loop {
            let now_serving = unsafe { load(serving, Scope::Device, LoadOrder::Acquire) };
            if now_serving == ticket {
                return Ok(TicketGuard {
                    serving,
                    ticket,
                    _lock: PhantomData,
                });
            }
            if unsafe { load(timeouts, Scope::Device, LoadOrder::Relaxed) } != 0 {
                unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                return Err(LockError::Abandoned);
            }
            if globaltimer_ns().wrapping_sub(start) > timeout_ns {
                unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                return Err(LockError::TimedOut);
            }
            let ahead = ticket.wrapping_sub(now_serving);
            nanosleep(ahead.saturating_mul(per_ticket).min(MAX_TICKET_SLEEP_NS));
        }
    }
}

/// The longest single sleep of a ticket waiter (`nanosleep` accepts up to 1 ms).
const MAX_TICKET_SLEEP_NS: u32 = 100_000;

impl Drop for TicketGuard<'_> {
    /// Serves the next ticket: `st.release.gpu` of `ticket + 1`.
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `from_ptr`'s contract; only the holder of `ticket` writes `serving` now.
        unsafe {
            store(
                self.serving,
                self.ticket.wrapping_add(1),
                Scope::Device,
                StoreOrder::Release,
            )
        };
    }
}
