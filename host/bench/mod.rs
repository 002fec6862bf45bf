//! Benchmarks: event-timed medians after warm-up, reported as tables and JSON.
//!
//! Every later benchmark reports its bandwidth against [`copy`]'s device-to-device copy,
//! measured in the same run: the roofline of a memory-bound kernel.

pub mod atomics;
pub mod copy;
pub mod count_above;
pub mod dot;
pub mod histogram;
pub mod launch;
pub mod mutex;
pub mod reduce;
pub mod scopes;
pub mod transfer;

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::launch::Target;
use serde::Serialize;

/// Summary of repeated measurements.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Stats {
    /// Median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Number of measurements.
    pub samples: usize,
}

impl Stats {
    /// The summary of `samples` (NaNs are dropped).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if no finite sample remains.
    pub fn of(samples: &[f64]) -> Result<Stats> {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Err(Error::InvalidInput("no measurements to summarize".into()));
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Ok(Stats {
            median,
            min: v[0],
            max: v[n - 1],
            samples: n,
        })
    }
}

/// The GPU of `target`, or an error saying benchmarks need one.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator.
pub fn require_gpu(target: &Target) -> Result<&Gpu> {
    match target {
        Target::Gpu(g) => Ok(g),
        Target::Sim => Err(Error::Unsupported(
            "benchmarks time a GPU; the simulator says nothing about speed".into(),
        )),
    }
}

/// Why `bytes` of buffers will not fit in the GPU's free memory (with a tenth of it to spare),
/// or `None` if they will: how a benchmark decides to skip a size with a note.
///
/// # Errors
/// A driver error.
pub fn does_not_fit(gpu: &Gpu, bytes: u64) -> Result<Option<String>> {
    gpu.make_current()?;
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers; the context is current.
    let code = unsafe { cust::sys::cuMemGetInfo_v2(&mut free, &mut total) };
    crate::error::check(code, || "cuMemGetInfo".into())?;
    let usable = free as u64 / 10 * 9;
    Ok((bytes > usable).then(|| {
        format!(
            "needs {:.1} GB, the GPU has {:.1} GB free of {:.1} GB",
            bytes as f64 / 1e9,
            free as f64 / 1e9,
            total as f64 / 1e9
        )
    }))
}

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
    /// `lens`, 20 trials, blocks per SM from the occupancy calculator, a 1 GiB copy.
    pub fn new(lens: &[usize]) -> SizedBenchOptions {
        SizedBenchOptions {
            lens: lens.to_vec(),
            trials: 20,
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

/// Progress of a sized benchmark: the copy's trials first, then `per_size` launches per size.
pub(crate) struct SizedRun<'a> {
    /// The GPU.
    pub gpu: &'a Gpu,
    /// The roofline, measured first.
    pub copy: copy::CopyBench,
    /// Steps done so far.
    pub done: u32,
    /// Steps in all.
    pub total: u32,
    per_size: u32,
}

/// The start every sized benchmark shares: checks `opts` and measures the copy roofline,
/// reporting its trials as the first steps of `progress`; `launches_per_size` is how many
/// progress steps each size will take.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials, zero blocks
/// per SM or an empty size; what [`copy::run`] returns.
pub(crate) fn start_sized<'a>(
    target: &'a Target,
    opts: &SizedBenchOptions,
    launches_per_size: u32,
    progress: &mut impl FnMut(u32, u32),
) -> Result<SizedRun<'a>> {
    let gpu = require_gpu(target)?;
    if opts.trials == 0 || opts.blocks_per_sm == Some(0) || opts.lens.contains(&0) {
        return Err(Error::InvalidInput(
            "trials, blocks per SM and every size must be positive".into(),
        ));
    }
    let total = opts.trials + launches_per_size * opts.lens.len() as u32;
    let copy = copy::run(target, opts.copy_bytes, opts.trials, |d, _| {
        progress(d, total)
    })?;
    Ok(SizedRun {
        gpu,
        copy,
        done: opts.trials,
        total,
        per_size: launches_per_size,
    })
}

impl SizedRun<'_> {
    /// The size's entry if `bytes_read` does not fit in the GPU's free memory (its steps are
    /// counted as done), else `None`.
    ///
    /// # Errors
    /// A driver error querying the free memory.
    pub fn skip_if_too_big<K>(
        &mut self,
        len: usize,
        bytes_read: u64,
        progress: &mut impl FnMut(u32, u32),
    ) -> Result<Option<SizeBench<K>>> {
        let Some(why) = does_not_fit(self.gpu, bytes_read)? else {
            return Ok(None);
        };
        self.done += self.per_size;
        progress(self.done, self.total);
        Ok(Some(SizeBench {
            len,
            bytes_read,
            skipped: Some(why),
            kernels: Vec::new(),
        }))
    }
}
