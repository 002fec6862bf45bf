//! The litmus kernel: the rounds, the placement of each thread, the stress, the outcome keys.

use super::access::{
    Access, AcqRelCta, AcqRelGpu, AcqRelSys, Plain, RelAcq, Relaxed, ScCta, ScGpu, ScSys, Volatile,
};
use super::place::{Round, mix, place, sm_slot};
use super::{
    ERR_BARRIER, ERR_SM_TABLE, ERR_SPIN_UP, ERR_VARIANT, LITMUS_BLOCK_THREADS, LITMUS_DIGITS,
    LITMUS_INVALID_KEY, LITMUS_KEYS, LITMUS_OPS, LITMUS_REG_SLOTS, LITMUS_VALUES, LitmusLaunch,
    OP_NONE, PLACE_DIFFERENT_GPUS, PLACE_DIFFERENT_SMS, SM_ORDER_SHUFFLED, STRESS_LOAD_LOAD,
    STRESS_LOAD_STORE, STRESS_STORE_LOAD, STRESS_STORE_STORE, VARIANT_FENCE_ACQ_REL_CTA,
    VARIANT_FENCE_ACQ_REL_GPU, VARIANT_FENCE_ACQ_REL_SYS, VARIANT_FENCE_SC_CTA,
    VARIANT_FENCE_SC_GPU, VARIANT_FENCE_SC_SYS, VARIANT_PLAIN, VARIANT_RELAXED,
    VARIANT_RELEASE_ACQUIRE, VARIANT_VOLATILE, op_returns,
};
use crate::access::{load_volatile, load_weak, store_volatile, store_weak};
use crate::atomic::{
    LoadOrder, Order, Scope, StoreOrder, atomic_add_block, atomic_add_device, fetch_add, load,
    store,
};
use crate::grid::{BarrierError, GridBarrier, GridBarrierState};
use crate::index::{block_rank_in_grid, blocks_per_grid, sm_id, thread_rank_in_block};
use crate::multi_grid::MultiGridBarrier;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;

kernel! {
    /// `l.iterations` rounds of the litmus test in `l.program` with `l.variant`'s accesses and
    /// `l.placement`, every outcome counted in `l.counts` (see the [module docs](super)). Every
    /// block must be resident: the rounds end at grid barriers on `barrier` — or, with
    /// `l.gpus > 1` (the grids of [`PLACE_DIFFERENT_GPUS`](super::PLACE_DIFFERENT_GPUS), all
    /// resident at once), on `l.multi` at system scope.
    pub unsafe fn litmus_run(l: LitmusLaunch, barrier: *mut GridBarrierState) {
        // SAFETY: the host's buffers, sized as `LitmusLaunch` says; every block resident.
        unsafe {
            if (l.gpus > 1) != (l.placement == PLACE_DIFFERENT_GPUS)
                || l.stress_pattern > STRESS_LOAD_LOAD
                || l.sm_order > SM_ORDER_SHUFFLED
                || !l.stress_lines.is_power_of_two()
            {
                refuse(&l);
            } else if l.gpus > 1 {
                let rank = l.gpu * blocks_per_grid() + block_rank_in_grid();
                variant(&l, MultiGridBarrier::from_ptr(l.multi, Scope::System, rank));
            } else {
                variant(&l, GridBarrier::from_ptr(barrier));
            }
        }
    }
}

/// Counts a launch the kernel cannot run (an unknown variant, stress pattern or order of the
/// SMs, stress lines that are not a power of two, or a placement that does not match the
/// number of GPUs), once.
#[inline(always)]
fn refuse(l: &LitmusLaunch) {
    if block_rank_in_grid() == 0 && thread_rank_in_block() == 0 {
        // SAFETY: `errors` has LITMUS_ERROR_WORDS words.
        unsafe { atomic_add_device(l.errors.add(ERR_VARIANT), 1) };
    }
}

