//! Typed buffers that live where the kernels run: device memory on a GPU, host memory on the
//! simulator.

use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result, check};
use crate::runtime::launch::Target;
use cust::context::Context;
use cust::sys as cu;
use std::cell::UnsafeCell;
use std::sync::Arc;

/// Plain data that may be copied to and from a device byte for byte, and for which every bit
/// pattern — all zeros included — is a valid value.
///
/// # Safety
/// No padding, no pointers to host memory, every bit pattern valid.
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numbers: no padding, every bit pattern valid.
        unsafe impl Plain for $t {}
    )*};
}
plain!(u8, u16, u32, i32, u64, i64, f32, f64);

enum Memory<T> {
    /// A device allocation (`ptr` is 0 for an empty buffer, which allocates nothing) in
    /// `context`, which the buffer keeps alive until it has freed the allocation.
    Device {
        ptr: cu::CUdeviceptr,
        context: Arc<Context>,
    },
    /// Host memory the simulated threads reach through raw pointers: the buffer's `len`
    /// values, then a guard zone of at least [`SIM_GUARD_BYTES`] that no kernel may touch,
    /// registered with the checker, which reports an access there as out of bounds (and which
    /// keeps a kernel's overrun off other host memory).
    Host {
        cells: Box<[UnsafeCell<T>]>,
        _registered: gpu::sim::check::Allocation,
    },
}

/// The guard zone behind each simulator buffer, in bytes.
pub const SIM_GUARD_BYTES: usize = 256;

/// `len` values of `T` on a [`Target`]. Freed on drop.
pub struct Buffer<T: Plain> {
    memory: Memory<T>,
    len: usize,
}

impl<T: Plain> Buffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of a GPU buffer (0 for an empty one); `None` on the simulator.
    pub(crate) fn device_ptr(&self) -> Option<cu::CUdeviceptr> {
        match &self.memory {
            Memory::Device { ptr, .. } => Some(*ptr),
            Memory::Host { .. } => None,
        }
    }

    /// The address kernels use: a device address on the GPU, a host address on the simulator.
    /// Passing it to a kernel is what [`Target::launch`]'s safety contract is about.
    pub fn ptr(&self) -> *mut T {
        match &self.memory {
            Memory::Device { ptr, .. } => *ptr as *mut T,
            Memory::Host { cells, .. } => UnsafeCell::raw_get(cells.as_ptr()),
        }
    }

    fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// Refuses to use the first `len` elements of a buffer that holds fewer.
    ///
    /// # Errors
    /// [`Error::InvalidInput`]: `what` (the use, naming `len`), then "of a buffer of" the
    /// buffer's length.
    pub(crate) fn check_prefix(&self, len: usize, what: impl FnOnce() -> String) -> Result<()> {
        if len > self.len {
            return Err(Error::InvalidInput(format!(
                "{} of a buffer of {}",
                what(),
                self.len
            )));
        }
        Ok(())
    }
}

impl<T: Plain> Drop for Buffer<T> {
    fn drop(&mut self) {
        if let Memory::Device { ptr, context } = &self.memory
            && *ptr != 0
        {
            // The allocation's own context is made current for the free — whichever thread
            // drops the buffer, and whatever context (of another device, or none) is current
            // there — and the caller's is restored after. Should the push fail (it cannot while
            // the buffer holds the context), the free still goes ahead: with unified addressing
            // the driver finds the allocation's context from the address.
            // SAFETY: `ptr` came from `cuMemAlloc_v2` in `context`, which this buffer keeps
            // alive, and is freed once. An error cannot be reported from `drop`; a push that
            // failed is not popped.
            unsafe {
                let pushed =
                    cu::cuCtxPushCurrent_v2(context.as_raw()) == cu::CUresult::CUDA_SUCCESS;
                cu::cuMemFree_v2(*ptr);
                if pushed {
                    let mut popped = std::ptr::null_mut();
                    cu::cuCtxPopCurrent_v2(&mut popped);
                }
            }
        }
    }
}

impl std::fmt::Debug for Buffer<u8> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes)", self.len)
    }
}

