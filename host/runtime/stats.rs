//! Measurements: the summary of repeated timings ([`Stats`]: median, min, max), and the GPU a
//! timing needs ([`require_gpu`]). Used by the benchmarks and by every topic that times what it
//! demonstrates.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use serde::Serialize;

/// One demonstrated launch as a topic's report gives it: its grid and, on a GPU, its time and
/// rate. Flattened into each kernel's row (`#[serde(flatten)]`), so `--json` shows the four
/// fields beside the row's own.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct TimedLaunch {
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Event-timed milliseconds (GPU only; what each topic times, its report says).
    pub ms: Option<f64>,
    /// The bytes the kernel must read (or read and write, where the topic says so) / `ms`, in
    /// GB/s.
    pub gb_per_s: Option<f64>,
}

impl TimedLaunch {
    /// `config`'s grid, timed at `ms` for `bytes` moved.
    pub fn new(config: &gpu::LaunchConfig, ms: Option<f64>, bytes: f64) -> TimedLaunch {
        TimedLaunch {
            blocks: config.grid.x,
            threads_per_block: config.block.x,
            ms,
            gb_per_s: ms.map(|ms| bytes / (ms * 1e-3) / 1e9),
        }
    }
}

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
