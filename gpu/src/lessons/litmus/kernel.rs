//! The litmus kernel: the rounds, the placement of each thread, the stress, the outcome keys.

use super::access::{
    Access, AcqRelCta, AcqRelGpu, AcqRelSys, Plain, RelAcq, Relaxed, ScCta, ScGpu, ScSys, Volatile,
};
use super::{
    ERR_BARRIER, ERR_SM_TABLE, ERR_SPIN_UP, ERR_VARIANT, LITMUS_BLOCK_THREADS, LITMUS_DIGITS,
    LITMUS_INVALID_KEY, LITMUS_KEYS, LITMUS_MAX_THREADS, LITMUS_OPS, LITMUS_REG_SLOTS,
    LITMUS_VALUES, LitmusLaunch, OP_NONE, PLACE_DIFFERENT_GPUS, PLACE_DIFFERENT_SMS,
    PLACE_SAME_BLOCK, PLACE_SAME_SM, PLACE_SAME_WARP, op_returns,
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
            if (l.gpus > 1) != (l.placement == PLACE_DIFFERENT_GPUS) {
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

/// Counts a launch the kernel cannot run (an unknown variant, or a placement that does not
/// match the number of GPUs), once.
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
            0 => body::<Plain, B>(l, barrier),
            1 => body::<Volatile, B>(l, barrier),
            2 => body::<Relaxed, B>(l, barrier),
            3 => body::<RelAcq, B>(l, barrier),
            4 => body::<AcqRelCta, B>(l, barrier),
            5 => body::<AcqRelGpu, B>(l, barrier),
            6 => body::<AcqRelSys, B>(l, barrier),
            7 => body::<ScCta, B>(l, barrier),
            8 => body::<ScGpu, B>(l, barrier),
            9 => body::<ScSys, B>(l, barrier),
            _ => refuse(l),
        }
    }
}

/// SplitMix's finalizer, 32 bits: the round's random numbers.
#[inline(always)]
fn mix(mut z: u32) -> u32 {
    z = (z ^ (z >> 16)).wrapping_mul(0x7feb_352d);
    z = (z ^ (z >> 15)).wrapping_mul(0x846c_a68b);
    z ^ (z >> 16)
}

/// One round's choices, the same in every thread.
#[derive(Clone, Copy)]
struct Round {
    /// Rotates roles among lanes, warps or blocks, and pairs different thread indices.
    rot: u32,
    /// The location permutation `slot ↦ (a·slot + b) mod 2^slot_bits` (`a` odd: a bijection).
    a: u32,
    b: u32,
}

/// The instance and role of this thread in this round, or `None` for a stress thread.
///
/// # Safety
/// `l.sm_tickets` is complete (read after the registration's grid barrier).
#[inline(always)]
unsafe fn place(
    l: &LitmusLaunch,
    threads: u32,
    smid: u32,
    ticket: u32,
    r: Round,
) -> Option<(u32, u32)> {
    let tt = l.test_blocks_per_sm;
    if smid >= l.sms || ticket >= tt || threads == 0 || threads > LITMUS_MAX_THREADS {
        return None;
    }
    let tid = thread_rank_in_block();
    let (warp, lane) = (tid / 32, tid % 32);
    let warps = LITMUS_BLOCK_THREADS / 32;
    let group = smid * tt + ticket;
    // Blocks registered on SM `s` of GPU `g`.
    let tickets_of = |g: u32, s: u32| {
        // SAFETY: `g < l.gpus` and `s < l.sms`, checked by every caller; the table is complete
        // (contract).
        unsafe { load_weak(l.sm_tickets.add((g * l.sms + s) as usize)) }
    };
    let tickets = |s: u32| tickets_of(l.gpu, s);
    let (instance, role) = match l.placement {
        PLACE_SAME_WARP => {
            let per = 32 / threads;
            let turned = (lane + r.rot) % 32;
            ((group * warps + warp) * per + turned % per, turned / per)
        }
        PLACE_SAME_BLOCK => {
            let per = warps / threads;
            let turned = (warp + r.rot) % warps;
            (group * per * 32 + (turned % per) * 32 + lane, turned / per)
        }
        PLACE_SAME_SM => {
            let per = tt / threads;
            let g = ticket / threads;
            if g >= per || tickets(smid) < (g + 1) * threads {
                return None;
            }
            let role = (ticket + r.rot) % threads;
            let pair = (tid + role * r.rot) % LITMUS_BLOCK_THREADS;
            ((smid * per + g) * LITMUS_BLOCK_THREADS + pair, role)
        }
        PLACE_DIFFERENT_SMS => {
            let first = smid / threads * threads;
            if first + threads > l.sms || (first..first + threads).any(|s| tickets(s) <= ticket) {
                return None;
            }
            let role = (smid + r.rot) % threads;
            let pair = (tid + role * r.rot) % LITMUS_BLOCK_THREADS;
            (
                ((smid / threads) * tt + ticket) * LITMUS_BLOCK_THREADS + pair,
                role,
            )
        }
        PLACE_DIFFERENT_GPUS => {
            // Role `r` on GPU `(r + rot) mod gpus`; a GPU's roles on consecutive SMs.
            let gpus = l.gpus.max(1);
            // At least 1 (`threads >= 1`), spelled so that no division can panic.
            let per_gpu = threads.div_ceil(gpus).max(1);
            let first = smid / per_gpu * per_gpu;
            if first + per_gpu > l.sms
                || (0..gpus).any(|g| (first..first + per_gpu).any(|s| tickets_of(g, s) <= ticket))
            {
                return None;
            }
            let role = (l.gpu + gpus - r.rot % gpus) % gpus + (smid - first) * gpus;
            let pair = (tid + role * r.rot) % LITMUS_BLOCK_THREADS;
            (
                ((smid / per_gpu) * tt + ticket) * LITMUS_BLOCK_THREADS + pair,
                role,
            )
        }
        _ => return None,
    };
    (role < threads && instance < l.max_instances).then_some((instance, role))
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
        let mut stress =
            mix(l.seed
                ^ (block_rank_in_grid() * LITMUS_BLOCK_THREADS + tid).wrapping_mul(0x9e37_79b9));
        for it in 0..l.iterations {
            let h = mix(l.seed ^ mix(it.wrapping_add(0x632b_e5ab)));
            let r = Round {
                rot: h & 0xff,
                a: mix(h ^ 0x5bd1_e995) | 1,
                b: mix(h.wrapping_add(1)),
            };
            let me = place(l, threads, smid, ticket, r);
            if let Some((instance, role)) = me {
                test::<A>(l, instance, role, threads, r, B::SCOPE);
            } else {
                // Stress: stores and loads all over a small array, while the testers race.
                let lane = tid % 32;
                for _ in 0..l.stress_iters {
                    stress = stress.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    let line = (stress >> 16) & (l.stress_lines - 1);
                    store_volatile(l.scratch.add((line * 32 + lane) as usize), stress);
                    let _ = load_volatile(l.scratch.add(((line ^ 1) * 32 + lane) as usize));
                }
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

/// Counts a grid barrier timeout (once per block).
#[inline(always)]
fn note_barrier_timeout(l: &LitmusLaunch) {
    if thread_rank_in_block() == 0 {
        // SAFETY: `errors` has LITMUS_ERROR_WORDS words.
        unsafe { atomic_add_device(l.errors.add(ERR_BARRIER), 1) };
    }
}

/// One tester's part of one instance: spin up with the instance's other threads, then the
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
        if threads > 1 {
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
