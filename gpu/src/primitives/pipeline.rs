//! A producer/consumer pipeline in one block: a ring of shared-memory stages that one producer
//! thread fills with bulk copies from global memory while the block's consumer threads read the
//! stages filled before (sm_90).
//!
//! Each stage has two [`MBarrier`]s. **Full** (count 1): the producer arrives once with the
//! stage's byte count (`arrive.expect_tx`) and starts a bulk copy that completes those bytes on
//! the same barrier; its phase ends when the copy has landed, and the consumers wait on it.
//! **Empty** (count = the consumers' arrivals): each consumer arrives when it has read the stage;
//! the producer waits on it before it copies into the stage again. Fill `k` of a block (`k`
//! counting from 0) goes to stage `k mod STAGES` and is that stage's `k / STAGES`-th phase, so
//! both sides derive every parity from `k` alone: nothing to keep in step but the count of fills.
//!
//! While the consumers read stage `s`, the copies of the next `STAGES - 1` fills are in flight:
//! the copy engine, not the consumers' registers, holds the bytes in flight, so a block can keep
//! tens of KiB outstanding with one issuing thread.
//!
//! CUDA: `cuda::pipeline` with `cuda::memcpy_async`, or CUTLASS's `PipelineTmaAsync` (a full and
//! an empty barrier per stage). PTX: `mbarrier.init`, `mbarrier.arrive.expect_tx`,
//! `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`,
//! `mbarrier.try_wait.parity`, `mbarrier.arrive`, `fence.proxy.async.shared::cta`.
//!
//! ```ignore
//! // In a kernel of 1 + C warps: warp 0 produces, the others consume. The bound of the waits,
//! // `timeout_ns`, is the kernel's parameter: the host passes it (stretched under a sanitizer).
//! let Some(ring) = (unsafe { BulkRing::<4>::for_block(base, STAGE_BYTES, err) }) else { return };
//! sync_threads();
//! if thread_idx_x() < 32 {
//!     unsafe { ring.produce_tiles(src, bytes, timeout_ns, err) };
//! } else {
//!     unsafe { ring.consume_tiles(bytes, timeout_ns, err, |stage, len| { /* read */ }) };
//! }
//! // Or by hand: `produce(k, …)`, `consume(k, …)`, `release(k)`, `drain(fills, …)`.
//! ```

use crate::async_copy::{
    BULK_MAX_BYTES, BulkCopyError, check_bulk_copy, cp_async_bulk_global_to_shared_unchecked,
    fence_proxy_async_shared,
};
use crate::atomic::{Order, Scope, fetch_or};
use crate::index::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::mbarrier::{BarrierScope, MAX_COUNT, MBarrier, Parity, WaitError};
use crate::warp::{WARP_SIZE, any_sync, lane_id, sync_warp};

/// Why a pipeline step failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipelineError {
    /// A bounded wait on a stage's barrier timed out: the other side never arrived.
    TimedOut,
    /// A copy was refused before it was issued (alignment or size), see [`BulkCopyError`].
    Copy(BulkCopyError),
    /// The kernel's launch shape cannot hold its pipeline (too few warps, too little shared
    /// memory): a kernel's own check, reported like the others.
    BadLaunch,
}

/// The bits a kernel sets in an error word for a [`PipelineError`] ([`PipelineError::record`]):
/// one word per launch, zeroed before it, read by the host after it.
pub mod error_bits {
    /// [`PipelineError::TimedOut`](super::PipelineError::TimedOut).
    pub const TIMED_OUT: u32 = 1;
    /// [`PipelineError::Copy`](super::PipelineError::Copy) or
    /// [`PipelineError::BadLaunch`](super::PipelineError::BadLaunch): nothing was computed.
    pub const BAD_LAUNCH: u32 = 2;
}

impl PipelineError {
    /// Its bit of [`error_bits`].
    pub const fn bit(self) -> u32 {
        match self {
            PipelineError::TimedOut => error_bits::TIMED_OUT,
            PipelineError::Copy(_) | PipelineError::BadLaunch => error_bits::BAD_LAUNCH,
        }
    }

