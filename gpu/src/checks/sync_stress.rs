//! gridsync's locks and barriers under litmus-style stress, each guarding a payload of plain
//! memory that is checked on every use — and, beside each, a variant with its ordering removed,
//! which must be caught.
//!
//! Locks: every thread takes one of many locks, chosen at random every time, and in the critical
//! section reads the lock's two payload words (on two cache lines) with plain loads, counts a
//! *violation* if they differ, and writes both plus one with plain stores. A lock that lets
//! two threads in at once, or lets a holder read what the previous holder wrote before it
//! arrived, shows as words that differ, and as a final count short of the acquisitions.
//!
//! Barriers: every round each thread writes the round number into its slot (plain), passes the
//! barrier, and reads the slot of a thread of another block chosen at random (plain): anything
//! but the round number is a violation. Slots alternate between two banks, so one barrier per
//! round suffices (a bank is rewritten two rounds later, after a barrier every reader passed).

use crate::access::{load_plain, load_volatile, store_plain, store_volatile};
use crate::atomic::{LoadOrder, Order, Scope, atomic_add_device, fetch_add, load};
use crate::grid::{BarrierError, GridBarrier, GridBarrierState};
use crate::index::{block_rank_in_grid, blocks_per_grid, thread_rank_in_block, threads_per_block};
use crate::lock::{
    DeviceScope, Mutex, MutexState, SystemScope, TicketLock, TicketState, spin_lock,
    spin_lock_unfenced, spin_unlock, spin_unlock_unfenced,
};
use crate::multi_grid::{MultiGridBarrier, MultiGridBarrierState};

/// Words between two locks' payloads: two 128-byte lines each.
pub const PAYLOAD_STRIDE: usize = 64;
/// Words between a spin lock word and the next (one line each).
pub const SPIN_STRIDE: usize = 32;

/// `Mutex<DeviceScope>`.
pub const LOCK_MUTEX: u32 = 0;
/// `Mutex<SystemScope>`.
pub const LOCK_MUTEX_SYSTEM: u32 = 1;
/// `TicketLock`.
pub const LOCK_TICKET: u32 = 2;
/// The Numba tutorial's spin lock (`threadfence` on both sides).
pub const LOCK_SPIN_FENCED: u32 = 3;
/// The same spin without its fences: the broken variant.
pub const LOCK_SPIN_UNFENCED: u32 = 4;

/// `GridBarrier`.
pub const BARRIER_GRID: u32 = 0;
/// `MultiGridBarrier` at device scope, one grid.
pub const BARRIER_MULTI_DEVICE: u32 = 1;
/// `MultiGridBarrier` at system scope, one grid.
pub const BARRIER_MULTI_SYSTEM: u32 = 2;
/// Every thread arrives with a relaxed add and polls with relaxed loads, no fence anywhere:
/// `GridBarrier`'s counting with its ordering removed, the broken variant.
pub const BARRIER_RELAXED: u32 = 3;

/// The locks a lock-stress launch may use, one array per kind (the others may be null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StressLocks {
    /// `count` mutex states (both mutex kinds).
    pub mutexes: *mut MutexState,
    /// `count` ticket states.
    pub tickets: *mut TicketState,
    /// `count × SPIN_STRIDE` words (the spin locks).
    pub words: *mut u32,
    /// Locks of the kind used.
    pub count: u32,
    /// Which kind: `LOCK_*`.
    pub kind: u32,
}

/// One lock-stress launch: the locks, what they guard, the counters, and the stress between uses.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LockStressLaunch {
    /// The locks.
    pub locks: StressLocks,
    /// `PAYLOAD_STRIDE` words per lock.
    pub payload: *mut u32,
    /// Critical sections that saw the two payload words differ, added to.
    pub violations: *mut u64,
    /// Acquisitions that gave up (a bounded lock's timeout), added to.
    pub failures: *mut u32,
    /// `stress_lines` lines of 32 words the stress accesses hammer.
    pub scratch: *mut u32,
    /// Acquisitions per thread.
    pub iters: u32,
    /// Seeds the choice of locks.
    pub seed: u32,
    /// Lines of `scratch` (a power of two).
    pub stress_lines: u32,
    /// Scratch accesses between two uses.
    pub stress_iters: u32,
}

