//! The progression of lock kernels: from the sources' spinlock to a mutex that cannot hang.
//!
//! Sources: Numba CUDA by example, part 4, example 4.5 (`lock`/`unlock`, `add_one_mutex`), and
//! the blog on CUDA lock pitfalls (`CudaKernelLock`, the "true thread lock" loop).
//!
//! Every kernel but the first has each thread take the lock `iters` times and, holding it,
//! increment a counter with a plain load and store — the critical section a lock exists for.
//! The counter must end at exactly threads × `iters`: any shortfall is an update lost because
//! two threads were inside at once, or because one read a value the previous holder's write had
//! not yet replaced.
//!
//! | kernel | what changed | why |
//! |---|---|---|
//! | [`add_one_mutex`] | the source, verbatim | |
//! | [`lock_unfenced`] | the blog's lock: CAS spin, exch release, no fence | shows the missing fence |
//! | [`lock_fenced`] | `threadfence` after acquire and before release | the Numba version: correct |
//! | [`lock_loop`] | lock and unlock inside one loop body | never waits across a call |
//! | [`lock_warp_leader`] | one lane per warp takes the lock for its warp | 32× fewer acquisitions |
//! | [`lock_mutex`] | [`Mutex`]: the warp cohort made automatic, acquire/release, back-off, bounded | the one to use |
//! | [`lock_mutex_with`] | [`Mutex::with`]: the critical section as a closure, lanes pass the lock at a warp barrier | the fastest |
//! | [`lock_ticket`] | [`TicketLock`]: first come, first served | fairness, at a cost |

use crate::access::{load_plain, store_plain};
use crate::lock::{
    Mutex, MutexState, TicketLock, TicketState, spin_lock, spin_lock_unfenced, spin_unlock,
    spin_unlock_unfenced,
};
use crate::sync::threadfence;
use crate::warp::{WARP_SIZE, active_mask, lane_id, shfl_sync, sync_warp};

/// The critical section every kernel here guards: `*counter += 1`, a plain load and a plain
/// store. Written with [`load_plain`] and [`store_plain`] — the same instructions on the GPU —
/// so that the simulator's weak memory sees them, and can show what a missing fence does.
///
/// # Safety
/// `counter` points to a `u32`.
#[inline(always)]
unsafe fn add_one(counter: *mut u32) {
    // SAFETY: the caller's contract.
    unsafe { store_plain(counter, load_plain(counter).wrapping_add(1)) }
}

kernel! {
    /// Every thread takes the lock, adds one to `x[0]`, and releases it: exactly 160 at 10 × 16.
    ///
    /// Source: Numba tutorial, example 4.5, `add_one_mutex` (with its fenced `lock`/`unlock`).
    pub unsafe fn add_one_mutex(x: *mut u32, mutex: *mut u32) {
        // SAFETY: `x` and `mutex` each point to one u32; `x` is only touched under the lock.
        unsafe {
            spin_lock(mutex);
            add_one(x);
            spin_unlock(mutex);
        }
    }
}

// ANCHOR: lock_unfenced
kernel! {
    /// The lock without fences: `while atomicCAS(m, 0, 1) != 0 {}`, critical section,
    /// `atomicExch(m, 0)`.
    ///
    /// Source: the blog's first `CudaKernelLock` (`lock`/`unlock` with no `__threadfence`).
    /// What can go wrong: both atomics are relaxed, so nothing orders the critical section's
    /// plain load and store against them. The load may be answered by the SM's L1 cache with a
    /// value the previous holder (on another SM) has already replaced in L2, and the store may
    /// reach memory after the lock is seen free: updates are lost. The one kernel here with an
    /// expected data race, which `compute-sanitizer --tool racecheck` cannot see (it checks
    /// shared memory only) and the counter does.
    pub unsafe fn lock_unfenced(counter: *mut u32, mutex: *mut u32, iters: u32) {
        for _ in 0..iters {
            // SAFETY: `mutex` points to a u32 used only as this lock; `counter` to a u32.
            unsafe {
                spin_lock_unfenced(mutex);
                add_one(counter);
                spin_unlock_unfenced(mutex);
            }
        }
    }
}
// ANCHOR_END: lock_unfenced

// ANCHOR: lock_fenced
kernel! {
    /// The Numba tutorial's lock: the same spin, with `threadfence` after taking the lock and
    /// before giving it back.
    ///
    /// Source: Numba tutorial, example 4.5 (`lock`/`unlock`); the blog's fixed `CudaKernelLock`.
    /// What changed: the fence after the CAS keeps the critical section from reading before the
    /// lock is held; the fence before the exch makes its writes visible before the lock is seen
    /// free. Each thread's CAS is unbounded and unbacked-off: thousands of spinners queue atomics
    /// on one address in front of the holder's release, which is why this is slow at full-GPU
    /// contention.
    pub unsafe fn lock_fenced(counter: *mut u32, mutex: *mut u32, iters: u32) {
        for _ in 0..iters {
            // SAFETY: as `lock_unfenced`; the fences make the critical section exclusive.
            unsafe {
                spin_lock(mutex);
                add_one(counter);
                spin_unlock(mutex);
            }
        }
    }
}
// ANCHOR_END: lock_fenced

