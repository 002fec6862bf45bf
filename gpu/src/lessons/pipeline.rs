//! Producer/consumer pipelines: one thread streams tiles into a ring of shared-memory stages
//! with bulk copies while the rest of the block works on the stages that have landed — and the
//! two ways to get the hand-over wrong.
//!
//! Beyond the sources (Hopper, sm_90): [`crate::mbarrier`], [`crate::async_copy`], and
//! [`crate::pipeline::BulkRing`], which packages the protocol below (the same arrivals: one per
//! consumer thread, each after a proxy fence) for the library's kernels
//! (the byte histogram's [`histogram_pipeline`](super::histogram::histogram_pipeline), the
//! reduction's [`reduce_pipeline_sum_f32`](super::reduce::reduce_pipeline_sum_f32)). Here the
//! protocol is written out barrier by barrier, so that each kernel can drop one wait.
//!
//! Every kernel transforms `n` words: `out[i] = mix(x[i], work)` ([`pipeline_mix`], `work`
//! dependent operations per word, so that consumers take time). The input is cut into tiles of
//! [`LESSON_TILE_WORDS`]; block `b` takes tiles `b`, `b + gridDim.x`, …; its fill `k` goes to
//! stage `k mod 2` of a two-stage ring. Warp 0's lane 0 is the **producer**, warps 1… the
//! **consumers**. Each stage has a **full** barrier (count 1: the producer's
//! `arrive.expect_tx`, completed by the copy's bytes) and an **empty** barrier (one arrival per
//! consumer thread, each after its reads of the stage and a `fence.proxy.async`).
//!
//! | kernel | producer, fill `k` of stage `s` | consumers, fill `k` | what happens |
//! |---|---|---|---|
//! | [`pipeline_transform`] | wait *empty*(s) for fill `k − 2`; expect bytes on *full*(s); copy | wait *full*(s); read; arrive on *empty*(s) | correct: each tile is read after it lands and overwritten after it is read |
//! | [`pipeline_no_full_wait`] | as above (and its own copy of fill `k − 2` landed) | read at once; arrive on *empty*(s) | wrong words: a consumer reads the stage before the copy lands (the previous tile's words, or nothing yet); and the consumers, held back by nothing, run two fills ahead of the producer, which then waits for an empty phase that already passed — a bounded wait, then `err` |
//! | [`pipeline_no_empty_wait`] | wait only for its *own* copy of fill `k − 2` to land (the full phase), not for the consumers; copy | as in the correct kernel | wrong words: the copy overwrites a stage the consumers are still reading; and consumers that fall two fills behind wait for a phase that passed — a bounded wait, then `err` |
//!
//! Every wait is bounded by `timeout_ns`; a timed-out wait sets `err` (and the thread stops).
//! Two rules hold in every kernel, the broken ones included, because breaking them is not a
//! wrong answer but undefined behaviour: a full barrier is re-armed (`arrive.expect_tx`) only
//! after its previous phase completed, and before a block exits its producer waits for its last
//! copies to land — a bulk copy must not write into the shared memory of a block that has gone
//! (on an H100, breaking either failed the launch). Arguments: `(x, out, n, work,
//! timeout_ns, err)`, `x` and `out` 16-byte aligned; launch with [`LESSON_THREADS_PER_BLOCK`]
//! (any two or more whole warps) and [`lesson_shared_bytes`].

use crate::async_copy::{cp_async_bulk_global_to_shared_unchecked, fence_proxy_async_shared};
use crate::atomic::{Order, Scope, fetch_or};
use crate::index::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::mbarrier::{BarrierScope, MBarrier, Parity};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::warp::{WARP_SIZE, any_sync, lane_id, sync_warp};

/// Words per tile: 4 KiB.
pub const LESSON_TILE_WORDS: u32 = 1024;

/// Stages in the lesson's ring: two, the fewest that overlap a copy with reading.
pub const LESSON_STAGES: u32 = 2;

/// Threads per block the host launches with: a producer warp and four consumer warps.
pub const LESSON_THREADS_PER_BLOCK: u32 = 5 * WARP_SIZE;

