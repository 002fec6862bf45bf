//! The producer/consumer pipeline (sm_90): one thread of the block streams the input into a
//! ring of shared-memory stages with bulk copies; the block's other warps count the bytes of the
//! stages that have landed, into 32-bit counters of their lane index.

use super::load::{BYTES16, ByteSplit, Bytes16, for_each_strided_byte};
use crate::atomic::atomic_add_device;
use crate::index::{block_dim_x, block_idx_x, thread_idx_x};
use crate::mem::Ptr;
use crate::pipeline::BulkRing;
use crate::shared::dynamic_shared;
use crate::shared_atomic::SharedU32;
use crate::sync::sync_threads;
use crate::warp::{WARP_SIZE, lane_id};

/// Stages in the ring of [`histogram_pipeline`]: three fills in flight while one is counted.
pub const PIPELINE_STAGES: usize = 4;

/// Bytes per stage: 16 KiB, 32 per consumer thread of a sixteen-warp block (two 16-byte loads
/// from shared memory).
pub const PIPELINE_STAGE_BYTES: u32 = 16 << 10;

/// Threads per block of [`histogram_pipeline`]: one producer warp and sixteen consumer warps.
/// The counters (32 KiB) and the ring (64 KiB) take 96 KiB: two blocks per SM, 32 counting
/// warps — eight per scheduler — and up to 128 KiB of copies in flight per SM. Measured on 1 GiB
/// (H200): 4 consumer warps per block 3.79 TB/s, 8 → 3.72, 16 → 4.00, 31 (one block per SM,
/// registers) 3.22.
pub const PIPELINE_THREADS_PER_BLOCK: u32 = 17 * WARP_SIZE;

/// Counters per byte value: one per lane index (32), so the 32 lanes of a warp instruction
/// always hit 32 different banks.
pub const PIPELINE_COLUMNS: u32 = WARP_SIZE;

/// Bytes of the counters: 256 byte values × [`PIPELINE_COLUMNS`] 32-bit words.
const COUNTER_BYTES: u32 = 256 * PIPELINE_COLUMNS * 4;

/// Dynamic shared memory of [`histogram_pipeline`] for blocks of `threads` (any number: the
/// counters are per lane index, not per thread): the counters, then the ring.
pub const fn pipeline_shared_bytes(threads: u32) -> u32 {
    let _ = threads;
    COUNTER_BYTES + BulkRing::<PIPELINE_STAGES>::shared_bytes(PIPELINE_STAGE_BYTES)
}

/// Sums the [`PIPELINE_COLUMNS`] counters of byte value `w` for every value this thread owns
/// (`w = t, t + blockDim.x, …`, below `bins`) and adds each non-zero sum to the global bin.
/// Thread `t` starts at column `t mod 32` and wraps, so a warp's 32 reads fall in 32 banks.
///
/// # Safety
/// After a barrier that follows every count; `s_counts` holds the counters, value-major;
/// `histo` holds `bins` `u64`, touched only atomically.
#[inline(always)]
unsafe fn fold(s_counts: Ptr<u32>, bins: u32, histo: *mut u64) {
    let (t, threads) = (thread_idx_x(), block_dim_x());
    let mut w = t;
    while w < bins.min(256) {
        let mut total = 0u64;
        for k in 0..PIPELINE_COLUMNS {
            let column = (t + k) % PIPELINE_COLUMNS;
            // SAFETY: `w * 32 + column < 256 * 32`; only read after the barrier.
            total += unsafe {
                s_counts
                    .add((w * PIPELINE_COLUMNS + column) as usize)
                    .load()
            } as u64;
        }
        if total != 0 {
            // SAFETY: `w < bins`; `histo` touched only atomically.
            unsafe { atomic_add_device(histo.add(w as usize), total) };
        }
        w += threads;
    }
}