kernel! {
    /// The blog's "true thread lock": lock, critical section and unlock inside one loop body.
    ///
    /// Source: the blog's last `GtThrCntKernel` (`bool blocked = true; while (blocked) { if
    /// (0 == atomicCAS(mutex, 0, 1)) { …; __threadfence(); atomicExch(mutex, 0); blocked =
    /// false; } }`).
    /// What changed: no lane ever waits inside a function for a lane of its own warp, so even
    /// without independent thread scheduling (before sm_70) the winner's path runs to the unlock
    /// while the losers' path loops. The blog's critical section was itself an `atomicAdd`; with
    /// a plain increment a fence after the CAS is needed too, and is added.
    pub unsafe fn lock_loop(counter: *mut u32, mutex: *mut u32, iters: u32) {
        for _ in 0..iters {
            let mut blocked = true;
            while blocked {
                // SAFETY: as `lock_fenced`.
                unsafe {
                    if crate::atomic::atomic_cas_device(mutex, 0, 1) == 0 {
                        threadfence();
                        add_one(counter);
                        threadfence();
                        crate::atomic::atomic_exch_device(mutex, 0);
                        blocked = false;
                    }
                }
            }
        }
    }
}

kernel! {
    /// One leader lane per warp takes the [`Mutex`]; while it holds it, each lane of the warp
    /// runs its critical section in turn.
    ///
    /// What changed: one acquisition per warp instead of one per thread, so 32× fewer hand-offs
    /// through L2 at full occupancy. The lanes pass the critical section along with
    /// `__syncwarp`, which orders their memory accesses; the leader's release then publishes
    /// all of them. The leader's success or timeout is broadcast with a shuffle, so the warp
    /// stays together.
    pub unsafe fn lock_warp_leader(counter: *mut u32, state: *mut MutexState, iters: u32) {
        // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
        let mutex = unsafe { Mutex::from_ptr(state) };
        for _ in 0..iters {
            let mask = active_mask();
            let leader = mask.trailing_zeros();
            let lane = lane_id();
            let guard = if lane == leader { mutex.lock_thread().ok() } else { None };
            let held = shfl_sync(mask, guard.is_some() as u32, leader);
            if held == 0 {
                return;
            }
            for turn in 0..WARP_SIZE {
                if mask & (1 << turn) != 0 {
                    if lane == turn {
                        // SAFETY: the warp holds the lock and lane `turn` alone runs this.
                        unsafe { add_one(counter) };
                    }
                    sync_warp(mask);
                }
            }
            drop(guard);
        }
    }
}

// ANCHOR: lock_mutex
kernel! {
    /// Every thread takes the [`Mutex`] (acquire), increments, and drops the guard (release).
    ///
    /// What changed: the warp leader's trick is built into [`Mutex::lock`] — the lanes that call
    /// it together form a cohort, one of them takes the lock word, and they hold it in turn —
    /// so any kernel gets it with a per-thread guard. The ordering is on the lock operations
    /// themselves (`atom.acquire.gpu.cas`, `st.release.gpu`) instead of full fences around
    /// relaxed ones; waiters back off with `nanosleep` and read before they swap; the wait is
    /// bounded. A thread that times out stops and the host reports it.
    pub unsafe fn lock_mutex(counter: *mut u32, state: *mut MutexState, iters: u32) {
        // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
        let mutex = unsafe { Mutex::from_ptr(state) };
        for _ in 0..iters {
            let Ok(_guard) = mutex.lock() else { return };
            // SAFETY: the guard makes this thread the only one in here.
            unsafe { add_one(counter) };
        }
    }
}
// ANCHOR_END: lock_mutex

// ANCHOR: lock_mutex_with
kernel! {
    /// Every thread runs its increment inside [`Mutex::with`].
    ///
    /// What changed: the critical section is a closure, so the lock knows where it ends — the
    /// lanes of a cohort pass the lock at a warp barrier of two lanes (`bar.warp.sync`) instead of
    /// through a hand-off word in memory. The same lock word, back-off and bound as
    /// [`lock_mutex`].
    pub unsafe fn lock_mutex_with(counter: *mut u32, state: *mut MutexState, iters: u32) {
        // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
        let mutex = unsafe { Mutex::from_ptr(state) };
        for _ in 0..iters {
            // SAFETY: inside `with` this thread is the only one in here.
            if mutex.with(|| unsafe { add_one(counter) }).is_err() {
                return;
            }
        }
    }
}
// ANCHOR_END: lock_mutex_with

kernel! {
    /// Every thread takes a ticket of the [`TicketLock`] and waits for its turn.
    ///
    /// What changed: fairness — acquisitions happen in ticket order, one atomic add each, and
    /// waiters sleep in proportion to the tickets ahead of them instead of racing.
    pub unsafe fn lock_ticket(counter: *mut u32, state: *mut TicketState, iters: u32) {
        // SAFETY: `state` is a live `TicketState` used only through `TicketLock` handles.
        let lock = unsafe { TicketLock::from_ptr(state) };
        for _ in 0..iters {
            let Ok(_guard) = lock.lock() else { return };
            // SAFETY: the guard makes this thread the only one in here.
            unsafe { add_one(counter) };
        }
    }
}

kernel! {
    /// Every thread tries to take the [`Mutex`]; the one that gets it never releases it, so
    /// every other thread must time out.
    ///
    /// The failure the bound exists for: without it this kernel would never finish.
    pub unsafe fn mutex_held_forever(counter: *mut u32, state: *mut MutexState) {
        // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
        let mutex = unsafe { Mutex::from_ptr(state) };
        if let Ok(guard) = mutex.lock() {
            // SAFETY: held, by the only thread that will ever hold it.
            unsafe { add_one(counter) };
            core::mem::forget(guard);
        }
    }
}