/// The barrier that ends the rounds, and the scope of every shared access with it.
trait Rounds {
    /// [`Scope::Device`] for one grid, [`Scope::System`] for grids on several GPUs.
    const SCOPE: Scope;
    /// Waits for every block of every grid.
    fn sync(&mut self) -> Result<(), BarrierError>;
}

impl Rounds for GridBarrier {
    const SCOPE: Scope = Scope::Device;
    #[inline(always)]
    fn sync(&mut self) -> Result<(), BarrierError> {
        GridBarrier::sync(self)
    }
}

impl Rounds for MultiGridBarrier {
    const SCOPE: Scope = Scope::System;
    #[inline(always)]
    fn sync(&mut self) -> Result<(), BarrierError> {
        MultiGridBarrier::sync(self)
    }
}

/// The kernel body of `l.variant`, its rounds ending at `barrier`.
///
/// # Safety
/// As [`litmus_run`].
#[inline(always)]
unsafe fn variant<B: Rounds>(l: &LitmusLaunch, barrier: B) {
    // SAFETY: the caller's contract.
    unsafe {
        match l.variant {
            VARIANT_PLAIN => body::<Plain, B>(l, barrier),
            VARIANT_VOLATILE => body::<Volatile, B>(l, barrier),
            VARIANT_RELAXED => body::<Relaxed, B>(l, barrier),
            VARIANT_RELEASE_ACQUIRE => body::<RelAcq, B>(l, barrier),
            VARIANT_FENCE_ACQ_REL_CTA => body::<AcqRelCta, B>(l, barrier),
            VARIANT_FENCE_ACQ_REL_GPU => body::<AcqRelGpu, B>(l, barrier),
            VARIANT_FENCE_ACQ_REL_SYS => body::<AcqRelSys, B>(l, barrier),
            VARIANT_FENCE_SC_CTA => body::<ScCta, B>(l, barrier),
            VARIANT_FENCE_SC_GPU => body::<ScGpu, B>(l, barrier),
            VARIANT_FENCE_SC_SYS => body::<ScSys, B>(l, barrier),
            _ => refuse(l),
        }
    }
}

/// The address of location `loc` of `instance` this round.
#[inline(always)]
fn location(l: &LitmusLaunch, instance: u32, loc: u32, r: Round) -> *mut u32 {
    let slot =
        (instance * 2 + loc).wrapping_mul(r.a).wrapping_add(r.b) & ((1u32 << l.slot_bits) - 1);
    l.locations
        .wrapping_add(slot as usize * l.stride_words as usize)
}

/// Word `i` of the program table.
#[inline(always)]
unsafe fn word(l: &LitmusLaunch, i: u32) -> u32 {
    // SAFETY: the caller keeps `i < LITMUS_PROGRAM_WORDS`.
    unsafe { load_weak(l.program.add(i as usize)) }
}

