//! Counting the elements of an array above a threshold: from a lock per element to one atomic
//! per block.
//!
//! Source: the blog on CUDA lock pitfalls (zh), `GtThrCntKernel(float* src, int len, float thr,
//! int* cnt, …)`: a grid-stride loop that skips `src[i] <= thr` and, for every other element,
//! takes a lock and does `*cnt = *cnt + 1` — then `atomicAdd(cnt, 1)` under the lock, then the
//! "true thread lock" loop. The blog's point is the lock; this module's is what to do instead.
//!
//! Every kernel counts `src[i] > thr` for `i < len` into the `u64` at `cnt` (zeroed by the
//! host), with a grid-stride loop so that any grid covers any `len`. NaN is never above a
//! threshold (`NaN > thr` is false) — unlike the blog's `if (src[i] <= thr) continue;`, which
//! would count every NaN, since `NaN <= thr` is false too.
//!
//! | kernel | what changed | why it is faster |
//! |---|---|---|
//! | [`gt_thr_cnt_mutex`] | the blog's kernel: a [`Mutex`] around `*cnt += 1` | — (the critical sections run one at a time for the whole GPU, one per element above) |
//! | [`gt_thr_cnt_atomic`] | `atomicAdd(cnt, 1)` per element, no lock | one L2 atomic per element instead of a lock round trip; still serialized on one address |
//! | [`gt_thr_cnt_warp`] | warp-aggregated: `__ballot_sync` + popcount, one atomic per warp | up to 32× fewer atomics |
//! | [`gt_thr_cnt_block`] | a count per thread, a block reduction, one atomic per block | atomics vanish from the loop: memory-bound |
//! | [`gt_thr_cnt_vec4`] | the same with 16-byte loads, four in flight per thread | fewer instructions per byte, more bytes in flight: at the copy roofline |
//!
//! Blocks of [`THREADS_PER_BLOCK`]; the host picks the grid (enough blocks to fill the GPU,
//! or few on the simulator).

use crate::atomic::atomic_add_device;
use crate::block_reduce::{block_reduce_sum, warp_mask};
use crate::index::{global_id_x, grid_stride, thread_idx_x, threads_per_grid_x};
use crate::lock::{Mutex, MutexState};
use crate::mem::Ptr;
use crate::vector::{F32x4, Split4, grid_stride_each, grid_stride_unrolled};
use crate::warp::{ballot_sync, lane_id};

/// Threads per block for every kernel here: eight warps — a multiple of 32 (no partial warps),
/// small enough that eight blocks fill an SM of 2048 threads, large enough that the per-block
/// step (one atomic) is rare.
pub const THREADS_PER_BLOCK: u32 = 256;

/// 16-byte loads each thread of [`gt_thr_cnt_vec4`] issues before using any: 64 bytes in flight
/// per thread, over 100 KiB per SM at full occupancy — more than HBM's latency × bandwidth per
/// SM needs (about 30 KiB on an H200).
pub const VEC4_UNROLL: usize = 4;

/// Whether `x` counts: strictly above `thr`, and never NaN.
#[inline(always)]
fn above(x: f32, thr: f32) -> u32 {
    (x > thr) as u32
}

// ANCHOR: mutex
kernel! {
    /// The blog's `GtThrCntKernel`: for each element above `thr`, take the lock and increment
    /// `*cnt` with a plain load and store.
    ///
    /// Source: the blog's `GtThrCntKernel` with `Lock.lock(); *cnt = *cnt + 1; Lock.unlock();`.
    /// What changed: the lock is the bounded [`Mutex`] (acquire/release ordering, back-off,
    /// a timeout) instead of the blog's `CudaKernelLock`, so the increment needs no fence and a
    /// lock that is never released fails the launch instead of hanging it; a thread whose
    /// `lock` gives up stops, and the host's `DeviceMutex::check` reports it.
    /// Cost: the critical sections run one at a time for the whole GPU, one per element above
    /// the threshold, and every change of holder is a trip of the lock word through L2 (how the
    /// [`Mutex`] hands it on and waits is in its docs): on the order of a microsecond per
    /// element where the blog's spinlock is used, never better than the atomic kernel.
    pub unsafe fn gt_thr_cnt_mutex(
        src: *const f32, len: u64, thr: f32, cnt: *mut u64, state: *mut MutexState,
    ) {
        // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
        let mutex = unsafe { Mutex::from_ptr(state) };
        let (src, cnt) = (Ptr::new(src.cast_mut()), Ptr::new(cnt));
        for i in grid_stride(len as usize) {
            // SAFETY: `i < len`, and `src` holds `len` floats.
            if above(unsafe { src.add(i).load() }, thr) == 0 {
                continue;
            }
            let Ok(_guard) = mutex.lock() else { return };
            // SAFETY: the guard makes this thread the only one touching `*cnt`.
            unsafe { cnt.store(cnt.load() + 1) };
        }
    }
}
// ANCHOR_END: mutex

