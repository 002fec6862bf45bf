//! `gridsync bench dot`: each dot kernel's bandwidth, as a fraction of the device-to-device copy
//! measured in the same run.
//!
//! **Definition.** A dot of two arrays of `n` floats reads `8·n` bytes and writes one float (or
//! one per block), so its bandwidth is `8·n / time`. The copy's ([`super::copy`]) is
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

use super::{SizedBenchOptions, Stats, copy, start_sized};
use crate::dot::{DotKernel, DotLaunch, check, config_for, dot_cpu, read_gb_per_s};
use crate::error::Result;
use crate::input::uniform_f32;
use crate::launch::Target;
use crate::timer::Timer;
use serde::Serialize;

/// Sizes benchmarked by default, elements per array.
pub const DEFAULT_LENS: [usize; 2] = [10_000_000, 1_000_000_000];
/// Untimed launches before the timed ones.
pub const WARMUP: u32 = 3;
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
    /// Its PTX name.
    pub name: &'static str,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// `8·n` bytes read / median time, GB/s.
    pub gb_per_s: f64,
    /// `gb_per_s` / the copy's (read + written) GB/s.
    pub fraction_of_copy: f64,
    /// The last trial's relative error against the float64 CPU dot.
    pub rel_error: f64,
}

/// Every kernel at one size.
pub type DotSizeBench = super::SizeBench<DotKernelBench>;

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct DotBench {
    /// The device.
    pub device: String,
    /// How `fraction_of_copy` is defined.
    pub definition: &'static str,
    /// The roofline, measured in this run.
    pub copy: copy::CopyBench,
    /// Each size.
    pub sizes: Vec<DotSizeBench>,
}

/// The definition printed with the numbers.
pub const DEFINITION: &str = "fraction of copy = (8·n bytes read / kernel time) / \
    ((bytes read + bytes written) / copy time): both the rate HBM moves bytes";

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`crate::Error::Unsupported`] on the simulator; [`crate::Error::InvalidInput`] for zero trials, zero blocks
/// per SM or an empty size; [`crate::Error::Mismatch`] if a result is off; a driver error.
pub fn run(
    target: &Target,
    opts: &SizedBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<DotBench> {
    let per_size = DotKernel::ALL.len() as u32 * (WARMUP + opts.trials);
    let mut run = start_sized(target, opts, per_size, &mut progress)?;
    let mut timer = Timer::new()?;
    let mut sizes = Vec::new();
    for &len in &opts.lens {
        let bytes_read = 8 * len as u64;
        if let Some(skipped) = run.skip_if_too_big(len, bytes_read, &mut progress)? {
            sizes.push(skipped);
            continue;
        }
        let (da, db, cpu) = {
            let (a, b) = (
                uniform_f32(len, SEED, 0.0, 1.0),
                uniform_f32(len, !SEED, 0.0, 1.0),
            );
            (target.upload(&a)?, target.upload(&b)?, dot_cpu(&a, &b))
        };
        let mut kernels = Vec::new();
        for kernel in DotKernel::ALL {
            let cfg = config_for(target, kernel, len, opts.blocks_per_sm)?;
            let launch = DotLaunch::new(target, kernel, &da, &db, cfg)?;
            let (mut ms, mut last) = (Vec::new(), 0.0);
            for t in 0..WARMUP + opts.trials {
                let (result, time) = launch.run_timed(Some(&mut timer))?;
                check(kernel, result, &cpu)?;
                if t >= WARMUP {
                    ms.extend(time);
                }
                last = result;
                run.done += 1;
                progress(run.done, run.total);
            }
            let ms = Stats::of(&ms)?;
            let gb_per_s = read_gb_per_s(len, ms.median);
            kernels.push(DotKernelBench {
                kernel,
                name: kernel.name(),
                blocks: cfg.grid.x,
                threads_per_block: cfg.block.x,
                ms,
                gb_per_s,
                fraction_of_copy: gb_per_s / run.copy.gb_per_s,
                rel_error: crate::dot::rel_error(last, cpu.dot),
            });
        }
        sizes.push(DotSizeBench {
            len,
            bytes_read,
            skipped: None,
            kernels,
        });
    }
    Ok(DotBench {
        device: target.describe(),
        definition: DEFINITION,
        copy: run.copy,
        sizes,
    })
}
