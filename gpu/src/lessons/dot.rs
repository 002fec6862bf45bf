//! The dot product `Σ a[i]·b[i]` of two `f32` arrays, finished on the host, under a lock, with
//! an atomic — and fast.
//!
//! Source: Numba CUDA by example, part 4, example 4.6 (`dot_partial`, `dot_mutex`), launched as
//! `[32 * 20, 256]` on `N = 10_000_000`, `a = ones`, `b = ones / N`. Each thread sums its
//! products over a grid-stride loop (in `float64`: Numba types `s_thread = 0.0` as a double),
//! the block sums its threads' values with a tree in shared memory, and then:
//!
//! | kernel | how the blocks' sums are combined | what changed and why |
//! |---|---|---|
//! | [`dot_partial`] | written to `partial_c[blockIdx.x]`; the host adds them | the source's first version |
//! | [`dot_mutex`] | thread 0 takes a [`Mutex`] and does `c[0] += s_block[0]` | the source's second: the whole dot on the GPU |
//! | [`dot_atomic`] | thread 0 does one `atomicAdd(c, s_block[0])` | a lock for one addition is an atomic's job |
//! | [`dot_vec4`] | warp shuffles, one atomic per block; 16-byte loads | the benchmark's: at the copy roofline |
//!
//! **The source's bug, fixed here.** The source's `dot_mutex` reduces with
//! `s_block[tid] += s_block[tid + 1]` where `dot_partial` has `s_block[tid + i]`. With the
//! source's data nearly every thread's partial sum is the same value `v` (61 products of `1/N`;
//! only the first 5760 of the 163 840 threads have 62), and when all of a block's values are
//! equal each round of that loop happens to double `s_block[0]` (2v, 4v, … 256v): the result
//! looks right (1.0000088 in the source — the 9·10⁻⁶ comes from the few blocks whose values
//! differ). With any other data it is wrong, and it is a data race as well (thread `tid` reads
//! `s_block[tid + 1]` while thread `tid + 1` writes it). Every kernel here uses `tid + i`.
//!
//! The tree of the first three kernels halves `blockDim.x` each round, so it needs a power-of-two
//! block (the source's 256) and `blockDim.x` floats of dynamic shared memory.

use crate::atomic::atomic_add_device;
use crate::block_reduce::block_reduce_sum;
use crate::index::{block_dim_x, block_idx_x, global_id_x, thread_idx_x, threads_per_grid_x};
use crate::lock::{Mutex, MutexState};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::vector::{F32x4, Split4, grid_stride_unrolled};

/// The source's `threads_per_block`.
pub const THREADS_PER_BLOCK: u32 = 256;
/// The source's `blocks_per_grid`: 32 × 20 — a few blocks per SM of the source's GPU.
pub const BLOCKS_PER_GRID: u32 = 32 * 20;
/// Loads (16 bytes each, of `a` and of `b`) each thread of [`dot_vec4`] issues before using
/// any: 128 bytes in flight per thread.
pub const VEC4_UNROLL: usize = 4;

/// The part of the source kernels that, as the source says, "stays exactly the same in the next
/// version": a grid-stride sum per thread, then the block's tree in shared memory. Returns
/// `s_block[0]`, the block's sum, in thread 0 (others get their own slot).
///
/// # Safety
/// `a` and `b` hold `n` floats; the launch gave `blockDim.x` floats of dynamic shared memory;
/// `blockDim.x` is a power of two; every thread of the block calls this.
#[inline(always)]
unsafe fn block_sum(a: *const f32, b: *const f32, n: u64) -> f32 {
    let (a, b) = (Ptr::new(a.cast_mut()), Ptr::new(b.cast_mut()));
    let igrid = global_id_x();
    let threads_per_grid = threads_per_grid_x();
    let mut s_thread = 0.0f64;
    let mut iarr = igrid;
    while iarr < n as usize {
        // SAFETY: `iarr < n`.
        s_thread += unsafe { a.add(iarr).load() * b.add(iarr).load() } as f64;
        iarr += threads_per_grid;
    }
    // SAFETY: the launch gave `blockDim.x` floats.
    let s_block = Ptr::new(unsafe { dynamic_shared::<f32>() });
    let tid = thread_idx_x() as usize;
    // SAFETY: `tid < blockDim.x`; each thread writes its own slot, and the barrier below
    // orders the writes before the tree's reads (as it orders each round before the next).
    unsafe { s_block.add(tid).store(s_thread as f32) };
    sync_threads();
    let mut i = block_dim_x() as usize / 2;
    while i > 0 {
        if tid < i {
            // The source's `dot_mutex` has `tid + 1` here: see the module docs.
            // SAFETY: `tid < i` and `tid + i < 2i <= blockDim.x`; this round only reads slots
            // `>= i`, which no thread of this round writes.
            unsafe {
                let v = s_block.add(tid + i).load();
                s_block.add(tid).store(s_block.add(tid).load() + v);
            }
        }
        sync_threads();
        i /= 2;
    }
    // SAFETY: `tid < blockDim.x`; the last barrier ordered the last round's write.
    unsafe { s_block.add(tid).load() }
}

