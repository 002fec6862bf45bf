//! `gridsync bench histogram`: every histogram kernel's bandwidth on the source's text size and
//! on 1 GiB of English-like text and of uniform random bytes, as a fraction of the
//! device-to-device copy measured in the same run.
//!
//! **Definition** (as `bench count-above`): a histogram reads `n` bytes and writes a few
//! kilobytes of bins, so its bandwidth is `n / time`; the copy's is `2·b / time` (read + written).
//! The fraction of copy is the first over the second — both the rate at which HBM moves bytes.
//!
//! Every trial launches on the same input after [`WARMUP`](super::WARMUP) launches, and every trial's
//! histogram is compared with the CPU's. The 5.6 MB text fits in L2 (50–60 MB on an H100/H200),
//! so that size measures launch, L2 and the kernel's fixed costs as much as bandwidth; the
//! 1 GiB inputs cannot be cached.

use super::KernelTiming;
use super::sized::{BandwidthRun, DEFAULT_TRIALS, definition};
use gridsync::histogram::{
    Bins, HistKernel, HistogramLaunch, RANDOM_SEED, check, config_for, fastest_kernel,
    histogram_cpu, uniform_bytes,
};
use gridsync::inputs::text::{DEFAULT_TEXT_BYTES, DEFAULT_TEXT_SEED, english_text};
use gridsync::runtime::copy;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::Serialize;

/// Bytes of the large inputs: 1 GiB, as the targets.
pub const LARGE_BYTES: usize = 1 << 30;

/// The inputs of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchInput {
    /// English-like text of the source's size (5 638 519 bytes).
    SourceText,
    /// English-like text of [`HistogramBenchOptions::large_bytes`].
    LargeText,
    /// Uniform random bytes of [`HistogramBenchOptions::large_bytes`].
    LargeRandom,
}

impl BenchInput {
    /// All three, in order.
    pub const ALL: [BenchInput; 3] = [
        BenchInput::SourceText,
        BenchInput::LargeText,
        BenchInput::LargeRandom,
    ];

    fn bytes(self, large: usize) -> usize {
        match self {
            BenchInput::SourceText => DEFAULT_TEXT_BYTES,
            _ => large,
        }
    }

    fn data(self, large: usize) -> Vec<u8> {
        match self {
            BenchInput::LargeRandom => uniform_bytes(large, RANDOM_SEED),
            _ => english_text(self.bytes(large), DEFAULT_TEXT_SEED),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            BenchInput::SourceText => "English-like text, the source's size",
            BenchInput::LargeText => "English-like text",
            BenchInput::LargeRandom => "uniform random bytes",
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct HistogramBenchOptions {
    /// 128 (the targets') or 256 bins.
    pub bins: Bins,
    /// Timed launches per kernel and input (at least 20 for a stable median).
    pub trials: u32,
    /// Bytes of the large inputs.
    pub large_bytes: usize,
    /// Bytes of the copy measured as the roofline.
    pub copy_bytes: usize,
}

impl Default for HistogramBenchOptions {
    fn default() -> HistogramBenchOptions {
        HistogramBenchOptions {
            bins: Bins::Ascii,
            trials: DEFAULT_TRIALS,
            large_bytes: LARGE_BYTES,
            copy_bytes: copy::DEFAULT_BYTES,
        }
    }
}

/// One kernel on one input.
#[derive(Clone, Debug, Serialize)]
pub struct KernelBench {
    /// Which kernel.
    pub kernel: HistKernel,
    /// Its name, shape, time and bandwidth (`n` bytes read).
    #[serde(flatten)]
    pub timing: KernelTiming,
}

/// Every kernel on one input.
#[derive(Clone, Debug, Serialize)]
pub struct InputBench {
    /// Which input.
    pub input: BenchInput,
    /// What it is.
    pub what: &'static str,
    /// Bytes.
    pub bytes: usize,
    /// The kernel `gridsync::histogram::histogram` picks for this size.
    pub library_kernel: &'static str,
    /// Why this input was skipped, if it was (it did not fit in memory).
    pub skipped: Option<String>,
    /// The kernels' results.
    pub kernels: Vec<KernelBench>,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct HistogramBench {
    /// The device.
    pub device: String,
    /// How `fraction_of_copy` is defined ([`definition`]).
    pub definition: String,
    /// The roofline, measured in this run.
    pub copy: copy::CopyBench,
    /// Bins.
    pub bins: Bins,
    /// Each input.
    pub inputs: Vec<InputBench>,
}

/// Runs the benchmark; `progress` gets (steps done, steps), a step being one launch or copy.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials or an empty
/// large input; [`Error::Mismatch`] if a histogram is wrong; a driver error.
pub fn run(
    target: &Target,
    opts: &HistogramBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<HistogramBench> {
    if opts.trials == 0 || opts.large_bytes == 0 {
        return Err(Error::InvalidInput(
            "trials and the large input's size must be positive".into(),
        ));
    }
    // The large inputs are made on the host one at a time, with their CPU histogram; a size
    // the GPU cannot hold is skipped with a note below.
    gridsync::runtime::memory::check_host(
        &format!("--bytes {}", opts.large_bytes),
        opts.large_bytes as u64,
    )?;
    let kernels = HistKernel::available(target);
    let per_input = kernels.len() as u32;
    let kernel_runs = per_input * BenchInput::ALL.len() as u32;
    let timing = (opts.trials, opts.copy_bytes);
    let mut run = BandwidthRun::start(target, timing, kernel_runs, &mut progress)?;
    let mut inputs = Vec::new();
    for input in BenchInput::ALL {
        let bytes = input.bytes(opts.large_bytes);
        let mut bench = InputBench {
            input,
            what: input.describe(),
            bytes,
            library_kernel: fastest_kernel(target, bytes).name(),
            skipped: run.skip_if_too_big(bytes as u64, per_input)?,
            kernels: Vec::new(),
        };
        if bench.skipped.is_some() {
            inputs.push(bench);
            continue;
        }
        let (src, want) = {
            let data = input.data(opts.large_bytes);
            (target.upload(&data)?, histogram_cpu(&data, opts.bins))
        };
        for &kernel in &kernels {
            let cfg = config_for(target, kernel, opts.bins, bytes, None)?;
            let launch = HistogramLaunch::new(target, kernel, &src, bytes, opts.bins, cfg)?;
            let (timing, _) = run.time(kernel.name(), cfg, bytes as u64, |timer| {
                let time = launch.launch_timed(Some(timer))?;
                check(kernel, &launch.result()?, &want)?;
                Ok(((), time))
            })?;
            bench.kernels.push(KernelBench { kernel, timing });
        }
        inputs.push(bench);
    }
    Ok(HistogramBench {
        device: target.describe(),
        definition: definition(1),
        copy: run.copy,
        bins: opts.bins,
        inputs,
    })
}