    /// Sets its bit in the launch's error word `err`.
    ///
    /// Scope: device. Ordering: relaxed. PTX: `atom.relaxed.gpu.or.b32`.
    ///
    /// # Safety
    /// `err` is a valid `u32` in global memory, touched only atomically during the launch.
    #[inline(always)]
    pub unsafe fn record(self, err: *mut u32) {
        // SAFETY: the caller's.
        unsafe { fetch_or(err, self.bit(), Scope::Device, Order::Relaxed) };
    }
}

impl From<WaitError> for PipelineError {
    fn from(e: WaitError) -> PipelineError {
        match e {
            WaitError::TimedOut => PipelineError::TimedOut,
        }
    }
}

impl From<BulkCopyError> for PipelineError {
    fn from(e: BulkCopyError) -> PipelineError {
        PipelineError::Copy(e)
    }
}

/// A ring of `STAGES` stages of `stage_bytes` each in this block's shared memory, with a full
/// and an empty barrier per stage (see the module's documentation).
///
/// Layout from `base` (16-byte aligned): `STAGES` full barriers, `STAGES` empty barriers
/// (8 bytes each), then the stages — [`BulkRing::shared_bytes`] in all.
#[derive(Clone, Copy, Debug)]
pub struct BulkRing<const STAGES: usize> {
    base: *mut u8,
    stage_bytes: u32,
}

impl<const STAGES: usize> BulkRing<STAGES> {
    /// Bytes of barriers before the first stage: a multiple of 16, so every stage is aligned
    /// for bulk copies.
    pub const BARRIER_BYTES: u32 = (16 * STAGES) as u32;

    const NONEMPTY: () = assert!(STAGES > 0 && STAGES <= 64, "a ring of 1 to 64 stages");

    /// Shared memory a ring of stages of `stage_bytes` needs.
    pub const fn shared_bytes(stage_bytes: u32) -> u32 {
        Self::BARRIER_BYTES + STAGES as u32 * stage_bytes
    }

    /// The ring at `base`, or why not: `stage_bytes` must be a non-zero multiple of 16 no
    /// larger than [`BULK_MAX_BYTES`], and `base` 16-byte aligned.
    ///
    /// # Safety
    /// `base[..shared_bytes(stage_bytes)]` is this block's shared memory, used for nothing else
    /// while the ring is.
    #[inline(always)]
    pub unsafe fn new(base: *mut u8, stage_bytes: u32) -> Result<BulkRing<STAGES>, BulkCopyError> {
        let () = Self::NONEMPTY;
        if stage_bytes == 0 || !stage_bytes.is_multiple_of(16) || stage_bytes > BULK_MAX_BYTES {
            return Err(BulkCopyError::BadSize);
        }
        if !(base as usize).is_multiple_of(16) {
            return Err(BulkCopyError::Misaligned);
        }
        Ok(BulkRing { base, stage_bytes })
    }

    /// Bytes per stage.
    #[inline(always)]
    pub fn stage_bytes(&self) -> u32 {
        self.stage_bytes
    }

    /// Stage `s`'s full barrier.
    #[inline(always)]
    fn full(&self, s: usize) -> MBarrier {
        // SAFETY: `s < STAGES`: the `s`-th word of the ring's barriers.
        unsafe { MBarrier::from_generic(self.base.cast::<u64>().add(s)) }
    }

    /// Stage `s`'s empty barrier.
    #[inline(always)]
    fn empty(&self, s: usize) -> MBarrier {
        // SAFETY: `STAGES + s < 2 * STAGES`: a word of the ring's barriers.
        unsafe { MBarrier::from_generic(self.base.cast::<u64>().add(STAGES + s)) }
    }

    /// The first byte of stage `s`.
    #[inline(always)]
    fn stage(&self, s: usize) -> *mut u8 {
        // SAFETY: within the ring's `shared_bytes`.
        unsafe {
            self.base
                .add(Self::BARRIER_BYTES as usize + s * self.stage_bytes as usize)
        }
    }

