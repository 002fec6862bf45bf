//! Sums across a warp and across a block: CUB's `WarpReduce` and `BlockReduce` (its
//! `BLOCK_REDUCE_WARP_REDUCTIONS` algorithm), for any launch shape.
//!
//! A block sum in two phases:
//!
//! 1. **PHASE 1, in each warp**: a tree of `shfl_down_sync` steps (16, 8, 4, 2, 1) leaves the
//!    warp's sum in its lane 0 — five shuffles, no shared memory, no barrier;
//! 2. **PHASE 2, across warps**: each warp's lane 0 writes its sum to one slot of a small
//!    shared-memory scratch (one slot per warp), the block meets at `sync_threads`, and warp 0
//!    sums the slots with one more warp reduction.
//!
//! Compared with the tree in shared memory that the Numba tutorial's `dot_partial` builds
//! (eight rounds, each a barrier, over `blockDim` slots), this is one barrier and `warps` slots.
//!
//! A block whose size is not a multiple of 32 has a partial last warp. A shuffle from a lane
//! that does not exist returns an undefined value, so each step adds what it received only when
//! the source lane exists ([`warp_lanes`]); the sums are exact for every shape.

use crate::index::{thread_rank_in_block, threads_per_block};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::warp::{FULL_MASK, WARP_SIZE, WarpValue, lane_id, shfl_down_sync};
use core::ops::Add;

/// A value the reductions can sum: moved by shuffles, added, and zero by default.
pub trait Sum: WarpValue + Default + Add<Output = Self> {}
impl Sum for u32 {}
impl Sum for u64 {}
impl Sum for f32 {}
impl Sum for f64 {}

/// The number of lanes of the calling thread's warp that exist: 32, except in the last warp of a
/// block whose size is not a multiple of 32.
#[inline(always)]
pub fn warp_lanes() -> u32 {
    let first = thread_rank_in_block() - lane_id();
    (threads_per_block() - first).min(WARP_SIZE)
}

/// The mask naming the lanes of the calling thread's warp that exist ([`warp_lanes`] of them):
/// the `mask` of a warp operation every thread of the warp takes part in.
#[inline(always)]
pub fn warp_mask() -> u32 {
    let lanes = warp_lanes();
    if lanes == WARP_SIZE {
        FULL_MASK
    } else {
        (1 << lanes) - 1
    }
}

/// The sum of `v` over the lanes of the calling thread's warp.
///
/// Contract: every existing lane of the warp calls it together (not in a branch some lanes
/// skip). The result is defined only in lane 0. CUDA: CUB's `WarpReduce::Sum`. PTX: five
/// `shfl.sync.down.b32` (ten for 64-bit values).
#[inline(always)]
pub fn warp_reduce_sum<T: Sum>(v: T) -> T {
    let lanes = warp_lanes();
    let mask = warp_mask();
    let lane = lane_id();
    let mut sum = v;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        let other = shfl_down_sync(mask, sum, offset);
        if lane + offset < lanes {
            sum = sum + other;
        }
        offset /= 2;
    }
    sum
}

/// The reduction of `v` by `op` over the lanes of the calling thread's warp: [`warp_reduce_sum`]
/// for any associative operation — a minimum, a maximum, a compensated sum.
///
/// Contract as [`warp_reduce_sum`]; the result is defined only in lane 0. The lanes are combined
/// in a fixed tree (offsets 16, 8, 4, 2, 1; `op(lower lane, higher lane)`), so the same inputs
/// give the same bits on every run. CUDA: CUB's `WarpReduce::Reduce(op)`.
#[inline(always)]
pub fn warp_reduce<T: WarpValue>(v: T, op: impl Fn(T, T) -> T) -> T {
    let lanes = warp_lanes();
    let mask = warp_mask();
    let lane = lane_id();
    let mut acc = v;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        let other = shfl_down_sync(mask, acc, offset);
        if lane + offset < lanes {
            acc = op(acc, other);
        }
        offset /= 2;
    }
    acc
}

