//! An exclusive prefix sum of `u32` counts over the whole device, in three launches — how the
//! counts of atoms per cell become where each cell starts, and the counts of neighbors per
//! atom where each list starts.
//!
//! 1. [`scan_tiles`]: each tile of [`SCAN_TILE`] counts is scanned by one block
//!    ([`block_exclusive_sum`]); the tile's total goes to `tile_sums`;
//! 2. [`scan_tile_sums`]: one block scans the tile totals in place, carrying a running sum from
//!    chunk to chunk, and writes the grand total;
//! 3. [`scan_add`]: every count's tile offset is added to it.
//!
//! Totals are carried in `u64`: a neighbor count can exceed `u32` (all atoms on one spot), and
//! the host must see that instead of a wrapped offset. The offsets themselves are `u32`
//! (truncated): the host uses them only when the total fits.

use super::THREADS_PER_BLOCK;
use crate::block_scan::block_exclusive_sum;
use crate::index::{block_dim_x, block_idx_x, grid_dim_x, grid_stride, thread_idx_x};
use crate::mem::Ptr;
use crate::sync::sync_threads;

/// Counts each thread of [`scan_tiles`] sums in sequence before the block scan, in blocks of
/// [`THREADS_PER_BLOCK`].
pub const SCAN_ITEMS: u32 = 4;
/// Counts per tile: one block of [`THREADS_PER_BLOCK`] threads, [`SCAN_ITEMS`] each.
pub const SCAN_TILE: u32 = THREADS_PER_BLOCK * SCAN_ITEMS;

kernel! {
    /// PHASE 1 of the scan: `out[i]` = the sum of `counts` before `i` within its tile of
    /// [`SCAN_TILE`], and `tile_sums[t]` = the total of tile `t` (`len.div_ceil(SCAN_TILE)`
    /// tiles, looped over by the grid).
    ///
    /// Each thread sums a run of consecutive counts, the block scans the runs' sums, and each
    /// thread writes its run's prefixes: [`SCAN_ITEMS`] counts each, held in registers, in
    /// blocks of [`THREADS_PER_BLOCK`] threads; longer runs, read twice, in smaller blocks — the
    /// tile stays whole whatever the launch, as the other two phases assume. Dynamic shared
    /// memory: [`block_scan_shared_bytes::<u64>`](crate::block_scan::block_scan_shared_bytes)
    /// of the block's threads. `counts` and `out` hold `len` values each and do not overlap;
    /// `tile_sums` holds one per tile.
    pub unsafe fn scan_tiles(counts: *const u32, len: u32, out: *mut u32, tile_sums: *mut u64) {
        let tile_sums = Ptr::new(tile_sums);
        let len = len as usize;
        let tile = SCAN_TILE as usize;
        let items = tile.div_ceil(block_dim_x() as usize);
        let mut t = block_idx_x() as usize;
        while t * tile < len {
            let end = ((t + 1) * tile).min(len);
            let first = t * tile + thread_idx_x() as usize * items;
            // SAFETY: `counts` and `out` as the kernel's contract; every thread of the block
            // takes the same branch (`items` is the block's) and calls the block scan once.
            let total = unsafe {
                if items == SCAN_ITEMS as usize {
                    scan_run_in_registers(counts, out, first, end)
                } else {
                    scan_run(counts, out, first.min(end)..(first + items).min(end))
                }
            };
            if thread_idx_x() == 0 {
                // SAFETY: `t` is below the number of tiles.
                unsafe { tile_sums.add(t).store(total) };
            }
            // The next tile's scan reuses the scratch.
            sync_threads();
            t += grid_dim_x() as usize;
        }
    }
}

