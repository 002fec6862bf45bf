//! The `count-above` demo: every kernel once over one input, checked and (on a GPU) timed.

use super::{
    CountKernel, CountLaunch, DEFAULT_THRESHOLD, LOCK_PREFIX, config_for, count_above_cpu,
    lock_bounds,
};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::stats::TimedLaunch;
use crate::runtime::timer::Timer;
use serde::Serialize;

/// What [`run`] does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountOptions {
    /// Count the elements strictly above this.
    pub threshold: f32,
    /// Elements the lock kernel runs on (a prefix of the input); `usize::MAX` for all.
    pub lock_elements: usize,
}

impl Default for CountOptions {
    fn default() -> CountOptions {
        CountOptions {
            threshold: DEFAULT_THRESHOLD,
            lock_elements: LOCK_PREFIX,
        }
    }
}

/// One kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct CountRun {
    /// Which kernel.
    pub kernel: CountKernel,
    /// Its PTX name.
    pub name: &'static str,
    /// How it counts.
    pub what: &'static str,
    /// Elements it counted over (a prefix of the input for the lock kernel).
    pub elements: usize,
    /// Its count.
    pub count: u64,
    /// The CPU's count over the same elements (equal, or [`run`] fails).
    pub expected: u64,
    /// Its grid; event-timed milliseconds of one launch (GPU only; after one untimed warm-up
    /// launch, except for the lock kernel, which runs once); `4 · elements` bytes read / `ms`.
    #[serde(flatten)]
    pub launch: TimedLaunch,
}

/// What [`run`] found.
#[derive(Clone, Debug, Serialize)]
pub struct CountAboveReport {
    /// Where it ran.
    pub target: String,
    /// Where the input came from.
    pub input: String,
    /// Elements in the input.
    pub len: usize,
    /// The threshold.
    pub threshold: f32,
    /// The CPU's count over the whole input.
    pub expected: u64,
    /// Elements the lock kernel counted over.
    pub lock_elements: usize,
    /// Each kernel, in the progression's order.
    pub runs: Vec<CountRun>,
}

/// Runs every kernel over `data` on `target`, compares each count with the CPU's, and times each
/// on a GPU. `progress` is called with (kernels done, kernels).
///
/// # Errors
/// [`Error::Mismatch`] if a kernel's count differs from the CPU's; [`Error::LockTimeout`] /
/// [`Error::LockHeld`] from the lock kernel; a launch or driver error (out of memory, …).
pub fn run(
    target: &Target,
    data: &[f32],
    input: &str,
    opts: &CountOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<CountAboveReport> {
    let thr = opts.threshold;
    let expected = count_above_cpu(data, thr);
    let lock_elements = opts.lock_elements.min(data.len());
    let lock_expected = count_above_cpu(&data[..lock_elements], thr);
    let src = target.upload(data)?;
    let mut timer = Timer::on(target)?;
    let mut runs = Vec::new();
    for (k, kernel) in CountKernel::ALL.into_iter().enumerate() {
        let (elements, want) = match kernel {
            CountKernel::Mutex => (lock_elements, lock_expected),
            _ => (data.len(), expected),
        };
        let cfg = config_for(target, kernel, elements, None)?;
        let bounds = lock_bounds(target, want);
        let launch = CountLaunch::new(target, kernel, &src, elements, thr, cfg, bounds)?;
        if kernel != CountKernel::Mutex {
            check(kernel, launch.run()?, want)?;
        }
        let (count, ms) = launch.run_timed(timer.as_mut())?;
        check(kernel, count, want)?;
        runs.push(CountRun {
            kernel,
            name: kernel.name(),
            what: kernel.what(),
            elements,
            count,
            expected: want,
            launch: TimedLaunch::new(&cfg, ms, 4.0 * elements as f64),
        });
        progress(k as u32 + 1, CountKernel::ALL.len() as u32);
    }
    Ok(CountAboveReport {
        target: target.describe(),
        input: input.to_string(),
        len: data.len(),
        threshold: thr,
        expected,
        lock_elements,
        runs,
    })
}

fn check(kernel: CountKernel, count: u64, expected: u64) -> Result<()> {
    if count == expected {
        Ok(())
    } else {
        Err(Error::Mismatch(format!(
            "{} counted {count}, the CPU {expected}",
            kernel.name()
        )))
    }
}