    /// Initializes every stage's barriers for `consumers` arrivals per release (at most
    /// [`MAX_COUNT`]), and orders the initialization before the copy engine's completions.
    /// One thread calls it; a block barrier (`sync_threads`) follows before any other use.
    ///
    /// PTX: `mbarrier.init.shared::cta.b64` (2 × `STAGES`), `fence.proxy.async.shared::cta`.
    ///
    /// # Safety
    /// As [`BulkRing::new`]; called once, by one thread, before any other use.
    #[inline(always)]
    pub unsafe fn init(&self, consumers: u32) {
        for s in 0..STAGES {
            // SAFETY: the ring's own barriers, not yet in use.
            unsafe {
                self.full(s).init(1);
                self.empty(s).init(consumers.clamp(1, MAX_COUNT));
            }
        }
        // The async proxy (the copy engine) completes bytes on the full barriers: it must see
        // them initialized.
        fence_proxy_async_shared();
    }

    /// Producer: fill `k` (this block's `k`-th, counting from 0) — waits, at most
    /// `timeout_ns`, until the consumers have released the stage's previous fill (`k -
    /// STAGES`), then starts the bulk copy of `src[..bytes]` into stage `k mod STAGES`,
    /// completing on its full barrier. Returns at once: the copy lands later.
    ///
    /// Scope: block. Ordering: acquire on the empty barrier (the consumers' reads of the old
    /// fill happen before the copy overwrites it).
    ///
    /// # Errors
    /// [`PipelineError::TimedOut`] (nothing issued); [`PipelineError::Copy`] if `src` is not
    /// 16-byte aligned or `bytes` is not a non-zero multiple of 16 no larger than a stage — the
    /// stage's phase is then completed without data so the consumers are not left waiting, and
    /// the caller must tell them the stage holds nothing.
    ///
    /// # Safety
    /// One producer thread per ring, calling with `k = 0, 1, 2, …` in order; `src[..bytes]` is
    /// global memory nobody writes during the launch.
    #[inline(always)]
    pub unsafe fn produce(
        &self,
        k: u32,
        src: *const u8,
        bytes: u32,
        timeout_ns: u64,
    ) -> Result<(), PipelineError> {
        let (s, round) = (k as usize % STAGES, k / STAGES as u32);
        if round > 0 {
            let mut parity = Parity::of_phase(round - 1);
            // SAFETY: the ring's own, initialized barrier.
            unsafe {
                self.empty(s)
                    .wait_parity(&mut parity, BarrierScope::Block, timeout_ns)?
            };
        }
        let full = self.full(s);
        let checked = if bytes > self.stage_bytes {
            Err(BulkCopyError::BadSize)
        } else {
            check_bulk_copy(self.stage(s), src, bytes)
        };
        // SAFETY: the ring's own barrier; the copy is checked, the stage released by every
        // consumer (above), `src` the caller's.
        unsafe {
            match checked {
                Ok(()) => {
                    let _ = full.arrive_expect_tx(bytes, BarrierScope::Block);
                    cp_async_bulk_global_to_shared_unchecked(self.stage(s), src, bytes, full);
                    Ok(())
                }
                Err(e) => {
                    let _ = full.arrive(BarrierScope::Block);
                    Err(e.into())
                }
            }
        }
    }

    /// Producer, after its last fill: waits, at most `timeout_ns` each, for the copies of the
    /// last `STAGES` of its `fills` fills to land — a bulk copy must not write into the shared
    /// memory of a block that has exited, and the consumers may have stopped waiting (a
    /// timeout). The earlier fills landed before their stages were refilled.
    ///
    /// Scope: block. Ordering: acquire.
    ///
    /// # Errors
    /// [`PipelineError::TimedOut`].
    ///
    /// # Safety
    /// The producer's own ring; `fills` is the number of fills it started.
    #[inline(always)]
    pub unsafe fn drain(&self, fills: u32, timeout_ns: u64) -> Result<(), PipelineError> {
        let mut result = Ok(());
        for k in fills.saturating_sub(STAGES as u32)..fills {
            let mut parity = Parity::of_phase(k / STAGES as u32);
            // SAFETY: the ring's own, initialized barrier.
            let landed = unsafe {
                self.full(k as usize % STAGES).wait_parity(
                    &mut parity,
                    BarrierScope::Block,
                    timeout_ns,
                )
            };
            if let Err(e) = landed {
                result = Err(e.into());
            }
        }
        result
    }