/// One thread's [`SCAN_ITEMS`] counts from `first` (those below `end`), read once into
/// registers: their exclusive prefix sums over the block into `out`. Returns the block's total.
///
/// # Safety
/// Every thread of the block calls it (the block scan); `counts` and `out` hold `end` values;
/// the launch gave the block scan's scratch.
#[inline(always)]
unsafe fn scan_run_in_registers(
    counts: *const u32,
    out: *mut u32,
    first: usize,
    end: usize,
) -> u64 {
    let (counts, out) = (Ptr::new(counts.cast_mut()), Ptr::new(out));
    let mut mine = [0u32; SCAN_ITEMS as usize];
    let mut sum = 0u64;
    for (k, v) in mine.iter_mut().enumerate() {
        if first + k < end {
            // SAFETY: in bounds.
            *v = unsafe { counts.add(first + k).load() };
            sum += *v as u64;
        }
    }
    // SAFETY: the caller's contract.
    let (mut before, total) = unsafe { block_exclusive_sum(sum) };
    for (k, v) in mine.iter().enumerate() {
        if first + k < end {
            // SAFETY: in bounds; each thread writes its own items.
            unsafe { out.add(first + k).store(before as u32) };
            before += *v as u64;
        }
    }
    total
}

/// [`scan_run_in_registers`] for a run of any length, `run`: summed, then read again to write.
///
/// # Safety
/// As [`scan_run_in_registers`]; `counts` and `out` do not overlap.
#[inline(always)]
unsafe fn scan_run(counts: *const u32, out: *mut u32, run: core::ops::Range<usize>) -> u64 {
    let (counts, out) = (Ptr::new(counts.cast_mut()), Ptr::new(out));
    let mut sum = 0u64;
    for i in run.clone() {
        // SAFETY: `i` is below the caller's end.
        sum += unsafe { counts.add(i).load() } as u64;
    }
    // SAFETY: the caller's contract.
    let (mut before, total) = unsafe { block_exclusive_sum(sum) };
    for i in run {
        // SAFETY: in bounds; each thread writes its own run, which `counts` does not overlap.
        unsafe {
            let v = counts.add(i).load();
            out.add(i).store(before as u32);
            before += v as u64;
        }
    }
    total
}

kernel! {
    /// PHASE 2 of the scan, one block: `tile_sums[0..tiles]` becomes its own exclusive prefix
    /// sum; `total[0]` gets the grand total and `out[len]` its low 32 bits (the end of the last
    /// list).
    ///
    /// One block of any size with
    /// [`block_scan_shared_bytes::<u64>`](crate::block_scan::block_scan_shared_bytes) bytes of
    /// dynamic shared memory.
    pub unsafe fn scan_tile_sums(
        tile_sums: *mut u64, tiles: u32, total: *mut u64, out: *mut u32, len: u32,
    ) {
        let (tile_sums, total, out) = (Ptr::new(tile_sums), Ptr::new(total), Ptr::new(out));
        let tiles = tiles as usize;
        let step = block_dim_x() as usize;
        let mut carry = 0u64;
        let mut chunk = 0;
        while chunk < tiles {
            let i = chunk + thread_idx_x() as usize;
            // SAFETY: read only in bounds.
            let v = if i < tiles { unsafe { tile_sums.add(i).load() } } else { 0 };
            // SAFETY: the launch gave the scratch; every thread of the block is here.
            let (before, sum) = unsafe { block_exclusive_sum(v) };
            if i < tiles {
                // SAFETY: in bounds; each thread writes its own slot, read above by itself only.
                unsafe { tile_sums.add(i).store(carry + before) };
            }
            carry += sum;
            sync_threads();
            chunk += step;
        }
        if thread_idx_x() == 0 {
            // SAFETY: `total` holds one value, `out` holds `len + 1`.
            unsafe {
                total.store(carry);
                out.add(len as usize).store(carry as u32);
            }
        }
    }
}

kernel! {
    /// PHASE 3 of the scan: adds to every `out[i]` (`i < len`) the offset of its tile, from
    /// the scanned `tile_sums`. Any grid, any block size.
    pub unsafe fn scan_add(out: *mut u32, len: u32, tile_sums: *const u64) {
        let (out, tile_sums) = (Ptr::new(out), Ptr::new(tile_sums.cast_mut()));
        for i in grid_stride(len as usize) {
            // SAFETY: in bounds; each element is this thread's alone.
            unsafe {
                let offset = tile_sums.add(i / SCAN_TILE as usize).load() as u32;
                out.add(i).store(out.add(i).load().wrapping_add(offset));
            }
        }
    }
}