/// The reduction of `v` by `op` over every thread of the block: [`block_reduce_sum`] for any
/// associative operation, `identity` standing in for the warps that do not exist (`op(x,
/// identity) == x`). The order of combination is fixed by the launch shape alone.
///
/// Contract, result and scratch as [`block_reduce_sum`] (one `T` per warp of dynamic shared
/// memory: [`block_reduce_shared_bytes::<T>`]). CUDA: CUB's `BlockReduce::Reduce(op)`.
///
/// # Safety
/// As [`block_reduce_sum`].
#[inline(always)]
pub unsafe fn block_reduce<T: WarpValue>(v: T, identity: T, op: impl Fn(T, T) -> T) -> T {
    // SAFETY: the caller gave one `T` per warp of dynamic shared memory, aligned for `T`.
    let scratch = Ptr::new(unsafe { dynamic_shared::<T>() });
    let lane = lane_id();
    let warp = thread_rank_in_block() / WARP_SIZE;
    let warps = threads_per_block().div_ceil(WARP_SIZE);

    // PHASE 1: each warp's reduction lands in its lane 0, which publishes it.
    let warp_acc = warp_reduce(v, &op);
    if lane == 0 {
        // SAFETY: `warp < warps`, the scratch's length; only this lane writes this slot.
        unsafe { scratch.add(warp as usize).store(warp_acc) };
    }
    sync_threads();

    // PHASE 2: warp 0 reduces the warps' results (at most 32, one per lane).
    let mut total = identity;
    if warp == 0 {
        let mine = if lane < warps {
            // SAFETY: in bounds; the barrier above ordered the write before this read.
            unsafe { scratch.add(lane as usize).load() }
        } else {
            identity
        };
        total = warp_reduce(mine, &op);
    }
    total
}

/// Bytes of dynamic shared memory [`block_reduce_sum`] needs for a block of `threads` threads:
/// one `T` per warp.
pub const fn block_reduce_shared_bytes<T>(threads: u32) -> u32 {
    threads.div_ceil(WARP_SIZE) * size_of::<T>() as u32
}

/// The sum of `v` over every thread of the block, using the block's dynamic shared memory as
/// scratch.
///
/// Contract: every thread of the block calls it (it contains a `sync_threads`). The result is
/// defined only in thread 0 of the block. To call it a second time in one kernel, put a
/// `sync_threads` between the two calls: warp 0 may still be reading the scratch.
/// CUDA: CUB's `BlockReduce::Sum`. PTX: shuffles, `st.shared`, `bar.sync 0`, `ld.shared`.
///
/// # Safety
/// The launch gave each block at least [`block_reduce_shared_bytes::<T>`] bytes of dynamic
/// shared memory, used by nothing else during the call.
#[inline(always)]
pub unsafe fn block_reduce_sum<T: Sum>(v: T) -> T {
    // SAFETY: the caller gave one `T` per warp of dynamic shared memory; `Sum` types need at
    // most 8-byte alignment.
    let scratch = Ptr::new(unsafe { dynamic_shared::<T>() });
    let lane = lane_id();
    let warp = thread_rank_in_block() / WARP_SIZE;
    let warps = threads_per_block().div_ceil(WARP_SIZE);

    // PHASE 1: each warp's sum lands in its lane 0, which publishes it.
    let warp_sum = warp_reduce_sum(v);
    if lane == 0 {
        // SAFETY: `warp < warps`, the scratch's length; only this lane writes this slot.
        unsafe { scratch.add(warp as usize).store(warp_sum) };
    }
    sync_threads();

    // PHASE 2: warp 0 sums the warps' sums (at most 32 of them, one per lane).
    let mut total = T::default();
    if warp == 0 {
        let mine = if lane < warps {
            // SAFETY: in bounds; the barrier above ordered the write before this read.
            unsafe { scratch.add(lane as usize).load() }
        } else {
            T::default()
        };
        total = warp_reduce_sum(mine);
    }
    total
}
