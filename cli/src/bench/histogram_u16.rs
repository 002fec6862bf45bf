//! `gridsync bench histogram-u16`: the 65 536-bin histogram kernels on 10⁹ uniform 16-bit values
//! and 10⁹ token-like ones (Zipf's law over GPT-2's 50 257 ids), as a fraction of the
//! device-to-device copy measured in the same run.
//!
//! **Definition** (as `bench histogram`): a kernel reads `2·n` bytes and writes 512 KiB of bins,
//! so its bandwidth is `2·n / time`; the copy's is `2·b / time` (read + written). Every trial's
//! histogram is compared with the CPU's.

use super::KernelTiming;
use super::sized::{BandwidthRun, DEFAULT_TRIALS, definition};
use gridsync::histogram::wide::{
    WideKernel, WideLaunch, check, fastest_wide_kernel, has_clusters, histogram_u16_cpu,
    wide_config,
};
use gridsync::inputs::{uniform_u16, zipf_u16};
use gridsync::runtime::copy;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use serde::Serialize;

/// Values of each input by default: 10⁹ (2 GB), as the targets.
pub const DEFAULT_VALUES: usize = 1_000_000_000;
/// The vocabulary of the token-like input: GPT-2's.
pub const TOKEN_VOCAB: u32 = 50_257;
/// The seed of both inputs.
pub const SEED: u64 = 0x7531_6869_7374;

/// The inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Input16 {
    /// Uniform random 16-bit values: every bin equally likely.
    Uniform,
    /// Token ids under Zipf's law: a few bins take most of the counts.
    Tokens,
}

impl Input16 {
    /// Both.
    pub const ALL: [Input16; 2] = [Input16::Uniform, Input16::Tokens];

    fn describe(self) -> &'static str {
        match self {
            Input16::Uniform => "uniform random 16-bit values",
            Input16::Tokens => "token-like ids (Zipf, 50 257 ids)",
        }
    }

    /// The input of `len` values.
    pub fn data(self, len: usize) -> Vec<u16> {
        match self {
            Input16::Uniform => uniform_u16(len, SEED),
            Input16::Tokens => zipf_u16(len, SEED, TOKEN_VOCAB),
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Histogram16BenchOptions {
    /// Values of each input.
    pub values: usize,
    /// Timed launches per kernel and input.
    pub trials: u32,
    /// Bytes of the copy measured as the roofline.
    pub copy_bytes: usize,
}

impl Default for Histogram16BenchOptions {
    fn default() -> Histogram16BenchOptions {
        Histogram16BenchOptions {
            values: DEFAULT_VALUES,
            trials: DEFAULT_TRIALS,
            copy_bytes: copy::DEFAULT_BYTES,
        }
    }
}

/// One kernel on one input.
#[derive(Clone, Debug, Serialize)]
pub struct Kernel16Bench {
    /// Which kernel (and cluster size).
    pub kernel: WideKernel,
    /// Its label, shape, time and bandwidth (`2·n` bytes read).
    #[serde(flatten)]
    pub timing: KernelTiming,
    /// How many times faster than `histogram_u16_global` on this input.
    pub speedup_over_global: f64,
}

/// Every kernel on one input.
#[derive(Clone, Debug, Serialize)]
pub struct Input16Bench {
    /// Which input.
    pub input: Input16,
    /// What it is.
    pub what: &'static str,
    /// Values.
    pub values: usize,
    /// The kernel `gridsync::histogram::histogram_u16` picks here.
    pub library_kernel: &'static str,
    /// Why this input was skipped, if it was (it did not fit in memory).
    pub skipped: Option<String>,
    /// The kernels' results.
    pub kernels: Vec<Kernel16Bench>,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct Histogram16Bench {
    /// The device.
    pub device: String,
    /// How `fraction_of_copy` is defined ([`definition`]).
    pub definition: String,
    /// The roofline, measured in this run.
    pub copy: copy::CopyBench,
    /// Each input.
    pub inputs: Vec<Input16Bench>,
}

/// Runs the benchmark; `progress` gets (steps done, steps).
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials or values;
/// [`Error::Mismatch`] if a histogram is wrong; a driver error.
pub fn run(
    target: &Target,
    opts: &Histogram16BenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<Histogram16Bench> {
    if opts.trials == 0 || opts.values == 0 {
        return Err(Error::InvalidInput(
            "trials and values must be positive".into(),
        ));
    }
    let bytes = opts.values as u64 * 2;
    gridsync::runtime::memory::check_host(&format!("--len {}", opts.values), bytes)?;
    let kernels: Vec<WideKernel> = WideKernel::ALL
        .into_iter()
        .filter(|k| !k.needs_clusters() || has_clusters(target))
        .collect();
    let per_input = kernels.len() as u32;
    let timing = (opts.trials, opts.copy_bytes);
    let mut run = BandwidthRun::start(
        target,
        timing,
        per_input * Input16::ALL.len() as u32,
        &mut progress,
    )?;
    let mut inputs = Vec::new();
    for input in Input16::ALL {
        let mut bench = Input16Bench {
            input,
            what: input.describe(),
            values: opts.values,
            library_kernel: fastest_wide_kernel(target).label(),
            skipped: run.skip_if_too_big(
                bytes + 8 * gridsync::histogram::wide::BINS as u64,
                per_input,
            )?,
            kernels: Vec::new(),
        };
        if bench.skipped.is_some() {
            inputs.push(bench);
            continue;
        }
        let (src, want) = {
            let data = input.data(opts.values);
            (target.upload(&data)?, histogram_u16_cpu(&data))
        };
        let mut global_ms = None;
        for &kernel in &kernels {
            let cfg = wide_config(target, kernel, opts.values)?;
            let launch = WideLaunch::new(target, kernel, &src, opts.values, cfg)?;
            let (timing, _) = run.time(kernel.label(), cfg, bytes, |timer| {
                let time = launch.launch_timed(Some(timer))?;
                check(kernel, &launch.result()?, &want)?;
                Ok(((), time))
            })?;
            let ms = timing.ms.median;
            let global = *global_ms.get_or_insert(ms);
            bench.kernels.push(Kernel16Bench {
                kernel,
                timing,
                speedup_over_global: global / ms,
            });
        }
        inputs.push(bench);
    }
    Ok(Histogram16Bench {
        device: target.describe(),
        definition: definition(2),
        copy: run.copy,
        inputs,
    })
}
