//! The runner every bandwidth benchmark shares: the copy roofline first, then each kernel
//! launched [`WARMUP`] times untimed and `trials` times timed, summarized as a [`KernelTiming`]
//! row; `run_sized` does that for every kernel of a topic at every input size (count-above,
//! dot, reduce), `bench histogram` input by input with `BandwidthRun` itself.
//!
//! Progress is counted in steps: one per copy of the roofline, one per launch after it.

use super::{Stats, require_gpu};
use gpu::LaunchConfig;
use gridsync::runtime::copy;
use gridsync::runtime::device::Gpu;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::memory::does_not_fit;
use gridsync::runtime::timer::Timer;
use serde::Serialize;

/// Untimed launches of each kernel before its timed ones (module load, clocks, caches).
pub const WARMUP: u32 = 3;
/// Timed launches per kernel and size by default: enough for a stable median.
pub const DEFAULT_TRIALS: u32 = 20;

/// What a sized benchmark (count-above, dot, reduce) measures: every kernel of the topic at each
/// input size, against the device-to-device copy measured in the same run.
#[derive(Clone, Debug)]
pub struct SizedBenchOptions {
    /// Input sizes, in elements.
    pub lens: Vec<usize>,
    /// Timed launches per kernel and size (at least 20 for a stable median).
    pub trials: u32,
    /// Blocks per SM; `None`: as many as fit (the occupancy calculator).
    pub blocks_per_sm: Option<u32>,
    /// Bytes of the copy measured as the roofline.
    pub copy_bytes: usize,
}

impl SizedBenchOptions {
    /// `lens`, [`DEFAULT_TRIALS`], blocks per SM from the occupancy calculator, a 1 GiB copy.
    pub fn new(lens: &[usize]) -> SizedBenchOptions {
        SizedBenchOptions {
            lens: lens.to_vec(),
            trials: DEFAULT_TRIALS,
            blocks_per_sm: None,
            copy_bytes: copy::DEFAULT_BYTES,
        }
    }
}

/// Every kernel of a sized benchmark at one input size.
#[derive(Clone, Debug, Serialize)]
pub struct SizeBench<K> {
    /// Elements.
    pub len: usize,
    /// Bytes each kernel reads.
    pub bytes_read: u64,
    /// Why this size was skipped, if it was (it did not fit in memory).
    pub skipped: Option<String>,
    /// The kernels' results.
    pub kernels: Vec<K>,
}

/// How a bandwidth benchmark defines its fraction of copy, printed with the numbers, for kernels
/// that read `bytes_per_element` bytes per element of an input of `n`.
pub fn definition(bytes_per_element: u64) -> String {
    let read = match bytes_per_element {
        1 => "n".to_string(),
        b => format!("{b}·n"),
    };
    format!(
        "fraction of copy = ({read} bytes read / kernel time) / ((bytes read + bytes written) / \
         copy time): both the rate HBM moves bytes"
    )
}

/// A sized benchmark's result: the roofline and every kernel at every size. A topic's result
/// flattens it (in JSON too) and adds what describes its input.
#[derive(Clone, Debug, Serialize)]
pub struct SizedBench<K> {
    /// The device.
    pub device: String,
    /// How `fraction_of_copy` is defined ([`definition`]).
    pub definition: String,
    /// The roofline, measured in this run.
    pub copy: copy::CopyBench,
    /// Each size.
    pub sizes: Vec<SizeBench<K>>,
}

/// One kernel's row of a bandwidth table: its launch shape, its time and its bandwidth against
/// the copy roofline. Each topic's row flattens it (in JSON too) and adds its own columns.
#[derive(Clone, Debug, Serialize)]
pub struct KernelTiming {
    /// The kernel's PTX name.
    pub name: &'static str,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// Bytes read / median time, GB/s.
    pub gb_per_s: f64,
    /// `gb_per_s` / the copy's (read + written) GB/s.
    pub fraction_of_copy: f64,
}

