//! Litmus tests: the memory model made visible — many instances of one small racing program at once, under stress, every
//! outcome counted — how the memory model is tested on the hardware.
//!
//! A litmus test is a few threads of one or two loads or stores each (MP, SB, LB, …, as the
//! literature names them), run so that their accesses race, with the question: which final
//! values can the loads see? One launch runs `iterations` rounds; in each, every tester thread
//! plays one role of one instance of the test:
//!
//! 1. its role's operations are read from the program table (so the racing section is only the
//!    accesses, the variant's fence and a select);
//! 2. it makes `pre_stress_iters` accesses of the stress pattern itself (pre-stress), then its
//!    instance's threads meet at a spin-up barrier (a counter per instance), so they start
//!    together (unless `spin_up` is 0);
//! 3. each performs its loads and stores — plain, volatile, relaxed or release/acquire, with
//!    the variant's fence between — on the instance's two locations, whose addresses a
//!    permutation that changes every round scatters over a large array, `stride_words` apart;
//! 4. while the other threads of the launch (whole blocks, and lanes the test leaves idle)
//!    stress the memory system with `stress_iters` accesses each, in one of four patterns
//!    (store-store, store-load, load-store, load-load), to a small scratch array;
//! 5. after a grid barrier, role 0 of each instance encodes what the loads saw and the final
//!    values as an outcome key and counts it in its block's shared histogram, and zeroes the
//!    locations for the next round; a second grid barrier ends the round.
//!
//! Where the threads of an instance run is the *placement*: lanes of one warp, warps of one
//! block, blocks on one SM (grouped by `%smid`), blocks on different SMs, or grids on different
//! GPUs (one grid per GPU, the locations in one GPU's memory, everything at system scope).
//! Blocks register their SM at the start; a block with no complete group becomes a stress block.
//! Across SMs, which SMs form an instance's group is the *order of the SMs*: consecutive ids
//! (on NVIDIA GPUs mostly the two SMs of one TPC), ids far apart, or a new random permutation
//! every round (`SM_ORDER_*`).
//!
//! These are the literature's stressing parameters (Kirkham et al., OOPSLA 2020; GPUHarbor,
//! ISSTA 2023): thread placement and its shuffling, testing and stressing workgroups, memory
//! stride, stress pattern and iterations, pre-stress, a barrier before the test. The host's
//! `gridsync_cli::litmus::Stress` holds them, and `gridsync litmus --tune` searches them.
//!
//! Source: the method of Alglave et al. (ASPLOS 2015), Sorensen & Donaldson (PLDI 2016) and
//! Kirkham et al. (2021): memory stress, randomized locations and thread roles, a spin-up
//! barrier, many instances per launch.

//!
//! # The sources' pitfalls, as litmus tests
//!
//! Each pitfall the sources warn about (or fall into) is a litmus shape, run by the same
//! kernel (`gridsync litmus --test MP+lock`, …); the host's catalogue (`gridsync_cli::litmus`)
//! holds the shapes and what the PTX model says of each outcome:
//!
//! | pitfall | where | shape | what goes wrong | the fix |
//! |---|---|---|---|---|
//! | the lock without `threadfence` | [`locks::lock_unfenced`](super::locks::lock_unfenced); the CUDA lock blog, Numba part 4 | MP+lock: data, `atomicExch` (unlock) ‖ `atomicCAS` (lock), data | the lock is taken and the data read stale | a fence on each side ([`locks::lock_fenced`](super::locks::lock_fenced)), or release/acquire |
//! | the grid barrier's counter | [`barrier`](super::barrier); the article | MP+atomic: data, `atomicAdd` (arrive) ‖ poll the count, data | the arrival is seen and the data read stale | `threadfence` before arriving and after the spin |
//! | the plain spin | [`barrier`](super::barrier) (`xpx_plain_spin`) | CoRR's cousin: a plain load polled | the load is made once and never again | a `volatile` (relaxed) load, then a fence |
//! | the slot read after `atomicAdd` | [`neighbor`](super::neighbor); CUDA book 9.3 | slot-read: `atomicAdd(&n, 1)`, `slot = n` ‖ the same | two threads take the same slot — with no weak memory at all | `slot = atomicAdd(&n, 1)` (slot-ret) |
//!
//! The rates measured on an H100 and across two H200s are in `docs/litmus.md`. On the
//! simulator's weak memory (`gridsync litmus --simulate --weak`, and for whole kernels
//! [`sim::weak::scoped`](crate::sim::weak::scoped)) the same shapes show their weak outcomes
//! without a GPU, and the lock and barrier lessons fail exactly where they lack a fence.

mod access;
mod kernel;
mod place;

use crate::multi_grid::MultiGridBarrierState;

pub use kernel::litmus_run;
pub use place::SmGroups;

