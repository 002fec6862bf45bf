//! `gridsync bench count-above`: each counting kernel's bandwidth, as a fraction of the
//! device-to-device copy measured in the same run.
//!
//! **Definition.** A count reads `4·n` bytes and writes nothing (8 bytes of counter), so its
//! bandwidth is `4·n / time`. The copy moves `b` bytes by reading `b` and writing `b`, and its
//! bandwidth ([`super::copy`]) is `2·b / time`. The fraction of copy is the first over the
//! second: bytes the kernel read per second over bytes the copy read *and wrote* per second —
//! both the rate at which HBM moves bytes, in whichever direction.
//!
//! The lock kernel is not benchmarked: at ~1 µs per element above the threshold it would take
//! seconds per trial at 10⁷; `gridsync count-above` times it on a prefix.
//!
//! Every trial launches on the same input, after warm-up. At 10⁷ floats (40 MB) part of the
//! input may still be in L2 (50–60 MB on an H100/H200) from the previous trial, so the fraction
//! there can exceed what HBM alone allows; 10⁹ floats (4 GB) cannot be cached.

use super::{SizedBenchOptions, Stats, copy, start_sized};
use crate::count_above::{
    CountKernel, CountLaunch, DEFAULT_THRESHOLD, config_for, count_above_cpu, default_input,
    lock_bounds, read_gb_per_s,
};
use crate::error::{Error, Result};
use crate::launch::Target;
use crate::timer::Timer;
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
/// Untimed launches before the timed ones.
pub const WARMUP: u32 = 3;

/// What to measure by default: [`DEFAULT_LENS`], 20 trials, the occupancy's blocks per SM.
pub fn default_options() -> SizedBenchOptions {
    SizedBenchOptions::new(&DEFAULT_LENS)
}

/// One kernel at one size.
#[derive(Clone, Debug, Serialize)]
pub struct KernelBench {
    /// Which kernel.
    pub kernel: CountKernel,
    /// Its PTX name.
    pub name: &'static str,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// `4·n` bytes read / median time, GB/s.
    pub gb_per_s: f64,
    /// `gb_per_s` / the copy's (read + written) GB/s.
    pub fraction_of_copy: f64,
}

/// Every kernel at one size.
pub type SizeBench = super::SizeBench<KernelBench>;

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct CountAboveBench {
    /// The device.
    pub device: String,
    /// How `fraction_of_copy` is defined.
    pub definition: &'static str,
    /// The roofline, measured in this run.
    pub copy: copy::CopyBench,
    /// The threshold (half the default input is above it).
    pub threshold: f32,
    /// Each size.
    pub sizes: Vec<SizeBench>,
}

/// The definition printed with the numbers.
pub const DEFINITION: &str = "fraction of copy = (4·n bytes read / kernel time) / \
    ((bytes read + bytes written) / copy time): both the rate HBM moves bytes";

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for fewer than one trial,
/// zero blocks per SM or an empty size; [`Error::Mismatch`] if a count is wrong; a driver error.
pub fn run(
    target: &Target,
    opts: &SizedBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<CountAboveBench> {
    let per_size = KERNELS.len() as u32 * (WARMUP + opts.trials);
    let mut run = start_sized(target, opts, per_size, &mut progress)?;
    let mut timer = Timer::new()?;
    let mut sizes = Vec::new();
    for &len in &opts.lens {
        let bytes_read = 4 * len as u64;
        if let Some(skipped) = run.skip_if_too_big(len, bytes_read, &mut progress)? {
            sizes.push(skipped);
            continue;
        }
        let (src, expected) = {
            let data = default_input(len);
            (
                target.upload(&data)?,
                count_above_cpu(&data, DEFAULT_THRESHOLD),
            )
        };
        let mut kernels = Vec::new();
        for kernel in KERNELS {
            let cfg = config_for(target, kernel, len, opts.blocks_per_sm)?;
            let bounds = lock_bounds(target, 0);
            let launch =
                CountLaunch::new(target, kernel, &src, len, DEFAULT_THRESHOLD, cfg, bounds)?;
            let mut ms = Vec::new();
            for t in 0..WARMUP + opts.trials {
                let (count, time) = launch.run_timed(Some(&mut timer))?;
                if count != expected {
                    return Err(Error::Mismatch(format!(
                        "{} counted {count} of {len}, the CPU {expected}",
                        kernel.name()
                    )));
                }
                if t >= WARMUP {
                    ms.extend(time);
                }
                run.done += 1;
                progress(run.done, run.total);
            }
            let ms = Stats::of(&ms)?;
            let gb_per_s = read_gb_per_s(len, ms.median);
            kernels.push(KernelBench {
                kernel,
                name: kernel.name(),
                blocks: cfg.grid.x,
                threads_per_block: cfg.block.x,
                ms,
                gb_per_s,
                fraction_of_copy: gb_per_s / run.copy.gb_per_s,
            });
        }
        sizes.push(SizeBench {
            len,
            bytes_read,
            skipped: None,
            kernels,
        });
    }
    Ok(CountAboveBench {
        device: target.describe(),
        definition: DEFINITION,
        copy: run.copy,
        threshold: DEFAULT_THRESHOLD,
        sizes,
    })
}
