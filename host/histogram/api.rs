//! The library call: a byte histogram of host or device data, with the kernel chosen for you.

use super::{Bins, HistKernel, HistogramLaunch, config_for};
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;

/// The kernel [`histogram`] uses for `len` bytes on `target`: `histogram_pipeline` from
/// [`PIPELINE_MIN_BYTES`] on where it runs (compute capability 9.0: a GPU's sm_90 build, or the
/// simulator), `histogram_vec16` below that and on older GPUs.
///
/// Measured (`gridsync bench histogram`, H200, 128 bins): at 1 GiB the pipeline reads
/// English-like text at 97.6% of the copy roofline and uniform random bytes at 96.9%, against
/// `histogram_vec16`'s 81.2% and 55.8% (its per-warp bins take turns on bank conflicts); on the
/// 5.6 MB text `histogram_vec16`, whose blocks start and flush faster, wins (0.0091 against
/// 0.0094 ms; below ~16 MiB on an H100) — see `docs/perf-notes.md`, "The pipeline". (Before the pipeline: `histogram_vec16` at every size;
/// the lane kernel's data-independence bought 3% on random bytes and cost 40% on text.)
pub fn fastest_kernel(target: &Target, len: usize) -> HistKernel {
    if len >= PIPELINE_MIN_BYTES && target.has_kernel(HistKernel::Pipeline.kernel()) {
        HistKernel::Pipeline
    } else {
        HistKernel::Vec16
    }
}

/// The smallest input [`fastest_kernel`] gives to the pipeline.
pub const PIPELINE_MIN_BYTES: usize = 16 << 20;

/// The histogram of the first `len` bytes of `buf`, which is on `target`: `bins` bins, bytes
/// `>= 128` skipped for [`Bins::Ascii`]. Exactly the CPU's counts (integer atomics).
///
/// # Errors
/// [`Error::InvalidInput`] if `len` exceeds the buffer; a launch or driver error (a GPU that
/// fails, or was lost).
pub fn histogram_of_buffer(
    target: &Target,
    buf: &Buffer<u8>,
    len: usize,
    bins: Bins,
) -> Result<Vec<u64>> {
    let kernel = fastest_kernel(target, len);
    let cfg = config_for(target, kernel, bins, len, None)?;
    HistogramLaunch::new(target, kernel, buf, len, bins, cfg)?.run()
}

fn upload_and_count(target: &Target, data: &[u8], bins: Bins) -> Result<Vec<u64>> {
    let buf = target.upload(data)?;
    histogram_of_buffer(target, &buf, data.len(), bins)
}

/// The number of each byte value in `data`, counted on `target` (a GPU, or the simulator) with
/// the fastest kernel for its size ([`fastest_kernel`]). Exactly what a CPU loop counts.
///
/// ```no_run
/// # fn main() -> gridsync::Result<()> {
/// let target = gridsync::Target::open(0, false)?;
/// let counts = gridsync::histogram::histogram(&target, b"hello, world")?;
/// assert_eq!(counts[b'l' as usize], 3);
/// # Ok(()) }
/// ```
///
/// # Errors
/// A driver error: the device memory cannot hold `data` (out of memory), or the GPU fails.
pub fn histogram(target: &Target, data: &[u8]) -> Result<[u64; 256]> {
    let v = upload_and_count(target, data, Bins::Byte)?;
    v.try_into()
        .map_err(|v: Vec<u64>| Error::Mismatch(format!("{} bins, not 256", v.len())))
}

/// The number of each ASCII code in `data` — bytes `>= 128` are not counted, as in the source —
/// counted on `target` with the fastest kernel for its size. Exactly what a CPU loop counts.
///
/// # Errors
/// As [`histogram`].
pub fn histogram_ascii(target: &Target, data: &[u8]) -> Result<[u64; 128]> {
    let v = upload_and_count(target, data, Bins::Ascii)?;
    v.try_into()
        .map_err(|v: Vec<u64>| Error::Mismatch(format!("{} bins, not 128", v.len())))
}
