//! `gridsync mutex`: `add_one_mutex`, then every lock variant at every shape, then a lock held
//! forever.

use super::{LockRun, SOURCE_SHAPES, Shape, Variant, add_one_mutex, full_gpu_shape, run_variant};
use crate::primitives::lock::MutexBounds;
use crate::runtime::error::Result;
use crate::runtime::launch::Target;
use serde::Serialize;
use std::time::Duration;

/// The shape of the held-forever demonstration: four blocks of 128 waiters.
const HELD_FOREVER_SHAPE: Shape = Shape {
    blocks: 4,
    threads: 128,
};
/// Its timeout: long enough to be unambiguous, short enough not to bore.
const HELD_FOREVER_TIMEOUT: Duration = Duration::from_millis(100);

/// What a lock held forever did to the launch.
#[derive(Clone, Debug, Serialize)]
pub struct HeldForever {
    /// The launch shape.
    pub shape: Shape,
    /// The lock's timeout, milliseconds.
    pub timeout_ms: f64,
    /// The error the host call returned.
    pub error: String,
    /// How long the host call took, milliseconds.
    pub took_ms: f64,
}

/// The whole `gridsync mutex` report.
#[derive(Clone, Debug, Serialize)]
pub struct MutexDemo {
    /// Where it ran.
    pub target: String,
    /// `add_one_mutex` at 10 × 16: 160.
    pub add_one_mutex: u32,
    /// Every variant at every shape (one launch each, one critical section per thread).
    pub runs: Vec<LockRun>,
    /// The held-forever demonstration.
    pub held_forever: HeldForever,
}

/// The demo's shapes on `target`: the sources' four, plus the full GPU (not on the simulator,
/// whose OS threads make a 4096-way spinlock a slow way to learn nothing new).
pub fn default_shapes(target: &Target) -> Vec<Shape> {
    let mut shapes = SOURCE_SHAPES.to_vec();
    if !target.is_sim() {
        shapes.push(full_gpu_shape(target));
    }
    shapes
}

/// Runs the demo over `shapes` × [`Variant::ALL`], calling `progress(done, total)`.
///
/// # Errors
/// The first failure of [`add_one_mutex`], [`run_variant`] or [`super::held_forever`]'s launch.
pub fn demo(
    target: &Target,
    shapes: &[Shape],
    mut progress: impl FnMut(u32, u32),
) -> Result<MutexDemo> {
    let add_one = add_one_mutex(target)?;
    let total = (shapes.len() * Variant::ALL.len()) as u32 + 1;
    let mut runs = Vec::new();
    for &shape in shapes {
        for variant in Variant::ALL {
            runs.push(run_variant(
                target,
                variant,
                shape,
                1,
                MutexBounds::default(),
            )?);
            progress(runs.len() as u32, total);
        }
    }
    let (error, took) = super::held_forever(target, HELD_FOREVER_SHAPE, HELD_FOREVER_TIMEOUT)?;
    progress(total, total);
    Ok(MutexDemo {
        target: target.describe(),
        add_one_mutex: add_one,
        runs,
        held_forever: HeldForever {
            shape: HELD_FOREVER_SHAPE,
            timeout_ms: HELD_FOREVER_TIMEOUT.as_secs_f64() * 1e3,
            error: error.to_string(),
            took_ms: took.as_secs_f64() * 1e3,
        },
    })
}

/// What the demo's output explains under its table.
pub const EXPLANATION: &str = "\
- unfenced: atomicCAS and atomicExch are relaxed. Nothing orders the critical section's plain
  load and store against them, so a holder can read a value its predecessor's store has not yet
  replaced, or publish its store after the lock is seen free: a lost update is possible (how
  often depends on the GPU; the counter shows it when it happens). This is the one expected
  hazard. compute-sanitizer's racecheck checks shared memory only and cannot see it.
- fenced: threadfence after the CAS and before the exch orders the critical section inside the
  lock. Correct — but thousands of unbacked-off spinners queue atomics on one word in front of
  the holder's release: slow at full-GPU contention.
- loop: the same lock taken and released inside one loop body, so no lane waits for a lane of its
  own warp across a function boundary (the pre-Volta deadlock at <<<1,128>>>).
- warp leader: one acquisition per warp; the lanes pass the critical section with __syncwarp.
- mutex: acquire CAS / release store at device scope, test-and-test-and-set with exponential
  nanosleep back-off, and a bounded wait that reports a timeout instead of hanging.
- mutex_with: the same mutex with the critical section as a closure (Mutex::with): the lanes of a
  warp pass the lock at a __syncwarp of two lanes instead of through a hand-off word in memory.
- ticket: one atomic add per acquisition and first-come-first-served order; hand-offs wait for
  the next ticket's holder to wake up, so it trades speed for fairness.";
