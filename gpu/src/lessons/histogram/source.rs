//! The source's two kernels (Numba tutorial, examples 4.3 and 4.4), and the instrument that
//! shows where 4.4's time goes when the grid grows.

use super::in_bins;
use crate::atomic::{atomic_add_block, atomic_add_device};
use crate::index::{block_dim_x, block_idx_x, grid_stride, thread_idx_x};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;

/// Dynamic shared memory of [`histogram_shared`] and [`histogram_shared_rows`]: one `u64` per
/// bin, as the source's `cuda.shared.array((128,), numba.int64)`.
pub const fn shared_u64_bytes(bins: u32) -> u32 {
    bins * 8
}

// ANCHOR: global
kernel! {
    /// Example 4.3: every byte below `bins` is one `atomicAdd` on a global bin.
    ///
    /// Source: Numba tutorial, example 4.3, `kernel_histogram(arr, histo)`:
    /// `for iarr in range(i, arr.size, threads_per_grid): if arr[iarr] < 128:
    /// cuda.atomic.add(histo, arr[iarr], 1)`.
    /// What changed: the bound is `bins` (128 as the source, or 256), the bins are `u64` (the
    /// source's `int64`), and the grid-stride loop is [`grid_stride`].
    /// Cost: one device-scope atomic per byte, performed in L2, and all the bytes of one letter
    /// go to one address — in English text about one byte in six is a space and one in ten an
    /// `e`, so those few L2 addresses serialize most of the work.
    /// `histo` holds `bins` zeroed `u64`; `arr` holds `len` bytes.
    pub unsafe fn histogram_global(arr: *const u8, len: u64, histo: *mut u64, bins: u32) {
        let arr = Ptr::new(arr.cast_mut());
        for iarr in grid_stride(len as usize) {
            // SAFETY: `iarr < len`.
            let byte = unsafe { arr.add(iarr).load() } as u32;
            if in_bins(byte, bins) {
                // SAFETY: `byte < bins`; `histo` is touched only atomically during the launch.
                unsafe { atomic_add_device(histo.add(byte as usize), 1u64) };
            }
        }
    }
}
// ANCHOR_END: global

/// PHASE 1 of example 4.4, shared by [`histogram_shared`] and [`histogram_shared_rows`]: the
/// block's histogram of the bytes it reads, in shared memory, complete after the final
/// `sync_threads`. Returns `histo_local`.
///
/// # Safety
/// The kernels' contract: `arr` holds `len` bytes; the launch gave
/// [`shared_u64_bytes`]`(bins)` bytes of dynamic shared memory; every thread of the block calls
/// it (it holds two barriers).
#[inline(always)]
unsafe fn block_histogram(arr: *const u8, len: u64, bins: u32) -> Ptr<u64> {
    let arr = Ptr::new(arr.cast_mut());
    // SAFETY: the launch gave `bins` u64 of dynamic shared memory.
    let histo_local = Ptr::new(unsafe { dynamic_shared::<u64>() });
    // The source zeroes `histo_local[cuda.threadIdx.x]`, one bin per thread, which needs as
    // many threads as bins; a block-stride loop zeroes any number of bins with any block.
    let mut bin = thread_idx_x();
    while bin < bins {
        // SAFETY: `bin < bins`; no other thread writes this bin before the barrier.
        unsafe { histo_local.add(bin as usize).store(0) };
        bin += block_dim_x();
    }
    sync_threads(); // every bin is zero before any thread counts into it
    for iarr in grid_stride(len as usize) {
        // SAFETY: `iarr < len`.
        let byte = unsafe { arr.add(iarr).load() } as u32;
        if in_bins(byte, bins) {
            // SAFETY: `byte < bins`; during this phase the bins are touched only atomically,
            // and only by this block's threads (block scope is enough).
            unsafe { atomic_add_block(histo_local.add(byte as usize).as_ptr(), 1u64) };
        }
    }
    sync_threads(); // every count is in before any thread reads a bin
    histo_local
}

