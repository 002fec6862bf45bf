//! A histogram of 16-bit values — 65 536 bins, 256 KiB of `u32` counters — where privatizing
//! in one block's shared memory no longer works: the bins do not fit (a block has at most
//! 227 KiB). Token ids of a tokenized corpus (GPT-2's 50 257 fit), 16-bit image and sensor
//! samples.
//!
//! | kernel | what it does | the price |
//! |---|---|---|
//! | [`histogram_u16_global`] | one global atomic (`red.global.add.u64`) per value | every value is an L2 atomic; hot bins serialize |
//! | [`histogram_u16_ranges`] | privatize a *range* of bins per block: the grid's y index picks the range, each block counts only the values in it, in shared memory | the input is read once per range (two ranges of 32 768 bins at 128 KiB) |
//! | [`histogram_u16_cluster`] | privatize per **cluster**: the 65 536 bins spread over the shared memory of the cluster's blocks (2 × 128 KiB, 4 × 64 KiB, …); each value goes to the block that owns its bin, through distributed shared memory (`mapa` + `red.shared::cluster`) | one read of the input; a cluster-scope atomic per value, in the GPC, not in L2 |
//!
//! Every kernel takes `(values, len, histo)`: `len` values at `values` (2-byte aligned; any
//! `len`, any grid — grid-stride loops with 16-byte loads where the array is aligned), and
//! [`U16_BINS`] zeroed `u64` at `histo`, to which the counts are added.
//!
//! Shared-memory counters are `u32`: a block or cluster counts at most its share of `len`
//! values, which the host keeps below 2³² per launch.

use super::load::{BYTES16, ByteSplit, Bytes16};
use crate::atomic::{Scope, StoreOrder, red_add};
use crate::index::{block_dim_x, block_idx_y, global_id_x, thread_idx_x, threads_per_grid_x};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::shared_atomic::SharedU32;
use crate::sync::sync_threads;

/// One bin per 16-bit value.
pub const U16_BINS: u32 = 1 << 16;

/// Threads per block of the three kernels (the host's choice; each works with any): enough to
/// zero and flush a block's bins quickly, and to keep loads in flight at one block per SM.
pub const WIDE_THREADS_PER_BLOCK: u32 = 1024;

/// Calls `f(value)` for every value this thread owns in a 1-D grid-stride loop over `len`
/// values at `values`: 16-byte loads (eight values) for the aligned body, four in flight and
/// all issued before any value is used, then the head and tail one value at a time.
///
/// # Safety
/// `values` is 2-byte aligned and valid for `len` values.
#[inline(always)]
unsafe fn for_each_value(values: *const u16, len: usize, mut f: impl FnMut(u32)) {
    let values = Ptr::new(values.cast_mut());
    let bytes = values.cast::<u8>().as_ptr();
    let split = ByteSplit::of(bytes, 2 * len);
    let stride = threads_per_grid_x();
    // SAFETY: every `v` passed is below `split.body`.
    let load = |v: usize| unsafe { split.load(bytes, v) };
    // Written out, not looped over arrays: an array indexed in a loop the compiler does not
    // unroll would live in local memory (a stack frame).
    let mut word = |w: u32| {
        f(w & 0xffff);
        f(w >> 16);
    };
    let mut v = global_id_x();
    while v + 3 * stride < split.body {
        let (a, b) = (load(v).0, load(v + stride).0);
        let (c, d) = (load(v + 2 * stride).0, load(v + 3 * stride).0);
        // Word k of each load before word k + 1 of any: all four loads are needed at once.
        macro_rules! words {
            ($k:tt) => {
                word(a[$k]);
                word(b[$k]);
                word(c[$k]);
                word(d[$k]);
            };
        }
        words!(0);
        words!(1);
        words!(2);
        words!(3);
        v += 4 * stride;
    }
    while v < split.body {
        let Bytes16([w0, w1, w2, w3]) = load(v);
        word(w0);
        word(w1);
        word(w2);
        word(w3);
        v += stride;
    }
    // The head and the tail: whole values, since the array is 2-byte aligned.
    let head = split.head / 2;
    let tail_start = split.tail_start() / 2;
    let scalars = head + (len - tail_start);
    let mut k = global_id_x();
    while k < scalars {
        let i = if k < head { k } else { tail_start + (k - head) };
        // SAFETY: `i < len`.
        let value = unsafe { values.add(i).load() } as u32;
        f(value);
        k += stride;
    }
}

const _: () = assert!(BYTES16 == 16);

kernel! {
    /// One global atomic per value: the histogram the way 4.3 counts bytes, at 65 536 bins.
    ///
    /// Launch with any grid; `histo` holds [`U16_BINS`] zeroed `u64`.
    pub unsafe fn histogram_u16_global(values: *const u16, len: u64, histo: *mut u64) {
        // SAFETY: `len` values at `values`; every value is a bin of `histo`, touched only
        // atomically.
        unsafe {
            for_each_value(values, len as usize, |v| {
                red_add(histo.add(v as usize), 1u64, Scope::Device, StoreOrder::Relaxed)
            });
        }
    }
}