kernel! {
    /// Counters per lane index, fed by a pipeline of bulk copies (sm_90).
    ///
    /// What changed, and why. [`histogram_vec16`](super::histogram_vec16)'s per-warp bins
    /// take turns whenever lanes hit different words of one bank — three or four passes per
    /// warp instruction on random bytes, the limit of that kernel (ncu: ~0.9 shared-memory
    /// wavefronts per cycle per SM). [`histogram_lane`](super::histogram_lane) ended the
    /// conflicts with counters per *thread*, but their 512 bytes per thread leave few warps per
    /// SM and its 16-bit halves cost 7.3 instructions per byte. Here the counters belong to
    /// the **lane index**: byte `b` of lane `l` (of any warp) is word `32·b + l` — bank `l`,
    /// always — so no warp instruction conflicts, whatever the data; lanes of different warps
    /// share a word, which the `red.shared` makes safe (one instruction never holds two of
    /// them). 32-bit counters: extract, shift into the address, add, `red` — about four
    /// instructions per byte — and 32 KiB per block whatever its size.
    ///
    /// The loads are a pipeline. **Warp 0 produces**: its lane 0 cuts the block's share of the
    /// input into 16 KiB tiles (tile `blockIdx.x`, then every `gridDim.x`-th) and starts a bulk
    /// copy of each into a ring of [`PIPELINE_STAGES`] stages ([`BulkRing`]), waiting on a
    /// stage's *empty* barrier before refilling it. **Warps 1… consume**: each waits on the
    /// stage's *full* barrier (the copy's bytes complete its phase), counts its 16-byte vectors
    /// of the stage, and then each consumer thread, after a proxy fence, arrives on the stage's
    /// empty barrier itself.
    /// Three tiles per block are in flight while one is counted, held by the copy engine, not by
    /// registers. The misaligned head and the tail of the input (at most 15 bytes each) are
    /// counted from global memory by block 0's consumers. At the end every thread folds the 32
    /// columns: one device atomic per non-zero bin per block.
    ///
    /// Every wait is bounded by `timeout_ns` (the host passes
    /// [`DEFAULT_TIMEOUT_NS`](crate::mbarrier::DEFAULT_TIMEOUT_NS), stretched under a
    /// sanitizer): a stall sets a bit of `err` ([`error_bits`](crate::pipeline::error_bits))
    /// instead of hanging. `histo` holds `bins` zeroed `u64`, `err` one zeroed `u32`. A counter counts at most the bytes its block reads,
    /// below 2³² while `⌈len / gridDim.x⌉ + 16 KiB + 32 < 2³²` (the host checks). Blocks of
    /// at least two whole warps (the host uses [`PIPELINE_THREADS_PER_BLOCK`]); dynamic shared
    /// memory [`pipeline_shared_bytes`]`(blockDim.x)` — past 48 KiB, so the launch opts in.
    pub unsafe fn histogram_pipeline(arr: *const u8, len: u64, histo: *mut u64, bins: u32, timeout_ns: u64, err: *mut u32) {
        let arr = Ptr::new(arr.cast_mut());
        let threads = block_dim_x();
        // SAFETY: the ring follows the counters, within `pipeline_shared_bytes`; every thread
        // calls it; `err` is the launch's error word.
        let ring = unsafe {
            BulkRing::<PIPELINE_STAGES>::for_block(
                dynamic_shared::<u8>().add(COUNTER_BYTES as usize),
                PIPELINE_STAGE_BYTES,
                err,
            )
        };
        let Some(ring) = ring else { return };
        // SAFETY: the launch gave `pipeline_shared_bytes(threads)`: the counters, then the ring.
        let s_counts = Ptr::new(unsafe { dynamic_shared::<u32>() });
        let mut w = thread_idx_x();
        while w < COUNTER_BYTES / 4 {
            // SAFETY: inside the counters; nobody counts before the barrier below.
            unsafe { s_counts.add(w as usize).store(0) };
            w += threads;
        }
        sync_threads(); // the counters are zero and the ring's barriers initialized

        let split = ByteSplit::of(arr.as_ptr(), len as usize);
        // SAFETY: `arr + head` is 16-byte aligned; the body's `split.body` vectors follow it.
        let body = unsafe { arr.add(split.head) }.as_ptr();
        let body_bytes = split.body * BYTES16;

        if thread_idx_x() < WARP_SIZE {
            // PHASE: produce.
            // SAFETY: after the barrier; the body is 16-byte aligned, a multiple of 16 bytes,
            // read-only during the launch.
            unsafe { ring.produce_tiles(body, body_bytes, timeout_ns, err) };
        } else {
            // PHASE: consume.
            let (me, consumers) = ((thread_idx_x() - WARP_SIZE) as usize, (threads - WARP_SIZE) as usize);
            // This lane's column: its counter for byte `b` is word `b * 32 + lane`, shared with
            // the same lane of the block's other consumer warps (hence the atomic add: another
            // warp's instruction may hit the word, never another lane of this one).
            // SAFETY: word `lane < 32` of the counters.
            let s_lane = unsafe { SharedU32::from_generic(s_counts.add(lane_id() as usize).as_ptr()) };
            // SAFETY: `byte < 256`: a word of this lane's column.
            let count = |byte: u32| unsafe { s_lane.offset(byte * PIPELINE_COLUMNS).red_add_block(1) };
            if block_idx_x() == 0 {
                let mut k = me;
                while k < split.scalars() {
                    // SAFETY: `scalar_index(k) < len`.
                    count(unsafe { arr.add(split.scalar_index(k)).load() } as u32);
                    k += consumers;
                }
            }
            // SAFETY: after the barrier; the stage holds the tile's bytes while `read` runs.
            unsafe {
                ring.consume_tiles(body_bytes, timeout_ns, err, |stage, bytes| {
                    for_each_strided_byte(stage.cast::<Bytes16>(), me, bytes / BYTES16, consumers, count)
                })
            };
        }
        sync_threads(); // every lane's counts are in before any thread sums them
        // SAFETY: after the barrier; `histo` as the kernel's contract.
        unsafe { fold(s_counts, bins, histo) };
    }
}
