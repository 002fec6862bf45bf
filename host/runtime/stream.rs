//! A CUDA stream that really is non-blocking.
//!
//! `cust` 0.3.2's `Stream::new` silently removes `StreamFlags::NON_BLOCKING`, so its streams
//! synchronize with the legacy NULL stream — and `cust`'s synchronous copies and `zeroed`
//! allocations run on that NULL stream, which then serializes every such stream. This type
//! creates the stream with `cuStreamCreate(CU_STREAM_NON_BLOCKING)` itself.

use crate::runtime::error::{Result, check};
use cust::sys as cu;

/// An owned, non-blocking CUDA stream. Work on it runs in issue order; work on different
/// streams may overlap.
#[derive(Debug)]
pub struct Stream {
    raw: cu::CUstream,
}

impl Stream {
    /// Creates a non-blocking stream in the current context.
    ///
    /// # Errors
    /// [`Error::Driver`](crate::Error::Driver) if the driver refuses.
    pub fn new() -> Result<Stream> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the flag is a documented constant.
        let code = unsafe {
            cu::cuStreamCreate(&mut raw, cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
        };
        check(code, || "cuStreamCreate(NON_BLOCKING)".into())?;
        Ok(Stream { raw })
    }

    /// Waits until all work issued to the stream has finished.
    ///
    /// # Errors
    /// A driver error, including faults of kernels that ran on the stream (an illegal address,
    /// a trap).
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: `raw` is a live stream owned by `self`.
        check(unsafe { cu::cuStreamSynchronize(self.raw) }, || {
            "cuStreamSynchronize".into()
        })
    }

    /// The raw handle, for driver calls this crate does not wrap.
    pub fn as_raw(&self) -> cu::CUstream {
        self.raw
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: `raw` is live and owned; destroying a stream with pending work lets that work
        // finish first. An error here cannot be reported from `drop` and leaves nothing unsafe.
        unsafe {
            cu::cuStreamDestroy_v2(self.raw);
        }
    }
}
