//! (c) The warp-shuffle reduction: registers over a grid-stride loop, shuffles in the block, one
//! `atomicAdd` per block.

use crate::atomic::atomic_add_device;
use crate::block_reduce::block_reduce_sum;
use crate::index::{grid_stride, thread_idx_x};
use crate::mem::Ptr;

kernel! {
    /// Each thread sums its grid-stride share in a register; the block sums with warp shuffles;
    /// thread 0 adds the block's sum to `*result` (zeroed by the host) with one `atomicAdd`.
    ///
    /// Source: the CUDA book's [`reduce_atomic`](super::reduce_atomic), restructured as CUB's
    /// `BlockReduce` does it.
    /// What changed and why:
    /// - **a grid-stride loop over one wave of blocks** (the host launches as many blocks as fit
    ///   on the GPU at once, not `N / 128`): each thread adds hundreds of elements in a register
    ///   before the block step, so there is one atomic per block of the wave — about a thousand
    ///   for any `N` — instead of one per 128 elements;
    /// - **shuffles instead of the shared-memory tree** ([`block_reduce_sum`]): five
    ///   `shfl.sync.down` steps per warp and one barrier, where the tree took `log2(blockDim)`
    ///   barriers and a shared-memory round trip each.
    ///
    /// Still one float atomic per block: the blocks' sums arrive in whatever order the blocks
    /// finish, so the last bits of the result change from run to run.
    /// Dynamic shared memory: `block_reduce_shared_bytes::<f32>(blockDim.x)`; any block size.
    pub unsafe fn reduce_warp(x: *const f32, n: u64, result: *mut f32) {
        let x = Ptr::new(x.cast_mut());
        let mut s_thread = 0.0f32;
        for i in grid_stride(n as usize) {
            // SAFETY: `i < n`, the array's length.
            s_thread += unsafe { x.add(i).load() };
        }
        // SAFETY: the launch gave the scratch the block reduction needs.
        let block_sum = unsafe { block_reduce_sum(s_thread) };
        if thread_idx_x() == 0 {
            // SAFETY: `result` is touched only atomically during the launch.
            unsafe { atomic_add_device(result, block_sum) };
        }
    }
}
