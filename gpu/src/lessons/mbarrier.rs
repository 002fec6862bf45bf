//! Split-phase barriers: arrive now, wait later — and the three ways to get it wrong.
//!
//! Beyond the sources (Hopper, sm_90): [`crate::mbarrier`]. Every kernel here runs the same
//! **relay**: in each of `rounds` rounds, every thread writes a value into its slot of shared
//! memory and then reads the slot of the thread 33 places on (another warp, another lane),
//! checking that it holds that thread's value of this round; a read of an older value is a
//! *stale read*, counted in `stale`. Between writing and reading, a thread has `work`
//! operations to do that do not depend on the others.
//!
//! The slots are double-buffered (round `r` writes buffer `r mod 2`): a thread that is already
//! writing round `r + 1` cannot overwrite what a slow thread still reads in round `r`, because to
//! get there it passed round `r + 1`'s barrier wait — for which the slow thread must have
//! arrived, after its read. So one barrier per round is enough.
//!
//! | kernel | what it does | what happens |
//! |---|---|---|
//! | [`relay_sync_threads`] | write, `sync_threads`, work, read | correct; every thread waits at the barrier, then works |
//! | [`relay_split`] | write, `arrive`, work, `wait(token)`, read | correct; the barrier completes while the threads work |
//! | [`relay_no_wait`] | write, `arrive`, read, work, `wait` | stale reads: arriving is not waiting |
//! | [`relay_stuck_parity`] | waits by parity, but never moves the parity on | in odd rounds the wait for "parity 0" passes at once (the *previous* phase had parity 0); the fast threads run ahead and arrive early, so phases and rounds come apart — stale reads, and waits for phases that need the waiter's own arrival: a deadlock the bound turns into an error (on an H100 the deadlock comes first) |
//! | [`relay_wait_before_arrive`] | waits for the phase before arriving at it | a deadlock — every thread waits for the others' arrivals, which come after their waits — turned by the bounded wait into an error (`err`) |
//!
//! Every kernel takes `(rounds, work, timeout_ns, stale, err, sink)`: `stale` and `err` are one
//! zeroed word each (`err` gets 1 when a wait timed out), `sink` a word written only so the work
//! is not optimized away. Launch with [`relay_shared_bytes`] of shared memory.

use crate::atomic::{Scope, StoreOrder, red_add};
use crate::index::{block_dim_x, global_id_x, thread_idx_x};
use crate::mbarrier::{BarrierScope, MBarrier, Parity};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;

/// Bytes before the slots: the `mbarrier` (8 bytes), padded.
pub const RELAY_BARRIER_BYTES: u32 = 16;

/// Threads per block the host launches with: eight warps.
pub const RELAY_THREADS_PER_BLOCK: u32 = 256;

/// Shared memory of a relay block of `threads`: the barrier and two slots per thread.
pub const fn relay_shared_bytes(threads: u32) -> u32 {
    RELAY_BARRIER_BYTES + 2 * 4 * threads
}

/// Thread `t`'s value in round `r`: different in every round and for every thread.
#[inline(always)]
pub fn relay_value(r: u32, t: u32) -> u32 {
    r.wrapping_mul(0x9E37_79B9) ^ t
}

/// The thread whose slot thread `t` of `n` reads: 33 places on, in another warp and lane.
#[inline(always)]
pub fn relay_partner(t: u32, n: u32) -> u32 {
    let p = t + 33;
    if p < n { p } else { p % n.max(1) }
}

