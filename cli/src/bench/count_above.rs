//! `gridsync bench count-above`: each counting kernel's bandwidth, as a fraction of the
//! device-to-device copy measured in the same run.
//!
//! **Definition.** A count reads `4·n` bytes and writes nothing (8 bytes of counter), so its
//! bandwidth is `4·n / time`. The copy moves `b` bytes by reading `b` and writing `b`, and its
//! bandwidth ([`gridsync::runtime::copy`]) is `2·b / time`. The fraction of copy is the first over the
//! second: bytes the kernel read per second over bytes the copy read *and wrote* per second —
//! both the rate at which HBM moves bytes, in whichever direction.
//!
//! The lock kernel is not benchmarked: at ~1 µs per element above the threshold it would take
//! seconds per trial at 10⁷; `gridsync count-above` times it on a prefix.
//!
//! Every trial launches on the same input, after warm-up. At 10⁷ floats (40 MB) part of the
//! input may still be in L2 (50–60 MB on an H100/H200) from the previous trial, so the fraction
//! there can exceed what HBM alone allows; 10⁹ floats (4 GB) cannot be cached.

use super::sized::{SizedTopic, run_sized};
use super::{KernelTiming, SizedBench, SizedBenchOptions};
use gridsync::count_above::{
    CountKernel, CountLaunch, DEFAULT_THRESHOLD, config_for, count_above_cpu, default_input,
    lock_bounds,
};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::Serialize;

/// Sizes benchmarked by default: the 10⁷ (timing target ≤ 0.015 ms on an H200) and 10⁹
/// (4 GB, target ≥ 85 % of copy).
pub const DEFAULT_LENS: [usize; 2] = [10_000_000, 1_000_000_000];
/// Kernels benchmarked: all but the lock kernel.
pub const KERNELS: [CountKernel; 4] = [
    CountKernel::Atomic,
    CountKernel::Warp,
    CountKernel::Block,
    CountKernel::Vec4,
];

/// What to measure by default: [`DEFAULT_LENS`], 20 trials, the occupancy's blocks per SM.
pub fn default_options() -> SizedBenchOptions {
    SizedBenchOptions::new(&DEFAULT_LENS)
}

/// One kernel at one size.
#[derive(Clone, Debug, Serialize)]
pub struct KernelBench {
    /// Which kernel.
    pub kernel: CountKernel,
    /// Its name, shape, time and bandwidth (`4·n` bytes read).
    #[serde(flatten)]
    pub timing: KernelTiming,
}

/// Every kernel at one size.
pub type SizeBench = super::SizeBench<KernelBench>;

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct CountAboveBench {
    /// The roofline and every kernel at every size.
    #[serde(flatten)]
    pub bench: SizedBench<KernelBench>,
    /// The threshold (half the default input is above it).
    pub threshold: f32,
}

/// The kernels, each reading one float per element.
const TOPIC: SizedTopic<CountKernel> = SizedTopic {
    kernels: &KERNELS,
    bytes_per_element: size_of::<f32>() as u64,
    runs_on: crate::bench::sized::runs_everywhere,
};

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for fewer than one trial,
/// zero blocks per SM or an empty size; [`Error::Mismatch`] if a count is wrong; a driver error.
pub fn run(
    target: &Target,
    opts: &SizedBenchOptions,
    progress: impl FnMut(u32, u32),
) -> Result<CountAboveBench> {
    let bench = run_sized(
        target,
        opts,
        &TOPIC,
        progress,
        |len| {
            let data = default_input(len);
            let src = target.upload(&data)?;
            Ok((src, count_above_cpu(&data, DEFAULT_THRESHOLD)))
        },
        |size, (src, expected), kernel| {
            let len = size.len;
            let cfg = config_for(target, kernel, len, opts.blocks_per_sm)?;
            let bounds = lock_bounds(target, 0);
            let launch =
                CountLaunch::new(target, kernel, src, len, DEFAULT_THRESHOLD, cfg, bounds)?;
            let (timing, _) = size.time(kernel.name(), cfg, |timer| {
                let (count, time) = launch.run_timed(Some(timer))?;
                if count != *expected {
                    return Err(Error::Mismatch(format!(
                        "{} counted {count} of {len}, the CPU {expected}",
                        kernel.name()
                    )));
                }
                Ok(((), time))
            })?;
            Ok(KernelBench { kernel, timing })
        },
    )?;
    Ok(CountAboveBench {
        bench,
        threshold: DEFAULT_THRESHOLD,
    })
}
