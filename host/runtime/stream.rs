//! A CUDA stream that really is non-blocking.
//!
//! `cust` 0.3.2's `Stream::new` silently removes `StreamFlags::NON_BLOCKING`, so its streams
//! synchronize with the legacy NULL stream — and `cust`'s synchronous copies and `zeroed`
//! allocations run on that NULL stream, which then serializes every such stream. This type
//! creates the stream with `cuStreamCreate(CU_STREAM_NON_BLOCKING)` itself.

use crate::runtime::error::{Result, check};
use crate::runtime::timer::Event;
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

    /// Makes the work queued on this stream from now on wait until `event` has happened
    /// (`cuStreamWaitEvent`): the order between two streams, without the host waiting.
    ///
    /// # Errors
    /// A driver error.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        // SAFETY: both handles are live.
        check(
            unsafe { cu::cuStreamWaitEvent(self.raw, event.as_raw(), 0) },
            || "cuStreamWaitEvent".into(),
        )
    }

    /// Whether everything queued on the stream has finished (`cuStreamQuery`), without
    /// waiting: for waits with a bound of their own.
    ///
    /// # Errors
    /// A driver error, including faults of kernels that ran on the stream.
    pub fn is_done(&self) -> Result<bool> {
        // SAFETY: `raw` is a live stream owned by `self`.
        match unsafe { cu::cuStreamQuery(self.raw) } {
            cu::CUresult::CUDA_SUCCESS => Ok(true),
            cu::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            code => check(code, || "cuStreamQuery".into()).map(|()| false),
        }
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