/// `work` dependent integer operations.
#[inline(always)]
fn busy(mut x: u32, work: u32) -> u32 {
    for _ in 0..work {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    x
}

/// The block's two buffers of slots, after the barrier, and the barrier.
///
/// # Safety
/// The launch gave [`relay_shared_bytes`]`(blockDim.x)`.
#[inline(always)]
unsafe fn layout() -> (MBarrier, Ptr<u32>) {
    // SAFETY: the barrier is the first 8 bytes; the slots follow the padding.
    unsafe {
        let base = dynamic_shared::<u8>();
        (
            MBarrier::from_generic(base.cast()),
            Ptr::new(base.add(RELAY_BARRIER_BYTES as usize).cast()),
        )
    }
}

/// Reads the partner's slot of round `r` and counts it if stale.
///
/// # Safety
/// `slots` from [`layout`]; `stale` a word touched only atomically.
#[inline(always)]
unsafe fn check_partner(slots: Ptr<u32>, r: u32, stale: *mut u32) {
    let (t, n) = (thread_idx_x(), block_dim_x());
    let p = relay_partner(t, n);
    // SAFETY: `p < n`: a slot of this round's buffer. A racy read in the kernels that teach
    // the race is the point of them: a plain `u32` read of a slot another thread may be
    // writing — a data race, which the checker reports with this line and the write's. (The
    // barrier operations around it are `asm` with a memory clobber: the compiler moves no
    // access across them.)
    let seen = unsafe { slots.add(((r & 1) * n + p) as usize).load() };
    if seen != relay_value(r, p) {
        // SAFETY: the caller's.
        unsafe { red_add(stale, 1u32, Scope::Device, StoreOrder::Relaxed) };
    }
}

/// Writes this thread's slot of round `r`.
///
/// # Safety
/// `slots` from [`layout`].
#[inline(always)]
unsafe fn write_slot(slots: Ptr<u32>, r: u32) {
    let (t, n) = (thread_idx_x(), block_dim_x());
    // SAFETY: `t < n`: this thread's slot of this round's buffer.
    unsafe {
        slots
            .add(((r & 1) * n + t) as usize)
            .store(relay_value(r, t))
    };
}

/// Sets up the barrier (one arrival per thread) before any round.
///
/// # Safety
/// As [`layout`]; every thread calls it.
#[inline(always)]
unsafe fn init_barrier(bar: MBarrier) {
    if thread_idx_x() == 0 {
        // SAFETY: the first 8 bytes of the launch's shared memory; nobody uses it yet.
        unsafe { bar.init(block_dim_x()) };
    }
    sync_threads(); // the barrier is initialized before anyone arrives
}

/// Keeps `x` alive: written only if it takes one particular value.
///
/// # Safety
/// `sink` is a word.
#[inline(always)]
unsafe fn keep(x: u32, sink: *mut u32) {
    if x == 0x5eed_5eed {
        // SAFETY: the caller's.
        unsafe { Ptr::new(sink).store(x) };
    }
}

/// Records a timed-out wait.
///
/// # Safety
/// `err` is a word touched only atomically.
#[inline(always)]
unsafe fn timed_out(err: *mut u32) {
    // SAFETY: the caller's.
    unsafe { crate::atomic::store(err, 1u32, Scope::Device, StoreOrder::Relaxed) };
}

kernel! {
    /// The relay with the whole-block barrier: write, `sync_threads`, work, read. Correct; each
    /// thread's work starts only when the slowest thread has written.
    pub unsafe fn relay_sync_threads(rounds: u32, work: u32, timeout_ns: u64, stale: *mut u32, err: *mut u32, sink: *mut u32) {
        let _ = (timeout_ns, err);
        let mut x = global_id_x() as u32;
        // SAFETY: the launch gave `relay_shared_bytes`; every slot access is separated from
        // the conflicting one by the barrier (and the double buffer, module docs).
        unsafe {
            let (_, slots) = layout();
            for r in 0..rounds {
                write_slot(slots, r);
                sync_threads(); // every slot of this round is written
                x = busy(x, work);
                check_partner(slots, r, stale);
            }
            keep(x, sink);
        }
    }
}

// ANCHOR: relay_split
kernel! {
    /// The relay split in two: write, `arrive`, work, `wait(token)`, read. Correct; the phase
    /// completes while the threads work, so the wait usually finds it complete.
    pub unsafe fn relay_split(rounds: u32, work: u32, timeout_ns: u64, stale: *mut u32, err: *mut u32, sink: *mut u32) {
        let mut x = global_id_x() as u32;
        // SAFETY: as `relay_sync_threads`, with the mbarrier's phase in place of the barrier.
        unsafe {
            let (bar, slots) = layout();
            init_barrier(bar);
            for r in 0..rounds {
                write_slot(slots, r);
                let token = bar.arrive(BarrierScope::Block); // releases this thread's write
                x = busy(x, work);
                if bar.wait(token, BarrierScope::Block, timeout_ns).is_err() {
                    timed_out(err);
                    return;
                }
                check_partner(slots, r, stale); // every slot of this round is written
            }
            keep(x, sink);
        }
    }
}
// ANCHOR_END: relay_split

// ANCHOR: relay_no_wait
kernel! {
    /// The mistake: arriving is taken for waiting — the thread reads its partner's slot after
    /// its own arrival but before the wait. Stale reads: the partner may not have written yet.
    pub unsafe fn relay_no_wait(rounds: u32, work: u32, timeout_ns: u64, stale: *mut u32, err: *mut u32, sink: *mut u32) {
        let mut x = global_id_x() as u32;
        // SAFETY: as `relay_split`; the early read races with the partner's write on purpose.
        unsafe {
            let (bar, slots) = layout();
            init_barrier(bar);
            for r in 0..rounds {
                write_slot(slots, r);
                let token = bar.arrive(BarrierScope::Block);
                check_partner(slots, r, stale); // too early: nothing says the partner wrote
                x = busy(x, work);
                if bar.wait(token, BarrierScope::Block, timeout_ns).is_err() {
                    timed_out(err);
                    return;
                }
            }
            keep(x, sink);
        }
    }
}
// ANCHOR_END: relay_no_wait

kernel! {
    /// The mistake: a thread that waits by parity keeps waiting for parity 0 — it never moves
    /// its [`Parity`] on (the raw `try_wait.parity` with a constant). Even rounds are right; in
    /// odd rounds the wait asks "has the phase of parity 0 completed?" — the previous one has,
    /// so it passes at once, and the read is stale whenever the partner is late. The threads
    /// that pass early arrive at the next round while the phase is still open, so phases stop
    /// matching rounds, and a later wait can need the waiter's own arrival: a deadlock, bounded
    /// like every wait here (`err`).
    pub unsafe fn relay_stuck_parity(rounds: u32, work: u32, timeout_ns: u64, stale: *mut u32, err: *mut u32, sink: *mut u32) {
        let mut x = global_id_x() as u32;
        // SAFETY: as `relay_split`; the odd rounds' reads race on purpose.
        unsafe {
            let (bar, slots) = layout();
            init_barrier(bar);
            for r in 0..rounds {
                write_slot(slots, r);
                let _ = bar.arrive(BarrierScope::Block);
                x = busy(x, work);
                let stuck = Parity::FIRST;
                let start = crate::time::globaltimer_ns();
                while !bar.try_wait_parity(stuck.bit(), BarrierScope::Block) {
                    // Bounded too: once the barrier has run ahead, a stuck parity can also
                    // wait for a phase that needs this thread's own next arrival.
                    if crate::time::globaltimer_ns().wrapping_sub(start) > timeout_ns {
                        timed_out(err);
                        return;
                    }
                }
                check_partner(slots, r, stale);
            }
            keep(x, sink);
        }
    }
}

kernel! {
    /// The mistake: a thread waits for the phase before arriving at it. The phase needs every
    /// thread's arrival, and every thread is waiting: a deadlock. The bounded wait gives up
    /// after `timeout_ns` and sets `err`; the relay never runs.
    pub unsafe fn relay_wait_before_arrive(rounds: u32, work: u32, timeout_ns: u64, stale: *mut u32, err: *mut u32, sink: *mut u32) {
        let mut x = global_id_x() as u32;
        // SAFETY: as `relay_split`.
        unsafe {
            let (bar, slots) = layout();
            init_barrier(bar);
            let mut parity = Parity::FIRST;
            for r in 0..rounds {
                write_slot(slots, r);
                if bar.wait_parity(&mut parity, BarrierScope::Block, timeout_ns).is_err() {
                    timed_out(err);
                    return;
                }
                let _ = bar.arrive(BarrierScope::Block); // never reached in time
                x = busy(x, work);
                check_partner(slots, r, stale);
            }
            keep(x, sink);
        }
    }
}