/// One barrier-stress launch: the barrier of `kind`, the slots written and read across it, the
/// counters, and where this grid stands among the grids of one barrier.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BarrierStressLaunch {
    /// `GridBarrier`'s state (`BARRIER_GRID`), or null.
    pub grid: *mut GridBarrierState,
    /// `MultiGridBarrier`'s state (`BARRIER_MULTI_*`), or null.
    pub multi: *mut MultiGridBarrierState,
    /// The relaxed barrier's word, zero before the launch.
    pub count: *mut u32,
    /// Two banks of one word per thread of every grid.
    pub slots: *mut u32,
    /// Reads of a value other than the round's, added to.
    pub violations: *mut u64,
    /// Blocks (threads, for the relaxed barrier) that gave up waiting, added to.
    pub failures: *mut u32,
    /// Which barrier: `BARRIER_*`.
    pub kind: u32,
    /// Rounds.
    pub rounds: u32,
    /// Seeds the choice of the slot each thread reads.
    pub seed: u32,
    /// The relaxed barrier's polls between two sleeps.
    pub polls: u32,
    /// This grid's first block among `total`.
    pub first: u32,
    /// Blocks of every grid of the barrier.
    pub total: u32,
}

/// A small generator per thread: which lock, which slot.
#[inline(always)]
fn next(s: &mut u32) -> u32 {
    *s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    *s >> 8
}

/// Stress between uses: loads and stores to a scratch array of `lines` lines.
#[inline(always)]
unsafe fn stress(scratch: *mut u32, lines: u32, iters: u32, s: &mut u32) {
    let lane = thread_rank_in_block() % 32;
    for _ in 0..iters {
        let line = next(s) % lines.max(1);
        // SAFETY: `scratch` holds `lines × 32` words (the kernel's contract).
        unsafe {
            store_volatile(scratch.add((line * 32 + lane) as usize), *s);
            let _ = load_volatile(scratch.add((line * 32 + (lane ^ 1)) as usize));
        }
    }
}

/// The critical section: both payload words must agree; both become one more.
#[inline(always)]
unsafe fn critical(payload: *mut u32, violations: *mut u64) {
    // SAFETY: `payload` holds PAYLOAD_STRIDE words (the kernel's contract).
    unsafe {
        let a = load_plain(payload);
        let b = load_plain(payload.add(PAYLOAD_STRIDE / 2));
        if a != b {
            atomic_add_device(violations, 1u64);
        }
        store_plain(payload, a.wrapping_add(1));
        store_plain(payload.add(PAYLOAD_STRIDE / 2), a.wrapping_add(1));
    }
}

