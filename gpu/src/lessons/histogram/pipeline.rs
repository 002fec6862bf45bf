//! The producer/consumer pipeline (sm_90): one thread of the block streams the input into a
//! ring of shared-memory stages with bulk copies; the block's other warps count the bytes of the
//! stages that have landed.

use super::load::{BYTES16, Bytes16, Split16, for_each_strided_byte};
use super::warp::{count, flush, warp_shared_bytes, zero_warp_histograms};
use crate::index::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::mbarrier::DEFAULT_TIMEOUT_NS;
use crate::pipeline::{BulkRing, PipelineError};
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::warp::{WARP_SIZE, any_sync, lane_id, sync_warp};

/// Stages in the ring of [`histogram_pipeline`]: three fills in flight while one is counted.
pub const PIPELINE_STAGES: usize = 4;

/// Bytes per stage: 8 KiB, 32 per consumer thread of a 256-consumer block (two 16-byte loads
/// each). Four stages keep 24–32 KiB in flight per block, 100 KiB and more per SM.
pub const PIPELINE_STAGE_BYTES: u32 = 8 << 10;

/// Threads per block of [`histogram_pipeline`]: one producer warp and eight consumer warps.
pub const PIPELINE_THREADS_PER_BLOCK: u32 = WARP_SIZE + 256;

/// Dynamic shared memory of [`histogram_pipeline`] for blocks of `threads`: the per-warp
/// histograms, then the ring.
pub const fn pipeline_shared_bytes(threads: u32) -> u32 {
    warp_shared_bytes(threads) + BulkRing::<PIPELINE_STAGES>::shared_bytes(PIPELINE_STAGE_BYTES)
}