/// A bandwidth benchmark under way: the copy roofline, measured first, and the progress of the
/// kernels timed after it.
pub(crate) struct BandwidthRun<'a> {
    gpu: &'a Gpu,
    /// The roofline.
    pub copy: copy::CopyBench,
    trials: u32,
    timer: Timer,
    done: u32,
    total: u32,
    progress: &'a mut dyn FnMut(u32, u32),
}

impl<'a> BandwidthRun<'a> {
    /// Measures the roofline (`trials` copies of `copy_bytes`); `kernel_runs` kernels will be
    /// timed after it ([`WARMUP`] + `trials` steps of `progress` each).
    ///
    /// # Errors
    /// [`Error::Unsupported`] on the simulator; what [`copy::run`] returns, among it
    /// [`Error::InvalidInput`] for zero trials — so every kernel gets a timed trial.
    pub fn start(
        target: &'a Target,
        (trials, copy_bytes): (u32, usize),
        kernel_runs: u32,
        progress: &'a mut dyn FnMut(u32, u32),
    ) -> Result<BandwidthRun<'a>> {
        let gpu = require_gpu(target)?;
        let total = trials + kernel_runs * (WARMUP + trials);
        let copy = copy::run(target, copy_bytes, trials, |d, _| progress(d, total))?;
        Ok(BandwidthRun {
            gpu,
            copy,
            trials,
            timer: Timer::new()?,
            done: trials,
            total,
            progress,
        })
    }

    /// Why `bytes` of buffers will not fit in the GPU's free memory ([`does_not_fit`]), the
    /// steps of the `kernels` that would have run on them then counted as done; `None` if they
    /// fit.
    ///
    /// # Errors
    /// A driver error querying the free memory.
    pub fn skip_if_too_big(&mut self, bytes: u64, kernels: u32) -> Result<Option<String>> {
        let why = does_not_fit(self.gpu, bytes)?;
        if why.is_some() {
            self.step(kernels * (WARMUP + self.trials));
        }
        Ok(why)
    }

    /// Times the kernel `name`, launched with `cfg` and reading `bytes_read`: `trial` launches
    /// it once with the timer, checks its result and returns what to keep of it and the event
    /// time in ms. Returns the kernel's row and what its timed trials kept, in order (at least
    /// one, as [`BandwidthRun::start`] refused zero trials).
    ///
    /// # Errors
    /// What `trial` returns; [`Error::InvalidInput`] if no trial was timed.
    pub fn time<T>(
        &mut self,
        name: &'static str,
        cfg: LaunchConfig,
        bytes_read: u64,
        mut trial: impl FnMut(&mut Timer) -> Result<(T, Option<f64>)>,
    ) -> Result<(KernelTiming, Vec<T>)> {
        let (mut ms, mut kept) = (Vec::new(), Vec::new());
        for t in 0..WARMUP + self.trials {
            let (value, time) = trial(&mut self.timer)?;
            if t >= WARMUP {
                ms.extend(time);
                kept.push(value);
            }
            self.step(1);
        }
        let ms = Stats::of(&ms)?;
        let gb_per_s = bytes_read as f64 / (ms.median * 1e-3) / 1e9;
        let row = KernelTiming {
            name,
            blocks: cfg.grid.x,
            threads_per_block: cfg.block.x,
            ms,
            gb_per_s,
            fraction_of_copy: gb_per_s / self.copy.gb_per_s,
        };
        Ok((row, kept))
    }

    fn step(&mut self, steps: u32) {
        self.done += steps;
        (self.progress)(self.done, self.total);
    }
}

/// One input size of [`run_sized`], lent to the topic's `row` to time a kernel at it.
pub(crate) struct SizeRun<'r, 'a> {
    /// Elements.
    pub len: usize,
    bytes_read: u64,
    run: &'r mut BandwidthRun<'a>,
}

