//! The device-to-device copy bandwidth — the roofline every memory-bound benchmark is measured
//! against (`gridsync bench copy`).
//!
//! `cuMemcpyDtoDAsync` of `bytes` (≥ 1 GiB by default, far beyond L2) from one buffer to another,
//! event-timed; bandwidth counts the bytes read plus the bytes written, as the reference does
//! (4.25 TB/s on an H200).

use super::stats::{Stats, require_gpu};
use crate::runtime::error::{Error, Result, check};
use crate::runtime::launch::Target;
use crate::runtime::memory::{Footprint, check_fits};
use crate::runtime::timer::Timer;
use cust::sys as cu;
use serde::Serialize;

/// The default copy size: 1 GiB.
pub const DEFAULT_BYTES: usize = 1 << 30;

/// The copy benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct CopyBench {
    /// The device.
    pub device: String,
    /// Bytes copied per trial.
    pub bytes: usize,
    /// Milliseconds per copy.
    pub ms: Stats,
    /// (read + written bytes) / median time, in GB/s (10⁹ bytes per second).
    pub gb_per_s: f64,
}

/// Copies `bytes` device-to-device `trials` times (after two warm-ups) and reports the median.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero bytes or trials, or
/// more than a third of the device's memory; a driver error (out of memory, …).
pub fn run(
    target: &Target,
    bytes: usize,
    trials: u32,
    mut progress: impl FnMut(u32, u32),
) -> Result<CopyBench> {
    let gpu = require_gpu(target)?;
    if bytes == 0 || trials == 0 {
        return Err(Error::InvalidInput(
            "the copy size and the trial count must be positive".into(),
        ));
    }
    // A pattern on the host, a source and a destination on the GPU.
    check_fits(
        target,
        &format!("a copy of {bytes} bytes (--bytes, --copy-bytes)"),
        Footprint::per_element(bytes as u64, 1, 2),
    )?;
    // Random-ish, not zero, contents: some memory systems compress zeros.
    let pattern: Vec<u32> = (0..bytes / 4)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761))
        .collect();
    let src = target.upload(&pattern)?;
    let dst = target.zeros::<u32>(bytes / 4)?;
    let copy_bytes = pattern.len() * 4;
    let copy = || {
        // SAFETY: both buffers own `copy_bytes` bytes and outlive the synchronized copy.
        let code = unsafe {
            cu::cuMemcpyDtoDAsync_v2(
                dst.ptr() as u64,
                src.ptr() as u64,
                copy_bytes,
                gpu.stream().as_raw(),
            )
        };
        check(code, || "cuMemcpyDtoDAsync".into())
    };
    for _ in 0..2 {
        copy()?;
    }
    gpu.synchronize()?;
    let mut timer = Timer::new()?;
    let mut ms = Vec::new();
    for t in 0..trials {
        ms.push(timer.time(gpu.stream(), copy)? as f64);
        progress(t + 1, trials);
    }
    let stats = Stats::of(&ms)?;
    Ok(CopyBench {
        device: target.describe(),
        bytes: copy_bytes,
        ms: stats,
        gb_per_s: 2.0 * copy_bytes as f64 / (stats.median * 1e-3) / 1e9,
    })
}