kernel! {
    /// `iters` acquisitions per thread of a random one of `locks.count` locks of kind
    /// `locks.kind`, each guarding `PAYLOAD_STRIDE` words of `payload`; `violations` counts
    /// critical sections that saw the two payload words differ, `failures` acquisitions that
    /// gave up (a bounded lock's timeout). Between uses, `stress_iters` scratch accesses.
    pub unsafe fn lock_stress(l: LockStressLaunch) {
        let LockStressLaunch { locks, payload, violations, failures, scratch, iters, seed, stress_lines, stress_iters } = l;
        let me = block_rank_in_grid() * threads_per_block() + thread_rank_in_block();
        let mut s = seed ^ me.wrapping_mul(0x9e37_79b9);
        // A mutex's warp cohort is the lanes calling `lock` together, on one mutex: the lanes of
        // a warp draw the same lock from a generator they share. The other locks are taken
        // thread by thread, each drawing its own.
        let mut warp_s = seed ^ (me / 32).wrapping_mul(0x85eb_ca6b);
        let per_warp = matches!(locks.kind, LOCK_MUTEX | LOCK_MUTEX_SYSTEM);
        for _ in 0..iters {
            let pick = next(&mut warp_s);
            let i = if per_warp { pick } else { next(&mut s) } % locks.count.max(1);
            // SAFETY: every array holds `count` locks of its kind; `payload` one stride per lock.
            unsafe {
                let p = payload.add(i as usize * PAYLOAD_STRIDE);
                let ok = match locks.kind {
                    LOCK_MUTEX => Mutex::<DeviceScope>::from_ptr_in(locks.mutexes.add(i as usize))
                        .lock()
                        .map(|_guard| critical(p, violations))
                        .is_ok(),
                    LOCK_MUTEX_SYSTEM => Mutex::<SystemScope>::from_ptr_in(locks.mutexes.add(i as usize))
                        .lock()
                        .map(|_guard| critical(p, violations))
                        .is_ok(),
                    LOCK_TICKET => TicketLock::from_ptr(locks.tickets.add(i as usize))
                        .lock()
                        .map(|_guard| critical(p, violations))
                        .is_ok(),
                    LOCK_SPIN_FENCED => {
                        let w = locks.words.add(i as usize * SPIN_STRIDE);
                        spin_lock(w);
                        critical(p, violations);
                        spin_unlock(w);
                        true
                    }
                    LOCK_SPIN_UNFENCED => {
                        let w = locks.words.add(i as usize * SPIN_STRIDE);
                        spin_lock_unfenced(w);
                        critical(p, violations);
                        spin_unlock_unfenced(w);
                        true
                    }
                    _ => false,
                };
                if !ok {
                    atomic_add_device(failures, 1);
                    return;
                }
                stress(scratch, stress_lines, stress_iters, &mut s);
            }
        }
    }
}

/// The broken barrier: every thread adds one relaxed, then polls relaxed until all `threads`
/// threads have, `round + 1` times over; no fence, no `sync_threads`. At `scope` (system
/// across GPUs). Bounded by `polls`.
#[inline(always)]
unsafe fn relaxed_sync(
    count: *mut u32,
    round: u32,
    threads: u32,
    scope: Scope,
    polls: u32,
) -> Result<(), BarrierError> {
    let target = threads.wrapping_mul(round + 1);
    // SAFETY: `count` is one word only touched atomically (the kernel's contract).
    unsafe {
        fetch_add(count, 1, scope, Order::Relaxed);
        let mut n = 0;
        while load(count, scope, LoadOrder::Relaxed).wrapping_sub(target) > u32::MAX / 2 {
            n += 1;
            if n > polls {
                return Err(BarrierError::TimedOut);
            }
        }
    }
    Ok(())
}

/// What the barrier rounds of [`barrier_stress`] check, and where they count.
#[derive(Clone, Copy)]
pub(crate) struct Rounds {
    /// Two banks of one word per thread of all the grids.
    pub slots: *mut u32,
    /// Rounds.
    pub rounds: u32,
    /// Seeds the slots read.
    pub seed: u32,
    /// One `u64`: slots read with the wrong value (a `u32` would wrap: a broken barrier reads
    /// stale slots billions of times).
    pub violations: *mut u64,
    /// One word: blocks (threads, with `per_thread`) that gave up waiting.
    pub failures: *mut u32,
    /// Count failures per thread, not per block.
    pub per_thread: bool,
    /// This grid's first block among all the grids' blocks.
    pub first: u32,
    /// Blocks of all the grids (one grid: its own).
    pub blocks: u32,
}