/// Threads per block of the litmus kernel (four warps: at 64 registers a thread, eight blocks fit
/// on an SM, enough for four-thread tests placed in four blocks of one SM, and stress blocks).
pub const LITMUS_BLOCK_THREADS: u32 = 128;
/// The most threads a test has (IRIW's four).
pub const LITMUS_MAX_THREADS: u32 = 4;
/// Operations per thread in the program table.
pub const LITMUS_OPS: u32 = 2;
/// Values an outcome digit may take: 0 (initial), 1 and 2 (stored). Anything else is a bug.
pub const LITMUS_VALUES: u32 = 3;
/// The most digits an outcome has (registers, then final values).
pub const LITMUS_DIGITS: u32 = 6;
/// The key of an outcome in which some value was not 0, 1 or 2.
pub const LITMUS_INVALID_KEY: u32 = 729;
/// Outcome keys: 3⁶ digit combinations and the invalid key.
pub const LITMUS_KEYS: u32 = LITMUS_INVALID_KEY + 1;
/// Dynamic shared memory of a block: its outcome histogram and two words for its SM and ticket.
pub const LITMUS_SHARED_BYTES: u32 = (LITMUS_KEYS + 2) * 4;
/// Words of the program table: thread count, the mask of locations whose final values count,
/// then (kind, location, value) for each thread's two operations.
pub const LITMUS_PROGRAM_WORDS: u32 = 2 + LITMUS_MAX_THREADS * LITMUS_OPS * 3;
/// Register slots per instance: one per (thread, operation).
pub const LITMUS_REG_SLOTS: u32 = LITMUS_MAX_THREADS * LITMUS_OPS;

/// An operation slot with nothing in it.
pub const OP_NONE: u32 = 0;
/// A store of the slot's value.
pub const OP_STORE: u32 = 1;
/// A load into the slot's register.
pub const OP_LOAD: u32 = 2;
/// `atomicAdd` of the slot's value, the old value into the register.
pub const OP_ADD: u32 = 3;
/// An atomic add of the slot's value that returns nothing (`red.add`).
pub const OP_RED: u32 = 4;
/// `atomicExch` of the slot's value, the old value into the register.
pub const OP_EXCH: u32 = 5;
/// `atomicCAS(p, 1, value)`, the old value into the register (1: it swapped).
pub const OP_CAS: u32 = 6;

/// Whether an operation of kind `kind` writes a register (a digit of the outcome).
pub const fn op_returns(kind: u32) -> bool {
    matches!(kind, OP_LOAD | OP_ADD | OP_EXCH | OP_CAS)
}

/// The error counters: `errors[ERR_BARRIER]` grid barrier timeouts, `[ERR_SPIN_UP]` spin-up
/// barriers given up, `[ERR_SM_TABLE]` blocks whose `%smid` is past the table, `[ERR_VARIANT]`
/// launches with an unknown variant, placement, stress pattern or order of the SMs.
pub const LITMUS_ERROR_WORDS: u32 = 4;
/// See [`LITMUS_ERROR_WORDS`].
pub const ERR_BARRIER: usize = 0;
/// See [`LITMUS_ERROR_WORDS`].
pub const ERR_SPIN_UP: usize = 1;
/// See [`LITMUS_ERROR_WORDS`].
pub const ERR_SM_TABLE: usize = 2;
/// See [`LITMUS_ERROR_WORDS`].
pub const ERR_VARIANT: usize = 3;

/// Stress pattern: two stores (to a line and its neighbour).
pub const STRESS_STORE_STORE: u32 = 0;
/// Stress pattern: a store, then a load.
pub const STRESS_STORE_LOAD: u32 = 1;
/// Stress pattern: a load, then a store.
pub const STRESS_LOAD_STORE: u32 = 2;
/// Stress pattern: two loads.
pub const STRESS_LOAD_LOAD: u32 = 3;

/// Order of the SMs at [`PLACE_DIFFERENT_SMS`]: an instance's SMs have consecutive `%smid`.
pub const SM_ORDER_ADJACENT: u32 = 0;
/// An instance's SMs are `sms / threads` ids apart.
pub const SM_ORDER_SPREAD: u32 = 1;
/// A new random permutation of the SMs every round.
pub const SM_ORDER_SHUFFLED: u32 = 2;

