//! Page-locked ("pinned") host memory: what asynchronous copies need to be asynchronous.
//!
//! The operating system may move an ordinary (pageable) page at any time — to swap, to another
//! physical frame — so the GPU's copy engines, which read host memory by physical address
//! without the CPU, cannot be pointed at it. A copy from pageable memory is therefore done in
//! two steps: the driver copies the data with the CPU into a pinned staging buffer of its own,
//! then the engine copies that. `cuMemcpyHtoDAsync` from pageable memory returns only after the
//! CPU step (so the host cannot overlap it with anything), and `cuMemcpyDtoHAsync` into pageable
//! memory is fully synchronous. Streams cannot overlap what the host is busy doing itself.
//!
//! Pinned memory (`cuMemAllocHost`, through `cust`'s [`LockedBuffer`]) stays at one physical
//! address until freed: the engine reads and writes it directly, the copy call returns at once,
//! and copies on different streams can overlap each other and kernels. The Numba tutorial's
//! `cuda.pinned(a)` does the same for an existing array (`cuMemHostRegister`).
//!
//! Pinning is not free: allocating it costs about as much as touching the memory once (the
//! pages are locked one by one), and every pinned byte is RAM the system can no longer page out.
//! Allocate pinned buffers once and reuse them; the tutorial pins inside its timed loop, which is
//! why its 10-stream run is slower than its 1-stream run.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Result, cust_err};
use cust::memory::{DeviceCopy, LockedBuffer};
use cust::sys as cu;

/// `len` values of `T` in page-locked host memory, usable as a slice. Freed on drop.
///
/// Borrowing the [`Gpu`] ties the buffer to the context that pinned it: the memory is freed
/// while that context is still alive.
///
/// ```no_run
/// # fn main() -> gridsync::Result<()> {
/// let gpu = gridsync::Gpu::new(0)?;
/// let mut a = gridsync::PinnedBuffer::new(&gpu, 10_000_000, 1.0f32)?;
/// a[0] = 2.0;
/// # Ok(()) }
/// ```
pub struct PinnedBuffer<'g, T: DeviceCopy> {
    gpu: &'g Gpu,
    /// `None` for an empty buffer: `cuMemAllocHost` refuses zero bytes.
    memory: Option<LockedBuffer<T>>,
}

impl<'g, T: DeviceCopy + Clone> PinnedBuffer<'g, T> {
    /// `len` copies of `value` in pinned memory.
    ///
    /// # Errors
    /// A driver error (out of pinned memory, …).
    pub fn new(gpu: &'g Gpu, len: usize, value: T) -> Result<PinnedBuffer<'g, T>> {
        gpu.make_current()?;
        let memory = if len == 0 {
            None
        } else {
            Some(LockedBuffer::new(&value, len).map_err(cust_err(&format!(
                "cuMemAllocHost({} bytes)",
                len.saturating_mul(size_of::<T>())
            )))?)
        };
        Ok(PinnedBuffer { gpu, memory })
    }

    /// A pinned copy of `data`.
    ///
    /// # Errors
    /// As [`PinnedBuffer::new`].
    pub fn from_slice(gpu: &'g Gpu, data: &[T]) -> Result<PinnedBuffer<'g, T>> {
        gpu.make_current()?;
        let memory = if data.is_empty() {
            None
        } else {
            Some(LockedBuffer::from_slice(data).map_err(cust_err(&format!(
                "cuMemAllocHost({} bytes)",
                std::mem::size_of_val(data)
            )))?)
        };
        Ok(PinnedBuffer { gpu, memory })
    }
}

impl<T: DeviceCopy> std::ops::Deref for PinnedBuffer<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.memory.as_deref().unwrap_or(&[])
    }
}

impl<T: DeviceCopy> std::ops::DerefMut for PinnedBuffer<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.memory.as_deref_mut().unwrap_or(&mut [])
    }
}

impl<T: DeviceCopy> Drop for PinnedBuffer<'_, T> {
    fn drop(&mut self) {
        // `cuMemFreeHost` needs the owning context current. An error cannot be reported from
        // `drop`; the context's teardown frees the memory anyway.
        let _ = self.gpu.make_current();
        drop(self.memory.take());
    }
}

impl<T: DeviceCopy> std::fmt::Debug for PinnedBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PinnedBuffer({} × {})",
            self.len(),
            std::any::type_name::<T>()
        )
    }
}

/// Whether all of `data` is page-locked memory the driver knows (allocated pinned, or
/// registered with `cuMemHostRegister`): whether copies to and from it can be asynchronous.
/// An empty slice counts as pinned (there is nothing to copy). Needs a current context
/// ([`Gpu::make_current`]); without one, the answer is `false`.
pub fn is_pinned<T>(data: &[T]) -> bool {
    if data.is_empty() {
        return true;
    }
    let first = data.as_ptr() as usize;
    let last = first + std::mem::size_of_val(data) - 1;
    [first, last].iter().all(|&p| {
        let mut kind: u32 = 0;
        let mut attribute = cu::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        let mut out = [(&mut kind as *mut u32).cast::<std::ffi::c_void>()];
        // SAFETY: one attribute, one out-pointer to a value of its size (a `CUmemorytype`, 4
        // bytes); the query reads no memory at `p`. Unlike `cuPointerGetAttribute`, the plural
        // call answers "unknown" (type 0) for memory the driver does not know instead of failing,
        // so asking about pageable memory is not an API error (which compute-sanitizer reports).
        let code = unsafe {
            cu::cuPointerGetAttributes(1, &mut attribute, out.as_mut_ptr(), p as cu::CUdeviceptr)
        };
        code == cu::CUresult::CUDA_SUCCESS && kind == cu::CUmemorytype::CU_MEMORYTYPE_HOST as u32
    })
}
