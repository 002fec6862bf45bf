//! Privatizing further than the source: a histogram per warp, then per warp with 16-byte loads.

use super::load::{ByteSplit, for_each_body_byte, for_each_scalar};
use crate::atomic::atomic_add_device;
use crate::index::{block_dim_x, global_id_x, grid_stride, thread_idx_x};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::shared_atomic::SharedU32;
use crate::sync::sync_threads;
use crate::warp::WARP_SIZE;

/// Bins of each warp's histogram: one per byte value, whatever `bins` is. A byte `>= bins` is
/// counted like any other and its bin dropped by the flush, so the byte loop has no branch: a
/// test per byte cost a branch and a convergence barrier around every atomic in the SASS.
pub const WARP_BINS: u32 = 256;

/// Dynamic shared memory of [`histogram_warp`] and [`histogram_vec16`]: [`WARP_BINS`] `u32`
/// for each warp of a block of `threads`.
pub const fn warp_shared_bytes(threads: u32) -> u32 {
    threads.div_ceil(WARP_SIZE) * WARP_BINS * 4
}

/// PHASE 1: zero the block's per-warp histograms; returns (all of them, this warp's).
///
/// # Safety
/// The launch gave [`warp_shared_bytes`]`(blockDim.x)`; every thread of the block calls it (it
/// holds a barrier).
#[inline(always)]
unsafe fn zero_warp_histograms() -> (Ptr<u32>, SharedU32) {
    // SAFETY: the launch gave `warps * WARP_BINS` u32 of dynamic shared memory.
    let s_hist = Ptr::new(unsafe { dynamic_shared::<u32>() });
    let words = block_dim_x().div_ceil(WARP_SIZE) * WARP_BINS;
    let mut k = thread_idx_x();
    while k < words {
        // SAFETY: `k < words`; nobody counts before the barrier.
        unsafe { s_hist.add(k as usize).store(0) };
        k += block_dim_x();
    }
    sync_threads(); // every bin is zero before any warp counts into it
    let warp = thread_idx_x() / WARP_SIZE;
    // SAFETY: `s_hist` is the block's dynamic shared memory.
    let s_warp = unsafe { SharedU32::from_generic(s_hist.as_ptr()) }.offset(warp * WARP_BINS);
    (s_hist, s_warp)
}

/// Counts one byte into this warp's histogram.
///
/// With the constant increment, ptxas emits `ATOMS.POPC.INC`: the lanes of the warp that hit
/// one word are combined into a single add of their count, so a warp full of spaces costs one
/// pass, not 32. Lanes that hit *different* words in one bank still take turns.
///
/// # Safety
/// `s_warp` is this warp's histogram from [`zero_warp_histograms`]; `byte < 256`.
#[inline(always)]
unsafe fn count(s_warp: SharedU32, byte: u32) {
    // SAFETY: `byte < WARP_BINS`: a word of this warp's histogram, touched only atomically
    // until the barrier.
    unsafe { s_warp.offset(byte).red_add_block(1) };
}

/// PHASE 2: after a barrier, thread `t` sums bin `t` (and `t + blockDim.x`, …) below `bins`
/// over the warps and adds each non-zero sum to the global bin: one device atomic per non-zero
/// bin per block.
///
/// # Safety
/// `s_hist` from [`zero_warp_histograms`]; `histo` holds `bins <= 256` `u64`, touched only
/// atomically; every thread of the block calls it.
#[inline(always)]
unsafe fn flush(s_hist: Ptr<u32>, bins: u32, histo: *mut u64) {
    sync_threads(); // every count is in before any thread sums
    let warps = block_dim_x().div_ceil(WARP_SIZE);
    let mut bin = thread_idx_x();
    while bin < bins.min(WARP_BINS) {
        let mut total = 0u64;
        for w in 0..warps {
            // SAFETY: `w * WARP_BINS + bin < warps * WARP_BINS`; after the barrier, only read.
            total += unsafe { s_hist.add((w * WARP_BINS + bin) as usize).load() } as u64;
        }
        if total != 0 {
            // SAFETY: `bin < bins`, touched only atomically during the launch.
            unsafe { atomic_add_device(histo.add(bin as usize), total) };
        }
        bin += block_dim_x();
    }
}