/// `LitmusLaunch::variant`: plain loads and stores.
pub const VARIANT_PLAIN: u32 = 0;
/// Volatile loads and stores.
pub const VARIANT_VOLATILE: u32 = 1;
/// Relaxed loads and stores at the placement's scope.
pub const VARIANT_RELAXED: u32 = 2;
/// Release stores, acquire loads.
pub const VARIANT_RELEASE_ACQUIRE: u32 = 3;
/// Relaxed accesses, `fence.acq_rel.cta` between.
pub const VARIANT_FENCE_ACQ_REL_CTA: u32 = 4;
/// Relaxed accesses, `fence.acq_rel.gpu` between.
pub const VARIANT_FENCE_ACQ_REL_GPU: u32 = 5;
/// Relaxed accesses, `fence.acq_rel.sys` between.
pub const VARIANT_FENCE_ACQ_REL_SYS: u32 = 6;
/// Relaxed accesses, `fence.sc.cta` between.
pub const VARIANT_FENCE_SC_CTA: u32 = 7;
/// Relaxed accesses, `fence.sc.gpu` between.
pub const VARIANT_FENCE_SC_GPU: u32 = 8;
/// Relaxed accesses, `fence.sc.sys` between.
pub const VARIANT_FENCE_SC_SYS: u32 = 9;

/// The instance's threads in one warp.
pub const PLACE_SAME_WARP: u32 = 0;
/// In different warps of one block.
pub const PLACE_SAME_BLOCK: u32 = 1;
/// In different blocks on one SM.
pub const PLACE_SAME_SM: u32 = 2;
/// In blocks on different SMs.
pub const PLACE_DIFFERENT_SMS: u32 = 3;
/// On different GPUs: one grid per GPU, `gpus` grids at once, the locations in one GPU's memory
/// mapped into the others. Role `r` runs on GPU `(r + rot) mod gpus`; a GPU with several roles
/// of an instance runs them on different SMs. The accesses, read-modify-writes and the rounds'
/// barrier are at system scope (`.sys`, the narrowest holding both threads); the fences keep
/// the scope their variant names.
pub const PLACE_DIFFERENT_GPUS: u32 = 4;

/// Everything one litmus launch needs. The host sizes every buffer; see each field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LitmusLaunch {
    /// [`LITMUS_PROGRAM_WORDS`] words.
    pub program: *const u32,
    /// `(1 << slot_bits) * stride_words` words, zero before the launch (and zero after it).
    pub locations: *mut u32,
    /// `max_instances` spin-up counters, zero before the launch (and after).
    pub start: *mut u32,
    /// `max_instances * LITMUS_REG_SLOTS` words.
    pub regs: *mut u32,
    /// `stress_lines * 32` words.
    pub scratch: *mut u32,
    /// `gpus × sms` counters, zero before the launch: blocks registered per SM of each GPU.
    pub sm_tickets: *mut u32,
    /// [`LITMUS_KEYS`] outcome counts, added to.
    pub counts: *mut u64,
    /// [`LITMUS_ERROR_WORDS`] error counters, added to.
    pub errors: *mut u32,
    /// Which accesses and fences: `VARIANT_*`.
    pub variant: u32,
    /// `PLACE_*`.
    pub placement: u32,
    /// Rounds in this launch.
    pub iterations: u32,
    /// Seeds the permutations of this launch.
    pub seed: u32,
    /// Entries of `sm_tickets`: blocks on an SM at or past it only stress.
    pub sms: u32,
    /// Blocks per SM that test (by registration order); later ones stress.
    pub test_blocks_per_sm: u32,
    /// log2 of the number of location slots.
    pub slot_bits: u32,
    /// Words between two location slots (32: one 128-byte line each).
    pub stride_words: u32,
    /// Accesses each stress thread makes per round.
    pub stress_iters: u32,
    /// Lines of the scratch array the stress threads hammer (a power of two).
    pub stress_lines: u32,
    /// How each stress access pairs its two accesses: `STRESS_*`.
    pub stress_pattern: u32,
    /// Stress accesses each tester makes before its spin-up, every round (0: none).
    pub pre_stress_iters: u32,
    /// How the SMs form an instance's group at [`PLACE_DIFFERENT_SMS`]: `SM_ORDER_*`.
    pub sm_order: u32,
    /// 1: the instance's threads meet at a spin-up barrier before their accesses; 0: they start
    /// from the round's grid barrier.
    pub spin_up: u32,
    /// Instances the buffers have room for: `sms * test_blocks_per_sm * LITMUS_BLOCK_THREADS`.
    pub max_instances: u32,
    /// Polls of the spin-up barrier before giving up on it.
    pub spin_polls: u32,
    /// This grid's GPU among the `gpus` running the launch together (0 for one GPU).
    pub gpu: u32,
    /// Grids running the launch together, one per GPU: 1, or with [`PLACE_DIFFERENT_GPUS`] 2
    /// or more — then every grid has the same number of blocks, `locations`, `start`, `regs`,
    /// `scratch` and `sm_tickets` are one GPU's memory mapped into the others (`program`,
    /// `counts` and `errors` are each GPU's own), and the rounds end at `multi`.
    pub gpus: u32,
    /// The rounds' barrier across the grids (system scope) where `gpus > 1`; else unused.
    pub multi: *mut MultiGridBarrierState,
}