/// Bytes before the stages: two barriers per stage, padded to 16 (the stages' alignment).
const BARRIER_BYTES: u32 = 16 * LESSON_STAGES;

/// Shared memory of the lesson's kernels: the barriers and the stages.
pub const fn lesson_shared_bytes() -> u32 {
    BARRIER_BYTES + LESSON_STAGES * LESSON_TILE_WORDS * 4
}

/// What the kernels compute from a word: `work` rounds of a linear congruential step.
#[inline(always)]
pub fn pipeline_mix(mut x: u32, work: u32) -> u32 {
    for _ in 0..work {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    x
}

/// Which wait a kernel leaves out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hand {
    /// Both waits: correct.
    Both,
    /// The consumers do not wait for the copy to land.
    NoFullWait,
    /// The producer waits for its own copy, not for the consumers' reads.
    NoEmptyWait,
}

/// The ring in the block's dynamic shared memory: `2 × LESSON_STAGES` barriers (the full ones,
/// then the empty ones), then `LESSON_STAGES` tiles.
#[derive(Clone, Copy)]
struct Ring {
    base: *mut u8,
}

impl Ring {
    /// Stage `s`'s full barrier: the producer's `arrive.expect_tx`, completed by the copy.
    #[inline(always)]
    fn full(self, s: u32) -> MBarrier {
        // SAFETY: word `s` of the barriers, inside `lesson_shared_bytes()`.
        unsafe { MBarrier::from_generic(self.base.cast::<u64>().add(s as usize)) }
    }

    /// Stage `s`'s empty barrier: one arrival per consumer thread.
    #[inline(always)]
    fn empty(self, s: u32) -> MBarrier {
        // SAFETY: word `LESSON_STAGES + s` of the barriers.
        unsafe { MBarrier::from_generic(self.base.cast::<u64>().add((LESSON_STAGES + s) as usize)) }
    }

    /// Stage `s < LESSON_STAGES`, after the barriers.
    #[inline(always)]
    fn stage(self, s: u32) -> *mut u8 {
        // SAFETY: inside `lesson_shared_bytes()`.
        unsafe {
            self.base
                .add((BARRIER_BYTES + s * LESSON_TILE_WORDS * 4) as usize)
        }
    }
}

/// What the producer and the consumers of a block agree on: the input, its tiles, this block's
/// share of them, the bound of every wait and the error word.
#[derive(Clone, Copy)]
struct Plan {
    x: Ptr<u32>,
    n: usize,
    /// This block's first tile, and the distance to its next.
    first: usize,
    step: usize,
    /// This block's fills, the same count on both sides.
    fills: u32,
    timeout_ns: u64,
    err: *mut u32,
    hand: Hand,
}

impl Plan {
    /// Words of tile `t`: a whole tile but the input's last.
    #[inline(always)]
    fn words_of(&self, t: usize) -> usize {
        (self.n - t * LESSON_TILE_WORDS as usize).min(LESSON_TILE_WORDS as usize)
    }

    /// Marks the launch failed.
    #[inline(always)]
    fn fail(&self) {
        // SAFETY: `err` is the launch's error word.
        unsafe { fetch_or(self.err, 1, Scope::Device, Order::Relaxed) };
    }
}