    /// The ring at `base` for a block whose warp 0 produces and whose other warps consume —
    /// the shape [`BulkRing::produce_tiles`] and [`BulkRing::consume_tiles`] work in — its
    /// barriers initialized by thread 0 for one release per consumer thread. The caller's block
    /// barrier (`sync_threads`) must follow before any use.
    ///
    /// Returns `None`, with [`PipelineError::BadLaunch`] (or the ring's refusal) recorded in
    /// `err` by thread 0, when the block is not two or more whole warps or the ring cannot be
    /// made; every thread of the block gets the same answer, so all can return.
    ///
    /// # Safety
    /// As [`BulkRing::new`]; every thread of the block calls it once; `err` is the launch's
    /// error word (a valid `u32` touched only atomically).
    #[inline(always)]
    pub unsafe fn for_block(
        base: *mut u8,
        stage_bytes: u32,
        err: *mut u32,
    ) -> Option<BulkRing<STAGES>> {
        let threads = block_dim_x();
        let made = if threads < 2 * WARP_SIZE || !threads.is_multiple_of(WARP_SIZE) {
            Err(PipelineError::BadLaunch)
        } else {
            // SAFETY: forwarded to the caller.
            unsafe { BulkRing::new(base, stage_bytes) }.map_err(PipelineError::from)
        };
        match made {
            Ok(ring) => {
                if thread_idx_x() == 0 {
                    // SAFETY: once, by one thread, before the caller's barrier.
                    unsafe { ring.init(threads - WARP_SIZE) };
                }
                Some(ring)
            }
            Err(e) => {
                if thread_idx_x() == 0 {
                    // SAFETY: the caller's error word.
                    unsafe { e.record(err) };
                }
                None
            }
        }
    }

    /// Producer, called by every lane of warp 0: its lane 0 streams this block's tiles of
    /// `src[..bytes]` into the ring — tile `blockIdx.x`, then every `gridDim.x`-th, each a
    /// stage's worth (the last one shorter) — then drains the last copies; the warp meets again
    /// at the end. A failure is recorded in `err` and ends the stream (the consumers then time
    /// out on the fills that never come, bounded).
    ///
    /// # Safety
    /// A ring from [`BulkRing::for_block`], after the block barrier that follows it; `src` is
    /// 16-byte aligned, `bytes` a multiple of 16, `src[..bytes]` global memory nobody writes
    /// during the launch; `err` as in `for_block`.
    #[inline(always)]
    pub unsafe fn produce_tiles(
        &self,
        src: *const u8,
        bytes: usize,
        timeout_ns: u64,
        err: *mut u32,
    ) {
        if lane_id() == 0 {
            let stage = self.stage_bytes as usize;
            let tiles = bytes.div_ceil(stage);
            let (mut k, mut tile) = (0u32, block_idx_x() as usize);
            while tile < tiles {
                let len = (bytes - tile * stage).min(stage) as u32;
                // SAFETY: one producer, fills in order; the tile is inside `src[..bytes]`.
                let started = unsafe { self.produce(k, src.add(tile * stage), len, timeout_ns) };
                if let Err(e) = started {
                    // SAFETY: the caller's error word.
                    unsafe { e.record(err) };
                    break;
                }
                k += 1;
                tile += grid_dim_x() as usize;
            }
            // SAFETY: this ring's producer; `k` fills were started.
            if let Err(e) = unsafe { self.drain(k, timeout_ns) } {
                // SAFETY: the caller's error word.
                unsafe { e.record(err) };
            }
        }
        sync_warp(u32::MAX);
    }