// ANCHOR: shared
kernel! {
    /// Example 4.4: each block counts into its own histogram in shared memory, then adds it to
    /// the global one.
    ///
    /// Source: Numba tutorial, example 4.4, `kernel_histogram_shared(arr, histo)`:
    /// `histo_local = cuda.shared.array((128,), numba.int64)`, zeroed, `cuda.syncthreads()`,
    /// `cuda.atomic.add(histo_local, arr[iarr], 1)` in the grid-stride loop, `cuda.syncthreads()`,
    /// `cuda.atomic.add(histo, cuda.threadIdx.x, histo_local[cuda.threadIdx.x])`.
    /// What changed from [`histogram_global`]: the byte loop's atomics are block-scoped, on
    /// shared memory in the SM, and contended only by the block's own threads (128 instead of
    /// the whole GPU); the global bins take one atomic per bin per block at the end.
    /// What changed from the source: the zeroing and the final adds loop over the bins with a
    /// stride of `blockDim.x` (any block size, 128 or 256 bins), and a bin the block never saw
    /// is not added — an atomic that adds zero still takes its turn at the contended address.
    /// Cost: that final step is `gridDim.x` × (non-zero bins) device atomics on only `bins`
    /// addresses, so it grows with the grid: the reason this kernel slows down when given too
    /// many blocks (`gridsync histogram --sweep` measures it).
    /// Dynamic shared memory: [`shared_u64_bytes`]`(bins)`.
    pub unsafe fn histogram_shared(arr: *const u8, len: u64, histo: *mut u64, bins: u32) {
        // SAFETY: the kernel's contract is `block_histogram`'s; every thread calls it.
        let histo_local = unsafe { block_histogram(arr, len, bins) };
        let mut bin = thread_idx_x();
        while bin < bins {
            // SAFETY: `bin < bins`; after the barrier the shared bins are only read.
            let count = unsafe { histo_local.add(bin as usize).load() };
            if count != 0 {
                // SAFETY: `histo` has `bins` u64, touched only atomically during the launch.
                unsafe { atomic_add_device(histo.add(bin as usize), count) };
            }
            bin += block_dim_x();
        }
    }
}
// ANCHOR_END: shared

// ANCHOR: shared_unzeroed
kernel! {
    /// [`histogram_shared`] without zeroing its shared bins: each block counts on top of
    /// whatever its shared memory held.
    ///
    /// What can go wrong: shared memory is not cleared between kernels. On a GPU the bins
    /// start from what the last kernel on that SM left in those bytes — zero on a fresh
    /// context, often, and garbage after another kernel — so the histogram is right in a test
    /// and wrong in a program. The simulator's shared memory starts zeroed, so the counts are
    /// right there too; the checker reports the first read of each bin (the block-scope add,
    /// and the flush's load of a bin the block never counted) as an uninitialized read, with
    /// its line. compute-sanitizer's initcheck watches global memory only.
    pub unsafe fn histogram_shared_unzeroed(arr: *const u8, len: u64, histo: *mut u64, bins: u32) {
        let arr = Ptr::new(arr.cast_mut());
        // SAFETY: the launch gave `bins` u64 of dynamic shared memory.
        let histo_local = Ptr::new(unsafe { dynamic_shared::<u64>() });
        // (No zeroing here: the lesson.)
        for iarr in grid_stride(len as usize) {
            // SAFETY: `iarr < len`.
            let byte = unsafe { arr.add(iarr).load() } as u32;
            if in_bins(byte, bins) {
                // SAFETY: `byte < bins`; the bins are touched only atomically, by this block.
                unsafe { atomic_add_block(histo_local.add(byte as usize).as_ptr(), 1u64) };
            }
        }
        sync_threads(); // every count is in before any thread reads a bin
        let mut bin = thread_idx_x();
        while bin < bins {
            // SAFETY: `bin < bins`; after the barrier the shared bins are only read.
            let count = unsafe { histo_local.add(bin as usize).load() };
            if count != 0 {
                // SAFETY: `histo` has `bins` u64, touched only atomically during the launch.
                unsafe { atomic_add_device(histo.add(bin as usize), count) };
            }
            bin += block_dim_x();
        }
    }
}
// ANCHOR_END: shared_unzeroed

kernel! {
    /// An instrument, not a histogram to use: [`histogram_shared`] with its final atomics
    /// replaced by plain stores of the block's non-zero bins into the block's own row,
    /// `rows[blockIdx.x * bins + bin]`.
    ///
    /// Same loads, same shared-memory work, same number of global writes as
    /// [`histogram_shared`] — but no two blocks write one address, so nothing contends. The
    /// difference between the two kernels' times at a given grid is what the contended flush
    /// costs. The rows sum to the histogram (the host checks it).
    /// `rows` holds `gridDim.x * bins` zeroed `u64`. Dynamic shared memory:
    /// [`shared_u64_bytes`]`(bins)`.
    pub unsafe fn histogram_shared_rows(arr: *const u8, len: u64, rows: *mut u64, bins: u32) {
        // SAFETY: the kernel's contract is `block_histogram`'s; every thread calls it.
        let histo_local = unsafe { block_histogram(arr, len, bins) };
        let rows = Ptr::new(rows);
        let row = block_idx_x() as usize * bins as usize;
        let mut bin = thread_idx_x();
        while bin < bins {
            // SAFETY: `bin < bins`; after the barrier the shared bins are only read.
            let count = unsafe { histo_local.add(bin as usize).load() };
            if count != 0 {
                // SAFETY: `row + bin < gridDim.x * bins`; only this thread writes this slot.
                unsafe { rows.add(row + bin as usize).store(count) };
            }
            bin += block_dim_x();
        }
    }
}
