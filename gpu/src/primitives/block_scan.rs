//! Prefix sums across a warp and across a block: CUB's `WarpScan` and `BlockScan` (its
//! `BLOCK_SCAN_WARP_SCANS` algorithm), for any launch shape.
//!
//! An exclusive block scan in two phases:
//!
//! 1. **PHASE 1, in each warp**: five `shfl_up_sync` steps (1, 2, 4, 8, 16) give every lane the
//!    sum of its own value and those of the lanes below it (Hillis–Steele);
//! 2. **PHASE 2, across warps**: the last lane of each warp writes the warp's total to one slot
//!    of a small shared-memory scratch, the block meets at `sync_threads`, and every thread adds
//!    the totals of the warps before its own.
//!
//! A scan is what turns counts into places: the counts of atoms per cell into where each
//! cell's atoms start, the counts of neighbors per atom into where each atom's list starts.

use crate::block_reduce::{Sum, warp_lanes, warp_mask};
use crate::index::{thread_rank_in_block, threads_per_block};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::warp::{WARP_SIZE, lane_id, shfl_up_sync};

/// The inclusive prefix sum of `v` over the lanes of the calling thread's warp: lane `k` gets
/// the sum of lanes `0..=k`.
///
/// Contract: every existing lane of the warp calls it together. CUDA: CUB's
/// `WarpScan::InclusiveSum`. PTX: five `shfl.sync.up.b32` (ten for 64-bit values).
#[inline(always)]
pub fn warp_inclusive_sum<T: Sum>(v: T) -> T {
    let mask = warp_mask();
    let lane = lane_id();
    let mut acc = v;
    let mut delta = 1;
    while delta < WARP_SIZE {
        let below = shfl_up_sync(mask, acc, delta);
        // Lanes below `delta` received their own value back: nothing to add.
        if lane >= delta {
            acc = acc + below;
        }
        delta *= 2;
    }
    acc
}

/// Bytes of dynamic shared memory [`block_exclusive_sum`] needs for a block of `threads`
/// threads: one `T` per warp.
pub const fn block_scan_shared_bytes<T>(threads: u32) -> u32 {
    threads.div_ceil(WARP_SIZE) * size_of::<T>() as u32
}

/// The exclusive prefix sum of `v` over the threads of the block in rank order, and the block's
/// total: thread `k` gets `(v₀ + … + v_{k−1}, v₀ + … + v_last)`.
///
/// Contract: every thread of the block calls it (it contains a `sync_threads`); the results are
/// defined in every thread. To call it again in the same kernel, put a `sync_threads` between
/// the calls: slower warps may still be reading the scratch. CUDA: CUB's
/// `BlockScan::ExclusiveSum(input, output, block_aggregate)`. PTX: shuffles, `st.shared`,
/// `bar.sync 0`, `ld.shared`.
///
/// # Safety
/// The launch gave each block at least [`block_scan_shared_bytes::<T>`] bytes of dynamic shared
/// memory, used by nothing else during the call.
#[inline(always)]
pub unsafe fn block_exclusive_sum<T: Sum>(v: T) -> (T, T) {
    // SAFETY: the caller gave one `T` per warp of dynamic shared memory; `Sum` types need at
    // most 8-byte alignment, which dynamic shared memory has.
    let scratch = Ptr::new(unsafe { dynamic_shared::<T>() });
    let lane = lane_id();
    let warp = thread_rank_in_block() / WARP_SIZE;
    let warps = threads_per_block().div_ceil(WARP_SIZE);

    // PHASE 1: each warp scans its own lanes; its last existing lane holds the warp's total.
    let inclusive = warp_inclusive_sum(v);
    // The lane below's inclusive sum is this lane's exclusive one (lane 0: nothing below).
    let below = shfl_up_sync(warp_mask(), inclusive, 1);
    let exclusive = if lane == 0 { T::default() } else { below };
    if lane == warp_lanes() - 1 {
        // SAFETY: `warp < warps`, the scratch's length; only this lane writes this slot.
        unsafe { scratch.add(warp as usize).store(inclusive) };
    }
    sync_threads();

    // PHASE 2: the totals of the warps below this one, and of all of them.
    let mut before = T::default();
    let mut total = T::default();
    for w in 0..warps {
        // SAFETY: in bounds; the barrier above ordered the writes before these reads.
        let t = unsafe { scratch.add(w as usize).load() };
        if w < warp {
            before = before + t;
        }
        total = total + t;
    }
    (before + exclusive, total)
}