/// The barrier rounds of [`barrier_stress`] with `sync` as the barrier: returns early, counting
/// into `c.failures` at the first failed one.
///
/// # Safety
/// The pointers of `c` are sized as its fields say; `c.first + blocks_per_grid() <= c.blocks`.
#[inline(always)]
pub(crate) unsafe fn barrier_rounds(
    mut sync: impl FnMut(u32) -> Result<(), BarrierError>,
    c: Rounds,
) {
    let (b, t, blocks, per_block) = (
        c.first + block_rank_in_grid(),
        thread_rank_in_block(),
        c.blocks,
        threads_per_block(),
    );
    let all = blocks * per_block;
    let me = b * per_block + t;
    let mut s = c.seed ^ me.wrapping_mul(0x9e37_79b9);
    for r in 0..c.rounds {
        let bank = (r % 2) * all;
        // SAFETY: `slots` holds two banks of one word per thread (the caller's contract).
        unsafe { store_plain(c.slots.add((bank + me) as usize), r + 1) };
        if sync(r).is_err() {
            if c.per_thread || t == 0 {
                // SAFETY: `failures` is one word.
                unsafe { atomic_add_device(c.failures, 1) };
            }
            return;
        }
        if blocks > 1 {
            let other = (b + 1 + next(&mut s) % (blocks - 1)) % blocks;
            let slot = other * per_block + next(&mut s) % per_block;
            // SAFETY: `slot < all`.
            let seen = unsafe { load_plain(c.slots.add((bank + slot) as usize)) };
            if seen != r + 1 {
                // SAFETY: `violations` is one `u64`.
                unsafe { atomic_add_device(c.violations, 1u64) };
            }
        }
    }
}

kernel! {
    /// `rounds` rounds of: every thread writes `round + 1` into its slot of bank `round % 2`
    /// of `slots` (plain), the barrier of kind `kind`, every thread reads the slot of a random
    /// thread of another block (plain) and counts into `violations` a value other than
    /// `round + 1`. `failures` counts blocks (threads, for the relaxed barrier) that gave up
    /// waiting. `grid` and `multi` are the barriers' states (one may be null), `count` the
    /// relaxed barrier's word (zero before the launch). Several grids — one per GPU, launched
    /// together, `multi`, `count` and `slots` in memory they all reach — run one barrier when
    /// `total` (blocks of all of them) exceeds this grid's: grid `g`'s blocks are numbered from
    /// `first`, the multi-grid barrier's kinds only, and the relaxed barrier counts at system
    /// scope.
    pub unsafe fn barrier_stress(l: BarrierStressLaunch) {
        let BarrierStressLaunch { grid, multi, count, slots, violations, failures, kind, rounds, seed, polls, first, total } = l;
        let scope = if kind == BARRIER_MULTI_SYSTEM { Scope::System } else { Scope::Device };
        let grids = total > blocks_per_grid();
        let c = Rounds { slots, rounds, seed, violations, failures, per_thread: false, first, blocks: total.max(blocks_per_grid()) };
        // SAFETY (every arm): the host passes the state of `kind` live and zeroed, `slots`,
        // `violations` and `failures` sized as `barrier_rounds` needs, and this grid's first
        // block among `total`.
        unsafe {
            match kind {
                BARRIER_GRID if !grids => {
                    let mut g = GridBarrier::from_ptr(grid);
                    barrier_rounds(|_| g.sync(), Rounds { first: 0, ..c })
                }
                BARRIER_MULTI_DEVICE | BARRIER_MULTI_SYSTEM => {
                    let mut m = MultiGridBarrier::from_ptr(multi, scope, first + block_rank_in_grid());
                    barrier_rounds(|_| m.sync(), c)
                }
                BARRIER_RELAXED => {
                    let (threads, scope) = (c.blocks * threads_per_block(), if grids { Scope::System } else { Scope::Device });
                    barrier_rounds(|r| relaxed_sync(count, r, threads, scope, polls), Rounds { per_thread: true, ..c })
                }
                _ => {
                    if thread_rank_in_block() == 0 {
                        atomic_add_device(failures, 1);
                    }
                }
            }
        }
    }
}