kernel! {
    /// [`histogram_vec16`](super::histogram_vec16)'s per-warp counting, fed by a pipeline of
    /// bulk copies (sm_90).
    ///
    /// What changed, and why: in the vector kernel every thread loads its own 64 bytes and waits
    /// for them, so the bytes in flight per SM are bounded by threads × registers; on an H200
    /// (4.8 TB/s) that is near what the memory's latency needs. Here **warp 0 produces**: its
    /// lane 0 cuts the block's share of the input into 8 KiB tiles (tile `blockIdx.x`, then
    /// every `gridDim.x`-th) and starts a bulk copy of each into a ring of
    /// [`PIPELINE_STAGES`] stages ([`BulkRing`]), waiting on a stage's *empty* barrier before
    /// refilling it. **Warps 1… consume**: each waits on the stage's *full* barrier (the copy's
    /// bytes complete its phase), counts the stage's bytes as the vector kernel does — 16-byte
    /// loads, now from shared memory — and after a warp barrier one lane arrives on the stage's
    /// empty barrier. Three tiles are in flight while one is counted, held by the copy engine
    /// rather than by registers. The misaligned head and the tail of the input (at most 15
    /// bytes each) are counted from global memory by block 0's consumers.
    ///
    /// Every wait is bounded ([`DEFAULT_TIMEOUT_NS`]): a stall sets a bit of `err`
    /// ([`error_bits`](crate::pipeline::error_bits)) instead of hanging. `histo` holds `bins`
    /// zeroed `u64`, `err` one zeroed `u32`. Blocks of at least two whole warps (the host uses
    /// [`PIPELINE_THREADS_PER_BLOCK`]); dynamic shared memory
    /// [`pipeline_shared_bytes`]`(blockDim.x)`.
    pub unsafe fn histogram_pipeline(arr: *const u8, len: u64, histo: *mut u64, bins: u32, err: *mut u32) {
        let threads = block_dim_x();
        if threads < 2 * WARP_SIZE || !threads.is_multiple_of(WARP_SIZE) {
            if thread_idx_x() == 0 {
                // SAFETY: `err` is the launch's error word.
                unsafe { PipelineError::BadLaunch.record(err) };
            }
            return;
        }
        // SAFETY: the launch gave the shared memory; every thread calls it.
        let (s_hist, s_warp) = unsafe { zero_warp_histograms() };
        // SAFETY: the ring follows the per-warp histograms, within `pipeline_shared_bytes`.
        let ring = unsafe {
            BulkRing::<PIPELINE_STAGES>::new(
                dynamic_shared::<u8>().add(warp_shared_bytes(threads) as usize),
                PIPELINE_STAGE_BYTES,
            )
        };
        let ring = match ring {
            Ok(ring) => ring,
            Err(e) => {
                if thread_idx_x() == 0 {
                    // SAFETY: `err` is the launch's error word.
                    unsafe { PipelineError::from(e).record(err) };
                }
                return;
            }
        };
        if thread_idx_x() == 0 {
            // SAFETY: once, by one thread, before the barrier below: one arrival per consumer
            // warp releases a stage.
            unsafe { ring.init(threads / WARP_SIZE - 1) };
        }
        sync_threads(); // the ring's barriers are initialized before anyone uses them

        let split = Split16::of(arr, len as usize);
        // SAFETY: `arr + head` is 16-byte aligned; the body's `split.body` vectors follow it.
        let body = unsafe { arr.add(split.head) };
        let body_bytes = split.body * BYTES16;
        let stage_bytes = PIPELINE_STAGE_BYTES as usize;
        let tiles = body_bytes.div_ceil(stage_bytes);
        let (first, step) = (block_idx_x() as usize, grid_dim_x() as usize);
        let tile_bytes = |tile: usize| (body_bytes - tile * stage_bytes).min(stage_bytes);

        if thread_idx_x() < WARP_SIZE {
            // PHASE: produce (lane 0; the warp's other lanes wait at the warp barrier).
            if lane_id() == 0 {
                let (mut k, mut tile) = (0u32, first);
                while tile < tiles {
                    // SAFETY: one producer, fills in order; the tile is inside the body, which
                    // nobody writes during the launch; sizes are multiples of 16 ≤ a stage.
                    let started = unsafe {
                        ring.produce(k, body.add(tile * stage_bytes), tile_bytes(tile) as u32, DEFAULT_TIMEOUT_NS)
                    };
                    if let Err(e) = started {
                        // SAFETY: `err` is the launch's error word.
                        unsafe { e.record(err) };
                        break;
                    }
                    k += 1;
                    tile += step;
                }
            }
            sync_warp(u32::MAX);
        } else {
            // PHASE: consume.
            let me = (thread_idx_x() - WARP_SIZE) as usize;
            let consumers = (threads - WARP_SIZE) as usize;
            if block_idx_x() == 0 {
                let mut k = me;
                while k < split.scalars() {
                    // SAFETY: `scalar_index(k) < len`; `s_warp` is this warp's histogram.
                    unsafe { count(s_warp, *arr.add(split.scalar_index(k)) as u32) };
                    k += consumers;
                }
            }
            let (mut k, mut tile) = (0u32, first);
            while tile < tiles {
                // SAFETY: fills in order, each released below before the ring comes round.
                let landed = unsafe { ring.consume(k, DEFAULT_TIMEOUT_NS) };
                // The warp leaves together (it meets at warp barriers): each lane waited on
                // its own, so one lane's timeout is the whole warp's.
                if any_sync(u32::MAX, landed.is_err()) {
                    if let Err(e) = landed {
                        // SAFETY: `err` is the launch's error word.
                        unsafe { e.record(err) };
                    }
                    break;
                }
                let Ok(stage) = landed else { break };
                // SAFETY: the stage holds the tile's bytes (the full phase completed);
                // `consumers > 0`; `s_warp` is this warp's histogram.
                unsafe {
                    for_each_strided_byte(stage.cast::<Bytes16>(), me, tile_bytes(tile) / BYTES16, consumers, |byte| {
                        count(s_warp, byte)
                    })
                };
                sync_warp(u32::MAX); // every lane's reads of the stage before the release
                if lane_id() == 0 {
                    // SAFETY: the warp barrier above orders the warp's reads before it.
                    unsafe { ring.release(k) };
                }
                k += 1;
                tile += step;
            }
        }
        // SAFETY: as the kernel's contract; every thread calls it.
        unsafe { flush(s_hist, bins, histo) };
    }
}
