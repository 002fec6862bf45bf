//! The `dot` demo: every kernel once over one pair of arrays, checked and (on a GPU) timed.

use super::{CpuDot, DotKernel, DotLaunch, check, config_for, dot_cpu, rel_error};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::stats::TimedLaunch;
use crate::runtime::timer::Timer;
use serde::Serialize;

/// One kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct DotRun {
    /// Which kernel.
    pub kernel: DotKernel,
    /// Its PTX name.
    pub name: &'static str,
    /// How the blocks' sums are combined.
    pub what: &'static str,
    /// The dot it computed.
    pub result: f64,
    /// `|result − cpu| / |cpu|`.
    pub rel_error: f64,
    /// Its grid; event-timed milliseconds of one launch, after one untimed launch (GPU only;
    /// for `dot_partial` the kernel alone, not the host's final sum); `8·n` bytes read / `ms`.
    #[serde(flatten)]
    pub launch: TimedLaunch,
}

/// What [`run`] found.
#[derive(Clone, Debug, Serialize)]
pub struct DotReport {
    /// Where it ran.
    pub target: String,
    /// Which data: the source's, or random with its seed.
    pub data: String,
    /// Elements per array.
    pub len: usize,
    /// The float64 CPU dot.
    pub cpu: CpuDot,
    /// Each kernel, in the progression's order.
    pub runs: Vec<DotRun>,
}

/// Runs every kernel over `a` and `b` on `target`, compares each result with the float64 CPU
/// dot, and times each on a GPU. `progress` is called with (kernels done, kernels).
///
/// # Errors
/// [`Error::InvalidInput`] if the lengths differ; [`Error::Mismatch`] if a result is off by more
/// than [`super::TOLERANCE`] · `Σ |a_i·b_i|`; a lock error from `dot_mutex`; a launch or driver
/// error.
pub fn run(
    target: &Target,
    a: &[f32],
    b: &[f32],
    data: &str,
    mut progress: impl FnMut(u32, u32),
) -> Result<DotReport> {
    if a.len() != b.len() {
        return Err(Error::InvalidInput(format!(
            "a dot of arrays of {} and {} elements",
            a.len(),
            b.len()
        )));
    }
    let cpu = dot_cpu(a, b);
    let (da, db) = (target.upload(a)?, target.upload(b)?);
    let mut timer = Timer::on(target)?;
    let mut runs = Vec::new();
    for (k, kernel) in DotKernel::ALL.into_iter().enumerate() {
        let cfg = config_for(target, kernel, a.len(), None)?;
        let launch = DotLaunch::new(target, kernel, &da, &db, cfg)?;
        let (warm, _) = launch.run_timed(None)?;
        check(kernel, warm, &cpu)?;
        let (result, ms) = launch.run_timed(timer.as_mut())?;
        check(kernel, result, &cpu)?;
        runs.push(DotRun {
            kernel,
            name: kernel.name(),
            what: kernel.what(),
            result,
            rel_error: rel_error(result, cpu.dot),
            launch: TimedLaunch::new(&cfg, ms, 8.0 * a.len() as f64),
        });
        progress(k as u32 + 1, DotKernel::ALL.len() as u32);
    }
    Ok(DotReport {
        target: target.describe(),
        data: data.to_string(),
        len: a.len(),
        cpu,
        runs,
    })
}