// ANCHOR: atomic
kernel! {
    /// One `atomicAdd(cnt, 1)` per element above `thr`, no lock.
    ///
    /// Source: the blog's fix, `*cnt = *cnt + 1` → `atomicAdd(cnt, 1)` (without the lock around
    /// it, which the atomic makes redundant).
    /// What changed: the read-modify-write happens in L2 as one indivisible operation, so no
    /// lock is needed and no update is lost. All of them still go to one address, where L2
    /// performs them one after another.
    pub unsafe fn gt_thr_cnt_atomic(src: *const f32, len: u64, thr: f32, cnt: *mut u64) {
        let src = Ptr::new(src.cast_mut());
        for i in grid_stride(len as usize) {
            // SAFETY: `i < len`; `cnt` is touched only atomically during the launch.
            unsafe {
                if above(src.add(i).load(), thr) == 1 {
                    atomic_add_device(cnt, 1);
                }
            }
        }
    }
}
// ANCHOR_END: atomic

// ANCHOR: warp
kernel! {
    /// Warp-aggregated atomics: the warp votes, and its lane 0 adds the warp's count with one
    /// atomic.
    ///
    /// What changed: `__ballot_sync` gives every lane the bit mask of the lanes whose element is
    /// above; its popcount is the warp's count, added by one lane. Up to 32× fewer atomics on
    /// the contended address.
    /// The loop is per warp, not per thread: a warp steps over `[base, base + 32)` windows with
    /// a bound (`base < len`) that is the same for all its lanes, so that lanes whose element
    /// is past the end still vote (false). A per-thread grid-stride loop would let those lanes
    /// leave early, and a ballot naming them would wait for lanes that never come.
    pub unsafe fn gt_thr_cnt_warp(src: *const f32, len: u64, thr: f32, cnt: *mut u64) {
        let src = Ptr::new(src.cast_mut());
        let len = len as usize;
        let lane = lane_id() as usize;
        let mask = warp_mask();
        let threads_per_grid = threads_per_grid_x();
        // The warp's first thread: the same `base` in every lane.
        let mut base = global_id_x() - lane;
        while base < len {
            let i = base + lane;
            // SAFETY: read only when `i < len`.
            let mine = i < len && above(unsafe { src.add(i).load() }, thr) == 1;
            let votes = ballot_sync(mask, mine);
            if lane == 0 && votes != 0 {
                // SAFETY: `cnt` is touched only atomically during the launch.
                unsafe { atomic_add_device(cnt, votes.count_ones() as u64) };
            }
            base += threads_per_grid;
        }
    }
}
// ANCHOR_END: warp

// ANCHOR: block
kernel! {
    /// A count per thread, summed over the block, and one atomic per block.
    ///
    /// What changed: each thread counts its elements in a register over the whole grid-stride
    /// loop; the block sums the counts (warp shuffles, then shared memory:
    /// [`block_reduce_sum`]) and thread 0 adds the block's total. With a grid that just fills
    /// the GPU that is about a thousand atomics for any `len`: the loop is pure loads and
    /// compares, and the kernel runs at the speed of memory.
    /// Dynamic shared memory: `block_reduce_shared_bytes::<u64>(blockDim.x)`.
    pub unsafe fn gt_thr_cnt_block(src: *const f32, len: u64, thr: f32, cnt: *mut u64) {
        let src = Ptr::new(src.cast_mut());
        let mut count = 0u32;
        for i in grid_stride(len as usize) {
            // SAFETY: `i < len`.
            count += above(unsafe { src.add(i).load() }, thr);
        }
        // SAFETY: the host gives the scratch the block reduction needs.
        let total = unsafe { block_reduce_sum(count as u64) };
        if thread_idx_x() == 0 && total != 0 {
            // SAFETY: `cnt` is touched only atomically during the launch.
            unsafe { atomic_add_device(cnt, total) };
        }
    }
}
// ANCHOR_END: block

kernel! {
    /// [`gt_thr_cnt_block`] with 16-byte loads: the one to use, and the benchmark's.
    ///
    /// What changed: the body of the array is read as [`F32x4`] (`ld.global.v4.f32`),
    /// [`VEC4_UNROLL`] loads issued back to back per thread before any is compared, so each
    /// thread has 64 bytes in flight and spends a quarter of the instructions per byte; the
    /// misaligned head and the tail (fewer than four floats each) are read one at a time
    /// ([`Split4`]). The count per thread, block reduction and one atomic per block are as before.
    /// Dynamic shared memory: `block_reduce_shared_bytes::<u64>(blockDim.x)`.
    pub unsafe fn gt_thr_cnt_vec4(src: *const f32, len: u64, thr: f32, cnt: *mut u64) {
        let src = Ptr::new(src.cast_mut());
        let split = Split4::of(src.as_ptr(), len as usize);
        let mut count = 0u32;
        grid_stride_each(split.scalars(), |k| {
            // SAFETY: `scalar_index(k) < len` for `k < scalars()`.
            count += above(unsafe { src.add(split.scalar_index(k)).load() }, thr);
        });
        grid_stride_unrolled::<VEC4_UNROLL>(split.body, |v| {
            // SAFETY: `v < split.body`, and `split` was made for `src` and `len`.
            let F32x4(x) = unsafe { split.load(src.as_ptr(), v) };
            count += above(x[0], thr) + above(x[1], thr) + above(x[2], thr) + above(x[3], thr);
        });
        // SAFETY: the host gives the scratch the block reduction needs.
        let total = unsafe { block_reduce_sum(count as u64) };
        if thread_idx_x() == 0 && total != 0 {
            // SAFETY: `cnt` is touched only atomically during the launch.
            unsafe { atomic_add_device(cnt, total) };
        }
    }
}
