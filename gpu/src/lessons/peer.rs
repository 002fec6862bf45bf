//! System scope, made visible: a counter, a lock and a barrier shared by every GPU of a node.
//!
//! Source: the CUDA book's chapter 9 (atomics), which names `atomicAdd_system` — an atomic for
//! "the whole system of one node, host and every device" — without a program that needs it.
//! Here one GPU's memory holds the shared words and the other GPUs reach them through peer
//! access (the same address on every GPU, over NVLink or PCIe); the host launches one grid per
//! GPU at the same time. Each kernel takes its scope as an argument, so the same code runs at
//! [`Scope::System`] (correct) and at [`Scope::Device`] (a data race across GPUs in the PTX
//! memory model), and `gridsync multi lock|barrier` reports what each did.
//!
//! | kernel | shared word | what `.gpu` scope risks across GPUs |
//! |---|---|---|
//! | [`peer_count`] | a counter every thread adds to | nothing in practice: an atomic is performed where the word lives, whatever its scope |
//! | [`peer_lock`] | a [`Mutex`] guarding a plain (non-atomic) counter | the release does not wait for the holder's writes to reach the other GPU: lost updates |
//! | [`peer_barrier`] | a [`MultiGridBarrier`] | a block reads what a block of the other GPU wrote before the barrier, and may see the old value |

use crate::atomic::{Order, Scope, fetch_add};
use crate::index::{block_rank_in_grid, thread_rank_in_block};
use crate::lock::{DeviceScope, LockScope, Mutex, MutexState, SystemScope};
use crate::mem::Ptr;
use crate::multi_grid::{MultiGridBarrier, MultiGridBarrierState};

// ANCHOR: peer_count
kernel! {
    /// Every thread adds 1 to `counter` `per_thread` times with a relaxed atomic at `scope`.
    ///
    /// On every GPU of the node at once, `counter` in one GPU's memory: the counter must end at
    /// threads × `per_thread`, summed over the GPUs. PTX: `atom.relaxed.sys.add.u32` (`.gpu`
    /// for device scope; the old value it returns is not used).
    pub unsafe fn peer_count(counter: *mut u32, per_thread: u32, scope: Scope) {
        for _ in 0..per_thread {
            // SAFETY: `counter` is a live word every grid reaches, only accessed atomically.
            unsafe { fetch_add(counter, 1, scope, Order::Relaxed) };
        }
    }
}
// ANCHOR_END: peer_count

// ANCHOR: peer_lock
kernel! {
    /// Every thread takes the [`Mutex`] at `state` (at system scope for [`Scope::System`], at
    /// device scope otherwise) by itself
    /// ([`Mutex::with_thread`]: no warp cohort, so every acquisition and release goes through
    /// the lock word, across the GPUs), adds 1 to the plain counter
    /// `data` — an ordinary load and store, which only the lock protects — and releases it,
    /// `per_thread` times.
    ///
    /// With the lock and `data` in one GPU's memory and the grids of every GPU contending, the
    /// counter ends exact only if each release makes the holder's store visible to the next
    /// holder on the other GPU: what `st.release.sys` promises and `st.release.gpu` does not.
    /// A thread whose wait timed out stops; the host reads the state's `timeouts`.
    pub unsafe fn peer_lock(
        state: *mut MutexState, data: *mut u32, per_thread: u32, scope: Scope,
    ) {
        // SAFETY (both): the kernel's contract, passed on.
        match scope {
            Scope::System => unsafe { add_locked::<SystemScope>(state, data, per_thread) },
            _ => unsafe { add_locked::<DeviceScope>(state, data, per_thread) },
        }
    }
}

/// [`peer_lock`]'s loop with the lock's scope in its type.
///
/// # Safety
/// `state` is a live `MutexState` every grid reaches, used only through `Mutex` handles of
/// scope `S`; `data` is a live word that only holders of the lock touch.
#[inline(always)]
unsafe fn add_locked<S: LockScope>(state: *mut MutexState, data: *mut u32, per_thread: u32) {
    // SAFETY: the caller's contract.
    let mutex = unsafe { Mutex::<S>::from_ptr_in(state) };
    let data = Ptr::new(data);
    for _ in 0..per_thread {
        // SAFETY: inside `with_thread` this thread is the only one in here, on every GPU (at a
        // scope that covers them).
        if mutex
            .with_thread(|| unsafe { data.store(data.load().wrapping_add(1)) })
            .is_err()
        {
            return;
        }
    }
}
// ANCHOR_END: peer_lock

// ANCHOR: peer_barrier
kernel! {
    /// `rounds` times: thread 0 of each block writes the round into its slot (a plain store),
    /// every grid meets at the [`MultiGridBarrier`] (at `scope`), and thread 0 reads the slot of
    /// the block half the blocks away — on the other GPU of two — counting in `stale` each read
    /// older than the round it just passed.
    ///
    /// `first_block` is the rank of this grid's block 0 among all grids' blocks; `slots` has two
    /// words per block of all grids (odd and even rounds, so that a block writing the next
    /// round never races with a reader of this one), in one GPU's memory. At system scope
    /// `stale` stays 0; a non-zero count is a barrier that let a block through before another
    /// GPU's write before it was visible.
    pub unsafe fn peer_barrier(
        state: *mut MultiGridBarrierState,
        slots: *mut u32,
        first_block: u32,
        rounds: u32,
        scope: Scope,
        stale: *mut u32,
    ) {
        let me = first_block + block_rank_in_grid();
        // SAFETY: `state` is a live, reset state every grid reaches; one handle per thread.
        let mut barrier = unsafe { MultiGridBarrier::from_ptr(state, scope, me) };
        // SAFETY: written by the host before the launches.
        let blocks = unsafe { Ptr::new(&raw mut (*state).blocks).load() }.max(1);
        let partner = (me + blocks / 2) % blocks;
        let leader = thread_rank_in_block() == 0;
        // This round's half of the slots.
        let slots = Ptr::new(slots);
        let half = |round: u32| slots.wrapping_add((blocks * (round % 2)) as usize);
        for round in 1..=rounds {
            if leader {
                // SAFETY: `slots` holds `2 × blocks` words and `me < blocks`; only this block's
                // thread 0 writes slot `me` of a half, and the readers of a half read it
                // between the barrier that follows the write and the one before the next write.
                unsafe { half(round).add(me as usize).store(round) };
            }
            if barrier.sync().is_err() {
                return;
            }
            if leader {
                // SAFETY: as above, `partner < blocks`; the partner writes this half again
                // (round + 2) only after the next barrier, which waits for this block, so a
                // value other than `round` is stale.
                let seen = unsafe { half(round).add(partner as usize).load() };
                if seen != round {
                    // SAFETY: `stale` is a live counter of this grid's GPU, only added to.
                    unsafe { fetch_add(stale, 1, Scope::Device, Order::Relaxed) };
                }
            }
        }
    }
}
// ANCHOR_END: peer_barrier
