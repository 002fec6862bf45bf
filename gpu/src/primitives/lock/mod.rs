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
//! The progression of lock kernels built on these is in [`crate::lessons::locks`].

use crate::atomic::{atomic_cas_device, atomic_exch_device};
use crate::sync::threadfence;

mod mutex;
mod scope;
mod ticket;
pub use mutex::*;
pub use scope::*;
pub use ticket::*;

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
// ANCHOR: spin_lock
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
// ANCHOR_END: spin_lock

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
