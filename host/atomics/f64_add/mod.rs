//! `double` addition built from `atomicCAS` — the CUDA book's, from before sm_60 had a native
//! one — next to the native `atom.add.f64`, both checked against a float64 reference.
//!
//! Thread `t` of a 1-D grid adds `values[(t + k) % values.len()]`, `k = 0, 1, …`, to
//! `sums[t / threads_per_address]` ([`gpu::bench::atomics::atomic_add_f64_cas`] and
//! [`gpu::bench::atomics::atomic_add_f64_native`]) — `iters` of them, or as many as it completes
//! within a time budget — and reports how many it did; the reference replays exactly those. The
//! additions to one word happen in an order no one chooses, so a float sum is exact only where
//! every partial sum is:
//!
//! - **integer inputs** ([`F64Inputs::Integers`], 1 to 1000): every partial sum is an integer far
//!   below 2⁵³, so the result must equal the exact sum, bit for bit, whatever the order;
//! - **random inputs** ([`F64Inputs::Random`], both signs, magnitudes from 2⁻²⁰ to 2²⁰): the
//!   result must lie within the bound of recursive summation in *any* order (Higham, *Accuracy
//!   and Stability of Numerical Algorithms*, eq. 4.4) of a compensated (Neumaier) float64
//!   reference: `|sum − reference| ≤ γ(m) · Σ|xᵢ|`, with `m` the number of terms and
//!   `γ(m) = m·u / (1 − m·u)`, `u = 2⁻⁵³` ([`error_bound`]).

use super::inputs::SplitMix64;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::LaunchConfig;
use serde::Serialize;

mod reference;
mod throughput;
pub use reference::{F64AddCheck, Reference, check, error_bound, reference};
pub use throughput::{F64AddThroughput, f64_add_throughput};

/// Values the threads cycle through: enough for every warp to add different ones, few enough
/// to stay in L1.
pub const F64_VALUES: usize = 1024;
/// At most this many additions per run: the host computes the reference one by one.
pub const MAX_F64_OPS: u64 = 1 << 31;
/// Largest integer input: sums of [`MAX_F64_OPS`] of them stay far below 2⁵³.
const INTEGER_MAX: i64 = 1000;
/// Random inputs' binary exponents span `-RANDOM_EXP ..= RANDOM_EXP`.
const RANDOM_EXP: i64 = 20;
/// The unit roundoff of f64, 2⁻⁵³.
const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// Which `double` addition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum F64Add {
    /// The CUDA book's CAS loop ([`gpu::bench::atomics::atomic_add_f64_via_cas`]).
    CasLoop,
    /// `atom.add.f64`, native since sm_60.
    Native,
}

impl F64Add {
    /// Both.
    pub const ALL: [F64Add; 2] = [F64Add::CasLoop, F64Add::Native];

    /// `cas_loop` or `native`.
    pub const fn name(self) -> &'static str {
        match self {
            F64Add::CasLoop => "cas_loop",
            F64Add::Native => "native",
        }
    }

    /// What CUDA calls it.
    pub const fn cuda(self) -> &'static str {
        match self {
            F64Add::CasLoop => "atomicAdd(double*) from atomicCAS (CUDA book 9.2)",
            F64Add::Native => "atomicAdd(double*) (sm_60+)",
        }
    }

    /// The PTX it becomes.
    pub const fn ptx(self) -> &'static str {
        match self {
            F64Add::CasLoop => "ld.relaxed.gpu.b64 + loop of atom.relaxed.gpu.cas.b64",
            F64Add::Native => "atom.relaxed.gpu.add.f64",
        }
    }
}

/// The kind of values added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum F64Inputs {
    /// Integers 1 to 1000: every order gives the exact sum.
    Integers,
    /// Both signs, magnitudes 2⁻²⁰ to 2²⁰: the order changes the rounding, within a bound.
    Random,
}

/// `F64_VALUES` values of `kind` from `seed`.
pub fn values(kind: F64Inputs, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    (0..F64_VALUES)
        .map(|_| match kind {
            F64Inputs::Integers => rng.range(1, INTEGER_MAX) as f64,
            F64Inputs::Random => {
                let mantissa = 1.0 + (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let sign = if rng.next_u64() & 1 == 1 { -1.0 } else { 1.0 };
                sign * mantissa * 2f64.powi(rng.range(-RANDOM_EXP, RANDOM_EXP) as i32)
            }
        })
        .collect()
}

/// The grid of one run, how the threads share the words, and how long they add.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct F64AddShape {
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Threads per word: 1 (each its own), 32 (a warp), or all of them (one word).
    pub threads_per_address: u32,
    /// Additions per thread (at most, with a budget).
    pub iters: u32,
    /// 0: every thread does all `iters`. Otherwise each thread stops once this many nanoseconds
    /// have passed since it started, a CAS loop in the middle of an addition included (which then
    /// adds nothing): with every thread of a GPU on one word the CAS loop completes only about
    /// 150 thousand additions a second (H200), so an unbounded run would take minutes.
    pub budget_ns: u64,
}

