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

use super::sized::{SizedTopic, run_sized};
use super::{KernelTiming, SizedBench, SizedBenchOptions};
use gridsync::reduce::{Accumulate, BOOK_VALUE, Step, StepLaunch, book_input, relative_error};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;
use serde::Serialize;

/// Sizes benchmarked by default: the book's 10⁸ (target ≤ 0.1 ms on an H200, not slower than
/// CUB's 0.093 ms) and 10⁹ (4 GB, for bandwidth).
pub const DEFAULT_LENS: [usize; 2] = [100_000_000, 1_000_000_000];
/// The kernels: the progression in `f32`, then the fast kernel's other accumulations, then
/// the pipelined kernel (sm_90 only; skipped elsewhere) in `f32` and in `f64`.
pub const KERNELS: [(Step, Accumulate); 9] = [
    (Step::Partial, Accumulate::F32),
    (Step::Atomic, Accumulate::F32),
    (Step::Warp, Accumulate::F32),
    (Step::LastBlock, Accumulate::F32),
    (Step::Vec, Accumulate::F32),
    (Step::Vec, Accumulate::F64),
    (Step::Vec, Accumulate::Kahan),
    (Step::Pipeline, Accumulate::F32),
    (Step::Pipeline, Accumulate::F64),
];
/// What to measure by default: [`DEFAULT_LENS`], 20 trials, the occupancy's blocks per SM.
pub fn default_options() -> SizedBenchOptions {
    SizedBenchOptions::new(&DEFAULT_LENS)
}

/// One kernel at one size.
#[derive(Clone, Debug, Serialize)]
pub struct KernelBench {
    /// Its step of the progression.
    pub step: Step,
    /// Its accumulation, for the single-pass steps.
    pub accumulate: Option<Accumulate>,
    /// Its PTX name, shape, time and bandwidth (`4·n` bytes read).
    #[serde(flatten)]
    pub timing: KernelTiming,
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
    /// The roofline and every kernel at every size.
    #[serde(flatten)]
    pub bench: SizedBench<KernelBench>,
    /// Every element's value (the book's).
    pub value: f32,
}

/// The kernels, each reading one float per element.
const TOPIC: SizedTopic<(Step, Accumulate)> = SizedTopic {
    kernels: &KERNELS,
    bytes_per_element: size_of::<f32>() as u64,
    runs_on: |target, (step, acc)| target.has_kernel(step.kernel(acc)),
};

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`Error::Unsupported`](gridsync::Error::Unsupported) on the simulator;
/// [`Error::InvalidInput`](gridsync::Error::InvalidInput) for zero trials, zero blocks per SM or
/// an empty size; [`Error::Mismatch`](gridsync::Error::Mismatch) if a deterministic kernel's
/// trials differ ([`Step::distinct_results`]); a driver error.
pub fn run(
    target: &Target,
    opts: &SizedBenchOptions,
    progress: impl FnMut(u32, u32),
) -> Result<ReduceBench> {
    let bench = run_sized(
        target,
        opts,
        &TOPIC,
        progress,
        |len| target.upload(&book_input(len)),
        |size, x, (step, acc)| {
            let len = size.len;
            let launch = StepLaunch::new(target, step, acc, len, opts.blocks_per_sm)?;
            let name = launch.kernel().name();
            let (timing, values) = size.time(name, launch.config(), |timer| {
                launch.run_timed(x, len, Some(timer))
            })?;
            let distinct_results = step.distinct_results(name, &values)?;
            let value = values.first().copied().unwrap_or(f64::NAN);
            Ok(KernelBench {
                step,
                accumulate: step.takes_accumulate().then_some(acc),
                timing,
                value,
                rel_error: relative_error(value, BOOK_VALUE as f64 * len as f64),
                distinct_results,
            })
        },
    )?;
    Ok(ReduceBench {
        bench,
        value: BOOK_VALUE,
    })
}