    /// Consumer, called by every thread of the consumer warps: for each of this block's tiles of
    /// a `bytes`-byte stream (as [`BulkRing::produce_tiles`] cuts them), waits for it to land and
    /// calls `read(stage, tile_bytes)`, then fences its reads against the copy engine's next
    /// writes (`fence.proxy.async`) and releases the stage itself — one arrival per thread. A
    /// timed-out wait is recorded in `err` and ends the loop for the whole warp (its lanes vote
    /// on it, so one lane's timeout is all of theirs).
    ///
    /// Why every thread arrives, not one lane per warp after a warp barrier: both orders are
    /// sound under the PTX memory model (`bar.warp.sync` orders the lanes' reads before the
    /// leader's release), but compute-sanitizer's racecheck follows only each thread's own
    /// arrival to the producer's wait. With one arrival per warp it reported every stage read
    /// by lanes 1–31 as a hazard against the next bulk copy once the ring wrapped (174 592 at
    /// 80 KiB, 5 fills of 4 stages, on an H100); with one per thread it reports none. The proxy
    /// fence is what the memory model asks for between generic reads and async-proxy writes to
    /// the same bytes; the copy's own completion covers only the other direction.
    ///
    /// # Safety
    /// A ring from [`BulkRing::for_block`], after the block barrier that follows it; `read` only
    /// reads the stage (its first `tile_bytes` bytes); `err` as in `for_block`.
    #[inline(always)]
    pub unsafe fn consume_tiles(
        &self,
        bytes: usize,
        timeout_ns: u64,
        err: *mut u32,
        mut read: impl FnMut(*const u8, usize),
    ) {
        let stage = self.stage_bytes as usize;
        let tiles = bytes.div_ceil(stage);
        let (mut k, mut tile) = (0u32, block_idx_x() as usize);
        while tile < tiles {
            // SAFETY: fills in order, each released below before the ring comes round.
            let landed = unsafe { self.consume(k, timeout_ns) };
            if any_sync(u32::MAX, landed.is_err()) {
                if let Err(e) = landed {
                    // SAFETY: the caller's error word.
                    unsafe { e.record(err) };
                }
                break;
            }
            let Ok(at) = landed else { break };
            read(at, (bytes - tile * stage).min(stage));
            // This thread's reads of the stage (generic proxy) before the copy engine's next
            // writes into it (async proxy), then its own arrival: the producer's acquire wait
            // on the empty barrier sees every consumer's reads as done.
            fence_proxy_async_shared();
            // SAFETY: this thread's reads of the stage are before its own arrival.
            unsafe { self.release(k) };
            k += 1;
            tile += grid_dim_x() as usize;
        }
    }

    /// Consumer: waits, at most `timeout_ns`, for fill `k` to land, and returns its stage.
    ///
    /// Scope: block. Ordering: acquire (the copied bytes are visible after it).
    ///
    /// # Errors
    /// [`PipelineError::TimedOut`].
    ///
    /// # Safety
    /// The ring is initialized; this consumer calls with `k = 0, 1, 2, …` and releases every
    /// fill ([`BulkRing::release`]) before waiting for fill `k + STAGES`.
    #[inline(always)]
    pub unsafe fn consume(&self, k: u32, timeout_ns: u64) -> Result<*const u8, PipelineError> {
        let (s, round) = (k as usize % STAGES, k / STAGES as u32);
        let mut parity = Parity::of_phase(round);
        // SAFETY: the ring's own, initialized barrier.
        unsafe {
            self.full(s)
                .wait_parity(&mut parity, BarrierScope::Block, timeout_ns)?
        };
        Ok(self.stage(s).cast_const())
    }

    /// Consumer: one arrival on fill `k`'s empty barrier — done reading it. Each thread counted
    /// by [`BulkRing::init`] arrives for itself, after its own reads and a
    /// [`fence_proxy_async_shared`] (as [`BulkRing::consume_tiles`] does); a ring initialized for
    /// one arrival per warp may instead be released by one lane after a warp barrier
    /// (`sync_warp`), which the memory model accepts but racecheck cannot follow.
    ///
    /// Scope: block. Ordering: release.
    ///
    /// # Safety
    /// The ring is initialized; every read of the stage by the threads this arrival stands for
    /// happens before it.
    #[inline(always)]
    pub unsafe fn release(&self, k: u32) {
        // SAFETY: the ring's own, initialized barrier.
        let _ = unsafe { self.empty(k as usize % STAGES).arrive(BarrierScope::Block) };
    }
}
