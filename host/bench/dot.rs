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

use super::{Stats, copy, does_not_fit, require_gpu};
use crate::dot::{DotKernel, DotLaunch, check, config_for, dot_cpu, read_gb_per_s};
use crate::error::{Error, Result};
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

/// What to measure.
#[derive(Clone, Debug)]
pub struct DotBenchOptions {
    /// Elements per array, per size.
    pub lens: Vec<usize>,
    /// Timed launches per kernel and size.
    pub trials: u32,
    /// Blocks per SM for `dot_vec4`; `None`: as many as fit.
    pub blocks_per_sm: Option<u32>,
    /// Bytes of the copy measured as the roofline.
    pub copy_bytes: usize,
}

impl Default for DotBenchOptions {
    fn default() -> DotBenchOptions {
        DotBenchOptions {
            lens: DEFAULT_LENS.to_vec(),
            trials: 20,
            blocks_per_sm: None,
            copy_bytes: copy::DEFAULT_BYTES,
        }
    }
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
#[derive(Clone, Debug, Serialize)]
pub struct DotSizeBench {
    /// Elements per array.
    pub len: usize,
    /// Bytes each kernel reads: `8·len`.
    pub bytes_read: u64,
    /// Why this size was skipped, if it was (it did not fit in memory).
    pub skipped: Option<String>,
    /// The kernels' results.
    pub kernels: Vec<DotKernelBench>,
}

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
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials, zero blocks
/// per SM or an empty size; [`Error::Mismatch`] if a result is off; a driver error.
pub fn run(
    target: &Target,
    opts: &DotBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<DotBench> {
    let gpu = require_gpu(target)?;
    if opts.trials == 0 || opts.blocks_per_sm == Some(0) || opts.lens.contains(&0) {
        return Err(Error::InvalidInput(
            "trials, blocks per SM and every size must be positive".into(),
        ));
    }
    let per_size = DotKernel::ALL.len() as u32 * (WARMUP + opts.trials);
    let total = opts.trials + per_size * opts.lens.len() as u32;
    let copy = copy::run(target, opts.copy_bytes, opts.trials, |d, _| {
        progress(d, total)
    })?;
    let mut done = opts.trials;
    let mut timer = Timer::new()?;
    let mut sizes = Vec::new();
    for &len in &opts.lens {
        let bytes_read = 8 * len as u64;
        if let Some(why) = does_not_fit(gpu, bytes_read)? {
            done += per_size;
            progress(done, total);
            sizes.push(DotSizeBench {
                len,
                bytes_read,
                skipped: Some(why),
                kernels: Vec::new(),
            });
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
                done += 1;
                progress(done, total);
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
                fraction_of_copy: gb_per_s / copy.gb_per_s,
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
        copy,
        sizes,
    })
}
