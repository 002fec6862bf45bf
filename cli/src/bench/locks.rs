//! `gridsync bench mutex`: critical sections per second for every lock variant at every shape,
//! and a sweep of the [`Mutex`](gpu::lock::Mutex)'s back-off and the ticket lock's.
//!
//! Each launch has every thread take the lock `iters` times around `*counter += 1`; `iters` is
//! chosen so that a launch runs at least [`TARGET_SECTIONS`] critical sections (launch overhead
//! is then under 1% of the time). The counter is checked after every launch. Unbounded (source)
//! locks are capped at [`UNBOUNDED_LIMIT`] acquisitions per launch.

use super::{Stats, require_gpu};
use gridsync::locks::{
    SOURCE_SHAPES, Shape, UNBOUNDED_LIMIT, Variant, full_gpu_shape, run_variant_with,
};
use gridsync::primitives::lock::MutexBounds;
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Critical sections a benchmark launch aims for.
pub const TARGET_SECTIONS: u64 = 32_768;

/// Options of the mutex benchmark.
#[derive(Clone, Copy, Debug)]
pub struct MutexBenchOptions {
    /// Timed launches per cell (after one warm-up), unless the budget runs out first (at
    /// least three are always taken).
    pub trials: u32,
    /// Wall-clock budget per cell.
    pub budget: Duration,
    /// Also sweep the back-off parameters.
    pub sweep: bool,
}

impl Default for MutexBenchOptions {
    fn default() -> MutexBenchOptions {
        MutexBenchOptions {
            trials: 10,
            budget: Duration::from_secs(3),
            sweep: false,
        }
    }
}

/// One variant at one shape.
#[derive(Clone, Debug, Serialize)]
pub struct MutexCell {
    /// The variant.
    pub variant: Variant,
    /// The shape.
    pub shape: Shape,
    /// Critical sections per thread per launch.
    pub iters: u32,
    /// Critical sections per launch.
    pub sections: u64,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// Millions of critical sections per second, at the median time.
    pub mega_per_s: f64,
    /// Updates lost over all launches (only the unfenced lock may lose any).
    pub lost: u64,
}

/// One point of the back-off sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    /// The variant swept (mutex or ticket).
    pub variant: Variant,
    /// The shape.
    pub shape: Shape,
    /// Mutex: first back-off sleep; ticket: sleep per waiting ticket (ns).
    pub backoff_min_ns: u32,
    /// Mutex: longest back-off sleep (ns); ticket: unused (0).
    pub backoff_max_ns: u32,
    /// Millions of critical sections per second, at the median time.
    pub mega_per_s: f64,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct MutexBench {
    /// The device.
    pub device: String,
    /// Every variant at every shape.
    pub cells: Vec<MutexCell>,
    /// The back-off sweep (empty without `--sweep`).
    pub sweep: Vec<SweepPoint>,
}

/// Iterations per thread for `shape`: enough for [`TARGET_SECTIONS`], within the unbounded cap.
fn iters_for(variant: Variant, shape: Shape) -> u32 {
    let threads = shape.count().max(1);
    let mut sections = TARGET_SECTIONS.max(threads);
    if !variant.bounded() {
        sections = sections.min(UNBOUNDED_LIMIT);
    }
    (sections / threads).max(1) as u32
}

/// Times `variant` at `shape`; returns the cell.
fn measure(
    target: &Target,
    variant: Variant,
    shape: Shape,
    bounds: MutexBounds,
    ticket_ns: u32,
    opts: &MutexBenchOptions,
) -> Result<MutexCell> {
    let iters = iters_for(variant, shape);
    let mut lost = 0;
    run_variant_with(target, variant, shape, iters, bounds, ticket_ns)?;
    let started = Instant::now();
    let mut ms = Vec::new();
    while ms.len() < opts.trials as usize && (ms.len() < 3 || started.elapsed() < opts.budget) {
        let run = run_variant_with(target, variant, shape, iters, bounds, ticket_ns)?;
        lost += run.lost();
        ms.extend(run.ms);
    }
    let stats = Stats::of(&ms)?;
    let sections = shape.count() * iters as u64;
    Ok(MutexCell {
        variant,
        shape,
        iters,
        sections,
        ms: stats,
        mega_per_s: sections as f64 / (stats.median * 1e-3) / 1e6,
        lost,
    })
}

/// The mutex's back-off pairs (min, max) the sweep tries.
pub const MUTEX_SWEEP: [(u32, u32); 10] = [
    (8, 128),
    (8, 512),
    (32, 256),
    (32, 1024),
    (32, 4096),
    (128, 1024),
    (128, 4096),
    (128, 16384),
    (512, 4096),
    (512, 32768),
];
/// The ticket lock's sleeps per waiting ticket the sweep tries.
pub const TICKET_SWEEP: [u32; 5] = [16, 64, 256, 1024, 4096];

/// Runs the benchmark: the sources' shapes and the full GPU, every variant.
///
/// # Errors
/// [`gridsync::Error::Unsupported`] on the simulator; any run's error (a lost update of a
/// correct lock is an [`gridsync::Error::Mismatch`]).
pub fn run(
    target: &Target,
    opts: MutexBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<MutexBench> {
    require_gpu(target)?;
    let full = full_gpu_shape(target);
    let mut shapes = SOURCE_SHAPES.to_vec();
    shapes.push(full);
    // 128×1 (no cohorts: every waiter alone), 10×16 and the full GPU.
    let sweep_shapes = [SOURCE_SHAPES[0], SOURCE_SHAPES[3], full];
    let sweep_len = if opts.sweep {
        sweep_shapes.len() * (MUTEX_SWEEP.len() + TICKET_SWEEP.len())
    } else {
        0
    };
    let total = (shapes.len() * Variant::ALL.len() + sweep_len) as u32;
    let default_ticket = gpu::lock::DEFAULT_BACKOFF_PER_TICKET_NS;
    let mut cells = Vec::new();
    for &shape in &shapes {
        for variant in Variant::ALL {
            let b = MutexBounds::default();
            cells.push(measure(target, variant, shape, b, default_ticket, &opts)?);
            progress(cells.len() as u32, total);
        }
    }
    let mut sweep = Vec::new();
    if opts.sweep {
        for shape in sweep_shapes {
            for (min, max) in MUTEX_SWEEP {
                let b = MutexBounds {
                    backoff_min_ns: min,
                    backoff_max_ns: max,
                    ..MutexBounds::default()
                };
                let c = measure(target, Variant::Mutex, shape, b, default_ticket, &opts)?;
                sweep.push(SweepPoint {
                    variant: Variant::Mutex,
                    shape,
                    backoff_min_ns: min,
                    backoff_max_ns: max,
                    mega_per_s: c.mega_per_s,
                });
                progress((cells.len() + sweep.len()) as u32, total);
            }
            for per_ticket in TICKET_SWEEP {
                let b = MutexBounds::default();
                let c = measure(target, Variant::Ticket, shape, b, per_ticket, &opts)?;
                sweep.push(SweepPoint {
                    variant: Variant::Ticket,
                    shape,
                    backoff_min_ns: per_ticket,
                    backoff_max_ns: 0,
                    mega_per_s: c.mega_per_s,
                });
                progress((cells.len() + sweep.len()) as u32, total);
            }
        }
    }
    Ok(MutexBench {
        device: target.describe(),
        cells,
        sweep,
    })
}