kernel! {
    /// Each block writes its sum to `partial_c[blockIdx.x]`; the host finishes the sum.
    ///
    /// Source: Numba tutorial, example 4.6, `dot_partial`. `partial_c` has one float per block.
    /// Dynamic shared memory: `blockDim.x` floats (a power of two).
    pub unsafe fn dot_partial(a: *const f32, b: *const f32, n: u64, partial_c: *mut f32) {
        // SAFETY: forwarded to the launch's contract.
        let s = unsafe { block_sum(a, b, n) };
        if thread_idx_x() == 0 {
            // SAFETY: one slot per block.
            unsafe { Ptr::new(partial_c).add(block_idx_x() as usize).store(s) };
        }
    }
}

// ANCHOR: dot_mutex
kernel! {
    /// Thread 0 of each block takes the lock and adds the block's sum to `c[0]`.
    ///
    /// Source: Numba tutorial, example 4.6, `dot_mutex` (with `lock`/`unlock` around
    /// `c[0] += s_block[0]`), its reduction fixed to `s_block[tid + i]`.
    /// What changed from [`dot_partial`]: the blocks' sums are combined on the GPU, one block
    /// at a time under the bounded [`Mutex`]; a block whose thread 0 gives up waiting adds
    /// nothing, and the host's `DeviceMutex::check` reports it.
    /// Dynamic shared memory: `blockDim.x` floats (a power of two).
    pub unsafe fn dot_mutex(state: *mut MutexState, a: *const f32, b: *const f32, n: u64, c: *mut f32) {
        // SAFETY: forwarded to the launch's contract.
        let s = unsafe { block_sum(a, b, n) };
        if thread_idx_x() == 0 {
            // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
            let mutex = unsafe { Mutex::from_ptr(state) };
            if let Ok(_guard) = mutex.lock() {
                // SAFETY: the guard makes this thread the only one touching `c[0]`.
                unsafe {
                    let c = Ptr::new(c);
                    c.store(c.load() + s);
                }
            }
        }
    }
}
// ANCHOR_END: dot_mutex

kernel! {
    /// Thread 0 of each block adds the block's sum to `c[0]` with one `atomicAdd`.
    ///
    /// What changed from [`dot_mutex`]: the lock protected a single addition, which one atomic
    /// (`atom.relaxed.gpu.add.f32`, performed in L2) does without a hand-off.
    /// Dynamic shared memory: `blockDim.x` floats (a power of two).
    pub unsafe fn dot_atomic(a: *const f32, b: *const f32, n: u64, c: *mut f32) {
        // SAFETY: forwarded to the launch's contract.
        let s = unsafe { block_sum(a, b, n) };
        if thread_idx_x() == 0 {
            // SAFETY: `c` is touched only atomically during the launch.
            unsafe { atomic_add_device(c, s) };
        }
    }
}

kernel! {
    /// The fast dot: 16-byte loads, four lanes of partial sums per thread, a warp-shuffle block
    /// reduction and one atomic per block.
    ///
    /// What changed from [`dot_atomic`]: `a` and `b` are read as [`F32x4`] (`ld.global.v4.f32`),
    /// [`VEC4_UNROLL`] of each in flight per thread, the misaligned head and the tail one float
    /// at a time ([`Split4::of_pair`]); each thread keeps four `f32` sums (one per lane of the
    /// vector: four independent add chains, and shorter ones, so less rounding error); the block
    /// sums with shuffles and one barrier ([`block_reduce_sum`]) instead of an eight-round tree.
    /// Any block size works. Dynamic shared memory: `block_reduce_shared_bytes::<f32>(blockDim.x)`.
    pub unsafe fn dot_vec4(a: *const f32, b: *const f32, n: u64, c: *mut f32) {
        let (a, b) = (Ptr::new(a.cast_mut()), Ptr::new(b.cast_mut()));
        let split = Split4::of_pair(a.as_ptr(), b.as_ptr(), n as usize);
        let mut acc = [0.0f32; 4];
        let mut k = global_id_x();
        while k < split.scalars() {
            let i = split.scalar_index(k);
            // SAFETY: `i < n`.
            acc[0] += unsafe { a.add(i).load() * b.add(i).load() };
            k += threads_per_grid_x();
        }
        grid_stride_unrolled::<VEC4_UNROLL>(split.body, |v| {
            // SAFETY: `v < split.body`; `a` and `b` are equally misaligned (`of_pair`).
            let (F32x4(x), F32x4(y)) = unsafe { (split.load(a.as_ptr(), v), split.load(b.as_ptr(), v)) };
            for j in 0..4 {
                acc[j] += x[j] * y[j];
            }
        });
        let s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        // SAFETY: the host gives the scratch the block reduction needs.
        let total = unsafe { block_reduce_sum(s) };
        if thread_idx_x() == 0 {
            // SAFETY: `c` is touched only atomically during the launch.
            unsafe { atomic_add_device(c, total) };
        }
    }
}
