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
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::shared_base().cast()
    }
}

/// The number of bytes of dynamic shared memory this launch gave each block.
///
/// PTX: `mov.u32 %r, %dynamic_smem_size;`.
#[inline(always)]
pub fn dynamic_shared_bytes() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let n: u32;
        // SAFETY: reading a special register has no preconditions.
        unsafe {
            core::arch::asm!("mov.u32 {0}, %dynamic_smem_size;", out(reg32) n, options(nostack, pure, nomem));
        }
        n
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::shared_len()
    }
}