impl F64AddShape {
    /// Threads in the grid.
    pub const fn threads(&self) -> u64 {
        self.blocks as u64 * self.threads_per_block as u64
    }

    /// The number of words: `⌈threads / threads_per_address⌉`.
    pub fn addresses(&self) -> usize {
        self.threads()
            .div_ceil(self.threads_per_address.max(1) as u64) as usize
    }

    /// Additions per launch if every thread does all of its `iters`.
    pub const fn ops(&self) -> u64 {
        self.threads() * self.iters as u64
    }

    /// `Ok` if the shape can run.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an empty grid or `threads_per_address` 0.
    pub fn validate(&self) -> Result<()> {
        if self.threads() == 0 || self.threads_per_address == 0 {
            return Err(Error::InvalidInput(format!(
                "{self:?}: the grid and threads_per_address must be positive"
            )));
        }
        Ok(())
    }

    /// `Ok` if the host can replay the run: as [`F64AddShape::validate`], and at most
    /// [`MAX_F64_OPS`] additions.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] as [`F64AddShape::validate`] says, or for too many additions.
    pub fn validate_checkable(&self) -> Result<()> {
        self.validate()?;
        if self.ops() > MAX_F64_OPS {
            return Err(Error::InvalidInput(format!(
                "{self:?}: at most {MAX_F64_OPS} additions per checked run"
            )));
        }
        Ok(())
    }
}

/// The buffers of one run.
pub struct F64AddBuffers {
    /// The values the threads cycle through.
    pub values: Buffer<f64>,
    /// The words added into, zeroed.
    pub sums: Buffer<f64>,
    /// Additions each thread did.
    pub counts: Buffer<u32>,
    /// Each thread's sum of the old values it saw.
    pub sink: Buffer<f64>,
}

impl F64AddBuffers {
    /// `values` uploaded and zeroed words, counts and sinks for `shape`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a bad shape, or no values or more than `u32::MAX`; an
    /// allocation or copy error.
    pub fn new(target: &Target, shape: &F64AddShape, values: &[f64]) -> Result<F64AddBuffers> {
        shape.validate()?;
        if values.is_empty() || values.len() > u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "{} values: 1 to {} are needed",
                values.len(),
                u32::MAX
            )));
        }
        let threads = shape.threads() as usize;
        Ok(F64AddBuffers {
            values: target.upload(values)?,
            sums: target.zeros(shape.addresses())?,
            counts: target.zeros(threads)?,
            sink: target.zeros(threads)?,
        })
    }
}

/// Launches one run of `kind` with `bufs` (made for the same shape): the values are added into
/// the sums, each thread's count of additions and sum of old values go to its slots. On a GPU it
/// returns once queued.
///
/// # Errors
/// [`Error::InvalidInput`] for a bad shape or buffers of the wrong sizes; a launch error.
pub fn launch(
    target: &Target,
    kind: F64Add,
    shape: &F64AddShape,
    bufs: &F64AddBuffers,
) -> Result<()> {
    shape.validate()?;
    let threads = shape.threads();
    if bufs.values.is_empty()
        || bufs.values.len() > u32::MAX as usize
        || bufs.sums.len() != shape.addresses()
        || bufs.counts.len() as u64 != threads
        || bufs.sink.len() as u64 != threads
    {
        return Err(Error::InvalidInput(format!(
            "{shape:?}: {} values, {} sums, {} counts, {} sinks; expected ≥ 1, {} and {threads} each",
            bufs.values.len(),
            bufs.sums.len(),
            bufs.counts.len(),
            bufs.sink.len(),
            shape.addresses(),
        )));
    }
    let cfg = LaunchConfig::linear(shape.blocks, shape.threads_per_block);
    let (s, t, v, n, i, b, c, k) = (
        bufs.sums.ptr(),
        shape.threads_per_address,
        bufs.values.ptr().cast_const(),
        bufs.values.len() as u32,
        shape.iters,
        shape.budget_ns,
        bufs.counts.ptr(),
        bufs.sink.ptr(),
    );
    // SAFETY: `sums` has a word per `threads_per_address` threads, `values` `n` values, `counts`
    // and `sink` a slot per thread (checked above): the kernels' launch contract. The buffers
    // outlive the launch; the caller synchronizes before dropping them.
    unsafe {
        match kind {
            F64Add::CasLoop => crate::launch!(
                target,
                gpu::bench::atomics::atomic_add_f64_cas,
                cfg,
                (s, t, v, n, i, b, c, k)
            ),
            F64Add::Native => crate::launch!(
                target,
                gpu::bench::atomics::atomic_add_f64_native,
                cfg,
                (s, t, v, n, i, b, c, k)
            ),
        }
    }
}
