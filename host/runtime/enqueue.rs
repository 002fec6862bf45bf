//! What the runtime queues on a stream besides launches: copies between host and device memory
//! and between two GPUs, and fills of 32-bit words — the only places outside the runtime's own
//! buffers where gridsync calls the driver's copies and memsets.
//!
//! Every call checks its range against the buffer before it queues anything (an
//! [`Error::InvalidInput`] names the range), makes the buffer's GPU current, and names the
//! driver call in its error. A copy touches host memory after it returns: those are `unsafe`,
//! and their contract is that the host memory lives, unwritten by the host, until the stream
//! has finished the copy. A fill touches only the buffer, which the driver frees only after the
//! work queued on it, so it is safe.

use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result, check};
use crate::runtime::stream::Stream;
use cust::sys as cu;
use std::ops::Range;

/// The device address of `buf[range]`, after checking that the range is inside `buf` and that
/// `buf` is device memory.
fn device_range<T: Plain>(buf: &Buffer<T>, range: &Range<usize>, what: &str) -> Result<u64> {
    if range.start > range.end || range.end > buf.len() {
        return Err(Error::InvalidInput(format!(
            "{what}: elements {}..{} of a buffer of {}",
            range.start,
            range.end,
            buf.len()
        )));
    }
    let base = buf.device_ptr().ok_or_else(|| {
        Error::InvalidInput(format!("{what}: a simulator buffer has no device memory"))
    })?;
    Ok(base + (range.start * size_of::<T>()) as u64)
}

/// The device address and the bytes of a copy of `len` elements at `buf[at..]`, its range
/// checked by [`device_range`] (`what` names the copy), and `gpu` made current; `None` for an
/// empty copy, which queues nothing.
fn copy_range<T: Plain>(
    gpu: &Gpu,
    buf: &Buffer<T>,
    (at, len): (usize, usize),
    what: &str,
) -> Result<Option<(u64, usize)>> {
    let address = device_range(buf, &(at..at.saturating_add(len)), what)?;
    if len == 0 {
        return Ok(None);
    }
    gpu.make_current()?;
    Ok(Some((address, len * size_of::<T>())))
}

/// Queues a copy of `src` into `dst[at..at + src.len()]` on `stream` (`cuMemcpyHtoDAsync`),
/// on `gpu`, which owns `dst`. From page-locked memory ([`PinnedBuffer`]) the copy overlaps
/// other streams' work; from pageable memory the driver stages it.
///
/// # Safety
/// `src` stays alive and unwritten until `stream` has finished the copy (the caller
/// synchronizes the stream, or an event recorded after it, before it frees or writes `src`).
///
/// # Errors
/// [`Error::InvalidInput`] for a range outside `dst` or a simulator buffer; a driver error.
///
/// [`PinnedBuffer`]: crate::PinnedBuffer
pub unsafe fn host_to_device<T: Plain>(
    gpu: &Gpu,
    stream: &Stream,
    src: &[T],
    dst: &Buffer<T>,
    at: usize,
) -> Result<()> {
    let Some((to, bytes)) = copy_range(gpu, dst, (at, src.len()), "a copy to the device")? else {
        return Ok(());
    };
    // SAFETY: the destination range is inside `dst` (checked); `src` is `bytes` readable bytes
    // that outlive the copy (the caller's contract).
    let code = unsafe { cu::cuMemcpyHtoDAsync_v2(to, src.as_ptr().cast(), bytes, stream.as_raw()) };
    check(code, || format!("cuMemcpyHtoDAsync({bytes} bytes)"))
}

/// Queues a copy of `src[at..at + dst.len()]` into `dst` on `stream` (`cuMemcpyDtoHAsync`),
/// on `gpu`, which owns `src`.
///
/// # Safety
/// `dst` stays alive, and neither read nor written by the host, until `stream` has finished
/// the copy.
///
/// # Errors
/// As [`host_to_device`].
pub unsafe fn device_to_host<T: Plain>(
    gpu: &Gpu,
    stream: &Stream,
    src: &Buffer<T>,
    at: usize,
    dst: &mut [T],
) -> Result<()> {
    let Some((from, bytes)) = copy_range(gpu, src, (at, dst.len()), "a copy to the host")? else {
        return Ok(());
    };
    // SAFETY: the source range is inside `src` (checked); `dst` is `bytes` writable bytes that
    // outlive the copy (the caller's contract). Every bit pattern is a valid `T` (`Plain`).
    let code =
        unsafe { cu::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), from, bytes, stream.as_raw()) };
    check(code, || format!("cuMemcpyDtoHAsync({bytes} bytes)"))
}

