//! The last step of privatization: a histogram per lane, in 16-bit counters, laid out so that
//! no two lanes of a warp ever touch the same shared-memory bank.

use super::load::{BYTES16, ByteSplit, for_each_body_byte, for_each_scalar};
use crate::atomic::atomic_add_device;
use crate::index::{block_dim_x, global_id_x, thread_idx_x, threads_per_grid_x};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::shared_atomic::SharedU32;
use crate::sync::sync_threads;

/// Shared-memory words per lane: 128, each holding two 16-bit counters — byte `b` is counted
/// in the low half of word `b` when `b < 128` and in the high half of word `b - 128` otherwise.
/// All 256 byte values are counted whatever `bins` is; the 128-bin histogram drops the high
/// halves when it folds, so the byte loop has no branch.
pub const LANE_WORDS: u32 = 128;

/// The largest count a 16-bit lane counter holds.
pub const LANE_COUNTER_MAX: usize = u16::MAX as usize;

/// 16-byte loads a thread counts between two folds of the lane counters into the global bins:
/// a counter counts at most every byte its lane reads — 16 per load, and the scalar head and
/// tail (at most 2 × 15 bytes, counted before the first fold) — so `16 × 4094 + 30 = 65 534`
/// never overflows a 16-bit counter. A thread reaches it only when the input exceeds ~64 KiB per
/// thread of the grid (3 GiB for a full H100 grid), so nearly every launch folds once.
pub const LANE_FLUSH_LOADS: usize = (LANE_COUNTER_MAX - 2 * (BYTES16 - 1)) / BYTES16;

/// Dynamic shared memory of [`histogram_lane`]: [`LANE_WORDS`] `u32` per thread.
pub const fn lane_shared_bytes(threads: u32) -> u32 {
    LANE_WORDS * 4 * threads
}

/// Zeroes this thread's own counters: word `w` of lane `t` is `s_lanes[w * blockDim.x + t]`.
///
/// # Safety
/// The launch gave [`lane_shared_bytes`]`(blockDim.x)`; no other thread touches this thread's
/// words until the next barrier.
#[inline(always)]
unsafe fn zero_own(s_lanes: Ptr<u32>) {
    let (t, threads) = (thread_idx_x(), block_dim_x());
    for w in 0..LANE_WORDS {
        // SAFETY: `w * threads + t < LANE_WORDS * threads`, this thread's own word.
        unsafe { s_lanes.add((w * threads + t) as usize).store(0) };
    }
}

/// Counts one byte in this lane's counters: one `red.shared` on a word no other thread touches.
///
/// The atomic is not there for atomicity. A plain load-add-store would make the thread wait
/// for each load, because the next byte may hit the same word; `red` returns nothing, so the
/// thread issues the next byte's add at once and the shared-memory unit performs them in order.
///
/// # Safety
/// `s_lane` is this thread's first word ([`zero_own`]'s layout).
#[inline(always)]
unsafe fn count(s_lane: SharedU32, threads: u32, byte: u32) {
    let half = byte >> 7; // 0: the low 16 bits, 1: the high 16 bits
    // SAFETY: `(byte & 127) < LANE_WORDS`: this thread's word for `byte`.
    unsafe {
        s_lane
            .offset((byte & 127) * threads)
            .red_add_block(1 << (16 * half))
    };
}

/// Sums word `w` over the block's lanes — low and high halves apart — for every word this
/// thread owns (`w = t, t + blockDim.x, …`), and adds each non-zero sum below `bins` to the
/// global bin: one device atomic per non-zero bin per block.
///
/// Lane `t` starts its sum at lane `t` and wraps around, so at every step the 32 lanes of a
/// warp read 32 different banks; all starting at lane 0 would read one bank 32 times.
///
/// # Safety
/// After a barrier that follows every count; `histo` holds `bins` `u64`, touched only atomically.
#[inline(always)]
unsafe fn fold(s_lanes: Ptr<u32>, bins: u32, histo: *mut u64) {
    let (t, threads) = (thread_idx_x(), block_dim_x());
    let mut w = t;
    while w < LANE_WORDS {
        let (mut low, mut high) = (0u32, 0u32); // at most 65 535 × 1024 each: no overflow
        let mut lane = t;
        for _ in 0..threads {
            // SAFETY: `w * threads + lane < LANE_WORDS * threads`; after the barrier, only read.
            let x = unsafe { s_lanes.add((w * threads + lane) as usize).load() };
            low += x & 0xffff;
            high += x >> 16;
            lane += 1;
            if lane == threads {
                lane = 0;
            }
        }
        // SAFETY: the caller's contract for `histo`; `flush_bin` checks `bin < bins`.
        unsafe {
            flush_bin(histo, w, low, bins);
            flush_bin(histo, w + LANE_WORDS, high, bins);
        }
        w += threads;
    }
}