impl SizeRun<'_, '_> {
    /// [`BandwidthRun::time`] at this size.
    ///
    /// # Errors
    /// As [`BandwidthRun::time`].
    pub fn time<T>(
        &mut self,
        name: &'static str,
        cfg: LaunchConfig,
        trial: impl FnMut(&mut Timer) -> Result<(T, Option<f64>)>,
    ) -> Result<(KernelTiming, Vec<T>)> {
        self.run.time(name, cfg, self.bytes_read, trial)
    }
}

/// What a topic's sized benchmark measures, whatever the options.
pub(crate) struct SizedTopic<K: 'static> {
    /// Its kernels, in the order of its tables.
    pub kernels: &'static [K],
    /// Bytes each kernel reads per element of the input size.
    pub bytes_per_element: u64,
    /// Whether a kernel runs on the target (those on Hopper's primitives need sm_90); the others
    /// are left out of the run and its tables.
    pub runs_on: fn(&Target, K) -> bool,
}

/// [`SizedTopic::runs_on`] for topics whose kernels run everywhere.
pub(crate) fn runs_everywhere<K>(_: &Target, _: K) -> bool {
    true
}

/// Runs a sized benchmark: the roofline, then at each of `opts.lens` (that fits in memory) the
/// topic's `input` — made, uploaded and solved on the CPU once per size — and its `row` for each
/// of its kernels, which times the kernel with [`SizeRun::time`].
///
/// # Errors
/// [`Error::InvalidInput`] for zero trials, zero blocks per SM or an empty size;
/// [`Error::Unsupported`] on the simulator; what `input` and `row` return; a driver error.
pub(crate) fn run_sized<K: Copy, I, R>(
    target: &Target,
    opts: &SizedBenchOptions,
    topic: &SizedTopic<K>,
    mut progress: impl FnMut(u32, u32),
    mut input: impl FnMut(usize) -> Result<I>,
    mut row: impl FnMut(&mut SizeRun<'_, '_>, &I, K) -> Result<R>,
) -> Result<SizedBench<R>> {
    if opts.trials == 0 || opts.blocks_per_sm == Some(0) || opts.lens.contains(&0) {
        return Err(Error::InvalidInput(
            "trials, blocks per SM and every size must be positive".into(),
        ));
    }
    // Each size's input is made on the host first: refuse a size the host cannot hold now,
    // rather than abort in the allocator after the roofline was measured. (The GPU's side is
    // checked per size later, and a size that does not fit there is skipped with a note.)
    for &len in &opts.lens {
        let bytes = (len as u64).saturating_mul(topic.bytes_per_element);
        gridsync::runtime::memory::check_host(&format!("--len {len}"), bytes)?;
    }
    let kernels: Vec<K> = topic
        .kernels
        .iter()
        .copied()
        .filter(|&k| (topic.runs_on)(target, k))
        .collect();
    let per_size = kernels.len() as u32;
    let kernel_runs = per_size * opts.lens.len() as u32;
    let timing = (opts.trials, opts.copy_bytes);
    let mut run = BandwidthRun::start(target, timing, kernel_runs, &mut progress)?;
    let mut sizes = Vec::new();
    for &len in &opts.lens {
        let bytes_read = topic.bytes_per_element * len as u64;
        let skipped = run.skip_if_too_big(bytes_read, per_size)?;
        let mut rows = Vec::new();
        if skipped.is_none() {
            let input = input(len)?;
            let mut size = SizeRun {
                len,
                bytes_read,
                run: &mut run,
            };
            for &kernel in &kernels {
                rows.push(row(&mut size, &input, kernel)?);
            }
        }
        sizes.push(SizeBench {
            len,
            bytes_read,
            skipped,
            kernels: rows,
        });
    }
    Ok(SizedBench {
        device: target.describe(),
        definition: definition(topic.bytes_per_element),
        copy: run.copy,
        sizes,
    })
}
