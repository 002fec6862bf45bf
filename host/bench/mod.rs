//! Benchmarks: event-timed medians after warm-up, reported as tables and JSON.
//!
//! Every later benchmark reports its bandwidth against [`copy`]'s device-to-device copy,
//! measured in the same run: the roofline of a memory-bound kernel. [`sized`] runs them: the
//! roofline, then every kernel at every size, one [`KernelTiming`] row each.

pub mod atomics;
pub mod barrier;
pub mod copy;
pub mod count_above;
pub mod dot;
pub mod fill;
pub mod histogram;
pub mod launch;
pub mod locks;
pub mod multi;
pub mod neighbor;
pub mod reduce;
pub mod scopes;
pub mod sized;
pub mod transfer;

pub use sized::{KernelTiming, SizeBench, SizedBench, SizedBenchOptions, WARMUP};

use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
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
    let (free, total) = crate::runtime::memory::device_free_bytes(gpu)?;
    let usable = crate::runtime::memory::usable(free);
    Ok((bytes > usable).then(|| {
        format!(
            "needs {:.1} GB, the GPU has {:.1} GB free of {:.1} GB",
            bytes as f64 / 1e9,
            free as f64 / 1e9,
            total as f64 / 1e9
        )
    }))
}