// ANCHOR: warp
kernel! {
    /// A histogram per warp in shared memory: `u32` bins, shared-state-space atomics.
    ///
    /// What changed from [`histogram_shared`](super::histogram_shared), and why:
    /// - **`u32` bins** instead of the source's `int64`. Shared memory has no 64-bit add: ptxas
    ///   makes 4.4's `atom.add.u64` on a shared address a compare-and-swap loop
    ///   (`ATOMS.CAST.SPIN.64`), which retries whenever two lanes hit one bin. A 32-bit add is
    ///   one native instruction.
    /// - **`red.shared` with an increment of 1** ([`SharedU32::red_add_block`]) instead of a
    ///   generic atomic: the shared-memory unit's `ATOMS.POPC.INC`, which adds the number of
    ///   lanes that hit a word in one step — the five or six spaces in a warp's 32 bytes of
    ///   English cost one add, not six — and returns nothing to wait for.
    /// - **one histogram per warp** instead of per block: only lanes of one warp ever meet on
    ///   a word, and the block's eight warps count in parallel.
    /// - all 256 byte values are counted ([`WARP_BINS`]) and the flush drops bins `>= bins`:
    ///   the byte loop has no branch.
    /// A warp's bin counts at most the bytes the warp reads, so it cannot overflow while
    /// `⌈len / threads in the grid⌉ × 32 < 2³²` (the host checks; for any grid of a block or
    /// more that allows at least 32 GiB). The flush sums the warps' bins in `u64` registers and
    /// adds each non-zero bin once per block, as before.
    /// `histo` holds `bins` zeroed `u64`. Dynamic shared memory:
    /// [`warp_shared_bytes`]`(blockDim.x)`.
    pub unsafe fn histogram_warp(arr: *const u8, len: u64, histo: *mut u64, bins: u32) {
        let arr = Ptr::new(arr.cast_mut());
        // SAFETY: the launch gave the shared memory; every thread calls it.
        let (s_hist, s_warp) = unsafe { zero_warp_histograms() };
        for iarr in grid_stride(len as usize) {
            // SAFETY: `iarr < len`; `s_warp` is this warp's histogram.
            unsafe { count(s_warp, arr.add(iarr).load() as u32) };
        }
        // SAFETY: as the kernel's contract; every thread calls it.
        unsafe { flush(s_hist, bins, histo) };
    }
}
// ANCHOR_END: warp

kernel! {
    /// [`histogram_warp`] with 16-byte loads.
    ///
    /// What changed: the body of the input is read as [`Bytes16`](super::Bytes16)
    /// (`ld.global.v4.u32`), four loads per thread issued back to back before any byte is
    /// counted ([`for_each_body_byte`](super::for_each_body_byte)): one load instruction per 16
    /// bytes instead of one per byte, and 64 bytes in flight per thread — what a memory-bound
    /// kernel needs to cover HBM's latency. The misaligned head and the tail (at most 15 bytes
    /// each) are read one at a time. Counting is as in [`histogram_warp`]; what remains of the
    /// contention is lanes that hit *different* words of one bank (bins 32 apart: `a` and `A`,
    /// space and `@`), which take turns — for random bytes, three or four turns per warp.
    /// `histo` holds `bins` zeroed `u64`. Dynamic shared memory:
    /// [`warp_shared_bytes`]`(blockDim.x)`.
    pub unsafe fn histogram_vec16(arr: *const u8, len: u64, histo: *mut u64, bins: u32) {
        let arr = Ptr::new(arr.cast_mut());
        // SAFETY: the launch gave the shared memory; every thread calls it.
        let (s_hist, s_warp) = unsafe { zero_warp_histograms() };
        let split = ByteSplit::of(arr.as_ptr(), len as usize);
        // SAFETY: `i < len`; `s_warp` is this warp's histogram.
        for_each_scalar(&split, |i| unsafe { count(s_warp, arr.add(i).load() as u32) });
        // SAFETY: `split` is `arr`'s; `s_warp` is this warp's histogram.
        unsafe {
            for_each_body_byte(&split, arr.as_ptr(), global_id_x(), split.body, |byte| {
                count(s_warp, byte)
            })
        };
        // SAFETY: as the kernel's contract; every thread calls it.
        unsafe { flush(s_hist, bins, histo) };
    }
}
