//! `gridsync bench reduce`: each reduction kernel's time on the CUDA book's input (`1.23` × n),
//! as GB/s and as a fraction of the device-to-device copy measured in the same run.
//!
//! **Definition** (as [`super::count_above`]): a sum of `n` floats reads `4·n` bytes and writes a
//! few, so its bandwidth is `4·n / time`; the copy's is (bytes read + bytes written) / time; the
//! fraction of copy is the first over the second — both the rate at which HBM moves bytes.
//!
//! Every trial launches on the same input after warm-up; 10⁸ floats (400 MB) and 10⁹ (4 GB) are
//! far beyond L2, so every trial reads from HBM. Timed: the kernel launch only — not the zeroing
//! of the atomic kernels' result before it, nor the host's sum of `partial_reduce`'s partials
//! after it. Each trial's result is kept: the report says whether all trials gave the same bits.

use super::{SizedBenchOptions, Stats, copy, start_sized};
use crate::error::{Error, Result};
use crate::launch::Target;
use crate::reduce::{Accumulate, BOOK_VALUE, Step, StepLaunch, book_input, relative_error};
use crate::timer::Timer;
use serde::Serialize;

/// Sizes benchmarked by default: the book's 10⁸ (target ≤ 0.1 ms on an H200, not slower than
/// CUB's 0.093 ms) and 10⁹ (4 GB, for bandwidth).
pub const DEFAULT_LENS: [usize; 2] = [100_000_000, 1_000_000_000];
/// The kernels: the progression in `f32`, then the fast kernel's other accumulations.
pub const KERNELS: [(Step, Accumulate); 7] = [
    (Step::Partial, Accumulate::F32),
    (Step::Atomic, Accumulate::F32),
    (Step::Warp, Accumulate::F32),
    (Step::LastBlock, Accumulate::F32),
    (Step::Vec, Accumulate::F32),
    (Step::Vec, Accumulate::F64),
    (Step::Vec, Accumulate::Kahan),
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
    /// Its PTX name.
    pub name: &'static str,
    /// Its step of the progression.
    pub step: Step,
    /// Its accumulation, for the single-pass steps.
    pub accumulate: Option<Accumulate>,
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
    /// The result of the first timed trial.
    pub value: f64,
    /// Its error against `1.23f32 · n` (computed in `f64`, exact).
    pub rel_error: f64,
    /// How many different results the trials gave (1: the same bits every time).
    pub distinct_results: usize,
}

/// Every kernel at one size.
pub type SizeBench = super::SizeBench<KernelBench>;

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct ReduceBench {
    /// The device.
    pub device: String,
    /// How `fraction_of_copy` is defined.
    pub definition: &'static str,
    /// The roofline, measured in this run.
    pub copy: copy::CopyBench,
    /// Every element's value (the book's).
    pub value: f32,
    /// Each size.
    pub sizes: Vec<SizeBench>,
}

/// The definition printed with the numbers.
pub const DEFINITION: &str = "fraction of copy = (4·n bytes read / kernel time) / \
    ((bytes read + bytes written) / copy time): both the rate HBM moves bytes";

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials, zero blocks
/// per SM or an empty size; [`Error::Mismatch`] if a deterministic kernel's trials differ; a
/// driver error.
pub fn run(
    target: &Target,
    opts: &SizedBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<ReduceBench> {
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
        let x = target.upload(&book_input(len))?;
        let exact = BOOK_VALUE as f64 * len as f64;
        let mut kernels = Vec::new();
        for (step, acc) in KERNELS {
            let launch = StepLaunch::new(target, step, acc, len, opts.blocks_per_sm)?;
            let (mut ms, mut values) = (Vec::new(), Vec::new());
            for t in 0..WARMUP + opts.trials {
                let (value, time) = launch.run_timed(&x, len, Some(&mut timer))?;
                if t >= WARMUP {
                    ms.extend(time);
                    values.push(value);
                }
                run.done += 1;
                progress(run.done, run.total);
            }
            let mut bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
            bits.sort_unstable();
            bits.dedup();
            if step.deterministic() && bits.len() > 1 {
                return Err(Error::Mismatch(format!(
                    "{} gave {} different results on one input",
                    launch.kernel().name(),
                    bits.len()
                )));
            }
            let ms = Stats::of(&ms)?;
            let gb_per_s = bytes_read as f64 / (ms.median * 1e-3) / 1e9;
            let cfg = launch.config();
            kernels.push(KernelBench {
                name: launch.kernel().name(),
                step,
                accumulate: step.takes_accumulate().then_some(acc),
                blocks: cfg.grid.x,
                threads_per_block: cfg.block.x,
                ms,
                gb_per_s,
                fraction_of_copy: gb_per_s / run.copy.gb_per_s,
                value: values[0],
                rel_error: relative_error(values[0], exact),
                distinct_results: bits.len(),
            });
        }
        sizes.push(SizeBench {
            len,
            bytes_read,
            skipped: None,
            kernels,
        });
    }
    Ok(ReduceBench {
        device: target.describe(),
        definition: DEFINITION,
        copy: run.copy,
        value: BOOK_VALUE,
        sizes,
    })
}