/// Queues a copy of all of `src`, on GPU `from`, into `dst[at..at + src.len()]` on GPU `to`
/// (`cuMemcpyPeerAsync`), on `to`'s `stream`. Without peer access between the two the driver
/// stages the copy through the host; it is correct either way.
///
/// # Errors
/// As [`host_to_device`].
pub fn peer_to_peer<T: Plain>(
    (to, stream): (&Gpu, &Stream),
    dst: &Buffer<T>,
    at: usize,
    from: &Gpu,
    src: &Buffer<T>,
) -> Result<()> {
    let d = device_range(
        dst,
        &(at..at.saturating_add(src.len())),
        "a copy between GPUs",
    )?;
    let s = device_range(src, &(0..src.len()), "a copy between GPUs")?;
    if src.is_empty() {
        return Ok(());
    }
    let bytes = src.len() * size_of::<T>();
    to.make_current()?;
    // SAFETY: both ranges are inside their buffers (checked), in live contexts (each `Gpu`
    // holds its own); device memory is freed only after the work queued on it.
    let code = unsafe {
        cu::cuMemcpyPeerAsync(
            d,
            to.raw_context(),
            s,
            from.raw_context(),
            bytes,
            stream.as_raw(),
        )
    };
    check(code, || format!("cuMemcpyPeerAsync({bytes} bytes)"))
}

/// Queues, on `stream`, the 32-bit `value` into `count` words of `buf`: the first at byte
/// `offset`, each next `stride` bytes further (`cuMemsetD32Async`, or `cuMemsetD2D32Async` for
/// several). For the words of a `#[repr(C)]` state a kernel reads, reset between launches.
///
/// # Errors
/// [`Error::InvalidInput`] for an offset or stride that is not a whole number of words, a
/// stride shorter than a word, words outside `buf`, or a simulator buffer; a driver error.
pub fn fill_words<T: Plain>(
    gpu: &Gpu,
    stream: &Stream,
    buf: &Buffer<T>,
    (offset, stride, count): (usize, usize, usize),
    value: u32,
) -> Result<()> {
    let bytes = buf.len() * size_of::<T>();
    let inside = match count {
        0 => true,
        n => (n - 1)
            .checked_mul(stride)
            .and_then(|b| b.checked_add(offset))
            .and_then(|b| b.checked_add(4))
            .is_some_and(|end| end <= bytes),
    };
    if offset % 4 != 0 || stride % 4 != 0 || stride < 4 || !inside {
        return Err(Error::InvalidInput(format!(
            "{count} words from byte {offset} every {stride} bytes in a buffer of {bytes} bytes"
        )));
    }
    let base = buf.device_ptr().ok_or_else(|| {
        Error::InvalidInput("a fill of words: a simulator buffer has no device memory".into())
    })? + offset as u64;
    if count == 0 {
        return Ok(());
    }
    gpu.make_current()?;
    // SAFETY: every word written is inside `buf` (checked), 4-byte aligned (device allocations
    // are 256-byte aligned, and `offset` and `stride` are multiples of 4).
    let code = unsafe {
        if count == 1 {
            cu::cuMemsetD32Async(base, value, 1, stream.as_raw())
        } else {
            cu::cuMemsetD2D32Async(base, stride, value, 1, count, stream.as_raw())
        }
    };
    check(code, || format!("cuMemsetD32Async({count} words)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::launch::Target;

    #[test]
    fn ranges_outside_a_buffer_and_simulator_buffers_are_refused() {
        let buf = Target::Sim.zeros::<u32>(4).unwrap();
        let e = device_range(&buf, &(2..5), "a copy").unwrap_err();
        assert!(
            e.to_string().contains("elements 2..5 of a buffer of 4"),
            "{e}"
        );
        let e = device_range(&buf, &(0..4), "a copy").unwrap_err();
        assert!(e.to_string().contains("simulator"), "{e}");
    }
}