/// Zeroes `bins` words of this block's dynamic shared memory (no barrier).
///
/// # Safety
/// The launch gave at least `4 * bins` bytes; every thread of the block calls it.
#[inline(always)]
unsafe fn zero_bins(s_bins: *mut u32, bins: u32) {
    let s_bins = Ptr::new(s_bins);
    let mut b = thread_idx_x();
    while b < bins {
        // SAFETY: `b < bins`; nobody counts before the caller's barrier.
        unsafe { s_bins.add(b as usize).store(0) };
        b += block_dim_x();
    }
}

/// Adds this block's `bins` non-zero counters to `histo[first..]`, one global atomic each.
///
/// # Safety
/// After a barrier that ends the counting; `histo` holds `first + bins` bins.
#[inline(always)]
unsafe fn flush_bins(s_bins: *const u32, bins: u32, histo: *mut u64, first: u32) {
    let s_bins = Ptr::new(s_bins.cast_mut());
    let mut b = thread_idx_x();
    while b < bins {
        // SAFETY: `b < bins`; the counting is over.
        let c = unsafe { s_bins.add(b as usize).load() };
        if c != 0 {
            // SAFETY: `first + b` is a bin of `histo`, touched only atomically.
            unsafe {
                red_add(
                    histo.add((first + b) as usize),
                    c as u64,
                    Scope::Device,
                    StoreOrder::Relaxed,
                )
            };
        }
        b += block_dim_x();
    }
}

kernel! {
    /// Privatized by bin range: block `(x, y)` counts, in its shared memory, the values of
    /// its share of the input (grid-stride over x) that fall in range `y` —
    /// `y * range_bins .. (y + 1) * range_bins` — then adds its non-zero bins to `histo`.
    ///
    /// Launch with a grid of `(any, U16_BINS / range_bins)` and `4 * range_bins` bytes of
    /// shared memory; `range_bins` divides [`U16_BINS`].
    pub unsafe fn histogram_u16_ranges(values: *const u16, len: u64, histo: *mut u64, range_bins: u32) {
        let first = block_idx_y() * range_bins;
        // SAFETY: `range_bins` words of shared memory (launch contract), counted only
        // atomically between the barriers; values outside the range are skipped.
        unsafe {
            let s_bins = dynamic_shared::<u32>();
            zero_bins(s_bins, range_bins);
            sync_threads();
            let base = SharedU32::from_generic(s_bins);
            for_each_value(values, len as usize, |v| {
                let d = v.wrapping_sub(first);
                if d < range_bins {
                    base.offset(d).red_add_block(1);
                }
            });
            sync_threads();
            flush_bins(s_bins, range_bins, histo, first);
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
kernel! {
    /// Privatized by cluster: the cluster's `n` blocks hold the 65 536 bins between them,
    /// `U16_BINS / n` each — block `r` the bins `r * U16_BINS / n ..` — and every value is
    /// counted with a cluster-scope atomic in the shared memory of the block that owns its bin
    /// (`mapa` + `red.relaxed.cluster.shared::cluster.add.u32`). PHASE 1: every block zeroes
    /// its bins; a cluster barrier, so no block counts into a sibling's bins before they are
    /// zero. PHASE 2: count. A cluster barrier, so every count has landed and no block exits
    /// while a sibling may still count into its memory. PHASE 3: every block adds its
    /// non-zero bins to `histo`.
    ///
    /// Launch in clusters of a power of two `n` blocks (2 to 16) with `4 * U16_BINS / n` bytes
    /// of shared memory.
    pub unsafe fn histogram_u16_cluster(values: *const u16, len: u64, histo: *mut u64) {
        use crate::cluster::{ClusterU32, cluster_block_count, cluster_block_rank, cluster_sync};
        let n = cluster_block_count();
        let per_block = U16_BINS >> n.trailing_zeros();
        let owner_shift = 16 - n.trailing_zeros();
        // SAFETY: `per_block` words of shared memory in every block of the cluster (launch
        // contract); a sibling's words are touched only by cluster-scope atomics, between the
        // two cluster barriers, while every block of the cluster runs.
        unsafe {
            let s_bins = dynamic_shared::<u32>();
            zero_bins(s_bins, per_block);
            cluster_sync();
            let base = SharedU32::from_generic(s_bins);
            for_each_value(values, len as usize, |v| {
                let owner = v >> owner_shift;
                let bin = v & (per_block - 1);
                ClusterU32::map(base.offset(bin), owner).red_add_cluster(1);
            });
            cluster_sync();
            flush_bins(s_bins, per_block, histo, cluster_block_rank() * per_block);
        }
    }
}
