//! `gridsync bench dot`: each dot kernel's bandwidth, as a fraction of the device-to-device copy
//! measured in the same run.
//!
//! **Definition.** A dot of two arrays of `n` floats reads `8·n` bytes and writes one float (or
//! one per block), so its bandwidth is `8·n / time`. The copy's ([`gridsync::runtime::copy`]) is
//! `(bytes read + bytes written) / time`. The fraction of copy is the first over the second:
//! both are the rate at which HBM moves bytes, in whichever direction.
//!
//! Data: uniform in `[0, 1)` (fixed seed), so every product is positive and the check against
//! the CPU (an error of at most `TOLERANCE · Σ|a·b|`, here the dot itself) would notice one lost
//! block even at 10⁹ — with signed data `Σ|a·b|` dwarfs the dot. Every trial launches on the same arrays after
//! warm-up; at 10⁷ (80 MB for both arrays) part may still be in L2 from the previous trial,
//! at 10⁹ (8 GB) nothing is. `dot_partial` is timed without the host's final sum.
//! The source's three kernels run at the source's shape (`[32 * 20, 256]`); `--blocks-per-sm`
//! applies to `dot_vec4` only. Reference (issue, H200): cuBLAS through `torch.dot` 0.027 ms at
//! 10⁷; target for `dot_vec4` ≤ 0.022 ms there and ≥ 85 % of copy at 10⁹.

use super::sized::{SizedTopic, run_sized};
use super::{KernelTiming, SizedBench, SizedBenchOptions};
use gridsync::dot::{DotKernel, DotLaunch, check, config_for, dot_cpu, rel_error};
use gridsync::inputs::uniform_f32;
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;
use serde::Serialize;

/// Sizes benchmarked by default, elements per array.
pub const DEFAULT_LENS: [usize; 2] = [10_000_000, 1_000_000_000];
/// The seed of the benchmark's data.
pub const SEED: u64 = 0x0064_6f74;

/// What to measure by default: [`DEFAULT_LENS`], 20 trials, the occupancy's blocks per SM.
pub fn default_options() -> SizedBenchOptions {
    SizedBenchOptions::new(&DEFAULT_LENS)
}

/// One kernel at one size.
#[derive(Clone, Debug, Serialize)]
pub struct DotKernelBench {
    /// Which kernel.
    pub kernel: DotKernel,
    /// Its name, shape, time and bandwidth (`8·n` bytes read).
    #[serde(flatten)]
    pub timing: KernelTiming,
    /// The last trial's relative error against the float64 CPU dot.
    pub rel_error: f64,
}

/// Every kernel at one size.
pub type DotSizeBench = super::SizeBench<DotKernelBench>;

/// The benchmark's result.
pub type DotBench = SizedBench<DotKernelBench>;

/// The kernels, each reading a float of each array per element.
const TOPIC: SizedTopic<DotKernel> = SizedTopic {
    kernels: &DotKernel::ALL,
    bytes_per_element: 2 * size_of::<f32>() as u64,
    runs_on: crate::bench::sized::runs_everywhere,
};

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`gridsync::Error::Unsupported`] on the simulator; [`gridsync::Error::InvalidInput`] for zero trials, zero blocks
/// per SM or an empty size; [`gridsync::Error::Mismatch`] if a result is off; a driver error.
pub fn run(
    target: &Target,
    opts: &SizedBenchOptions,
    progress: impl FnMut(u32, u32),
) -> Result<DotBench> {
    run_sized(
        target,
        opts,
        &TOPIC,
        progress,
        |len| {
            let (a, b) = (
                uniform_f32(len, SEED, 0.0, 1.0),
                uniform_f32(len, !SEED, 0.0, 1.0),
            );
            Ok((target.upload(&a)?, target.upload(&b)?, dot_cpu(&a, &b)))
        },
        |size, (da, db, cpu), kernel| {
            let cfg = config_for(target, kernel, size.len, opts.blocks_per_sm)?;
            let launch = DotLaunch::new(target, kernel, da, db, cfg)?;
            let (timing, results) = size.time(kernel.name(), cfg, |timer| {
                let (result, time) = launch.run_timed(Some(timer))?;
                check(kernel, result, cpu)?;
                Ok((result, time))
            })?;
            let last = results.last().copied().unwrap_or(f64::NAN);
            Ok(DotKernelBench {
                kernel,
                timing,
                rel_error: rel_error(last, cpu.dot),
            })
        },
    )
}
