//! The `reduce` demo: the `f32` progression on one input — each result, its error against the
//! CPU's `f64` sum, whether repeated runs give the same bits, and (on a GPU) its time — then the
//! typed kernels.

use super::cpu::{relative_error, sum_abs_cpu, sum_cpu};
use super::steps::StepLaunch;
use super::types::{TYPE_RUNS, TypeRun, run_types};
use super::{Accumulate, Step};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::stats::Stats;
use crate::runtime::stats::TimedLaunch;
use crate::runtime::timer::Timer;
use serde::Serialize;

/// What [`run`] does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReduceOptions {
    /// How (d) and (e) accumulate.
    pub accumulate: Accumulate,
    /// Runs of each kernel (after a warm-up on a GPU) whose bits are compared and whose times
    /// give the median: at least 1.
    pub repeats: u32,
    /// Also run the typed kernels (Σ f64/i32/u64, min/max).
    pub types: bool,
}

impl Default for ReduceOptions {
    fn default() -> ReduceOptions {
        ReduceOptions {
            accumulate: Accumulate::F32,
            repeats: 3,
            types: true,
        }
    }
}

/// One step of the progression.
#[derive(Clone, Debug, Serialize)]
pub struct StepRun {
    /// Which step.
    pub step: Step,
    /// Its PTX name.
    pub name: &'static str,
    /// How it reduces.
    pub what: &'static str,
    /// The accumulation, for the steps that take one.
    pub accumulate: Option<Accumulate>,
    /// Its result (of the first run), as `f64`.
    pub value: f64,
    /// `|value − expected| / |expected|`.
    pub rel_error: f64,
    /// Whether every run gave the same bits.
    pub same_bits: bool,
    /// How many different results the runs gave.
    pub distinct_results: usize,
    /// Whether the kernel is deterministic by construction (no float atomics).
    pub deterministic_by_design: bool,
    /// Its grid (the book's kernel: its whole grid); the median event-timed milliseconds of
    /// the runs (GPU only); `4·len` bytes read / `ms`.
    #[serde(flatten)]
    pub launch: TimedLaunch,
}

/// What [`run`] found.
#[derive(Clone, Debug, Serialize)]
pub struct ReduceReport {
    /// Where it ran.
    pub target: String,
    /// Where the input came from.
    pub input: String,
    /// Elements.
    pub len: usize,
    /// The CPU's sum: `f64`, compensated.
    pub expected: f64,
    /// Σ|xᵢ|: how much cancellation there is (`expected` far below it: error bounds, which scale
    /// with Σ|xᵢ|, are large relative to the sum).
    pub abs_sum: f64,
    /// How (d) and (e) accumulated.
    pub accumulate: Accumulate,
    /// Runs per kernel.
    pub repeats: u32,
    /// The progression, (a) to (e).
    pub runs: Vec<StepRun>,
    /// The typed kernels (empty if not asked for).
    pub types: Vec<TypeRun>,
}

/// Runs the progression (and the typed kernels) over `data` on `target`. `progress` is called
/// with (kernels done, kernels).
///
/// # Errors
/// [`Error::InvalidInput`] for zero repeats; [`Error::Mismatch`] if an integer or min/max result
/// differs from the CPU's, or a deterministic kernel gives different bits on two runs; a launch
/// or driver error (out of memory, …).
pub fn run(
    target: &Target,
    data: &[f32],
    input: &str,
    opts: &ReduceOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<ReduceReport> {
    if opts.repeats == 0 {
        return Err(Error::InvalidInput("at least one run per kernel".into()));
    }
    let steps = Step::available(target);
    let total = steps.len() as u32 + if opts.types { TYPE_RUNS } else { 0 };
    let expected = sum_cpu(data);
    let abs_sum = sum_abs_cpu(data);
    let len = data.len();
    let x = target.upload(data)?;
    let mut timer = Timer::on(target)?;
    let mut runs = Vec::new();
    for (k, &step) in steps.iter().enumerate() {
        let launch = StepLaunch::new(target, step, opts.accumulate, len, None)?;
        if timer.is_some() {
            launch.run(&x, len)?;
        }
        let mut values = Vec::new();
        let mut times = Vec::new();
        for _ in 0..opts.repeats {
            let (v, ms) = launch.run_timed(&x, len, timer.as_mut())?;
            values.push(v);
            times.extend(ms);
        }
        let distinct_results = step.distinct_results(launch.kernel().name(), &values)?;
        let ms = if times.is_empty() {
            None
        } else {
            Some(Stats::of(&times)?.median)
        };
        let cfg = launch.config();
        runs.push(StepRun {
            step,
            name: launch.kernel().name(),
            what: step.what(),
            accumulate: step.takes_accumulate().then_some(opts.accumulate),
            value: values[0],
            rel_error: relative_error(values[0], expected),
            same_bits: distinct_results == 1,
            distinct_results,
            deterministic_by_design: step.deterministic(),
            launch: TimedLaunch::new(&cfg, ms, 4.0 * len as f64),
        });
        progress(k as u32 + 1, total);
    }
    drop(x);
    let mut done = steps.len() as u32;
    let types = if opts.types {
        run_types(target, data, timer.as_mut(), || {
            done += 1;
            progress(done, total)
        })?
    } else {
        Vec::new()
    };
    Ok(ReduceReport {
        target: target.describe(),
        input: input.to_string(),
        len,
        expected,
        abs_sum,
        accumulate: opts.accumulate,
        repeats: opts.repeats,
        runs,
        types,
    })
}
