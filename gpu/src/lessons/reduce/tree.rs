//! The sources' reductions: a tree in shared memory per block, then the blocks' results finished
//! on the host (Numba) or with one `atomicAdd` per block (the CUDA book).

use crate::atomic::{AtomicAdd, atomic_add_device};
use crate::index::{block_dim_x, block_idx_x, global_id_x, thread_idx_x, threads_per_grid_x};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use core::ops::Add;

/// The tree both sources build: `s[tid] += s[tid + offset]` for `offset = blockDim.x / 2, …, 1`,
/// a barrier after each round. Returns `s[0]`, the block's sum, in every thread.
///
/// # Safety
/// `s` is this block's shared array of `blockDim.x` values, each thread has written its own slot
/// and passed a barrier since; `blockDim.x` is a power of two; every thread of the block calls it.
#[inline(always)]
unsafe fn shared_tree<T: Copy + Add<Output = T>>(s: Ptr<T>) -> T {
    let tid = thread_idx_x() as usize;
    let mut offset = block_dim_x() as usize >> 1;
    while offset > 0 {
        if tid < offset {
            // SAFETY: `tid + offset < 2·offset <= blockDim.x`; this round reads only slots
            // `>= offset`, which no thread of this round writes.
            unsafe {
                let (mine, other) = (s.add(tid).load(), s.add(tid + offset).load());
                s.add(tid).store(mine + other);
            }
        }
        sync_threads();
        offset >>= 1;
    }
    // SAFETY: the last barrier ordered the last round's write of slot 0 before this read.
    unsafe { s.load() }
}

kernel! {
    /// Each block writes its sum to `partial_reduction[blockIdx.x]`; the host adds those up.
    ///
    /// Source: Numba tutorial, part 3, `partial_reduce(array, partial_reduction)` (launched as
    /// `[32 * 40, 256]`; there a second kernel, `single_thread_sum`, adds the partials on one GPU
    /// thread — here the host does, in `f64`). Each thread sums its grid-stride share in `s_thread`
    /// — in `f64`, because Numba types `s_thread = 0.0` as a double — stores it to its slot of
    /// `s_block` (`f32`, as the source declares it), and the block halves `s_block` in a tree.
    /// `partial_reduction` has one float per block.
    /// Dynamic shared memory: `blockDim.x` floats; `blockDim.x` a power of two.
    pub unsafe fn partial_reduce(array: *const f32, size: u64, partial_reduction: *mut f32) {
        let (array, partial_reduction) = (Ptr::new(array.cast_mut()), Ptr::new(partial_reduction));
        let i_start = global_id_x();
        let threads_per_grid = threads_per_grid_x();
        let mut s_thread = 0.0f64;
        let mut i_arr = i_start;
        while i_arr < size as usize {
            // SAFETY: `i_arr < size`, the array's length.
            s_thread += unsafe { array.add(i_arr).load() } as f64;
            i_arr += threads_per_grid;
        }
        // SAFETY: the launch gave `blockDim.x` floats of dynamic shared memory.
        let s_block = Ptr::new(unsafe { dynamic_shared::<f32>() });
        let tid = thread_idx_x() as usize;
        // SAFETY: `tid < blockDim.x`; each thread writes only its own slot before the barrier.
        unsafe { s_block.add(tid).store(s_thread as f32) };
        sync_threads();
        // SAFETY: as `shared_tree` requires (the launch's power-of-two block, all threads here).
        let total = unsafe { shared_tree(s_block) };
        if tid == 0 {
            // SAFETY: one slot per block.
            unsafe { partial_reduction.add(block_idx_x() as usize).store(total) };
        }
    }
}

/// The CUDA book's kernel for either `real` (`float`, or `double` under `USE_DP`).
///
/// # Safety
/// As the kernels that call it say.
// ANCHOR: book_reduce
#[inline(always)]
unsafe fn book_reduce<T: AtomicAdd + Add<Output = T> + Default>(
    d_x: *const T,
    d_y: *mut T,
    n_total: u64,
) {
    let d_x = Ptr::new(d_x.cast_mut());
    let tid = thread_idx_x() as usize;
    let bid = block_idx_x() as usize;
    let n = bid * block_dim_x() as usize + tid;
    // SAFETY: the launch gave `blockDim.x` values of dynamic shared memory.
    let s_y = Ptr::new(unsafe { dynamic_shared::<T>() });
    // SAFETY: `tid < blockDim.x`; `d_x` is read only below `N`.
    unsafe {
        let v = if (n as u64) < n_total {
            d_x.add(n).load()
        } else {
            T::default()
        };
        s_y.add(tid).store(v);
    };
    sync_threads();
    // SAFETY: as `shared_tree` requires.
    let block_sum = unsafe { shared_tree(s_y) };
    if tid == 0 {
        // SAFETY: `d_y` is touched only atomically during the launch.
        unsafe { atomic_add_device(d_y, block_sum) };
    }
}
// ANCHOR_END: book_reduce

kernel! {
    /// One element per thread, a tree per block of 128, one `atomicAdd(d_y, s_y[0])` per block.
    ///
    /// Source: the CUDA book, section 9.1, `reduce(const real *d_x, real *d_y, const int N)`
    /// with `real = float`, launched by its wrapper as `<<<(N + 127) / 128, 128, 128 *
    /// sizeof(real)>>>` on `N = 1e8` values all `1.23`. **The wrapper sets `*d_y = 0` before
    /// the launch** — the kernel only adds to it — and so does the host here.
    /// What changed from [`partial_reduce`]: the blocks' sums are added on the GPU, by thread 0 of
    /// each block, with an atomic (without it, two blocks' `d_y[0] += s_y[0]` interleave and one
    /// update is lost, as the book explains). The cost is one atomic per 128 elements, all on one
    /// address, performed one after another in L2 in an order that changes from run to run — and
    /// every one of them a rounding of a running total that grows to 1.23·10⁸, where an `f32`
    /// has a spacing of 8: the book's sum is off by about 5·10⁻³, and not the same twice.
    /// Dynamic shared memory: `blockDim.x` floats; `blockDim.x` a power of two.
    pub unsafe fn reduce_atomic(d_x: *const f32, d_y: *mut f32, n_total: u64) {
        // SAFETY: forwarded to the launch's contract.
        unsafe { book_reduce(d_x, d_y, n_total) }
    }
}

kernel! {
    /// [`reduce_atomic`] in `double`: the book's `USE_DP` build, `real = double`.
    ///
    /// Source: the CUDA book, section 9.1, compiled with `-DUSE_DP`. `atomicAdd` on `double` is
    /// native from sm_60 (`atom.add.f64`). The running total has 29 more bits of mantissa, so
    /// the same 781 250 roundings cost about 10⁻¹¹ instead of 5·10⁻³; the order still varies.
    /// Dynamic shared memory: `blockDim.x` doubles; `blockDim.x` a power of two.
    pub unsafe fn reduce_atomic_f64(d_x: *const f64, d_y: *mut f64, n_total: u64) {
        // SAFETY: forwarded to the launch's contract.
        unsafe { book_reduce(d_x, d_y, n_total) }
    }
}