/// The whole kernel for one variant.
///
/// # Safety
/// As [`litmus_run`].
#[inline(always)]
unsafe fn body<A: Access, B: Rounds>(l: &LitmusLaunch, mut barrier: B) {
    // SAFETY: the host's buffers (contract).
    unsafe {
        let tid = thread_rank_in_block();
        let hist: *mut u32 = dynamic_shared();
        // The histogram only: the two words after it are thread 0's, written just below.
        let mut i = tid;
        while i < LITMUS_KEYS {
            *hist.add(i as usize) = 0;
            i += LITMUS_BLOCK_THREADS;
        }
        // Registration: which SM this block is on, and how many blocks came there before it.
        if tid == 0 {
            let smid = sm_id();
            let ticket = if smid < l.sms {
                fetch_add(
                    l.sm_tickets.add((l.gpu * l.sms + smid) as usize),
                    1,
                    B::SCOPE,
                    Order::Relaxed,
                )
            } else {
                atomic_add_device(l.errors.add(ERR_SM_TABLE), 1);
                u32::MAX
            };
            *hist.add(LITMUS_KEYS as usize) = smid;
            *hist.add(LITMUS_KEYS as usize + 1) = ticket;
        }
        sync_threads();
        let (smid, ticket) = (
            *hist.add(LITMUS_KEYS as usize),
            *hist.add(LITMUS_KEYS as usize + 1),
        );
        if barrier.sync().is_err() {
            return note_barrier_timeout(l);
        }
        let threads = word(l, 0);
        let finals = word(l, 1);
        // Across SMs the block's place is its slot in the launch's order of the SMs.
        let site = if l.placement == PLACE_DIFFERENT_SMS {
            sm_slot(l, threads, smid, ticket)
        } else {
            smid
        };
        let mut stress =
            mix(l.seed
                ^ (block_rank_in_grid() * LITMUS_BLOCK_THREADS + tid).wrapping_mul(0x9e37_79b9));
        for it in 0..l.iterations {
            let r = Round::of(l.seed, it);
            let me = place(l, threads, site, ticket, r);
            if let Some((instance, role)) = me {
                // Pre-stress: the tester's own accesses to the scratch lines, just before.
                stress_scratch(l, &mut stress, l.pre_stress_iters);
                test::<A>(l, instance, role, threads, r, B::SCOPE);
            } else {
                // Stress: accesses all over a small array, while the testers race.
                stress_scratch(l, &mut stress, l.stress_iters);
            }
            if barrier.sync().is_err() {
                return note_barrier_timeout(l);
            }
            if let Some((instance, 0)) = me {
                let key = outcome_key(l, instance, threads, finals, r, B::SCOPE);
                atomic_add_block(hist.add(key as usize), 1);
                // One store each, not a loop over an array (which would live in local memory).
                store(
                    location(l, instance, 0, r),
                    0,
                    B::SCOPE,
                    StoreOrder::Relaxed,
                );
                store(
                    location(l, instance, 1, r),
                    0,
                    B::SCOPE,
                    StoreOrder::Relaxed,
                );
                store(
                    l.start.add(instance as usize),
                    0,
                    B::SCOPE,
                    StoreOrder::Relaxed,
                );
            }
            if barrier.sync().is_err() {
                return note_barrier_timeout(l);
            }
        }
        sync_threads();
        let mut k = tid;
        while k < LITMUS_KEYS {
            let c = *hist.add(k as usize);
            if c != 0 {
                atomic_add_device(l.counts.add(k as usize), u64::from(c));
            }
            k += LITMUS_BLOCK_THREADS;
        }
    }
}

/// `iters` accesses of `l.stress_pattern` to the scratch lines, continuing the thread's random
/// sequence `state`: each picks a line at random (every lane its own), makes the pattern's first
/// access to its word of the line and the second to its word of the neighbouring line
/// (`line ^ 1`). A load's value is unused, but a volatile load is made all the same.
///
/// # Safety
/// `l.scratch` has `l.stress_lines * 32` words and `l.stress_lines` is a power of two (checked
/// by [`litmus_run`]).
// ANCHOR: stress
#[inline(always)]
unsafe fn stress_scratch(l: &LitmusLaunch, state: &mut u32, iters: u32) {
    let lane = thread_rank_in_block() % 32;
    for _ in 0..iters {
        *state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let line = (*state >> 16) & (l.stress_lines - 1);
        // SAFETY: both words are inside the scratch lines (contract).
        unsafe {
            let first = l.scratch.add((line * 32 + lane) as usize);
            let second = l.scratch.add(((line ^ 1) * 32 + lane) as usize);
            match l.stress_pattern {
                STRESS_STORE_STORE => {
                    store_volatile(first, *state);
                    store_volatile(second, *state);
                }
                STRESS_STORE_LOAD => {
                    store_volatile(first, *state);
                    let _ = load_volatile(second);
                }
                STRESS_LOAD_STORE => {
                    let _ = load_volatile(first);
                    store_volatile(second, *state);
                }
                _ => {
                    let _ = load_volatile(first);
                    let _ = load_volatile(second);
                }
            }
        }
    }
}
// ANCHOR_END: stress