impl Target {
    /// A buffer of `len` zeroed values.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the size overflows; on the simulator, [`Error::TooLarge`] past
    /// the host's available memory; a driver error (out of memory, …).
    pub fn zeros<T: Plain>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::InvalidInput(format!("{len} elements overflow the address space"))
        })?;
        match self {
            Target::Sim => {
                // The simulator's device memory is host memory: refuse what the host cannot
                // hold rather than abort in the allocator.
                let what = format!("a simulator buffer of {len} elements");
                crate::runtime::memory::check_host(&what, bytes as u64)?;
                let guard = SIM_GUARD_BYTES.div_ceil(size_of::<T>());
                let cells: Box<[UnsafeCell<T>]> = (0..len + guard)
                    // SAFETY: all-zero bytes are a valid `T` (`Plain`).
                    .map(|_| UnsafeCell::new(unsafe { std::mem::zeroed() }))
                    .collect();
                let start = UnsafeCell::raw_get(cells.as_ptr()) as usize;
                let guard_bytes = guard * size_of::<T>();
                Ok(Buffer {
                    memory: Memory::Host {
                        cells,
                        _registered: gpu::sim::check::allocation(start, bytes, guard_bytes),
                    },
                    len,
                })
            }
            Target::Gpu(gpu) => {
                gpu.make_current()?;
                let mut ptr = 0;
                if bytes > 0 {
                    // SAFETY: valid out-pointer; the context is current.
                    check(unsafe { cu::cuMemAlloc_v2(&mut ptr, bytes) }, || {
                        format!("cuMemAlloc({bytes} bytes)")
                    })?;
                }
                let buf = Buffer {
                    memory: Memory::Device {
                        ptr,
                        context: gpu.shared_context(),
                    },
                    len,
                };
                if bytes > 0 {
                    // SAFETY: `ptr` owns `bytes` bytes.
                    let code = unsafe { cu::cuMemsetD8Async(ptr, 0, bytes, gpu.stream().as_raw()) };
                    check(code, || "cuMemsetD8Async".into())?;
                    gpu.synchronize()?;
                }
                Ok(buf)
            }
        }
    }

    /// Sets every byte of `buf` to zero: queued on the library's stream on a GPU (no wait, so
    /// that it can sit inside a timed sequence of launches), at once on the simulator.
    ///
    /// # Errors
    /// A driver error.
    pub fn clear<T: Plain>(&self, buf: &Buffer<T>) -> Result<()> {
        self.fill_bytes(buf, 0)
    }

    /// Sets every byte of `buf` to `byte` (`0xFF` makes every `u32` `u32::MAX`), queued as
    /// [`Target::clear`].
    ///
    /// # Errors
    /// A driver error.
    pub fn fill_bytes<T: Plain>(&self, buf: &Buffer<T>, byte: u8) -> Result<()> {
        match (&buf.memory, self) {
            (Memory::Host { cells, .. }, _) => {
                for cell in &cells[..buf.len] {
                    // SAFETY: simulated launches return only when their grid is done, so no
                    // kernel touches the buffer now; every bit pattern is a valid `T` (`Plain`).
                    unsafe { cell.get().cast::<u8>().write_bytes(byte, size_of::<T>()) };
                }
                Ok(())
            }
            (Memory::Device { ptr, .. }, Target::Gpu(gpu)) => {
                if buf.bytes() == 0 {
                    return Ok(());
                }
                gpu.make_current()?;
                // SAFETY: `ptr` is this buffer's live allocation of `bytes()` bytes.
                let code =
                    unsafe { cu::cuMemsetD8Async(*ptr, byte, buf.bytes(), gpu.stream().as_raw()) };
                check(code, || "cuMemsetD8Async".into())
            }
            (Memory::Device { .. }, Target::Sim) => Err(Error::InvalidInput(
                "a device buffer cannot be filled through the simulator".into(),
            )),
        }
    }

    /// A buffer holding a copy of `data`.
    ///
    /// # Errors
    /// As [`Target::zeros`].
    pub fn upload<T: Plain>(&self, data: &[T]) -> Result<Buffer<T>> {
        let buf = self.zeros::<T>(data.len())?;
        self.write(&buf, data)?;
        Ok(buf)
    }

    /// Overwrites `buf` with `data`, which must have the same length.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] on a length mismatch; a driver error.
    pub fn write<T: Plain>(&self, buf: &Buffer<T>, data: &[T]) -> Result<()> {
        if data.len() != buf.len {
            return Err(Error::InvalidInput(format!(
                "writing {} elements into a buffer of {}",
                data.len(),
                buf.len
            )));
        }
        match (&buf.memory, self) {
            (Memory::Host { cells, .. }, _) => {
                for (cell, v) in cells.iter().zip(data) {
                    // SAFETY: no kernel runs while the host holds `&Buffer` here (the simulator's
                    // launches return only when done).
                    unsafe { *cell.get() = *v };
                }
                Ok(())
            }
            (Memory::Device { .. }, Target::Gpu(gpu)) => {
                if buf.bytes() == 0 {
                    return Ok(());
                }
                // SAFETY: `data` outlives the copy, which completes before `synchronize` returns.
                unsafe { enqueue::host_to_device(gpu, gpu.stream(), data, buf, 0) }?;
                gpu.synchronize()
            }
            (Memory::Device { .. }, Target::Sim) => Err(Error::InvalidInput(
                "a device buffer cannot be written through the simulator".into(),
            )),
        }
    }

    /// Copies `buf` back to the host.
    ///
    /// # Errors
    /// A driver error (including a fault of a kernel that wrote the buffer).
    pub fn download<T: Plain>(&self, buf: &Buffer<T>) -> Result<Vec<T>> {
        match (&buf.memory, self) {
            // SAFETY: as in `write`: no simulated kernel is running.
            (Memory::Host { cells, .. }, _) => Ok(cells[..buf.len]
                .iter()
                .map(|c| unsafe { *c.get() })
                .collect()),
            (Memory::Device { ptr, .. }, Target::Gpu(gpu)) => {
                let mut out = Vec::<T>::with_capacity(buf.len);
                if buf.bytes() > 0 {
                    gpu.make_current()?;
                    // Wait for the kernels that write the buffer before reading it.
                    gpu.synchronize()?;
                    // SAFETY: `out` has room for `bytes` bytes; the copy completes before
                    // `synchronize` returns.
                    let code = unsafe {
                        cu::cuMemcpyDtoHAsync_v2(
                            out.as_mut_ptr().cast(),
                            *ptr,
                            buf.bytes(),
                            gpu.stream().as_raw(),
                        )
                    };
                    check(code, || format!("cuMemcpyDtoHAsync({} bytes)", buf.bytes()))?;
                    gpu.synchronize()?;
                }
                // SAFETY: the copy initialized all `len` elements, and any bits are a valid `T`.
                unsafe { out.set_len(buf.len) };
                Ok(out)
            }
            (Memory::Device { .. }, Target::Sim) => Err(Error::InvalidInput(
                "a device buffer cannot be read through the simulator".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context the driver says owns `ptr`, or the error it gives for a freed address.
    fn owner(ptr: cu::CUdeviceptr) -> std::result::Result<cu::CUcontext, cu::CUresult> {
        let mut context: cu::CUcontext = std::ptr::null_mut();
        // SAFETY: the out-pointer has room for a `CUcontext`, which this attribute writes.
        let code = unsafe {
            cu::cuPointerGetAttribute(
                (&mut context as *mut cu::CUcontext).cast(),
                cu::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                ptr,
            )
        };
        match code {
            cu::CUresult::CUDA_SUCCESS => Ok(context),
            e => Err(e),
        }
    }

    #[test]
    #[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
    fn gpu_buffers_free_their_allocation_from_any_thread_and_after_their_gpu() {
        let target = Target::open(0, false).unwrap();
        let Target::Gpu(gpu) = &target else {
            panic!("a GPU test ran without a GPU")
        };
        let own = gpu.raw_context();

        // Dropped on a thread where no context is current.
        let buf = target.zeros::<u32>(1 << 20).unwrap();
        let ptr = buf.ptr() as cu::CUdeviceptr;
        assert_eq!(owner(ptr), Ok(own));
        std::thread::spawn(move || drop(buf)).join().unwrap();
        assert_eq!(owner(ptr), Err(cu::CUresult::CUDA_ERROR_INVALID_VALUE));

        // Dropped after the `Gpu` that allocated it: the buffer kept the context alive.
        let buf = target.zeros::<u32>(1 << 20).unwrap();
        let ptr = buf.ptr() as cu::CUdeviceptr;
        drop(target);
        assert_eq!(owner(ptr), Ok(own));
        drop(buf);
        let again = Target::open(0, false).unwrap();
        assert!(matches!(again, Target::Gpu(_)));
        assert_eq!(owner(ptr), Err(cu::CUresult::CUDA_ERROR_INVALID_VALUE));

        // Every device's buffer, dropped while the next device's context is current (its own
        // where the machine has one device): freed in its own context, which is current again
        // after it only for the drop.
        let count = crate::runtime::device::init_driver().unwrap();
        let gpus: Vec<Target> = (0..count)
            .map(|d| Target::open(d, false).unwrap())
            .collect();
        for (d, t) in gpus.iter().enumerate() {
            let Target::Gpu(next) = &gpus[(d + 1) % gpus.len()] else {
                unreachable!()
            };
            let buf = t.zeros::<u32>(1 << 16).unwrap();
            let ptr = buf.ptr() as cu::CUdeviceptr;
            next.make_current().unwrap();
            drop(buf);
            assert_eq!(
                owner(ptr),
                Err(cu::CUresult::CUDA_ERROR_INVALID_VALUE),
                "device {d}"
            );
            let mut current = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            unsafe { cu::cuCtxGetCurrent(&mut current) };
            assert_eq!(
                current,
                next.raw_context(),
                "the caller's context is current again"
            );
        }
    }
}