/// The pipeline of the module's table, with the waits of `hand`.
///
/// # Safety
/// `x` and `out` hold `n` words, 16-byte aligned; `err` one word touched only atomically; the
/// launch gave [`lesson_shared_bytes`]; blocks of two or more whole warps.
#[inline(always)]
unsafe fn transform(
    x: *const u32,
    out: *mut u32,
    n: u64,
    work: u32,
    timeout_ns: u64,
    err: *mut u32,
    hand: Hand,
) {
    let threads = block_dim_x();
    if threads < 2 * WARP_SIZE || !threads.is_multiple_of(WARP_SIZE) {
        if thread_idx_x() == 0 {
            // SAFETY: `err` is the launch's error word.
            unsafe { fetch_or(err, 1, Scope::Device, Order::Relaxed) };
        }
        return;
    }
    let n = n as usize;
    let tile = LESSON_TILE_WORDS as usize;
    // SAFETY (the layout): 2 × LESSON_STAGES barriers, then LESSON_STAGES tiles, within
    // `lesson_shared_bytes()`.
    let ring = Ring {
        base: unsafe { dynamic_shared::<u8>() },
    };
    // Every consumer thread arrives on an empty barrier once per fill.
    let consumers = threads - WARP_SIZE;
    if thread_idx_x() == 0 {
        for s in 0..LESSON_STAGES {
            // SAFETY: the block's own barriers, before anyone uses them.
            unsafe {
                ring.full(s).init(1);
                ring.empty(s).init(consumers);
            }
        }
        fence_proxy_async_shared(); // the copy engine sees the barriers initialized
    }
    sync_threads();

    let tiles = n.div_ceil(tile);
    let (first, step) = (block_idx_x() as usize, grid_dim_x() as usize);
    let mut plan = Plan {
        x: Ptr::new(x.cast_mut()),
        n,
        first,
        step,
        fills: 0,
        timeout_ns,
        err,
        hand,
    };
    let mut t = first;
    while t < tiles {
        plan.fills += 1;
        t += step;
    }
    if thread_idx_x() < WARP_SIZE {
        if lane_id() == 0 {
            produce(ring, &plan);
        }
        sync_warp(u32::MAX);
    } else {
        consume(ring, &plan, Ptr::new(out), work);
    }
}

// ANCHOR: ring
/// The producer (warp 0's lane 0): for each fill, the wait of `plan.hand` before a stage is
/// refilled, the expected bytes on its full barrier, the bulk copy; then the last copies drained.
#[inline(always)]
fn produce(ring: Ring, plan: &Plan) {
    let (tile, timeout_ns) = (LESSON_TILE_WORDS as usize, plan.timeout_ns);
    let mut t = plan.first;
    let mut issued = 0u32;
    for k in 0..plan.fills {
        let (s, round) = (k % LESSON_STAGES, k / LESSON_STAGES);
        if round > 0 {
            // Before refilling stage `s`: the correct kernel waits until the consumers have
            // read fill `k - 2` (its empty phase `round - 1`), which they did after it landed.
            // The broken kernels wait for the copy of fill `k - 2` to land (its full phase
            // `round - 1`): re-arming a full barrier whose phase is still open would be an
            // arrival the phase does not expect. The one without the empty wait stops there;
            // the one without the full wait also waits for the readers, since only they skip a
            // wait.
            let mut landed = Parity::of_phase(round - 1);
            let mut read = Parity::of_phase(round - 1);
            // SAFETY: the block's own, initialized barriers.
            let ok = unsafe {
                match plan.hand {
                    Hand::Both => {
                        ring.empty(s)
                            .wait_parity(&mut read, BarrierScope::Block, timeout_ns)
                    }
                    Hand::NoEmptyWait => {
                        ring.full(s)
                            .wait_parity(&mut landed, BarrierScope::Block, timeout_ns)
                    }
                    Hand::NoFullWait => ring
                        .empty(s)
                        .wait_parity(&mut read, BarrierScope::Block, timeout_ns)
                        .and_then(|()| {
                            ring.full(s)
                                .wait_parity(&mut landed, BarrierScope::Block, timeout_ns)
                        }),
                }
            };
            if ok.is_err() {
                plan.fail();
                break;
            }
        }
        let bytes = (plan.words_of(t) * 4) as u32;
        // Whole 16-byte units by copy; the tail words the consumers read from `x`.
        let bulk = bytes & !15;
        // SAFETY: the barrier is the block's; the copy's source is inside `x` (16-byte
        // aligned, `bulk` a multiple of 16 ≤ the stage), its target the stage.
        unsafe {
            let _ = ring.full(s).arrive_expect_tx(bulk, BarrierScope::Block);
            if bulk > 0 {
                cp_async_bulk_global_to_shared_unchecked(
                    ring.stage(s),
                    plan.x.add(t * tile).as_ptr().cast(),
                    bulk,
                    ring.full(s),
                );
            }
        }
        issued += 1;
        t += plan.step;
    }
    // Drain: every copy issued lands before the block exits (the last issued fill of each
    // stage; the earlier ones landed before their stage was re-armed).
    for k in issued.saturating_sub(LESSON_STAGES)..issued {
        let mut parity = Parity::of_phase(k / LESSON_STAGES);
        // SAFETY: the block's own, initialized barrier.
        let landed = unsafe {
            ring.full(k % LESSON_STAGES)
                .wait_parity(&mut parity, BarrierScope::Block, timeout_ns)
        };
        if landed.is_err() {
            plan.fail();
        }
    }
}