/// Counts a grid barrier timeout (once per block).
#[inline(always)]
fn note_barrier_timeout(l: &LitmusLaunch) {
    if thread_rank_in_block() == 0 {
        // SAFETY: `errors` has LITMUS_ERROR_WORDS words.
        unsafe { atomic_add_device(l.errors.add(ERR_BARRIER), 1) };
    }
}

/// One tester's part of one instance: spin up with the instance's other threads (unless
/// `l.spin_up` is 0: then they start from the round's grid barrier), then the
/// role's two operations with the variant's fence between, then the loaded values to `regs`;
/// every shared access at scope `s`.
///
/// # Safety
/// As [`litmus_run`]; `instance < l.max_instances`, `role < threads`.
// ANCHOR: test
#[inline(always)]
unsafe fn test<A: Access>(
    l: &LitmusLaunch,
    instance: u32,
    role: u32,
    threads: u32,
    r: Round,
    s: Scope,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let base = 2 + role * LITMUS_OPS * 3;
        let (k0, l0, v0) = (word(l, base), word(l, base + 1), word(l, base + 2));
        let (k1, l1, v1) = (word(l, base + 3), word(l, base + 4), word(l, base + 5));
        let (x, y) = (location(l, instance, 0, r), location(l, instance, 1, r));
        let p0 = if l0 == 0 { x } else { y };
        let p1 = if l1 == 0 { x } else { y };
        if threads > 1 && l.spin_up != 0 {
            let start = l.start.add(instance as usize);
            fetch_add(start, 1, s, Order::Relaxed);
            let mut polls = 0;
            while load(start, s, LoadOrder::Relaxed) < threads {
                polls += 1;
                if polls > l.spin_polls {
                    atomic_add_device(l.errors.add(ERR_SPIN_UP), 1);
                    break;
                }
            }
        }
        let got0 = A::op(k0, p0, v0, s);
        let mut got1 = 0;
        if k1 != OP_NONE {
            A::between();
            got1 = A::op(k1, p1, v1, s);
        }
        let regs = l
            .regs
            .add((instance * LITMUS_REG_SLOTS + role * LITMUS_OPS) as usize);
        store_weak(regs, got0);
        store_weak(regs.add(1), got1);
    }
}
// ANCHOR_END: test

/// The outcome of `instance` this round as a key: the values its loads and read-modify-writes
/// read (thread by thread, operation by operation), then the final values of the locations in `finals`, as base-3
/// digits; [`LITMUS_INVALID_KEY`] if any value is not 0, 1 or 2. The final values are loaded at
/// scope `s`.
///
/// # Safety
/// As [`test`]; after the round's grid barrier.
#[inline(always)]
unsafe fn outcome_key(
    l: &LitmusLaunch,
    instance: u32,
    threads: u32,
    finals: u32,
    r: Round,
    s: Scope,
) -> u32 {
    // SAFETY: the caller's contract.
    unsafe {
        let mut key = 0;
        let mut weight = 1;
        let mut digits = 0;
        let mut digit = |v: u32| {
            digits += 1;
            if v >= LITMUS_VALUES || digits > LITMUS_DIGITS {
                key = LITMUS_INVALID_KEY;
                weight = 0;
            } else if key != LITMUS_INVALID_KEY {
                key += v * weight;
                weight *= LITMUS_VALUES;
            }
        };
        for t in 0..threads {
            for k in 0..LITMUS_OPS {
                if op_returns(word(l, 2 + (t * LITMUS_OPS + k) * 3)) {
                    digit(load_weak(l.regs.add(
                        (instance * LITMUS_REG_SLOTS + t * LITMUS_OPS + k) as usize,
                    )));
                }
            }
        }
        for loc in 0..2 {
            if finals & (1 << loc) != 0 {
                digit(load(location(l, instance, loc, r), s, LoadOrder::Relaxed));
            }
        }
        key
    }
}