/// Adds `n` to global bin `bin` if both are worth it: `n != 0` and `bin < bins`.
///
/// # Safety
/// `histo` holds `bins` `u64`, touched only atomically during the launch.
#[inline(always)]
unsafe fn flush_bin(histo: *mut u64, bin: u32, n: u32, bins: u32) {
    if n != 0 && bin < bins {
        // SAFETY: `bin < bins`.
        unsafe { atomic_add_device(histo.add(bin as usize), n as u64) };
    }
}

kernel! {
    /// One histogram per lane in 16-bit counters, 16-byte loads: no two lanes ever contend.
    ///
    /// What changed from [`histogram_vec16`](super::histogram_vec16), and why: in a per-warp
    /// histogram the lanes that read different bytes whose bins are 32 words apart hit one
    /// bank and take turns — three or four turns per warp instruction on random bytes, more on
    /// data with a few values 32 apart. Here every lane has its own counters, stored
    /// **bin-major**: word `w` of lane `t` is `s_lanes[w * blockDim.x + t]`, so lane `t` always
    /// lands in bank `t mod 32`, whatever byte it read. One pass per warp instruction for any
    /// data: text, random bytes and one repeated byte cost the same.
    /// The price is memory — 512 bytes per thread, so two 16-bit counters share a word
    /// ([`LANE_WORDS`]) — and a fold: a 16-bit counter must be emptied before it overflows,
    /// so the loop runs in rounds of at most [`LANE_FLUSH_LOADS`] loads per thread, each ended
    /// by a barrier and a fold of every lane's counters into the global bins (nearly always a
    /// single round). The fold reads 128 words per thread.
    /// `histo` holds `bins` zeroed `u64`; bytes `>= bins` are counted and dropped by the fold.
    /// Dynamic shared memory: [`lane_shared_bytes`]`(blockDim.x)`.
    pub unsafe fn histogram_lane(arr: *const u8, len: u64, histo: *mut u64, bins: u32) {
        let arr = Ptr::new(arr.cast_mut());
        let (t, threads) = (thread_idx_x(), block_dim_x());
        // SAFETY: the launch gave `LANE_WORDS * blockDim.x` u32 of dynamic shared memory.
        let s_lanes = Ptr::new(unsafe { dynamic_shared::<u32>() });
        // SAFETY: nobody else touches this thread's words before the first barrier.
        unsafe { zero_own(s_lanes) };
        // SAFETY: `s_lanes + t` is in the block's dynamic shared memory.
        let s_lane = unsafe { SharedU32::from_generic(s_lanes.add(t as usize).as_ptr()) };
        let split = ByteSplit::of(arr.as_ptr(), len as usize);
        // SAFETY: `i < len`; `s_lane` is this thread's.
        for_each_scalar(&split, |i| unsafe { count(s_lane, threads, arr.add(i).load() as u32) });
        // The same number of rounds in every thread of the block (a barrier ends each): thread
        // 0 of the grid has the most loads, `⌈body / stride⌉`.
        let stride = threads_per_grid_x();
        let round_span = LANE_FLUSH_LOADS * stride;
        let rounds = split.body.div_ceil(stride).div_ceil(LANE_FLUSH_LOADS).max(1);
        for r in 0..rounds {
            let start = global_id_x() + r * round_span;
            let end = split.body.min(start.saturating_add(round_span));
            // SAFETY: `split` is `arr`'s, `end <= split.body`; `s_lane` is this thread's.
            unsafe {
                for_each_body_byte(&split, arr.as_ptr(), start, end, |byte| {
                    count(s_lane, threads, byte)
                })
            };
            sync_threads(); // every lane's counts are in before any thread sums them
            // SAFETY: after the barrier; `histo` as the kernel's contract.
            unsafe { fold(s_lanes, bins, histo) };
            if r + 1 < rounds {
                sync_threads(); // every fold has read this lane's counters before they reset
                // SAFETY: this thread's own words; the next reader waits at the next barrier.
                unsafe { zero_own(s_lanes) };
            }
        }
    }
}