/// A consumer (warps 1…): for each fill, the wait for the tile to land (skipped by the broken
/// kernel), the tile's words transformed into `out`, then its arrival on the stage's empty
/// barrier.
#[inline(always)]
fn consume(ring: Ring, plan: &Plan, out: Ptr<u32>, work: u32) {
    let tile = LESSON_TILE_WORDS as usize;
    let me = (thread_idx_x() - WARP_SIZE) as usize;
    let consumers = (block_dim_x() - WARP_SIZE) as usize;
    let mut t = plan.first;
    for k in 0..plan.fills {
        let (s, round) = (k % LESSON_STAGES, k / LESSON_STAGES);
        let landed = if plan.hand == Hand::NoFullWait {
            true // the mistake: read whatever the stage holds now
        } else {
            let mut parity = Parity::of_phase(round);
            // SAFETY: the block's own, initialized barrier.
            unsafe {
                ring.full(s)
                    .wait_parity(&mut parity, BarrierScope::Block, plan.timeout_ns)
            }
            .is_ok()
        };
        // The warp leaves together: one lane's timeout is the whole warp's.
        if any_sync(u32::MAX, !landed) {
            if !landed {
                plan.fail();
            }
            break;
        }
        let words = plan.words_of(t);
        let bulk_words = words & !3;
        let src = Ptr::new(ring.stage(s).cast::<u32>());
        let mut i = me;
        while i < words {
            // SAFETY: `i < words`: the stage's word `i`, or (past the copied bytes) the tail
            // word of `x`; `out[t * tile + i]` is this thread's alone.
            unsafe {
                let v = if i < bulk_words {
                    src.add(i).load()
                } else {
                    plan.x.add(t * tile + i).load()
                };
                let mixed = pipeline_mix(v, work);
                out.add(t * tile + i).store(mixed);
            }
            i += consumers;
        }
        // This thread's reads of the stage (generic proxy) before the copy engine's next writes
        // into it (async proxy), then its own release: the producer's acquire wait sees every
        // consumer's reads done. (One lane per warp after `sync_warp` is as sound, but
        // racecheck follows only each thread's own arrival; `BulkRing::consume_tiles`.)
        fence_proxy_async_shared();
        // SAFETY: the block's own, initialized barrier.
        let _ = unsafe { ring.empty(s).arrive(BarrierScope::Block) };
        t += plan.step;
    }
}
// ANCHOR_END: ring

macro_rules! lesson_kernels {
    ($($(#[$doc:meta])* $name:ident: $hand:expr;)*) => {$(
        kernel! {
            $(#[$doc])*
            pub unsafe fn $name(x: *const u32, out: *mut u32, n: u64, work: u32, timeout_ns: u64, err: *mut u32) {
                // SAFETY: forwarded to the launch's contract.
                unsafe { transform(x, out, n, work, timeout_ns, err, $hand) }
            }
        }
    )*};
}

lesson_kernels! {
    /// The pipeline, correct: the consumers wait for a tile to land (full), the producer for
    /// the consumers to have read a stage before refilling it (empty).
    pipeline_transform: Hand::Both;
    /// The consumers do not wait on the full barrier: they read stages before the copies land.
    pipeline_no_full_wait: Hand::NoFullWait;
    /// The producer waits for its own previous copy to land, not for the consumers: it
    /// overwrites stages they are still reading.
    pipeline_no_empty_wait: Hand::NoEmptyWait;
}
