//! Normalizing arrays in place, `a ← a / Σa`, on one stream or many: the Numba tutorial's
//! streams-and-events pipeline, a faster one, and a batch API that overlaps arrays on streams.
//!
//! Source: the Numba tutorial, part 3. Device code and the story of the two pipelines:
//! `gpu/src/lessons/normalize.rs`.
//!
//! | [`Pipeline`] | kernels | the sum |
//! |---|---|---|
//! | [`Pipeline::Source`] | `partial_reduce` `[32·40, 256]` → `single_thread_sum` `[1, 1]` → `divide_by` `[32·40, 256]` | `f32`, added by one thread |
//! | [`Pipeline::SinglePass`] | `reduce_vec_sum_f32_in_f64` (one wave) → `divide_by_sum` (one wave) | `f64`, finished by the last block |
//!
//! **One array**: [`normalize`] (and [`normalize_with`]) on a [`Target`] — a GPU, or the
//! simulator. **Many arrays**: [`Normalizer`] (or [`normalize_batch`]) copies each array in,
//! normalizes it and copies it back on one of `streams` non-blocking streams, with events around
//! every step, and reports each array's sum and timeline.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync::normalize::{BatchOptions, normalize_batch};
//! let target = gridsync::Target::open(0, false)?;
//! let gpu = match &target { gridsync::Target::Gpu(g) => g, _ => unreachable!() };
//! // Pinned host arrays make the copies asynchronous (plain `Vec`s work too, serialized).
//! let mut arrays: Vec<_> = (1..=10)
//!     .map(|i| gridsync::PinnedBuffer::new(gpu, 10_000_000, i as f32))
//!     .collect::<gridsync::Result<_>>()?;
//! let mut slices: Vec<&mut [f32]> = arrays.iter_mut().map(|a| &mut a[..]).collect();
//! let report = normalize_batch(&target, &mut slices, &BatchOptions::default())?;
//! println!("{} arrays in {:.2} ms", report.arrays.len(), report.timing.unwrap().total_ms);
//! # Ok(()) }
//! ```
//!
//! **Errors instead of division by zero.** An empty array is rejected before anything runs. An
//! array whose sum is zero, infinite or NaN is left unchanged by the device (see
//! `gpu/src/lessons/normalize.rs`) and reported as [`Error::InvalidInput`] naming it.

mod batch;
mod lane;
pub mod transfer;

pub use batch::{
    ArrayResult, ArrayTiming, BatchOptions, BatchReport, BatchTiming, Normalizer, Schedule,
    StreamTiming, normalize_batch,
};
pub use lane::time_pipeline;

use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use serde::Serialize;

/// Which kernels normalize an array.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pipeline {
    /// The tutorial's three kernels: `partial_reduce`, `single_thread_sum`, `divide_by`.
    Source,
    /// Two kernels: the single-pass reduction (sum in `f64`, finished by the last block), then
    /// `divide_by_sum` with 16-byte loads.
    #[default]
    SinglePass,
}

impl Pipeline {
    /// Both, the source's first.
    pub const ALL: [Pipeline; 2] = [Pipeline::Source, Pipeline::SinglePass];

    /// `source` or `single-pass`, as the CLI spells it.
    pub const fn label(self) -> &'static str {
        match self {
            Pipeline::Source => "source",
            Pipeline::SinglePass => "single-pass",
        }
    }

    /// The kernels it runs, in order.
    pub const fn kernels(self) -> &'static [&'static str] {
        match self {
            Pipeline::Source => &["partial_reduce", "single_thread_sum", "divide_by"],
            Pipeline::SinglePass => &["reduce_vec_sum_f32_in_f64", "divide_by_sum"],
        }
    }
}

impl std::str::FromStr for Pipeline {
    type Err = Error;
    fn from_str(s: &str) -> Result<Pipeline> {
        crate::runtime::error::parse_label(&Pipeline::ALL, Pipeline::label, "pipeline", s)
    }
}

/// Normalizes `data` in place with the [default pipeline](Pipeline::SinglePass) and returns its
/// sum before normalizing (computed on the device, in `f64`).
///
/// Afterwards `Σ data ≈ 1`: each element is the correctly rounded `f32` of `aᵢ / S` (up to rare
/// double-rounding ties), so the float64 sum of the result is within about `n·2⁻²⁴` of 1 and
/// usually far closer, since the roundings cancel.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty `data`, or one whose sum is zero, infinite or NaN (then
/// `data` is unchanged); a driver error.
pub fn normalize(target: &Target, data: &mut [f32]) -> Result<f64> {
    normalize_with(target, data, Pipeline::SinglePass)
}

/// [`normalize`] with the pipeline chosen. [`Pipeline::Source`] sums in `f32` on one thread, so
/// its sum (returned widened to `f64`) is less accurate.
///
/// # Errors
/// As [`normalize`].
pub fn normalize_with(target: &Target, data: &mut [f32], pipeline: Pipeline) -> Result<f64> {
    let options = BatchOptions {
        streams: 1,
        pipeline,
        ..BatchOptions::default()
    };
    let report = normalize_batch(target, &mut [data], &options)?;
    Ok(report.arrays[0].sum)
}

/// The CPU reference: `data / Σdata` with the sum and every quotient in `f64`, each result
/// rounded once to `f32`. `None` if the sum cannot divide (empty, zero, not finite).
pub fn normalize_cpu(data: &[f32]) -> Option<(f64, Vec<f32>)> {
    let s: f64 = data.iter().map(|&v| v as f64).sum();
    if data.is_empty() || !gpu::lessons::normalize::usable_divisor(s) {
        return None;
    }
    Some((s, data.iter().map(|&v| (v as f64 / s) as f32).collect()))
}

/// The tutorial's arrays: `count` arrays of `len` floats, array `i` filled with `i + 1`.
pub fn source_arrays(count: usize, len: usize) -> Vec<Vec<f32>> {
    (0..count).map(|i| vec![(i + 1) as f32; len]).collect()
}
