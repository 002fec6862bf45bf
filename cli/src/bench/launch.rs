//! `gridsync bench launch`: what one kernel launch costs.
//!
//! Three numbers, each the median of many trials after warm-up:
//! - **host cost per launch**: `count` back-to-back launches of an empty kernel, host wall
//!   time divided by `count` — what the CPU pays to issue a launch (the reference: CUDA C++
//!   2.38 µs, CuPy 3.12 µs, Numba 8.65 µs on an H200);
//! - **launch + synchronize**: one launch and a wait for it — the round trip a host-driven
//!   loop pays per step;
//! - **event-timed kernel**: events recorded around one empty kernel on the stream — the
//!   smallest GPU-side time a kernel can show.

use super::{Stats, require_gpu};
use gpu::LaunchConfig;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::timer::Timer;
use serde::Serialize;
use std::time::Instant;

/// Options for [`run`].
#[derive(Clone, Copy, Debug)]
pub struct LaunchBenchOptions {
    /// Launches per trial of the host-cost measurement.
    pub launches_per_trial: u32,
    /// Trials of each measurement.
    pub trials: u32,
}

impl Default for LaunchBenchOptions {
    fn default() -> Self {
        LaunchBenchOptions {
            launches_per_trial: 2_000,
            trials: 50,
        }
    }
}

/// The launch benchmark's results, in microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct LaunchBench {
    /// The device.
    pub device: String,
    /// Host cost of one launch, µs.
    pub host_us_per_launch: Stats,
    /// One launch plus `cuStreamSynchronize`, µs.
    pub launch_sync_us: Stats,
    /// Event-timed empty kernel, µs.
    pub event_timed_kernel_us: Stats,
}

fn launch_empty(target: &Target) -> Result<()> {
    // SAFETY: `empty` takes no arguments and touches no memory.
    unsafe {
        gridsync::launch!(
            target,
            gpu::bench::launch::empty,
            LaunchConfig::linear(1, 32),
            ()
        )
    }
}

/// Runs the launch benchmark; `progress` is called with (done, total) trials.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials or
/// launches; a driver error.
pub fn run(
    target: &Target,
    opts: LaunchBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<LaunchBench> {
    let gpu = require_gpu(target)?;
    if opts.trials == 0 || opts.launches_per_trial == 0 {
        return Err(Error::InvalidInput(
            "trials and launches per trial must be positive".into(),
        ));
    }
    let total = opts.trials * 3;
    // Warm-up: module load, first-launch setup, clocks up.
    for _ in 0..opts.launches_per_trial {
        launch_empty(target)?;
    }
    gpu.synchronize()?;

    let mut host = Vec::new();
    for t in 0..opts.trials {
        let start = Instant::now();
        for _ in 0..opts.launches_per_trial {
            launch_empty(target)?;
        }
        host.push(start.elapsed().as_secs_f64() * 1e6 / opts.launches_per_trial as f64);
        gpu.synchronize()?;
        progress(t + 1, total);
    }

    let mut round_trip = Vec::new();
    for t in 0..opts.trials {
        let start = Instant::now();
        launch_empty(target)?;
        gpu.synchronize()?;
        round_trip.push(start.elapsed().as_secs_f64() * 1e6);
        progress(opts.trials + t + 1, total);
    }

    let mut timer = Timer::new()?;
    let mut event = Vec::new();
    for t in 0..opts.trials {
        let ms = timer.time(gpu.stream(), || launch_empty(target))?;
        event.push(ms as f64 * 1e3);
        progress(2 * opts.trials + t + 1, total);
    }

    Ok(LaunchBench {
        device: target.describe(),
        host_us_per_launch: Stats::of(&host)?,
        launch_sync_us: Stats::of(&round_trip)?,
        event_timed_kernel_us: Stats::of(&event)?,
    })
}
