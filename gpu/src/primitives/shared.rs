//! Dynamic shared memory: the per-block scratchpad whose size the host chooses at launch.
//!
//! CUDA: `extern __shared__ T buf[];`. PTX: `.extern .shared .b8 gpu_launch_sized_workgroup_mem[]`
//! — every kernel that asks for it gets the same block-local array, sized by the launch's
//! `shared_bytes`. In the simulator each block gets its own zeroed, 16-byte-aligned buffer.
//!
//! Shared memory is **not** initialized on the GPU, is private to the block, and lives only as
//! long as the block: a block must write what it reads, and [`sync_threads`](crate::sync::sync_threads)
//! between the writes of some threads and the reads of others.

/// A pointer to the start of this block's dynamic shared memory, as `*mut T`.
///
/// # Safety
///
/// - the launch gave at least as many bytes as the kernel will touch through the pointer
///   ([`dynamic_shared_bytes`] says how many);
/// - `T` needs no more than 16-byte alignment (the simulator's guarantee; the GPU aligns the
///   array to the largest alignment any kernel asks for, at least 16 bytes);
/// - accesses by different threads to one element are separated by a barrier or are atomic.
#[inline(always)]
pub unsafe fn dynamic_shared<T>() -> *mut T {
    // SAFETY: the caller's contract.
    unsafe { crate::seam::shared::dynamic_shared_base() }
}

/// The number of bytes of dynamic shared memory this launch gave each block.
///
/// PTX: `mov.u32 %r, %dynamic_smem_size;`.
#[inline(always)]
pub fn dynamic_shared_bytes() -> u32 {
    crate::seam::sreg::dynamic_smem_size()
}
